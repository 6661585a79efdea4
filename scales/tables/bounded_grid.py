"""Bounded scales, the counting: certified bounds of unq ranks on grids of values (N > 40).

A measure whose exact key is a sum of independent parts over groups of ranks
(:mod:`irscale.scales.measures.groups`) has one distinct value per tuple of group options: the
unq rank of a value v is the number of feasible tuples of value at most v, K the number of
feasible tuples (a tuple is feasible for a recall base when its realisation with the fewest
counted documents has at most r of them: :func:`~irscale.scales.tables.oracles.oracle_count`).
The rank oracles count this exactly to N = 40; here it is bounded at any N (tested to 1000)
by dynamic programmes on a grid of ``scale`` cells per raw unit (raw: the unnormalised DCG;
RBP's tail value below). Every option's value x, enclosed in floats [x-, x+] (40-digit values
of its exact key, rounded outward), becomes floor(x- scale) cells in the *down* programme and
ceil(x+ scale) in the *up* one; each programme convolves the groups' options (weight fl(1/m)
each, m options) over (count, cell), counts above r dropped (``bounded_kernels``). With D(V)
and U(V) their cumulative masses at cell V and w the exact mass of one tuple,

    U(floor(v scale)) / w  <=  rank(v)  <=  D(floor(v scale)) / w,

since a value x <= v has down cells <= v scale and up cells <= v scale imply x <= v. The gap
is the mass of the tuples within the accumulated rounding (G cells, G groups) of v.

RBP with p = a/c is self-similar: T_j = g(r_j) + p T_(j+1) for the tail values T_j =
sum_(k >= j) g(r_k) p^(k-j), so one programme step per rank maps the cells of T_(j+1) to those
of T_j, on grids coarser by rho per rank away from the top (1 < rho < 1/p: rank j's rounding
moves T_1 by p^(j-1) rho^(j-1) cells of T_1, in all 1 / (1 - p rho) cells, while the work
shrinks geometrically); the ranks past J, whose total weight is below a cell, are a point mass
at 0 (down) or at their largest value (up).

Rigour: masses are sums of non-negative products, so a computed mass is the exact one times
(1 + theta), |theta| <= d u / (1 - d u) for d roundings along a path (:func:`rounding_depth`),
plus 2^-1074 per multiplication that underflows; bounds are widened by both, ranks follow in
exact rational arithmetic (floats rounded outward while K < 2^53), K exactly (Python
integers, the groups' count polynomials). Assumption, as for the oracles: distinct tuples are
distinct values (a theorem for RBP with rational p; for DCG, nDCG and nDCG_trec the linear
independence of 1 and the ln b / ln m over the rationals, which beyond N = 40 nothing checks).
Per-grade count vectors bounding two or more grades are counted with a count dimension per
binding grade and brackets of K (:mod:`irscale.scales.tables.bounded_graded`).
Float values are ranked with a tolerance (default: twice the measure's float error bound plus
64 ulps), the interval holding the rank of every value within it. See docs/bounded.md.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath
import numpy as np

from irscale.enumerate.lazy import lazy_module
from irscale.errors import MeasureError
from irscale.scales.measures.groups import Grouping, RankGroup
from irscale.scales.measures.keys import FormalLogKey, LinearKey
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables import bounded_graded as bg
from irscale.scales.tables.bounded_states import States, antichain_states, relaxed_groups
from irscale.scales.tables.oracles import oracle_count

if TYPE_CHECKING:
    pass

bk = lazy_module("irscale.scales.tables.bounded_kernels")

#: Layout name of bounded scales (nothing is stored).
LAYOUT = "bounded"
#: Default target of :attr:`BoundedScale.error_bound` (scaled units).
DEFAULT_ERROR = 1e-4
#: Cells of the first, coarse grid of an error target (it sets the grid of the target).
FIRST_CELLS = 1 << 12
#: Error targets below this many ranks (scaled: / (K - 1)) are not sought. Widths are whole
#: ranks plus a rounding slack: a target of 3 ranks exactly would pass an interval of 3 only
#: by luck, and the grids grow on and on (nDCG@50 at rb = 3: 27 grids instead of 2).
FEW_RANKS = 8
#: Margin of the grid predicted for an error target (the width shrinks as 1 / cells).
GROWTH = 1.06
#: Largest memory the two programmes of a grid may take together (bytes).
MAX_BYTES = 6 << 30
#: Decimal digits of the option values (then rounded one ulp outward).
DIGITS = 40
U = Fraction(1, 1 << 53)
TINY = 2.0 ** -1074


def error_target(error: float | None, k: int) -> float:
    """The widest scaled interval a bounded scale of ``k`` distinct values aims at when
    asked for ``error`` (default :data:`DEFAULT_ERROR`): never below :data:`FEW_RANKS` ranks."""
    return max(DEFAULT_ERROR if error is None else float(error), FEW_RANKS / max(k - 1, 1))


def predicted_scale(scale: int, bound: float, target: float) -> int:
    """The grid (cells per raw unit) predicted to narrow a grid of ``scale`` whose widest
    interval is ``bound`` to ``target``: widths shrink as 1 / cells, with a margin."""
    return math.ceil(scale * bound / target * GROWTH)


def rounding_depth(depth: int) -> Fraction:
    """gamma_d = d u / (1 - d u): the relative error bound of a float sum of non-negative
    products along paths of at most ``depth`` roundings (exact rational)."""
    return depth * U / (1 - depth * U)


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
    #: rows are antichain states (``rows`` of them), both programmes move rows alike
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
    states = antichain_states([g.pareto for g in got.groups], dims, got.caps, _order_of(highs))
    if states is None or 2 * 8 * states.n * bg.COARSE_CELLS > max_bytes:
        return None
    k = states.count(_order_of(highs))
    loose = relaxed_groups(got.groups, dims)
    excess = sum(bg.excess(loose, dims, got.caps, got.bound.index(g), capped[g - 1])[0] for g, _ in got.relaxed)
    if excess / k >= (got.k_hi - got.k_lo) / got.k_hi:
        return None                             # no narrower than the brackets
    return states, k, excess


@dataclasses.dataclass
class Grid:
    """The two programmes on one grid (``scale`` cells per raw unit): cumulative masses ``down``
    (values rounded down: upper bounds of counts) and ``up`` (rounded up: lower bounds),
    ``weight`` the exact mass of one tuple, ``gamma`` their relative and ``eta`` their
    absolute float error bound; ``counted``: the :attr:`Problem.method` of the problem it
    was counted for (the problem it answers with)."""

    scale: int
    down: np.ndarray
    up: np.ndarray
    weight: Fraction
    gamma: Fraction
    eta: float
    seconds: float
    counted: str = ""


def _stage_grids(p: Fraction, gmax: int, n: int, scale: int) -> list[int]:
    """Cells per unit of T_1 .. T_J: ``scale`` at rank 1 (at least a few dozen), coarser by
    rho per rank after it (rho in (1, 1/p) minimising work times rounding, rho / ((1 - p rho)
    (rho - 1))), J the first rank whose tail weight p^J g_max / (1 - p) is below a cell of T_1."""
    pf = float(p)
    rho = min((1 + (1 / pf - 1) * i / 64 for i in range(1, 64)), key=lambda r: r / ((1 - pf * r) * (r - 1)))
    least = math.ceil(2 * rho * rho / (1 / pf - rho))        # coarsest grid: steps keep p Q_j / Q_(j+1) < 1
    grids, j, scale = [], 0, max(scale, least)
    while j < n and (j == 0 or pf ** j * gmax / (1 - pf) * scale > 1):
        grids.append(max(least, math.ceil(scale / rho ** j)))
        j += 1
    return grids


def _geometric_pass(a: int, c: int, gains: tuple[int, ...], n: int, scale: int, up: bool
                    ) -> tuple[np.ndarray, int, int, int]:
    """One programme of RBP (module docstring): (cumulative masses, ranks programmed J,
    rounding depth, multiplications)."""
    p, gmax, m = Fraction(a, c), gains[-1], len(gains)
    grids = _stage_grids(p, gmax, n, scale)
    J = len(grids)
    size = math.ceil(max(grids) * gmax / (1 - p)) + 4 * J + 64
    old, new = np.zeros(size), np.zeros(size)
    start = math.ceil(gmax * (1 - p ** (n - J)) / (1 - p) * grids[-1]) if up else 0
    old[start], n_old = 1.0, start + 1
    depth = mults = 0
    for j in range(J - 1, -1, -1):
        A, C = a * grids[j], c * (grids[j + 1] if j + 1 < J else grids[-1])
        shifts = np.array([grids[j] * g for g in gains], np.int64)
        n_new = -(-A * (n_old - 1) // C) + int(shifts[-1]) + 1
        if n_new > size or not A < C < 1 << 62:
            raise RuntimeError(f"grid of {n_new} cells outgrew its {size}")
        new[:n_new] = 0.0
        n_old = bk.geometric_stage(old, n_old, new, A, C, shifts, 1.0 / m, up)
        old, new = new, old
        depth, mults = depth + m * -(-C // A) + 1, mults + n_new
    out = np.cumsum(old[:n_old])
    return out, J, depth + out.shape[0], mults


def _options(prob: Problem, g: int, scale: int, up: bool) -> tuple:
    """The cells (exact floor of x- * scale, or ceil of x+ * scale) and counts of group g's
    options, sorted by count then cells (the kernels' order); with several count dimensions
    also their digits (the up programme's counts are kappa, the down one's mu)."""
    if up:
        s = np.array([-((-Fraction(x) * scale) // 1) for x in prob.highs[g].tolist()], np.int64)
    else:
        s = np.array([(Fraction(x) * scale) // 1 for x in prob.lows[g].tolist()], np.int64)
    counts = prob.counts_up[g] if up and prob.counts_up is not None else prob.counts[g]
    o = np.lexsort((s, counts))
    if prob.states is not None:                 # counts are classes: their starts and the group's moves
        cstart = np.searchsorted(counts[o], np.arange(len(prob.states.sizes[g]) + 1)).astype(np.int64)
        return (np.ascontiguousarray(s[o]), cstart, *prob.states.moves[g], prob.states.kept[g])
    if prob.radix:
        dig = (prob.digits_up if up else prob.digits)[g]
        return np.ascontiguousarray(s[o]), np.ascontiguousarray(counts[o]), np.ascontiguousarray(dig[o])
    return np.ascontiguousarray(s[o]), np.ascontiguousarray(counts[o])


def _order(prob: Problem) -> list[int]:
    """Groups by increasing largest value (rows stay short while most groups are added),
    the group of most options last (:func:`bounded_kernels.last_group` adds it on row sums)."""
    return _order_of(prob.highs)


def _order_of(highs: list[np.ndarray] | tuple) -> list[int]:
    order = sorted(range(len(highs)), key=lambda g: highs[g].max())
    last = max(order, key=lambda g: len(highs[g]))
    return [g for g in order if g != last] + [last]


def _start_spans(rows: int) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = np.full(rows, 1 << 62, np.int64), np.full(rows, -1, np.int64)
    lo[0] = hi[0] = 0
    return lo, hi


def _spans(prob: Problem, options: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row offsets and first cells of the ragged histogram of the groups ``options``."""
    lo, hi = _start_spans(prob.rows)
    if prob.states is not None:                 # every row as wide as it ever is
        wlo, whi = lo.copy(), hi.copy()
        for opt in options:
            lo, hi = bk.group_spans_states(lo, hi, *opt)
            wlo, whi = np.minimum(wlo, lo), np.maximum(whi, hi)
        return np.concatenate(([0], np.cumsum(np.maximum(whi - wlo + 1, 0)))).astype(np.int64), wlo, whi
    for s, cnt, *dig in options:
        lo, hi = (bk.group_spans_md(lo, hi, s, cnt, prob.row_digits, dig[0]) if dig
                  else bk.group_spans(lo, hi, s, cnt))
    return np.concatenate(([0], np.cumsum(np.maximum(hi - lo + 1, 0)))).astype(np.int64), lo, hi


def _group_pass(prob: Problem, scale: int, up: bool, order: list[int]) -> tuple[np.ndarray, int]:
    """One programme over the groups: (cumulative masses, multiplications)."""
    options = [_options(prob, g, scale, up) for g in order]
    if prob.states is not None:                 # antichain states: groups on rows, the last on row sums
        off, flo, _ = _spans(prob, options[:-1])
        buf = np.zeros(int(off[-1]))
        buf[0] = 1.0
        lo, hi = _start_spans(prob.rows)
        for g, opt in zip(order[:-1], options[:-1]):
            bk.group_pass_states(buf, off, flo, lo, hi, *opt, 1.0 / len(prob.lows[g]))
        s, cstart = options[-1][:2]
        fstart, fstate = prob.states.feasible(order[-1])
        width = int(hi.max()) + 1
        total = np.zeros(width + int(s.max()))
        bk.last_group_states(buf, off, flo, lo, hi, s, cstart, fstart, fstate, 1.0 / len(s), np.zeros(width), total)
        return np.cumsum(total), len(order) * buf.shape[0] + total.shape[0]
    if prob.radix:                              # several count dimensions: every group on rows, then row sums
        off, flo, _ = _spans(prob, options)
        buf = np.zeros(int(off[-1]))
        buf[0] = 1.0
        lo, hi = _start_spans(prob.rows)
        for g, (s, cnt, dig) in zip(order, options):
            bk.group_pass_md(buf, off, flo, lo, hi, s, cnt, prob.row_digits, dig, 1.0 / len(prob.lows[g]))
        total = np.zeros(int(hi.max()) + 1)
        bk.row_sums(buf, off, flo, lo, hi, total)
        return np.cumsum(total), len(order) * buf.shape[0] + total.shape[0]
    off, flo, fhi = _spans(prob, options[:-1])
    buf = np.zeros(int(off[-1]))
    buf[0] = 1.0
    lo, hi = _start_spans(prob.rows)
    for g, (s, cnt) in zip(order, options):
        if g != order[-1]:
            bk.group_pass(buf, off, flo, lo, hi, s, cnt, 1.0 / len(prob.lows[g]))
    s, cnt = options[-1]
    width = int(hi.max()) + 1
    total = np.zeros(width + int(s.max()))
    bk.last_group(buf, off, flo, lo, hi, s, cnt, 1.0 / len(s), np.zeros(width), total)
    return np.cumsum(total), len(order) * buf.shape[0] + total.shape[0]


def grid_bytes(prob: Problem, scale: int) -> int:
    """Memory (bytes) of the two programmes of ``prob`` on a grid of ``scale`` cells per unit."""
    if prob.geometric is not None:
        a, c, gains = prob.geometric
        grids = _stage_grids(Fraction(a, c), gains[-1], len(prob.grouping.groups), scale)
        return 2 * 3 * 8 * (math.ceil(max(grids) * gains[-1] * c / (c - a)) + 4 * len(grids) + 64)
    order = _order(prob)
    if prob.states is not None:                 # each programme its own spans, the last group on row sums
        total = 0
        for up in (True, False):
            opts = [_options(prob, g, scale, up) for g in order]
            off, _, hi = _spans(prob, opts[:-1])
            total += 8 * (int(off[-1]) + 2 * (int(hi.max()) + 1) + int(opts[-1][0].max()) + 2)
        return total
    if prob.radix:                              # each programme its own spans
        spans = [_spans(prob, [_options(prob, g, scale, up) for g in order]) for up in (True, False)]
        return sum(8 * (int(off[-1]) + 2 * (int(hi.max()) + 1) + 2) for off, _, hi in spans)
    off, _, hi = _spans(prob, [_options(prob, g, scale, True) for g in order[:-1]])
    return 2 * 8 * (int(off[-1]) + 3 * (int(hi.max()) + 1) + int(scale * prob.highs[order[-1]].max()) + 2)


def count_grid(prob: Problem, scale: int, threads: int = 2) -> Grid:
    """Both programmes of ``prob`` on a grid of ``scale`` cells per raw unit (in two
    threads when ``threads`` > 1), with their error bounds."""
    t0 = time.perf_counter()
    # load the kernels here, not in two threads at once
    _ = (bk.group_pass, bk.last_group, bk.geometric_stage, bk.group_pass_md, bk.row_sums, bk.group_pass_states,
         bk.last_group_states)
    with ThreadPoolExecutor(max_workers=max(1, min(threads, 2))) as pool:
        if prob.geometric is not None:
            a, c, gains = prob.geometric
            n = len(prob.grouping.groups)
            scale = _stage_grids(Fraction(a, c), gains[-1], n, scale)[0]       # the grid of T_1
            jobs = [pool.submit(_geometric_pass, a, c, gains, n, scale, up) for up in (False, True)]
            (down, J, d1, m1), (up, _, d2, m2) = (j.result() for j in jobs)
            weight = Fraction(1.0 / len(gains)) ** J / Fraction(len(gains)) ** (n - J)
            depth, mults = max(d1, d2), max(m1, m2)
        else:
            order = _order(prob)
            jobs = [pool.submit(_group_pass, prob, scale, up, order) for up in (False, True)]
            (down, m1), (up, m2) = (j.result() for j in jobs)
            weight = math.prod(Fraction(1.0 / len(x)) for x in prob.lows)
            terms = prob.states.terms if prob.states is not None else sum(len(x) for x in prob.lows)
            depth = terms + prob.rows + max(down.shape[0], up.shape[0])
            mults = max(m1, m2)
    return Grid(scale, down, up, weight, rounding_depth(depth + 8), 2 * float(mults + 8) * TINY,
                time.perf_counter() - t0, prob.method)
