"""The multi-system tests of :mod:`irscale.scales.analysis.significance`: ANOVA (one-way
and two-way), Kruskal-Wallis and Friedman, with Tukey HSD comparisons of every pair of
systems (decisions only, no per-pair p-values).

Inputs and outputs as in :mod:`~irscale.scales.analysis.significance_input`: a scores
matrix (topics x systems), one decision per pair in :func:`pairs` order.
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

Decisions for ``kruskal`` and ``friedman`` are computed from rank *sums* (exact
half-integers), so equal mean ranks are never separated by float noise: ``friedman``
decisions depend only on the order of the scores within each topic.
"""
from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

from irscale.scales.analysis.significance_input import ALPHA, _check_alpha, _check_scores, _midranks_rows, pairs

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["tukey_critical_value", "anova1_tukey", "anova2_tukey", "kruskal_tukey", "friedman_tukey"]


@cache
def tukey_critical_value(alpha: float, k: int, df: float) -> float:
    """Upper ``alpha`` quantile of the studentized range for k means and df degrees of
    freedom (``df = inf`` for the rank tests): ``studentized_range.ppf(1 - alpha, k, df)``.
    Cached: the finite-df quantile costs ~0.2 s."""
    return float(stats.studentized_range.ppf(1.0 - alpha, k, df))

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
