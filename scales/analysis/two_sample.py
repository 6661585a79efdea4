"""The two-sample tests of :mod:`irscale.scales.analysis.significance`: sign, rank-sum,
signed-rank and paired t, a p-value for every pair of systems (no multiplicity correction).

Inputs and outputs as in :mod:`~irscale.scales.analysis.significance_input`: a scores
matrix ``X`` (topics x systems), one value per pair in :func:`pairs` order; the tests run
on the columns ``x = X[:, i]`` and ``y = X[:, j]``, two-sided. A pair is significant when
``p <= alpha`` (MATLAB's convention in ``signtest``/``ranksum``/``signrank``/``ttest``:
``h = p <= alpha``). The p-values are those of SciPy (checked pair by pair in
``tests/test_two_sample.py``), vectorised:

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

Differences of equal size computed from different scores carry different rounding errors;
the signed-rank test ties non-zero ``|d|`` that are within 64 ulps of the largest |score|
(:func:`difference_tolerance`), so that mathematically equal differences always tie (an
affine map of the scores then never changes a decision). Scores themselves are compared
exactly: equal values from irscale are equal floats. ``sign`` decisions depend only on the
order of the scores within each topic.
"""
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from scipy import special, stats

from irscale.scales.analysis.significance_input import _check_scores, _pair_chunks, _sorted_tie_groups, pairs

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["TIE_ULPS", "difference_tolerance", "sign_pvalues", "ranksum_pvalues", "signrank_pvalues",
           "ttest_pvalues"]

# Largest systems x distinct-values histogram for the rank-sum matrix products.
_DENSE_HISTOGRAM_CELLS = 1 << 23
# SciPy's switches (scipy.stats.wilcoxon, mannwhitneyu with method="auto").
_WILCOXON_EXACT_MAX_N = 50       # "auto" uses the normal approximation above 50
_WILCOXON_PERMUTATION_MAX_N = 13  # 2**13 < 9999 resamples: exact permutation test
_MWU_EXACT_MAX_N = 8             # exact U distribution unless both samples exceed 8


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
