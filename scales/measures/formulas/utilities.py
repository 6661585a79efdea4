"""Exact values of the effort-aware utility measures and of OIE over truncated rankings
(SPEC_MEASURES section 5, seed "Ranking Interruptus").

Conventions
-----------
* A *ranking* is a sequence of grades ``r_1..r_n`` in ``{0..G}`` of its own length
  ``0 <= n <= N`` (the empty ranking included), ``r_1`` the top document, ranks 1-based.
  ``levels = G + 1``.
* The truncated run space of cutoff ``N`` holds every ranking of length ``0..N``; its ids
  are those of :mod:`irscale.enumerate.truncated`.
* Arrays of rankings (``*_many`` functions) are ``(n_runs, N)`` integer arrays, each row a
  ranking padded after its end with :data:`PAD` (-1); ``lengths`` may be given explicitly
  instead (then the padding cells are ignored whatever they hold). Fixed-length runs are
  rows without padding.
* Relevance values ``rel(g)`` in ``[0, 1]``: :func:`linear_rel` ``g / G`` (default of RBPU,
  DCGU, FlatU) and :func:`exp_rel` ``(2^g - 1) / 2^G`` (default of ERRU and RBU, as
  SPEC_MEASURES section 2 maps grades for ERR). Binary relevance: linear gives
  ``rel(1) = 1``, exponential ``rel(1) = 1/2``. Any per-grade tuple may be passed as ``rel``.

Measures (effort ``e``, default 1/20; ``n`` = the ranking's own length)
-----------------------------------------------------------------------
===========  ==========================================================  =====================
name         definition                                                  base measure (e = 0)
===========  ==========================================================  =====================
RBPU(p, e)   ``(1-p) sum_{k<=n} p^(k-1) (rel_k - e)``                     RBP(p) (graded: rel)
DCGU(e)      ``sum_{k<=n} (rel_k - e) / log2(k+1)``                       DCG, discount 1/log2(k+1)
FlatU(e)     ``sum_{k<=n} (rel_k - e)``                                   P@N (gP: N P@N)
ERRU(e)      ``sum_{k<=n} (1/k) (rel_k prod_{j<k}(1 - rel_j) - e)``       ERR (section 2)
RBU(p, e)    ``(1-p) sum_{k<=n} p^(k-1) (rel_k prod_{j<k}(1-rel_j) - e)`` cascade RBP
===========  ==========================================================  =====================

On runs of one fixed length every utility equals its base measure minus a constant, so it
orders runs exactly like it; on truncated rankings appending a non-relevant document costs
``e`` times the discount, so a ranking is never tied with its padded versions.

OIE (observational information effectiveness) with collection size ``D`` (default 20000)
and ``beta`` (default 1.05), natural logarithms::

    D*H(S)   = sum_{i<=n} log(D / i)
    D*H(G)   = sum over all relevant documents (grade v) of log(D / m_v)
    D*H(S,G) = sum_{i<=n} log(D / c_i) + sum over unretrieved relevant documents of log(D / m_v)
    OIE      = H(S) + H(G) - beta H(S,G)

with ``c_i`` = the number of documents at ranks ``<= i`` whose grade is ``>=`` the grade of
the document at rank ``i`` (itself included) and ``m_v = sum_{h>=v} c_h`` the number of
judged documents of grade ``>= v``; unretrieved non-relevant documents add 0. This reading
reproduces all six test values of SPEC_MEASURES section 5. ``D*OIE`` is a rational
combination of logarithms of primes, so :func:`oie_key` gives it exactly (logarithms of
distinct primes are linearly independent over the rationals: equal keys <=> equal values).

Scalar functions are exact references (Fractions; 50-digit mpmath for the logarithmic
DCGU and OIE, with formal exact keys); ``*_many`` are their numpy float64 versions.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath
import numpy as np

from irscale.enumerate.truncated import validate_rankings
from irscale.errors import MeasureError, RecallBaseError, RunError
from irscale.scales.measures.formulas.relative_position import InfeasibleRunError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: Default effort per retrieved document (exact).
EFFORT = Fraction(1, 20)
#: Default collection size and beta of OIE.
OIE_D = 20000
OIE_BETA = Fraction(105, 100)
#: mpmath digits of the logarithmic references.
DIGITS = 50


# -- relevance mappings and parameters -------------------------------------------------------
def linear_rel(levels: int) -> tuple[Fraction, ...]:
    """``rel(g) = g / G`` for ``g = 0..G``."""
    big_g = levels - 1
    return tuple(Fraction(g, big_g) for g in range(levels))


def exp_rel(levels: int) -> tuple[Fraction, ...]:
    """``rel(g) = (2^g - 1) / 2^G`` for ``g = 0..G`` (ERR's mapping)."""
    big_g = levels - 1
    return tuple(Fraction(2 ** g - 1, 2 ** big_g) for g in range(levels))


def _exact(value, name: str) -> Fraction:
    """A number as an exact Fraction (floats through their decimal text: 0.8 -> 4/5)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, str, np.integer, np.floating)):
        raise MeasureError(f"{name} must be a number, got {value!r}")
    try:
        return Fraction(repr(float(value))) if isinstance(value, (float, np.floating)) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise MeasureError(f"{name} must be a number, got {value!r}") from None


def _prob(p) -> Fraction:
    p = _exact(p, "p")
    if not 0 < p < 1:
        raise MeasureError(f"p must be in (0, 1), got {p}")
    return p


def _rel_table(levels: int, rel, default) -> tuple[Fraction, ...]:
    if levels < 2:
        raise MeasureError(f"levels must be >= 2, got {levels}")
    table = default(levels) if rel is None else tuple(_exact(x, "rel") for x in rel)
    if len(table) != levels:
        raise MeasureError(f"rel needs one value per grade 0..{levels - 1}, got {len(table)}")
    return table


def _grades(ranking: Sequence[int], levels: int) -> tuple[int, ...]:
    grades = tuple(int(g) for g in ranking)
    for k, g in enumerate(grades, start=1):
        if not 0 <= g < levels:
            raise RunError(f"grade {g} at rank {k} is outside REL = {{0..{levels - 1}}}")
    return grades


# -- scalar utility measures (exact) ---------------------------------------------------------
def _gains(ranking, levels, rel, default, cascade: bool) -> list[Fraction]:
    """Per-rank gains: ``rel_k``, or ``rel_k prod_{j<k} (1 - rel_j)`` with ``cascade``."""
    table = _rel_table(levels, rel, default)
    out, stay = [], Fraction(1)
    for g in _grades(ranking, levels):
        out.append(table[g] * stay if cascade else table[g])
        stay *= 1 - table[g]
    return out


def rbpu(ranking: Sequence[int], p: Fraction | float | str, e: Fraction | float | str = EFFORT, levels: int = 2,
         rel: Sequence[Fraction | float | str] | None = None) -> Fraction:
    """RBPU(p, e) = ``(1-p) sum_{k<=n} p^(k-1) (rel_k - e)`` (exact; default rel ``g/G``).

    With ``e = 0`` it is RBP(p) (graded: ``(1-p) sum p^(k-1) g/G``).
    """
    p, e = _prob(p), _exact(e, "e")
    gains = _gains(ranking, levels, rel, linear_rel, cascade=False)
    return (1 - p) * sum((p ** k * (x - e) for k, x in enumerate(gains)), Fraction(0))


def flatu(ranking: Sequence[int], e: Fraction | float | str = EFFORT, levels: int = 2,
          rel: Sequence[Fraction | float | str] | None = None) -> Fraction:
    """FlatU(e) = ``sum_{k<=n} (rel_k - e)`` (exact; default rel ``g/G``); ``e = 0`` on
    runs of length N gives ``N P@N`` (graded: ``N gP@N``)."""
    e = _exact(e, "e")
    return sum((x - e for x in _gains(ranking, levels, rel, linear_rel, cascade=False)), Fraction(0))


def erru(ranking: Sequence[int], e: Fraction | float | str = EFFORT, levels: int = 2,
         rel: Sequence[Fraction | float | str] | None = None) -> Fraction:
    """ERRU(e) = ``sum_{k<=n} (1/k) (rel_k prod_{j<k}(1 - rel_j) - e)`` (exact; default rel
    ``(2^g - 1)/2^G``); ``e = 0`` gives ERR."""
    e = _exact(e, "e")
    gains = _gains(ranking, levels, rel, exp_rel, cascade=True)
    return sum((Fraction(1, k) * (x - e) for k, x in enumerate(gains, start=1)), Fraction(0))


def rbu(ranking: Sequence[int], p: Fraction | float | str, e: Fraction | float | str = EFFORT, levels: int = 2,
        rel: Sequence[Fraction | float | str] | None = None) -> Fraction:
    """RBU(p, e) = ``(1-p) sum_{k<=n} p^(k-1) (rel_k prod_{j<k}(1 - rel_j) - e)`` (exact;
    default rel ``(2^g - 1)/2^G``).

    This is RBPU with the cascade gain in place of ``rel_k`` (SPEC_MEASURES section 5).
    Amigó et al.'s Rank-Biased Utility ``sum_k p^k (gain_k) - e sum_k p^k`` is ``p/(1-p)``
    times this value: same order, same ties. Its base measure (``e = 0``) is the cascade
    RBP ``(1-p) sum p^(k-1) rel_k prod_{j<k}(1 - rel_j)`` (ERR's user model with RBP's
    geometric discount).
    """
    p, e = _prob(p), _exact(e, "e")
    gains = _gains(ranking, levels, rel, exp_rel, cascade=True)
    return (1 - p) * sum((p ** k * (x - e) for k, x in enumerate(gains)), Fraction(0))


def dcgu(ranking: Sequence[int], e: Fraction | float | str = EFFORT, levels: int = 2,
         rel: Sequence[Fraction | float | str] | None = None) -> mpmath.mpf:
    """DCGU(e) = ``sum_{k<=n} (rel_k - e) / log2(k+1)`` in 50-digit mpmath (default rel
    ``g/G``); ``e = 0`` gives DCG with discount ``1/log2(k+1)`` (gains ``g/G``)."""
    e = _exact(e, "e")
    gains = _gains(ranking, levels, rel, linear_rel, cascade=False)
    with mpmath.workdps(DIGITS):
        return mpmath.fsum(_mp(x - e) / mpmath.log(k + 1, 2) for k, x in enumerate(gains, start=1))


def dcgu_key(ranking: Sequence[int], e: Fraction | float | str = EFFORT, levels: int = 2,
             rel: Sequence[Fraction | float | str] | None = None) -> dict[int, Fraction]:
    """Exact formal value of DCGU: ``{m: a_m}`` with ``DCGU = sum_m a_m / log2(m)`` over
    integers ``m >= 2`` that are not perfect powers (``k + 1 = m^j`` contributes
    ``1/(j log2 m)``; ``m = 2`` is the rational part). Zero coefficients are dropped.

    Equal keys mean equal values; distinct keys are taken as distinct values (as the
    project's ``formal-log`` keys do; check separations numerically where it matters).
    """
    e = _exact(e, "e")
    key: dict[int, Fraction] = {}
    for k, x in enumerate(_gains(ranking, levels, rel, linear_rel, cascade=False), start=1):
        m, j = _perfect_power_root(k + 1)
        key[m] = key.get(m, Fraction(0)) + (x - e) / j
    return {m: a for m, a in key.items() if a != 0}


@functools.cache
def _perfect_power_root(x: int) -> tuple[int, int]:
    """``(m, j)`` with ``x = m^j`` and ``j`` largest (``m`` not a perfect power)."""
    for j in range(x.bit_length(), 1, -1):
        m = round(x ** (1 / j))
        for cand in (m - 1, m, m + 1):
            if cand >= 2 and cand ** j == x:
                return _perfect_power_root(cand)[0], j * _perfect_power_root(cand)[1]
    return x, 1


def _mp(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def value_of_log2_key(key: dict[int, Fraction]) -> mpmath.mpf:
    """50-digit value of a :func:`dcgu_key`."""
    with mpmath.workdps(DIGITS):
        return mpmath.fsum(_mp(a) / mpmath.log(m, 2) for m, a in key.items())


# -- OIE -------------------------------------------------------------------------------------
def _oie_terms(ranking, c: Sequence[int], d: int):
    """Integer arguments x of the terms ``log(D/x)``: (H(S) args, H(G) args, H(S,G) args),
    each a list of (x, multiplicity)."""
    c = tuple(int(x) for x in c)
    if not c or any(x < 0 for x in c):
        raise RecallBaseError(f"per-grade counts must be a non-empty sequence of integers >= 0, got {c!r}")
    grades = _grades(ranking, len(c) + 1)
    if len(grades) > d - sum(c) + sum(1 for g in grades if g):
        raise RunError(f"a ranking of {len(grades)} documents does not fit a collection of D = {d}")
    m = [sum(c[v - 1:]) for v in range(len(c) + 1)]          # m[v] for v >= 1
    seen = [0] * (len(c) + 1)
    hs, hsg = [(i, 1) for i in range(1, len(grades) + 1)], []
    for i, g in enumerate(grades, start=1):
        if g:
            seen[g] += 1
            if seen[g] > c[g - 1]:
                raise InfeasibleRunError(f"grade {g} at rank {i}: more than c_{g} = {c[g - 1]} documents of "
                                         f"grade {g}; infeasible ranking")
        hsg.append((sum(1 for h in grades[:i] if h >= g), 1))
    hg = [(m[v], c[v - 1]) for v in range(1, len(c) + 1) if c[v - 1]]
    hsg += [(m[v], c[v - 1] - seen[v]) for v in range(1, len(c) + 1) if c[v - 1] > seen[v]]
    return hs, hg, hsg


def _oie_params(d, beta) -> tuple[int, Fraction]:
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise MeasureError(f"D must be a positive integer, got {d!r}")
    return int(d), _exact(beta, "beta")


def oie_d(ranking: Sequence[int], c: Sequence[int], d: int = OIE_D, beta: Fraction | float | str = OIE_BETA
          ) -> mpmath.mpf:
    """``D * OIE`` of a ranking in 50-digit mpmath (natural logarithms), straight from the
    definition (module docstring). ``c`` are the topic's per-grade counts (``G = len(c)``)."""
    d, beta = _oie_params(d, beta)
    hs, hg, hsg = _oie_terms(ranking, c, d)
    with mpmath.workdps(DIGITS):
        total = lambda terms: mpmath.fsum(mult * mpmath.log(mpmath.mpf(d) / x) for x, mult in terms)  # noqa: E731
        return total(hs) + total(hg) - _mp(beta) * total(hsg)


def oie(ranking: Sequence[int], c: Sequence[int], d: int = OIE_D, beta: Fraction | float | str = OIE_BETA
        ) -> mpmath.mpf:
    """OIE = ``(D * OIE) / D`` (50-digit mpmath); same order as :func:`oie_d`."""
    with mpmath.workdps(DIGITS):
        return oie_d(ranking, c, d, beta) / int(d)


def oie_key(ranking: Sequence[int], c: Sequence[int], d: int = OIE_D, beta: Fraction | float | str = OIE_BETA
            ) -> dict[int, Fraction]:
    """Exact ``D * OIE`` as ``{prime p: a_p}`` with ``D * OIE = sum_p a_p ln p`` (zero
    coefficients dropped). Equal keys <=> equal values (logs of primes are linearly
    independent over Q)."""
    d, beta = _oie_params(d, beta)
    hs, hg, hsg = _oie_terms(ranking, c, d)
    key: dict[int, Fraction] = {}
    for terms, weight in ((hs, Fraction(1)), (hg, Fraction(1)), (hsg, -beta)):
        for x, mult in terms:                     # log(D/x) = log D - log x
            for base, sign in ((d, 1), (x, -1)):
                for prime, power in _factor(base).items():
                    key[prime] = key.get(prime, Fraction(0)) + sign * weight * mult * power
    return {p: a for p, a in key.items() if a != 0}


@functools.cache
def _factor(x: int) -> dict[int, int]:
    out, q = {}, 2
    while q * q <= x:
        while x % q == 0:
            out[q] = out.get(q, 0) + 1
            x //= q
        q += 1
    if x > 1:
        out[x] = out.get(x, 0) + 1
    return out


def value_of_prime_key(key: dict[int, Fraction]) -> mpmath.mpf:
    """50-digit value of an :func:`oie_key` (``sum_p a_p ln p``)."""
    with mpmath.workdps(DIGITS):
        return mpmath.fsum(_mp(a) * mpmath.log(p) for p, a in key.items())


# -- vectorised versions ---------------------------------------------------------------------
def _as_rankings(runs, levels: int, lengths=None) -> tuple[np.ndarray, np.ndarray]:
    """(grades int64 (M, N) with padding cells set to 0, valid-cell mask (M, N))."""
    return validate_rankings(runs, levels, lengths)


def _gains_many(runs, levels, rel, default, cascade: bool, lengths) -> tuple[np.ndarray, np.ndarray]:
    arr, valid = _as_rankings(runs, levels, lengths)
    table = np.asarray([float(x) for x in _rel_table(levels, rel, default)])
    gains = table[arr]
    if cascade:
        stay = np.cumprod(1 - gains, axis=1)
        gains = gains * np.concatenate([np.ones((len(arr), 1)), stay[:, :-1]], axis=1)
    return gains, valid


def _discounted(gains, valid, discount, e) -> np.ndarray:
    return (np.where(valid, gains - float(e), 0.0) * discount[None, :]).sum(axis=1)


def rbpu_many(runs: ArrayLike, p: Fraction | float | str, e: Fraction | float | str = EFFORT, levels: int = 2,
              rel: Sequence[Fraction | float | str] | None = None, lengths: ArrayLike | None = None) -> np.ndarray:
    """RBPU of many rankings (float64); see :func:`rbpu`."""
    p = _prob(p)
    gains, valid = _gains_many(runs, levels, rel, linear_rel, False, lengths)
    disc = (1 - float(p)) * float(p) ** np.arange(gains.shape[1])
    return _discounted(gains, valid, disc, _exact(e, "e"))


def flatu_many(runs: ArrayLike, e: Fraction | float | str = EFFORT, levels: int = 2,
               rel: Sequence[Fraction | float | str] | None = None, lengths: ArrayLike | None = None) -> np.ndarray:
    """FlatU of many rankings (float64); see :func:`flatu`."""
    gains, valid = _gains_many(runs, levels, rel, linear_rel, False, lengths)
    return _discounted(gains, valid, np.ones(gains.shape[1]), _exact(e, "e"))


def erru_many(runs: ArrayLike, e: Fraction | float | str = EFFORT, levels: int = 2,
              rel: Sequence[Fraction | float | str] | None = None, lengths: ArrayLike | None = None) -> np.ndarray:
    """ERRU of many rankings (float64); see :func:`erru`."""
    gains, valid = _gains_many(runs, levels, rel, exp_rel, True, lengths)
    return _discounted(gains, valid, 1 / np.arange(1, gains.shape[1] + 1), _exact(e, "e"))


def rbu_many(runs: ArrayLike, p: Fraction | float | str, e: Fraction | float | str = EFFORT, levels: int = 2,
             rel: Sequence[Fraction | float | str] | None = None, lengths: ArrayLike | None = None) -> np.ndarray:
    """RBU of many rankings (float64); see :func:`rbu`."""
    p = _prob(p)
    gains, valid = _gains_many(runs, levels, rel, exp_rel, True, lengths)
    disc = (1 - float(p)) * float(p) ** np.arange(gains.shape[1])
    return _discounted(gains, valid, disc, _exact(e, "e"))


def dcgu_many(runs: ArrayLike, e: Fraction | float | str = EFFORT, levels: int = 2,
              rel: Sequence[Fraction | float | str] | None = None, lengths: ArrayLike | None = None) -> np.ndarray:
    """DCGU of many rankings (float64); see :func:`dcgu`."""
    gains, valid = _gains_many(runs, levels, rel, linear_rel, False, lengths)
    return _discounted(gains, valid, 1 / np.log2(np.arange(2, gains.shape[1] + 2)), _exact(e, "e"))


def oie_d_many(runs: ArrayLike, c: Sequence[int], d: int = OIE_D, beta: Fraction | float | str = OIE_BETA,
               lengths: ArrayLike | None = None) -> np.ndarray:
    """``D * OIE`` of many rankings of one topic (float64); see :func:`oie_d`. Infeasible
    rankings (more than ``c_g`` documents of a grade) get NaN."""
    d, beta = _oie_params(d, beta)
    c = np.asarray([int(x) for x in c], dtype=np.int64)
    arr, valid = _as_rankings(runs, len(c) + 1, lengths)
    ranks = np.arange(1, arr.shape[1] + 1)
    log_d = np.log(d)
    hs = np.where(valid, log_d - np.log(ranks)[None, :], 0.0).sum(axis=1)
    ge = [np.cumsum(valid & (arr >= t), axis=1) for t in range(len(c) + 1)]   # docs with grade >= t
    c_i = np.take_along_axis(np.stack(ge, axis=2), arr[:, :, None], axis=2)[:, :, 0]
    hsg = np.where(valid, log_d - np.log(np.maximum(c_i, 1)), 0.0).sum(axis=1)
    m = np.cumsum(c[::-1])[::-1]                                            # m[v-1] = sum_{h>=v} c_h
    term = np.where(c > 0, log_d - np.log(np.maximum(m, 1)), 0.0)
    seen = np.stack([(valid & (arr == v)).sum(axis=1) for v in range(1, len(c) + 1)], axis=1)
    hg = float((c * term).sum())
    hsg = hsg + ((c[None, :] - seen) * term[None, :]).sum(axis=1)
    out = hs + hg - float(beta) * hsg
    return np.where((seen <= c[None, :]).all(axis=1), out, np.nan)
