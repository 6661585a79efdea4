"""Twist and the CRP indicators as measures with per-topic tables: exact values, counts
and ranks of every feasible run against a reference written from SPEC_MEASURES sections
3 and 4 (tests/naive.py), the spec's test vectors through the measures, the store, the
CLI, transform (undefined topics empty) and the service."""
import itertools
import warnings
from fractions import Fraction

import naive
import numpy as np
import pytest

import irscale


def _feasible(levels, n, c):
    return [r for r in itertools.product(range(levels), repeat=n)
            if all(r.count(g) <= c[g - 1] for g in range(1, levels))]


def _oracle(fn, levels, n, c):
    runs = _feasible(levels, n, c)
    vals = [fn(r, c) for r in runs]
    key = [(-1, 0) if v is None else (0, v) for v in vals]        # None = minus infinity
    distinct = sorted(set(key))
    index = {v: i + 1 for i, v in enumerate(distinct)}
    return runs, vals, [None if d[0] < 0 else d[1] for d in distinct], [index[k] for k in key]


def _check(scale, fn, levels, n, c):
    runs, vals, distinct, ranks = _oracle(fn, levels, n, c)
    assert scale.k == len(distinct) and scale.n_runs == len(runs)
    assert [None if isinstance(v, float) else v for v in scale.fractions] == distinct
    assert scale.counts.tolist() == np.bincount(np.array(ranks) - 1).tolist()
    assert scale.rank_runs(np.array(runs)).tolist() == ranks
    floats = [-np.inf if v is None else float(v) for v in vals]
    assert scale.rank(floats).tolist() == ranks
    assert np.allclose(scale.midranks_of_ranks(ranks), [sum(1 for r in ranks if r < q) + (ranks.count(q) + 1) / 2
                                                        for q in ranks])


def _defined(grades, n):
    """Every per-grade count vector with 1 <= RB <= N/2 (where Twist and CRP are defined)."""
    return [c for c in itertools.product(range(n // 2 + 1), repeat=grades) if 1 <= sum(c) <= n // 2]


CASES = [("Twist@8", naive.twist("impl"), 2, _defined(1, 8)),
         ("Twist(crossing=literal)@8", naive.twist("literal"), 2, _defined(1, 8)),
         ("Twist(grades=2)@6", naive.twist("impl"), 3, _defined(2, 6)),
         ("Twist(crossing=literal,grades=2)@6", naive.twist("literal"), 3, _defined(2, 6)),
         ("Twist(crossing=literal,grades=3)@6", naive.twist("literal"), 4, [(1, 1, 1), (0, 2, 1)]),
         ("CRP(ind=rho,grades=2)@6", naive.crp_indicator("rho"), 3, _defined(2, 6)),
         ("CRP(ind=b_ratio,grades=2)@6", naive.crp_indicator("b_ratio"), 3, _defined(2, 6)),
         ("CRP(ind=min,grades=2)@6", naive.crp_indicator("min"), 3, _defined(2, 6)),
         ("CRP(ind=n)@8", naive.crp_indicator("n"), 2, [c for c in _defined(1, 8) if 2 * c[0] < 8])]


@pytest.mark.parametrize("name,fn,levels,vectors", CASES, ids=[c[0] for c in CASES])
def test_tables_match_the_spec_reference(name, fn, levels, vectors):
    m = irscale.parse_measure(name)
    for c in vectors:
        _check(irscale.scale(m, c), fn, levels, m.n, c)


@pytest.mark.slow
def test_spec_test_vectors_through_the_measure():
    s = irscale.scale("Twist(grades=3)@15", (3, 2, 2))
    runs = [[0] * 8 + [1, 1, 1, 2, 2, 3, 3], [3, 3, 2, 0, 1, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0],
            [3, 0, 1, 0, 2, 0, 0, 0, 2, 1, 0, 0, 3, 1, 0]]
    expected = [Fraction(7, 26), Fraction(46, 107), Fraction(5611, 10680)]
    assert [s.fractions[r - 1] for r in s.rank_runs(runs)] == expected
    from math import factorial
    assert s.n_runs == sum(factorial(15) // (factorial(15 - a - b - d) * factorial(a) * factorial(b) * factorial(d))
                           for a in range(4) for b in range(3) for d in range(3))
    run = [3, 3, 1, 0, 2, 1, 0, 0, 2, 1, 2, 0, 3, 1] + [0] * 6
    get = {ind: irscale.parse_measure(f"CRP(ind={ind},grades=3)@20").exact_value(run, (4, 3, 3))
           for ind in ("rho", "b_ratio", "n")}
    assert get == {"rho": Fraction(5, 7), "b_ratio": Fraction(2, 9), "n": Fraction(10, 11)}
    never = [3, 3, 2, 0, 1, 2, 0, 0, 0, 1, 3] + [0] * 9
    assert irscale.parse_measure("CRP(ind=rho,grades=3)@20").exact_value(never, (4, 3, 3)) == 0
    assert irscale.parse_measure("CRP(ind=n,grades=3)@20").exact_value(never, (4, 3, 3)) == Fraction(4, 3)


def test_undefined_topics_and_bad_names():
    with pytest.raises(irscale.RecallBaseError, match="N >= 2 RB"):
        irscale.scale("Twist@5", 3)
    with pytest.raises(irscale.RecallBaseError):
        irscale.scale("Twist(grades=2)@8", 3)                      # needs (c_1, c_2)
    for bad in ["Twist(crossing=other)@8", "Twist(crossing=0.5)@8", "CRP@8", "CRP(ind=rho,grades=0)@8"]:
        with pytest.raises(irscale.MeasureError):
            irscale.parse_measure(bad)
    assert str(irscale.parse_measure("Twist(crossing=impl,grades=1)@8")) == "Twist@8"
    s = irscale.scale("Twist@6", 2)
    with pytest.raises(irscale.RunError, match="cannot occur"):
        s.rank_runs([[1, 1, 1, 0, 0, 0]])


def test_store_cli_transform_service(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient
    from test_graded_transform import _graded_collection

    from irscale.cli import main
    from irscale.service import create_app
    path = tmp_path / "tw.h5"
    assert main(["build", "-m", "Twist(grades=2)@6", "--rb", "(1,1),(2,1)", "--out", str(path), "-q"]) == 0
    assert main(["build", "-m", "Twist@6", "--out", str(path), "-q"]) == 2          # needs --rb or --qrels
    assert main(["build", "-m", "Twist@4", "--rb", "3", "--out", str(path), "-q"]) == 2  # N < 2 RB
    store = irscale.open_store(path)
    assert [t["name"] for t in store.tables()] == ["Twist(grades=2)@6 rb=(1,1)", "Twist(grades=2)@6 rb=(2,1)"]
    assert store.verify()
    _check(store.scale("Twist(grades=2)@6", (2, 1)), naive.twist(), 3, 6, (2, 1))
    value = repr(float(store.scale("Twist(grades=2)@6", (2, 1)).values[3]))
    assert main(["lookup", str(path), "Twist(grades=2)@6", value, "--rb", "(2,1)"]) == 0
    assert main(["lookup", str(path), "Twist(grades=2)@6", "0.123456", "--rb", "(2,1)"]) == 2
    client = TestClient(create_app(path))
    runs = [[2, 1, 0, 0, 0, 0], [0, 0, 0, 0, 1, 2]]
    answer = client.post("/v1/rank", json={"measure": "Twist(grades=2)@6", "rb": [1, 1], "runs": runs})
    assert answer.status_code == 200, answer.text
    assert answer.json()["rank"] == irscale.scale("Twist(grades=2)@6", (1, 1)).rank_runs(runs).tolist()
    # transform: graded qrels with few relevant documents, N = 8: topics with RB > 4 stay empty
    qrels, runs_, q, paths = _graded_collection(tmp_path, seed=3, topics=6, docs=6)
    name, n = "Twist(grades=2)@8", 8
    with pytest.warns(irscale.IrscaleWarning, match="undefined"):
        scores = irscale.transform(q, paths, name, tmp_path / "t.h5", build_missing=True)
    fn = naive.twist()
    defined = 0
    for row in scores.itertuples():
        levels = [min(max(v, 0), 2) for v in qrels[row.topic].values()]
        c = (levels.count(1), levels.count(2))
        if 2 * sum(c) > n:
            assert np.isnan(row.raw) and row.rank is pd_na()
            continue
        docs = sorted(runs_[row.run][row.topic].items(), key=lambda ds: (ds[1], ds[0]), reverse=True)[:n]
        run = tuple(min(max(qrels[row.topic].get(d, 0), 0), 2) for d, _ in docs)
        run = run + (0,) * (n - len(run))
        feasible, vals, distinct, ranks = _oracle(fn, 3, n, c)
        assert row.raw == pytest.approx(float(fn(run, c)), abs=1e-15)
        assert row.rank == ranks[feasible.index(run)] and row.k == len(distinct)
        defined += 1
    assert defined > 0
    with pytest.raises(irscale.IrscaleError, match="no common scale"):
        irscale.transform(q, paths, name, tmp_path / "t.h5", rb_scale="common")


def pd_na():
    import pandas as pd
    return pd.NA


def test_undefined_topics_survive_the_scores_file_and_analysis(tmp_path):
    """Empty Twist scores (N < 2 RB) are read back as NaN and left out of the analysis
    with a warning; the measure's defined topics are analysed."""
    from test_graded_transform import _graded_collection

    from irscale.cli import main
    from irscale.scales.analysis.analyze import analyze
    qrels, runs_, q, paths = _graded_collection(tmp_path, seed=3, topics=6, docs=6)
    out = tmp_path / "s.csv"
    with pytest.warns(irscale.IrscaleWarning):
        scores = irscale.transform(q, paths, ["Twist(grades=2)@8", "gP(gains=(0,1,2))@8"], tmp_path / "t.h5",
                                   build_missing=True)
    irscale.write_scores(scores, out)
    back = irscale.read_scores(out)
    assert back["raw"].dtype == float and back["raw"].isna().sum() == scores["raw"].isna().sum() > 0
    defined = scores.loc[scores["raw"].notna() & (scores["measure"] == "Twist(grades=2)@8"), "topic"].nunique()
    with pytest.warns(irscale.IrscaleWarning, match="undefined on"):
        result = analyze(back, tests=["sign"], transforms="none")
    measures = set(result.tau_scaled["measure"])
    assert "gP(gains=(0,1,2))@8" in measures
    assert ("Twist(grades=2)@8" in measures) == (defined >= 2)
    assert main(["analyze", str(out), "--out", str(tmp_path / "an"), "--tests", "sign", "-q"]) == 0

