"""Twist and CRP indicators (irscale.scales.measures.formulas.relative_position) against SPEC_MEASURES sections 3 and 4.

References: the specification's test vectors, the binary shortcut of RP, explicit
full-scale runs, and (vectorised vs scalar) the exact scalar functions on whole small run
spaces (runs from itertools, r_1 first).
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from irscale.errors import RecallBaseError, RunError
from irscale.scales.measures.formulas import relative_position as T

# -- SPEC_MEASURES section 3 test vectors (grades nr, pr, fr, hr; c = (3, 2, 2), N = 15) ------
C3 = (3, 2, 2)
SPEC3 = [
    ([0] * 15,
     [-7, -6, -5, -4, -3, -2, -1] + [0] * 8,
     [-7, -13, -18, -22, -25, -27, -28] + [-28] * 8),
    ([0] * 8 + [1, 1, 1, 2, 2, 3, 3],
     [-7, -6, -5, -4, -3, -2, -1, 0, 2, 3, 4, 8, 9, 12, 13],
     [-7, -13, -18, -22, -25, -27, -28, -28, -26, -23, -19, -11, -2, 10, 23]),
    ([3, 3, 2, 0, 1, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0],
     [0, 0, 0, -4, 0, 2, -1, 0, 0, 3, 0, 0, 0, 0, 0],
     [0, 0, 0, -4, -4, -2, -3, -3, -3, 0, 0, 0, 0, 0, 0]),
    ([3, 0, 1, 0, 2, 0, 0, 0, 2, 1, 0, 0, 3, 1, 0],
     [0, -6, -2, -4, 1, -2, -1, 0, 5, 3, 0, 0, 11, 7, 0],
     [0, -6, -8, -12, -11, -13, -14, -14, -9, -6, -6, -6, 5, 12, 12]),
]
# (rho, sigma, tau) with crossing = impl; the all-zero run retrieves nothing: tau = 0
SPEC3_TAU = [None,
             (Fraction(7, 13), Fraction(0), Fraction(7, 26)),
             (Fraction(0), Fraction(92, 107), Fraction(46, 107)),
             (Fraction(7, 12), Fraction(208, 445), Fraction(5611, 10680))]


@pytest.mark.parametrize("i", range(4))
def test_spec3_rp_crp(i):
    run, rp, crp = SPEC3[i]
    assert T.relative_positions(run, C3) == rp
    assert T.cumulated_relative_positions(run, C3) == crp
    assert T.relative_positions_many(np.array([run]), C3).tolist() == [rp]


@pytest.mark.parametrize("i", [1, 2, 3])
def test_spec3_rho_sigma_tau(i):
    run = SPEC3[i][0]
    rho, sigma, tau = SPEC3_TAU[i]
    assert T.recovery_ratio(run, C3, "impl") == rho
    assert T.space_ratio(run, C3) == sigma
    assert T.twist(run, C3) == tau
    many = T.twist_many(np.array([run]), C3)
    assert Fraction(int(many["tau_num"][0]), int(many["tau_den"][0])) == tau
    assert Fraction(int(many["rho_num"][0]), int(many["rho_den"][0])) == rho
    assert Fraction(int(many["sigma_num"][0]), int(many["sigma_den"][0])) == sigma


def test_spec3_first_run_retrieves_nothing():
    run = SPEC3[0][0]
    assert T.twist(run, C3) == 0
    assert T.twist_many(np.array([run]), C3)["tau"][0] == 0


def test_full_scale_closed_forms_match_explicit_run():
    assert T.full_scale_run(C3, 15) == tuple(SPEC3[1][0])
    assert T.full_scale_spaces(C3, 15) == T.spaces(SPEC3[1][0], C3) == (51, 28)
    for c in [(1,), (2,), (5,), (1, 1), (3, 1), (0, 2), (2, 0), (3, 2, 2), (4, 3, 3), (1, 0, 4), (2, 2, 2, 1)]:
        rb = sum(c)
        for n in range(2 * rb, 2 * rb + 4):
            s2 = sum(x * x for x in c)
            expect = (Fraction(rb * (n - rb)) + Fraction(rb - s2, 2), Fraction(rb * (rb + 1), 2))
            assert T.full_scale_spaces(c, n) == expect == T.spaces(T.full_scale_run(c, n), c)


def test_crossing_literal_gives_rho_one_to_top_grade_first():
    """SPEC section 3: the printed rule gives rho = 1 to any run starting with the top grade."""
    for c in [(1, 1), (2, 1), (1, 2), (2, 0), (0, 3)]:
        top = max(g for g in range(1, len(c) + 1) if c[g - 1])
        for run in _feasible(c, 6):
            if run[0] == top:
                assert T.recovery_ratio(run, c, "literal") == 1
    run = SPEC3[3][0]                        # impl gives 7/12 to this run
    assert T.recovery_ratio(run, C3, "literal") == 1
    assert T.twist(run, C3, "literal") == (1 + Fraction(208, 445)) / 2


# -- SPEC_MEASURES section 4 (c = (4, 3, 3), RB = 10, N = 20) ------------------------------------
C4 = (4, 3, 3)
RUN4A = [3, 3, 1, 0, 2, 1, 0, 0, 2, 1, 2, 0, 3, 1] + [0] * 6
RUN4B = [3, 3, 2, 0, 1, 2, 0, 0, 0, 1, 3] + [0] * 9


def test_spec4_first_run():
    assert T.cumulated_relative_positions(RUN4A, C4)[-1] == 3
    ind = T.crp_indicators(RUN4A, C4)
    assert (ind["b_r"], ind["b_w"]) == (14, 18)
    assert ind["rho_crp"] == Fraction(5, 7)
    assert ind["b_ratio"] == Fraction(2, 9)
    assert ind["crp_n"] == Fraction(10, 11)
    # SPEC's formula 1 - min(CRP_r)/min(CRP_w) gives 1 - (-19)/(-55) = 36/55; the SPEC's test
    # value 33/52 is 1 - (-19)/CRP_w(8), CRP_w taken at the rank of min(CRP_r).
    assert (ind["min_crp"], min(T.cumulated_relative_positions(T.full_scale_run(C4, 20), C4))) == (-19, -55)
    assert ind["crp_min"] == Fraction(36, 55)
    assert T.crp_indicators(RUN4A, C4, crp_min_ref="at_argmin")["crp_min"] == Fraction(33, 52)


def test_spec4_second_run_never_returns():
    crp = T.cumulated_relative_positions(RUN4B, C4)
    assert crp[-1] == -11
    assert all(v < 0 for v in crp[crp.index(min(crp)):])
    ind = T.crp_indicators(RUN4B, C4)
    assert ind["b_r"] == math.inf and ind["rho_crp"] == 0 and ind["b_ratio"] == -math.inf
    assert ind["crp_n"] == Fraction(4, 3)
    many = T.crp_many(np.array([RUN4A, RUN4B]), C4)
    assert many["b_r"].tolist() == [14, 0] and many["b_w"] == 18
    np.testing.assert_allclose(many["rho_crp"], [5 / 7, 0])
    np.testing.assert_allclose(many["crp_n"], [10 / 11, 4 / 3])
    assert many["b_ratio"][1] == -np.inf


# -- RP binary shortcut -----------------------------------------------------------------------
@pytest.mark.parametrize("rb", [1, 2, 3, 4])
def test_binary_shortcut(rb):
    for run in itertools.product((0, 1), repeat=8):
        short = [(k - rb if k > rb else 0) if r else (k - rb - 1 if k <= rb else 0)
                 for k, r in enumerate(run, start=1)]
        assert T.relative_positions(run, (rb,), strict=False) == short
        if sum(run) <= rb:
            assert T.relative_positions(run, (rb,)) == short


# -- edge cases -------------------------------------------------------------------------------
def test_edge_cases():
    with pytest.raises(ValueError, match="RB = 0"):
        T.twist([0, 0, 0], (0, 0))
    with pytest.raises(RecallBaseError, match="N >= 2 RB"):
        T.twist([1, 1, 0], (2,))
    with pytest.raises(T.TwistUndefinedError):
        T.twist_many(np.zeros((2, 3), dtype=int), (2,))
    with pytest.raises(T.InfeasibleRunError, match="rank 2"):
        T.relative_positions([0, 2, 0, 0], (2, 0))
    with pytest.raises(T.InfeasibleRunError, match="rank 3"):
        T.twist([1, 0, 1, 0], (1,))
    assert issubclass(T.InfeasibleRunError, RunError) and issubclass(T.InfeasibleRunError, ValueError)
    with pytest.raises(RunError, match="outside"):
        T.twist([3, 0, 0, 0], (1, 1))
    with pytest.raises(ValueError, match="crossing"):
        T.recovery_ratio([1, 0], (1,), crossing="other")
    # sigma = 0 when sigma+ = sigma- = 0 (the full-scale run)
    assert T.space_ratio(T.full_scale_run(C3, 15), C3) == 0


@pytest.mark.parametrize("c", [(1,), (3,), (1, 1), (2, 0, 1), C3, C4])
def test_ideal_run_scores_one(c):
    for n in range(2 * sum(c), 2 * sum(c) + 3):
        ideal = T.ideal_run(c, n)
        assert T.twist(ideal, c) == 1 == T.twist(ideal, c, "literal")
        assert T.twist_many(np.array([ideal]), c)["tau"][0] == 1
        ind = T.crp_indicators(ideal, c)
        assert ind["rho_crp"] == 1 and ind["crp_min"] == 1
        # CRP_w(N) = 0 (crp_n undefined: None) exactly for one-grade topics at N = 2 RB
        one_grade = sum(1 for x in c if x) == 1 and n == 2 * sum(c)
        assert ind["crp_n"] == (None if one_grade else 1)


# -- vectorised == scalar on whole run spaces -------------------------------------------------
def _feasible(c, n):
    return [r for r in itertools.product(range(len(c) + 1), repeat=n)
            if all(r.count(g) <= c[g - 1] for g in range(1, len(c) + 1))]


def _is_feasible(run, c):
    return all(run.count(g) <= c[g - 1] for g in range(1, len(c) + 1))


SPACES = [((1,), 8), ((2,), 8), ((3,), 8), ((4,), 8),
          ((1, 1), 6), ((2, 1), 6), ((1, 2), 6), ((0, 3), 6), ((2, 0), 6)]


@pytest.mark.parametrize("c,n", SPACES)
@pytest.mark.parametrize("crossing", ["impl", "literal"])
def test_twist_many_equals_scalar(c, n, crossing):
    runs = list(itertools.product(range(len(c) + 1), repeat=n))
    many = T.twist_many(np.array(runs, dtype=np.uint8), c, crossing)
    assert many["feasible"].tolist() == [_is_feasible(r, c) for r in runs]
    for i, run in enumerate(runs):
        if not many["feasible"][i]:
            assert np.isnan(many["tau"][i])
            with pytest.raises(T.InfeasibleRunError):
                T.twist(run, c, crossing)
            continue
        tau = T.twist(run, c, crossing)
        assert Fraction(int(many["tau_num"][i]), int(many["tau_den"][i])) == tau
        assert many["tau"][i] == pytest.approx(float(tau), rel=1e-15, abs=0)
        assert (many["s_plus"][i], many["s_minus"][i]) == T.spaces(run, c)
        fs_plus, fs_minus = T.full_scale_spaces(c, n)      # the largest spaces of feasible runs
        assert 0 <= many["s_plus"][i] <= fs_plus and 0 <= many["s_minus"][i] <= fs_minus
        if any(run):
            assert Fraction(int(many["rho_num"][i]), int(many["rho_den"][i])) == T.recovery_ratio(run, c, crossing)
            assert Fraction(int(many["sigma_num"][i]), int(many["sigma_den"][i])) == T.space_ratio(run, c)
        assert 0 <= tau <= 1


@pytest.mark.parametrize("c,n", SPACES)
@pytest.mark.parametrize("ref", ["min", "at_argmin"])
def test_crp_many_equals_scalar(c, n, ref):
    runs = _feasible(c, n)
    many = T.crp_many(np.array(runs), c, ref)
    for i, run in enumerate(runs):
        ind = T.crp_indicators(run, c, ref)
        b_r = int(many["b_r"][i])
        assert (b_r if b_r else math.inf) == ind["b_r"] and many["b_w"] == ind["b_w"]
        assert Fraction(1) - Fraction(int(many["min_crp"][i]), int(many["min_ref"][i])) == ind["crp_min"]
        for key in ("rho_crp", "b_ratio", "crp_min", "crp_n"):
            want = ind[key]
            if want is None:
                assert np.isnan(many[key][i])
            else:
                assert many[key][i] == pytest.approx(float(want), rel=1e-15, abs=1e-15)
