"""The HTTP lookup service: answers checked against the exact oracles of tests/naive.py,
every error path (status, JSON error naming the problem, service still up), size and work
limits, the snapshot, the real server started by ``irscale serve``, and the deployment of
docs/service.md (gunicorn behind nginx)."""
# Subprocesses run with cwd=tmp_path: from the repository root, "python -m irscale" would
# import the source folder irscale/ instead of the installed package.
import json
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import h5py
import httpx
import naive
import pytest
from serving import Deployment, free_port, wait_for_healthz

import irscale
from irscale.errors import StoreError
from irscale.service import create_app
from irscale.store import folder
from irscale.store.folder import STORE_FORMAT, STORE_VERSION
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION

with warnings.catch_warnings():  # starlette asks for httpx2, which this project does not use
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient

ROOT = Path(__file__).resolve().parents[1]
N = 8
MEASURES = "AP@8,DCG(b=2)@8,RBP(p=0.8)@8,P@8"
#: (measure, rb, reference function of naive.py)
CASES = [("AP@8", 1, naive.AP), ("AP@8", 3, naive.AP), ("AP@8", 8, naive.AP), ("AP@8", 12, naive.AP),
         ("DCG(b=2)@8", None, naive.DCG(2)), ("RBP(p=0.8)@8", None, naive.RBP("0.8")), ("P@8", None, naive.P)]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("service") / "t.h5"
    irscale.build_store(path, MEASURES, n_jobs=1)
    return path


@pytest.fixture(scope="module")
def client(store_path):
    with TestClient(create_app(store_path)) as c:
        yield c


def _rank(client, **body):
    r = client.post("/v1/rank", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _assert_error(response, status, kind, *needles):
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["type"] == kind, error
    for needle in needles:
        assert needle in error["message"], error["message"]
    return error


def _assert_alive(client):
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json() == {"status": "ok", "tables": 4}


# -- answers ----------------------------------------------------------------------------
@pytest.mark.parametrize("measure, rb, reference", CASES, ids=[f"{m}-rb{rb}" for m, rb, _ in CASES])
def test_runs_and_values_match_the_oracle(client, measure, rb, reference):
    runs, _, distinct, ranks = naive.oracle(reference, N, rb)
    k = len(distinct)
    answer = _rank(client, measure=measure, rb=rb, runs=[list(run) for run in runs])
    assert answer["measure"] == measure and answer["rb"] == rb and answer["k"] == k
    assert answer["rank"] == ranks  # 1 + number of distinct values below the run's exact value
    assert answer["scaled"] == pytest.approx([(r - 1) / (k - 1) for r in ranks], abs=1e-15)

    order = list(range(k))
    random.Random(k).shuffle(order)
    answer = _rank(client, measure=measure, rb=rb, values=[float(distinct[i]) for i in order])
    assert answer["rank"] == [i + 1 for i in order]
    assert answer["scaled"] == pytest.approx([i / (k - 1) for i in order], abs=1e-15)


def test_canonical_names_integer_values_and_empty_batches(client):
    answer = _rank(client, measure=" RBP(p=0.80)@8 ", runs=[[1] * N])
    assert answer["measure"] == "RBP(p=0.8)@8" and answer["rank"] == [256]
    assert _rank(client, measure="P@8", values=[0, 1])["rank"] == [1, 9]  # JSON integers are values
    assert _rank(client, measure="P@8", values=[]) == {"measure": "P@8", "rb": None, "k": 9, "rank": [], "scaled": [],
                                                       "scale": "exact: table"}
    assert _rank(client, measure="AP@8", rb=2, runs=[])["rank"] == []
    # a looser tolerance finds a value the default one refuses
    near = 0.5 + 1e-9
    assert _rank(client, measure="P@8", values=[near], atol=1e-6)["rank"] == [5]


def test_names_as_ir_measures_and_trec_eval_write_them(client):
    """Lookups read ir_measures' and trec_eval's names as transform does; the answer names
    the canonical measure."""
    run = [[1, 0, 1, 0, 0, 0, 0, 1]]
    expected = _rank(client, measure="AP@8", rb=3, runs=run)
    for name in ("map_cut_8", "map_cut.8", "AP(rel=1)@8", "MAP@8"):
        assert _rank(client, measure=name, rb=3, runs=run) == expected, name
    assert _rank(client, measure="P_8", values=[0.5])["measure"] == "P@8"
    _assert_error(client.post("/v1/rank", json={"measure": "map", "rb": 3, "values": [0.5]}), 422, "MeasureError",
                  "with its cutoff", "AP@1000")


def test_rounded_values_rank_with_decimals(client, store_path):
    third = 1 / 3                   # AP@8 at rb = 3 has 1/3 (one relevant document, at rank 1)
    r = client.post("/v1/rank", json={"measure": "AP@8", "rb": 3, "values": [0.3333]})
    _assert_error(r, 422, "ValueNotInScaleError", "decimals: 4")
    answer = _rank(client, measure="AP@8", rb=3, values=[0.3333], decimals=4)
    assert answer["rank"] == irscale.open_store(store_path).scale("AP@8", 3).rank([third]).tolist()


def test_tables_and_health(client, store_path):
    _assert_alive(client)
    r = client.get("/v1/tables")
    assert r.status_code == 200
    assert str(store_path.parent) not in r.text
    data = r.json()
    assert data["store"]["format"] == STORE_FORMAT and data["store"]["format_version"] == STORE_VERSION
    tables = {t["measure"]: t for t in data["tables"]}
    assert set(tables) == {"AP@8", "DCG(b=2)@8", "RBP(p=0.8)@8", "P@8"}
    ap, dcg = tables["AP@8"], tables["DCG(b=2)@8"]
    assert ap["rb_dependent"] and not dcg["rb_dependent"]
    assert ap["distinct_by_rb"] == [len(naive.oracle(naive.AP, N, rb)[2]) for rb in range(1, N + 1)]
    assert dcg["distinct_by_rb"] == []
    assert ap["names"] == ["AP@8", "map_cut_8"] and dcg["names"] == []
    assert dcg["n_distinct"] == len(naive.oracle(naive.DCG(2), N)[2])
    assert ap["tie_method"] == "exact-integer" and dcg["tie_method"] == "oracle:formal-log+mpmath60"
    assert ap["n"] == N and ap["n_runs"] == 2 ** N and ap["rel"] == [0, 1] and not ap["implicit"]
    assert tables["RBP(p=0.8)@8"]["params"] == {"p": "4/5", "gains": [0, 1], "norm": "top"}
    assert dcg["params"] == {"b": 2, "gains": [0, 1]}
    assert ap["min_gap_exact"] == "1/6720" and ap["generator_version"] == irscale.__version__
    assert ap["error_bound"] > 0 and ap["created"] and len(ap["checksum"]) == 64
    # the records of irscale info --json (TableInfo.to_json), with the service's names and rb_dependent
    for info in irscale.open_store(store_path).tables():
        record = info.to_json()
        served = tables[info.measure]
        assert set(served) - set(record) <= {"names", "rb_dependent"}
        assert {key: record[key] for key in served if key in record} == {k: v for k, v in served.items()
                                                                         if k in record}
        assert not served["path"].startswith(str(store_path.parent))


def test_openapi_describes_the_api(client):
    spec = client.get("/openapi.json").json()
    assert {"/v1/rank", "/v1/tables", "/healthz"} <= set(spec["paths"])
    rank = spec["paths"]["/v1/rank"]["post"]
    body = rank["requestBody"]["content"]["application/json"]["schema"]
    assert {"measure", "rb", "values", "runs", "rtol", "atol"} <= set(body["properties"])
    assert body["examples"] and body["properties"]["runs"]["description"]
    assert {"200", "404", "413", "422"} <= set(rank["responses"])
    assert client.get("/docs").status_code == 200


# -- errors ------------------------------------------------------------------------------
RUN0 = [0] * N
ERRORS = [  # (body: dict or raw bytes, status, type, needles in the message)
    ({"measure": "Foo@8", "values": [0]}, 422, "MeasureError", "unknown measure 'Foo"),
    ({"measure": "AP", "rb": 1, "values": [0]}, 422, "MeasureError", "with its cutoff"),
    ({"measure": "RBP(p=1.5)@8", "values": [0]}, 422, "MeasureError", "p must be a number in (0, 1)"),
    ({"measure": 5, "values": [0]}, 422, "RequestError", "measure:"),
    ({"measure": "AP@9", "rb": 3, "values": [0]}, 404, "TableNotFoundError", "no table AP@9",
     "available tables: AP@8, DCG(b=2)@8, P@8, RBP(p=0.8)@8"),
    ({"measure": "nDCG(b=2)@8", "rb": 2, "runs": [RUN0]}, 404, "TableNotFoundError", "no table nDCG(b=2)@8"),
    ({"measure": "AP@8", "values": [0]}, 422, "RecallBaseError", "depends on the recall base"),
    ({"measure": "P@8", "rb": 3, "values": [0]}, 422, "RecallBaseError", "does not depend on the recall base"),
    ({"measure": "AP@8", "rb": 0, "values": [0]}, 422, "RecallBaseError", "rb must be an integer >= 1"),
    ({"measure": "AP@8", "rb": "3", "values": [0]}, 422, "RequestError", "rb:", "valid integer"),
    ({"measure": "AP@8", "rb": 2.0, "values": [0]}, 422, "RequestError", "rb:"),
    ({"measure": "AP@8", "rb": 2 ** 70, "values": [0]}, 422, "RecallBaseError", "larger than any recall base"),
    ({"measure": "AP@8", "rb": [2, 1], "values": [0]}, 422, "RecallBaseError", "rb must be an integer"),
    ({"measure": "AP@8", "rb": [1, "x"], "values": [0]}, 422, "RequestError", "rb:", "per-grade counts"),
    (b'{"measure": "P@8", "values": [0, 0.5, NaN]}', 422, "RequestError", "values[2]", "finite", "nan"),
    (b'{"measure": "P@8", "values": [Infinity]}', 422, "RequestError", "values[0]", "finite"),
    (b'{"measure": "P@8", "values": [0, -Infinity]}', 422, "RequestError", "values[1]", "finite"),
    (b'{"measure": "P@8", "values": [1e999]}', 422, "RequestError", "values[0]", "finite"),
    ({"measure": "P@8", "values": [0, 0.5, 0.3]}, 422, "ValueNotInScaleError", "values[2]",
     "0.3 is not a value of P@8"),
    ({"measure": "AP@8", "rb": 2, "values": [1.5]}, 422, "ValueNotInScaleError", "values[0]", "1.5",
     "AP@8 with rb=2"),
    ({"measure": "AP@8", "rb": 3, "values": [0.5], "atol": 0.5}, 422, "ValueNotInScaleError", "values[0]",
     "ambiguous"),
    ({"measure": "P@8", "values": [0, "0.5"]}, 422, "RequestError", "values[1]", "valid number"),
    ({"measure": "P@8", "values": [True]}, 422, "RequestError", "values[0]"),
    ({"measure": "P@8", "values": 0.5}, 422, "RequestError", "values:"),
    ({"measure": "P@8", "runs": [RUN0, [1] * (N - 1)]}, 422, "RunError", "runs[1] has length 7", "N = 8"),
    ({"measure": "P@8", "runs": [RUN0, RUN0, [0] * (N + 1)]}, 422, "RunError", "runs[2] has length 9"),
    ({"measure": "P@8", "runs": [RUN0, [0, 2] + [0] * (N - 2)]}, 422, "RunError", "runs[1]",
     "degree 2 at rank 2 is outside REL"),
    ({"measure": "P@8", "runs": [[-1] + [0] * (N - 1)]}, 422, "RunError", "runs[0]", "outside REL"),
    ({"measure": "AP@8", "rb": 2, "runs": [RUN0, [1, 1, 1] + [0] * (N - 3)]}, 422, "RunError", "run 1",
     "3 relevant documents", "rb=2"),
    ({"measure": "P@8", "runs": [RUN0, [1, 1.0] + [0] * (N - 2)]}, 422, "RunError", "runs[1][1]", "integers"),
    ({"measure": "P@8", "runs": [[True] + [0] * (N - 1)]}, 422, "RunError", "runs[0][0]", "integers"),
    ({"measure": "P@8", "runs": [["1"] + [0] * (N - 1)]}, 422, "RunError", "runs[0][0]", "integers"),
    ({"measure": "P@8", "runs": [RUN0, 5]}, 422, "RunError", "runs[1] must be a list"),
    ({"measure": "P@8", "runs": "0101"}, 422, "RequestError", "runs:"),
    ({"measure": "P@8", "values": [0], "runs": [RUN0]}, 422, "RequestError", "exactly one of values"),
    ({"measure": "P@8"}, 422, "RequestError", "exactly one of values"),
    ({"values": [0]}, 422, "RequestError", "measure: field required"),
    ({"measure": "P@8", "runs": [RUN0], "rtol": 0.1}, 422, "RequestError", "apply to value lookups only"),
    ({"measure": "P@8", "values": [0], "atol": -1}, 422, "RequestError", "atol:", "greater than or equal to 0"),
    (b'{"measure": "P@8", "values": [0], "rtol": NaN}', 422, "RequestError", "rtol:", "finite"),
    ({"measure": "P@8", "value": [0]}, 422, "RequestError", "unknown field 'value'"),
    (b'{"measure": "P@8", "values": [0.5,', 400, "InvalidJSONError", "not valid JSON"),
    (b"", 400, "InvalidJSONError", "empty"),
    (b"[0.5]", 422, "RequestError", "must be a JSON object"),
]


@pytest.mark.parametrize("body, status, kind, needles", [(b, s, k, n) for b, s, k, *n in ERRORS],
                         ids=[f"{i}-{e[2]}" for i, e in enumerate(ERRORS)])
def test_invalid_requests_get_a_json_error_naming_the_problem(client, store_path, body, status, kind, needles):
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    r = client.post("/v1/rank", content=content, headers={"content-type": "application/json"})
    _assert_error(r, status, kind, *needles)
    assert str(store_path.parent) not in r.text
    _assert_alive(client)


def test_validation_errors_list_their_problems(client):
    body = {"measure": 5, "rb": "x", "values": [0, "a"] + ["b"] * 10 ** 5}  # values: the first bad item only
    error = _assert_error(client.post("/v1/rank", json=body), 422, "RequestError", "measure:", "and 2 more problems")
    assert [d["loc"] for d in error["details"]] == ["measure", "rb", "values[1]"]
    body = {"measure": "P@8", "values": [0]} | {f"field{i}": i for i in range(30)}
    error = _assert_error(client.post("/v1/rank", json=body), 422, "RequestError", "unknown field 'field0'",
                          "and 29 more problems")
    assert len(error["details"]) == 20


def test_unknown_paths_and_methods(client):
    _assert_error(client.get("/v2/rank"), 404, "NotFound", "/v2/rank")
    r = client.get("/" + "x" * 10_000)       # what is echoed of the path is cut
    _assert_error(r, 404, "NotFound", "/xxxx")
    assert len(r.content) < 400, len(r.content)
    r = client.get("/v1/rank")
    _assert_error(r, 405, "MethodNotAllowed", "GET /v1/rank")
    assert "POST" in r.headers["allow"]
    _assert_alive(client)


def test_a_bug_answers_500_in_the_same_shape(store_path, monkeypatch):
    app = create_app(store_path)

    def bug(body):
        raise RuntimeError("a bug")
    monkeypatch.setattr(app.state.service, "rank", bug)
    with TestClient(app, raise_server_exceptions=False) as broken:
        _assert_error(broken.post("/v1/rank", json={"measure": "P@8", "values": [0]}), 500, "InternalError", "bug")
        assert broken.get("/healthz").status_code == 200


def test_limits_answer_413(store_path):
    small = TestClient(create_app(store_path, max_items=10, max_body_bytes=2000))
    assert small.post("/v1/rank", json={"measure": "P@8", "values": [0] * 10}).status_code == 200
    _assert_error(small.post("/v1/rank", json={"measure": "P@8", "values": [0] * 11}), 413,
                  "PayloadTooLargeError", "11 values", "at most 10")
    _assert_error(small.post("/v1/rank", json={"measure": "P@8", "runs": [RUN0] * 11}), 413,
                  "PayloadTooLargeError", "11 runs", "at most 10")
    large = json.dumps({"measure": "P@8", "values": [0.5] * 400}).encode()
    assert len(large) > 2000
    r = small.post("/v1/rank", content=large)  # refused by Content-Length
    _assert_error(r, 413, "PayloadTooLargeError", "2000 bytes")

    def chunks(data, size=500):  # no Content-Length: the middleware counts the streamed bytes
        for i in range(0, len(data), size):
            yield data[i:i + size]
    r = small.post("/v1/rank", content=chunks(large))
    _assert_error(r, 413, "PayloadTooLargeError", "2000 bytes")
    r = small.post("/v1/rank", content=chunks(json.dumps({"measure": "P@8", "values": [0.5]}).encode(), 7))
    assert r.status_code == 200 and r.json()["rank"] == [5]
    assert small.get("/healthz").status_code == 200


def test_store_errors_before_serving(tmp_path):
    with pytest.raises(StoreError, match="no such file"):
        create_app(tmp_path / "missing.h5")
    with h5py.File(tmp_path / "empty.h5", "w") as f:
        f.attrs["format"], f.attrs["format_version"] = FORMAT_NAME, FORMAT_VERSION
    with pytest.raises(StoreError):     # a file no build wrote (the reader says why)
        create_app(tmp_path / "empty.h5")
    folder.create(tmp_path / "empty")
    with pytest.raises(StoreError, match="holds no table"):
        create_app(tmp_path / "empty")


# -- the real server -----------------------------------------------------------------------
def _serve(store_path, cwd, *options):
    return subprocess.run([sys.executable, "-m", "irscale", "serve", "--store", str(store_path), *options],
                          capture_output=True, text=True, cwd=cwd, timeout=60)


def test_irscale_serve(store_path, tmp_path):
    port = free_port()
    log = open(tmp_path / "server.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "irscale", "serve", "--store", str(store_path),
                             "--port", str(port), "--max-items", "100", "--log-level", "warning"],
                            cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            wait_for_healthz(http, proc, tmp_path / "server.log", 30)
            tables = http.get("/v1/tables").json()["tables"]
            assert [t["measure"] for t in tables] == ["AP@8", "DCG(b=2)@8", "P@8", "RBP(p=0.8)@8"]
            r = http.post("/v1/rank", json={"measure": "AP@8", "rb": 3, "values": [0, 1]})
            k = len(naive.oracle(naive.AP, N, 3)[2])
            assert r.status_code == 200 and r.json()["rank"] == [1, k] and r.json()["scaled"] == [0, 1]
            r = http.post("/v1/rank", json={"measure": "DCG(b=2)@8", "runs": [[1] * N, RUN0]})
            assert r.json()["rank"] == [len(naive.oracle(naive.DCG(2), N)[2]), 1]
            _assert_error(http.post("/v1/rank", json={"measure": "P@8", "values": [0.3]}), 422,
                          "ValueNotInScaleError", "values[0]")
            _assert_error(http.post("/v1/rank", json={"measure": "P@8", "values": [0] * 101}), 413,
                          "PayloadTooLargeError", "at most 100")
            assert http.get("/healthz").json() == {"status": "ok", "tables": 4}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    # uvicorn shuts down gracefully, then re-raises the signal
    assert proc.returncode in (0, -signal.SIGTERM), (tmp_path / "server.log").read_text()
    assert "Traceback" not in (tmp_path / "server.log").read_text()


def test_irscale_serve_user_errors(store_path, tmp_path):
    r = _serve(tmp_path / "missing.h5", tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("irscale: error: ") and "no such file" in r.stderr
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        r = _serve(store_path, tmp_path, "--port", str(busy.getsockname()[1]))
    assert r.returncode == 2 and "cannot listen on 127.0.0.1:" in r.stderr
    assert r.stderr.strip().count("\n") == 0


# -- work bounded before it starts -------------------------------------------------------------
def test_work_over_the_limit_gets_422_naming_it(store_path):
    with TestClient(create_app(store_path, max_seconds=0.001)) as c:       # 1 ms: about 500 values of a table
        assert _rank(c, measure="P@8", values=[0.5] * 100)["rank"] == [5] * 100
        error = _assert_error(c.post("/v1/rank", json={"measure": "P@8", "values": [0.5] * 1000}), 422,
                              "RequestError", "1000 values of P@8", "at most 0.001 s per request",
                              "send at most 500 per request")
        assert "details" not in error
        _assert_error(c.post("/v1/rank", json={"measure": "AP@8", "rb": 3, "runs": [RUN0] * 1000}), 422,
                      "RequestError", "1000 runs of AP@8")
        assert _rank(c, measure="P@8", runs=[RUN0] * 300)["rank"] == [1] * 300      # read as one array
        _assert_error(c.post("/v1/rank", json={"measure": "P@8", "runs": [RUN0] * 299 + [[True] + RUN0[1:]]}), 422,
                      "RequestError", "300 runs of P@8")           # checked list by list: more work
        _assert_alive(c)


def test_views_of_closed_forms_are_estimated_not_enumerated(client):
    start = time.monotonic()
    r = client.get("/v1/table", params={"measure": "P@100000"})
    _assert_error(r, 422, "RequestError", "the view of P@100000 (exact: closed form)", "at most 5 s per request")
    r = client.get("/v1/table", params={"measure": "R@100000", "rb": 50000})
    _assert_error(r, 422, "RequestError", "the view of R@100000 (exact: closed form)")
    assert time.monotonic() - start < 2
    view = client.get("/v1/table", params={"measure": "P@1000", "points": 10}).json()     # within the limit
    assert view["k"] == 1001 and view["n_runs"] == 2 ** 1000 and view["points"] == 10
    assert view["value_lo"][0] == 0 and view["value_hi"][-1] == 1 and view["gaps"]["used"] == 1000
    _assert_alive(client)


def test_runs_as_long_as_the_measure_takes(client):
    """Closed forms rank runs of any N (not only up to the tables' largest N = 32)."""
    run = [1] * 30 + [0] * 70
    assert _rank(client, measure="P@100", runs=[run, [0] * 100])["rank"] == [31, 1]
    assert _rank(client, measure="RR@40", runs=[[0] * 39 + [1]])["rank"] == [2]
    _assert_error(client.post("/v1/rank", json={"measure": "P@100", "runs": [[0] * 101]}), 422, "RunError",
                  "runs[0] has length 101", "N = 100")


def test_rank_oracles_beyond_the_tables_largest_n(tmp_path):
    """Runs of N = 36 (a rank oracle's, beyond the tables' N = 32) are ranked as the scale
    ranks them; the view of its 2^36 values is sampled in as many windows as the limit allows."""
    path, measure = tmp_path / "store", "RBP(p=0.8)@36"
    irscale.build_store(path, measure, n_jobs=1)
    scale = irscale.open_store(path).scale(measure)
    runs = [[1] + [0] * 35, [0] * 36, [0, 1] * 18]
    with TestClient(create_app(path)) as c:
        answer = _rank(c, measure=measure, runs=runs)
        assert answer["rank"] == scale.rank_runs(runs).tolist() and answer["scale"] == "exact: rank oracle"
        view = c.get("/v1/table", params={"measure": measure, "points": 10}).json()
        assert view["k"] == 2 ** 36 and view["gaps"]["sampled"] and 0 < view["gaps"]["used"] < 64 * 4095
        _assert_error(c.post("/v1/rank", json={"measure": measure, "runs": [[0] * 36] * 200_000}), 422,
                      "RequestError", "200000 runs of RBP(p=0.8)@36 (exact: rank oracle)", "send at most")


def test_answers_come_from_the_snapshot_opened_at_start(tmp_path):
    """A table added (or rebuilt) while the service runs changes nothing it answers; a new
    service sees it."""
    path = tmp_path / "store"
    irscale.build_store(path, "P@4,AP@4", n_jobs=1)
    with TestClient(create_app(path)) as c:
        before = c.get("/v1/tables").json()
        irscale.build_store(path, "DCG(b=2)@4", n_jobs=1)
        irscale.build_store(path, "AP@4", n_jobs=1, rebuild=True)       # its file replaced
        assert c.get("/v1/tables").json() == before
        for _ in range(3):
            assert _rank(c, measure="AP@4", rb=2, values=[1.0])["rank"] == [10]
            assert _rank(c, measure="AP@4", rb=3, runs=[[1, 1, 1, 0]])["rank"] == [14]
        _assert_error(c.post("/v1/rank", json={"measure": "DCG(b=2)@4", "runs": [[1, 0, 0, 0]]}), 404,
                      "TableNotFoundError")
    with TestClient(create_app(path)) as c:
        assert len(c.get("/v1/tables").json()["tables"]) == 3


# -- the deployment of docs/service.md: gunicorn behind nginx --------------------------------------
def _trickle(url: str, seconds: float) -> bytes:
    """A POST /v1/rank whose body comes in 1-byte chunks for ``seconds``: the answer."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as s:
        s.sendall(b"POST /v1/rank HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n")
        body, end = b'{"measure": "P@4", "values": [0.5', time.monotonic() + seconds
        s.sendall(b"".join(b"1\r\n%c\r\n" % c for c in body))
        while time.monotonic() < end:
            s.sendall(b"1\r\n \r\n" * 64)
            time.sleep(0.001)
        s.sendall(b"2\r\n]}\r\n0\r\n\r\n")
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.rstrip().endswith(b"}"):
            if not (chunk := s.recv(65536)):
                break
            answer += chunk
        return answer


@pytest.fixture
def deployed(tmp_path):
    pytest.importorskip("gunicorn")
    pytest.importorskip("uvicorn_worker")
    store = tmp_path / "tables"
    irscale.build_store(store, "P@4,AP@4", n_jobs=1)
    with Deployment(store, tmp_path) as deployment:
        deployment.store = store
        yield deployment


@pytest.mark.slow
def test_the_deployment_of_the_docs(deployed):
    """The API through the documented deployment, the memory limit of gunicorn's workers, the
    snapshot and its reload by kill -HUP."""
    psutil = pytest.importorskip("psutil")
    if deployed.front != "nginx":
        print("nginx is not installed: the deployment is tested without its reverse proxy")
    with httpx.Client(base_url=deployed.url, timeout=30) as http:
        r = http.post("/v1/rank", json={"measure": "AP@4", "rb": 2, "values": [0, 1]})
        assert r.status_code == 200 and r.json()["rank"] == [1, 10]
        _assert_error(http.post("/v1/rank", json={"measure": "P@4", "values": [0.3]}), 422, "ValueNotInScaleError")
        workers = psutil.Process(deployed.gunicorn.pid).children()
        assert len(workers) == 2
        for worker in workers:      # the memory limit of the docs, in each worker
            assert worker.rlimit(psutil.RLIMIT_DATA) == (4 * 2 ** 30, 4 * 2 ** 30)
        irscale.build_store(deployed.store, "DCG(b=2)@4", n_jobs=1)
        assert len(http.get("/v1/tables").json()["tables"]) == 2         # the snapshot
        assert http.post("/v1/rank", json={"measure": "P@4", "values": [0.5]}).json()["rank"] == [3]
        deployed.gunicorn.send_signal(signal.SIGHUP)                    # reload: new workers, a new snapshot
        deadline = time.monotonic() + 60
        while len(http.get("/v1/tables").json()["tables"]) != 3:
            assert time.monotonic() < deadline, "kill -HUP did not reload the store"
            time.sleep(0.5)
        assert http.post("/v1/rank", json={"measure": "DCG(b=2)@4", "runs": [[1, 0, 0, 0]]}).status_code == 200


@pytest.mark.slow
def test_slow_clients_meet_the_reverse_proxy(deployed):
    """Three clients trickling bodies in 1-byte chunks, and a head left half-sent: /healthz
    answers within 1 s meanwhile, the bodies are answered, the half-open head is closed."""
    if deployed.front != "nginx":
        pytest.skip("nginx is not installed (apt-get install nginx): no reverse proxy to test")
    answers = []
    clients = [threading.Thread(target=lambda: answers.append(_trickle(deployed.url, 4))) for _ in range(3)]
    for client in clients:
        client.start()
    slowest = 0.0
    while any(client.is_alive() for client in clients):
        start = time.monotonic()
        assert httpx.get(deployed.url + "/healthz", timeout=5).status_code == 200
        slowest = max(slowest, time.monotonic() - start)
        time.sleep(0.1)
    assert slowest < 1.0, slowest
    assert len(answers) == 3 and all(a.startswith(b"HTTP/1.1 200") and b'"rank":[3]' in a for a in answers), answers
    with socket.create_connection(("127.0.0.1", deployed.port)) as half_open:    # nginx's client_header_timeout
        half_open.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        half_open.settimeout(30)
        start = time.monotonic()
        assert half_open.recv(100) == b""       # closed, unanswered (nginx logs a 408)
        assert 9 < time.monotonic() - start < 20
