"""Bounded scales: the scale interface over certified intervals of unq ranks (N > 40).

The counting and its mathematics (grids, the options' rounding, RBP's self-similar tail, the
rigour of the float masses, the assumption of the oracles) are in
:mod:`irscale.scales.tables.bounded_grid`; this module makes a :class:`BoundedScale` of them:
n_runs exact, K exact (or bracketed, :attr:`BoundedScale.k_bounds`, for count vectors bounding
several grades), and for values or runs an interval [lo, hi] of unq ranks (scaled: of
(rank - 1) / (K - 1), K's bracket included) that contains the exact one, its midpoint through the one scale
interface. Opt-in (``irscale.scale(measure, layout="bounded")``): never chosen where an
exact scale exists. See docs/bounded.md.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

import mpmath
import numpy as np

from irscale.enumerate.runspace import feasible_space_size, runs_of_ids
from irscale.enumerate.words import words_to_ints
from irscale.errors import (
    BuildTooLargeError,
    OracleListError,
    RunError,
    ValueNotInScaleError,
)
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.oracles import oracle_count
from irscale.scales.tables.scale import ATOL, FOUND, NOT_A_VALUE, RTOL, Scale, Table, Unlisted

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


from irscale.scales.tables.bounded_grid import (
    FIRST_CELLS,
    LAYOUT,
    Grid,
    count_grid,
    error_target,
    grid_bytes,
    predicted_scale,
)
from irscale.scales.tables.bounded_problem import (
    DIGITS,
    MAX_BYTES,
    Problem,
    bounded_problem,
    enclose,
    float_down,
    float_up,
)


class BoundedTable(Table):
    """A bounded scale's table: nothing stored; ``settings`` = (cells, error, threads,
    max_bytes) of the grids of its scales, ``scales`` those computed, by recall base."""

    layout: ClassVar[str] = LAYOUT
    kind: ClassVar[str] = "bounded"

    def __init__(self, *, settings: tuple, stored: dict | None = None, recorded: dict | None = None,
                 **common: object):
        super().__init__(**common)
        self.settings, self.scales = settings, {}
        #: grids read from a store, by :meth:`grid_key` (:mod:`irscale.scales.tables.bounded_layout`),
        #: and their error bounds as recorded there (checked by a verification)
        self.stored: dict = dict(stored or {})
        self.recorded: dict = dict(recorded or {})

    def grid_key(self, rb: RecallBase) -> RecallBase:
        """The recall base naming a grid: every rb >= N of a binary measure shares one."""
        rb = self.measure.check_rb(rb)
        return self.measure.n if isinstance(rb, int) and rb > self.measure.n else rb

    def with_settings(self, *, error: float | None = None, threads: int = 2,
                      max_bytes: int = MAX_BYTES) -> BoundedTable:
        """This table (its stored grids) asked for scales of at most ``error``: a stored
        grid of a larger error is computed again."""
        return BoundedTable(measure=self.measure, n_entries=self.n_entries, n_runs=self.n_runs,
                            certificate=self.certificate, table_rb=self.table_rb, meta=self.meta,
                            settings=(None, error, threads, max_bytes), stored=self.stored, recorded=self.recorded)

    def bound_of_grid(self, rb: RecallBase) -> float:
        """The error bound of the stored grid of ``rb``, computed from the grid (not taken
        as recorded: verifications compare the two)."""
        fresh = self.with_settings(error=1.0)
        fresh.recorded = {}
        return fresh.scale(rb).error_bound

    def stored_bytes(self) -> int:
        return sum(s.grid.down.nbytes + s.grid.up.nbytes for s in self.scales.values())

    def scale(self, rb: RecallBase = None) -> BoundedScale:
        key = self.measure.check_rb(rb)
        if key not in self.scales:
            self.scales[key] = BoundedScale(self, key)
        return self.scales[key]


def bounded_table(measure: Measure | str, table_rb: tuple[int, ...] | None = None, *, cells: int | None = None,
                  error: float | None = None, threads: int = 2, max_bytes: int = MAX_BYTES) -> BoundedTable:
    """The table of the bounded scales of ``measure`` (per-grade measures: of the count
    vector ``table_rb``); the grid settings are :func:`bounded_scale`'s."""
    m = parse_measure(measure)
    cert = Certificate("bounded:grid-dp", m.spec.error_bound(m.common_rb() if table_rb is None else table_rb),
                       float("nan"), "not enumerated (bounded scale: rank intervals)", 0)
    return BoundedTable(measure=m, n_entries=0, n_runs=m.levels ** m.n, certificate=cert, table_rb=table_rb,
                        settings=(cells, error, threads, max_bytes))


def bounded_scale(measure: Measure | str, rb: RecallBase = None, *, cells: int | None = None,
                  error: float | None = None, threads: int = 2, max_bytes: int = MAX_BYTES) -> BoundedScale:
    """The bounded scale of ``measure`` for the recall base ``rb`` (module docstring).

    ``cells``: the grid, about this many cells over the range of raw values; else ``error``:
    the largest interval width wanted in scaled units (default :data:`DEFAULT_ERROR`, at
    least :data:`FEW_RANKS` ranks), reached from a coarse grid by grids predicted from it
    (widths shrink as 1 / cells). Raises :class:`~irscale.errors.BuildTooLargeError` when a
    grid needs more than ``max_bytes``; ``threads``: up to two (two programmes at once, or one programme's rows)."""
    m = parse_measure(measure)
    return bounded_table(m, m.table_rb(m.check_rb(rb)), cells=cells, error=error, threads=threads,
                         max_bytes=max_bytes).scale(rb)


class BoundedScale(Unlisted, Scale):
    """Certified rank intervals of one measure and recall base (module docstring):
    ``rank_bounds`` and ``scaled_bounds`` of values, ``rank_bounds_runs`` and
    ``scaled_bounds_runs`` of judged runs (exact keys), ``value_bounds_of_ranks``, and through
    the scale interface their midpoints (``rank``, ``rank_runs``, ``scaled_values``,
    ``values_of_ranks``); ranks are Python integers once K reaches 2^53. It lists nothing:
    ``values``, ``counts``, ``representatives`` and mid-ranks raise
    :class:`~irscale.errors.OracleListError`."""

    def __init__(self, table: BoundedTable, rb: RecallBase = None):
        super().__init__(table, rb)
        cells, error, threads, max_bytes = table.settings
        stored = table.stored.get(table.grid_key(self.rb))
        prob = bounded_problem(self.measure, self.rb, max_bytes)
        if stored is not None and stored.counted != prob.method:  # counted otherwise: kept where it answers as asked
            alt = bounded_problem(self.measure, self.rb, max_bytes, stored.counted)
            ok = alt.method == stored.counted and table.recorded.get(table.grid_key(self.rb), 1) <= error_target(
                error, alt.k)
            prob, stored = (alt, stored) if ok else (prob, None)
        try:
            self._settle(prob, stored, cells, error, threads, max_bytes)
        except BuildTooLargeError:       # antichain states too many for this grid: kappa and mu's brackets
            if prob.method != "states":
                raise
            self._settle(bounded_problem(self.measure, self.rb, max_bytes, ""), None, cells, error, threads, max_bytes)

    def _settle(self, prob: Problem, stored: Grid | None, cells: int | None, error: float, threads: int,
                max_bytes: int) -> None:
        self.problem, self._bound, self._const = prob, None, None
        # an interval holds one or two ranks whatever the grid (the cell of a value and the next);
        # brackets of K (several bound grades) take up to twice K+ - K- whatever the grid
        target = max(error_target(error, self.k), self.bracket_floor)
        table = self.table
        if stored is not None and cells is None:      # a store's grid, or a plan's probe: refined from it
            self.grid, self._bound = stored, table.recorded.get(table.grid_key(self.rb))
            if self.error_bound <= target:
                return
            scale = self.grid.scale
        elif cells is not None:
            self._count(max(1, math.ceil(cells / prob.top)), threads, max_bytes)
            return
        else:
            scale = self._count(max(1, math.ceil(FIRST_CELLS / prob.top)), threads, max_bytes)
        last = math.inf
        for tries in range(64):
            if self.error_bound <= target or (not self.k_exact and self.error_bound > 0.8 * last):  # brackets
                break
            last = self.error_bound
            # a predicted grid that missed (widths are whole ranks near the target): 1.5 times more at least
            least = scale + 1 if tries == 0 else math.ceil(scale * 1.5)
            scale = self._count(max(least, predicted_scale(scale, self.error_bound, target)), threads, max_bytes)

    def _count(self, scale: int, threads: int, max_bytes: int) -> int:
        need = grid_bytes(self.problem, scale)
        if need > max_bytes:
            raise BuildTooLargeError(f"{self._label()}: a grid of {int(self.problem.top * scale) + 1:,} cells needs "
                                     f"about {need / 2 ** 30:.1f} GiB, more than max_bytes = "
                                     f"{max_bytes / 2 ** 30:.1f} GiB (ask for a larger error or fewer cells)")
        self.grid = count_grid(self.problem, scale, threads)
        self._bound = self._const = None
        return self.grid.scale

    # -- facts --------------------------------------------------------------------------
    @property
    def cells(self) -> int:
        """Cells of the grid over the range of raw values."""
        return int(self.problem.top * self.grid.scale) + 1

    @property
    def k(self) -> int:
        """K, exact unless :attr:`k_exact` is False (several bound grades: then K's upper
        bound, :attr:`k_bounds` the interval)."""
        return self.problem.k

    @property
    def k_bounds(self) -> tuple[int, int]:
        """[K-, K+] holding the number of distinct feasible values (equal when exact)."""
        p = self.problem
        return (p.k if p.k_lo is None else p.k_lo), p.k

    @property
    def k_exact(self) -> bool:
        lo, hi = self.k_bounds
        return lo == hi

    @property
    def bracket_floor(self) -> float:
        """The width (scaled units) K's bracket alone may take, whatever the grid (up to
        twice K+ - K- ranks): refining stops there."""
        k_lo, k_hi = self.k_bounds
        return 2.5 * (k_hi - k_lo) / max(k_hi - 1, 1)

    def _label(self) -> str:
        label = super()._label()
        return label if self.k_exact else f"{label} (K within [{self.k_bounds[0]:.6g}, {self.k_bounds[1]:.6g}])"

    @property
    def n_runs(self) -> int:
        """Feasible runs (a Python integer)."""
        if self.problem.graded is not None:
            return feasible_space_size(self.measure.n, self.measure.table_rb(self.rb))
        m, (counted, r) = self.measure, oracle_count(self.measure, self.rb)
        if not m.rb_dependent or (counted is None and (m.per_grade_rb or r >= m.n)):
            return m.levels ** m.n
        return sum(math.comb(m.n, j) * (m.levels - 1 if m.per_grade_rb else 1) ** (m.n - j) for j in range(r + 1))

    def _unlisted(self, what: str) -> OracleListError:
        return OracleListError(f"{self._label()} is a bounded scale of {self.k:.4g} distinct values: it lists no "
                               f"{what} (rank_bounds, scaled_bounds and rank_bounds_runs give certified intervals)")

    def value_range(self) -> tuple[float, float]:
        return 0.0, float(float_up(self.problem.top / self.problem.factor[0]))

    def _default_atol(self) -> float:
        return 2 * self.measure.spec.error_bound(self.rb)

    # -- from masses to ranks and scaled values -------------------------------------------
    def _consts(self) -> dict:
        """The grid's factors from masses to scaled values (``sd``, ``su``, ``se``, ``k1``)
        and, while K < 2^53 and they fit, to counts (``cd``, ``cu``, ``ce``): floats rounded
        outward."""
        if self._const is None:          # K in [k_lo, k]: uppers divide by k_lo - 1, lowers by k - 1
            g, k1 = self.grid, Fraction(1, max(self.k - 1, 1))
            k1_lo = Fraction(1, max(self.k_bounds[0] - 1, 1))
            hi, lo, eta = 1 / ((1 - g.gamma) * g.weight), 1 / ((1 + g.gamma) * g.weight), Fraction(g.eta) / g.weight
            self._const = {"sd": enclose(hi * k1_lo)[1], "su": enclose(lo * k1)[0],
                           "se": enclose(eta * max(k1, k1_lo))[1], "k1": (enclose(k1)[0], enclose(k1_lo)[1]),
                           "ex": enclose(self.problem.excess * k1)[1],
                           "counts": self.k < 2 ** 53 and hi < 2 ** 1000}
            if self._const["counts"]:
                self._const.update(cd=enclose(hi)[1], cu=enclose(lo)[0], ce=enclose(eta)[1])
        return self._const

    def _masses(self, i_lo: np.ndarray, i_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Computed masses: the lower bounds (``up``) at cells ``i_lo``, the upper ones (``down``) at ``i_hi``."""
        g = self.grid
        return (np.where(i_lo >= 0, g.up[np.clip(i_lo, 0, g.up.shape[0] - 1)], 0.0),
                np.where(i_hi >= 0, g.down[np.clip(i_hi, 0, g.down.shape[0] - 1)], 0.0))

    def _counts(self, su: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Count bounds (floats holding integers 1..K) from masses, for K < 2^53."""
        c, k, ex = self._consts(), float(self.k), float(self.problem.excess)
        hi = np.clip(np.floor(float_up(float_up(sd * c["cd"]) + c["ce"])), 1.0, k)
        lo = np.ceil(float_down(float_down(float_down(su * c["cu"]) - c["ce"]) - ex))
        return np.minimum(np.clip(lo, 1.0, k), hi), hi

    def _scaled(self, su: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        c = self._consts()
        if c["counts"]:
            (lo, hi), (k_lo, k_hi) = self._counts(su, sd), self.k_bounds
            return (np.maximum(float_down((lo - 1) / max(k_hi - 1, 1)), 0.0),
                    np.minimum(float_up((hi - 1) / max(k_lo - 1, 1)), 1.0))
        hi = float_up(float_up(float_up(sd * c["sd"]) + c["se"]) - c["k1"][0])
        lo = float_down(float_down(float_down(float_down(su * c["su"]) - c["se"]) - c["ex"]) - c["k1"][1])
        return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)

    def _ranks(self, su: np.ndarray, sd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rank bounds from masses: int64 while K < 2^53, else Python integers from exact
        rational arithmetic (object arrays)."""
        if self._consts()["counts"]:
            lo, hi = self._counts(su, sd)
            return lo.astype(np.int64), hi.astype(np.int64)
        g, k, eta = self.grid, self.k, Fraction(self.grid.eta)
        ups = [min(max(math.floor((Fraction(s) / (1 - g.gamma) + eta) / g.weight), 1), k) for s in sd.tolist()]
        ex = self.problem.excess
        downs = [min(max(math.ceil((Fraction(s) / (1 + g.gamma) - eta) / g.weight) - ex, 1), k) for s in su.tolist()]
        hi, lo = np.empty(len(ups), object), np.empty(len(downs), object)
        hi[:], lo[:] = ups, downs
        return np.minimum(lo, hi), hi

    @property
    def error_bound(self) -> float:
        """The largest width of a scaled interval (:meth:`scaled_bounds`) of any value whose
        tolerance lies within one cell: every midpoint is within half of it."""
        if self._bound is None:
            g, c = self.grid, self._consts()
            n = max(g.down.shape[0], g.up.shape[0]) + 1
            d = np.concatenate((g.down, np.full(n - g.down.shape[0], g.down[-1])))
            u = np.concatenate(([0.0], g.up, np.full(n, g.up[-1])))[:n]
            width = d * c["sd"] - u * c["su"]                 # down at V + 1 against up at V (V = -1..)
            self._bound = float(min(1.0, (np.max(width) + 2 * c["se"] + c["ex"]) * (1 + 1e-12) + 1e-15))
        return self._bound

    # -- values and runs -> intervals ---------------------------------------------------------
    def _value_masses(self, x: np.ndarray, rtol: float, atol: float | np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(finite?, masses up, masses down) of flat raw values: the cells of [x - tol, x + tol]."""
        ok = np.isfinite(x)
        x = np.where(ok, x, 0.0)
        tol = np.broadcast_to(atol, x.shape) + rtol * np.abs(x)
        (f_lo, f_hi), cap, scale = self.problem.factor, 2 * self.problem.top + 1, float(self.grid.scale)
        v_lo, v_hi = float_down(x - tol), float_up(x + tol)
        r_lo = np.clip(np.where(v_lo >= 0, float_down(v_lo * f_lo), -1.0), -1.0, cap)
        r_hi = np.clip(np.where(v_hi >= 0, float_up(v_hi * f_hi), -1.0), -1.0, cap)
        su, sd = self._masses(np.floor(float_down(r_lo * scale)).astype(np.int64),
                              np.floor(float_up(r_hi * scale)).astype(np.int64))
        return ok, su, sd

    def scaled_bounds(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL,
                      decimals: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per raw value, [lo, hi] (float64, the shape of ``values``) holding the exact scaled
        value (rank - 1)/(K - 1) of every value within its tolerance (as :meth:`Scale.rank`;
        NaN for NaN and infinite values)."""
        x, shape = self._flat(values)
        ok, su, sd = self._value_masses(x, rtol, self._atol(x, shape, atol, decimals))
        lo, hi = self._scaled(su, sd)
        return np.where(ok, lo, np.nan).reshape(shape), np.where(ok, hi, np.nan).reshape(shape)

    def scaled_values(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL) -> np.ndarray:
        """Midpoints of :meth:`scaled_bounds` (within :attr:`error_bound` / 2 of the exact ones)."""
        lo, hi = self.scaled_bounds(values, rtol, atol)
        return (lo + hi) / 2

    def rank_bounds(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL,
                    decimals: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Per raw value, [lo, hi] (flat) holding the exact unq rank of every value within its
        tolerance; [0, 0] for NaN and infinite values."""
        x, shape = self._flat(values)
        ok, su, sd = self._value_masses(x, rtol, self._atol(x, shape, atol, decimals))
        lo, hi = self._ranks(su, sd)
        return np.where(ok, lo, 0), np.where(ok, hi, 0)

    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        ok, su, sd = self._value_masses(x, rtol, self._default_atol() if atol is None else atol)
        lo, hi = self._ranks(su, sd)
        return np.where(ok, (lo + hi) // 2, 0), np.where(ok, FOUND, NOT_A_VALUE).astype(np.int8)

    def _run_masses(self, runs: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Masses at the cells of judged runs' exact values (from their exact keys)."""
        m = self.measure
        arr = m.check_runs(runs, self.rb)
        r = m.n if m.per_grade_rb else oracle_count(m, self.rb)[1]
        if m.rb_dependent and not m.per_grade_rb and np.any((arr != 0).sum(axis=1) > r):
            bad = int(np.flatnonzero((arr != 0).sum(axis=1) > r)[0])
            raise RunError(f"run {bad} has more relevant documents than the recall base rb={self.rb}: it cannot occur "
                           f"for this topic")
        uniq, inverse = np.unique(arr, axis=0, return_inverse=True)
        spec, scale, geo = m.spec, self.grid.scale, self.problem.geometric
        keys = spec.keys_of_runs(uniq)
        if geo is not None:                          # T_1 = key / c^(N-1) exactly
            lo = hi = np.array([k * scale // geo[1] ** (m.n - 1) for k in words_to_ints(keys)], np.int64)
        else:                                        # floats within the key's stated bound, else 60 digits
            raw, err = spec.raw_floats(keys), spec.raw_float_bound(self.problem.top)
            lo = np.floor(float_down(float_down(raw - err) * scale)).astype(np.int64)
            hi = np.floor(float_up(float_up(raw + err) * scale)).astype(np.int64)
            for i in np.flatnonzero(lo != hi).tolist():
                with mpmath.workdps(DIGITS + 20):
                    x = spec.raw_mp(words_to_ints(keys[i:i + 1])[0]) * scale
                    slack = (abs(x) + 1) * mpmath.mpf(10) ** -DIGITS
                    lo[i], hi[i] = int(mpmath.floor(x - slack)), int(mpmath.floor(x + slack))
        inverse = inverse.reshape(-1)
        return self._masses(lo[inverse], hi[inverse])

    def rank_bounds_runs(self, runs: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi] holding the exact unq rank of each judged run ((m, N) degrees)."""
        return self._ranks(*self._run_masses(runs))

    def scaled_bounds_runs(self, runs: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi] holding the exact scaled value of each judged run."""
        return self._scaled(*self._run_masses(runs))

    def rank_runs(self, runs: ArrayLike) -> np.ndarray:
        """Midpoints of :meth:`rank_bounds_runs`."""
        lo, hi = self.rank_bounds_runs(runs)
        return (lo + hi) // 2

    def rank_judged(self, grades: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Midpoint ranks of judged rankings (``grades`` (m, N) folded to 0..G; what transforms rank)."""
        return self.rank_runs(grades)

    def rank_bounds_judged(self, grades: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Certified [lo, hi] of the unq ranks of judged rankings (what transforms rank)."""
        return self.rank_bounds_runs(grades)

    def scaled_bounds_judged(self, grades: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Certified [lo, hi] of the scaled values of judged rankings, K's bracket included."""
        return self.scaled_bounds_runs(grades)

    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        m = self.measure
        if m.levels ** m.n >= 2 ** 63:
            raise RunError(f"{m}: run ids do not fit 64 bits at N = {m.n}; rank the runs (rank_runs)")
        return self.rank_runs(runs_of_ids(np.asarray(ids, np.int64), m.levels, m.n))

    def scaled(self, ranks: ArrayLike) -> np.ndarray:
        """(rank - 1)/(K - 1) of ranks 1..K (Python integers or int64), NaN for rank 0."""
        arr = np.asarray(ranks, dtype=object)
        out = []
        for q in arr.reshape(-1).tolist():
            q = int(q) if isinstance(q, float) and q.is_integer() else q
            if not isinstance(q, (int, np.integer)) or isinstance(q, bool) or not 0 <= q <= self.k:
                raise ValueNotInScaleError(f"{q!r} is not a rank of {self._label()} (ranks are 1..{self.k})")
            out.append(np.nan if q == 0 else (int(q) - 1) / max(self.k - 1, 1))
        return np.array(out, np.float64).reshape(arr.shape)

    # -- ranks -> values ---------------------------------------------------------------------
    def value_bounds_of_ranks(self, ranks: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Per rank q (1..K), floats [lo, hi] holding the value of rank q: the first cell
        whose upper count reaches q, and the first whose lower count does."""
        g, (f_lo, f_hi), top = self.grid, self.problem.factor, self.problem.top
        qs = [int(q) for q in np.asarray(ranks, dtype=object).reshape(-1).tolist()]
        if any(not 1 <= q <= self.k for q in qs):
            raise ValueNotInScaleError(f"ranks of {self._label()} are 1..{self.k}")
        eta = Fraction(g.eta)
        need_d = [enclose(max((q * g.weight - eta) * (1 - g.gamma), 0))[0] for q in qs]
        need_u = [enclose(((q + self.problem.excess) * g.weight + eta) * (1 + g.gamma))[1] for q in qs]
        v_u, v_l = np.searchsorted(g.down, need_d), np.searchsorted(g.up, need_u)
        raw_hi = np.where(v_l < g.up.shape[0], float_up(v_l / g.scale), top)
        return float_down(float_down(v_u / g.scale) / f_hi), float_up(np.minimum(raw_hi, top) / f_lo)

    def values_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """Midpoints of :meth:`value_bounds_of_ranks` (approximate values)."""
        lo, hi = self.value_bounds_of_ranks(ranks)
        return ((lo + hi) / 2).reshape(np.shape(ranks))

    # -- Monte Carlo --------------------------------------------------------------------------
    def sample_runs(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` runs (uint8 (n, N)) drawn uniformly among the feasible distinct values, each
        the value's realisation with the fewest counted documents (their scaled values are
        uniform on [0, 1]: what Monte Carlo checks of the bounds sample)."""
        if self.problem.graded is not None:
            raise OracleListError(f"{self._label()}: its count vector bounds several grades; it samples no runs")
        runs = np.zeros((n, self.measure.n), np.uint8)
        budget = np.full(n, self.problem.rows - 1, np.int64)
        for cum, cnt, ranks, digits in self._sampler():
            choice = (rng.random(n)[:, None] >= cum[budget]).sum(axis=1)
            budget -= cnt[choice]
            runs[:, ranks] = digits[choice]
        return runs

    def _sampler(self) -> list:
        """Per group: the cumulative probabilities of its options by count budget left
        (feasible completions counted exactly), their counts, the group's ranks (0-based)
        and each option's degrees there."""
        if getattr(self, "_sampling", None) is None:
            m, groups, r = self.measure, self.problem.grouping.groups, self.problem.rows - 1
            counts = [np.array(g.min_counts if r else [0] * len(g), np.int64) for g in groups]
            ways = [[1] * (r + 1)]                      # feasible completions of groups i.. by budget
            for cnt in reversed(counts):
                ways.append([sum(ways[-1][b - c] for c in cnt.tolist() if c <= b) for b in range(r + 1)])
            ways.reverse()
            group_of = {key: i for i, g in enumerate(groups) for key in g.keys}
            where: dict[int, list[int]] = {}
            for k in range(1, m.n + 1):                # the group of rank k holds its single top-grade key
                where.setdefault(group_of[m.spec.weights[k - 1][m.levels - 1]], []).append(k)
            self._sampling = []
            for i, (g, cnt) in enumerate(zip(groups, counts)):
                cum = np.cumsum([[ways[i + 1][b - c] / ways[i][b] if c <= b else 0.0 for c in cnt.tolist()]
                                 for b in range(r + 1)], axis=1)
                ranks = where.get(i, [])
                digits = [[part // m.levels ** (m.n - k) % m.levels for k in ranks] for _, part in g.first]
                self._sampling.append((cum / cum[:, -1:], cnt, np.array(ranks, np.int64) - 1,
                                       np.array(digits, np.uint8).reshape(len(g), len(ranks))))
        return self._sampling
