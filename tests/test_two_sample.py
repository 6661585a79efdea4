"""The two-sample tests (irscale.scales.analysis.two_sample: sign, rank-sum, signed-rank,
paired t) against SciPy pair by pair on small matrices: p-values, their exact tables and
degenerate conventions, chunked and sparse paths, ties under inexact scaling."""
import warnings

import numpy as np
import pytest
from scipy import stats
from significance_matrices import MATRICES, cont

from irscale.scales.analysis import significance as S
from irscale.scales.analysis import significance_input
from irscale.scales.analysis import two_sample as T
from irscale.scales.analysis.significance_input import pairs


def _reference_pvalue(test, x, y):
    """SciPy's p-value, or None where SciPy has none (raises or returns NaN)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if test == "sign":
            d = x - y
            n = int(np.count_nonzero(d))
            return stats.binomtest(int((d > 0).sum()), n, 0.5).pvalue if n else None
        if test == "ranksum":
            p = stats.mannwhitneyu(x, y, alternative="two-sided").pvalue
        elif test == "signrank":
            if not np.any(x != y):
                return None                      # SciPy: NaN (n > 13) or 1 (n <= 13)
            p = stats.wilcoxon(x, y, zero_method="wilcox").pvalue
        else:
            p = stats.ttest_rel(x, y).pvalue
    return None if np.isnan(p) else float(p)


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_two_sample_pvalues_equal_scipy(name):
    x = MATRICES[name]
    got = S.pairwise_pvalues(x)
    assert list(got) == list(S.TWO_SAMPLE_TESTS)
    for test in S.TWO_SAMPLE_TESTS:
        p = got[test]
        assert p.shape == (x.shape[1] * (x.shape[1] - 1) // 2,)
        for idx, (i, j) in enumerate(zip(*pairs(x.shape[1]))):
            ref = _reference_pvalue(test, x[:, i], x[:, j])
            if ref is None:
                assert p[idx] == 1.0, (test, i, j)
            else:
                assert p[idx] == pytest.approx(ref, rel=1e-12, abs=1e-12), (test, i, j, p[idx], ref)


def test_small_n_paths_are_exercised():
    """The matrices above reach every branch SciPy's 'auto' methods take."""
    x = MATRICES["int_10x6"]
    i, j = pairs(6)
    d = x[:, i] - x[:, j]
    assert np.any(d == 0)                        # signrank: exact permutation test (n <= 13)
    x = MATRICES["cont_6x5"]
    assert len(np.unique(x)) == x.size           # ranksum: exact U distribution
    x = MATRICES["int_20x5"]
    assert np.any(x[:, 0] == x[:, 1])            # signrank: normal approximation with zeros


def test_sign_table_equals_binomtest():
    table = T._sign_table(60)
    for n in range(1, 61):
        for k in range(n + 1):
            assert table[n, min(k, n - k)] == pytest.approx(
                stats.binomtest(k, n, 0.5).pvalue, rel=1e-12, abs=1e-15), (n, k)


def test_degenerate_conventions():
    x = MATRICES["degenerate_15x5"]
    p = S.pairwise_pvalues(x)
    pair = {(int(a), int(b)): q for q, (a, b) in enumerate(zip(*pairs(5)))}
    same, shifted = pair[(0, 1)], pair[(0, 2)]
    for test in S.TWO_SAMPLE_TESTS:
        assert p[test][same] == 1.0
    assert p["ttest"][shifted] == 0.0            # zero variance, non-zero mean: |t| = inf
    assert p["sign"][shifted] == pytest.approx(2 * 0.5 ** 15)
    sig = S.pairwise_significance(x)
    for test in S.TESTS:
        assert not sig[test][same], test


@pytest.mark.parametrize("name", ["cont_12x6", "int_10x6", "cont_51x4"])
def test_two_sample_decisions_are_p_le_alpha(name):
    x = MATRICES[name]
    p = S.pairwise_pvalues(x)
    for alpha in (0.01, 0.05, 0.2):
        sig = S.pairwise_significance(x, tests=S.TWO_SAMPLE_TESTS, alpha=alpha)
        for test in S.TWO_SAMPLE_TESTS:
            np.testing.assert_array_equal(sig[test], p[test] <= alpha)


def test_chunking_gives_the_same_result(monkeypatch):
    x = cont(np.random.default_rng(5), 14, 9)
    x[:, 3] = np.round(x[:, 3])
    full = S.pairwise_pvalues(x)
    monkeypatch.setattr(significance_input, "_CHUNK_CELLS", 30)   # 2 pairs per chunk
    monkeypatch.setattr(T, "_DENSE_HISTOGRAM_CELLS", 0)  # rank-sum counts column by column
    chunked = S.pairwise_pvalues(x)
    for test in S.TWO_SAMPLE_TESTS:
        np.testing.assert_array_equal(full[test], chunked[test])


@pytest.mark.parametrize("name", ["int_10x6", "cont_12x6", "cont_6x5", "degenerate_15x5"])
def test_ranksum_sparse_path_equals_dense(name, monkeypatch):
    x = MATRICES[name]
    dense = T._ranksum_counts(x)
    monkeypatch.setattr(T, "_DENSE_HISTOGRAM_CELLS", 0)
    sparse = T._ranksum_counts(x)
    for a, b in zip(dense, sparse):
        np.testing.assert_array_equal(a, b)

def test_signrank_ties_survive_inexact_scaling():
    """id / (2^N - 1) is not exact in binary: equal differences must still tie."""
    rng = np.random.default_rng(5)
    ids = rng.integers(0, 2 ** 10, size=(50, 30)).astype(np.float64)
    exact = S.pairwise_pvalues(ids / 1024.0, tests=("signrank",))["signrank"]   # dyadic: exact
    inexact = S.pairwise_pvalues(ids / 1023.0, tests=("signrank",))["signrank"]
    assert np.allclose(exact, inexact, rtol=1e-12, atol=0)


def test_signrank_zeros_never_tie_with_tiny_differences():
    x = np.zeros((20, 2))
    x[16:, 1] = 1e-20   # 15 zero differences, 4 tiny ones, one of 1
    x[0, 0] = 1.0      # sets the scale: tolerance 64 ulps of 1 >> 1e-20
    p = S.pairwise_pvalues(x, tests=("signrank",))["signrank"]
    assert np.isfinite(p).all() and 0 < p[0] <= 1
