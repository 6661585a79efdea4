"""Graded relevance (REL = {0..G}, gains as a measure parameter): names, run spaces, both
enumerators and every lookup path against exact brute force over {0..G}^N."""
import mpmath
import naive
import numpy as np
import pytest

import irscale
from irscale import parse_measure
from irscale.scales.tables.build import build_tables


def _check(name, n, table):
    fn, levels = naive.GRADED[name]
    runs, vals, distinct, ranks = naive.graded_oracle(fn, levels, n)
    s = table.scale()
    assert s.measure.levels == levels
    assert len(s) == len(distinct), f"{s.measure}: {len(s)} distinct values, oracle {len(distinct)}"
    assert s.rank_runs(np.array(runs, dtype=np.uint8)).tolist() == ranks
    assert s.n_runs == levels ** n
    exact = np.array([float(d) if hasattr(d, "denominator") else float(mpmath.mpf(d)) for d in distinct])
    assert np.all(np.abs(s.values - exact) <= s.certificate.error_bound + 1e-300)
    floats = np.array([float(v) if hasattr(v, "denominator") else float(mpmath.mpf(v)) for v in vals])
    by_value = s.rank(floats, errors="zero")
    ok = by_value != 0
    assert ok.mean() > 0.9 and (by_value[ok] == np.array(ranks)[ok]).all()


@pytest.mark.parametrize("name", sorted(naive.GRADED))
def test_graded_against_exact_oracle(name):
    levels = naive.GRADED[name][1]
    for n in range(1, 8 if levels == 3 else 6):
        m = parse_measure(f"{name}@{n}")
        for method in ("generic", "split"):
            [table] = list(build_tables([m], method=method))
            _check(name, n, table)


def test_names_round_trip_and_binary_default():
    for text, canonical in [("DCG(gains=(0,1,3),b=2)@10", "DCG(b=2,gains=(0,1,3))@10"),
                            ("RBP(p=0.80,gains=(0,1,2))@5", "RBP(gains=(0,1,2),p=0.8)@5"),
                            ("gP(gains=(0,1))@5", "gP@5"), ("DCG(b=2,gains=(0,1))@4", "DCG(b=2)@4")]:
        m = parse_measure(text)
        assert str(m) == canonical and parse_measure(str(m)) == m
    assert parse_measure("gP@7").levels == 2
    assert len(irscale.scale("gP@7")) == len(irscale.scale("P@7")) == 8


@pytest.mark.parametrize("bad", ["DCG(b=2,gains=(1,2))@5", "DCG(b=2,gains=(0,2,1))@5", "DCG(b=2,gains=(0,0))@5",
                                 "DCG(b=2,gains=3)@5", "DCG(b=(0,1))@5", "gP(gains=(0,1.5))@5",
                                 "gP(gains=(0,1,2,3,4,5,6,7,8,9,10))@5", "RR(rel=2)@5", "RR(gains=(0,1,2),rel=0)@5",
                                 "RR(gains=(0,1,2),rel=(1,2))@5"])
def test_bad_gains(bad):
    with pytest.raises(irscale.MeasureError):
        parse_measure(bad)


def test_graded_rbp_half_is_not_lexicographic():
    """Binary RBP(p<=1/2) tables are implicit identities; graded ones must not be."""
    s = irscale.scale("RBP(gains=(0,1,2),p=0.5)@4")
    assert not s.table.implicit
    r1, r2 = s.rank_runs([[1, 0, 0, 0], [0, 2, 2, 2]])
    assert r2 > r1                       # 1 < 2 * (1/2 + 1/4 + 1/8)


def test_graded_runs_validated_and_stored(tmp_path):
    store = irscale.build_store(tmp_path / "g.h5", "DCG(b=2,gains=(0,1,3))@9,gP(gains=(0,1,2))@9")
    s = store.scale("DCG(b=2,gains=(0,1,3))@9")
    ref = irscale.scale("DCG(b=2,gains=(0,1,3))@9")
    runs = np.random.default_rng(1).integers(0, 3, size=(500, 9))
    assert (s.rank_runs(runs) == ref.rank_runs(runs)).all()
    with pytest.raises(irscale.RunError):
        s.rank_runs([[3, 0, 0, 0, 0, 0, 0, 0, 0]])
    meta = {t["measure"]: t for t in store.tables()}
    assert meta["DCG(b=2,gains=(0,1,3))@9"].rel == (0, 1, 2)
    assert meta["DCG(b=2,gains=(0,1,3))@9"]["n_runs"] == 3 ** 9


def test_err_balancing_index_and_axiom():
    """SPEC_MEASURES section 6: ERR has balancing index 1; it satisfies the axiom."""
    from irscale.scales.analysis.axioms import balancing_index, check_axiom
    for n in (5, 10, 20):
        assert balancing_index(parse_measure(f"ERR@{n}")) == 1
    assert check_axiom(parse_measure("ERR@10")).n_violations == 0
    assert check_axiom(parse_measure("ERR(gains=(0,1,2))@6")).n_violations == 0


@pytest.mark.parametrize("name,gains,n", [("ERR(gains=(0,1,5))@9", (0, 1, 5), 9),       # key > 2^53, 1 word
                                           ("ERR(gains=(0,1,9))@8", (0, 1, 9), 8),       # key > 2^64, 2 words
                                           ("ERR@17", (0, 1), 17)])
def test_err_split_form_beyond_float_exact_keys(name, gains, n):
    """ERR through the prefix/suffix split with keys beyond 2^53 (float raws, exact
    multi-word keys): values, counts and ranks equal exact brute force."""
    m = parse_measure(name)
    spec = m.key_spec()
    [t] = build_tables([m], method="split")
    s = t.scale()
    fn = naive.gERR(gains)
    if len(gains) ** n > 20000:      # large space: check a sample of runs and the totals
        rng = np.random.default_rng(1)
        runs = rng.integers(0, len(gains), size=(3000, n))
        assert s.n_runs == len(gains) ** n and int(s.counts.sum()) == len(gains) ** n
        vals = [fn(tuple(int(x) for x in r)) for r in runs]
        ranks = s.rank_runs(runs)
        order = np.argsort(ranks, kind="stable")
        for a, b in zip(order, order[1:]):      # ranks order the sampled runs exactly like their values
            assert (ranks[a] < ranks[b]) == (vals[a] < vals[b]) and (ranks[a] == ranks[b]) == (vals[a] == vals[b])
        return
    assert spec.max_key >= 2 ** 53 and not s._sf.exact
    runs, vals, distinct, ranks = naive.graded_oracle(fn, len(gains), n)
    assert s.k == len(distinct) and s.n_runs == len(runs)
    assert s.counts.tolist() == np.bincount(np.array(ranks) - 1).tolist()
    assert np.allclose(s.values, [float(d) for d in distinct], rtol=1e-15, atol=0)
    assert s.rank_runs(np.array(runs)).tolist() == ranks
    by_value = s.rank([float(v) for v in vals], errors="zero")      # values closer than float error: refused
    assert ((by_value == np.array(ranks)) | (by_value == 0)).all() and (by_value > 0).mean() > 0.5


def test_err_limits_and_parallel_build(tmp_path):
    with pytest.raises(irscale.MeasureError, match="top gains below 32"):
        parse_measure("ERR(gains=(0,1,40))@4").key_spec()
    with pytest.raises(irscale.MeasureError, match="split"):
        list(build_tables([parse_measure("ERR(gains=(0,1,9))@8")], method="generic"))
    store = irscale.build_store(tmp_path / "e.h5", "ERR(gains=(0,1,2))@9", n_jobs=2)
    ref = irscale.scale("ERR(gains=(0,1,2))@9")
    assert store.scale("ERR(gains=(0,1,2))@9").k == ref.k
