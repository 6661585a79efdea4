"""Hostile requests against the HTTP lookup service (issues 13 and 32): every hostile shape
(lists, fields, nesting, numbers, huge names) gets a 4xx answer of bounded size, malformed
runs get a 422 (never a 500), no answer names the store's location, values beyond the ends of a
scale are not values of it, an unexpected error answers 500 without breaking the
connection, and a long request leaves /healthz answering. The attack script
(``scripts/attack_service.py``: the deployment of docs/service.md, /healthz probed during
every attack) and a 60 MB field name sent to a real server run under ``--runslow``."""
import json
import random
import shutil
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import httpx
import pytest
from serving import wait_for_healthz

import irscale
from irscale.service import MAX_FIELDS, MAX_RB_ITEMS, create_app
from irscale.service.models import PayloadTooLargeError, parse_request

# live servers under hostile requests: 7 s; CI runs it (pytest --runslow)
pytestmark = pytest.mark.slow

with warnings.catch_warnings():  # starlette asks for httpx2, which this project does not use
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
RBPU = "RBPU(p=0.8)@6"


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "hostile.h5"
    irscale.build_store(path, f"AP@10,RR@10,{RBPU},P@8", n_jobs=1)
    irscale.build_store(path, ["OIE@6"], rb_counts=[(2,)])
    return path


@pytest.fixture(scope="module")
def client(store_path):
    with TestClient(create_app(store_path, max_items=1000)) as c:
        yield c


def _post(client, body):
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client.post("/v1/rank", content=content, headers={"content-type": "application/json"})


def _error(response, status, kind, *needles):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["type"] == kind, error
    for needle in needles:
        assert needle in error["message"], error["message"]
    return error["message"]


def _alive(client):
    assert client.get("/healthz").status_code == 200


# -- hostile shapes: a 4xx of bounded size ----------------------------------------------------
def _fields(n):
    return b'{"measure": "P@8", "values": [0], ' + b", ".join(b'"k%d": 0' % i for i in range(n)) + b"}"


HOSTILE = [  # (body, status, type, needles)
    (b'{"measure": "AP@10", "rb": [' + b", ".join([b'"a"'] * 200_000) + b'], "values": [0]}', 413,
     "PayloadTooLargeError", "rb has 200000 items", f"at most {MAX_RB_ITEMS}"),
    (b'{"measure": "AP@10", "rb": [' + b",".join([b"1"] * (MAX_RB_ITEMS + 1)) + b'], "values": [0]}', 413,
     "PayloadTooLargeError", f"rb has {MAX_RB_ITEMS + 1} items"),
    (_fields(100_000), 422, "RequestError", "the request has 100002 fields", f"at most {MAX_FIELDS} are read"),
    (_fields(MAX_FIELDS), 422, "RequestError", f"the request has {MAX_FIELDS + 2} fields", f"at most {MAX_FIELDS}"),
    (b'{"measure": "P@8", "values": [' + b",".join([b"0"] * 1001) + b"]}", 413, "PayloadTooLargeError",
     "1001 values in one request", "at most 1000"),
    (b'{"measure": "P@8", "runs": [' + b",".join([b"[0]"] * 1001) + b"]}", 413, "PayloadTooLargeError",
     "1001 runs in one request"),
    (b'{"measure": "P@8", "runs": [[0,0,0,0,0,0,0,0], [' + b",".join([b"0"] * 100) + b"]]}", 422, "RunError",
     "runs[1] has length 100", "N = 8"),
    (b'{"measure": "P@8", "values": [0], "x": [' + b",".join([b"0"] * 10_000) + b"]}", 422, "RequestError",
     "unknown field 'x'"),
    (b'{"measure": "P@8", "runs": ' + b"[" * 1000 + b"]" * 1000 + b"}", 422, "RequestError",
     "nests lists too deeply"),
    (b'{"measure": "P@8", "values": [[[0]]]}', 422, "RequestError", "values[0]"),
    (b"[" * 1000 + b"]" * 1000, 422, "RequestError", "nests lists too deeply"),
    (b"[" + b"[0]," * 2000 + b"[0]]", 422, "RequestError", "must be a JSON object"),
    (b'{"measure": "P@8", "rb": ' + b"1" * 5000 + b', "values": [0]}', 422, "RequestError",
     "too long an integer"),
    (b'{"' + b"k" * 1_000_000 + b'": 0, "measure": "P@8", "values": [0]}', 422, "RequestError", "unknown field"),
    (b'{"measure": "' + b"P" * 1_000_000 + b'", "values": [0]}', 422, "RequestError", "measure:"),
    (b'{"measure": "P@8", "values": [0, 1' + b", 1" * 100_000, 400, "InvalidJSONError", "not valid JSON"),
    (b'{"measure": "P@8", "values": [0, 1}', 400, "InvalidJSONError", "not valid JSON"),
]


@pytest.mark.parametrize("body, status, kind, needles", [(b, s, k, n) for b, s, k, *n in HOSTILE],
                         ids=[f"{i}-{u[2]}" for i, u in enumerate(HOSTILE)])
def test_hostile_shapes_get_a_short_4xx(client, body, status, kind, needles):
    r = _post(client, body)
    _error(r, status, kind, *needles)
    assert len(r.content) < 1024, r.content[:2000]     # nothing the client sent is echoed whole
    _alive(client)


def test_strings_are_read_as_json_does():
    # brackets, commas and escaped quotes inside strings are text, not structure
    assert parse_request(b'{"measure": "a\\"[[[[,,,{", "values": [0]}', 10).measure == 'a"[[[[,,,{'
    assert parse_request(b'{"measure": "P@8", "runs": [[1, 0], []], "rb": [1, 2, 3]}', 10).rb == [1, 2, 3]
    with pytest.raises(PayloadTooLargeError):
        parse_request(b'{"measure": "P@8", "runs": [[1], [0], [1]]}', 2)


# -- runs: 422 for every malformed shape ----------------------------------------------------------
BAD_RUNS = [  # (measure, rb, runs, needles)
    (RBPU, None, [[[1]]], ["runs[0][0]", "must be integers, got [1]"]),
    (RBPU, None, [[0, [[[1]]]]], ["runs[0][1]", "must be integers, got [[[1]]]"]),
    ("P@8", None, [[[1]]], ["runs[0]"]),
    (RBPU, None, [[-1]], ["runs[0]", "degree -1 at rank 1", "outside REL"]),
    (RBPU, None, [[1, -1]], ["runs[0]", "degree -1 at rank 2"]),
    (RBPU, None, [[True]], ["runs[0][0]", "integers", "True"]),
    (RBPU, None, [[1, False]], ["runs[0][1]", "integers"]),
    (RBPU, None, [[1.0]], ["runs[0][0]", "integers"]),
    (RBPU, None, [[None]], ["runs[0][0]", "integers"]),
    (RBPU, None, [["1"]], ["runs[0][0]", "integers"]),
    (RBPU, None, [[2]], ["degree 2", "outside REL"]),
    (RBPU, None, [[1] * 7], ["runs[0] has 7 documents", "at most N = 6"]),
    (RBPU, None, [[1], 0], ["runs[1] must be a list"]),
    (RBPU, None, [1, 0], ["runs[0] must be a list"]),
    ("AP@10", 3, [[True] + [0] * 9], ["runs[0][0]", "integers"]),
    ("AP@10", 3, [[-1] + [0] * 9], ["runs[0]", "outside REL"]),
    ("AP@10", 3, [[0] * 10, [1]], ["runs[1] has length 1", "N = 10"]),
    ("AP@10", 3, [[0] * 9 + [2 ** 70]], ["runs[0]", "at rank 10", "outside REL"]),
    ("OIE@6", [2], [[[1]]], ["runs[0]"]),
    ("OIE@6", [2], [[1, 1, 1]], ["ranking 0 has 3 documents of grade 1", "cannot occur"]),
]


@pytest.mark.parametrize("measure, rb, runs, needles", BAD_RUNS, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD_RUNS)])
def test_malformed_runs_get_422(client, measure, rb, runs, needles):
    _error(_post(client, {"measure": measure, "rb": rb, "runs": runs}), 422, "RunError", *needles)
    _alive(client)


def test_rankings_of_their_own_lengths(client):
    runs = [[1], [], [0, 1, 1, 0, 0, 1], [0]]
    r = _post(client, {"measure": RBPU, "runs": runs})
    assert r.status_code == 200, r.text
    assert r.json()["rank"] == irscale.scale(RBPU).rank_runs(runs).tolist()
    # the empty ranking is not [-1]: refused above, and ranked apart from it here
    assert r.json()["rank"][1] != r.json()["rank"][3]


# -- values beyond the ends of a scale -------------------------------------------------------------
@pytest.mark.parametrize("value, side", [(-0.5, "below its smallest value 0.0"), (-1e9, "below"),
                                         (-1e-300, "below"), (1.5, "above its largest value 1.0")])
def test_rr_values_beyond_the_scale_are_not_values(client, value, side):
    _error(_post(client, {"measure": "RR@10", "values": [0.5, value]}), 422, "ValueNotInScaleError",
           "values[1]", "not a value of RR@10", side)


def test_rr_ends_of_the_scale_still_rank(client):
    r = _post(client, {"measure": "RR@10", "values": [0.0, -0.0, 1.0, 0.1]})
    assert r.status_code == 200 and r.json()["rank"] == [1, 1, 11, 2]


# -- no location in any answer -----------------------------------------------------------------------
def test_missing_per_topic_table_names_no_path(client, store_path):
    message = _error(_post(client, {"measure": "OIE@6", "rb": [3], "runs": [[1]]}), 404, "TableNotFoundError",
                     "no table OIE@6 for the per-grade counts (3)", "--rb", "(it has OIE@6 for (2))")
    assert str(store_path.parent) not in message and store_path.name not in message
    assert "--out STORE" in message and "this store" not in message.split("--rb")[1]     # a command to adapt


def test_store_location_is_scrubbed_from_every_message(client, store_path, monkeypatch):
    service = client.app.state.service

    def leak(body):
        raise irscale.errors.StoreError(f"{store_path.resolve()}: cannot read table X in {store_path.parent}/other.h5")
    monkeypatch.setattr(service, "rank", leak)
    message = _error(_post(client, {"measure": "P@8", "values": [0]}), 422, "StoreError", "this store")
    assert str(store_path.parent) not in message


# -- a bug answers 500 and keeps the connection ------------------------------------------------------
def test_a_bug_answers_500_without_raising_into_the_server(store_path, monkeypatch):
    app = create_app(store_path)

    def bug(body):
        raise RuntimeError("a bug")
    monkeypatch.setattr(app.state.service, "rank", bug)
    with TestClient(app) as c:      # raise_server_exceptions: an exception that reaches the server fails here
        _error(_post(c, {"measure": "P@8", "values": [0]}), 500, "InternalError", "a bug in irscale")
        assert c.get("/healthz").status_code == 200


# -- the pool of threads: /healthz is never behind a lookup -------------------------------------
def _big_runs(n=600_000):    # about 11 MB
    return {"measure": "P@8", "runs": [[1, 0, 1, 0, 1, 0, 1, 0]] * n}


def test_healthz_answers_while_the_pool_works(store_path):
    """With one thread, a long request in flight and another waiting for the thread:
    /healthz answers at once, and both requests are answered in turn."""
    with TestClient(create_app(store_path, threads=1)) as c:
        answers, body = [], json.dumps(_big_runs(300_000)).encode()     # each worked on for about 0.5-1 s
        start = time.monotonic()
        assert _post(c, body).status_code == 200
        one = time.monotonic() - start
        busy = [threading.Thread(target=lambda: answers.append(_post(c, body))) for _ in range(2)]
        for thread in busy:
            thread.start()
        time.sleep(0.1)
        took = []
        while any(thread.is_alive() for thread in busy):
            start = time.monotonic()
            assert c.get("/healthz").status_code == 200
            took.append(time.monotonic() - start)
            time.sleep(0.05)
        # answered on the loop, probes would wait for a lookup to end: half of them more than one / 2
        assert len(took) >= 3 and sorted(took)[len(took) // 2] < one / 3, (one, took)   # (the GIL is shared)
        assert [r.status_code for r in answers] == [200, 200] and answers[0].json()["rank"][:2] == [5, 5]


def test_an_empty_ranking_alone_ranks_as_the_scale_does(client):
    """``[[]]``, one ranking of no document, was a 500; it is the scale's answer."""
    r = _post(client, {"measure": RBPU, "runs": [[]]})
    assert r.status_code == 200 and r.json()["rank"] == irscale.scale(RBPU).rank_runs([[]]).tolist()
    _error(_post(client, {"measure": "P@8", "runs": [[]]}), 422, "RunError", "runs[0] has length 0", "N = 8")


# -- the attack script against a real server ------------------------------------------------------------
@pytest.mark.slow
def test_attack_script_passes(tmp_path):
    pytest.importorskip("gunicorn")
    if not shutil.which("nginx"):
        pytest.skip("nginx is not installed (apt-get install nginx): the documented deployment cannot start")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "attack_service.py"), "--quick", "--half-open", "300",
                        "--partial-bodies", "5"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all 18 attacks answered as expected" in r.stdout


# -- big batches: runs read straight from the bytes, the same answers and errors -----------------------
@pytest.mark.parametrize("measure, rb, n, truncated", [("AP@10", 4, 10, False), (RBPU, None, 6, True),
                                                      ("OIE@6", [2], 6, True)])
def test_big_batches_rank_as_the_scale_does(client, measure, rb, n, truncated):
    rng = random.Random(n)
    runs = []
    while len(runs) < 900:
        run = [rng.randint(0, 1) for _ in range(rng.randint(0, n) if truncated else n)]
        if sum(run) <= 2 or not isinstance(rb, list) and sum(run) <= 4:
            runs.append(run)
    r = _post(client, {"measure": measure, "rb": rb, "runs": runs})
    assert r.status_code == 200, r.text
    scale = client.app.state.service.store.scale(measure, tuple(rb) if isinstance(rb, list)
                                                                          else rb)
    assert r.json()["rank"] == scale.rank_runs(runs).tolist()


@pytest.mark.parametrize("last, needles", [([-1], ["runs[999]", "degree -1"]), ([True], ["runs[999][0]", "integers"]),
                                           ([1, 2], ["runs[999]", "degree 2 at rank 2"]),
                                           ([[1]], ["runs[999][0]", "must be integers, got [1]"]),
                                           ([0] * 7, ["runs[999] has 7 documents"]), ([1.0], ["runs[999][0]"])])
def test_big_batches_name_the_bad_run(client, last, needles):
    _error(_post(client, {"measure": RBPU, "runs": [[1, 0]] * 999 + [last]}), 422, "RunError", *needles)


# -- issue 32: a 60 MB field name against a real server -------------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_a_60_mb_field_name_gets_a_short_4xx_and_healthz_stays_fast(store_path, tmp_path):
    port = _free_port()
    with open(tmp_path / "server.log", "w+") as log:
        proc = subprocess.Popen([sys.executable, "-m", "irscale", "serve", "--store", str(store_path), "--port",
                                 str(port), "--log-level", "warning"], cwd=tmp_path, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
                wait_for_healthz(http, proc, tmp_path / "server.log", 60)
                answers = {}
                for name, body in [("key", b'{"' + b"k" * 60_000_000 + b'": 1, "measure": "P@8", "values": [0]}'),
                                   ("measure", b'{"measure": "' + b"P" * 60_000_000 + b'", "values": [0]}'),
                                   ("both", b'{"' + b"k" * 30_000_000 + b'": [], "' + b"j" * 30_000_000 + b'": 1}')]:
                    thread = threading.Thread(target=lambda n=name, b=body: answers.__setitem__(n, httpx.post(
                        f"http://127.0.0.1:{port}/v1/rank", content=b, timeout=60)))
                    thread.start()
                    slowest = 0.0
                    while thread.is_alive():        # /healthz on new connections meanwhile
                        start = time.monotonic()
                        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
                        slowest = max(slowest, time.monotonic() - start)
                        time.sleep(0.05)
                    thread.join()
                    r = answers[name]
                    assert 400 <= r.status_code < 500 and len(r.content) < 1024, (name, r.status_code, r.content[:300])
                    assert slowest < 1.0, (name, slowest)
                    assert r.json()["error"]["type"] == "RequestError"
        finally:
            proc.terminate()
            proc.wait(timeout=15)
