"""Bounded scales, the problem: what a bounded scale counts, for one measure and recall base.

A measure whose exact key is a sum of independent parts over groups of ranks
(:mod:`irscale.scales.measures.groups`) has one distinct value per tuple of group options; a
:class:`Problem` holds every group's options as floats enclosing their values (40-digit
values of the exact key, rounded outward), the documents of the recall base each option
counts (feasibility: a tuple's realisation with the fewest counted documents has at most r of
them), K the number of feasible tuples, and for RBP with rational p its geometric form.
Per-grade count vectors bounding two or more grades get a count dimension per binding grade
(:mod:`irscale.scales.tables.bounded_graded`), counted exactly with antichain states where
affordable (:mod:`irscale.scales.tables.bounded_states`). The counting on grids:
:mod:`irscale.scales.tables.bounded_grid`.
"""
from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np

from irscale.errors import MeasureError
from irscale.scales.measures.groups import Grouping, RankGroup
from irscale.scales.measures.keys import FormalLogKey, LinearKey
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables import bounded_graded as bg
from irscale.scales.tables.bounded_states import States, antichain_states, relaxed_groups
from irscale.scales.tables.oracles import oracle_count

#: Default target of :attr:`BoundedScale.error_bound` (scaled units).
DEFAULT_ERROR = 1e-4
#: Largest memory the programmes of a grid may take together (bytes).
MAX_BYTES = 6 << 30
#: Decimal digits of the option values (then rounded one ulp outward).
DIGITS = 40


def float_down(x: np.ndarray | float) -> np.ndarray | float:
    """The float below ``x`` (rounding outward)."""
    return np.nextafter(x, -np.inf)


def float_up(x: np.ndarray | float) -> np.ndarray | float:
    """The float above ``x`` (rounding outward)."""
    return np.nextafter(x, np.inf)


def enclose(x: Fraction | mpmath.mpf) -> tuple[float, float]:
    """Floats [lo, hi] around an exact (one ulp out) or 40-digit (two ulps) non-negative number."""
    f = float(x)
    if x == 0:
        return f, f
    lo, hi = float_down(f), float_up(f)
    return (float(lo), float(hi)) if isinstance(x, Fraction) else (float(float_down(lo)), float(float_up(hi)))


@dataclasses.dataclass
class Problem:
    """What a bounded scale counts, for one measure and recall base: the groups' options as
    enclosing floats ``lows``/``highs`` (raw units) with their ``counts`` (the documents the
    recall base bounds, all 0 when it bounds none) and ``rows`` = r + 1; or, for RBP,
    ``geometric`` = (a, c, distinct gains). ``factor``: raw = value * factor, enclosed;
    ``top``: an upper bound of the largest feasible raw value; ``k``: feasible tuples (their
    upper bound K+ where several grades are bound, ``k_lo`` then the lower one)."""

    grouping: Grouping
    counted: int | None
    rows: int
    k: int
    factor: tuple[float, float]
    top: float
    lows: list[np.ndarray] = dataclasses.field(default_factory=list)
    highs: list[np.ndarray] = dataclasses.field(default_factory=list)
    counts: list[np.ndarray] = dataclasses.field(default_factory=list)
    geometric: tuple[int, int, tuple[int, ...]] | None = None
    #: several bound grades (:mod:`~irscale.scales.tables.bounded_graded`): the up programme's
    #: counts (kappa; ``counts`` are mu), both as flattened multi-indices, their digits per
    #: group, the rows' digits (``radix``: the dimensions' c_g + 1, empty for one count),
    #: K's lower bound ``k_lo`` (``k`` the upper one) and the relaxed grades' correction ``excess``
    counts_up: list[np.ndarray] | None = None
    digits: list[np.ndarray] = dataclasses.field(default_factory=list)
    digits_up: list[np.ndarray] = dataclasses.field(default_factory=list)
    row_digits: np.ndarray | None = None
    radix: tuple[int, ...] = ()
    k_lo: int | None = None
    excess: int = 0
    graded: object = None
    #: several count dimensions counted exactly (:mod:`~irscale.scales.tables.bounded_states`):
    #: rows are antichain states (``rows`` of them), one programme gives both bounds
    states: States | None = None

    @property
    def method(self) -> str:
        """How feasibility is counted: "states" (antichains), else "" (counts, brackets)."""
        return "states" if self.states is not None else ""


def _geometric(spec: LinearKey, n: int) -> tuple[int, int, tuple[int, ...]] | None:
    """(a, c, distinct gains) when the key is sum_k g(r_k) a^k c^(n-1-k) (RBP), else None."""
    w = spec.weights
    if not w or max(w[0]) <= 0:
        return None
    ratio = Fraction(max(w[1]), max(w[0])) if n > 1 else Fraction(1, 2)
    a, c = ratio.numerator, ratio.denominator
    if not 0 < a < c:
        return None
    cn = c ** (n - 1)
    if any(x % cn for x in w[0]) or any(w[k][g] * c ** k != x * a ** k for k in range(n) for g, x in enumerate(w[0])):
        return None
    return a, c, tuple(sorted({x // cn for x in w[0]}))


def _log_options(spec: FormalLogKey, group: RankGroup) -> tuple[np.ndarray, np.ndarray]:
    """Enclosing floats of the raw values (unnormalised DCG) of a group's options."""
    xs = spec.coord_values_mp()
    lo, hi = np.empty(len(group)), np.empty(len(group))
    with mpmath.workdps(DIGITS):
        for i, key in enumerate(group.keys):
            x = mpmath.fsum(f * v / d for f, v, d in zip(spec.fields_python(key), xs, spec.denoms) if f)
            lo[i], hi[i] = enclose(x)
    return lo, hi


def _grouping(measure: Measure, counted: int | None) -> Grouping:
    """The family's grouping at any N (``Measure.grouping`` stops at the oracles' N = 40)."""
    got = measure.rank_grouping() if counted is None else measure.rank_grouping(counted=counted)
    if not isinstance(got, Grouping):
        raise MeasureError(f"{measure}: no bounded scale ({got})")
    return got


def _count_poly(groups: tuple[RankGroup, ...], r: int) -> list[int]:
    """Feasible tuples by their fewest counted documents 0..r (Python integers)."""
    poly = [1] + [0] * r
    for g in groups:
        by = Counter(c for c in g.min_counts if c <= r)
        poly = [sum(m * poly[i - c] for c, m in by.items() if c <= i) for i in range(r + 1)]
    return poly


def bounded_problem(measure: Measure, rb: RecallBase = None, max_bytes: int = MAX_BYTES,
                    counted: str | None = None) -> Problem:
    """The :class:`Problem` of a measure and recall base (raises
    :class:`~irscale.errors.MeasureError` for measures without one: neither RBP with rational
    p nor a logarithmic DCG); per-grade vectors bounding several grades are counted by
    :func:`graded_problem`, its dimensions chosen for :data:`DEFAULT_ERROR` whatever width is
    asked, so that a problem, and the grids stored for it, depend on the measure and the
    recall base alone (and ``counted``: "" keeps kappa and mu's brackets where antichain states
    would count, :attr:`Problem.method`; None: states where they are affordable)."""
    rb = measure.check_rb(rb)
    spec = getattr(measure, "spec", None)
    if isinstance(spec, FormalLogKey) and bounds_several(measure, rb):
        return graded_problem(measure, rb, DEFAULT_ERROR, max_bytes, counted != "")
    counted, r = oracle_count(measure, rb)
    if isinstance(spec, LinearKey) and not measure.rb_dependent:
        geo = _geometric(spec, measure.n)
        if geo is None:
            raise MeasureError(f"{measure}: no bounded scale (its key is not a geometric sum of gains)")
        grouping = _grouping(measure, None)
        a, c, gains = geo
        factor = 1 / (spec.scale(rb) * c ** (measure.n - 1))
        top = gains[-1] * (1 - Fraction(a, c) ** measure.n) / (1 - Fraction(a, c))
        return Problem(grouping, None, 1, len(gains) ** measure.n, enclose(factor), enclose(top)[1], geometric=geo)
    if not isinstance(spec, FormalLogKey):
        raise MeasureError(f"{measure}: bounded scales exist for RBP with rational p and for DCG, nDCG and "
                           f"nDCG_trec (sums of independent parts over groups of ranks)")
    grouping = _grouping(measure, counted)
    groups = grouping.groups
    if r >= sum(max(g.min_counts) for g in groups):
        r = 0                                   # the recall base bounds nothing: every tuple is feasible
    lows, highs = zip(*(_log_options(spec, g) for g in groups))
    counts = [np.array(g.min_counts if r else [0] * len(g), np.int64) for g in groups]
    k = sum(_count_poly(groups, r)) if r else grouping.k
    norm = spec.normaliser(rb)
    with mpmath.workdps(DIGITS):
        factor = (1.0, 1.0) if norm is None else enclose(spec.raw_mp(norm))
    best = np.full(r + 1, -np.inf)
    best[0] = 0.0                               # largest raw value by fewest counted documents
    for hi, cnt in zip(highs, counts):
        nxt = np.full(r + 1, -np.inf)
        for x, cc in zip(hi, cnt):
            if cc <= r:
                nxt[cc:] = np.maximum(nxt[cc:], best[:r + 1 - cc] + x)
        best = nxt
    top = float(float_up(np.max(best) * (1 + 1e-12)))
    return Problem(grouping, counted, r + 1, k, factor, top, list(lows), list(highs), counts)


def bounds_several(measure: Measure, rb: RecallBase) -> bool:
    """Whether ``rb`` is a per-grade count vector bounding two or more grades (c_g < N)."""
    return measure.per_grade_rb and isinstance(rb, tuple) and sum(min(c, measure.n) < measure.n for c in rb) > 1


@functools.lru_cache(maxsize=256)
def graded_problem(measure: Measure, rb: tuple[int, ...], error: float, max_bytes: int = MAX_BYTES,
                   use_states: bool = True) -> Problem:
    """The :class:`Problem` of a per-grade count vector bounding several grades: count
    dimensions, brackets (mu for the down programme, kappa for the up one) and relaxed grades
    (:mod:`~irscale.scales.tables.bounded_graded`); made once (a plan, its refusals and the
    scale read the same one; problems are not changed once made)."""
    spec = measure.spec
    capped = tuple(min(c, measure.n) for c in rb)
    got = bg.graded_counts(measure, capped, error, max_bytes)
    groups = bg.as_grouping(got)
    lows, highs = zip(*(_log_options(spec, g) for g in groups.groups))
    mu, kappa, row_digits, strides = bg.digits(got)
    flat = [np.ascontiguousarray(d @ strides) for d in mu]
    flat_up = [np.ascontiguousarray(d @ strides) for d in kappa]
    norm = spec.normaliser(rb)
    with mpmath.workdps(DIGITS):
        factor = (1.0, 1.0) if norm is None else enclose(spec.raw_mp(norm))
    top = float(sum(h.max() for h in highs))
    for j, cap in enumerate(got.caps):             # the largest value with at most c_g of one dimension grade
        best = np.full(cap + 1, -np.inf)
        best[0] = 0.0
        for hi, dig in zip(highs, mu):
            nxt = np.full(cap + 1, -np.inf)
            for x, cc in zip(hi, dig[:, j].tolist()):
                if cc <= cap:
                    nxt[cc:] = np.maximum(nxt[cc:], best[:cap + 1 - cc] + x)
            best = nxt
        top = min(top, float(np.max(best)))
    top = float(float_up(top * (1 + 1e-12)))
    exact = _exact_states(got, capped, highs, max_bytes) if use_states else None
    if exact is not None:
        states, k, excess = exact
        return Problem(groups, None, states.n, k, factor, top, list(lows), list(highs),
                       [np.asarray(c) for c in states.classes], k_lo=max(k - excess, 1), excess=excess, graded=got,
                       states=states)
    rows = int(row_digits.shape[0])
    return Problem(groups, None, rows, got.k_hi, factor, top, list(lows), list(highs), flat, counts_up=flat_up,
                   digits=mu, digits_up=kappa, row_digits=row_digits,
                   radix=tuple(c + 1 for c in got.caps) if len(got.caps) > 1 else (), k_lo=got.k_lo,
                   excess=got.excess, graded=got)


def _exact_states(got: bg.GradedCounts, capped: tuple[int, ...], highs: tuple, max_bytes: int
                  ) -> tuple[States, int, int] | None:
    """(states, K on the dimensions, the relaxed grades' correction) when the brackets of
    several dimensions are not exact and counting antichain states narrows K's interval within
    :data:`~irscale.scales.tables.bounded_states.STATE_LIMIT` states and the memory budget."""
    if len(got.dims) < 2 or got.k_lo == got.k_hi:
        return None
    dims = [got.bound.index(g) for g in got.dims]
    states = antichain_states([g.pareto for g in got.groups], dims, got.caps, order_of(highs))
    if states is None or 8 * states.n * bg.COARSE_CELLS > max_bytes:        # (one programme)
        return None
    k = states.count(order_of(highs))
    loose = relaxed_groups(got.groups, dims)
    excess = sum(bg.excess(loose, dims, got.caps, got.bound.index(g), capped[g - 1])[0] for g, _ in got.relaxed)
    if excess / k >= (got.k_hi - got.k_lo) / got.k_hi:
        return None                             # no narrower than the brackets
    return states, k, excess


def order_of(highs: list[np.ndarray] | tuple) -> list[int]:
    order = sorted(range(len(highs)), key=lambda g: highs[g].max())
    last = max(order, key=lambda g: len(highs[g]))
    return [g for g in order if g != last] + [last]
