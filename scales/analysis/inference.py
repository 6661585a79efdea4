"""Inference over every pair of systems beyond the paper's eight tests: multiple-comparison
corrections, the randomised Tukey HSD test, paired effect sizes and paired bootstrap
confidence intervals.

Inputs are *scores matrices* ``X`` of shape ``(n_topics, n_systems)`` under any
transform (raw, unq, z-scores, ...), as in :mod:`irscale.scales.analysis.significance`;
per-pair outputs are in the order of :func:`~irscale.scales.analysis.significance_input.pairs`
(``i < j``, row-major), the difference of a pair is ``d = X[:, i] - X[:, j]``.

``adjust_pvalues(p, "holm")``
    Holm-Bonferroni step-down adjusted p-values over one family (Holm 1979):
    ``max over s <= r of min(1, (m - s + 1) p_(s))`` for the r-th smallest p-value.
``adjust_pvalues(p, "bh")``
    Benjamini-Hochberg step-up adjusted p-values (false discovery rate, 1995):
    ``min over s >= r of min(1, m p_(s) / s)``.
    A pair is significant after correction when its adjusted p-value is ``<= alpha``,
    which is statsmodels' ``multipletests(p, alpha, "holm" | "fdr_bh")`` decision.
    The family is every pair (all pairs of systems) or, given a baseline, the pairs
    that contain it (:func:`baseline_pairs`); NaN p-values are not in the family.
``randomised_tukey_hsd``
    Randomised Tukey HSD (Carterette, "Multiple testing in statistical analysis of
    systems-based information retrieval experiments", TOIS 2012; Sakai's Discpower):
    B times, the scores of each topic are permuted among the systems (independently per
    topic, the null hypothesis that system labels are exchangeable within a topic), and
    the largest difference between two system means is recorded. The p-value of a pair
    is the fraction of the B permutations whose largest difference is at least the
    pair's observed ``|mean_i - mean_j|`` (``count / B`` as in Discpower; the
    observed labelling is not added). It controls the family-wise error over all pairs
    at once: no further correction.
``randomisation_pvalues``
    Fisher's randomisation test of every pair, paired (Fisher 1935; Smucker, Allan and
    Carterette, CIKM 2007): under the null hypothesis the two systems' scores of a topic
    are exchangeable, so each topic's difference ``d_t`` keeps or flips its sign with
    probability 1/2. The two-sided p-value is the fraction of sign patterns ``s`` with
    ``|sum(s d)| >= |sum(d)|``: over all 2^n patterns (exact) when ``2^n <= B``, else over
    B random patterns (the same for every pair) with the observed one counted,
    ``(count + 1) / (B + 1)``: ``scipy.stats.permutation_test((x, y), mean difference,
    permutation_type="samples")`` in both cases.
``t_interval``, ``paired_differences``
    Student's t interval of each column's mean (``mean -/+ t((1 + confidence)/2, n - 1)
    sd / sqrt(n)``, sd with ddof = 1; NaN with one row), and per pair of columns the mean
    difference, its paired t interval (``scipy.stats.ttest_rel(x, y)
    .confidence_interval()``) and Cohen's d_z (NaN when the differences have no spread).
``cohens_d``
    Paired effect size of every pair: ``mean(d) / sd(d)`` (``ddof=1``; Cohen's d_z).
    0 when all differences are 0, +-inf when they are a non-zero constant.
``glass_delta``
    Against a baseline system b: ``(mean_s - mean_b) / sd(X[:, b])`` (``ddof=1``) for
    every system s (0 for b itself; NaN when the baseline's scores have no spread).
``bootstrap_ci``
    Paired bootstrap percentile confidence interval of ``mean(d)``: B resamples of the
    topics with replacement (the same topics for both systems), the interval between
    the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles (linear
    interpolation, NumPy's default) of the B resampled means, as
    ``scipy.stats.bootstrap((x, y), paired=True, method="percentile")`` computes it.

Random draws come from ``numpy.random.default_rng(seed)``: the same seed gives the same
permutations and resamples whatever the transform, so transforms are compared on the
same random draws.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from irscale.scales.analysis.significance_input import SignificanceInputError, _check_scores, check_fraction, pairs
from irscale.scales.analysis.two_sample import difference_tolerance

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["CORRECTIONS", "adjust_pvalues", "baseline_pairs", "bootstrap_ci", "cohens_d", "glass_delta",
           "paired_differences", "randomisation_pvalues", "randomised_tukey_hsd", "t_interval"]

#: Multiple-comparison corrections of :func:`adjust_pvalues`.
CORRECTIONS = ("holm", "bh")
# Largest number of (permutation or resample) x cell values held at once.
_CHUNK_CELLS = 1 << 22


def _check_count(name: str, value, least: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < least:
        raise SignificanceInputError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def adjust_pvalues(pvalues: ArrayLike, method: str) -> np.ndarray:
    """Adjusted p-values of one family of tests (``method``: ``"holm"`` or ``"bh"``); NaN
    entries are left out of the family and stay NaN. See the module docstring."""
    if method not in CORRECTIONS:
        raise SignificanceInputError(f"unknown correction {method!r}; known: {', '.join(CORRECTIONS)}")
    try:
        p = np.asarray(pvalues, dtype=np.float64)
    except (TypeError, ValueError):
        raise SignificanceInputError("p-values must be numbers") from None
    if p.ndim != 1:
        raise SignificanceInputError(f"p-values must be one-dimensional, got {p.ndim} dimensions")
    out = np.full(p.shape, np.nan)
    keep = np.flatnonzero(~np.isnan(p))
    if keep.size == 0:
        return out
    q = p[keep]
    if ((q < 0) | (q > 1)).any():
        raise SignificanceInputError("p-values must lie in [0, 1]")
    m = q.size
    order = np.argsort(q, kind="stable")
    s = q[order]
    rank = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - rank + 1) * s))
    else:
        adj = np.minimum.accumulate(np.minimum(1.0, m * s / rank)[::-1])[::-1]
    res = np.empty(m)
    res[order] = adj
    out[keep] = res
    return out


def baseline_pairs(n_systems: int, baseline: int) -> np.ndarray:
    """Boolean mask over :func:`pairs` of the pairs that contain system ``baseline``
    (0-based column): the family of a comparison against one baseline."""
    i, j = pairs(n_systems)
    b = _check_count("baseline", baseline, 0)
    if b >= n_systems:
        raise SignificanceInputError(f"baseline must be a system index below {n_systems}, got {baseline}")
    return (i == b) | (j == b)


def _rng(seed) -> np.random.Generator:
    return np.random.default_rng(_check_count("seed", seed, 0))


def randomised_tukey_hsd(scores: ArrayLike, permutations: int = 1000, seed: int = 0) -> np.ndarray:
    """Randomised Tukey HSD p-value of every pair of systems (module docstring).

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.
    permutations : int
        B, the number of random permutations (at least 1).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    numpy.ndarray of float, shape (n_pairs,)
        Multiples of 1/B in [0, 1], in :func:`pairs` order.
    """
    x = _check_scores(scores)
    b = _check_count("permutations", permutations, 1)
    n, k = x.shape
    rng = _rng(seed)
    largest = np.empty(b)
    step = max(1, _CHUNK_CELLS // (n * k))
    for lo in range(0, b, step):
        size = min(step, b - lo)
        shuffled = rng.permuted(np.broadcast_to(x, (size, n, k)), axis=2)
        means = shuffled.mean(axis=1)                    # (size, k)
        largest[lo:lo + size] = means.max(axis=1) - means.min(axis=1)
    means = x.mean(axis=0)
    i, j = pairs(k)
    observed = np.abs(means[i] - means[j])
    # mathematically equal differences computed in different orders may differ in the last bits
    tol = difference_tolerance(x)
    count = b - np.searchsorted(np.sort(largest), observed - tol, side="left")
    return count / b


def _sign_patterns(n: int, permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """(patterns x n matrix of +-1, exact?): every one of the 2^n sign patterns when there
    are at most ``permutations`` of them, else ``permutations`` random ones."""
    if n < 62 and 2 ** n <= permutations:
        codes = np.arange(2 ** n, dtype=np.int64)
        return 1.0 - 2.0 * ((codes[:, None] >> np.arange(n)) & 1), True
    return 1.0 - 2.0 * _rng(seed).integers(0, 2, size=(permutations, n)), False


def randomisation_pvalues(scores: ArrayLike, permutations: int = 1000, seed: int = 0) -> np.ndarray:
    """Fisher's paired randomisation test p-value of every pair of systems (module
    docstring): sign flips of the per-topic differences, two-sided.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.
    permutations : int
        B, the number of random sign patterns (at least 1); with ``2^n_topics <= B``
        every pattern is enumerated instead (the exact test).
    seed : int
        Seed of ``numpy.random.default_rng`` (the same patterns for every pair).

    Returns
    -------
    numpy.ndarray of float, shape (n_pairs,)
        ``count / 2^n`` (exact) or ``(count + 1) / (B + 1)``, in :func:`pairs` order; 1
        when the two systems never differ.
    """
    x = _check_scores(scores)
    b = _check_count("permutations", permutations, 1)
    n, k = x.shape
    signs, exact = _sign_patterns(n, b, _check_count("seed", seed, 0))
    flips = np.ascontiguousarray(signs.T)                # (n, patterns)
    # sums equal in exact arithmetic may differ in their last bits: they tie
    tol = n * difference_tolerance(x)
    out = np.empty(k * (k - 1) // 2)
    for sl, d in _pair_differences(x, signs.shape[0]):
        observed = np.abs(d.sum(axis=1))
        count = np.count_nonzero(np.abs(d @ flips) >= (observed - tol)[:, None], axis=1)
        out[sl] = count / signs.shape[0] if exact else (count + 1) / (b + 1)
    return out


def t_interval(scores: ArrayLike, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Student's t interval of the mean of each column of ``scores`` (rows x columns):
    ``mean -/+ t((1 + confidence)/2, n - 1) sd / sqrt(n)``, sd with ddof = 1 (statsmodels'
    ``DescrStatsW.tconfint_mean``); NaN with fewer than 2 rows. Not cut to any range."""
    from scipy import stats

    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise SignificanceInputError(f"scores must be a 2-D (rows x columns) matrix, got {x.ndim} dimension(s)")
    level = check_fraction("confidence", confidence)
    n = x.shape[0]
    if n < 2:
        return np.full(x.shape[1], np.nan), np.full(x.shape[1], np.nan)
    mean = x.mean(axis=0)
    half = stats.t.ppf((1 + level) / 2, n - 1) * x.std(axis=0, ddof=1) / np.sqrt(n)
    return mean - half, mean + half


def paired_differences(scores: ArrayLike, a: ArrayLike, b: ArrayLike, confidence: float = 0.95
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For the pairs of columns ``(a[p], b[p])`` of ``scores`` (topics x systems), with
    ``d = X[:, a[p]] - X[:, b[p]]``: the mean difference, its paired Student's t interval
    (:func:`t_interval` of d, as ``scipy.stats.ttest_rel(x, y).confidence_interval()``)
    and Cohen's d_z ``mean(d) / sd(d, ddof=1)``, NaN when d has no spread (constant, to
    :func:`~irscale.scales.analysis.two_sample.difference_tolerance`) or fewer than 2
    topics. Returns (difference, low, high, effect), each of shape (pairs,)."""
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise SignificanceInputError(f"scores must be a 2-D (topics x systems) matrix, got {x.ndim} dimension(s)")
    d = x[:, np.asarray(a, dtype=np.intp)] - x[:, np.asarray(b, dtype=np.intp)]
    if x.shape[0] == 0:
        nan = np.full(d.shape[1], np.nan)
        return nan, nan.copy(), nan.copy(), nan.copy()
    mean = d.mean(axis=0)
    low, high = t_interval(d, confidence)
    # a constant d has no spread, whatever the rounding errors of its float differences
    spread = (np.ptp(d, axis=0) > difference_tolerance(x)) & (d.shape[0] >= 2)
    sd = d.std(axis=0, ddof=1) if d.shape[0] >= 2 else np.ones(d.shape[1])
    effect = np.where(spread, mean / np.where(spread, sd, 1.0), np.nan)
    return mean, low, high, effect


def _pair_differences(x: np.ndarray, width: int = 1):
    """(slice, d) chunks of the paired differences, d of shape (pairs, topics), at most
    about ``_CHUNK_CELLS / width`` pairs at a time."""
    """(slice, d) chunks of the paired differences, d of shape (pairs, topics)."""
    n, k = x.shape
    i, j = pairs(k)
    xt = np.ascontiguousarray(x.T)
    step = max(1, _CHUNK_CELLS // max(n, width))
    for lo in range(0, i.size, step):
        yield slice(lo, lo + step), xt[i[lo:lo + step]] - xt[j[lo:lo + step]]


def cohens_d(scores: ArrayLike) -> np.ndarray:
    """Cohen's d_z of every pair: ``mean(d) / sd(d, ddof=1)``, d = X[:, i] - X[:, j];
    0 when d is all zeros, +-inf when d is a non-zero constant; :func:`pairs` order."""
    x = _check_scores(scores)
    k = x.shape[1]
    out = np.empty(k * (k - 1) // 2)
    for sl, d in _pair_differences(x):
        mean = d.mean(axis=1)
        spread = np.ptp(d, axis=1) > 0              # a constant d has no spread, whatever its float sd
        sd = np.where(spread, d.std(axis=1, ddof=1), 1.0)
        out[sl] = np.where(spread, mean / sd, np.sign(d[:, 0]) * np.where(d[:, 0] == 0, 0.0, np.inf))
    return out


def glass_delta(scores: ArrayLike, baseline: int) -> np.ndarray:
    """Glass's delta of every system against system ``baseline`` (0-based column):
    ``(mean_s - mean_b) / sd(X[:, b], ddof=1)``; 0 for the baseline itself, NaN for every
    system when the baseline's scores have no spread. Shape (n_systems,)."""
    x = _check_scores(scores)
    b = _check_count("baseline", baseline, 0)
    if b >= x.shape[1]:
        raise SignificanceInputError(f"baseline must be a system index below {x.shape[1]}, got {baseline}")
    means = x.mean(axis=0)
    if np.ptp(x[:, b]) == 0:
        return np.full(x.shape[1], np.nan)
    sd = x[:, b].std(ddof=1)
    out = (means - means[b]) / sd
    out[b] = 0.0
    return out


def bootstrap_ci(scores: ArrayLike, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Paired bootstrap percentile interval of the mean difference of every pair.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.
    resamples : int
        B, the number of bootstrap resamples of the topics (at least 2).
    confidence : float
        Confidence level in (0, 1).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    (low, high) : tuple of numpy.ndarray, shape (n_pairs,)
        Interval ends of ``mean(X[:, i] - X[:, j])``, in :func:`pairs` order.
    """
    x = _check_scores(scores)
    b = _check_count("resamples", resamples, 2)
    level = check_fraction("confidence", confidence)
    n, k = x.shape
    rng = _rng(seed)
    drawn = rng.integers(0, n, size=(b, n))
    weights = np.bincount((np.arange(b)[:, None] * n + drawn).ravel(), minlength=b * n).reshape(b, n)
    means = np.ascontiguousarray((weights @ x).T / n)     # (systems, B): resampled means
    i, j = pairs(k)
    low, high = np.empty(i.size), np.empty(i.size)
    q = [(1.0 - level) / 2.0, (1.0 + level) / 2.0]
    step = max(1, _CHUNK_CELLS // b)
    for lo in range(0, i.size, step):
        diff = means[i[lo:lo + step]] - means[j[lo:lo + step]]
        low[lo:lo + step], high[lo:lo + step] = np.quantile(diff, q, axis=1)
    return low, high
