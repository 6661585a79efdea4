"""Tables of graded RB-dependent measures (gR, graded nDCG, graded nDCG_trec), one per
capped per-grade count vector (c_1..c_G) over the runs feasible for it: every vector at
small N against exact brute force (tests/naive.py), through the store, the CLI,
transform (feasible and common scales) and the service."""
import itertools
import warnings

import naive
import numpy as np
import pytest

import irscale
from irscale.scales.tables.build import build_tables

CASES = [(name, 4 if levels == 3 else 3) for name, (_, levels) in naive.GRADED_RB.items()]


def _vectors(grades, n):
    return [c for c in itertools.product(range(n + 1), repeat=grades) if sum(c) >= 1]


def _check_scale(scale, fn, levels, n, counts):
    runs, vals, distinct, ranks = naive.feasible_oracle(fn, levels, n, counts)
    assert scale.k == len(distinct)
    assert scale.n_runs == len(runs)
    assert np.allclose(scale.values, [float(d) for d in distinct], rtol=1e-13, atol=1e-15)
    per_value = np.bincount(np.array(ranks) - 1, minlength=len(distinct))
    assert scale.counts.tolist() == per_value.tolist()
    assert scale.rank_runs(np.array(runs)).tolist() == ranks
    assert scale.rank([float(v) for v in vals]).tolist() == ranks
    infeasible = [r for r in naive.graded_runs(levels, n) if any(r.count(g) > counts[g - 1] for g in range(1, levels))]
    if infeasible:
        with pytest.raises(irscale.RunError, match="cannot occur"):
            scale.rank_runs(np.array(infeasible[:1]))


@pytest.mark.parametrize("name,n", CASES, ids=[c[0] for c in CASES])
def test_every_count_vector_matches_brute_force(name, n):
    fn, levels = naive.GRADED_RB[name]
    m = irscale.parse_measure(f"{name}@{n}")
    vectors = _vectors(levels - 1, n)
    tables = list(build_tables([m], rb_counts={str(m): vectors}))
    assert sorted(t.table_rb for t in tables) == sorted(vectors)
    for t in tables:
        _check_scale(t.scale(t.table_rb), fn, levels, n, t.table_rb)


@pytest.mark.parametrize("name", ["gR(gains=(0,1,2))", "nDCG(b=2,gains=(0,1,2))"])
def test_counts_above_n_use_the_capped_table_with_their_own_values(name):
    fn, levels = naive.GRADED_RB[name]
    n = 4
    for counts in [(6, 1), (0, 9), (5, 7)]:
        s = irscale.scale(f"{name}@{n}", counts)
        capped = tuple(min(c, n) for c in counts)
        runs, _, _, ranks = naive.feasible_oracle(fn, levels, n, capped)
        assert s.rank_runs(np.array(runs)).tolist() == ranks
        vals = [float(fn(r, counts)) for r in runs]
        assert s.rank(vals).tolist() == ranks
        assert np.allclose(sorted(set(np.round(vals, 12))), np.round(s.values, 12))


def test_recall_base_errors():
    m = "nDCG(b=2,gains=(0,1,2))@4"
    for bad in [3, (1,), (1, 2, 3), (0, 0), (-1, 2), None]:
        with pytest.raises(irscale.RecallBaseError):
            irscale.scale(m, bad)
    with pytest.raises(irscale.RecallBaseError, match="total gain 0"):
        irscale.scale("gR(gains=(0,0,2))@3", (2, 0))


def test_store_round_trip_and_missing_vector(tmp_path):
    path = tmp_path / "g.h5"
    m = "nDCG_trec(gains=(0,1,2))@4"
    store = irscale.build_store(path, [m], rb_counts=[(1, 2), (4, 4)])
    names = [t["name"] for t in store.tables()]
    assert names == [f"{m} rb=(1,2)", f"{m} rb=(4,4)"]
    fn, levels = naive.GRADED_RB["nDCG_trec(gains=(0,1,2))"]
    _check_scale(store.scale(m, (1, 2)), fn, levels, 4, (1, 2))
    _check_scale(store.scale(m, (7, 9)), fn, levels, 4, (7, 9))     # served by (4, 4)
    with pytest.raises(irscale.TableNotFoundError, match=r'--rb "\(2,2\)"'):
        store.scale(m, (2, 2))
    # building again adds only what is missing and keeps the rest bit for bit
    before = {t["name"]: t["checksum"] for t in store.tables()}
    store = irscale.build_store(path, [m], rb_counts=[(1, 2), (2, 2)])
    after = {t["name"]: t["checksum"] for t in store.tables()}
    assert len(after) == 3 and all(after[k] == v for k, v in before.items())
    assert store.verify() == sorted(after)


def test_cli_build_lookup_info(tmp_path):
    from irscale.cli import main
    path = tmp_path / "c.h5"
    m = "gR(gains=(0,1,3))@5"
    assert main(["build", "-m", m, "--rb", "(2,1),(0,3)", "--out", str(path), "-q"]) == 0
    store = irscale.open_store(path)
    assert [t["rb_counts"] for t in store.tables()] == [(0, 3), (2, 1)]
    s = store.scale(m, (2, 1))
    # gR values with counts (2, 1): total gain 2 * 1 + 1 * 3 = 5
    assert s.values.tolist() == pytest.approx([i / 5 for i in (0, 1, 2, 3, 4, 5)])
    assert main(["lookup", str(path), m, "0.8", "--rb", "(2,1)"]) == 0
    assert main(["info", str(path)]) == 0
    for bad in (["--rb", "(2,1,1)"], ["--rb", "(x)"], ["--rb", "(0,0)"]):
        assert main(["build", "-m", m, *bad, "--out", str(path), "-q"]) == 2
    assert main(["build", "-m", "AP@5", "--rb", "(1,2)", "--out", str(path), "-q"]) == 2
    assert main(["lookup", str(path), m, "0.8", "--rb", "(1,1)"]) == 2      # not built: exit 2 with the command


def _collection(tmp_path):
    from test_graded_transform import _graded_collection
    return _graded_collection(tmp_path, seed=5, topics=8, docs=9)


@pytest.mark.parametrize("rb_scale", ["feasible", "common"])
def test_transform_ranks_match_brute_force(tmp_path, rb_scale):
    qrels, runs, q, paths = _collection(tmp_path)
    n = 4
    names = ["nDCG(b=2,gains=(0,1,2))@4", "gR(gains=(0,1,2))@4"]
    refs = {names[0]: naive.GRADED_RB["nDCG(b=2,gains=(0,1,2))"][0], names[1]: naive.GRADED_RB["gR(gains=(0,1,2))"][0]}
    store = tmp_path / "t.h5"
    other = irscale.build_store(tmp_path / "other.h5", ["P@2"])
    with pytest.warns(irscale.IrscaleWarning, match="no scale for") as missing:     # raw only, with the command
        raw = irscale.transform(q, paths, names, other, rb_scale=rb_scale, build=False)
    said = " ".join(str(w.message) for w in missing if "irscale build" in str(w.message))
    assert said and ("--qrels" in said) == (rb_scale == "feasible")
    assert raw["scaled"].isna().all() and raw["raw"].notna().all()
    scores = irscale.transform(q, paths, names, store, rb_scale=rb_scale, build_missing=True, midranks=True)
    checked = 0
    for row in scores.itertuples():
        ranking = runs[row.run][row.topic]
        docs = sorted(ranking.items(), key=lambda ds: (ds[1], ds[0]), reverse=True)[:n]
        levels = [max(r, 0) for r in qrels[row.topic].values()]
        counts = (sum(1 for v in levels if v == 1), sum(1 for v in levels if v >= 2))
        run = tuple(min(max(qrels[row.topic].get(d, 0), 0), 2) for d, _ in docs)
        run = run + (0,) * (n - len(run))
        fn = refs[row.measure]
        scale_counts = tuple(min(c, n) for c in counts) if rb_scale == "feasible" else (n, n)
        feasible, vals, distinct, ranks = naive.feasible_oracle(fn, 3, n, scale_counts)
        value = fn(run, counts)
        assert row.raw == pytest.approx(float(value), rel=1e-12, abs=1e-15)
        i = feasible.index(run)
        assert row.rank == ranks[i] and row.k == len(distinct) and row.n_runs == len(feasible)
        same = [j for j, r in enumerate(ranks) if r < ranks[i]]
        tied = sum(1 for r in ranks if r == ranks[i])
        assert row.midrank == pytest.approx(len(same) + (tied + 1) / 2)
        checked += 1
    assert checked == len(scores) == 2 * 3 * 8


@pytest.mark.slow
def test_rag24_graded_tables_transform_and_service(shared_data, tmp_path):
    """Real graded qrels: per-topic ranks of graded nDCG_trec@5 from tables built for the
    topics' count vectors equal brute force over each topic's feasible runs; the service
    answers the same ranks from values and from runs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient
    from irscale.scales.runs.judging import judge
    from irscale.scales.runs.qrels import read_qrels
    from irscale.scales.runs.run_files import read_run
    from irscale.service import create_app
    rag = shared_data / "rag24"
    name, n = "nDCG_trec(gains=(0,1,2,3))@5", 5
    store = tmp_path / "rag.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        scores = irscale.transform(rag / "qrels.rag24.txt", rag / "run.rag24.gz", name, store,
                                   empty_topics="skip")          # the topics with a count vector, as judge gives
        qrels = read_qrels(rag / "qrels.rag24.txt")
        judged = judge(read_run(rag / "run.rag24.gz", n), qrels, n)
    counts = judged.grade_counts(4)
    grades = np.minimum(judged.rel[:, :n], 3)
    fn = naive.gnDCG_trec((0, 1, 2, 3))
    for i, row in enumerate(scores.itertuples()):
        c = tuple(int(x) for x in counts[i])
        feasible, _, distinct, ranks = naive.feasible_oracle(fn, 4, n, tuple(min(x, n) for x in c))
        assert row.rank == ranks[feasible.index(tuple(int(g) for g in grades[i]))]
        assert row.k == len(distinct)
    client = TestClient(create_app(store))
    listed = client.get("/v1/tables").json()["tables"]
    assert {tuple(t["rb_counts"]) for t in listed} == {tuple(min(x, n) for x in row) for row in counts.tolist()}
    for i in range(len(scores)):
        rb = counts[i].tolist()
        by_run = client.post("/v1/rank", json={"measure": name, "rb": rb, "runs": [grades[i].tolist()]})
        by_value = client.post("/v1/rank", json={"measure": name, "rb": rb, "values": [float(scores.raw[i])]})
        assert by_run.status_code == 200, by_run.text
        assert by_run.json()["rank"] == by_value.json()["rank"] == [int(scores["rank"][i])]
        assert by_run.json()["rb"] == rb
    missing = client.post("/v1/rank", json={"measure": name, "rb": [0, 0, 1], "values": [0.0]})
    assert missing.status_code == 404 and "--rb" in missing.json()["error"]["message"]
    wrong = client.post("/v1/rank", json={"measure": name, "rb": 3, "values": [0.0]})
    assert wrong.status_code == 422
