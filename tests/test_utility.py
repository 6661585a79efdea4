"""Truncated rankings, effort-aware utilities and OIE (irscale.scales.measures.formulas.utilities) against
SPEC_MEASURES section 5.

Base measures are written here from their definitions (SPEC_MEASURES section 2, exact
Fractions; DCG in 50-digit mpmath with values within 1e-40 counted equal, as tests/naive.py
does). Rankings come from itertools, r_1 first.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import naive
import numpy as np
import pytest

from irscale.enumerate.runspace import ids_of_runs
from irscale.errors import RunError
from irscale.scales.measures.formulas import utilities as U
from irscale.scales.measures.formulas.relative_position import InfeasibleRunError

P = Fraction(4, 5)
UTILS = {  # name -> exact scalar taking (ranking, levels, e)
    "RBPU": lambda r, lv, e=U.EFFORT: U.rbpu(r, P, e, lv),
    "DCGU": lambda r, lv, e=U.EFFORT: U.dcgu(r, e, lv),
    "FlatU": lambda r, lv, e=U.EFFORT: U.flatu(r, e, lv),
    "ERRU": lambda r, lv, e=U.EFFORT: U.erru(r, e, lv),
    "RBU": lambda r, lv, e=U.EFFORT: U.rbu(r, P, e, lv),
}
MANY = {
    "RBPU": lambda a, lv: U.rbpu_many(a, P, levels=lv),
    "DCGU": lambda a, lv: U.dcgu_many(a, levels=lv),
    "FlatU": lambda a, lv: U.flatu_many(a, levels=lv),
    "ERRU": lambda a, lv: U.erru_many(a, levels=lv),
    "RBU": lambda a, lv: U.rbu_many(a, P, levels=lv),
}


# -- base measures from their definitions -------------------------------------------------------
def _rbp(run, lv, p=P):
    return (1 - p) * sum(p ** (k - 1) * Fraction(g, lv - 1) for k, g in enumerate(run, start=1))


def _gp(run, lv):
    return Fraction(sum(run), len(run) * (lv - 1))


def _err_r(g, lv):
    return Fraction(2 ** g - 1, 2 ** (lv - 1))


def _err(run, lv):
    total, stay = Fraction(0), Fraction(1)
    for k, g in enumerate(run, start=1):
        total += stay * _err_r(g, lv) / k
        stay *= 1 - _err_r(g, lv)
    return total


def _cascade_rbp(run, lv, p=P):
    total, stay = Fraction(0), Fraction(1)
    for k, g in enumerate(run, start=1):
        total += (1 - p) * p ** (k - 1) * stay * _err_r(g, lv)
        stay *= 1 - _err_r(g, lv)
    return total


def _dcg(run, lv):
    with mpmath.workdps(50):
        return mpmath.fsum(g / mpmath.log(k + 1, 2) for k, g in enumerate(run, start=1))


BASES = {"RBPU": _rbp, "DCGU": _dcg, "FlatU": _gp, "ERRU": _err, "RBU": _cascade_rbp}


# -- OIE ----------------------------------------------------------------------------------------
OIE_VECTORS = [((), -0.495174), ((1,), 9.408313), ((0, 1), 8.219992), ((1, 0), 8.947796),
               ((0,), -0.990349), ((0,) * 19 + (1,), -1.028738)]


@pytest.mark.parametrize("ranking,value", OIE_VECTORS)
def test_oie_spec_values(ranking, value):
    exact = U.oie_d(ranking, (1,))
    assert round(float(exact), 6) == value
    assert abs(U.value_of_prime_key(U.oie_key(ranking, (1,))) - exact) < mpmath.mpf(10) ** -40
    runs = np.full((1, 20), naive.PAD)
    runs[0, :len(ranking)] = ranking
    assert U.oie_d_many(runs, (1,))[0] == pytest.approx(float(exact), rel=1e-13)
    assert float(U.oie(ranking, (1,))) == pytest.approx(float(exact) / 20000, rel=1e-15)


def test_oie_key_decides_ties():
    """Equal prime-log keys <=> equal 50-digit values, over a truncated graded space."""
    c = (2, 1)
    rankings = [r for r in naive.truncated_rankings(3, 4) if r.count(1) <= 2 and r.count(2) <= 1]
    keys = [tuple(sorted(U.oie_key(r, c).items())) for r in rankings]
    vals = [U.oie_d(r, c) for r in rankings]
    for (k1, v1), (k2, v2) in itertools.combinations(zip(keys, vals), 2):
        assert (k1 == k2) == (abs(v1 - v2) < mpmath.mpf(10) ** -40)


def test_oie_infeasible():
    with pytest.raises(InfeasibleRunError, match="rank 2"):
        U.oie_d((1, 1), (1,))
    assert np.isnan(U.oie_d_many(np.array([[1, 1]]), (1,))[0])


# -- the truncated run space ----------------------------------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 8), (3, 5), (4, 3)])
def test_truncated_space_and_ids(levels, n):
    rankings = naive.truncated_rankings(levels, n)
    assert len(rankings) == naive.truncated_space_size(levels, n) == sum(levels ** m for m in range(n + 1))
    assert rankings[0] == ()
    assert [naive.truncated_id(r, levels) for r in rankings] == list(range(len(rankings)))
    assert [naive.truncated_ranking(i, levels) for i in range(len(rankings))] == rankings
    runs, lengths = naive.truncated_runs(levels, n)
    assert [tuple(row[:m]) for row, m in zip(runs.tolist(), lengths)] == rankings
    assert (runs[np.arange(n)[None, :] >= lengths[:, None]] == naive.PAD).all()
    # within one length, ids are the engine's run ids shifted by the length's offset
    full = runs[lengths == n].astype(np.uint8)
    assert (ids_of_runs(full, levels) + naive.truncated_offset(levels, n)
            == np.arange(naive.truncated_offset(levels, n), len(rankings))).all()


def test_padding_rules():
    with pytest.raises(RunError, match="padding"):
        U.flatu_many(np.array([[1, naive.PAD, 1]]))
    a = np.array([[1, 0, 7], [0, 9, 9]])
    np.testing.assert_allclose(U.flatu_many(a, lengths=[2, 1]), [float(U.flatu((1, 0))), float(U.flatu((0,)))])


# -- fixed-length runs: same order as the base measure ---------------------------------------------
def _ranks(values, exact=True):
    if exact:
        distinct = sorted(set(values))
        return [distinct.index(v) + 1 for v in values]
    return naive.unq_ranks(values)[1]


@pytest.mark.parametrize("levels,n", [(2, 8), (3, 5)])
@pytest.mark.parametrize("name", list(UTILS))
def test_fixed_length_order_equals_base(name, levels, n):
    runs = list(itertools.product(range(levels), repeat=n))
    util = [UTILS[name](r, levels) for r in runs]
    base = [BASES[name](r, levels) for r in runs]
    exact = name != "DCGU"
    assert _ranks(util, exact) == _ranks(base, exact)
    if exact:   # the utility is (N times, for FlatU vs P) the base measure minus a constant
        scale = n if name == "FlatU" else 1
        assert len({u - scale * b for u, b in zip(util, base)}) == 1


def test_dcgu_formal_key_agrees():
    """DCGU ties decided by its exact formal key equal the 50-digit ties (binary N = 8,
    ternary N = 5); key values equal the direct mpmath values."""
    for levels, n in [(2, 8), (3, 5)]:
        runs = list(itertools.product(range(levels), repeat=n))
        keys = [tuple(sorted(U.dcgu_key(r, levels=levels).items())) for r in runs]
        vals = [U.dcgu(r, levels=levels) for r in runs]
        for key, v in zip(keys, vals):
            assert abs(U.value_of_log2_key(dict(key)) - v) < mpmath.mpf(10) ** -40
        by_key = {}
        for key, v in zip(keys, vals):
            by_key.setdefault(key, v)
        distinct = sorted(by_key.values())
        assert min(b - a for a, b in zip(distinct, distinct[1:])) > mpmath.mpf(10) ** -10


def test_binary_bases_match_naive():
    runs = list(itertools.product((0, 1), repeat=8))
    for r in runs:
        assert U.rbpu(r, P, 0) == naive.RBP("0.8")(r)
        assert U.flatu(r, 0) == naive.P(r) * 8
        assert abs(U.dcgu(r, 0) - naive._dcg_trec(r)) < mpmath.mpf(10) ** -40


# -- truncated rankings vs their padded versions -----------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 6), (3, 4)])
def test_truncated_not_tied_with_padded(levels, n):
    c = (n,) * (levels - 1)
    for r in naive.truncated_rankings(levels, n - 1):
        padded = r + (0,)
        for name, fn in UTILS.items():
            assert fn(r, levels) > fn(padded, levels), (name, r)
            assert fn(r, levels, 0) == fn(padded, levels, 0), (name, r)   # e = 0: the base measure ties
        assert U.rbpu(r, P, 0, levels) == U.rbpu(padded, P, 0, levels)  # plain RBP ties them
        assert U.oie_d(r, c) > U.oie_d(padded, c)
        assert U.oie_key(r, c) != U.oie_key(padded, c)


# -- vectorised == scalar --------------------------------------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 8), (3, 5)])
def test_many_equals_scalar(levels, n):
    runs, lengths = naive.truncated_runs(levels, n)
    rankings = naive.truncated_rankings(levels, n)
    for name, fn in UTILS.items():
        many = MANY[name](runs, levels)
        want = np.array([float(fn(r, levels)) for r in rankings])
        np.testing.assert_allclose(many, want, rtol=1e-12, atol=1e-14, err_msg=name)
    for c in ([(1,), (3,)] if levels == 2 else [(1, 1), (2, 1), (0, 2)]):
        many = U.oie_d_many(runs, c)
        for r, v in zip(rankings, many):
            feasible = all(r.count(g) <= c[g - 1] for g in range(1, levels))
            if feasible:
                assert v == pytest.approx(float(U.oie_d(r, c)), rel=1e-12, abs=1e-12)
            else:
                assert np.isnan(v)
                with pytest.raises(InfeasibleRunError):
                    U.oie_d(r, c)


def test_parameters_are_exact():
    r = (1, 0, 1)
    assert U.rbpu(r, 0.8) == U.rbpu(r, "0.8") == U.rbpu(r, Fraction(4, 5))
    assert U.oie_d(r, (2,), beta=1.05) == U.oie_d(r, (2,))
    assert U.rbpu((), P) == U.flatu(()) == U.erru(()) == U.rbu((), P) == 0
    assert U.rbpu((0,), P) == -(1 - P) * U.EFFORT
