"""Layout ``entries`` (:mod:`irscale.scales.tables.layouts`): how entry tables
(:mod:`irscale.scales.tables.entry_table`, where the datasets are described) are built
(:mod:`irscale.scales.tables.entry_build`), written and read."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.measure import Measure
from irscale.scales.tables import lookup_kernels as lk
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.entry_build import build_entry_tables
from irscale.scales.tables.entry_table import EntryTable, streaming_index
from irscale.scales.tables.scale import BuildSettings, TableSink, TableSource


class EntriesLayout:
    """How entry tables are built, written and read (see the module docstring)."""

    name = "entries"
    #: Core-seconds a build spends per run of the space and per entry of the table, for
    #: estimates (:mod:`irscale.scales.tables.estimate`): split enumeration on the 2-core reference
    #: machine took 2.4e-7 (RBP(p=0.8)@30) to 7e-7 (nDCG(b=2)@30) per entry.
    seconds_per_run = 0.0
    #: Largest run space its tables are built from (None: no limit but memory and disk).
    max_runs = None
    seconds_per_entry = 3.5e-7
    checksummed = ("ids", "counts", "strata")

    def build(self, measures: Iterable[KeyMeasure], rbs: dict[Measure, list[tuple[int, ...] | None]],
              options: BuildSettings) -> Iterator[EntryTable]:
        return build_entry_tables(measures, rbs, options)

    def write(self, table: EntryTable, sink: TableSink) -> None:
        m = table.measure
        E = table.n_entries
        if not table.implicit:
            for name, dt in table.dataset_plan():
                sink.dataset(name, dt, (E,), table.pieces(name))
            block_raw, block_cum = streaming_index(table)
            sink.array("index_raw", block_raw)
            sink.array("index_cum", block_cum)
            sink.attrs(index_blocks=json.dumps([lk.RAW_BLOCK, lk.BLOCK]))
        n_distinct, by_rb = E, []
        if table.stratified and not table.implicit:          # distinct values per recall base
            hist = np.zeros(m.n + 1, np.int64)
            for _, st in table.id_strata_pieces():
                st = np.asarray(st)
                hist += np.bincount(st[st >= lk.FIRST] & lk.STRATUM, minlength=m.n + 1)[: m.n + 1]
            by_rb = np.cumsum(hist)[1:].tolist()
            n_distinct = int(hist.sum())
        sink.attrs(implicit=bool(table.implicit), n_distinct=n_distinct, distinct_by_rb=json.dumps(by_rb))

    def read(self, source: TableSource,
             **common: Measure | int | Certificate | tuple[int, ...] | dict[str, Any] | None) -> EntryTable:
        usable = source.has("index_raw") and json.loads(source.attrs.get("index_blocks", "[]")) == [
            lk.RAW_BLOCK, lk.BLOCK]
        index = (source.mapped("index_raw"), source.mapped("index_cum")) if usable else None
        strata = source.mapped("strata") if source.has("strata") else None
        return EntryTable(ids=source.mapped("ids"), counts=source.mapped("counts"), strata=strata,
                          stratified=strata is not None, index=index, **common)


LAYOUT = EntriesLayout()
