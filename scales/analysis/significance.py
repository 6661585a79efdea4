"""Significance tests over every pair of systems (SPEC section 6): the entry points.

The input of every function is a *scores matrix* ``X`` of shape ``(n_topics, n_systems)``
and the output one value per pair of systems ``(i, j)``, ``i < j``, in :func:`pairs`
order (:mod:`~irscale.scales.analysis.significance_input`). All tests are two-sided:

* the two-sample tests :data:`TWO_SAMPLE_TESTS` (``sign``, ``ranksum``, ``signrank``,
  ``ttest``), a p-value per pair without multiplicity correction, significant when
  ``p <= alpha``: formulas and conventions in :mod:`~irscale.scales.analysis.two_sample`;
* the multi-system tests :data:`MULTI_SYSTEM_TESTS` (``anova1``, ``anova2``, ``kruskal``,
  ``friedman``) with Tukey HSD comparisons, decisions only: formulas and conventions in
  :mod:`~irscale.scales.analysis.multi_system`.

:func:`pairwise_pvalues`, :func:`pairwise_significance`, :func:`pairwise_directions` and
:func:`pairwise_decisions` run any of them by name. ``sign`` and ``friedman`` decisions
depend only on the order of the scores within each topic.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from irscale.scales.analysis.multi_system import _MULTI
from irscale.scales.analysis.significance_input import (
    ALPHA,
    SignificanceInputError,
    _check_alpha,
    _check_scores,
    _midranks_rows,
    _pair_chunks,
    pairs,
)
from irscale.scales.analysis.two_sample import (
    _ranksum_counts,
    _signrank_direction_chunk,
    _two_sample_pvalues,
    difference_tolerance,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["TESTS", "TWO_SAMPLE_TESTS", "MULTI_SYSTEM_TESTS", "pairwise_significance", "pairwise_pvalues",
           "pairwise_decisions", "pairwise_directions"]

#: Every test, in the order of SPEC section 6.
TESTS = ("sign", "ranksum", "signrank", "ttest", "anova1", "anova2", "kruskal", "friedman")
#: Tests with a p-value per pair (no multiplicity correction).
TWO_SAMPLE_TESTS = ("sign", "ranksum", "signrank", "ttest")
#: Tests with Tukey HSD decisions over all systems.
MULTI_SYSTEM_TESTS = ("anova1", "anova2", "kruskal", "friedman")


def _check_tests(tests, allowed) -> tuple[str, ...]:
    if isinstance(tests, str):
        tests = (tests,)
    tests = tuple(tests)
    unknown = [t for t in tests if t not in allowed]
    if unknown:
        raise SignificanceInputError(
            f"unknown test(s) {', '.join(map(repr, unknown))}; known: {', '.join(allowed)}")
    return tests


# --------------------------------------------------------------------- public API


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
