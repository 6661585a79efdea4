"""The multi-system tests with Tukey HSD decisions (irscale.scales.analysis.multi_system:
one- and two-way ANOVA, Kruskal-Wallis, Friedman) against statsmodels, SciPy,
scikit-posthocs and MATLAB's formulas written out pair by pair."""
import warnings

import numpy as np
import pytest
from scipy import stats
from significance_matrices import ALPHA, MATRICES, cont, ints

from irscale.scales.analysis import multi_system as M
from irscale.scales.analysis.significance_input import pairs


def _effect_matrices(count=12):
    rng = np.random.default_rng(7)
    for r in range(count):
        yield f"cont{r}", cont(rng, 12, 6, 0.7)
        yield f"int{r}", ints(rng, 12, 6)


EFFECT_MATRICES = list(_effect_matrices())


def _count(decisions):
    return sum(int(d.sum()) for d in decisions), sum(d.size for d in decisions)


@pytest.mark.slow
def test_anova1_equals_statsmodels_and_scipy():
    multicomp = pytest.importorskip("statsmodels.stats.multicomp")
    seen = []
    for name, x in EFFECT_MATRICES[:8]:     # statsmodels and SciPy evaluate slow p-values
        n, k = x.shape
        got = M.anova1_tukey(x)
        groups = np.repeat([f"s{c:02d}" for c in range(k)], n)
        ref = multicomp.pairwise_tukeyhsd(x.T.ravel(), groups, alpha=ALPHA).reject
        np.testing.assert_array_equal(got, ref, err_msg=name)
        i, j = pairs(k)
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
               for i, j in zip(*pairs(k))]
        got = M.anova2_tukey(x)
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
                     for i, j in zip(*pairs(k))])


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
                     for i, j in zip(*pairs(k))])


def test_kruskal_and_friedman_equal_matlab_formulas():
    seen = {"kruskal": [], "friedman": []}
    for name, x in EFFECT_MATRICES + [(n, MATRICES[n]) for n in ("int_10x6", "degenerate_15x5")]:
        kw, fr = M.kruskal_tukey(x), M.friedman_tukey(x)
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
        i, j = pairs(x.shape[1])
        kw = sp.posthoc_nemenyi(list(x.T), dist="tukey").to_numpy()[i, j] < ALPHA
        np.testing.assert_array_equal(M.kruskal_tukey(x), kw, err_msg=name)
        fr = sp.posthoc_nemenyi_friedman(x).to_numpy()[i, j] < ALPHA
        np.testing.assert_array_equal(M.friedman_tukey(x), fr, err_msg=name)
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
            i, j = pairs(x.shape[1])
            for got, ref in ((M.kruskal_tukey(x), sp.posthoc_nemenyi(list(x.T), dist="tukey")),
                             (M.friedman_tukey(x), sp.posthoc_nemenyi_friedman(x))):
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
            assert M.tukey_critical_value(ALPHA, k, df) / np.sqrt(2) <= sidak * (1 + 1e-9), (k, df)


def test_no_omnibus_gating():
    """A pair can be significant by Tukey while the omnibus test is not (MATLAB does not
    gate): a single outlying system among many similar ones is still compared."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        x = rng.normal(size=(12, 6))
        sig = M.anova1_tukey(x)
        p_f = stats.f_oneway(*x.T).pvalue
        if sig.any() and p_f > ALPHA:
            return
        if not sig.any() and p_f <= ALPHA:
            return                               # the opposite disagreement: also no gating
    pytest.skip("no disagreement between omnibus and Tukey found")
