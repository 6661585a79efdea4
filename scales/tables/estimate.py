"""Estimates of a table build before it starts: runs, entries, time, memory and disk.

The run count is exact (the size of the run space); the number of entries (distinct
values, or (value, stratum) pairs) is extrapolated from the same measure at two small
cutoffs, built in a fraction of a second (the smaller without compiling a kernel:
:mod:`irscale.enumerate.interpreted`); time comes from the layout's costs per run and per
entry. Estimates are meant to tell minutes from hours and megabytes from gigabytes, not to
be exact.
"""
from __future__ import annotations

import dataclasses
import functools
import math

from irscale.enumerate.memory import available_memory
from irscale.enumerate.split import CHECKPOINT_ITEMS, FANOUT_ITEMS, MAX_HELD_BYTES
from irscale.errors import IrscaleError
from irscale.scales.measures.measure import Measure
from irscale.scales.tables import graded_oracle
from irscale.scales.tables.build_options import BuildOptions
from irscale.scales.tables.layouts import layout_of
from irscale.scales.tables.units import duration, size

#: Runs of the space of the small cutoffs the extrapolation builds (at most).
PROBE_RUNS = 1 << 14
#: Bytes of memory per entry while a table is built in memory: bucket parts, their
#: concatenation and the block index (measured: DCG(b=2)@28 in memory, 3.6 GB).
MEMORY_PER_ENTRY = 4
#: In-memory builds below this many runs are not estimated (they take about a second).
QUIET_RUNS = 1 << 22


@dataclasses.dataclass(frozen=True)
class Estimate:
    """What building one table costs, estimated (see the module docstring).

    ``runs``: runs of its space (exact); ``entries``: entries it will have (extrapolated;
    at most ``runs``); ``seconds``: wall time with ``workers`` workers; ``memory``: peak
    bytes when built in memory (:func:`irscale.scale`); ``stored``: bytes of its datasets
    in a store; ``checkpoints``: bytes of resumable checkpoints while a store build runs
    (0 for tables built in memory, see :func:`irscale.enumerate.split.checkpoints_worth`)."""

    label: str
    runs: int
    entries: int
    seconds: float
    workers: int
    memory: int
    stored: int
    checkpoints: int

    @property
    def heavy(self) -> bool:
        """Whether the build is worth announcing (about ten seconds or more, or a gigabyte
        of disk)."""
        return self.seconds >= 10 or self.stored + self.checkpoints >= 1e9

    def describe(self, in_memory: bool = False) -> str:
        """One line, e.g. ``AP@30: 1.07e+09 runs, about 5.8e+08 entries; about 5 min with 2
        workers, 3.5 GB in the store (+ 4.9 GB of checkpoints while it builds)``."""
        head = f"{self.label}: {self.runs:.3g} runs, about {self.entries:.2g} entries; about {duration(self.seconds)}"
        if in_memory:
            return f"{head} and {size(self.memory)} of memory"
        saved = f" (+ {size(self.checkpoints)} of checkpoints while it builds)" if self.checkpoints else ""
        return f"{head} with {self.workers} worker{'s' * (self.workers > 1)}, {size(self.stored)} in the store{saved}"


def _probe_cutoffs(measure: Measure) -> tuple[int, int] | None:
    """Two consecutive small cutoffs whose run spaces have at most :data:`PROBE_RUNS` runs."""
    n0 = min(measure.n, int(math.log(PROBE_RUNS) / math.log(measure.levels)))
    return (n0 - 1, n0) if n0 >= 3 else None


@functools.lru_cache(maxsize=256)
def _small_table(measure: Measure, n: int, method: str, layout: str = "auto") -> tuple[int, int] | None:
    """(entries, stored bytes) of the measure's default table at cutoff ``n``, or None when
    the measure has no such variant."""
    try:
        small = dataclasses.replace(measure, n=n)
        table_rb = small.table_rbs("all")[0]
        [table] = layout_of(small, layout, method).build([small], {small: [table_rb]}, BuildOptions(method=method))
    except (IrscaleError, ValueError, TypeError):
        return None
    return table.n_entries, table.stored_bytes()


def estimate(measure: Measure, table_rb: tuple[int, ...] | None = None, workers: int = 1,
             method: str = "auto", layout: str = "auto") -> Estimate:
    """Estimate building the table of ``measure`` for ``table_rb`` with ``workers``
    workers in ``layout`` (see :class:`Estimate`). Builds the measure at two small cutoffs
    (milliseconds once the kernels are compiled); rank oracles build nothing and store
    nothing."""
    layout = building_layout(measure, table_rb, layout, method)
    chosen = layout_of(measure, layout, method)
    if chosen.name == "oracle":         # graded oracles are built (in about a second), the others count
        seconds = graded_oracle.SECONDS if graded_oracle.serves(measure, table_rb) else 0.0
        return Estimate(f"{measure} (rank oracle)", measure.table_runs(table_rb), 0, seconds, max(1, workers), 0, 0, 0)
    runs = measure.table_runs(table_rb)
    if measure.own_pass(table_rb) or runs < FANOUT_ITEMS:
        workers = 1                      # feasible runs, and small tables, are enumerated in one process
    entries, per_entry = runs, 8.0
    cutoffs = _probe_cutoffs(measure)
    if cutoffs is not None:
        lo, hi = _small_table(measure, cutoffs[0], method, layout), _small_table(measure, cutoffs[1], method, layout)
        if lo is not None and hi is not None and lo[0] > 0 and hi[0] > 0:
            growth = min(max(hi[0] / lo[0], 1.0), float(measure.levels))
            extra = measure.n - cutoffs[1]
            entries = min(runs, int(hi[0] * growth ** extra)) if table_rb is None or extra == 0 else runs
            per_entry = hi[1] / hi[0]
    seconds = (chosen.seconds_per_run * runs + chosen.seconds_per_entry * entries) / max(1, workers)
    stored = int(entries * per_entry)
    held = int(stored * 1.4)        # the entries as buckets hold them, in memory or in checkpoints
    free = available_memory()
    # as split_enumerate decides (checkpoints_worth), with the runs for the pairs and the
    # widest entries: an estimate may count checkpoints a build does not write, not the reverse
    checkpointed = runs >= CHECKPOINT_ITEMS or (free is not None and runs * MAX_HELD_BYTES > free // 2)
    return Estimate(str(measure) + ("" if table_rb is None else f" {table_rb}"), runs, entries, seconds,
                    max(1, workers), int(entries * per_entry * MEMORY_PER_ENTRY), stored,
                    held if checkpointed else 0)


def building_layout(measure: Measure, table_rb: tuple[int, ...] | None = None, layout: str = "auto",
                    method: str = "auto") -> str:
    """The layout choice that builds the table of ``measure`` for ``table_rb`` asked for in
    ``layout``: ``"table"`` for the per-grade count vectors no rank oracle serves (the
    oracle layout builds their tables), else ``layout``."""
    if (layout_of(measure, layout, method).name == "oracle" and not measure.recall_base.oracle_serves(table_rb)
            and not graded_oracle.serves(measure, table_rb)):
        return "table"
    return layout


def runs_enumerated(measure: Measure, table_rb: tuple[int, ...] | None = None, layout: str = "auto") -> int:
    """Runs a build of the table of ``measure`` for ``table_rb`` in ``layout`` scores: 0
    for a rank oracle, which enumerates nothing."""
    if layout_of(measure, building_layout(measure, table_rb, layout)).name == "oracle":
        return 0
    return measure.table_runs(table_rb)
