"""Twist (tau) and the CRP summary indicators: exact raw scores (SPEC_MEASURES sections 3, 4).

Conventions
-----------
* A run is a sequence of grades ``r_1..r_N`` in ``{0..G}``, ``r_1`` the top document;
  ranks ``k`` are 1-based.
* A topic is given by its per-grade counts ``c = (c_1, ..., c_G)`` of judged relevant
  documents (``c[g - 1]`` is the count of grade ``g``); ``RB = sum(c)``, ``G = len(c)``.
* The *ideal run* holds all relevant documents by decreasing grade, then 0s. Grade
  ``g >= 1`` occupies the ranks ``[lo(g), hi(g)] = [1 + sum_{h>g} c_h, sum_{h>=g} c_h]``;
  grade 0 occupies ``[RB + 1, N]``.
* The *full-scale run* (the worst case ``w`` of section 4) is the ideal run reversed:
  ``N - RB`` zeros, then the relevant documents by increasing grade.
* A run is *feasible* for ``c`` when it holds at most ``c_g`` documents of every grade
  ``g >= 1`` (SPEC_MEASURES section 1). A grade with ``c_g = 0`` has no ideal interval and
  always raises :class:`InfeasibleRunError`; holding more than ``c_g`` documents of a grade
  raises it too unless ``strict=False`` (then the formulas are applied as written).

Scalar functions are the exact references (integers and :class:`fractions.Fraction`);
the ``*_many`` functions score an ``(n_runs, N)`` integer array of runs for one ``c`` at
once with numpy and return float64 values together with exact integer numerators and
denominators (they are tested to agree with the scalar ones).

Twist is undefined for ``RB = 0`` and for ``N < 2 RB`` (its full-scale bounds need
``N >= 2 RB``); both raise :class:`TwistUndefinedError`, a
:class:`~irscale.errors.RecallBaseError`, so tables refuse such topics with that message.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from irscale.enumerate.runspace import validate_runs
from irscale.errors import RecallBaseError, RunError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

CROSSINGS = ("impl", "literal")
CRP_MIN_REFS = ("min", "at_argmin")


class InfeasibleRunError(RunError):
    """A run holds a grade the topic does not have, or more documents of a grade than the
    topic has (the message names the rank)."""


class TwistUndefinedError(RecallBaseError):
    """Twist or the CRP indicators are undefined for this topic and cutoff
    (``RB = 0``, or ``N < 2 RB`` where the full-scale run is needed)."""


# -- topic and run validation ---------------------------------------------------------------
def _counts(c: Sequence[int]) -> tuple[int, ...]:
    """Validate per-grade counts ``(c_1..c_G)`` and return them as a tuple of ints."""
    out = tuple(int(x) for x in c)
    if not out or any(x < 0 for x in out) or any(int(x) != x for x in c):
        raise RecallBaseError(f"per-grade counts must be a non-empty sequence of integers >= 0, got {tuple(c)!r}")
    return out


def _need_rb(c: tuple[int, ...]) -> int:
    rb = sum(c)
    if rb == 0:
        raise TwistUndefinedError("twist and CRP indicators are undefined for a topic without relevant "
                                  "documents (RB = 0); exclude the topic")
    return rb


def _need_full_scale(c: tuple[int, ...], n: int) -> int:
    rb = _need_rb(c)
    if n < 2 * rb:
        raise TwistUndefinedError(f"twist needs N >= 2 RB (its full-scale run); got N = {n}, RB = {rb} "
                                  f"(c = {c}); no table for this topic and cutoff")
    return rb


def _run(run: Sequence[int], c: tuple[int, ...], strict: bool = True) -> tuple[int, ...]:
    """Validate one run against ``c``; return its grades as a tuple of ints.

    Raises :class:`~irscale.errors.RunError` for grades outside ``{0..G}`` and
    :class:`InfeasibleRunError` (naming the rank) for infeasible runs.
    """
    grades = tuple(int(x) for x in run)
    big_g = len(c)
    seen = [0] * (big_g + 1)
    for k, g in enumerate(grades, start=1):
        if not 0 <= g <= big_g:
            raise RunError(f"grade {g} at rank {k} is outside REL = {{0..{big_g}}}")
        if g == 0:
            continue
        seen[g] += 1
        if c[g - 1] == 0:
            raise InfeasibleRunError(f"grade {g} at rank {k}: the topic has no document of grade {g} "
                                     f"(c = {c}); infeasible run")
        if strict and seen[g] > c[g - 1]:
            raise InfeasibleRunError(f"grade {g} at rank {k}: more than c_{g} = {c[g - 1]} documents of "
                                     f"grade {g}; infeasible run")
    return grades


# -- ideal intervals and reference runs ------------------------------------------------------
def grade_intervals(c: Sequence[int], n: int) -> tuple[list[int], list[int]]:
    """Ideal-run rank intervals ``[lo(g), hi(g)]`` of every grade ``g = 0..G``.

    Parameters
    ----------
    c : per-grade counts ``(c_1..c_G)``.
    n : run length N (only ``hi(0) = N`` depends on it).

    Returns
    -------
    lo, hi : lists of length ``G + 1`` indexed by grade (1-based ranks). A grade with
        ``c_g = 0`` gets the empty interval ``hi(g) = lo(g) - 1``.
    """
    c = _counts(c)
    big_g, rb = len(c), sum(c)
    lo, hi = [0] * (big_g + 1), [0] * (big_g + 1)
    above = 0
    for g in range(big_g, 0, -1):
        lo[g], hi[g] = above + 1, above + c[g - 1]
        above += c[g - 1]
    lo[0], hi[0] = rb + 1, n
    return lo, hi


def ideal_run(c: Sequence[int], n: int) -> tuple[int, ...]:
    """The ideal run of length ``n`` (relevant documents by decreasing grade, then 0s;
    cut at ``n``)."""
    c = _counts(c)
    run = [g for g in range(len(c), 0, -1) for _ in range(c[g - 1])]
    return tuple((run + [0] * n)[:n])


def full_scale_run(c: Sequence[int], n: int) -> tuple[int, ...]:
    """The full-scale (worst-case) run: the ideal run reversed, ``n - RB`` zeros then the
    relevant documents by increasing grade. Needs ``n >= RB``."""
    c = _counts(c)
    rb = sum(c)
    if n < rb:
        raise TwistUndefinedError(f"the full-scale run needs N >= RB; got N = {n}, RB = {rb}")
    return tuple(reversed(ideal_run(c, n)))


def full_scale_spaces(c: Sequence[int], n: int) -> tuple[int, int]:
    """Spaces ``(s+_fs, s-_fs)`` of the full-scale run, in closed form (needs ``n >= 2 RB``).

    ``s-_fs = RB (RB + 1) / 2`` and ``s+_fs = RB (N - RB) + (RB - S2) / 2`` with
    ``S2 = sum_g c_g^2`` (both integers). They are the largest ``s-`` and ``s+`` of any
    feasible run, so ``sigma+`` and ``sigma-`` lie in ``[0, 1]`` for feasible runs.
    """
    c = _counts(c)
    rb = _need_full_scale(c, n)
    s2 = sum(x * x for x in c)
    return rb * (n - rb) + (rb - s2) // 2, rb * (rb + 1) // 2


# -- RP, CRP ---------------------------------------------------------------------------------
def relative_positions(run: Sequence[int], c: Sequence[int], strict: bool = True) -> list[int]:
    """Relative positions ``RP_k`` of a run (SPEC_MEASURES section 3), in ranks.

    ``RP_k = 0`` if ``lo(r_k) <= k <= hi(r_k)``, ``k - lo(r_k) < 0`` if the document is too
    early, ``k - hi(r_k) > 0`` if too late.

    Parameters
    ----------
    run : grades ``r_1..r_N``.
    c : per-grade counts ``(c_1..c_G)``.
    strict : raise :class:`InfeasibleRunError` when the run holds more than ``c_g``
        documents of a grade (a grade with ``c_g = 0`` always raises).
    """
    c = _counts(c)
    grades = _run(run, c, strict)
    lo, hi = grade_intervals(c, len(grades))
    out = []
    for k, g in enumerate(grades, start=1):
        out.append(k - lo[g] if k < lo[g] else k - hi[g] if k > hi[g] else 0)
    return out


def cumulated_relative_positions(run: Sequence[int], c: Sequence[int], strict: bool = True) -> list[int]:
    """Cumulated relative positions ``CRP_k = sum_{j<=k} RP_j`` (ranks)."""
    return list(_accumulate(relative_positions(run, c, strict)))


def _accumulate(values):
    total = 0
    for v in values:
        total += v
        yield total


def first_crossing(crp: Sequence[int], crossing: str = "impl") -> int | None:
    """First rank ``j`` (``1 <= j <= N - 1``) where CRP crosses between ``j`` and ``j + 1``.

    ``crossing="impl"`` (the authors' reference implementation): ``(CRP_j <= 0) !=
    (CRP_{j+1} <= 0)``. ``crossing="literal"`` (the printed definition): ``CRP_j <= 0 <=
    CRP_{j+1}`` or ``CRP_j >= 0 >= CRP_{j+1}``; any zero of CRP before rank N is a crossing
    then. Returns ``None`` when there is no crossing.
    """
    if crossing not in CROSSINGS:
        raise ValueError(f"crossing must be one of {CROSSINGS}, got {crossing!r}")
    for j in range(1, len(crp)):
        a, b = crp[j - 1], crp[j]
        if crossing == "impl":
            hit = (a <= 0) != (b <= 0)
        else:
            hit = (a <= 0 <= b) or (a >= 0 >= b)
        if hit:
            return j
    return None


# -- twist -----------------------------------------------------------------------------------
def recovery_ratio(run: Sequence[int], c: Sequence[int], crossing: str = "impl") -> Fraction:
    """Recovery ratio ``rho = RB / max(RB, j)`` with ``j`` the first crossing of CRP.

    Without a crossing ``rho = 1`` if CRP is identically 0, else 0. Needs ``RB >= 1``.
    """
    c = _counts(c)
    rb = _need_rb(c)
    crp = cumulated_relative_positions(run, c)
    j = first_crossing(crp, crossing)
    if j is None:
        return Fraction(1) if all(v == 0 for v in crp) else Fraction(0)
    return Fraction(rb, max(rb, j))


def spaces(run: Sequence[int], c: Sequence[int], strict: bool = True) -> tuple[int, int]:
    """Spaces ``(s+, s-)``: the sum of the positive RP and the sum of ``|RP|`` over the
    negative RP (ranks)."""
    rp = relative_positions(run, c, strict)
    return sum(v for v in rp if v > 0), -sum(v for v in rp if v < 0)


def space_ratio(run: Sequence[int], c: Sequence[int]) -> Fraction:
    """``sigma = 2 sigma+ sigma- / (sigma+ + sigma-)`` (0 when both are 0), with
    ``sigma+ = 1 - s+/s+_fs`` and ``sigma- = 1 - s-/s-_fs``. Needs ``N >= 2 RB``."""
    c = _counts(c)
    grades = tuple(run)
    fs_plus, fs_minus = full_scale_spaces(c, len(grades))
    s_plus, s_minus = spaces(grades, c)
    sig_p, sig_m = 1 - Fraction(s_plus, fs_plus), 1 - Fraction(s_minus, fs_minus)
    if sig_p + sig_m == 0:
        return Fraction(0)
    return 2 * sig_p * sig_m / (sig_p + sig_m)


def twist(run: Sequence[int], c: Sequence[int], crossing: str = "impl") -> Fraction:
    """Twist ``tau = (rho + sigma) / 2`` of one run (SPEC_MEASURES section 3), exact.

    Parameters
    ----------
    run : grades ``r_1..r_N`` (must be feasible for ``c``).
    c : per-grade counts ``(c_1..c_G)``, ``RB = sum(c) >= 1``.
    crossing : ``"impl"`` (default) or ``"literal"``, see :func:`first_crossing`.

    Returns
    -------
    Fraction in ``[0, 1]``; 0 when the run retrieves no relevant document.

    Raises
    ------
    TwistUndefinedError
        ``RB = 0`` or ``N < 2 RB``.
    InfeasibleRunError
        The run is infeasible for ``c``.
    """
    c = _counts(c)
    grades = tuple(int(x) for x in run)
    _need_full_scale(c, len(grades))
    _run(grades, c)
    if not any(grades):
        return Fraction(0)
    return (recovery_ratio(grades, c, crossing) + space_ratio(grades, c)) / 2


# -- CRP indicators (section 4) --------------------------------------------------------------
def _balance_rank(crp: Sequence[int], rb: int) -> float | int:
    """First rank at or after the (first) rank of min CRP where ``CRP_k >= 0``, clipped
    below at RB; ``math.inf`` if there is none."""
    start = list(crp).index(min(crp))
    for k in range(start, len(crp)):
        if crp[k] >= 0:
            return max(k + 1, rb)
    return math.inf


def crp_indicators(run: Sequence[int], c: Sequence[int], crp_min_ref: str = "min") -> dict:
    """CRP summary indicators of one run against the worst case ``w`` (the full-scale run).

    Parameters
    ----------
    run : grades ``r_1..r_N`` (feasible for ``c``), ``N >= 2 RB``.
    c : per-grade counts, ``RB >= 1``.
    crp_min_ref : ``"min"`` (SPEC_MEASURES section 4 as written:
        ``CRP_min = 1 - min(CRP_r) / min(CRP_w)``) or ``"at_argmin"``
        (``1 - min(CRP_r) / CRP_w(k*)`` with ``k*`` the first rank of ``min(CRP_r)``; the
        reading that reproduces the section's test value 33/52).

    Returns
    -------
    dict with exact values, *not clipped* (they may leave ``[0, 1]``):

    ``b_r``, ``b_w``
        balance ranks: first rank ``k`` at or after the first rank of ``min(CRP)`` with
        ``CRP_k >= 0``, clipped below at RB (int); ``b_r = math.inf`` when CRP never
        returns to ``>= 0`` (``b_w`` is always finite since ``CRP_w(N) >= 0``).
    ``rho_crp``
        ``RB / b_r`` (Fraction; 0 when ``b_r`` is infinite).
    ``b_ratio``
        ``1 - b_r / b_w`` (Fraction; ``-math.inf`` when ``b_r`` is infinite).
    ``crp_min``
        ``1 - min(CRP_r) / ref`` (Fraction; ``None`` if ``ref = 0``).
    ``crp_n``
        ``1 - CRP_r(N) / CRP_w(N)`` (Fraction; ``None`` when ``CRP_w(N) = 0``, which
        happens only for one-grade topics with ``N = 2 RB``).
    ``min_crp``, ``min_rank``, ``crp_at_n``
        ``min(CRP_r)``, its first rank, ``CRP_r(N)`` (ints).
    """
    if crp_min_ref not in CRP_MIN_REFS:
        raise ValueError(f"crp_min_ref must be one of {CRP_MIN_REFS}, got {crp_min_ref!r}")
    c = _counts(c)
    grades = tuple(int(x) for x in run)
    n = len(grades)
    rb = _need_full_scale(c, n)
    crp_r = cumulated_relative_positions(grades, c)
    crp_w = cumulated_relative_positions(full_scale_run(c, n), c)
    b_r, b_w = _balance_rank(crp_r, rb), _balance_rank(crp_w, rb)
    min_r = min(crp_r)
    k_min = crp_r.index(min_r)
    ref = min(crp_w) if crp_min_ref == "min" else crp_w[k_min]
    finite = b_r != math.inf
    return {
        "b_r": b_r, "b_w": b_w,
        "rho_crp": Fraction(rb, b_r) if finite else Fraction(0),
        "b_ratio": 1 - Fraction(b_r, b_w) if finite else -math.inf,
        "crp_min": 1 - Fraction(min_r, ref) if ref != 0 else None,
        "crp_n": 1 - Fraction(crp_r[-1], crp_w[-1]) if crp_w[-1] != 0 else None,
        "min_crp": min_r, "min_rank": k_min + 1, "crp_at_n": crp_r[-1],
    }


# -- vectorised versions ---------------------------------------------------------------------
def _as_runs(runs, c: tuple[int, ...]) -> np.ndarray:
    """Runs as a 2-D int64 array, grades checked to lie in ``{0..G}``."""
    return validate_runs(runs, len(c) + 1, None).astype(np.int64)


def feasible_many(runs: ArrayLike, c: Sequence[int]) -> np.ndarray:
    """Boolean mask (n_runs,): the runs holding at most ``c_g`` documents of every grade
    ``g >= 1``."""
    c = _counts(c)
    arr = _as_runs(runs, c)
    ok = np.ones(arr.shape[0], dtype=bool)
    for g in range(1, len(c) + 1):
        ok &= (arr == g).sum(axis=1) <= c[g - 1]
    return ok


def relative_positions_many(runs: ArrayLike, c: Sequence[int]) -> np.ndarray:
    """RP of every run: int64 array (n_runs, N). The formula is applied to every run,
    feasible or not (a grade with ``c_g = 0`` uses the empty interval ``[lo, lo - 1]``)."""
    c = _counts(c)
    arr = _as_runs(runs, c)
    lo, hi = (np.asarray(v, dtype=np.int64) for v in grade_intervals(c, arr.shape[1]))
    k = np.arange(1, arr.shape[1] + 1, dtype=np.int64)
    low, high = lo[arr], hi[arr]
    return np.where(k < low, k - low, np.where(k > high, k - high, 0))


def _crossings_many(crp: np.ndarray, crossing: str) -> np.ndarray:
    """First crossing rank j of every row (int64, 0 when there is none)."""
    if crossing not in CROSSINGS:
        raise ValueError(f"crossing must be one of {CROSSINGS}, got {crossing!r}")
    a, b = crp[:, :-1], crp[:, 1:]
    if crossing == "impl":
        hit = (a <= 0) != (b <= 0)
    else:
        hit = ((a <= 0) & (b >= 0)) | ((a >= 0) & (b <= 0))
    return np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)


def _reduce(num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    g = np.gcd(num, den)
    g[g == 0] = 1
    return num // g, den // g


def twist_many(runs: ArrayLike, c: Sequence[int], crossing: str = "impl") -> dict[str, np.ndarray]:
    """Twist of many runs of one topic at once (numpy), with exact fractions.

    Parameters
    ----------
    runs : integer array (n_runs, N) of grades, ``N >= 2 RB``.
    c : per-grade counts ``(c_1..c_G)``.
    crossing : ``"impl"`` or ``"literal"``.

    Returns
    -------
    dict of arrays of length n_runs:

    ``tau``, ``rho``, ``sigma``
        float64 values; NaN for infeasible runs.
    ``tau_num``/``tau_den``, ``rho_num``/``rho_den``, ``sigma_num``/``sigma_den``
        exact values as reduced int64 fractions (computed for every run by the formulas).
    ``s_plus``, ``s_minus``
        spaces (int64).
    ``feasible``
        boolean mask (see :func:`feasible_many`).
    """
    c = _counts(c)
    arr = _as_runs(runs, c)
    rb = _need_full_scale(c, arr.shape[1])
    fs_plus, fs_minus = full_scale_spaces(c, arr.shape[1])
    rp = relative_positions_many(arr, c)
    crp = np.cumsum(rp, axis=1)
    s_plus, s_minus = np.clip(rp, 0, None).sum(axis=1), np.clip(-rp, 0, None).sum(axis=1)
    j = _crossings_many(crp, crossing)
    zero = (crp == 0).all(axis=1)
    rho_num = np.where((j > 0) | zero, rb, 0).astype(np.int64)
    rho_den = np.where(j > 0, np.maximum(rb, j), rb).astype(np.int64)
    ap, am = fs_plus - s_plus, fs_minus - s_minus
    sig_num, sig_den = 2 * ap * am, ap * fs_minus + am * fs_plus
    empty = sig_den == 0
    sig_num, sig_den = np.where(empty, 0, sig_num), np.where(empty, 1, sig_den)
    tau_num = rho_num * sig_den + sig_num * rho_den
    tau_den = 2 * rho_den * sig_den
    none = ~(arr > 0).any(axis=1)
    tau_num, tau_den = np.where(none, 0, tau_num), np.where(none, 1, tau_den)
    out = {"feasible": feasible_many(arr, c), "s_plus": s_plus, "s_minus": s_minus}
    for name, num, den in (("tau", tau_num, tau_den), ("rho", rho_num, rho_den), ("sigma", sig_num, sig_den)):
        num, den = _reduce(num, den)
        out[f"{name}_num"], out[f"{name}_den"] = num, den
        out[name] = np.where(out["feasible"], num / den, np.nan)
    return out


def _balance_many(crp: np.ndarray, rb: int) -> tuple[np.ndarray, np.ndarray]:
    """(first argmin rank (1-based), balance rank with 0 = infinite) of every row."""
    start = crp.argmin(axis=1)
    ks = np.arange(crp.shape[1])
    hit = (crp >= 0) & (ks[None, :] >= start[:, None])
    b = np.where(hit.any(axis=1), np.maximum(hit.argmax(axis=1) + 1, rb), 0)
    return start + 1, b.astype(np.int64)


def crp_many(runs: ArrayLike, c: Sequence[int], crp_min_ref: str = "min") -> dict[str, np.ndarray]:
    """CRP indicators of many runs of one topic (numpy); see :func:`crp_indicators`.

    Returns
    -------
    dict of arrays of length n_runs:

    ``b_r`` (int64, **0 = infinite**), ``b_w`` (int, scalar), ``min_crp``, ``min_rank``,
    ``crp_at_n``, ``min_ref`` (the denominator of ``crp_min``), ``crp_w_n`` (scalar
    ``CRP_w(N)``): exact integers from which every indicator is an exact fraction;
    ``rho_crp``, ``b_ratio``, ``crp_min``, ``crp_n``: float64 (``b_ratio = -inf`` for
    infinite ``b_r``, ``crp_min``/``crp_n`` NaN where their denominator is 0, every float
    NaN for infeasible runs); ``feasible``: boolean mask.
    """
    if crp_min_ref not in CRP_MIN_REFS:
        raise ValueError(f"crp_min_ref must be one of {CRP_MIN_REFS}, got {crp_min_ref!r}")
    c = _counts(c)
    arr = _as_runs(runs, c)
    n = arr.shape[1]
    rb = _need_full_scale(c, n)
    crp = np.cumsum(relative_positions_many(arr, c), axis=1)
    crp_w = np.cumsum(relative_positions_many(np.asarray([full_scale_run(c, n)]), c), axis=1)[0]
    min_rank, b_r = _balance_many(crp, rb)
    b_w = int(_balance_many(crp_w[None, :], rb)[1][0])
    min_r = crp.min(axis=1)
    ref = np.full(len(arr), crp_w.min()) if crp_min_ref == "min" else crp_w[min_rank - 1]
    at_n, w_n = crp[:, -1], int(crp_w[-1])
    finite = b_r > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = {
            "rho_crp": np.where(finite, rb / np.where(finite, b_r, 1), 0.0),
            "b_ratio": np.where(finite, 1 - b_r / b_w, -np.inf),
            "crp_min": np.where(ref != 0, 1 - min_r / np.where(ref != 0, ref, 1), np.nan),
            "crp_n": np.full(len(arr), np.nan if w_n == 0 else 1.0) - (at_n / w_n if w_n else 0),
        }
    feasible = feasible_many(arr, c)
    for key in out:
        out[key] = np.where(feasible, out[key], np.nan)
    out.update(b_r=b_r, b_w=b_w, min_crp=min_r, min_rank=min_rank, crp_at_n=at_n, min_ref=ref,
               crp_w_n=w_n, feasible=feasible)
    return out
