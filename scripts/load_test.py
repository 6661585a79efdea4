"""Load test of the HTTP lookup service on loopback: starts ``irscale serve`` on a free
port, runs concurrent clients sending a mix of requests for a bounded number of requests
and a bounded time, checks every answer against local lookups, and reports throughput,
latency, error counts and the server's resident memory.

    python scripts/load_test.py [--store STORE] [--clients 8] [--requests 20000] [--seconds 30]

Without ``--store`` a small store (AP, DCG, RBP, nDCG at N = 12) is built in a temporary
folder. Request mix: value batches (1 to 10^4 values), run batches (1 to 10^3 runs),
table listings and deliberately invalid requests (which must get 4xx). Exit status 1 when
any answer is 5xx, wrong, or a request fails; 0 otherwise. Needs ``httpx`` and ``psutil``.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import psutil

DEFAULT_MEASURES = "AP@12,DCG(b=2)@12,RBP(p=0.8)@12,nDCG(b=2)@12"
POOL_SIZE = 512            # judged runs (and their values) per (measure, rb)
VALUE_BATCHES = (1, 10, 100, 1000, 10_000)
RUN_BATCHES = (1, 10, 100, 1000)
#: request kinds and their share of the mix
MIX = {"values": 0.45, "runs": 0.35, "tables": 0.1, "invalid": 0.1}


@dataclass
class Target:
    """One (measure, rb) with a pool of feasible runs, their values and expected ranks."""

    measure: str
    rb: int | None
    runs: np.ndarray
    values: np.ndarray
    ranks: np.ndarray
    clear: np.ndarray  # indices of values that identify one distinct value (not ambiguous in float64)


@dataclass
class Outcome:
    kind: str
    status: int        # HTTP status, 0 for a transport error
    seconds: float
    items: int         # values or runs in the request
    correct: bool      # the answer was the expected one (status and ranks)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def feasible_runs(rng: np.random.Generator, n: int, rb: int | None, count: int) -> np.ndarray:
    """Random binary runs with a uniformly drawn number of relevant documents (at most rb)."""
    most = n if rb is None else min(rb, n)
    runs = np.zeros((count, n), np.int64)
    for run, relevant in zip(runs, rng.integers(0, most + 1, size=count)):
        run[rng.choice(n, size=relevant, replace=False)] = 1
    return runs


def make_targets(store_path: Path, seed: int) -> list[Target]:
    """Pools of runs and values for every table (several recall bases for RB measures),
    with their ranks computed locally, to check the server's answers."""
    import irscale
    store = irscale.open_store(store_path)
    rng = np.random.default_rng(seed)
    targets = []
    for table in store.tables():
        measure = irscale.parse_measure(table["measure"])
        n = measure.n
        for rb in ([1, max(1, n // 2), n, 2 * n] if measure.rb_dependent else [None]):
            scale = store.scale(measure, rb)
            runs = feasible_runs(rng, n, rb, POOL_SIZE)
            values = np.array([float(measure.exact_value(run, rb)) for run in runs])
            expected = scale.rank_runs(runs)
            # At N = 30 neighbouring values can be closer than float64 resolution allows a
            # value lookup to tell apart (the server answers 422 "ambiguous"); such values
            # are only sent as runs.
            by_value = scale.rank(values, errors="zero")
            clear = np.flatnonzero(by_value != 0)
            assert (by_value[clear] == expected[clear]).all(), f"{measure} rb={rb}: values and runs disagree"
            if not clear.size:
                print(f"  {measure} rb={rb}: no value of the pool is unambiguous in float64; runs only")
            targets.append(Target(str(measure), rb, runs, values, expected, clear))
    return targets


def invalid_requests(targets: list[Target], table_names: set[str]) -> list[tuple[bytes, int]]:
    """Request bodies that must be refused, with the expected status."""
    missing = next(f"AP@{n}" for n in range(1, 33) if f"AP@{n}" not in table_names)     # P: a closed form, no table
    with_rb = next((t for t in targets if t.rb is not None), None)
    without_rb = next((t for t in targets if t.rb is None), None)
    cases = [
        (json.dumps({"measure": missing, "values": [0.0]}), 404),
        (json.dumps({"measure": targets[0].measure, "rb": targets[0].rb, "values": [0.0, -1.0]}), 422),
        ('{"measure": "AP@10", "values": [0.5, NaN]}', 422),
        ('{"measure": ', 400),
    ]
    if with_rb:
        cases.append((json.dumps({"measure": with_rb.measure, "values": [0.0]}), 422))
    if without_rb:
        cases.append((json.dumps({"measure": without_rb.measure, "rb": 3, "values": [0.0]}), 422))
    return [(body.encode(), status) for body, status in cases]


class Workload:
    """Draws requests of the mix and checks their answers."""

    def __init__(self, targets: list[Target], invalid: list[tuple[bytes, int]], n_tables: int):
        self.targets = targets
        self.invalid = invalid
        self.n_tables = n_tables

    def run_one(self, http: httpx.Client, rng: random.Random) -> Outcome:
        kind = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        target = rng.choice(self.targets)
        items, expected, expected_status = 0, None, 200
        if kind == "tables":
            method, path, content = "GET", "/v1/tables", None
        elif kind == "invalid":
            method, path = "POST", "/v1/rank"
            content, expected_status = rng.choice(self.invalid)
        else:
            if kind == "values" and not target.clear.size:
                kind = "runs"
            items = rng.choice(VALUE_BATCHES if kind == "values" else RUN_BATCHES)
            pool = target.clear if kind == "values" else np.arange(POOL_SIZE)
            pick = pool[np.array([rng.randrange(pool.size) for _ in range(items)])]
            body = {"measure": target.measure, "rb": target.rb}
            body[kind] = (target.values[pick] if kind == "values" else target.runs[pick]).tolist()
            method, path, content = "POST", "/v1/rank", json.dumps(body).encode()
            expected = target.ranks[pick].tolist()
        start = time.perf_counter()
        try:
            response = http.request(method, path, content=content,
                                    headers={"content-type": "application/json"} if content else None)
        except httpx.HTTPError:
            return Outcome(kind, 0, time.perf_counter() - start, items, False)
        seconds = time.perf_counter() - start
        correct = response.status_code == expected_status
        if correct and kind == "tables":
            correct = len(response.json()["tables"]) == self.n_tables
        elif correct and expected is not None:
            correct = response.json()["rank"] == expected
        elif correct and kind == "invalid":
            correct = "message" in response.json()["error"]
        return Outcome(kind, response.status_code, seconds, items, correct)


def run_clients(base_url: str, workload: Workload, clients: int, max_requests: int, seconds: float,
                stop: threading.Event) -> tuple[list[Outcome], float]:
    """Run ``clients`` threads until ``max_requests`` are sent, ``seconds`` pass or ``stop`` is set."""
    outcomes: list[Outcome] = []
    lock = threading.Lock()
    sent = 0
    deadline = time.monotonic() + seconds

    def client(seed: int) -> None:
        nonlocal sent
        rng = random.Random(seed)
        with httpx.Client(base_url=base_url, timeout=120) as http:
            while not stop.is_set() and time.monotonic() < deadline:
                with lock:
                    if sent >= max_requests:
                        return
                    sent += 1
                outcome = workload.run_one(http, rng)
                with lock:
                    outcomes.append(outcome)

    threads = [threading.Thread(target=client, args=(seed,), daemon=True) for seed in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(timeout=0.5)
    return outcomes, time.perf_counter() - start


def start_server(store_path: Path, workdir: Path, port: int, log_path: Path) -> subprocess.Popen:
    """``irscale serve`` on loopback (cwd outside the source tree, output to a log file)."""
    with open(log_path, "w") as log:
        return subprocess.Popen([sys.executable, "-m", "irscale", "serve", "--store", str(store_path.resolve()),
                                 "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                                cwd=workdir, stdout=log, stderr=subprocess.STDOUT)


def wait_healthy(base_url: str, server: subprocess.Popen, log_path: Path, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            sys.exit(f"the server exited with status {server.returncode}:\n{log_path.read_text()}")
        try:
            if httpx.get(base_url + "/healthz", timeout=5).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            sys.exit(f"the server did not answer /healthz within {timeout:.0f} s")
        time.sleep(0.2)


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def report(outcomes: list[Outcome], elapsed: float, rss_before: int, rss_after: int) -> bool:
    """Print the summary table; True when every answer was correct and none was 5xx."""
    mib = 2 ** 20
    header = f"{'kind':8s} {'requests':>8s} {'items':>10s} {'2xx':>6s} {'4xx':>5s} {'5xx':>4s} {'failed':>6s} " \
             f"{'wrong':>5s} {'p50 ms':>8s} {'p99 ms':>8s}"
    print(header)
    print("-" * len(header))
    for kind in list(MIX) + ["total"]:
        rows = [o for o in outcomes if kind in ("total", o.kind)]
        if not rows:
            continue
        latency = np.array([o.seconds for o in rows]) * 1e3
        def count(low, high, rows=rows):
            return sum(low <= o.status < high for o in rows)
        print(f"{kind:8s} {len(rows):8d} {sum(o.items for o in rows):10d} {count(200, 300):6d} {count(400, 500):5d} "
              f"{count(500, 600):4d} {count(0, 1):6d} {sum(not o.correct for o in rows if o.status):5d} "
              f"{np.percentile(latency, 50):8.1f} {np.percentile(latency, 99):8.1f}")
    values = sum(o.items for o in outcomes if o.kind == "values" and o.status == 200)
    runs = sum(o.items for o in outcomes if o.kind == "runs" and o.status == 200)
    print(f"\n{len(outcomes)} requests in {elapsed:.1f} s: {len(outcomes) / elapsed:.0f} req/s, "
          f"{values / elapsed:,.0f} values/s, {runs / elapsed:,.0f} runs/s")
    print(f"server RSS: {rss_before / mib:.1f} MiB before, {rss_after / mib:.1f} MiB after")
    server_errors = sum(o.status >= 500 for o in outcomes)
    bad = sum(not o.correct for o in outcomes)
    if bad:
        print(f"FAILED: {bad} requests failed or were answered wrongly ({server_errors} with 5xx)")
    return bad == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, help="Store to serve (default: a small store built in a temporary folder).")
    ap.add_argument("--clients", type=int, default=8, help="Concurrent clients (threads).")
    ap.add_argument("--requests", type=int, default=20_000, help="Most requests sent in all.")
    ap.add_argument("--seconds", type=float, default=30, help="Most seconds of load (after start-up).")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.clients < 1 or args.requests < 1 or args.seconds <= 0:
        ap.error("--clients and --requests must be >= 1, --seconds > 0")
    os.environ.setdefault("TQDM_DISABLE", "1")
    import irscale

    with tempfile.TemporaryDirectory(prefix="irscale-load-") as tmp:
        workdir = Path(tmp)
        store_path = args.store
        if store_path is None:
            store_path = workdir / "load.h5"
            print(f"building {DEFAULT_MEASURES} ...", flush=True)
            irscale.build_store(store_path, DEFAULT_MEASURES, n_jobs=1)
        table_names = {t["measure"] for t in irscale.open_store(store_path).tables()}
        targets = make_targets(store_path, args.seed)
        workload = Workload(targets, invalid_requests(targets, table_names), len(table_names))
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        log_path = workdir / "server.log"
        server = start_server(store_path, workdir, port, log_path)
        stop = threading.Event()
        try:
            wait_healthy(base_url, server, log_path)
            process = psutil.Process(server.pid)
            rss_before = process.memory_info().rss
            print(f"serving {len(table_names)} tables on {base_url}; {args.clients} clients, at most "
                  f"{args.requests} requests and {args.seconds:g} s\n", flush=True)
            outcomes, elapsed = run_clients(base_url, workload, args.clients, args.requests, args.seconds, stop)
            rss_after = process.memory_info().rss
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        finally:
            stop.set()
            stop_server(server)
        if "Traceback" in log_path.read_text():
            print(log_path.read_text(), file=sys.stderr)
        return 0 if report(outcomes, elapsed, rss_before, rss_after) else 1


if __name__ == "__main__":
    sys.exit(main())
