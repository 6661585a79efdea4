"""The utility family with effort (RBPU, FlatU, ERRU, RBU) as measures with tables over
the truncated run space (rankings of length 0..N): exact values, counts and ranks of
every ranking against a reference written from SPEC_MEASURES section 5 (tests/naive.py),
the same order as the base measure on fixed-length runs, no tie with padded versions,
and transform/service with rankings shorter than N."""
import itertools
import warnings
from fractions import Fraction

import naive
import numpy as np
import pytest

import irscale
from irscale.enumerate.truncated import PAD

CASES = [("RBPU(p=0.8)@6", naive.utility("RBPU", "0.8"), 1),
         ("RBPU(e=0.1,grades=2,p=0.5)@4", naive.utility("RBPU", "0.5", Fraction(1, 10), 2), 2),
         ("FlatU@6", naive.utility("FlatU"), 1),
         ("FlatU(grades=3)@3", naive.utility("FlatU", grades=3), 3),
         ("ERRU@6", naive.utility("ERRU"), 1),
         ("ERRU(grades=2)@4", naive.utility("ERRU", grades=2), 2),
         ("RBU(p=0.8)@6", naive.utility("RBU", "0.8"), 1),
         ("RBU(e=0.3,grades=2,p=0.3)@4", naive.utility("RBU", "0.3", Fraction(3, 10), 2), 2)]


def _rankings(grades, n):
    return [r for m in range(n + 1) for r in itertools.product(range(grades + 1), repeat=m)]


def _padded(rankings, n):
    return np.array([list(r) + [PAD] * (n - len(r)) for r in rankings], dtype=np.int64)


def _unq(values):
    distinct = sorted(set(values))
    index = {v: i + 1 for i, v in enumerate(distinct)}
    return distinct, [index[v] for v in values]


@pytest.mark.parametrize("name,fn,grades", CASES, ids=[c[0] for c in CASES])
def test_tables_over_truncated_rankings_match_the_reference(name, fn, grades):
    m = irscale.parse_measure(name)
    s = irscale.scale(m)
    rankings = _rankings(grades, m.n)
    vals = [fn(r) for r in rankings]
    distinct, ranks = _unq(vals)
    assert s.n_runs == len(rankings) and s.k == len(distinct)
    assert s.fractions == distinct
    assert s.counts.tolist() == np.bincount(np.array(ranks) - 1).tolist()
    assert s.rank_runs(_padded(rankings, m.n)).tolist() == ranks
    assert s.rank([float(v) for v in vals]).tolist() == ranks
    assert s.rank_runs([list(r) for r in rankings[1:4]]).tolist() == ranks[1:4]     # lists without padding
    # a ranking never ties with its padded versions (appending a document costs effort)
    for r in rankings:
        if len(r) < m.n:
            assert fn(r + (0,)) < fn(r)


BASES = [("RBPU(p=0.8)@7", "RBP(p=0.8)@7"), ("RBPU(grades=2,p=0.5)@5", "RBP(gains=(0,1,2),p=0.5)@5"),
         ("FlatU@7", "P@7"), ("FlatU(grades=2)@5", "gP(gains=(0,1,2))@5"),
         ("ERRU@7", "ERR@7"), ("ERRU(grades=2)@5", "ERR(gains=(0,1,2))@5"),
         ("RBU(p=0.8)@7", None), ("RBU(grades=2,p=0.5)@5", None)]


@pytest.mark.parametrize("name,base", BASES, ids=[b[0] for b in BASES])
def test_fixed_length_runs_are_ordered_like_the_base_measure(name, base):
    m = irscale.parse_measure(name)
    runs = np.array(list(itertools.product(range(m.levels), repeat=m.n)))
    utility = irscale.scale(m).rank_runs(runs)
    if base is None:        # RBU's base: cascade RBP (no irscale measure), exact reference
        ref = _unq([naive.cascade_rbp(m.p, m.grades)(tuple(r)) for r in runs])[1]
    else:
        b = irscale.parse_measure(base)
        ref = irscale.scale(b).rank_runs(runs)
    assert _unq(utility.tolist())[1] == _unq(list(ref))[1]


@pytest.mark.parametrize("name,fn,grades", [pytest.param("RBPU(p=0.99)@13", naive.utility("RBPU", "0.99"), 1,
                                                          marks=pytest.mark.slow),
                                             ("RBU(e=0.07,grades=3,p=0.99)@6",
                                              naive.utility("RBU", "0.99", Fraction(7, 100), 3), 3)])
def test_keys_beyond_62_bits_are_exact_multi_limb_keys(name, fn, grades):
    m = irscale.parse_measure(name)
    assert m.layout == "formal"          # K / D with K or D beyond 62 bits
    s = irscale.scale(m)
    rankings = _rankings(grades, m.n)
    vals = [fn(r) for r in rankings]
    distinct, ranks = _unq(vals)
    assert s.k == len(distinct) and s.n_runs == len(rankings)
    assert np.allclose(s.values, [float(v) for v in distinct], rtol=1e-14, atol=1e-16)
    assert s.counts.tolist() == np.bincount(np.array(ranks) - 1).tolist()
    assert s.rank_runs(_padded(rankings, m.n)).tolist() == ranks


def test_limits_and_errors():
    with pytest.raises(irscale.MeasureError, match="more than irscale scores"):
        irscale.scale("RBPU(p=0.95)@30")
    with pytest.raises(irscale.RecallBaseError):
        irscale.scale("FlatU@4", 3)
    s = irscale.scale("FlatU@4")
    for bad in ([[0, PAD, 1, PAD]], [[0, 2]], [[0, 0, 0, 0, 0]], [["x"]]):
        with pytest.raises(irscale.RunError):
            s.rank_runs(bad)


def test_transform_and_service_with_short_rankings(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient
    from irscale.service import create_app
    qrels = {f"q{t}": {f"d{d}": (d + t) % 3 for d in range(8)} for t in range(4)}
    runs = {"a": {t: {f"d{d}": 10.0 - d for d in range(i + 1)} for i, t in enumerate(qrels)},  # 1..4 documents
            "b": {t: {f"d{d}": float(d) for d in range(8)} for t in qrels}}
    q = tmp_path / "qrels"
    q.write_text("".join(f"{t} 0 {d} {r}\n" for t, js in qrels.items() for d, r in js.items()))
    paths = []
    for name, ranking in runs.items():
        p = tmp_path / name
        p.write_text("".join(f"{t} Q0 {d} 0 {sc} {name}\n" for t, ds in ranking.items() for d, sc in ds.items()))
        paths.append(p)
    n, name = 5, "RBPU(grades=2,p=0.8)@5"
    store = tmp_path / "u.h5"
    scores = irscale.transform(q, paths, [name, "FlatU@5"], store, build_missing=True)
    fns = {name: naive.utility("RBPU", "0.8", grades=2), "FlatU@5": naive.utility("FlatU")}
    for row in scores.itertuples():
        docs = sorted(runs[row.run][row.topic].items(), key=lambda ds: (ds[1], ds[0]), reverse=True)[:n]
        grades = tuple(min(qrels[row.topic][d], 2 if row.measure == name else 1) for d, _ in docs)
        fn = fns[row.measure]
        levels = 3 if row.measure == name else 2
        distinct, ranks = _unq([fn(r) for r in _rankings(levels - 1, n)])
        assert row.raw == pytest.approx(float(fn(grades)), abs=1e-15)
        assert row.rank == distinct.index(fn(grades)) + 1 and row.k == len(distinct)
    client = TestClient(create_app(store))
    answer = client.post("/v1/rank", json={"measure": name, "runs": [[2], [], [0, 1, 2, 2, 1]]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["rank"] == irscale.scale(name).rank_runs([[2], [], [0, 1, 2, 2, 1]]).tolist()
    bad = client.post("/v1/rank", json={"measure": name, "runs": [[3]]})
    assert bad.status_code == 422 and "outside" in bad.json()["error"]["message"]


def _unq_mp(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    distinct, ranks = [], [0] * len(values)
    for i in order:
        if not distinct or not naive._equal(distinct[-1], values[i]):
            distinct.append(values[i])
        ranks[i] = len(distinct)
    return distinct, ranks


FORMAL = [("DCGU@6", None, naive.dcgu(), 1), ("DCGU(e=0.1,grades=2)@4", None, naive.dcgu(Fraction(1, 10), 2), 2),
          ("OIE@5", (2,), naive.oie(), 1), ("OIE(grades=2)@4", (1, 2), naive.oie(), 2),
          ("OIE(D=50,beta=0.9,grades=2)@4", (3, 1), naive.oie(50, Fraction(9, 10)), 2)]


FORMAL += [(f"OIE(D=30)@4 rb={c}", c, naive.oie(30), 1) for c in [(1,), (2,), (3,), (4,), (9,)]]
FORMAL += [(f"OIE(D=40,grades=2)@3 rb={c}", c, naive.oie(40), 2)
           for c in itertools.product(range(4), repeat=2) if sum(c) >= 1]


@pytest.mark.parametrize("name,rb,fn,grades", FORMAL, ids=[c[0] for c in FORMAL])
def test_formal_tables_match_the_reference(name, rb, fn, grades):
    m = irscale.parse_measure(name.split(" rb=")[0])
    s = irscale.scale(m, rb)
    rankings = [r for r in _rankings(grades, m.n)
                if rb is None or all(r.count(g) <= rb[g - 1] for g in range(1, grades + 1))]
    vals = [fn(r, rb) for r in rankings]
    distinct, ranks = _unq_mp(vals)
    assert s.n_runs == len(rankings) and s.k == len(distinct)
    assert np.allclose(s.values, [float(v) for v in distinct], rtol=1e-13, atol=1e-15)
    assert s.counts.tolist() == np.bincount(np.array(ranks) - 1).tolist()
    assert s.rank_runs(_padded(rankings, m.n)).tolist() == ranks
    assert s.rank([float(v) for v in vals]).tolist() == ranks
    assert s.certificate.method.startswith("formal-log")


def test_oie_spec_test_values_and_dcgu_base_order():
    m = irscale.parse_measure("OIE@20")
    expected = {(): -0.495174, (1,): 9.408313, (0, 1): 8.219992, (1, 0): 8.947796, (0,): -0.990349,
                (0,) * 19 + (1,): -1.028738}
    for ranking, value in expected.items():
        assert float(m.exact_value(ranking, (1,))) * 20000 == pytest.approx(value, abs=5e-7)
        keys = m.formal_many(np.array([list(ranking) + [PAD] * (20 - len(ranking))]), (1,))
        assert float((keys @ m.units_float((1,)))[0]) * 20000 == pytest.approx(value, abs=5e-7)
    # DCGU orders fixed-length runs like DCG with discount 1/log2(k + 1)
    d = irscale.parse_measure("DCGU@7")
    runs = np.array(list(itertools.product((0, 1), repeat=7)))
    base = [naive._dcg_trec(tuple(r)) for r in runs]
    assert _unq(irscale.scale(d).rank_runs(runs).tolist())[1] == _unq_mp(base)[1]


def test_oie_store_and_transform(tmp_path):
    qrels = {f"q{t}": {f"d{d}": (1 if d < t + 1 else 0) for d in range(6)} for t in range(3)}
    q = tmp_path / "qrels"
    q.write_text("".join(f"{t} 0 {d} {r}\n" for t, js in qrels.items() for d, r in js.items()))
    run = tmp_path / "run"
    run.write_text("".join(f"{t} Q0 d{d} 0 {10 - d} r\n" for i, t in enumerate(qrels) for d in range(i + 2)))
    name, n = "OIE(D=100)@4", 4
    scores = irscale.transform(q, [run], name, tmp_path / "o.h5", build_missing=True)
    store = irscale.open_store(tmp_path / "o.h5")
    assert sorted(t["rb_counts"] for t in store.tables()) == [(1,), (2,), (3,)]
    fn = naive.oie(100)
    for i, row in enumerate(scores.itertuples()):
        c = (i + 1,)
        ranking = tuple(qrels[row.topic][f"d{d}"] for d in range(min(i + 2, n)))
        assert row.raw == pytest.approx(float(fn(ranking, c)), rel=1e-12)
        rankings = [r for r in _rankings(1, n) if r.count(1) <= c[0]]
        distinct, ranks = _unq_mp([fn(r, c) for r in rankings])
        assert row.rank == ranks[rankings.index(ranking)] and row.k == len(distinct)
