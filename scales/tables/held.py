"""Tables held in memory: one entry per distinct value, built from the exact values of
every run of the measure's space for one topic (layouts ``fraction`` and ``formal``).

These tables are small (at most :data:`MAX_RUNS` runs scored), so their scale keeps the
sorted distinct values and run counts as arrays and matches runs to values exactly by
their exact values (:meth:`HeldScale._match`, implemented per layout).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from irscale.enumerate.progress import progress_bar
from irscale.errors import CorruptStoreError, MeasureError, RunError, ValueNotInScaleError
from irscale.scales.measures.fractional import FractionMeasure
from irscale.scales.tables.entries import check_counts
from irscale.scales.tables.scale import Scale, Table, TableSource

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: Runs scored per numpy batch while building.
CHUNK = 1 << 18
#: Largest number of runs a held table is built from (numpy scoring, about 400k runs per
#: second here: 2^27 runs take 5-6 minutes).
MAX_RUNS = 2 ** 27


@dataclasses.dataclass(kw_only=True)
class HeldTable(Table):
    """A table with one entry per distinct value (``counts`` runs each)."""

    counts: np.ndarray


def check_held(table: HeldTable, source: TableSource, columns: tuple[str, ...]) -> int:
    """Checks of a stored held table common to its layouts; returns n_entries. The
    attributes against each other and the measure (``run_space``, no strata), ``counts``
    and the 1-D ``columns`` of n_entries rows, counts of at least 1 adding up to n_runs."""
    m, a = table.measure, source.attrs
    E = table.n_entries
    check_counts(E, table.n_runs, m, table.table_rb, a)
    if table.table_rb is not None and table.n_runs != m.table_runs(table.table_rb):
        raise CorruptStoreError(f"n_runs={table.n_runs}, the measure's table has {m.table_runs(table.table_rb)} runs")
    if a.get("run_space", m.run_space) != m.run_space:
        raise CorruptStoreError(f"run_space {a.get('run_space')!r}, the measure's is {m.run_space!r}")
    if a["n_distinct"] != E or a.get("distinct_by_rb", "[]") != "[]" or a.get("implicit", False) is not False:
        raise CorruptStoreError(f"n_distinct={a['n_distinct']}, distinct_by_rb, implicit for {E} values")
    for name in ("counts", *columns):
        arr = getattr(table, name)
        if arr.ndim != 1 or arr.shape[0] != E or arr.dtype.kind not in "iu":
            raise CorruptStoreError(f"dataset {name}: {arr.dtype} {arr.shape}, expected {E} integers")
    c = table.counts
    if E and (c.dtype.itemsize > 8 or c.min() < 1 or int(c.sum(dtype=np.uint64)) != table.n_runs):
        raise CorruptStoreError(f"run counts that do not add up to n_runs={table.n_runs}")
    return E


def scored_chunks(measure: FractionMeasure, table_rb: tuple[int, ...] | None, progress: bool = False
                  ) -> Iterator[np.ndarray]:
    """The runs of the table of ``table_rb`` in chunks, after checking that there are at
    most :data:`MAX_RUNS` of them; yields (runs, bar) with a progress bar over them."""
    total = measure.table_runs(table_rb)
    if total > MAX_RUNS:
        what = "" if table_rb is None else f" with per-grade counts {table_rb}"
        raise MeasureError(f"{measure}{what}: {total:,} runs, more than irscale scores exactly for one table "
                           f"({MAX_RUNS:,}); use a smaller N")
    desc = f"{measure}" + ("" if table_rb is None else f" {table_rb}")
    with progress_bar(total=total, unit="run", unit_scale=True, desc=desc, disable=not progress, leave=False) as bar:
        for runs in measure.space_chunks(table_rb, CHUNK):
            yield runs
            bar.update(runs.shape[0])


class HeldScale(Scale):
    """Scale interface over a table held in memory: sorted distinct float ``values``
    (value i has unq rank i + 1) and their run ``counts``. Subclasses match runs to values
    exactly (:meth:`_match`)."""

    def __init__(self, table: HeldTable, rb, values: np.ndarray):
        super().__init__(table, rb)
        self._values = np.asarray(values, dtype=np.float64)
        self._counts = np.asarray(table.counts, dtype=np.int64)
        self._representatives = None

    @property
    def k(self) -> int:
        return int(self._values.shape[0])

    @property
    def n_runs(self) -> int:
        return int(self.table.n_runs)

    @property
    def values(self) -> np.ndarray:
        return self._values

    @property
    def counts(self) -> np.ndarray:
        return self._counts

    @property
    def representatives(self) -> np.ndarray:
        """Smallest run id taking each distinct value (found by one pass over the runs of
        the table's space, in id order; computed on first use)."""
        if self._representatives is None:
            reps = np.full(self.k, np.iinfo(np.int64).max, dtype=np.int64)
            for runs in self.measure.space_chunks(self.table.table_rb, CHUNK):
                np.minimum.at(reps, self._match(runs) - 1, self.measure.ids_of_runs(runs))
            self._representatives = reps
        return self._representatives

    def _default_atol(self) -> float:
        return 2 * self.certificate.error_bound

    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        atol = self._default_atol() if atol is None else atol
        v = self._values
        if self.k == 0:
            raise ValueNotInScaleError(f"{self._label()} has no values")
        tol = atol + rtol * np.abs(np.where(np.isfinite(x), x, 0))

        def dist(j):  # |v[j] - x|, 0 for equal infinities, inf for NaN and outside 0..k-1
            inside = (j >= 0) & (j < self.k)
            w = v[np.clip(j, 0, self.k - 1)]
            with np.errstate(invalid="ignore"):         # -inf - -inf
                d = np.where(w == x, 0.0, np.abs(w - x))
            return np.where(inside & ~np.isnan(d), d, np.inf)

        i = np.searchsorted(v, x)                       # v[i - 1] < x <= v[i]
        lo, hi = i - 1, i
        nearest = np.where(dist(lo) <= dist(hi), lo, hi)
        within = dist(nearest) <= tol
        # the values within tolerance are consecutive: several iff a neighbour of the nearest is
        several = (dist(nearest - 1) <= tol) | (dist(nearest + 1) <= tol)
        ranks = np.where(within, nearest + 1, 0).astype(np.int64)
        status = np.where(~within, 1, np.where(several, 2, 0)).astype(np.int8)
        return ranks, status

    def rank_runs(self, runs: ArrayLike) -> np.ndarray:
        arr = self.measure.check_runs(runs, self.rb)
        if arr.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self._match(arr)

    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        q = np.asarray(ids, dtype=np.int64).reshape(-1)
        if q.size and (q.min() < 0 or q.max() >= self.measure.id_count()):
            raise RunError(f"run ids must be in [0, {self.measure.id_count()})")
        return self.rank_runs(self.measure.runs_of_ids(q))

    def _match(self, runs: np.ndarray) -> np.ndarray:
        """Exact ranks of validated runs."""
        raise NotImplementedError
