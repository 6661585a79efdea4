"""Layout ``implicit``: tables that are the identity, rank = run id + 1, and store nothing.

A measure whose values order the runs lexicographically with all values distinct (binary
RBP with p <= 1/2: p^(k-1) > sum_{j>k} p^(j-1)) chooses this layout and gives the smallest
gap between lexicographic neighbours (``measure.lexicographic_gap()``). Its scale is the
entry scale of a table without ids (entry i is run i). With the generic method (the
reference) the table is built in full instead, as an entry table.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from irscale.errors import CorruptStoreError
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.measure import Measure
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.entries import LAYOUT as ENTRIES
from irscale.scales.tables.entries import check_counts
from irscale.scales.tables.entry_table import EntryTable
from irscale.scales.tables.scale import BuildSettings, TableSink, TableSource


@dataclasses.dataclass(kw_only=True)
class ImplicitTable(EntryTable):
    """An entry table whose entry i is run i (no datasets)."""

    layout: ClassVar[str] = "implicit"

    def stored_bytes(self) -> int:
        return 0


def implicit_table(measure: KeyMeasure) -> ImplicitTable:
    """The identity table of a measure that orders runs lexicographically."""
    spec = measure.spec
    gap = measure.lexicographic_gap()
    sf = measure.split_form()
    cert = Certificate("exact-integer+implicit-lexicographic",
                       spec.error_bound(None) + sf.bound * spec.value_factor(None), float(gap), str(gap), 0)
    size = measure.id_count()
    return ImplicitTable(measure=measure, n_entries=size, n_runs=size, certificate=cert)


class ImplicitLayout:
    """How implicit tables are built (nothing to enumerate), written and read (nothing
    but attributes)."""

    name = "implicit"
    #: Core-seconds a build spends per run of the space and per entry of the table, for
    #: estimates (:mod:`irscale.scales.tables.estimate`): nothing is enumerated.
    seconds_per_run = 0.0
    #: Largest run space its tables are built from (None: no limit but memory and disk).
    max_runs = None
    seconds_per_entry = 0.0
    checksummed = ()
    lazy = ()

    def build(self, measures: Iterable[KeyMeasure], rbs: dict[Measure, list[tuple[int, ...] | None]],
              options: BuildSettings) -> Iterator[EntryTable]:
        if options.method == "generic":            # the reference: every run scored
            yield from ENTRIES.build(measures, rbs, options)
            return
        for m in measures:
            yield implicit_table(m)

    def write(self, table: ImplicitTable, sink: TableSink) -> None:
        ENTRIES.write(table, sink)

    def read(self, source: TableSource,
             **common: Measure | int | Certificate | tuple[int, ...] | dict[str, Any] | None) -> ImplicitTable:
        return ImplicitTable(**common)

    def validate(self, table: ImplicitTable, source: TableSource, deep: bool) -> None:
        """Raise :class:`~irscale.errors.CorruptStoreError` unless the attributes are those
        of the identity table of the measure (one entry per run, every value distinct)."""
        m, a = table.measure, source.attrs
        check_counts(table.n_entries, table.n_runs, m, table.table_rb, a)
        size = m.id_count()
        if m.layout != self.name or table.table_rb is not None:
            raise CorruptStoreError(f"an implicit table for {m}, whose tables are not implicit")
        if (table.n_entries, table.n_runs, a["n_distinct"]) != (size, size, size) or a.get("implicit") is not True:
            raise CorruptStoreError(f"n_entries={table.n_entries}, n_runs={table.n_runs}, "
                                    f"n_distinct={a['n_distinct']}, implicit={a.get('implicit')!r} for an implicit "
                                    f"table of {size} runs")
        if a.get("distinct_by_rb", "[]") != "[]":
            raise CorruptStoreError("distinct_by_rb in a table without strata")


LAYOUT = ImplicitLayout()
