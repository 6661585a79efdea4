"""Bounded scales, the counting: certified bounds of unq ranks on grids of values (N > 40).

A measure whose exact key is a sum of independent parts over groups of ranks
(:mod:`irscale.scales.measures.groups`) has one distinct value per tuple of group options: the
unq rank of a value v is the number of feasible tuples of value at most v, K the number of
feasible tuples (a tuple is feasible for a recall base when its realisation with the fewest
counted documents has at most r of them: :func:`~irscale.scales.tables.oracles.oracle_count`).
The rank oracles count this exactly to N = 40; here it is bounded at any N (tested to 1000)
by dynamic programmes on a grid of ``scale`` cells per raw unit (raw: the unnormalised DCG;
RBP's tail value below). Every option's value x, enclosed in floats [x-, x+] (40-digit values
of its exact key, rounded outward), becomes floor(x- scale + t_g) cells, t_g in [0, 1) one
offset per group putting its options' rounding errors in the narrowest interval
(:func:`rounding`); every tuple's cells minus its value times scale then lie in [low, high].
One programme convolves the groups' options (weight fl(1/m) each, m options) over (count,
cell), counts above r dropped (``bounded_kernels``). With P(V) its cumulative mass at cell V
and w the exact mass of one tuple,

    P(floor(v scale) + floor(low)) / w  <=  rank(v)  <=  P(floor(v scale) + ceil(high)) / w,

the grid's ``up`` and ``down`` arrays (:func:`count_grid`). The gap is the mass of the tuples
within high - low + 1 cells of v (about half a cell per group of a few options). Where the
upper and lower bounds count feasibility differently (several bound grades: mu and kappa)
each has its own programme.

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
import math
import time
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np

from irscale.enumerate.lazy import lazy_module
from irscale.scales.tables.bounded_problem import DEFAULT_ERROR, Problem, order_of

bk = lazy_module("irscale.scales.tables.bounded_kernels")

#: Layout name of bounded scales (nothing is stored).
LAYOUT = "bounded"
#: Cells of the first, coarse grid of an error target (it sets the grid of the target).
FIRST_CELLS = 1 << 12
#: Error targets below this many ranks (scaled: / (K - 1)) are not sought. Widths are whole
#: ranks plus a rounding slack: a target of 3 ranks exactly would pass an interval of 3 only
#: by luck, and the grids grow on and on (nDCG@50 at rb = 3: 27 grids instead of 2).
FEW_RANKS = 8
#: Margin of the grid predicted for an error target (the width shrinks as 1 / cells).
GROWTH = 1.06
#: Cell updates (cells times terms) of one level of antichain states worth a second thread.
SHARED_WORK = 1 << 16
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


@dataclasses.dataclass
class Grid:
    """The bounds of one grid (``scale`` cells per raw unit): per cell V = floor(v scale),
    cumulative masses ``down`` (upper bounds of the counts of values at most v) and ``up``
    (lower bounds; :func:`count_grid`),
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


@dataclasses.dataclass(frozen=True)
class Rounding:
    """Every group's options on a grid of ``scale`` cells per raw unit: ``cells[g]`` (int64,
    the options' order) = floor(x- scale + t_g) for an offset t_g in [0, 1) chosen per group
    to put its options' rounding errors r - x scale in the narrowest interval (cut at the
    widest gap of their fractional parts); every tuple's cells minus its value times ``scale``
    then lie in [``low``, ``high``] (exact sums of the groups' error intervals, from x- and x+)."""

    scale: int
    cells: tuple[np.ndarray, ...]
    low: Fraction
    high: Fraction

    @property
    def below(self) -> int:
        """floor(low) <= 0: a tuple whose cells are at most V + below has a value of at most V cells."""
        return math.floor(self.low)

    @property
    def above(self) -> int:
        """ceil(high) >= 0: a tuple of value below V + 1 cells has cells at most V + above."""
        return math.ceil(self.high)


def group_offset(y: np.ndarray) -> float:
    """The offset t in [0, 1) putting the fractional parts of ``y`` + t farthest from an
    integer on one side: the middle of the widest gap between the sorted fractional parts
    (circularly) is mapped to 0."""
    f = np.sort(y - np.floor(y))
    gaps = np.diff(np.concatenate((f, [f[0] + 1.0])))
    i = int(np.argmax(gaps))
    t = 1.0 - (f[i] + gaps[i] / 2)
    return float(t - math.floor(t))


def rounding(prob: Problem, scale: int) -> Rounding:
    """The cells of every group's options on a grid of ``scale`` cells per raw unit (:class:`Rounding`)."""
    cells, low, high = [], Fraction(0), Fraction(0)
    for lows, highs in zip(prob.lows, prob.highs):
        t = Fraction(group_offset(lows * float(scale)))
        xl = [Fraction(x) * scale for x in lows.tolist()]
        xh = [Fraction(x) * scale for x in highs.tolist()]
        r = [math.floor(x + t) for x in xl]
        cells.append(np.array(r, np.int64))
        low += min(c - x for c, x in zip(r, xh))
        high += max(c - x for c, x in zip(r, xl))
    return Rounding(scale, tuple(cells), low, high)


def _options(prob: Problem, g: int, grid: Rounding, up: bool) -> tuple:
    """The cells and counts of group g's options, sorted by count then cells (the kernels'
    order); with several count dimensions also their digits (the up programme's counts are
    kappa, the down one's mu)."""
    s = grid.cells[g]
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
    return order_of(prob.highs)


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


def _states_by_levels(pool: ThreadPoolExecutor, levels: tuple[np.ndarray, np.ndarray], buf: np.ndarray,
                      off: np.ndarray, flo: np.ndarray, lo: np.ndarray, hi: np.ndarray, opt: tuple, q: float) -> None:
    """``bk.group_pass_states`` in two threads: the group's levels from the highest down, the
    rows of one level shared out by their work (this thread and one of ``pool``'s)."""
    nlo, nhi = bk.group_spans_states(lo, hi, *opt)
    rows, ends = levels
    work = np.maximum(nhi - nlo + 1, 0) * (1 + np.diff(opt[2]))
    for a, b in zip(ends[:-1].tolist(), ends[1:].tolist()):
        level = rows[a:b]
        if b - a > 1 and int(work[level].sum()) > SHARED_WORK:
            level = level[np.argsort(-work[level], kind="stable")]
            job = pool.submit(bk.states_rows, buf, off, flo, lo, hi, nlo, nhi, level[0::2], *opt, q)
            bk.states_rows(buf, off, flo, lo, hi, nlo, nhi, level[1::2], *opt, q)
            job.result()
        else:
            bk.states_rows(buf, off, flo, lo, hi, nlo, nhi, level, *opt, q)
    lo[:] = nlo
    hi[:] = nhi


def _group_pass(prob: Problem, grid: Rounding, up: bool, order: list[int], pool: ThreadPoolExecutor | None = None
                ) -> tuple[np.ndarray, int]:
    """One programme over the groups: (cumulative masses, multiplications); ``up``: with the
    counts of the lower bounds (kappa's) where they differ from the upper bounds' (mu's);
    ``pool``: a second thread for the rows of antichain states."""
    options = [_options(prob, g, grid, up) for g in order]
    if prob.states is not None:                 # antichain states: groups on rows, the last on row sums
        off, flo, _ = _spans(prob, options[:-1])
        buf = np.zeros(int(off[-1]))
        buf[0] = 1.0
        lo, hi = _start_spans(prob.rows)
        for g, opt in zip(order[:-1], options[:-1]):
            if pool is None:
                bk.group_pass_states(buf, off, flo, lo, hi, *opt, 1.0 / len(prob.lows[g]))
            else:
                _states_by_levels(pool, prob.states.levels[g], buf, off, flo, lo, hi, opt, 1.0 / len(prob.lows[g]))
        s, cstart = options[-1][:2]
        fstart, fstate = prob.states.feasible(order[-1])
        width = int(hi.max()) + 1
        total = np.zeros(width + int(s.max()))
        if pool is None:
            bk.last_group_states(buf, off, flo, lo, hi, s, cstart, fstart, fstate, 1.0 / len(s), np.zeros(width),
                                 total)
        else:                                   # two halves of the rows' cells (by cells held), two outputs
            cover = np.zeros(width + 1, np.int64)
            np.add.at(cover, lo[lo <= hi], 1)
            np.add.at(cover, hi[lo <= hi] + 1, -1)
            mid = int(np.searchsorted(np.cumsum(np.cumsum(cover)), np.sum(np.maximum(hi - lo + 1, 0)) / 2))
            other = np.zeros_like(total)
            args = (buf, off, flo, lo, hi, s, cstart, fstart, fstate)
            job = pool.submit(bk.last_group_states_cells, *args, 0, mid, np.zeros(width), other)
            bk.last_group_states_cells(*args, mid, width, np.zeros(width), total)
            job.result()
            total = (total + other) * (1.0 / len(s))
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


def programmes(prob: Problem) -> tuple[bool, ...]:
    """The programmes a grid of ``prob`` runs: one, giving both bounds, unless the upper and
    the lower bounds count feasibility differently (mu and kappa, several bound grades)."""
    if prob.counts_up is None or (all(map(np.array_equal, prob.counts, prob.counts_up))
                                  and all(map(np.array_equal, prob.digits, prob.digits_up))):
        return (False,)
    return (False, True)


def grid_bytes(prob: Problem, scale: int) -> int:
    """Memory (bytes) of the programmes of ``prob`` on a grid of ``scale`` cells per unit."""
    if prob.geometric is not None:
        a, c, gains = prob.geometric
        grids = _stage_grids(Fraction(a, c), gains[-1], len(prob.grouping.groups), scale)
        return 2 * 3 * 8 * (math.ceil(max(grids) * gains[-1] * c / (c - a)) + 4 * len(grids) + 64)
    order, grid, total = _order(prob), rounding(prob, scale), 0
    for up in programmes(prob):
        opts = [_options(prob, g, grid, up) for g in order]
        if prob.radix:                          # every group on rows
            off, _, hi = _spans(prob, opts)
            total += 8 * (int(off[-1]) + 2 * (int(hi.max()) + 1) + 2)
        else:                                   # the last group on row sums
            off, _, hi = _spans(prob, opts[:-1])
            total += 8 * (int(off[-1]) + 3 * (int(hi.max()) + 1) + int(opts[-1][0].max()) + 2)
    return total


def bounds_of(cumulative: np.ndarray, shift: int) -> np.ndarray:
    """The cumulative masses at cells V + ``shift`` for V = 0, 1, ... (0 before the first cell,
    the total past the last): what bounds the counts at V (:func:`count_grid`)."""
    if shift <= 0:
        return np.concatenate((np.zeros(-shift), cumulative))
    return cumulative[min(shift, cumulative.shape[0] - 1):]


def count_grid(prob: Problem, scale: int, threads: int = 2) -> Grid:
    """The programmes of ``prob`` on a grid of ``scale`` cells per raw unit, with their error
    bounds; when ``threads`` > 1, in two threads: two programmes at once where there are two,
    else the rows of antichain states and the last group's cells shared out.

    With the options rounded to cells with errors in [low, high] per tuple
    (:func:`rounding`), P(V) the mass of the tuples of cells at most V, a tuple of value at
    most v (v scale in [V, V + 1)) has cells at most V + ceil(high), and a tuple of cells at
    most V + floor(low) has a value of at most V cells: P(V + ceil(high)) bounds the count of
    values at most v from above (the grid's ``down``), P(V + floor(low)) from below (``up``)."""
    t0 = time.perf_counter()
    # load the kernels here, not in two threads at once
    _ = (bk.group_pass, bk.last_group, bk.geometric_stage, bk.group_pass_md, bk.row_sums, bk.group_pass_states,
         bk.last_group_states, bk.states_rows, bk.last_group_states_cells)
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
            order, grid = _order(prob), rounding(prob, scale)
            if len(programmes(prob)) == 1:
                got = [_group_pass(prob, grid, False, order, pool if threads > 1 and prob.states is not None else None)]
            else:
                jobs = [pool.submit(_group_pass, prob, grid, up, order) for up in programmes(prob)]
                got = [j.result() for j in jobs]
            down, up = bounds_of(got[0][0], grid.above), bounds_of(got[-1][0], grid.below)
            weight = math.prod(Fraction(1.0 / len(x)) for x in prob.lows)
            terms = prob.states.terms if prob.states is not None else sum(len(x) for x in prob.lows)
            depth = terms + prob.rows + max(g[0].shape[0] for g in got) + 1      # (+ 1: two halves of row sums)
            mults = max(g[1] for g in got)
    return Grid(scale, down, up, weight, rounding_depth(depth + 8), 2 * float(mults + 8) * TINY,
                time.perf_counter() - t0, prob.method)
