"""Inference beyond the eight tests (irscale.scales.analysis.inference) against independent
references: statsmodels' multipletests for the Holm and Benjamini-Hochberg corrections,
SciPy's paired percentile bootstrap, the plain-Python randomised Tukey HSD and effect
sizes of tests/inference_reference.py (Python's random and statistics modules), plus
invariants and the input checks."""
import gc
import math
import warnings

import inference_reference as ref
import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from irscale.errors import IrscaleError
from irscale.scales.analysis import inference as I
from irscale.scales.analysis.significance import pairwise_pvalues
from irscale.scales.analysis.significance_input import SignificanceInputError, pairs

STATSMODELS = {"holm": "holm", "bh": "fdr_bh"}
ALPHAS = (0.001, 0.01, 0.05, 0.1, 0.2)


def _scores(rng, n, k, effects=None, topic_sd=0.2, noise=0.15):
    """Scores with a topic effect (which pairing removes), system effects and noise."""
    effects = np.zeros(k) if effects is None else np.asarray(effects, dtype=float)
    return 0.5 + rng.normal(0.0, topic_sd, (n, 1)) + effects + rng.normal(0.0, noise, (n, k))


# ------------------------------------------------------------ multiple comparisons


@pytest.fixture
def no_gc_collect(monkeypatch):
    """statsmodels' Holm branch calls gc.collect() on every call (~40 ms inside pytest);
    that changes nothing in its results."""
    monkeypatch.setattr(gc, "collect", lambda *args, **kwargs: 0)


def _assert_like_statsmodels(p, method):
    """adjust_pvalues(p) against multipletests on the non-NaN entries (the family)."""
    p = np.asarray(p, dtype=float)
    got = I.adjust_pvalues(p, method)
    assert got.shape == p.shape
    family = ~np.isnan(p)
    assert np.isnan(got[~family]).all()
    if not family.any():
        return
    for alpha in ALPHAS:
        reject, corrected, _, _ = multipletests(p[family], alpha=alpha, method=STATSMODELS[method])
        np.testing.assert_allclose(got[family], corrected, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(got[family] <= alpha, reject, err_msg=f"{method}, alpha={alpha}, p={p}")


def _random_pvalues(rng):
    """P-values with ties (drawn from a small pool), exact 0s and 1s, and NaNs."""
    m = int(rng.integers(1, 40))
    pool = np.concatenate([rng.uniform(0, 1, 6) ** 3, [0.0, 1.0, 1e-6]])
    p = rng.choice(pool, size=m)
    if rng.random() < 0.5:                                 # some distinct small ones too
        extra = rng.random(m) < 0.3
        p[extra] = rng.uniform(0, 0.2, int(extra.sum()))
    p[rng.random(m) < 0.15] = np.nan
    return p


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_corrections_equal_statsmodels_on_random_families(method, no_gc_collect):
    rng = np.random.default_rng(20250101)
    seen = {"tie": 0, "zero": 0, "one": 0, "nan": 0}
    for _ in range(300):
        p = _random_pvalues(rng)
        q = p[~np.isnan(p)]
        seen["tie"] += np.unique(q).size < q.size
        seen["zero"] += (q == 0).any()
        seen["one"] += (q == 1).any()
        seen["nan"] += np.isnan(p).any()
        _assert_like_statsmodels(p, method)
    assert min(seen.values()) > 20, seen          # every special case was exercised


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_corrections_on_real_pvalues_all_pairs_and_baseline_families(method, no_gc_collect):
    rng = np.random.default_rng(3)
    x = _scores(rng, 12, 7, effects=np.linspace(0, 0.3, 7))
    x[:, 5] = np.round(x[:, 5] * 4) / 4                   # coarse system: ties in the tests
    k = x.shape[1]
    for test, p in pairwise_pvalues(x).items():
        assert p.size == k * (k - 1) // 2
        _assert_like_statsmodels(p, method)
        for b in range(k):
            mask = I.baseline_pairs(k, b)
            assert mask.sum() == k - 1
            got = I.adjust_pvalues(p[mask], method)
            reject, corrected, _, _ = multipletests(p[mask], alpha=0.05, method=STATSMODELS[method])
            np.testing.assert_allclose(got, corrected, rtol=0, atol=1e-12, err_msg=test)
            np.testing.assert_array_equal(got <= 0.05, reject, err_msg=test)


def test_corrections_depend_on_the_family_not_on_its_order():
    rng = np.random.default_rng(5)
    for _ in range(50):
        p = _random_pvalues(rng)
        perm = rng.permutation(p.size)
        for method in ("holm", "bh"):
            np.testing.assert_array_equal(I.adjust_pvalues(p[perm], method), I.adjust_pvalues(p, method)[perm])


def test_corrections_edge_families():
    for method in ("holm", "bh"):
        assert I.adjust_pvalues([], method).shape == (0,)
        assert np.isnan(I.adjust_pvalues([np.nan, np.nan], method)).all()
        np.testing.assert_array_equal(I.adjust_pvalues([0.03], method), [0.03])
        np.testing.assert_array_equal(I.adjust_pvalues([0.03, np.nan], method), [0.03, np.nan])
    # a family of 3 at 0.01: Holm 0.03, 0.03, 0.03 (x3, x2, x1 then running max); BH 0.01
    np.testing.assert_allclose(I.adjust_pvalues([0.01, 0.01, 0.01], "holm"), [0.03] * 3)
    np.testing.assert_allclose(I.adjust_pvalues([0.01, 0.01, 0.01], "bh"), [0.01] * 3)
    # NaN is not in the family: m = 2, not 3
    np.testing.assert_allclose(I.adjust_pvalues([0.01, np.nan, 0.04], "holm"), [0.02, np.nan, 0.04])
    np.testing.assert_allclose(I.adjust_pvalues([0.01, np.nan, 0.04], "bh"), [0.02, np.nan, 0.04])


@pytest.mark.parametrize("k", [2, 3, 6, 9])
def test_baseline_pairs_are_the_pairs_containing_the_baseline(k):
    i, j = pairs(k)
    for b in range(k):
        mask = I.baseline_pairs(k, b)
        assert mask.dtype == bool
        np.testing.assert_array_equal(mask, ref.baseline_family(k, b))
        assert set(zip(i[mask].tolist(), j[mask].tolist())) == {tuple(sorted((b, s))) for s in range(k) if s != b}


# ------------------------------------------------------------- randomised Tukey HSD


def _mc_tolerance(a, b, draws, z=5.0):
    """Half-width for two independent Monte Carlo estimates of the same proportion:
    z binomial standard errors of their difference, sqrt(2 p (1 - p) / B), with p at
    least 1/B so that p-values near 0 get a few counts of slack."""
    p = (np.asarray(a) + np.asarray(b)) / 2
    return z * np.sqrt(2 * np.maximum(p, 1 / draws) * (1 - p) / draws) + 1e-12


TUKEY_B = 2000


@pytest.mark.parametrize("case", ["graded", "one_clearly_different", "identical_pair", "coarse_ties"])
def test_randomised_tukey_hsd_agrees_with_plain_python(case):
    rng = np.random.default_rng({"graded": 1, "one_clearly_different": 2, "identical_pair": 3, "coarse_ties": 4}[case])
    n, k = 15, 8
    if case == "graded":
        x = _scores(rng, n, k, effects=np.linspace(0, 0.35, k))
    elif case == "one_clearly_different":
        x = _scores(rng, n, k)
        x[:, 3] += 1.0
    elif case == "identical_pair":
        x = _scores(rng, n, k, effects=np.linspace(0, 0.2, k))
        x[:, 6] = x[:, 2]
    else:
        x = np.round(_scores(rng, n, k, effects=np.linspace(0, 0.3, k)) * 4) / 4
    got = I.randomised_tukey_hsd(x, permutations=TUKEY_B, seed=11)
    expected = np.array(ref.randomised_tukey_hsd(x.tolist(), TUKEY_B, seed=12))
    assert got.shape == (k * (k - 1) // 2,)
    np.testing.assert_allclose(got * TUKEY_B, np.round(got * TUKEY_B), atol=1e-9)   # count / B
    tol = _mc_tolerance(got, expected, TUKEY_B)
    bad = np.flatnonzero(np.abs(got - expected) > tol)
    assert bad.size == 0, f"pairs {bad}: got {got[bad]}, reference {expected[bad]}, tolerance {tol[bad]}"
    i, j = pairs(k)
    if case == "graded":
        assert expected.min() < 0.05 and expected.max() > 0.5           # p-values across (0, 1)
    if case == "one_clearly_different":
        with_3 = (i == 3) | (j == 3)
        assert got[with_3].max() <= 0.002 and expected[with_3].max() <= 0.002
        assert got[~with_3].min() > 0.2
    if case == "identical_pair":
        assert got[(i == 2) & (j == 6)] == 1.0


def test_randomised_tukey_hsd_identical_systems_have_p_one():
    rng = np.random.default_rng(8)
    col = rng.uniform(0, 1, 15)
    x = np.repeat(col[:, None], 5, axis=1)
    np.testing.assert_array_equal(I.randomised_tukey_hsd(x, 500, seed=1), 1.0)
    # scaled scores that are not exact in binary: mathematically equal means still tie
    y = np.repeat((np.arange(15) % 7 / 7)[:, None], 4, axis=1)
    y[:, 1] = y[::-1, 1]
    np.testing.assert_array_equal(I.randomised_tukey_hsd(y, 500, seed=1), 1.0)


def test_randomised_tukey_hsd_draws_seeded_and_shared_by_transforms():
    rng = np.random.default_rng(9)
    x = _scores(rng, 15, 6, effects=np.linspace(0, 0.3, 6))
    a = I.randomised_tukey_hsd(x, 700, seed=4)
    np.testing.assert_array_equal(a, I.randomised_tukey_hsd(x.tolist(), 700, seed=4))
    assert not np.array_equal(a, I.randomised_tukey_hsd(x, 700, seed=5))
    # a positive affine transform or a per-topic shift permutes the same way: same p-values
    np.testing.assert_array_equal(a, I.randomised_tukey_hsd(3.0 * x + 1.0, 700, seed=4))
    np.testing.assert_array_equal(a, I.randomised_tukey_hsd(x + rng.normal(0, 1, (15, 1)), 700, seed=4))
    # B = 1: every p-value is 0 or 1
    assert set(I.randomised_tukey_hsd(x, 1, seed=0).tolist()) <= {0.0, 1.0}


# --------------------------------------------------------------------- effect sizes


def _effect_matrix(rng):
    x = np.round(rng.uniform(0, 1, (12, 7)) * 8) / 8          # dyadic: differences exact
    x[:, 1] = x[:, 0]                 # d = 0 everywhere: 0
    x[:, 2] = x[:, 0] + 0.25          # d = -0.25 (pair 0-2), constant: -inf
    x[:, 3] = x[:, 1] - 0.5           # d = +0.5 (pairs 0-3, 1-3): +inf
    x[:, 6] = 0.375                   # constant column (a baseline without spread)
    return x


def test_cohens_d_against_statistics():
    rng = np.random.default_rng(12)
    for x in (_scores(rng, 20, 6, effects=np.linspace(0, 0.3, 6)), _scores(rng, 2, 3), _effect_matrix(rng)):
        got = I.cohens_d(x)
        expected = np.array(ref.cohens_d(x.tolist()))
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    got = I.cohens_d(_effect_matrix(rng))
    i, j = pairs(7)
    at = {(a, b): v for a, b, v in zip(i.tolist(), j.tolist(), got.tolist())}
    assert at[(0, 1)] == 0.0
    assert at[(0, 2)] == -math.inf and at[(1, 2)] == -math.inf
    assert at[(0, 3)] == math.inf and at[(1, 3)] == math.inf
    assert at[(2, 3)] == math.inf                                  # d = 0.75
    degenerate = {(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)}
    assert all(math.isfinite(v) and v != 0 for pair, v in at.items() if pair not in degenerate)


def test_cohens_d_is_antisymmetric_and_scale_free():
    rng = np.random.default_rng(13)
    x = _scores(rng, 15, 5, effects=np.linspace(0, 0.3, 5))
    d = I.cohens_d(x)
    flipped = I.cohens_d(x[:, ::-1])          # pair (i, j) becomes (k-1-j, k-1-i): d -> -d
    i, j = pairs(5)
    pos = {(a, b): p for p, (a, b) in enumerate(zip(i.tolist(), j.tolist()))}
    for p, (a, b) in enumerate(zip(i.tolist(), j.tolist())):
        assert flipped[pos[(4 - b, 4 - a)]] == pytest.approx(-d[p], rel=1e-12)
    np.testing.assert_allclose(I.cohens_d(5.0 * x - 2.0), d, rtol=1e-10)


def test_cohens_d_constant_difference_not_exact_in_binary():
    x = np.column_stack([np.full(7, 0.1), np.zeros(7), np.arange(7) / 8])   # d(0, 1) = 0.1 on every topic
    assert ref.cohens_d(x.tolist())[0] == math.inf
    assert I.cohens_d(x)[0] == math.inf


def test_glass_delta_against_plain_formula():
    rng = np.random.default_rng(14)
    x = _scores(rng, 20, 6, effects=np.linspace(0, 0.3, 6))
    for b in range(6):
        got = I.glass_delta(x, b)
        assert got[b] == 0.0
        np.testing.assert_allclose(got, ref.glass_delta(x.tolist(), b), rtol=1e-12, atol=1e-15)
        means = x.mean(axis=0)
        sd = math.sqrt(sum((v - x[:, b].mean()) ** 2 for v in x[:, b]) / 19)
        np.testing.assert_allclose(got, (means - means[b]) / sd, rtol=1e-10, atol=1e-15)
    e = _effect_matrix(rng)
    assert np.isnan(I.glass_delta(e, 6)).all()                     # baseline 0.375 on every topic
    assert np.isnan(ref.glass_delta(e.tolist(), 6)).all()
    np.testing.assert_allclose(I.glass_delta(e, 0), ref.glass_delta(e.tolist(), 0), rtol=1e-12, atol=1e-15)


def test_glass_delta_constant_baseline_not_exact_in_binary():
    x = np.column_stack([np.full(7, 0.1), np.arange(7) / 7])
    assert np.isnan(ref.glass_delta(x.tolist(), 0)).all()
    assert np.isnan(I.glass_delta(x, 0)).all()


# ------------------------------------------------------------------------ bootstrap


def _mean_difference(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def _scipy_ci(x, y, b, level=0.95, paired=True, seed=99):
    res = stats.bootstrap((x, y), _mean_difference, paired=paired, vectorized=True, method="percentile",
                          n_resamples=b, confidence_level=level, rng=np.random.default_rng(seed))
    return res.confidence_interval.low, res.confidence_interval.high, res.bootstrap_distribution.std()


def _quantile_tolerance(level, b, spread, z=4.0):
    """z standard errors of the difference of two independent percentile estimates from B
    resamples each: SE(q) = sqrt(q (1 - q) / B) / f(x_q), the bootstrap distribution of a
    mean taken as normal with standard deviation ``spread`` (f(x_q) = phi(z_q) / spread)."""
    q = (1 - level) / 2
    se = math.sqrt(q * (1 - q) / b) * spread / stats.norm.pdf(stats.norm.ppf(q))
    return z * math.sqrt(2) * se


def _bootstrap_matrix():
    rng = np.random.default_rng(21)
    # strong topic effect: the paired interval is much narrower than an unpaired one
    return _scores(rng, 25, 4, effects=[0.0, 0.05, 0.2, 0.45], topic_sd=1.0, noise=0.2)


@pytest.mark.parametrize(("b", "level"), [(2000, 0.95), (20000, 0.95), (20000, 0.8), (5000, 0.99)])
def test_bootstrap_ci_agrees_with_scipy(b, level):
    x = _bootstrap_matrix()
    low, high = I.bootstrap_ci(x, resamples=b, confidence=level, seed=5)
    for p, (i, j) in enumerate(zip(*pairs(x.shape[1]))):
        lo, hi, spread = _scipy_ci(x[:, i], x[:, j], b, level)
        tol = _quantile_tolerance(level, b, spread)
        assert abs(low[p] - lo) <= tol and abs(high[p] - hi) <= tol, (p, low[p], lo, high[p], hi, tol)
        assert low[p] < high[p]


def test_bootstrap_tolerance_rejects_a_wrong_level_or_an_unpaired_bootstrap():
    """The tolerance above is tight enough to see a 90% instead of a 95% interval, an
    unpaired bootstrap or a swapped sign (so the comparison with SciPy can fail)."""
    x = _bootstrap_matrix()
    b = 20000
    low, high = I.bootstrap_ci(x, resamples=b, confidence=0.95, seed=5)
    for p, (i, j) in enumerate(zip(*pairs(x.shape[1]))):
        _, _, spread = _scipy_ci(x[:, i], x[:, j], b)
        tol = _quantile_tolerance(0.95, b, spread)
        lo90, hi90, _ = _scipy_ci(x[:, i], x[:, j], b, level=0.90)
        assert abs(low[p] - lo90) > tol and abs(high[p] - hi90) > tol
        lo_u, hi_u, _ = _scipy_ci(x[:, i], x[:, j], b, paired=False)
        assert abs(low[p] - lo_u) > tol and abs(high[p] - hi_u) > tol
        lo_s, hi_s, _ = _scipy_ci(x[:, j], x[:, i], b)
        assert abs(low[p] - lo_s) > tol or abs(high[p] - hi_s) > tol


def test_bootstrap_ci_seeded_nested_and_exact_on_constant_differences():
    x = _bootstrap_matrix()
    a = I.bootstrap_ci(x, 3000, 0.95, seed=7)
    c = I.bootstrap_ci(x.tolist(), 3000, 0.95, seed=7)
    np.testing.assert_array_equal(a[0], c[0])
    np.testing.assert_array_equal(a[1], c[1])
    other = I.bootstrap_ci(x, 3000, 0.95, seed=8)
    assert not np.array_equal(a[0], other[0])
    # same resamples at every level: the intervals are nested
    prev_low, prev_high = np.full(6, np.inf), np.full(6, -np.inf)
    for level in (0.5, 0.8, 0.9, 0.95, 0.99):
        low, high = I.bootstrap_ci(x, 3000, level, seed=7)
        assert (low <= prev_low).all() and (high >= prev_high).all()
        prev_low, prev_high = low, high
    # a difference of 0.25 on every topic: every resampled mean is 0.25
    y = np.column_stack([x[:, 0], x[:, 0] - 0.25, x[:, 0]])
    low, high = I.bootstrap_ci(y, 500, 0.95, seed=0)
    np.testing.assert_allclose(low[:2], [0.25, 0.0], atol=1e-12)
    np.testing.assert_allclose(high[:2], [0.25, 0.0], atol=1e-12)
    np.testing.assert_allclose([low[2], high[2]], [-0.25, -0.25], atol=1e-12)


# ------------------------------------------------------------------------ bad input

X = np.arange(24, dtype=float).reshape(6, 4) % 5


BAD_CALLS = {
    "permutations=0": lambda: I.randomised_tukey_hsd(X, permutations=0),
    "permutations=-3": lambda: I.randomised_tukey_hsd(X, permutations=-3),
    "permutations=1.5": lambda: I.randomised_tukey_hsd(X, permutations=1.5),
    "permutations=100.0": lambda: I.randomised_tukey_hsd(X, permutations=100.0),
    "permutations='100'": lambda: I.randomised_tukey_hsd(X, permutations="100"),
    "permutations=True": lambda: I.randomised_tukey_hsd(X, permutations=True),
    "permutations=None": lambda: I.randomised_tukey_hsd(X, permutations=None),
    "resamples=0": lambda: I.bootstrap_ci(X, resamples=0),
    "resamples=1": lambda: I.bootstrap_ci(X, resamples=1),
    "resamples=2.5": lambda: I.bootstrap_ci(X, resamples=2.5),
    "resamples='10'": lambda: I.bootstrap_ci(X, resamples="10"),
    "resamples=np.True_": lambda: I.bootstrap_ci(X, resamples=np.True_),
    "confidence=0": lambda: I.bootstrap_ci(X, confidence=0),
    "confidence=1": lambda: I.bootstrap_ci(X, confidence=1),
    "confidence=1.5": lambda: I.bootstrap_ci(X, confidence=1.5),
    "confidence=-0.1": lambda: I.bootstrap_ci(X, confidence=-0.1),
    "confidence=95": lambda: I.bootstrap_ci(X, confidence=95),
    "confidence=nan": lambda: I.bootstrap_ci(X, confidence=float("nan")),
    "confidence='high'": lambda: I.bootstrap_ci(X, confidence="high"),
    "confidence=None": lambda: I.bootstrap_ci(X, confidence=None),
    "baseline_pairs b=k": lambda: I.baseline_pairs(4, 4),
    "baseline_pairs b=-1": lambda: I.baseline_pairs(4, -1),
    "baseline_pairs b=1.0": lambda: I.baseline_pairs(4, 1.0),
    "baseline_pairs k=1": lambda: I.baseline_pairs(1, 0),
    "glass_delta b=k": lambda: I.glass_delta(X, 4),
    "glass_delta b=-1": lambda: I.glass_delta(X, -1),
    "glass_delta b='0'": lambda: I.glass_delta(X, "0"),
    "adjust unknown": lambda: I.adjust_pvalues([0.1], "bonferroni"),
    "adjust p>1": lambda: I.adjust_pvalues([0.1, 1.2], "holm"),
    "adjust p<0": lambda: I.adjust_pvalues([-0.1, 0.2], "bh"),
    "adjust p=inf": lambda: I.adjust_pvalues([np.inf, 0.2], "bh"),
    "adjust 2-D": lambda: I.adjust_pvalues([[0.1, 0.2]], "holm"),
    "tukey NaN score": lambda: I.randomised_tukey_hsd(np.where(X == 0, np.nan, X)),
    "bootstrap 1 topic": lambda: I.bootstrap_ci(X[:1]),
    "cohens_d 1 system": lambda: I.cohens_d(X[:, :1]),
    "cohens_d 1-D": lambda: I.cohens_d(X[0]),
    "glass_delta inf score": lambda: I.glass_delta(np.where(X == 0, np.inf, X), 0),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_input_raises_irscale_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(SignificanceInputError) as info:
            BAD_CALLS[name]()
    assert isinstance(info.value, IrscaleError)
    assert str(info.value)


def test_bad_input_messages_name_the_parameter():
    for call, words in [(lambda: I.randomised_tukey_hsd(X, permutations=0), "permutations"),
                        (lambda: I.bootstrap_ci(X, resamples=1), "resamples"),
                        (lambda: I.bootstrap_ci(X, confidence=1.5), "confidence"),
                        (lambda: I.baseline_pairs(4, 4), "baseline"),
                        (lambda: I.adjust_pvalues([0.1], "sidak"), "holm, bh")]:
        with pytest.raises(IrscaleError, match=words):
            call()


def test_non_numeric_pvalues_raise_irscale_error():
    with pytest.raises(IrscaleError):
        I.adjust_pvalues(["0.1", "x"], "holm")


@pytest.mark.parametrize("seed", ["abc", 1.5, -1, True])
def test_bad_seed_is_an_irscale_error(seed):
    x = np.arange(12.0).reshape(4, 3)
    with pytest.raises(IrscaleError, match="seed"):
        I.randomised_tukey_hsd(x, 10, seed)
    with pytest.raises(IrscaleError, match="seed"):
        I.bootstrap_ci(x, 10, 0.9, seed)
