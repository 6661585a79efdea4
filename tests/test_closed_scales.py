"""Closed-form scales (scales/tables/closed.py, scales/measures/closed_forms.py): P, R, F1,
RR and Rprec at any N, against their tables and rank oracles at small N, the oracles at
N = 40 and a plain-Python reference of K, run counts and ranks (exact fractions) at any N."""
import itertools
from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale.errors import MeasureError, OracleListError, RecallBaseError
from irscale.scales.measures.user_names import parse_user_measures
from irscale.scales.tables.closed import closed_scale
from irscale.scales.tables.layouts import scale_kind


def _reference(name: str, n: int, rb: int | None, levels: int = 2, rel: int = 1):
    """(distinct values as fractions, runs of each) by the definitions, in Python integers."""
    if name == "P":
        return [Fraction(j, n) for j in range(n + 1)], [comb(n, j) for j in range(n + 1)]
    if name in ("R", "F1"):
        top = min(n, rb)
        unit = Fraction(1, rb) if name == "R" else Fraction(2, n + rb)
        return [j * unit for j in range(top + 1)], [comb(n, j) for j in range(top + 1)]
    if name == "Rprec":
        m = min(rb, n)
        runs = [comb(m, j) * sum(comb(n - m, i) for i in range(min(n - m, rb - j) + 1)) for j in range(m + 1)]
        return [Fraction(j, rb) for j in range(m + 1)], runs
    # RR: none relevant (rel^n runs), then first relevant at rank k = n..1 (value 1/k)
    values = [Fraction(0)] + [Fraction(1, k) for k in range(n, 0, -1)]
    runs = [rel ** n] + [rel ** (k - 1) * (levels - rel) * levels ** (n - k) for k in range(n, 0, -1)]
    return values, runs


def _brute(measure, rb, levels=2):
    """Every run of the (feasible) space with its exact value."""
    runs = np.array(list(itertools.product(range(levels), repeat=measure.n)), dtype=np.uint8)
    if rb is not None:
        cap = rb[0] if isinstance(rb, tuple) else rb
        runs = runs[(runs > 0).sum(axis=1) <= cap]
    return runs, [measure.exact_value(r, rb) for r in runs]


CASES = [("P@{n}", None), ("R@{n}", "rb"), ("F1@{n}", "rb"), ("Rprec@{n}", "rb"), ("RR@{n}", None),
         ("RR(gains=(0,1,2),rel=2)@{n}", None), ("RR(gains=(0,1,2,3))@{n}", None)]


@pytest.mark.parametrize("template,with_rb", CASES)
@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_equal_to_brute_force(template, with_rb, n):
    m = irscale.parse_measure(template.format(n=n))
    for rb in ([None] if with_rb is None else [1, 2, n, n + 3]):
        s = closed_scale(m, rb)
        runs, vals = _brute(m, s.rb, m.levels)
        distinct = sorted(set(vals))
        assert s.k == len(distinct) and s.n_runs == len(runs)
        assert s.fractions == distinct
        assert s.counts.tolist() == [vals.count(v) for v in distinct]
        want = [distinct.index(v) + 1 for v in vals]
        assert s.rank_runs(runs).tolist() == want
        assert s.rank([float(v) for v in vals]).tolist() == want
        ids = m.ids_of_runs(runs)
        assert s.rank_ids(ids).tolist() == want
        assert s.representatives.tolist() == [int(ids[vals.index(v)]) for v in distinct]   # runs come in id order


@pytest.mark.parametrize("template,with_rb", CASES[:5])
@pytest.mark.parametrize("n", [12, 20])
def test_equal_to_tables(template, with_rb, n):
    m = irscale.parse_measure(template.format(n=n))
    for rb in ([None] if with_rb is None else [1, 3, n - 1, n, n + 5]):
        t, c = irscale.scale(m, rb=rb), closed_scale(m, rb)
        assert type(t).__name__ != "ClosedScale"
        assert (c.k, c.n_runs) == (t.k, t.n_runs)
        assert np.array_equal(c.values, t.values)
        assert np.array_equal(c.counts, t.counts)
        assert np.array_equal(c.representatives, t.representatives)
        assert np.array_equal(c.midranks, t.midranks)
        rng = np.random.default_rng(n)
        runs = rng.integers(0, 2, size=(2000, n), dtype=np.uint8)
        if rb is not None:
            runs = runs[(runs > 0).sum(axis=1) <= rb]
        assert np.array_equal(c.rank_runs(runs), t.rank_runs(runs))


@pytest.mark.parametrize("name", ["P@40", "R@40", "F1@40", "RR@40"])
def test_equal_to_the_oracles_at_40(name):
    m = irscale.parse_measure(name)
    assert m.layout == "oracle"
    for rb in ([None] if not m.rb_dependent else [1, 7, 40, 45]):
        o, c = irscale.scale(m, rb=rb), closed_scale(m, rb)
        assert type(o).__name__ == "OracleScale"
        assert (c.k, c.n_runs) == (o.k, o.n_runs)
        assert np.array_equal(c.values, o.values)
        runs = np.random.default_rng(40).integers(0, 2, size=(3000, 40), dtype=np.uint8)
        if rb is not None:
            runs = runs[(runs > 0).sum(axis=1) <= rb]
        assert np.array_equal(c.rank_runs(runs), o.rank_runs(runs))
        ranks = np.arange(1, c.k + 1)
        assert np.array_equal(c.midranks_of_ranks(ranks), o.midranks_of_ranks(ranks))


@settings(max_examples=30, deadline=None)
@given(family=st.sampled_from(["P", "R", "F1", "Rprec", "RR"]), n=st.integers(41, 3000),
       rb=st.integers(1, 4000), data=st.data())
def test_any_n_against_the_reference(family, n, rb, data):
    """K, run counts, values and ranks of random runs against the plain-Python reference."""
    m = irscale.parse_measure(f"{family}@{n}")
    assert m.layout == "closed" and m.has_scales
    rb = rb if m.rb_dependent else None
    s = irscale.scale(m, rb=rb)
    values, runs = _reference(family, n, rb)
    assert s.k == len(values) and s.n_runs == sum(runs)
    i = data.draw(st.integers(0, s.k - 1))
    assert s.fractions[i] == values[i] and s._runs[i] == runs[i]
    assert s.values_of_ranks([i + 1])[0] == float(values[i])
    assert s.rank([float(values[i])])[0] == i + 1
    assert s.scaled([i + 1])[0] == (i / (s.k - 1) if s.k > 1 else 0.0)
    # a run with the value's count: relevant documents where the definition counts them
    run = np.zeros((1, n), np.uint8)
    if family == "RR":
        if i:
            run[0, n - i] = 1
    elif family == "Rprec":
        run[0, :i] = 1
    else:
        run[0, n - i:] = 1
    assert s.rank_runs(run)[0] == i + 1
    assert m.exact_value(run[0], s.rb) == values[i]


def test_trec_eval_names_get_closed_forms_at_depth_1000():
    for name, canonical in [("P_1000", "P@1000"), ("recall_1000", "R@1000")]:
        [m] = parse_user_measures([name], "ir_measures", top_level=1)
        assert str(m) == canonical and m.layout == "closed" and scale_kind(m) == "exact: closed form"
    s = irscale.scale("RR@1000")
    assert s.k == 1001 and s.rank([1 / 3])[0] == 999
    assert s.lookup([0.3333], decimals=4).ranks[0] == 999          # trec_eval's 4 decimals


def test_limits_say_what_is_missing():
    big = irscale.scale("P@5000")
    assert big.k == 5001 and big.rank([0.5])[0] == 2501
    with pytest.raises(OracleListError, match="64-bit"):
        _ = big.counts
    with pytest.raises(OracleListError, match="float64"):
        _ = big.midranks
    assert irscale.scale("P@1000").midranks[0] == 1.0                # 2^1000 runs: mid-ranks still fit
    with pytest.raises(RecallBaseError):
        irscale.scale("R@1000", rb=3).rank_runs(np.ones((1, 1000), np.uint8))   # 1000 relevant > RB = 3
    with pytest.raises(MeasureError, match="closed form"):
        irscale.build_store("/nonexistent/x.h5", "P@1000")
    reason = irscale.parse_measure("AP@1000").scales_reason()
    assert reason.startswith("no exact or bounded scale exists for AP at N > 32")
