"""Order-theoretic checks of measures (SPEC_MEASURES section 6), exhaustive over REL^N.

Conventions
-----------
* Runs, run ids and relevance strings as in :mod:`~irscale.scales.analysis.run_order`,
  which also holds the partial order and its generating moves.
* Orders are never decided in floating point. Every check works on the *exact unq ranks*
  of all runs of the space (:func:`space_ranks`, from :meth:`Scale.rank_ids`): equal
  ranks are equal values and rank order is value order, exactly, by construction of the
  tables (exact integer keys; formal logarithm keys certified in 60 digits). Values shown
  in reports come from ``Measure.exact_value`` (a Fraction for rational measures, a
  60-digit mpmath number for logarithmic discounts).
* RB-dependent measures are checked on the space of all runs, i.e. with recall base
  rb = N (every run feasible). For binary runs every rb >= N gives the same order, and
  the order of the feasible runs of a smaller rb is the restriction of this one (the
  value is the rb = N value times a positive constant, or the same numerator over a
  constant normaliser), so nothing is lost.
* Exhaustive checks enumerate ``levels**N`` runs; by default at most
  :data:`DEFAULT_LIMIT` = 2^20 (binary N <= 20, ternary N <= 12). Larger spaces are
  refused with :class:`AxiomLimitError` (raise ``limit`` deliberately to go further).

Checks
------
* :func:`check_axiom`: a measure never scores a greater run lower, checked as
  rank(after) >= rank(before) for every run and every generating move (by transitivity
  this is the axiom for every comparable pair). Reports the moves checked, violations
  (with examples and exact values) and ties (moves the measure does not see).
* disagreements between two measures, pairs of runs they order in opposite directions
  (:mod:`~irscale.scales.analysis.disagreements`).
* :func:`balancing_index`: B(N), the largest b such that one top-grade document at
  rank 1 scores no more than grade-1 documents filling ranks b..N.
* :func:`equal_spacing`: whether the distinct values are equally spaced (an interval
  scale on the run space), decided exactly.
* :func:`axioms_summary`: a JSON-serialisable bundle of the above for the CLI and
  ``irscale spacing``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np

from irscale.errors import CertificationError
from irscale.scales.analysis.run_order import AxiomLimitError, apply_move, decode_ids, generating_moves, run_string
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.build import scale

#: Largest run space (levels**N) checked exhaustively unless a caller raises ``limit``.
DEFAULT_LIMIT = 2 ** 20
#: Examples kept in reports.
MAX_EXAMPLES = 10
#: Relative tolerance under which two 60-digit values count as equal (log discounts).
MP_REL_TOL = mpmath.mpf(10) ** -40
#: Digits of the high-precision comparisons (as :data:`irscale.scales.measures.keys.MP_DIGITS`).
MP_DIGITS = 60


def _check_space(levels: int, n: int, limit: int, what: str) -> int:
    size = levels ** n
    if size > limit:
        raise AxiomLimitError(
            f"{what}: the run space has {levels}^{n} = {size} runs, more than the exhaustive limit of "
            f"{limit} ({_pow2(limit)}); use a smaller N or raise the limit deliberately")
    return size


def _pow2(x: int) -> str:
    return f"2^{x.bit_length() - 1}" if x > 0 and x & (x - 1) == 0 else str(x)


# -- exact ranks of the whole space ------------------------------------------------------------
def _measure_at(measure, n: int | None = None) -> Measure:
    """The measure (name or :class:`Measure`) at cutoff ``n`` (names may omit ``@N``
    when n is given; a given n replaces the cutoff)."""
    if isinstance(measure, str) and "@" not in measure:
        if n is None:
            raise AxiomLimitError(f"measure {measure!r} needs a cutoff: write NAME@N or give n")
        measure = f"{measure}@{n}"
    m = parse_measure(measure)
    if n is not None and m.n != n:
        m = dataclasses.replace(m, n=int(n))
    return m


def full_rb(measure: Measure) -> RecallBase:
    """The recall base under which every run is feasible: N for RB-dependent measures,
    None for the others."""
    return measure.common_rb()


def applicable(measure: Measure) -> bool:
    """Whether the checks apply: a measure over the runs of REL^N (not truncated rankings)
    with a scale of all runs (not one per topic)."""
    return measure.id_count() == measure.levels ** measure.n and measure.has_common_scale()


def _check_applicable(measure: Measure) -> None:
    if not applicable(measure):
        raise AxiomLimitError(f"{measure}: the order-theoretic checks apply to measures over the runs of REL^N "
                              f"with a scale of all runs; this one has truncated rankings or one table per topic")


@functools.lru_cache(maxsize=8)
def _space_ranks_cached(measure: Measure) -> np.ndarray:
    s = scale(measure, full_rb(measure))
    ranks = s.rank_ids(np.arange(measure.levels ** measure.n, dtype=np.int64))
    ranks.setflags(write=False)
    return ranks


def space_ranks(measure: str | Measure, n: int | None = None, limit: int = DEFAULT_LIMIT) -> np.ndarray:
    """Exact 1-based unq ranks of every run of REL^N, indexed by run id (read-only int64
    array of length levels**N), for rb = N if the measure depends on the recall base.
    Built with the in-memory table (:func:`irscale.scale`) and
    :meth:`Scale.rank_ids`; cached for the last few measures."""
    m = _measure_at(measure, n)
    _check_applicable(m)
    _check_space(m.levels, m.n, limit, str(m))
    return _space_ranks_cached(m)


@dataclass
class _Subject:
    label: str
    measure: Measure | None
    levels: int
    n: int
    rb: RecallBase
    ranks: np.ndarray


def _subject(obj, n: int | None, levels: int | None, limit: int) -> _Subject:
    """A measure (name or Measure) or a rank array over run ids (then ``levels``, default
    2, gives the space; N follows from the length)."""
    if isinstance(obj, (np.ndarray, list, tuple)):
        ranks = np.asarray(obj)
        L = 2 if levels is None else int(levels)
        if ranks.ndim != 1 or ranks.size < L or ranks.dtype.kind not in "iu":
            raise AxiomLimitError(f"a rank array must be a 1-D integer array over the run ids of REL^N "
                                  f"(length levels^N), got shape {ranks.shape} and dtype {ranks.dtype}")
        nn = round(math.log(ranks.size, L))
        if L ** nn != ranks.size:
            raise AxiomLimitError(f"a rank array of length {ranks.size} is not indexed by the runs of REL^N "
                                  f"with {L} levels")
        if n is not None and n != nn:
            raise AxiomLimitError(f"rank array covers N = {nn}, not n = {n}")
        _check_space(L, nn, limit, "rank array")
        # dense 1-based ranks (order preserved)
        dense = np.unique(ranks, return_inverse=True)[1].reshape(-1).astype(np.int64) + 1
        return _Subject("ranks", None, L, nn, None, dense)
    m = _measure_at(obj, n)
    if levels is not None and levels != m.levels:
        raise AxiomLimitError(f"{m} has {m.levels} relevance levels, not {levels}")
    ranks = space_ranks(m, limit=limit)
    return _Subject(str(m), m, m.levels, m.n, full_rb(m), ranks)


# -- exact values for reports ----------------------------------------------------------------
class _Valuer:
    """Exact values of runs of one measure for one recall base (``exact_value``) and their
    exact identities (``value_key``: equal exactly when the values are equal)."""

    def __init__(self, measure: Measure, rb: RecallBase):
        self.measure, self.rb = measure, rb

    def key(self, run):
        return self.measure.value_key([int(x) for x in run], self.rb)

    def value(self, run):
        return self.measure.exact_value([int(x) for x in run], self.rb)


def fmt_value(v: Fraction | int | mpmath.mpf) -> str:
    """Text of an exact value: ``"3/4"`` for a Fraction, 25 significant digits for mpmath."""
    if isinstance(v, Fraction):
        return str(v)
    if isinstance(v, int):
        return str(v)
    return mpmath.nstr(v, 25)


# -- 2. the axiom ---------------------------------------------------------------------------------
@dataclass
class AxiomReport:
    """Result of :func:`check_axiom`.

    ``n_pairs``: (run, move) pairs checked; ``n_violations``: pairs with
    rank(after) < rank(before) (the greater run scores lower); ``n_ties``: pairs with equal
    values (the measure does not distinguish the move); ``n_increases`` the rest.
    ``by_move``: the same counts per move; ``examples``: up to 10 violations (smallest run
    ids first) with relevance strings, ranks and exact values.
    """

    measure: str
    n: int
    levels: int
    rb: RecallBase
    n_runs: int
    n_pairs: int
    n_violations: int
    n_ties: int
    n_increases: int
    by_move: list = field(default_factory=list)
    examples: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def holds(self) -> bool:
        """The measure satisfies the axiom on REL^N (no violation)."""
        return self.n_violations == 0

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["holds"] = self.holds
        return d


def _axiom_counts(ranks: np.ndarray, levels: int, n: int, max_examples: int = MAX_EXAMPLES):
    ids = np.arange(levels ** n, dtype=np.int64)
    digits = decode_ids(ids, levels, n)
    by_move, ex = [], []
    tot = np.zeros(3, np.int64)
    for mv in generating_moves(levels, n):
        mask, after = apply_move(mv, ids, levels, n, digits)
        before = ids[mask]
        rb, ra = ranks[before], ranks[after]
        viol = ra < rb
        nv, nt = int(viol.sum()), int((ra == rb).sum())
        npairs = int(before.size)
        tot += (npairs, nv, nt)
        by_move.append({"move": mv.label, "pairs": npairs, "violations": nv, "ties": nt})
        if nv:
            w = np.flatnonzero(viol)[:max_examples]
            ex += [(int(before[i]), int(after[i]), mv, int(rb[i]), int(ra[i])) for i in w]
    ex.sort(key=lambda e: (e[0], e[1]))
    return tot, by_move, ex[:max_examples]


def check_axiom(measure: str | Measure | np.ndarray | list[int] | tuple[int, ...], n: int | None = None,
                limit: int = DEFAULT_LIMIT, *, levels: int | None = None,
                max_examples: int = MAX_EXAMPLES) -> AxiomReport:
    """Check exhaustively that a measure never scores a greater run lower.

    For every run of REL^N and every generating move that applies to it
    (:func:`generating_moves`), the move's result must have an exact unq rank >= the
    run's. By transitivity this is the axiom for all comparable pairs.

    Parameters
    ----------
    measure : str, Measure or array of int
        Measure name (``"AP@10"``, or ``"AP"`` with ``n``), a :class:`Measure`, or a rank
        array over run ids (``ranks[id]``, any integers whose order is the value order;
        then ``levels`` gives REL, default 2).
    n : int, optional
        Cutoff N (replaces the measure's own).
    limit : int
        Largest run space levels**N checked (default 2^20); larger raises
        :class:`AxiomLimitError`.

    Returns
    -------
    AxiomReport
        Counts, per-move counts and up to ``max_examples`` violations, each with the
        relevance strings before and after, the move, the ranks and (for measures) the
        exact values (``exact_value``; rb = N for RB-dependent measures).
    """
    t0 = time.perf_counter()
    sub = _subject(measure, n, levels, limit)
    (npairs, nv, nt), by_move, ex = _axiom_counts(sub.ranks, sub.levels, sub.n, max_examples)
    valuer = _Valuer(sub.measure, sub.rb) if sub.measure is not None else None
    examples = []
    for b, a, mv, rkb, rka in ex:
        rb_run, ra_run = decode_ids([b, a], sub.levels, sub.n)
        e = {"before": run_string(rb_run), "after": run_string(ra_run), "move": mv.label,
             "rank_before": rkb, "rank_after": rka}
        if valuer is not None:
            vb, va = valuer.value(rb_run), valuer.value(ra_run)
            e.update(value_before=fmt_value(vb), value_after=fmt_value(va))
        examples.append(e)
    return AxiomReport(sub.label, sub.n, sub.levels, sub.rb, int(sub.ranks.size), int(npairs), int(nv), int(nt),
                       int(npairs - nv - nt), by_move, examples, round(time.perf_counter() - t0, 4))

# -- 4. balancing index ---------------------------------------------------------------------------------
def _compare(valuer: _Valuer, a, b) -> int:
    """Sign of value(a) - value(b), exact: equal keys are equal values (the keys decide
    ties exactly for every key kind); otherwise the exact values (Fractions, or 60-digit
    mpmath whose difference must exceed 1e-40 relative, else CertificationError)."""
    if valuer.key(a) == valuer.key(b):
        return 0
    with mpmath.workdps(MP_DIGITS):
        va, vb = valuer.value(a), valuer.value(b)
        if isinstance(va, Fraction) and isinstance(vb, Fraction):
            return (va > vb) - (va < vb)
        diff = va - vb
        if abs(diff) <= MP_REL_TOL * max(abs(va), abs(vb), 1):
            raise CertificationError(f"{valuer.measure}: cannot separate {fmt_value(va)} from {fmt_value(vb)} "
                                     f"(runs {run_string(a)}, {run_string(b)}) in {MP_DIGITS} digits")
        return 1 if diff > 0 else -1


def balancing_profile(measure: str | Measure, n: int | None = None) -> list[bool]:
    """For b = 1..N: whether the run with one top-grade document at rank 1 (all else 0)
    scores no more than the run with grade-1 documents at ranks b..N (all else 0).
    RB-dependent measures at rb = N. No enumeration: works up to N = MAX_N (32)."""
    m = _measure_at(measure, n)
    nn, G = m.n, m.levels - 1
    valuer = _Valuer(m, full_rb(m))
    top = np.zeros(nn, np.uint8)
    top[0] = G
    out = []
    for b in range(1, nn + 1):
        fill = np.zeros(nn, np.uint8)
        fill[b - 1:] = 1
        out.append(_compare(valuer, top, fill) <= 0)
    return out


def balancing_index(measure: str | Measure, n: int | None = None) -> int:
    """Balancing index B(N) (SPEC_MEASURES section 6).

    The largest b in 1..N such that one top-grade document at rank 1 (all else 0) scores
    no more than (<=, exact comparison) grade-1 documents filling ranks b..N (all else 0).
    RB-dependent measures are evaluated at rb = N. Conventions: B = N when even a single
    grade-1 document at rank N matches the top document at rank 1 (rank-insensitive
    measures: P@N, R@N, F1@N have B(N) = N); B = 0 when even b = 1 fails (all N ranks
    filled with grade-1 documents score below one top-grade document: possible for graded
    measures only; for a binary measure satisfying the axiom b = 1 holds trivially, as
    "1...1" dominates "10...0"). The largest b is taken even if some smaller b fails
    (which a measure satisfying the axiom cannot do: the filled runs decrease with b).

    Known values: RBP(p=0.8): B(20) = 7, B(N) = 8 for N > 20; RBP with p <= 1/2 and RR:
    B = 1; DCG(b=2): the largest b with sum_{k=b..N} 1/log2(k) >= 1 (ranks >= 2).
    Computed from exact values, no table needed (N up to 32).
    """
    prof = balancing_profile(measure, n)
    held = [b for b, ok in enumerate(prof, start=1) if ok]
    return max(held) if held else 0


# -- 5. equal spacing -------------------------------------------------------------------------------
@dataclass
class SpacingReport:
    """Result of :func:`equal_spacing`: ``equal`` whether all K - 1 gaps between the K
    distinct values are equal; ``n_distinct_gaps``; ``min_gap``/``max_gap`` exact text
    (and floats); ``arithmetic``: ``"exact-rational"`` (Fractions) or ``"mpmath60"`` (gaps
    equal within 1e-40 relative, cross-checked against the formal logarithm coefficients
    of the keys)."""

    measure: str
    n: int
    rb: RecallBase
    n_distinct: int
    equal: bool
    n_distinct_gaps: int
    min_gap: str | None
    max_gap: str | None
    min_gap_float: float | None
    max_gap_float: float | None
    arithmetic: str
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def equal_spacing(measure: str | Measure, n: int | None = None, rb: RecallBase = None, limit: int = DEFAULT_LIMIT,
                  method: str = "auto") -> SpacingReport:
    """Whether a measure's distinct values on REL^N (its feasible runs for ``rb``) are
    equally spaced, i.e. the measure is itself an interval scale there.

    The distinct values are those of the in-memory scale (:func:`irscale.scale`), in
    value order; each is evaluated exactly at its representative run
    (:attr:`Scale.representatives`, the smallest run id taking it), and all K - 1 gaps
    between neighbours are compared.

    * Rational measures: exact Fractions. ``method="generic"`` computes every value with
      ``exact_value``; the default fast path does the same arithmetic vectorised for
      :class:`~irscale.scales.measures.keys.LinearKey` measures (value = key * c(rb), so gap =
      (difference of exact integer keys) * c(rb), keys from the enumerator's kernels).
    * Logarithmic discounts (:class:`~irscale.scales.measures.keys.FormalLogKey`): a value is
      sum_c f_c X_c / d_c (times 1/ideal for normalised measures) with integer
      coefficients f_c and X_c = 1 or ln b / ln m; a gap is the same with the coefficient
      differences. Gaps with equal coefficient differences are exactly equal; every
      distinct coefficient difference is evaluated in 60-digit mpmath and must be > 0, and
      two distinct ones must differ by more than 1e-40 relative to the largest gap
      (otherwise CertificationError): so the number of distinct gaps is that of 60-digit
      values within 1e-40 relative. ``method="generic"`` evaluates every value in 60
      digits instead and clusters the sorted gaps at 1e-40 relative (slow beyond ~1e5
      values), cross-checked against the coefficient count.

    ``rb``: recall base of RB-dependent measures (default N: all runs); rejected for the
    others. ``limit`` bounds levels**N (AxiomLimitError beyond).
    """
    if method not in ("auto", "generic"):
        raise ValueError("method must be 'auto' or 'generic'")
    t0 = time.perf_counter()
    m = _measure_at(measure, n)
    _check_applicable(m)
    _check_space(m.levels, m.n, limit, str(m))
    if rb is None:
        rb = full_rb(m)
    s = scale(m, rb)
    reps = np.asarray(s.representatives, dtype=np.int64)
    runs = decode_ids(reps, m.levels, m.n)
    K = int(reps.size)
    gaps, arithmetic = m.exact_gaps(runs, s.rb)           # the distinct gaps, exactly (the measure's arithmetic)
    if method == "generic":                               # every value exactly, one by one
        with mpmath.workdps(MP_DIGITS):
            vals = [m.exact_value(run, s.rb) for run in runs]
            every = [vals[i + 1] - vals[i] for i in range(K - 1)]
            if any(g <= 0 for g in every):
                raise CertificationError(f"{m}: distinct values out of order")
            generic = _distinct_gaps(every)
        if len(generic) != len(gaps):
            raise CertificationError(f"{m}: {len(generic)} distinct gaps value by value but {len(gaps)} from the "
                                     f"exact keys")
        gaps = generic
    if any(g <= 0 for g in gaps):
        raise CertificationError(f"{m}: distinct values out of order")
    if len(_distinct_gaps(gaps)) != len(gaps):
        raise CertificationError(f"{m}: distinct exact gaps whose values agree within {MP_REL_TOL} relative at "
                                 f"{MP_DIGITS} digits")
    n_gaps = len(gaps)
    gmin, gmax = (gaps[0], gaps[-1]) if gaps else (None, None)
    lo, hi = (None, None) if gmin is None else (_text(gmin), _text(gmax))
    return SpacingReport(str(m), m.n, s.rb, K, n_gaps <= 1, n_gaps, lo, hi,
                         None if gmin is None else float(gmin), None if gmax is None else float(gmax),
                         arithmetic, round(time.perf_counter() - t0, 4))


def _distinct_gaps(gaps: list) -> list:
    """Sorted distinct gaps: exact Fractions by equality, high-precision (mpmath) numbers
    within :data:`MP_REL_TOL` relative to the largest."""
    ordered = sorted(gaps)
    if not ordered or isinstance(ordered[0], Fraction):
        return sorted(set(ordered))
    top = ordered[-1]
    return [g for i, g in enumerate(ordered) if i == 0 or g - ordered[i - 1] > MP_REL_TOL * top]


def _text(gap) -> str:
    return str(gap) if isinstance(gap, Fraction) else mpmath.nstr(gap, 25)


# -- 6. summary ----------------------------------------------------------------------------------------
def axioms_summary(measure: str | Measure, n: int | None = None, limit: int = DEFAULT_LIMIT, strict: bool = False
                   ) -> dict[str, Any]:
    """The order-theoretic facts of one measure on REL^N, JSON-serialisable.

    Keys: ``measure``, ``n``, ``levels``, ``rb`` (N for RB-dependent measures, else None),
    ``runs`` (levels^N), ``exhaustive`` (whether the space is within ``limit``),
    ``axiom_holds`` (bool), ``moves_checked``, ``violations``, ``ties`` (from
    :func:`check_axiom`), ``violation_examples`` (up to 3, "before -> after" strings),
    ``balancing_index`` (:func:`balancing_index`; computed at any N), ``equal_spacing``
    (bool), ``distinct_values``, ``distinct_gaps``, ``min_gap``, ``max_gap`` (exact text,
    :func:`equal_spacing`), ``seconds``. When levels^N exceeds ``limit`` the exhaustive
    fields are None (``strict=True`` raises :class:`AxiomLimitError` instead); measures the
    checks do not apply to (:func:`applicable`: truncated rankings, one table per topic)
    have every field None and ``applicable`` False.
    """
    t0 = time.perf_counter()
    m = _measure_at(measure, n)
    size = m.levels ** m.n
    if not applicable(m):
        if strict:
            _check_applicable(m)
        return {"measure": str(m), "n": m.n, "levels": m.levels, "rb": None, "runs": m.id_count(),
                "applicable": False, "exhaustive": False, "axiom_holds": None, "moves_checked": None,
                "violations": None, "ties": None, "violation_examples": [], "equal_spacing": None,
                "distinct_values": None, "distinct_gaps": None, "min_gap": None, "max_gap": None,
                "balancing_index": None, "seconds": round(time.perf_counter() - t0, 4)}
    out: dict[str, Any] = {"measure": str(m), "n": m.n, "levels": m.levels, "rb": full_rb(m), "runs": size,
                           "applicable": True, "exhaustive": size <= limit}
    if size <= limit:
        ax = check_axiom(m, limit=limit)
        sp = equal_spacing(m, limit=limit)
        out.update(axiom_holds=ax.holds, moves_checked=ax.n_pairs, violations=ax.n_violations, ties=ax.n_ties,
                   violation_examples=[f"{e['before']} -> {e['after']}" for e in ax.examples[:3]],
                   equal_spacing=sp.equal, distinct_values=sp.n_distinct, distinct_gaps=sp.n_distinct_gaps,
                   min_gap=sp.min_gap, max_gap=sp.max_gap)
    elif strict:
        _check_space(m.levels, m.n, limit, str(m))
    else:
        out.update(axiom_holds=None, moves_checked=None, violations=None, ties=None, violation_examples=[],
                   equal_spacing=None, distinct_values=None, distinct_gaps=None, min_gap=None, max_gap=None)
    out["balancing_index"] = balancing_index(m)
    out["seconds"] = round(time.perf_counter() - t0, 4)
    return out


def add_axioms(rows: list[dict], limit: int = DEFAULT_LIMIT) -> list[dict]:
    """Add the order-theoretic facts (``axiom_holds``, ``violations``, ``ties``,
    ``balancing_index``, ``equal_spacing``, ``distinct_gaps``) of each row's measure to
    spacing rows (:func:`irscale.scales.analysis.spacing.store_spacing`), in place; None where the
    run space exceeds ``limit``. Where the values are proven equally spaced, the float
    statistics that are then exactly zero (``gap_std``, ``gap_cv``, ``uncovered``,
    ``max_deviation``, ``mean_abs_deviation``) are set to 0 and the gap statistics to the
    exact gap, rather than float rounding noise like 8e-16."""
    for row in rows:
        summary = axioms_summary(row["measure"], limit=limit)
        for key in ("axiom_holds", "violations", "ties", "balancing_index", "equal_spacing", "distinct_gaps"):
            row[key] = summary.get(key)
        if summary.get("equal_spacing") and summary.get("distinct_values") == row.get("n_distinct"):
            gap = float(Fraction(summary["min_gap"]))           # exact text: a fraction or 25 digits
            row.update({k: 0.0 for k in ("gap_std", "gap_cv", "uncovered", "max_deviation", "mean_abs_deviation")
                        if k in row})
            row.update({k: gap for k in ("gap_mean", "gap_min", "gap_max") if k in row})
    return rows
