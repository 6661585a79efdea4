"""Significance tests over every pair of systems (SPEC section 6).

The input of every function is a *scores matrix* ``X`` of shape ``(n_topics, n_systems)``:
one row per topic, one column per system, the per-topic score of a measure (raw or
interval-scaled; any real unit, only comparisons and differences matter). The output is
one value per *pair* of systems ``(i, j)``, ``i < j``, in the order of
``np.triu_indices(n_systems, k=1)`` (see :func:`pairs`): 50 topics x 129 systems give
8,256 pairs. All tests are two-sided.

Two-sample tests (no multiplicity correction), on the columns ``x = X[:, i]`` and
``y = X[:, j]``. A pair is significant when ``p <= alpha`` (MATLAB's convention in
``signtest``/``ranksum``/``signrank``/``ttest``: ``h = p <= alpha``). The p-values are
those of SciPy (checked pair by pair in ``tests/test_significance.py``), vectorised:

``sign``
    Sign test on the paired differences ``d = x - y``; zero differences are dropped;
    exact two-sided binomial with p = 1/2: the p-value of
    ``scipy.stats.binomtest(k, n, 0.5)`` with ``k = #(d > 0)``, ``n = #(d != 0)``, i.e.
    ``min(1, cdf(m) + sf(n - m - 1))`` with ``m = min(k, n - k)`` (1 when ``k = n/2``).
``ranksum``
    Wilcoxon rank-sum = Mann-Whitney U on ``x`` and ``y`` as independent samples: the
    p-value of ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided")`` with its
    default ``method="auto"``. With ``n_topics > 8`` (e.g. 50) that is always the normal
    approximation with tie correction and continuity correction:
    ``z = (max(U1, U2) - n^2/2 - 1/2) / s``,
    ``s = sqrt(n^2/12 * ((2n + 1) - T / (2n (2n - 1))))``, ``T = sum(t^3 - t)`` over the
    groups of tied values of the 2n pooled scores, ``p = min(1, 2 * Phi(-z))``. With
    ``n_topics <= 8`` SciPy uses the exact null distribution of U when the pooled sample
    has no ties, and so does this module.
``signrank``
    Wilcoxon signed-rank on ``d = x - y``, zero differences dropped
    (``zero_method="wilcox"``): the p-value of
    ``scipy.stats.wilcoxon(x, y, zero_method="wilcox")`` with its default
    ``method="auto"``, which picks one of three methods *per pair*:

    * no zero difference and no tie among ``|d|`` and ``n_topics <= 50``: the exact
      null distribution of ``R+`` (all 2^n sign patterns, ranks 1..n);
    * otherwise, if ``n_topics <= 13``: SciPy's exact permutation test (all 2^n sign
      flips of ``d``; the mid-ranks of the non-zero ``|d|`` are fixed, zeros contribute
      nothing), reproduced here by a dynamic programme over the flips;
    * otherwise (zeros or ties with ``n_topics > 13``, or ``n_topics > 50``): the normal
      approximation with tie correction and *without* continuity correction (SciPy's
      default ``correction=False``): ``z = (R+ - n'(n'+1)/4) / se``,
      ``se = sqrt((n'(n'+1)(2n'+1) - T/2) / 24)``, ``p = 2 Phi(-|z|)``, ``n'`` = number
      of non-zero differences, ``T = sum(t^3 - t)`` over the groups of tied non-zero
      ``|d|``.

    With 50 topics, pairs without zeros or ties get the exact p-value and the others the
    normal approximation, exactly as SciPy does.
``ttest``
    Paired Student's t (``scipy.stats.ttest_rel``): ``t = mean(d) / (sd(d) / sqrt(n))``,
    ``sd`` with ddof = 1, ``n - 1`` degrees of freedom.

Degenerate pairs (conventions; SciPy raises or returns NaN there): when the two columns
give no usable difference - no non-zero difference for ``sign`` (``binomtest`` raises on
n = 0) and ``signrank`` (SciPy: NaN with more than 13 topics, 1 with at most 13), or
``d`` identically zero for ``ttest`` (SciPy: NaN) - the p-value is 1 and the pair is not
significant. A ``ttest`` pair whose differences have zero variance but a non-zero mean
(``y = x + c``, ``c != 0``) has ``|t| = inf`` and p-value 0: significant (SciPy also
returns 0 there). ``ranksum`` with all 2n pooled scores tied has p-value 1 (as SciPy).

Multi-system tests with Tukey HSD comparisons (decisions only, no per-pair p-values).
``q = scipy.stats.studentized_range.ppf(1 - alpha, k, df)`` is computed once per
``(alpha, k, df)`` and cached; ``k = n_systems``, ``n = n_topics``. A pair is significant
when its statistic is *strictly* larger than the critical value (MATLAB's ``multcompare``
marks a pair when its interval ``diff -/+ crit * se`` excludes 0). No test is gated on its
omnibus test (ANOVA F, Kruskal-Wallis H, Friedman chi2): ``multcompare`` does not gate
either.

``anova1``
    One-way ANOVA, system effect, topics as replicates:
    ``|mean_i - mean_j| / sqrt(MSE / n) > q(k, k (n - 1))``, ``MSE`` the within-system
    mean square (as ``statsmodels``' ``pairwise_tukeyhsd`` and ``scipy.stats.tukey_hsd``).
``anova2``
    Two-way ANOVA without interaction (topic + system, one observation per cell), Tukey on
    the system means with the residual mean square:
    ``|mean_i - mean_j| / sqrt(MSE / n) > q(k, (n - 1)(k - 1))``, as MATLAB's
    ``multcompare`` on ``anova2`` stats (``gcov = sigma^2 / n * I``).
``kruskal``
    Kruskal-Wallis: all ``N = n k`` scores ranked together (mid-ranks for ties), ``Rbar_j``
    the mean rank of system j. As ``multcompare`` on ``kruskalwallis`` stats:
    ``|Rbar_i - Rbar_j| > q(k, inf) / sqrt(2) * sqrt(sigma2 * (1/n + 1/n))`` with
    ``sigma2 = N (N + 1) / 12 - sumt / (12 (N - 1))``, ``sumt = sum(t^3 - t)`` over the
    tie groups of the N scores (``kruskalwallis.m``: ``stats.sumt = 2 * tieadj``,
    ``tiedrank``'s ``tieadj = sum(t (t - 1)(t + 1) / 2)``; ``multcompare.m``:
    ``gcov = diag((N*(N+1)/12 - sumt/(12*(N-1))) ./ n)``, Tukey-Kramer critical value
    ``stdrinv(1 - alpha, Inf, ng) / sqrt(2)``). Without ties this is the Nemenyi test of
    ``scikit_posthocs.posthoc_nemenyi(dist="tukey")``; with ties ``sigma2`` equals
    ``N (N + 1) / 12 * (1 - sumt / (N^3 - N))``, the tie factor that ``posthoc_nemenyi``
    applies only with ``dist="chi"`` (its ``"tukey"`` p-values ignore ties).
``friedman``
    Friedman: ranks within each topic (mid-ranks for ties), ``Rbar_j`` the mean rank of
    system j over the n topics. As ``multcompare`` on ``friedman`` stats:
    ``|Rbar_i - Rbar_j| > q(k, inf) / sqrt(2) * sqrt(2 sigma2 / n)`` with
    ``sigma2 = k (k + 1) / 12 - sumta / (12 n (k - 1))``, ``sumta = sum(t^3 - t)`` over
    the tie groups within each topic (``friedman.m`` with reps = 1:
    ``sigmasq = c*(c+1)/12 - sumta/(12*r*(c-1))``, ``stats.sigma = sqrt(sigmasq)``;
    ``multcompare.m``: ``gcov = sigma^2 / n * I``). Without ties this is
    ``scikit_posthocs.posthoc_nemenyi_friedman``.

MATLAB's Tukey-Kramer critical value is ``min(stdrinv(...) / sqrt(2), Dunn-Sidak
bound)``; the Dunn-Sidak bound only guards MATLAB's approximate ``stdrinv`` and is never
smaller than the exact studentized-range quantile (Sidak's inequality), so it is not
applied here (the tests check that it never binds for the shapes used).

Differences of equal size computed from different scores carry different rounding errors;
the signed-rank test ties non-zero ``|d|`` that are within 64 ulps of the largest |score|
(:func:`difference_tolerance`), so that mathematically equal differences always tie (an
affine map of the scores then never changes a decision). Scores themselves are compared
exactly: equal values from irscale are equal floats.

Decisions for ``kruskal`` and ``friedman`` are computed from rank *sums* (exact
half-integers), so equal mean ranks are never separated by float noise: ``sign`` and
``friedman`` decisions depend only on the order of the scores within each topic.
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from scipy import special, stats

from irscale.errors import IrscaleError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = [
    "TESTS", "TWO_SAMPLE_TESTS", "MULTI_SYSTEM_TESTS", "ALPHA", "SignificanceInputError",
    "pairs", "pairwise_significance", "pairwise_pvalues", "pairwise_decisions",
    "pairwise_directions", "tukey_critical_value",
    "sign_pvalues", "ranksum_pvalues", "signrank_pvalues", "ttest_pvalues",
    "anova1_tukey", "anova2_tukey", "kruskal_tukey", "friedman_tukey",
]

#: Every test, in the order of SPEC section 6.
TESTS = ("sign", "ranksum", "signrank", "ttest", "anova1", "anova2", "kruskal", "friedman")
#: Tests with a p-value per pair (no multiplicity correction).
TWO_SAMPLE_TESTS = ("sign", "ranksum", "signrank", "ttest")
#: Tests with Tukey HSD decisions over all systems.
MULTI_SYSTEM_TESTS = ("anova1", "anova2", "kruskal", "friedman")
#: Default significance level.
ALPHA = 0.05

# Largest number of pair x topic cells handled at once (memory bound for many systems).
_CHUNK_CELLS = 1 << 21
# Largest systems x distinct-values histogram for the rank-sum matrix products.
_DENSE_HISTOGRAM_CELLS = 1 << 23
# SciPy's switches (scipy.stats.wilcoxon, mannwhitneyu with method="auto").
_WILCOXON_EXACT_MAX_N = 50       # "auto" uses the normal approximation above 50
_WILCOXON_PERMUTATION_MAX_N = 13  # 2**13 < 9999 resamples: exact permutation test
_MWU_EXACT_MAX_N = 8             # exact U distribution unless both samples exceed 8


class SignificanceInputError(IrscaleError, ValueError):
    """The scores matrix or a parameter of a significance test is invalid."""


# --------------------------------------------------------------------------- input


def _check_scores(scores) -> np.ndarray:
    try:
        x = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SignificanceInputError(f"scores must be a numeric matrix: {exc}") from None
    if x.ndim != 2:
        raise SignificanceInputError(
            f"scores must be a 2-D (topics x systems) matrix, got {x.ndim} dimension(s)")
    n, k = x.shape
    if n < 2 or k < 2:
        raise SignificanceInputError(
            f"scores need at least 2 topics and 2 systems, got {n} x {k}")
    if not np.isfinite(x).all():
        bad = "NaN" if np.isnan(x).any() else "infinite values"
        raise SignificanceInputError(f"scores contain {bad}")
    return x


def check_fraction(name: str, value: object) -> float:
    """``value`` as a float strictly between 0 and 1 (a significance or confidence level),
    else a :class:`SignificanceInputError` naming ``name``."""
    try:
        a = float(value)
    except (TypeError, ValueError):
        raise SignificanceInputError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < a < 1.0:
        raise SignificanceInputError(f"{name} must be in (0, 1), got {value!r}")
    return a


def _check_alpha(alpha) -> float:
    return check_fraction("alpha", alpha)


def _check_tests(tests, allowed) -> tuple[str, ...]:
    if isinstance(tests, str):
        tests = (tests,)
    tests = tuple(tests)
    unknown = [t for t in tests if t not in allowed]
    if unknown:
        raise SignificanceInputError(
            f"unknown test(s) {', '.join(map(repr, unknown))}; known: {', '.join(allowed)}")
    return tests


def pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(i, j)``, ``i < j``, of every pair of systems.

    Parameters
    ----------
    n_systems : int
        Number of systems (columns of the scores matrix), at least 2.

    Returns
    -------
    (i, j) : tuple of numpy.ndarray of int
        ``np.triu_indices(n_systems, k=1)``: row-major order (0, 1), (0, 2), ...,
        (0, k-1), (1, 2), ...; ``n_systems * (n_systems - 1) / 2`` pairs. Every per-pair
        output of this module is in this order.
    """
    if isinstance(n_systems, (bool, np.bool_)) or not isinstance(n_systems, (int, np.integer)):
        raise SignificanceInputError(f"n_systems must be an integer, got {n_systems!r}")
    if n_systems < 2:
        raise SignificanceInputError(f"n_systems must be at least 2, got {n_systems}")
    return np.triu_indices(int(n_systems), k=1)


def _pair_chunks(n_topics: int, n_systems: int):
    i, j = pairs(n_systems)
    step = max(1, _CHUNK_CELLS // n_topics)
    for lo in range(0, i.size, step):
        yield slice(lo, lo + step), i[lo:lo + step], j[lo:lo + step]


# ----------------------------------------------------------------- rank helpers


def _sorted_tie_groups(s: np.ndarray, tol: float = 0.0):
    """For ``s`` sorted along the last axis: 0-based first and last position of the tie
    group of each element (same shape as ``s``); neighbours at most ``tol`` apart tie."""
    m = s.shape[-1]
    pos = np.arange(m)
    neq = (s[..., 1:] - s[..., :-1]) > tol
    edge = np.ones(s.shape[:-1] + (1,), dtype=bool)
    start = np.concatenate([edge, neq], axis=-1)
    end = np.concatenate([neq, edge], axis=-1)
    first = np.maximum.accumulate(np.where(start, pos, 0), axis=-1)
    last = np.minimum.accumulate(np.where(end, pos, m - 1)[..., ::-1], axis=-1)[..., ::-1]
    return first, last


def _midranks_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks (1-based) along the last axis and ``sum(t^3 - t)`` over the tie groups of
    each row."""
    order = np.argsort(x, axis=-1, kind="stable")
    s = np.take_along_axis(x, order, axis=-1)
    first, last = _sorted_tie_groups(s)
    t = (last - first + 1).astype(np.float64)
    ranks = np.empty_like(s)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=-1)
    # each member of a group of size t contributes t^2 - 1: the group gives t^3 - t
    return ranks, (t * t - 1.0).sum(axis=-1)


# ----------------------------------------------------------- exact distributions


@cache
def _sign_table(n_max: int) -> np.ndarray:
    """``table[n, m]``: two-sided binomial (p = 1/2) p-value for n trials with
    ``m = min(k, n - k)`` successes, as ``scipy.stats.binomtest`` computes it
    (``cdf(m) + sf(n - m - 1)``, 1 when ``k = n/2``, capped at 1). ``n = 0``: 1."""
    n = np.arange(n_max + 1)[:, None]
    m = np.arange(n_max // 2 + 1)[None, :]
    with np.errstate(invalid="ignore"):
        p = stats.binom.cdf(m, n, 0.5) + stats.binom.sf(n - m - 1, n, 0.5)
    p = np.minimum(1.0, p)
    p[2 * m == n] = 1.0
    p[0, :] = 1.0
    p[~(2 * m <= n)] = np.nan  # unused cells
    p.setflags(write=False)
    return p


@cache
def _wilcoxon_cdf(n: int) -> np.ndarray:
    """``cdf[r] = P(R+ <= r)`` of the exact signed-rank statistic for n untied, non-zero
    differences (ranks 1..n); counts are exact integers in float64 for n <= 50."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[:-r].copy()
    cdf = np.cumsum(counts) / 2.0 ** n
    cdf.setflags(write=False)
    return cdf


@cache
def _mwu_cdf(n1: int, n2: int) -> np.ndarray:
    """``cdf[u] = P(U <= u)`` of the exact Mann-Whitney statistic without ties."""
    # c[a][b]: counts of U over arrangements of a x's and b y's, U = #(x > y) pairs
    # recursion on the largest element: it is an x (adds b to U) or a y.
    table = {}

    def counts(a, b):
        if (a, b) in table:
            return table[(a, b)]
        if a == 0 or b == 0:
            out = np.zeros(a * b + 1)
            out[0] = 1.0
        else:
            out = np.zeros(a * b + 1)
            ca = counts(a - 1, b)
            out[b:b + ca.size] += ca
            cb = counts(a, b - 1)
            out[:cb.size] += cb
        table[(a, b)] = out
        return out

    c = counts(n1, n2)
    cdf = np.cumsum(c) / c.sum()
    cdf.setflags(write=False)
    return cdf


@cache
def tukey_critical_value(alpha: float, k: int, df: float) -> float:
    """Upper ``alpha`` quantile of the studentized range for k means and df degrees of
    freedom (``df = inf`` for the rank tests): ``studentized_range.ppf(1 - alpha, k, df)``.
    Cached: the finite-df quantile costs ~0.2 s."""
    return float(stats.studentized_range.ppf(1.0 - alpha, k, df))


# ------------------------------------------------------ two-sample, per chunk


def _sign_chunk(d: np.ndarray) -> np.ndarray:
    """``d``: (pairs, topics) differences."""
    pos = np.count_nonzero(d > 0, axis=1)
    n = pos + np.count_nonzero(d < 0, axis=1)
    m = np.minimum(pos, n - pos)
    return _sign_table(d.shape[1])[n, m].copy()


def _ttest_chunk(d: np.ndarray) -> np.ndarray:
    n = d.shape[1]
    mean = d.mean(axis=1)
    var = ((d - mean[:, None]) ** 2).sum(axis=1) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
        p = 2.0 * special.stdtr(n - 1, -np.abs(t))
    zero_var = var == 0
    p[zero_var] = np.where(mean[zero_var] == 0, 1.0, 0.0)
    return p


def _sorted_differences(d: np.ndarray, tol: float):
    """|d| sorted per row, whether each sorted difference is positive, and the first and
    last position of its tie group (zeros, sorted first, tie only with each other,
    whatever the tolerance)."""
    a = np.abs(d)
    order = np.argsort(a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, axis=1)
    positive = np.take_along_axis(d, order, axis=1) > 0
    with np.errstate(invalid="ignore"):
        first, last = _sorted_tie_groups(np.where(s == 0, -np.inf, s), tol)
    return s, positive, first, last


def _signrank_direction_chunk(d: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Sign of ``R+ - R-`` (mid-ranks of the non-zero |d|; exact half-integers)."""
    n = d.shape[1]
    s, positive, first, last = _sorted_differences(d, tol)
    n0 = n - np.count_nonzero(s != 0, axis=1)
    count = n - n0
    r_plus = np.where(positive, (first + last) / 2.0 + 1.0 - n0[:, None], 0.0).sum(axis=1)
    return np.sign(4.0 * r_plus - count * (count + 1.0)).astype(np.int8)


def _signrank_chunk(d: np.ndarray, tol: float = 0.0) -> np.ndarray:
    n = d.shape[1]
    s, positive, first, last = _sorted_differences(d, tol)
    nonzero = s != 0
    n0 = n - np.count_nonzero(nonzero, axis=1)          # zeros sort first
    count = n - n0
    # mid-rank among the non-zero |d| = mid-rank among all minus the number of zeros
    r_plus = np.where(positive, (first + last) / 2.0 + 1.0 - n0[:, None], 0.0).sum(axis=1)
    t = (last - first + 1).astype(np.float64)
    tie = np.where(nonzero, t * t - 1.0, 0.0).sum(axis=1)

    p = np.ones(d.shape[0])
    exact = (n0 == 0) & (tie == 0) & (n <= _WILCOXON_EXACT_MAX_N)
    perm = ~exact & (n <= _WILCOXON_PERMUTATION_MAX_N) & (count > 0)
    asym = ~exact & (n > _WILCOXON_PERMUTATION_MAX_N) & (count > 0)

    if exact.any():
        cdf = _wilcoxon_cdf(n)
        rp = np.rint(r_plus[exact]).astype(np.int64)
        lo = np.minimum(rp, n * (n + 1) // 2 - rp)
        p[exact] = np.minimum(1.0, 2.0 * cdf[lo])

    if perm.any():
        p[perm] = _signrank_permutation(
            np.where(nonzero[perm], 2.0 * ((first + last)[perm] / 2.0 + 1.0 - n0[perm, None]), 0.0),
            positive[perm])

    if asym.any():
        c = count[asym].astype(np.float64)
        mn = c * (c + 1.0) * 0.25
        se = np.sqrt((c * (c + 1.0) * (2.0 * c + 1.0) - tie[asym] / 2.0) / 24.0)
        z = (r_plus[asym] - mn) / se                      # no continuity correction
        p[asym] = 2.0 * special.ndtr(-np.abs(z))
    return p


def _signrank_permutation(w2: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """Exact permutation p-value of R+ over all sign flips (SciPy's
    ``PermutationMethod`` with 2^n <= 9999 resamples). ``w2``: (pairs, n) twice the
    mid-ranks of the non-zero |d| (0 for zeros: a flipped zero changes nothing)."""
    w = np.rint(w2).astype(np.int64)
    top = int(w.sum(axis=1).max())
    rows = np.arange(w.shape[0])[:, None]
    grid = np.arange(top + 1)[None, :]
    counts = np.zeros((w.shape[0], top + 1))
    counts[:, 0] = 1.0
    for col in range(w.shape[1]):
        src = grid - w[:, col:col + 1]
        counts = counts + np.where(src >= 0, counts[rows, np.maximum(src, 0)], 0.0)
    total = counts.sum(axis=1)
    obs = np.where(positive, w, 0).sum(axis=1)
    cum = np.cumsum(counts, axis=1)
    below = cum[rows[:, 0], obs] / total                            # P(T <= obs)
    above = (total - np.where(obs > 0, cum[rows[:, 0], np.maximum(obs - 1, 0)], 0.0)) / total
    return np.minimum(1.0, 2.0 * np.minimum(below, above))


def _ranksum_counts(x: np.ndarray):
    """For every ordered pair of columns (i, j): ``u1[i, j] = sum over x = X[:, i] of
    #(y < x) + #(y == x) / 2`` with ``y = X[:, j]`` (the U statistic of x), and
    ``cross[i, j] = sum over the distinct values v of h_i(v)^2 h_j(v)``, ``h_j(v)`` the
    number of scores of system j equal to v. Exact integers (or halves) in float64."""
    n, k = x.shape
    uniq, inv = np.unique(x, return_inverse=True)
    m = uniq.size
    inv = inv.reshape(n, k)
    if k * m <= _DENSE_HISTOGRAM_CELLS:
        cols = np.broadcast_to(np.arange(k), (n, k))
        h = np.bincount((cols * m + inv).ravel(), minlength=k * m)
        h = h.reshape(k, m).astype(np.float64)          # h[j, v]: #(X[:, j] == uniq[v])
        g = np.cumsum(h, axis=1) - 0.5 * h               # #(y < v) + #(y == v) / 2
        return h @ g.T, (h * h) @ h.T
    # many systems and distinct values: one column j at a time, O(n k) memory
    srt = np.sort(inv, axis=0)
    own = np.empty((n, k))                               # h_i(x) for every score x of i
    for i in range(k):
        own[:, i] = (np.searchsorted(srt[:, i], inv[:, i], "right")
                     - np.searchsorted(srt[:, i], inv[:, i], "left"))
    u1 = np.empty((k, k))
    cross = np.empty((k, k))
    for j in range(k):
        left = np.searchsorted(srt[:, j], inv, "left")
        eq = np.searchsorted(srt[:, j], inv, "right") - left
        u1[:, j] = (left + 0.5 * eq).sum(axis=0)
        cross[:, j] = (own * eq).sum(axis=0)            # sum over x of h_i(x) h_j(x)
    return u1, cross


def _ranksum_all(x: np.ndarray) -> np.ndarray:
    """Mann-Whitney p-values for every pair of columns (all pairs at once)."""
    n, k = x.shape
    u1m, cross = _ranksum_counts(x)
    i, j = pairs(k)
    u1 = u1m[i, j]
    s3 = np.diag(cross)                                  # sum_v h_i^3
    tie = s3[i] + s3[j] + 3.0 * cross[i, j] + 3.0 * cross[j, i] - 2.0 * n  # sum (t^3 - t)

    n1 = n2 = float(n)
    u = np.maximum(u1, n1 * n2 - u1)
    if n <= _MWU_EXACT_MAX_N:
        exact = tie == 0
    else:
        exact = np.zeros(u.shape, dtype=bool)
    p = np.empty(u.shape)
    mu = n1 * n2 / 2
    nn = n1 + n2
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.sqrt(n1 * n2 / 12 * ((nn + 1) - tie / (nn * (nn - 1))))
        z = (u - mu - 0.5) / s
    p[:] = 2.0 * special.ndtr(-z)
    if exact.any():
        cdf = _mwu_cdf(n, n)
        lo = np.rint(n1 * n2 - u[exact]).astype(np.int64)  # P(U >= u) = P(U <= n1 n2 - u)
        p[exact] = 2.0 * cdf[lo]
    return np.clip(p, 0.0, 1.0)


#: Differences |d| closer than this many units in the last place of the largest score tie
#: in the signed-rank test (see :func:`difference_tolerance`).
TIE_ULPS = 64


def difference_tolerance(x: np.ndarray) -> float:
    """Two differences ``|x_a - x_b|`` and ``|x_c - x_d|`` of mathematically equal size
    are computed with different rounding errors (scaled scores such as id / (2^N - 1) are
    not exact in binary), which would break their tie at random. The signed-rank test
    therefore ties differences at most ``TIE_ULPS`` ulps of the largest |score| apart:
    64 * 2.2e-16 * max|x|, far below the smallest difference a scale can produce between
    distinct values (e.g. 9.3e-10 for RBP(p=0.5)@30)."""
    return TIE_ULPS * np.finfo(np.float64).eps * float(np.abs(x).max(initial=0.0))


_CHUNK_TESTS = {"sign": _sign_chunk, "signrank": _signrank_chunk, "ttest": _ttest_chunk}


def _two_sample_pvalues(x: np.ndarray, tests) -> dict[str, np.ndarray]:
    n, k = x.shape
    n_pairs = k * (k - 1) // 2
    out = {}
    paired = [t for t in tests if t in _CHUNK_TESTS]
    if paired:
        for t in paired:
            out[t] = np.empty(n_pairs)
        xt = np.ascontiguousarray(x.T)
        tol = difference_tolerance(x)
        for sl, i, j in _pair_chunks(n, k):
            d = xt[i] - xt[j]                            # (pairs, topics), d = x - y
            for t in paired:
                out[t][sl] = _signrank_chunk(d, tol) if t == "signrank" else _CHUNK_TESTS[t](d)
    if "ranksum" in tests:
        out["ranksum"] = _ranksum_all(x)
    return {t: out[t] for t in tests}


def pairwise_directions(scores: ArrayLike, tests: str | Iterable[str] = TESTS) -> dict[str, np.ndarray]:
    """For every pair (i, j) (:func:`pairs` order), the sign (int8: -1, 0, 1) of the
    statistic each test reads as "i above j": wins minus losses (sign), R+ - R-
    (signrank, zeros dropped, mid-ranks), U_i - n^2/2 (ranksum), the difference of means
    (ttest, anova1, anova2), of global rank sums (kruskal), of within-topic rank sums
    (friedman). Rank sums are exact half-integers: equal sums give 0."""
    x = _check_scores(scores)
    tests = _check_tests(tests, TESTS)
    n, k = x.shape
    i, j = pairs(k)
    out: dict[str, np.ndarray] = {}
    paired = [t for t in tests if t in ("sign", "signrank")]
    if paired:
        for t in paired:
            out[t] = np.empty(i.size, dtype=np.int8)
        xt = np.ascontiguousarray(x.T)
        tol = difference_tolerance(x)
        for sl, a, b in _pair_chunks(n, k):
            d = xt[a] - xt[b]
            if "sign" in paired:
                out["sign"][sl] = np.sign(np.count_nonzero(d > 0, axis=1) - np.count_nonzero(d < 0, axis=1))
            if "signrank" in paired:
                out["signrank"][sl] = _signrank_direction_chunk(d, tol)
    if "ranksum" in tests:
        u1 = _ranksum_counts(x)[0]
        out["ranksum"] = np.sign(u1[i, j] - n * n / 2.0).astype(np.int8)
    means = x.mean(axis=0)
    for t in ("ttest", "anova1", "anova2"):
        if t in tests:
            out[t] = np.sign(means[i] - means[j]).astype(np.int8)
    if "kruskal" in tests:
        _, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
        mid = np.cumsum(cnt.astype(np.float64)) - (cnt - 1.0) / 2.0
        sums = mid[inv.reshape(n, k)].sum(axis=0)
        out["kruskal"] = np.sign(sums[i] - sums[j]).astype(np.int8)
    if "friedman" in tests:
        sums = _midranks_rows(x)[0].sum(axis=0)
        out["friedman"] = np.sign(sums[i] - sums[j]).astype(np.int8)
    return {t: out[t] for t in tests}


def sign_pvalues(scores: ArrayLike) -> np.ndarray:
    """Sign test p-value of every pair of systems.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.

    Returns
    -------
    numpy.ndarray of float, shape (n_pairs,)
        Two-sided exact binomial p-value (p = 1/2) of the number of topics where system i
        beats system j among the topics where they differ (ties dropped), in
        :func:`pairs` order; equal to ``scipy.stats.binomtest(k, n, 0.5).pvalue``. 1 when
        the systems never differ.
    """
    return _two_sample_pvalues(_check_scores(scores), ("sign",))["sign"]


def ranksum_pvalues(scores: ArrayLike) -> np.ndarray:
    """Wilcoxon rank-sum (Mann-Whitney U) p-value of every pair of systems.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite. The two columns are treated as independent samples.

    Returns
    -------
    numpy.ndarray of float, shape (n_pairs,)
        ``scipy.stats.mannwhitneyu(x, y, alternative="two-sided").pvalue`` (default
        method: normal approximation with tie and continuity corrections for more than 8
        topics; exact without ties for at most 8), in :func:`pairs` order.
    """
    return _two_sample_pvalues(_check_scores(scores), ("ranksum",))["ranksum"]


def signrank_pvalues(scores: ArrayLike) -> np.ndarray:
    """Wilcoxon signed-rank p-value of every pair of systems (zero differences dropped).

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.

    Returns
    -------
    numpy.ndarray of float, shape (n_pairs,)
        ``scipy.stats.wilcoxon(x, y, zero_method="wilcox").pvalue`` with SciPy's default
        per-pair choice of exact / permutation / normal approximation (see the module
        docstring), in :func:`pairs` order; 1 when all differences are zero.
    """
    return _two_sample_pvalues(_check_scores(scores), ("signrank",))["signrank"]


def ttest_pvalues(scores: ArrayLike) -> np.ndarray:
    """Paired Student's t-test p-value of every pair of systems.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.

    Returns
    -------
    numpy.ndarray of float, shape (n_pairs,)
        ``scipy.stats.ttest_rel(x, y).pvalue`` (n_topics - 1 degrees of freedom), in
        :func:`pairs` order. Differences with zero variance: 1 if they are all zero
        (SciPy: NaN), 0 otherwise (infinite t).
    """
    return _two_sample_pvalues(_check_scores(scores), ("ttest",))["ttest"]


# ----------------------------------------------------------- multi-system tests


def _anova1(x: np.ndarray, alpha: float) -> np.ndarray:
    n, k = x.shape
    means = x.mean(axis=0)
    df = k * (n - 1)
    mse = ((x - means) ** 2).sum() / df
    q = tukey_critical_value(alpha, k, df)
    i, j = pairs(k)
    return np.abs(means[i] - means[j]) > q * np.sqrt(mse / n)


def _anova2(x: np.ndarray, alpha: float) -> np.ndarray:
    n, k = x.shape
    means = x.mean(axis=0)
    resid = x - x.mean(axis=1, keepdims=True) - means + x.mean()
    df = (n - 1) * (k - 1)
    mse = (resid ** 2).sum() / df
    q = tukey_critical_value(alpha, k, df)
    i, j = pairs(k)
    return np.abs(means[i] - means[j]) > q * np.sqrt(mse / n)


def _rank_sum_decisions(rank_sums: np.ndarray, sigma2: float, n: int, q: float) -> np.ndarray:
    # |R_i/n - R_j/n| > q/sqrt(2) * sqrt(2 sigma2 / n)  <=>  |R_i - R_j| > q sqrt(n sigma2)
    i, j = pairs(rank_sums.size)
    return np.abs(rank_sums[i] - rank_sums[j]) > q * np.sqrt(max(sigma2, 0.0) * n)


def _kruskal(x: np.ndarray, alpha: float) -> np.ndarray:
    n, k = x.shape
    big_n = n * k
    _, inv, cnt = np.unique(x, return_inverse=True, return_counts=True)
    cnt = cnt.astype(np.float64)
    mid = np.cumsum(cnt) - (cnt - 1.0) / 2.0           # mid-rank of each distinct value
    rank_sums = mid[inv.reshape(n, k)].sum(axis=0)
    sumt = float((cnt ** 3 - cnt).sum())
    sigma2 = big_n * (big_n + 1) / 12 - sumt / (12 * (big_n - 1))
    return _rank_sum_decisions(rank_sums, sigma2, n, tukey_critical_value(alpha, k, np.inf))


def _friedman(x: np.ndarray, alpha: float) -> np.ndarray:
    n, k = x.shape
    ranks, tie = _midranks_rows(x)
    rank_sums = ranks.sum(axis=0)
    sumta = float(tie.sum())
    sigma2 = k * (k + 1) / 12 - sumta / (12 * n * (k - 1))
    return _rank_sum_decisions(rank_sums, sigma2, n, tukey_critical_value(alpha, k, np.inf))


def anova1_tukey(scores: ArrayLike, alpha: float = ALPHA) -> np.ndarray:
    """One-way ANOVA (system effect, topics as replicates) with Tukey HSD decisions.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite.
    alpha : float
        Family-wise significance level, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool, shape (n_pairs,)
        ``|mean_i - mean_j| / sqrt(MSE_within / n_topics) > q``,
        ``q = studentized_range.ppf(1 - alpha, n_systems, n_systems * (n_topics - 1))``,
        in :func:`pairs` order (the ``reject`` of statsmodels' ``pairwise_tukeyhsd``).
    """
    return _anova1(_check_scores(scores), _check_alpha(alpha))


def anova2_tukey(scores: ArrayLike, alpha: float = ALPHA) -> np.ndarray:
    """Two-way ANOVA without interaction (topic + system) with Tukey HSD decisions.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite; one observation per (topic, system) cell.
    alpha : float
        Family-wise significance level, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool, shape (n_pairs,)
        ``|mean_i - mean_j| / sqrt(MSE_resid / n_topics) > q``,
        ``q = studentized_range.ppf(1 - alpha, n_systems, (n_topics - 1)(n_systems - 1))``,
        ``MSE_resid`` the residual mean square of ``score ~ topic + system``; in
        :func:`pairs` order.
    """
    return _anova2(_check_scores(scores), _check_alpha(alpha))


def kruskal_tukey(scores: ArrayLike, alpha: float = ALPHA) -> np.ndarray:
    """Kruskal-Wallis with Tukey-type comparisons of mean ranks (MATLAB ``multcompare``).

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite. All ``N = n_topics * n_systems`` scores are ranked
        together (mid-ranks for ties); topics are ignored.
    alpha : float
        Family-wise significance level, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool, shape (n_pairs,)
        ``|Rbar_i - Rbar_j| > q / sqrt(2) * sqrt(sigma2 * 2 / n_topics)``,
        ``q = studentized_range.ppf(1 - alpha, n_systems, inf)``,
        ``sigma2 = N (N + 1) / 12 - sum(t^3 - t) / (12 (N - 1))``; in :func:`pairs` order.
    """
    return _kruskal(_check_scores(scores), _check_alpha(alpha))


def friedman_tukey(scores: ArrayLike, alpha: float = ALPHA) -> np.ndarray:
    """Friedman with Tukey-type comparisons of mean ranks (MATLAB ``multcompare``).

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores, finite. Ranked within each topic (mid-ranks for ties).
    alpha : float
        Family-wise significance level, in (0, 1).

    Returns
    -------
    numpy.ndarray of bool, shape (n_pairs,)
        ``|Rbar_i - Rbar_j| > q / sqrt(2) * sqrt(sigma2 * 2 / n_topics)``,
        ``q = studentized_range.ppf(1 - alpha, n_systems, inf)``,
        ``sigma2 = k (k + 1) / 12 - sum(t^3 - t) / (12 n_topics (k - 1))`` (sum over the
        tie groups within every topic, ``k = n_systems``); in :func:`pairs` order.
    """
    return _friedman(_check_scores(scores), _check_alpha(alpha))


_MULTI = {"anova1": _anova1, "anova2": _anova2, "kruskal": _kruskal, "friedman": _friedman}


# --------------------------------------------------------------------- public API


def pairwise_pvalues(scores: ArrayLike, tests: str | Iterable[str] = TWO_SAMPLE_TESTS) -> dict[str, np.ndarray]:
    """P-values of the two-sample tests for every pair of systems.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores (topics x systems), finite; at least 2 x 2.
    tests : str or sequence of str
        Names among :data:`TWO_SAMPLE_TESTS` (``sign``, ``ranksum``, ``signrank``,
        ``ttest``); the multi-system tests have decisions only.

    Returns
    -------
    dict of str to numpy.ndarray of float, shape (n_pairs,)
        Two-sided p-value per pair in :func:`pairs` order, keyed by test name in the
        order of ``tests``. See the module docstring for methods and conventions.

    Raises
    ------
    SignificanceInputError (a ValueError)
        Bad matrix (not 2-D, fewer than 2 topics or systems, NaN or infinite values) or an
        unknown test.
    """
    x = _check_scores(scores)
    tests = _check_tests(tests, TWO_SAMPLE_TESTS)
    return _two_sample_pvalues(x, tests)


def pairwise_significance(scores: ArrayLike, tests: str | Iterable[str] = TESTS, alpha: float = ALPHA
                          ) -> dict[str, np.ndarray]:
    """Significance decision of every test for every pair of systems.

    Parameters
    ----------
    scores : array_like, shape (n_topics, n_systems)
        Per-topic scores (topics x systems), finite; at least 2 x 2.
    tests : str or sequence of str
        Names among :data:`TESTS`; default all eight.
    alpha : float
        Significance level in (0, 1): per pair for the two-sample tests (significant when
        ``p <= alpha``), family-wise for the Tukey HSD tests (significant when the
        statistic exceeds the critical value).

    Returns
    -------
    dict of str to numpy.ndarray of bool, shape (n_pairs,)
        True where the pair ``(i, j)`` (:func:`pairs` order) differs significantly, keyed
        by test name in the order of ``tests``.

    Raises
    ------
    SignificanceInputError (a ValueError)
        Bad matrix, unknown test or alpha outside (0, 1).
    """
    x = _check_scores(scores)
    tests = _check_tests(tests, TESTS)
    alpha = _check_alpha(alpha)
    two = [t for t in tests if t in TWO_SAMPLE_TESTS]
    pv = _two_sample_pvalues(x, two) if two else {}
    out = {}
    for t in tests:
        out[t] = pv[t] <= alpha if t in pv else _MULTI[t](x, alpha)
    return out


def pairwise_decisions(scores: ArrayLike, tests: str | Iterable[str] = TESTS, alpha: float = ALPHA
                       ) -> dict[str, np.ndarray]:
    """Signed significance decision of every test for every pair of systems: 1 when
    system i is significantly above system j, -1 when below, 0 when the pair does not
    differ significantly (:func:`pairs` order, int8). The direction is the one the test
    itself reads: wins minus losses for ``sign``, ``R+ - R-`` for ``signrank``,
    ``U - n^2/2`` for ``ranksum``, mean differences for ``ttest``, ``anova1`` and
    ``anova2``, rank-sum differences for ``kruskal`` and ``friedman``; so ``sign`` and
    ``friedman`` decisions depend only on the order of the scores within each topic.
    Arguments and errors as :func:`pairwise_significance`."""
    x = _check_scores(scores)
    tests = _check_tests(tests, TESTS)
    significant = pairwise_significance(x, tests, alpha)
    directions = pairwise_directions(x, tests)
    return {t: np.where(significant[t], directions[t], 0).astype(np.int8) for t in tests}

