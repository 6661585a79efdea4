"""Pairwise significance tests (SPEC section 6) against SciPy, statsmodels and
scikit-posthocs, pair by pair on small matrices, plus invariants and input checks."""
import time
import warnings

import numpy as np
import pytest
from scipy import stats

from irscale.scales.analysis import significance as S

ALPHA = 0.05


# ------------------------------------------------------------------ matrices


def _cont(rng, n, k, spread=0.6):
    return rng.normal(size=(n, k)) + rng.normal(0.0, spread, k)


def _ints(rng, n, k, top=3, spread=0.8):
    """Integer scores 0..top with system effects: many ties and zero differences."""
    return np.clip(np.round(rng.normal(top / 2, 1.0, (n, k)) + rng.normal(0.0, spread, k)), 0, top)


def _matrices():
    rng = np.random.default_rng(20240611)
    out = {
        "cont_12x6": _cont(rng, 12, 6),
        "int_10x6": rng.integers(0, 4, (10, 6)).astype(float),  # signrank: permutation test
        "int_effect_16x6": _ints(rng, 16, 6),
        "int_20x5": _ints(rng, 20, 5),           # signrank: normal approximation with ties
        "cont_20x5": _cont(rng, 20, 5),          # signrank: exact, n = 20
        "cont_51x4": _cont(rng, 51, 4, 0.3),     # signrank: n > 50 -> normal approximation
        "cont_50x3": _cont(rng, 50, 3, 0.3),     # signrank: exact at n = 50 (TREC-8)
        "int_50x4": _ints(rng, 50, 4, top=9),
        "cont_6x5": _cont(rng, 6, 5, 1.5),       # ranksum: exact U distribution (n <= 8)
        "int_6x5": rng.integers(0, 3, (6, 5)).astype(float),
        "cont_3x4": _cont(rng, 3, 4),
    }
    # degenerate columns: identical (all differences zero), shifted (zero variance of d)
    x = rng.integers(0, 4, (15, 5)).astype(float)
    x[:, 1] = x[:, 0]
    x[:, 2] = x[:, 0] + 1.0
    x[:, 4] = 2.0
    out["degenerate_15x5"] = x
    y = rng.integers(0, 4, (10, 4)).astype(float)
    y[:, 3] = y[:, 2]
    out["degenerate_10x4"] = y
    return out


MATRICES = _matrices()


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


# ------------------------------------------------------------ two-sample tests


@pytest.mark.parametrize("name", sorted(MATRICES))
def test_two_sample_pvalues_equal_scipy(name):
    x = MATRICES[name]
    got = S.pairwise_pvalues(x)
    assert list(got) == list(S.TWO_SAMPLE_TESTS)
    for test in S.TWO_SAMPLE_TESTS:
        p = got[test]
        assert p.shape == (x.shape[1] * (x.shape[1] - 1) // 2,)
        for idx, (i, j) in enumerate(zip(*S.pairs(x.shape[1]))):
            ref = _reference_pvalue(test, x[:, i], x[:, j])
            if ref is None:
                assert p[idx] == 1.0, (test, i, j)
            else:
                assert p[idx] == pytest.approx(ref, rel=1e-12, abs=1e-12), (test, i, j, p[idx], ref)


def test_small_n_paths_are_exercised():
    """The matrices above reach every branch SciPy's 'auto' methods take."""
    x = MATRICES["int_10x6"]
    i, j = S.pairs(6)
    d = x[:, i] - x[:, j]
    assert np.any(d == 0)                        # signrank: exact permutation test (n <= 13)
    x = MATRICES["cont_6x5"]
    assert len(np.unique(x)) == x.size           # ranksum: exact U distribution
    x = MATRICES["int_20x5"]
    assert np.any(x[:, 0] == x[:, 1])            # signrank: normal approximation with zeros


def test_sign_table_equals_binomtest():
    table = S._sign_table(60)
    for n in range(1, 61):
        for k in range(n + 1):
            assert table[n, min(k, n - k)] == pytest.approx(
                stats.binomtest(k, n, 0.5).pvalue, rel=1e-12, abs=1e-15), (n, k)


def test_degenerate_conventions():
    x = MATRICES["degenerate_15x5"]
    p = S.pairwise_pvalues(x)
    pair = {(int(a), int(b)): q for q, (a, b) in enumerate(zip(*S.pairs(5)))}
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
    x = _cont(np.random.default_rng(5), 14, 9)
    x[:, 3] = np.round(x[:, 3])
    full = S.pairwise_pvalues(x)
    monkeypatch.setattr(S, "_CHUNK_CELLS", 30)   # 2 pairs per chunk
    monkeypatch.setattr(S, "_DENSE_HISTOGRAM_CELLS", 0)  # rank-sum counts column by column
    chunked = S.pairwise_pvalues(x)
    for test in S.TWO_SAMPLE_TESTS:
        np.testing.assert_array_equal(full[test], chunked[test])


@pytest.mark.parametrize("name", ["int_10x6", "cont_12x6", "cont_6x5", "degenerate_15x5"])
def test_ranksum_sparse_path_equals_dense(name, monkeypatch):
    x = MATRICES[name]
    dense = S._ranksum_counts(x)
    monkeypatch.setattr(S, "_DENSE_HISTOGRAM_CELLS", 0)
    sparse = S._ranksum_counts(x)
    for a, b in zip(dense, sparse):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------- multi-system tests


def _effect_matrices(count=12):
    rng = np.random.default_rng(7)
    for r in range(count):
        yield f"cont{r}", _cont(rng, 12, 6, 0.7)
        yield f"int{r}", _ints(rng, 12, 6)


EFFECT_MATRICES = list(_effect_matrices())


def _count(decisions):
    return sum(int(d.sum()) for d in decisions), sum(d.size for d in decisions)


@pytest.mark.slow
def test_anova1_equals_statsmodels_and_scipy():
    multicomp = pytest.importorskip("statsmodels.stats.multicomp")
    seen = []
    for name, x in EFFECT_MATRICES[:8]:     # statsmodels and SciPy evaluate slow p-values
        n, k = x.shape
        got = S.anova1_tukey(x)
        groups = np.repeat([f"s{c:02d}" for c in range(k)], n)
        ref = multicomp.pairwise_tukeyhsd(x.T.ravel(), groups, alpha=ALPHA).reject
        np.testing.assert_array_equal(got, ref, err_msg=name)
        i, j = S.pairs(k)
        np.testing.assert_array_equal(got, stats.tukey_hsd(*x.T).pvalue[i, j] < ALPHA, err_msg=name)
        seen.append(got)
    sig, total = _count(seen)
    assert 0 < sig < total                      # both outcomes occur: the check is not vacuous


def test_anova2_equals_statsmodels_and_loop():
    pd = pytest.importorskip("pandas")
    smf = pytest.importorskip("statsmodels.formula.api")
    anova_lm = pytest.importorskip("statsmodels.stats.anova").anova_lm
    seen = []
    for name, x in EFFECT_MATRICES[:8]:
        n, k = x.shape
        frame = pd.DataFrame({"score": x.ravel(), "topic": np.repeat(np.arange(n), k),
                              "system": np.tile(np.arange(k), n)})
        table = anova_lm(smf.ols("score ~ C(topic) + C(system)", frame).fit())
        mse, df = table.loc["Residual", "mean_sq"], table.loc["Residual", "df"]
        assert df == (n - 1) * (k - 1)
        means = x.mean(axis=0)
        ref = [stats.studentized_range.sf(abs(means[i] - means[j]) / np.sqrt(mse / n), k, df) < ALPHA
               for i, j in zip(*S.pairs(k))]
        got = S.anova2_tukey(x)
        np.testing.assert_array_equal(got, ref, err_msg=name)
        seen.append(got)
    sig, total = _count(seen)
    assert 0 < sig < total


def _kruskal_loop(x, alpha=ALPHA):
    """MATLAB kruskalwallis + multcompare, written out pair by pair."""
    n, k = x.shape
    big_n = n * k
    ranks = stats.rankdata(x.ravel()).reshape(n, k)
    _, t = np.unique(x, return_counts=True)
    sumt = float(np.sum(t ** 3 - t))
    sigma2 = big_n * (big_n + 1) / 12 - sumt / (12 * (big_n - 1))
    assert sigma2 == pytest.approx(big_n * (big_n + 1) / 12 * (1 - sumt / (big_n ** 3 - big_n)))
    crit = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    rbar = ranks.mean(axis=0)
    return np.array([abs(rbar[i] - rbar[j]) > crit * np.sqrt(sigma2 * (1 / n + 1 / n))
                     for i, j in zip(*S.pairs(k))])


def _friedman_loop(x, alpha=ALPHA):
    """MATLAB friedman + multcompare, written out pair by pair."""
    n, k = x.shape
    ranks = np.vstack([stats.rankdata(row) for row in x])
    sumta = 0.0
    for row in x:
        _, t = np.unique(row, return_counts=True)
        sumta += float(np.sum(t ** 3 - t))
    sigma2 = k * (k + 1) / 12 - sumta / (12 * n * (k - 1))
    crit = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
    rbar = ranks.mean(axis=0)
    return np.array([abs(rbar[i] - rbar[j]) > crit * np.sqrt(sigma2 * 2 / n)
                     for i, j in zip(*S.pairs(k))])


def test_kruskal_and_friedman_equal_matlab_formulas():
    seen = {"kruskal": [], "friedman": []}
    for name, x in EFFECT_MATRICES + [(n, MATRICES[n]) for n in ("int_10x6", "degenerate_15x5")]:
        kw, fr = S.kruskal_tukey(x), S.friedman_tukey(x)
        np.testing.assert_array_equal(kw, _kruskal_loop(x), err_msg=name)
        np.testing.assert_array_equal(fr, _friedman_loop(x), err_msg=name)
        seen["kruskal"].append(kw)
        seen["friedman"].append(fr)
    for test, decisions in seen.items():
        sig, total = _count(decisions)
        assert 0 < sig < total, test


def test_kruskal_and_friedman_equal_nemenyi_without_ties():
    sp = pytest.importorskip("scikit_posthocs")
    seen = []
    for name, x in EFFECT_MATRICES:
        if not name.startswith("cont"):
            continue
        i, j = S.pairs(x.shape[1])
        kw = sp.posthoc_nemenyi(list(x.T), dist="tukey").to_numpy()[i, j] < ALPHA
        np.testing.assert_array_equal(S.kruskal_tukey(x), kw, err_msg=name)
        fr = sp.posthoc_nemenyi_friedman(x).to_numpy()[i, j] < ALPHA
        np.testing.assert_array_equal(S.friedman_tukey(x), fr, err_msg=name)
        seen += [kw, fr]
    sig, total = _count(seen)
    assert 0 < sig < total


def test_tie_correction_only_adds_significant_pairs():
    """With ties, scikit-posthocs' Tukey p-values ignore the tie correction that MATLAB
    applies (a smaller sigma2): every pair it finds is also found here."""
    sp = pytest.importorskip("scikit_posthocs")
    extra = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # "Ties are present" warning
        for name, x in EFFECT_MATRICES:
            if not name.startswith("int"):
                continue
            i, j = S.pairs(x.shape[1])
            for got, ref in ((S.kruskal_tukey(x), sp.posthoc_nemenyi(list(x.T), dist="tukey")),
                             (S.friedman_tukey(x), sp.posthoc_nemenyi_friedman(x))):
                ref = ref.to_numpy()[i, j] < ALPHA
                assert np.all(got[ref]), name
                extra += int((got & ~ref).sum())
    assert extra > 0


def test_dunn_sidak_cap_never_binds():
    """MATLAB caps the Tukey-Kramer value at the Dunn-Sidak one; the exact quantile never
    exceeds it, so the cap is not applied."""
    for k in (2, 6, 129):
        for df in (55, 6272, np.inf):
            alf = 1 - (1 - ALPHA) ** (1 / (k * (k - 1) / 2))
            sidak = stats.norm.ppf(1 - alf / 2) if np.isinf(df) else stats.t.ppf(1 - alf / 2, df)
            # k = 2: both are the same t quantile (up to the ppf's ~1e-10 accuracy)
            assert S.tukey_critical_value(ALPHA, k, df) / np.sqrt(2) <= sidak * (1 + 1e-9), (k, df)


def test_no_omnibus_gating():
    """A pair can be significant by Tukey while the omnibus test is not (MATLAB does not
    gate): a single outlying system among many similar ones is still compared."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        x = rng.normal(size=(12, 6))
        sig = S.anova1_tukey(x)
        p_f = stats.f_oneway(*x.T).pvalue
        if sig.any() and p_f > ALPHA:
            return
        if not sig.any() and p_f <= ALPHA:
            return                               # the opposite disagreement: also no gating
    pytest.skip("no disagreement between omnibus and Tukey found")


# ------------------------------------------------------------------ invariants


@pytest.mark.parametrize("name", ["int_10x6", "int_effect_16x6", "cont_12x6", "int_20x5", "degenerate_15x5"])
def test_row_monotone_transform_keeps_sign_and_friedman(name):
    x = MATRICES[name]
    before = S.pairwise_significance(x, tests=("sign", "friedman"))
    offsets = 10.0 * np.arange(x.shape[0])[:, None]
    after = S.pairwise_significance(x ** 3 + offsets, tests=("sign", "friedman"))
    for test in before:
        np.testing.assert_array_equal(before[test], after[test], err_msg=test)
    np.testing.assert_array_equal(S.sign_pvalues(x), S.sign_pvalues(x ** 3 + offsets))


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
    i, j = S.pairs(5)
    ref = np.triu_indices(5, k=1)
    np.testing.assert_array_equal(i, ref[0])
    np.testing.assert_array_equal(j, ref[1])
    assert list(zip(i[:4].tolist(), j[:4].tolist())) == [(0, 1), (0, 2), (0, 3), (0, 4)]
    for bad in (1, 0, -3, 2.5, "4", True):
        with pytest.raises(ValueError):
            S.pairs(bad)


def test_per_test_functions_match_the_dispatchers():
    x = MATRICES["int_effect_16x6"]
    p = S.pairwise_pvalues(x)
    sig = S.pairwise_significance(x, alpha=0.1)
    for test, fn in (("sign", S.sign_pvalues), ("ranksum", S.ranksum_pvalues),
                     ("signrank", S.signrank_pvalues), ("ttest", S.ttest_pvalues)):
        np.testing.assert_array_equal(fn(x), p[test])
    for test, fn in (("anova1", S.anova1_tukey), ("anova2", S.anova2_tukey),
                     ("kruskal", S.kruskal_tukey), ("friedman", S.friedman_tukey)):
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
        S.kruskal_tukey(bad)


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
    i, j = S.pairs(7)
    for test in S.TESTS:
        want = np.array([_scipy_direction(test, x, a, b) for a, b in zip(i, j)])
        np.testing.assert_array_equal(directions[test], want, err_msg=test)
        np.testing.assert_array_equal(decisions[test], np.where(significant[test], want, 0), err_msg=test)
    assert all(d.dtype == np.int8 for d in decisions.values())
