"""Pairwise significance tests (SPEC section 6), the entry points of
irscale.scales.analysis.significance: invariants under transforms of the scores, the API
(pair order, per-test functions against the dispatchers, input checks, speed) and signed
decisions against SciPy. The tests themselves: test_two_sample.py, test_multi_system.py."""
import time

import numpy as np
import pytest
from scipy import stats
from significance_matrices import MATRICES

from irscale.scales.analysis import multi_system as M
from irscale.scales.analysis import significance as S
from irscale.scales.analysis import two_sample as T
from irscale.scales.analysis.significance_input import pairs

# ------------------------------------------------------------------ invariants


@pytest.mark.parametrize("name", ["int_10x6", "int_effect_16x6", "cont_12x6", "int_20x5", "degenerate_15x5"])
def test_row_monotone_transform_keeps_sign_and_friedman(name):
    x = MATRICES[name]
    before = S.pairwise_significance(x, tests=("sign", "friedman"))
    offsets = 10.0 * np.arange(x.shape[0])[:, None]
    after = S.pairwise_significance(x ** 3 + offsets, tests=("sign", "friedman"))
    for test in before:
        np.testing.assert_array_equal(before[test], after[test], err_msg=test)
    np.testing.assert_array_equal(T.sign_pvalues(x), T.sign_pvalues(x ** 3 + offsets))


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_affine_map_keeps_every_decision(name):
    x = MATRICES[name]
    before = S.pairwise_significance(x)
    after = S.pairwise_significance(4.0 * x - 3.0)   # exact in binary floating point
    for test in S.TESTS:
        np.testing.assert_array_equal(before[test], after[test], err_msg=test)


def test_affine_map_with_inexact_factor_keeps_decisions():
    x = MATRICES["cont_12x6"]
    before = S.pairwise_significance(x)
    after = S.pairwise_significance(0.37 * x + 2.5)
    for test in S.TESTS:
        np.testing.assert_array_equal(before[test], after[test], err_msg=test)


# --------------------------------------------------------------------- the API


def test_pairs_order():
    i, j = pairs(5)
    ref = np.triu_indices(5, k=1)
    np.testing.assert_array_equal(i, ref[0])
    np.testing.assert_array_equal(j, ref[1])
    assert list(zip(i[:4].tolist(), j[:4].tolist())) == [(0, 1), (0, 2), (0, 3), (0, 4)]
    for bad in (1, 0, -3, 2.5, "4", True):
        with pytest.raises(ValueError):
            pairs(bad)


def test_per_test_functions_match_the_dispatchers():
    x = MATRICES["int_effect_16x6"]
    p = S.pairwise_pvalues(x)
    sig = S.pairwise_significance(x, alpha=0.1)
    for test, fn in (("sign", T.sign_pvalues), ("ranksum", T.ranksum_pvalues),
                     ("signrank", T.signrank_pvalues), ("ttest", T.ttest_pvalues)):
        np.testing.assert_array_equal(fn(x), p[test])
    for test, fn in (("anova1", M.anova1_tukey), ("anova2", M.anova2_tukey),
                     ("kruskal", M.kruskal_tukey), ("friedman", M.friedman_tukey)):
        np.testing.assert_array_equal(fn(x, alpha=0.1), sig[test])
    assert list(S.pairwise_significance(x, tests=("friedman", "sign"))) == ["friedman", "sign"]
    assert list(S.pairwise_significance(x, tests="ttest")) == ["ttest"]
    assert all(v.dtype == bool for v in sig.values())
    assert S.TESTS == ("sign", "ranksum", "signrank", "ttest", "anova1", "anova2", "kruskal", "friedman")


@pytest.mark.parametrize("bad", [
    np.array([[1.0, np.nan], [2.0, 3.0]]),
    np.array([[1.0, np.inf], [2.0, 3.0]]),
    np.arange(5.0),
    np.zeros((2, 2, 2)),
    np.zeros((5, 1)),
    np.zeros((1, 5)),
    [["a", "b"], ["c", "d"]],
])
def test_bad_matrices_raise_value_error(bad):
    with pytest.raises(ValueError):
        S.pairwise_significance(bad)
    with pytest.raises(ValueError):
        S.pairwise_pvalues(bad)
    with pytest.raises(ValueError):
        M.kruskal_tukey(bad)


def test_bad_tests_and_alpha_raise_value_error():
    x = MATRICES["cont_12x6"]
    with pytest.raises(ValueError, match="unknown test"):
        S.pairwise_significance(x, tests=("sign", "tukey"))
    with pytest.raises(ValueError, match="unknown test"):
        S.pairwise_pvalues(x, tests=("anova1",))
    for alpha in (0, 1, -0.1, 1.5, float("nan"), "x"):
        with pytest.raises(ValueError):
            S.pairwise_significance(x, alpha=alpha)


def test_trec_sized_matrix_is_fast():
    rng = np.random.default_rng(3)
    x = np.round(rng.beta(0.6, 2.0, (50, 129)), 2)    # ties and zero differences, like AP
    S.pairwise_significance(x)                         # fills the critical-value cache
    start = time.perf_counter()
    sig = S.pairwise_significance(x)
    elapsed = time.perf_counter() - start
    assert set(sig) == set(S.TESTS)
    assert all(v.shape == (8256,) for v in sig.values())
    assert elapsed < 2.0, elapsed

# ------------------------------------------------------------- signed decisions


def _scipy_direction(test, x, i, j):
    a, b = x[:, i], x[:, j]
    if test == "sign":
        return np.sign((a > b).sum() - (a < b).sum())
    if test == "signrank":
        d = (a - b)[a != b]
        r = stats.rankdata(np.abs(d))
        return np.sign(r[d > 0].sum() - r[d < 0].sum())
    if test == "ranksum":
        return np.sign(stats.mannwhitneyu(a, b).statistic - len(a) ** 2 / 2)
    if test == "kruskal":
        r = stats.rankdata(x).reshape(x.shape)
        return np.sign(r[:, i].sum() - r[:, j].sum())
    if test == "friedman":
        r = np.apply_along_axis(stats.rankdata, 1, x)
        return np.sign(r[:, i].sum() - r[:, j].sum())
    return np.sign(a.mean() - b.mean())


@pytest.mark.parametrize("seed", range(4))
def test_directions_and_signed_decisions_equal_scipy(seed):
    """Directions read from each test's own statistic (dyadic scores: exact ties)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 9, size=(15, 7)) / 8.0
    x[:, 3] = x[:, 2]                                   # an identical pair: direction 0
    directions = S.pairwise_directions(x)
    decisions = S.pairwise_decisions(x, alpha=0.3)
    significant = S.pairwise_significance(x, alpha=0.3)
    i, j = pairs(7)
    for test in S.TESTS:
        want = np.array([_scipy_direction(test, x, a, b) for a, b in zip(i, j)])
        np.testing.assert_array_equal(directions[test], want, err_msg=test)
        np.testing.assert_array_equal(decisions[test], np.where(significant[test], want, 0), err_msg=test)
    assert all(d.dtype == np.int8 for d in decisions.values())
