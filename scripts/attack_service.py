"""Hostile requests against the HTTP lookup service (issues 13 and 32), on loopback only.

Starts the deployment of docs/service.md ("Deployment": nginx in front of gunicorn, with
the two configuration files given there, ports changed to free ones) over ``--store S``
(without it, a small store it builds: AP@10, RR@10, RBPU(p=0.8)@6, P@30 and OIE@6 for the
per-grade counts (2)), then sends each attack below, one at a time, and prints per attack
the answer's status (expected status in brackets), its time, the resident memory of the
gunicorn master and of its largest worker before, at the peak and after, and the slowest
answer of /healthz, probed from another process every 100 ms during the attack (each
probe on a new connection, 5 s timeout):

    python scripts/attack_service.py [--store S] [--half-open 2000] [--quick]

Attacks: a 19 MiB body whose ``rb`` is a list of 5 million strings; 10^6 unknown keys; a
field name of 60 MB (issue 32: the answer must be under 1 KiB);
10^6 runs of length 30 (P@30, within the 64 MiB body limit: a legitimate batch, 200),
the same with the last run one degree short (422); deeply nested JSON (10^5 levels); 60
MiB of empty runs (413, after parsing);
``--half-open`` connections that send part of a request head and hold (then: are they
all closed by the proxy after its client_header_timeout?), and a few that send a head and
part of the body (the proxy closes them after its client_body_timeout, answering nothing
and logging 408: shown as 408); three clients trickling bodies in 1-byte chunks for a few
seconds (200 once they end); ``runs: [[[1]]]`` for RBPU (then a second request on the
same keep-alive connection); ``[-1]`` and ``true`` as degrees; a missing per-topic table
(404, whose message must name no path); RR values -0.5 and -1e9 (422).

Exit status 1 when any answer is 5xx or not the expected status, an error answer is over
1 KiB, /healthz took longer than 1 s (or failed) during any attack, an answer names the
store's folder or file, or a half-open connection was still open after the header
timeout; 0 otherwise. Bounded: every request has a timeout, connection counts are fixed by
the options, the deployment is stopped at the end. ``--quick`` shrinks the attacks (for
the test suite). Needs gunicorn, uvicorn-worker and nginx (``apt-get install nginx``).
"""
from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from serving import Deployment, doc_block  # noqa: E402  (the deployment of docs/service.md, as the tests start it)

HOST = "127.0.0.1"          # loopback only
MEASURES = "AP@10,RR@10,RBPU(p=0.8)@6,P@30"
HEALTH_LIMIT = 1.0          # seconds
#: the proxy's client_header_timeout (docs/service.md, nginx.conf)
HEADER_TIMEOUT = float(re.search(r"client_header_timeout (\d+)s", doc_block("# nginx.conf")).group(1))
MAX_ERROR_BYTES = 1024      # an error answer echoes nothing whole (issue 32)


def _rss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def _memory(pid: int) -> tuple[float, float]:
    """(server MiB, largest worker MiB): resident memory."""
    return _rss_mib(pid), max((_rss_mib(c) for c in _children(pid)), default=0.0)


def _get(port: int, path: str, timeout: float) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def _post(port: int, body: bytes, timeout: float = 180, conn: http.client.HTTPConnection | None = None
          ) -> tuple[int, bytes]:
    own = conn is None
    conn = conn or http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("POST", "/v1/rank", body=body, headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        if own:
            conn.close()


class Probe:
    """Asks /healthz every 100 ms (a new connection each time) and records the slowest
    answer and the server's peak memory, from a thread of its own process (so that this
    process building or reading big bodies does not delay the probes)."""

    def __init__(self, server: Deployment):
        self.server = server
        ctx = multiprocessing.get_context("fork")
        self._stop = ctx.Event()
        self._results = ctx.Queue()
        self._process = ctx.Process(target=self._run, args=(server.port, server.gunicorn.pid), daemon=True)
        self._process.start()

    def _run(self, port: int, pid: int) -> None:
        worst, failures = 0.0, 0
        peak = _memory(pid)
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                ok = _get(port, "/healthz", 5)[0] == 200
            except OSError:
                ok = False
            took = time.perf_counter() - start
            worst = max(worst, took)
            failures += not ok
            main, worker = _memory(pid)
            peak = (max(peak[0], main), max(peak[1], worker))
            self._stop.wait(max(0.0, 0.1 - took))
        self._results.put((worst, failures, peak))

    def stop(self) -> None:
        self._stop.set()
        self.worst, self.failures, self.peak = self._results.get(timeout=30)
        self._process.join(10)


# -- the attacks: each returns (status, note, answer bytes to check for paths) -------------------
def attack_rb_strings(port, args):
    n = args.scale(5_000_000)
    body = b'{"measure": "AP@10", "rb": [' + b",".join([b'"a"'] * n) + b'], "values": [0]}'
    status, answer = _post(port, body)
    return status, f"{len(body) / 2 ** 20:.1f} MiB", answer


def attack_unknown_keys(port, args):
    n = args.scale(1_000_000)
    body = b'{"measure": "P@30", "values": [0], ' + b",".join(b'"k%d": 0' % i for i in range(n)) + b"}"
    status, answer = _post(port, body)
    return status, f"{len(body) / 2 ** 20:.1f} MiB", answer


def attack_long_name(port, args):
    n = args.scale(60_000_000)
    body = b'{"' + b"k" * n + b'": 1, "measure": "P@30", "values": [0]}'
    status, answer = _post(port, body)
    return status, f"a field name of {n / 1e6:g} MB: answer of {len(answer)} bytes", answer


def _runs_body(n: int, short_last: bool) -> bytes:
    run = b"[" + b",".join([b"1", b"0"] * 15) + b"]"
    runs = [run] * n
    if short_last:
        runs[-1] = b"[" + b",".join([b"1"] * 29) + b"]"
    return b'{"measure": "P@30", "runs": [' + b",".join(runs) + b"]}"


def attack_runs(port, args):
    body = _runs_body(args.scale(1_000_000), False)
    status, answer = _post(port, body)
    note = f"{len(body) / 2 ** 20:.1f} MiB"
    if status == 200:
        ranks = json.loads(answer)["rank"]
        note += f", {len(ranks)} ranks, all {set(ranks)}"
    return status, note, answer[:1000]


def attack_runs_last_bad(port, args):
    body = _runs_body(args.scale(1_000_000), True)
    status, answer = _post(port, body)
    return status, f"{len(body) / 2 ** 20:.1f} MiB: " + json.loads(answer)["error"]["message"][:60], answer


def attack_empty_runs(port, args):
    """60 MiB of empty runs: parsed whole (about 1.8 GB and 25 s of one gunicorn worker, the
    other answering meanwhile), then refused for their number (413)."""
    n = max(args.scale(21_000_000), 1_000_001)       # more than the service answers at once
    body = b'{"measure": "P@30", "runs": [' + b"[]," * n + b"[]]}"
    status, answer = _post(port, body)
    return status, f"{len(body) / 2 ** 20:.1f} MiB of []", answer


def attack_deep(port, args):
    depth = args.scale(100_000)
    body = b'{"measure": "P@30", "runs": ' + b"[" * depth + b"]" * depth + b"}"
    status, answer = _post(port, body)
    return status, f"{depth} levels", answer


def attack_half_open(port, args, server_timeout):
    """Sockets that send part of a request head and hold; /healthz is probed meanwhile
    (by the caller); then: are they closed by the server after its header timeout?"""
    count = args.half_open
    socks = []
    for _ in range(count):
        s = socket.create_connection((HOST, port), timeout=10)
        s.sendall(b"POST /v1/rank HTTP/1.1\r\nHost: x\r\nContent-Ty")
        socks.append(s)
    opened = time.monotonic()
    status = _get(port, "/healthz", 5)[0]    # while they are all held
    deadline = opened + server_timeout + 5
    closed = 0
    with selectors.DefaultSelector() as selector:       # epoll: no limit on descriptor numbers
        for s in socks:
            selector.register(s, selectors.EVENT_READ)
        left = len(socks)
        while left and time.monotonic() < deadline:
            for key, _ in selector.select(0.5):
                try:
                    data = key.fileobj.recv(1024)
                except OSError:
                    data = b""
                if not data:
                    closed += 1
                    left -= 1
                    selector.unregister(key.fileobj)
    for s in socks:
        s.close()
    args.half_open_left = left
    return status, (f"{count} held; /healthz {status} meanwhile; {closed} closed by the server within "
                    f"{time.monotonic() - opened:.1f} s"), b""


def attack_partial_body(port, args):
    """A complete head announcing 1000 bytes, then 10 of them: the proxy answers 408, or
    closes the connection answering nothing after its body timeout (nginx, logging 408)."""
    answers = []
    socks = []
    for _ in range(args.partial_bodies):
        s = socket.create_connection((HOST, port), timeout=30)
        s.sendall(b"POST /v1/rank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{\"measure\"")
        socks.append(s)
    statuses = set()
    for s in socks:
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except OSError:
            pass
        s.close()
        answers.append(data)
        statuses.add(int(data.split()[1]) if data.startswith(b"HTTP/1.1 ") else 408 if not data else 0)
    status = statuses.pop() if len(statuses) == 1 else 0
    return status, f"{len(socks)} connections, statuses {sorted(statuses) or [status]}", b"".join(answers)


def _trickle(port: int, seconds: float) -> int:
    """A POST /v1/rank whose body comes in 1-byte chunks for ``seconds``: the answer's status."""
    with socket.create_connection((HOST, port), timeout=60) as s:
        s.sendall(b"POST /v1/rank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(b"1\r\n%c\r\n" % c for c in b'{"measure": "P@30", '))
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            s.sendall(b"1\r\n \r\n" * 64)
            time.sleep(0.001)
        end = b'"values": [0.5, 0.1]}'
        s.sendall(b"%x\r\n%s\r\n0\r\n\r\n" % (len(end), end))
        data = s.recv(65536)
    return int(data.split()[1]) if data.startswith(b"HTTP/1.1 ") else 0


def attack_trickled_bodies(port, args):
    statuses = []
    clients = [threading.Thread(target=lambda: statuses.append(_trickle(port, 2 if args.quick else 10)))
               for _ in range(3)]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    status = statuses[0] if len(set(statuses)) == 1 else 0
    return status, f"3 clients, 1-byte chunks: statuses {sorted(statuses)}", b""


def attack_nested_runs_keep_alive(port, args):
    conn = http.client.HTTPConnection(HOST, port, timeout=30)
    try:
        status, answer = _post(port, b'{"measure": "RBPU(p=0.8)@6", "runs": [[[1]]]}', conn=conn)
        try:
            again, _ = _post(port, b'{"measure": "RBPU(p=0.8)@6", "runs": [[1, 0]]}', conn=conn)
        except (OSError, http.client.HTTPException) as e:
            again = f"{type(e).__name__}"
    finally:
        conn.close()
    if again != 200:
        status = 599        # the keep-alive connection did not survive
    return status, f"then the same connection: {again}", answer


def _simple(body: bytes):
    def attack(port, args):
        status, answer = _post(port, body)
        return status, json.loads(answer)["error"]["message"][:70] if status >= 400 else "", answer
    return attack


ATTACKS = [  # (name, function, expected status)
    ("rb: 5M strings (19 MiB)", attack_rb_strings, 413),
    ("10^6 unknown keys", attack_unknown_keys, 422),
    ("a 60 MB field name", attack_long_name, 422),
    ("10^6 runs of length 30", attack_runs, 200),
    ("10^6 runs, last one short", attack_runs_last_bad, 422),
    ("nested 10^5 deep", attack_deep, 422),
    ("2.1 * 10^7 empty runs (60 MiB)", attack_empty_runs, 413),
    ("half-open connections", None, 200),
    ("partial bodies", attack_partial_body, 408),
    ("bodies in 1-byte chunks", attack_trickled_bodies, 200),
    ("RBPU runs [[[1]]] + keep-alive", attack_nested_runs_keep_alive, 422),
    ("RBPU runs [[-1]]", _simple(b'{"measure": "RBPU(p=0.8)@6", "runs": [[-1]]}'), 422),
    ("RBPU runs [[1, -1]]", _simple(b'{"measure": "RBPU(p=0.8)@6", "runs": [[1, -1]]}'), 422),
    ("AP runs with true", _simple(b'{"measure": "AP@10", "rb": 3, "runs": [[true, 0, 0, 0, 0, 0, 0, 0, 0, 0]]}'),
     422),
    ("RBPU runs [[true]]", _simple(b'{"measure": "RBPU(p=0.8)@6", "runs": [[true]]}'), 422),
    ("missing per-topic table", _simple(b'{"measure": "OIE@6", "rb": [3], "runs": [[1]]}'), 404),
    ("RR value -0.5", _simple(b'{"measure": "RR@10", "values": [-0.5]}'), 422),
    ("RR value -1e9", _simple(b'{"measure": "RR@10", "values": [-1e9]}'), 422),
]


def build_store(folder: Path) -> Path:
    store = folder / "attack.h5"
    for measures, rb in ((MEASURES, []), ("OIE@6", ["--rb", "(2)"])):
        subprocess.run([sys.executable, "-m", "irscale", "build", "--measures", measures, *rb, "--out", str(store),
                        "-q"], cwd=folder, check=True)
    return store


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="store to serve (default: a small one built here; it must hold "
                                                   f"{MEASURES} and OIE@6 for (2), and not OIE@6 for (3))")
    parser.add_argument("--half-open", type=int, default=2000, help="half-open connections (default 2000)")
    parser.add_argument("--partial-bodies", type=int, default=20, help="connections sending part of a body")
    parser.add_argument("--quick", action="store_true", help="attacks 50 times smaller, 200 half-open connections")
    args = parser.parse_args(argv)
    factor = 50 if args.quick else 1
    args.scale = lambda n: max(1, n // factor)
    if args.quick:
        args.half_open = min(args.half_open, 200)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.half_open + args.partial_bodies + 256
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))

    with tempfile.TemporaryDirectory(prefix="irscale-attack-") as tmp:
        folder = Path(tmp)
        store = (args.store or build_store(folder)).resolve()
        secrets = {str(store), str(store.parent), store.name}
        server = Deployment(store, folder).__enter__()
        if server.front != "nginx":
            server.stop()
            raise SystemExit("nginx is not installed (apt-get install nginx): the documented deployment needs it")
        rows, failures = [], []
        try:
            for name, attack, expected in ATTACKS:
                before = _memory(server.gunicorn.pid)
                probe = Probe(server)
                start = time.perf_counter()
                try:
                    if attack is None:
                        status, note, answer = attack_half_open(server.port, args, HEADER_TIMEOUT)
                    else:
                        status, note, answer = attack(server.port, args)
                except Exception as e:     # reported as a failed attack; the server is stopped below
                    status, note, answer = 0, f"{type(e).__name__}: {e}", b""
                took = time.perf_counter() - start
                probe.stop()
                after = _memory(server.gunicorn.pid)
                leaked = [s for s in secrets if s.encode() in answer]
                problems = []
                if status >= 500 or status == 0:
                    problems.append(f"status {status}")
                if status != expected:
                    problems.append(f"expected {expected}")
                if probe.worst > HEALTH_LIMIT or probe.failures:
                    problems.append(f"/healthz {probe.worst:.2f} s, {probe.failures} failed")
                if leaked:
                    problems.append(f"leaked {leaked}")
                if status >= 400 and answer.startswith(b"{") and len(answer) > MAX_ERROR_BYTES:  # one JSON answer
                    problems.append(f"an error answer of {len(answer)} bytes")
                if attack is None and args.half_open_left:
                    problems.append(f"{args.half_open_left} half-open connections still open")
                rows.append((name, f"{status} [{expected}]", f"{took:.2f}",
                             f"{before[0]:.0f}/{probe.peak[0]:.0f}/{after[0]:.0f}",
                             f"{before[1]:.0f}/{probe.peak[1]:.0f}/{after[1]:.0f}",
                             f"{probe.worst * 1000:.0f}", "ok" if not problems else "FAIL: " + "; ".join(problems),
                             note))
                failures += [f"{name}: {p}" for p in problems]
        finally:
            log = server.stop()
    header = ("attack", "status [expected]", "seconds", "gunicorn MiB before/peak/after",
              "worker MiB before/peak/after", "healthz max ms", "verdict", "note")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header) - 1)]
    for row in [header, *rows]:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " | " + row[-1])
    if "Traceback" in log:
        print("\nserver log (tracebacks):\n" + log[-3000:])
    if failures:
        print(f"\n{len(failures)} problem(s):\n" + "\n".join(failures))
        return 1
    print(f"\nall {len(rows)} attacks answered as expected; /healthz stayed under {HEALTH_LIMIT:g} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
