"""Layout ``entries`` (:mod:`irscale.scales.tables.layouts`): how entry tables
(:mod:`irscale.scales.tables.entry_table`, where the datasets are described) are built
(:mod:`irscale.scales.tables.entry_build`), written, read and validated.

Validation of a stored table (:meth:`EntriesLayout.validate`) comes in two depths. The
structural checks run whenever a table is opened and read O(1) or O(index size): the
attributes against the measure (run space, strata, layout) and against each other, every
dataset's dtype and shape against ``n_entries``, the block index (every raw a number, in
order up to twice the float error bound; counts of distinct values starting at 0, adding
per block at most the block's entries, more for a larger recall base, and ending at
``n_distinct`` / ``distinct_by_rb``), and a few sampled entries (run ids in the run
space, index_raw equal to the raw of its entry, the first entry starting a value). The
deep checks read the table (small tables when opened, every table with ``verify``): every
run id in the run space, raws in order, strata within 0..N and each value's entries by
increasing stratum, counts adding up to ``n_runs``, distinct values per recall base equal
to the attributes, and the block index equal to one recomputed from the entries.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.errors import CorruptStoreError
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.measure import Measure
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.entry_build import build_entry_tables
from irscale.scales.tables.entry_scale import BlockGuard
from irscale.scales.tables.entry_table import EntryTable, streaming_index
from irscale.scales.tables.scale import BuildSettings, TableSink, TableSource

#: The lookup kernels (small calls run interpreted: :mod:`irscale.enumerate.interpreted`).
lk = tiered(lazy_module("irscale.scales.tables.lookup_kernels"))


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
    #: Datasets a reader need not read when it opens a big table (the rest, the block
    #: index, is O(table / 64) and verified on opening).
    lazy = ("ids", "counts", "strata")

    def build(self, measures: Iterable[KeyMeasure], rbs: dict[Measure, list[tuple[int, ...] | None]],
              options: BuildSettings) -> Iterator[EntryTable]:
        return build_entry_tables(measures, rbs, options)

    def write(self, table: EntryTable, sink: TableSink) -> None:
        m = table.measure
        E = table.n_entries
        if not table.implicit:
            sums = np.zeros((E + lk.BLOCK - 1) // lk.BLOCK, np.uint64)
            # the block index and the block sums are computed by threads (their kernels
            # release the GIL) while this one writes the datasets
            with ThreadPoolExecutor(1, thread_name_prefix="irscale-index") as pool, \
                    ThreadPoolExecutor(1, thread_name_prefix="irscale-sums") as summing:
                index = pool.submit(streaming_index, table)
                for name, dt in table.dataset_plan():
                    sink.dataset(name, dt, (E,), _summed(table.pieces(name), dt, sums, _SUMMED.index(name), summing))
                block_raw, block_cum = index.result()
            sink.array("index_raw", block_raw)
            sink.array("index_cum", block_cum)
            sink.array("block_sums", sums)
            sink.attrs(index_blocks=json.dumps([lk.RAW_BLOCK, lk.BLOCK]))
        n_distinct, by_rb = E, []
        if table.stratified and not table.implicit:          # distinct values per recall base
            hist = np.zeros(m.n + 1, np.int64)
            for _, st in table.id_strata_pieces():     # entries that start a value: FIRST + stratum
                if st is not None:                        # None: an empty bucket
                    hist += np.bincount(np.asarray(st), minlength=256)[lk.FIRST:lk.FIRST + m.n + 1]
            by_rb = np.cumsum(hist)[1:].tolist()
            n_distinct = int(hist.sum())
        sink.attrs(implicit=bool(table.implicit), n_distinct=n_distinct, distinct_by_rb=json.dumps(by_rb))

    def read(self, source: TableSource,
             **common: Measure | int | Certificate | tuple[int, ...] | dict[str, Any] | None) -> EntryTable:
        usable = source.has("index_raw") and json.loads(source.attrs.get("index_blocks", "[]")) == [
            lk.RAW_BLOCK, lk.BLOCK]
        index = (source.mapped("index_raw"), source.mapped("index_cum")) if usable else None
        strata = source.mapped("strata") if source.has("strata") else None
        ids, counts = source.mapped("ids"), source.mapped("counts")
        guard = None
        if source.has("block_sums"):
            sums = source.read("block_sums")
            E = common["n_entries"]
            if sums.dtype != np.uint64 or sums.shape != ((E + lk.BLOCK - 1) // lk.BLOCK,):
                raise CorruptStoreError(f"block_sums: {sums.dtype} {sums.shape} for {E} entries")
            guard = BlockGuard(sums, ids, counts, strata, E)
        return EntryTable(ids=ids, counts=counts, strata=strata, stratified=strata is not None, index=index,
                          guard=guard, **common)


    def validate(self, table: EntryTable, source: TableSource, deep: bool) -> None:
        """Raise :class:`~irscale.errors.CorruptStoreError` (the problem in a few words)
        unless the stored ``table`` is sound (see the module docstring); ``deep`` reads it
        whole. ``source.scan(name)`` maps a dataset for one sequential pass."""
        m, a = table.measure, source.attrs
        E, n = table.n_entries, m.n
        check_counts(E, table.n_runs, m, table.table_rb, a)
        if bool(a.get("implicit", False)):
            raise CorruptStoreError("attr implicit is true for a table with entries")
        sf = m.split_form()
        stratified = bool(sf.stratified)
        if table.stratified != stratified:
            raise CorruptStoreError("strata " + ("missing" if stratified else "where the measure has none"))
        if E > m.id_count():
            raise CorruptStoreError(f"{E} entries for {m.id_count()} runs")
        want = [("ids", "u"), ("counts", "u")] + ([("strata", "u")] if stratified else [])
        for name, kind in want:
            arr = getattr(table, name)
            if arr is None or arr.ndim != 1 or arr.shape[0] != E or arr.dtype.kind != kind:
                what = "missing" if arr is None else f"{arr.dtype} {arr.shape}"
                raise CorruptStoreError(f"dataset {name}: {what}, expected {E} unsigned integers")
        if stratified and table.strata.dtype.itemsize != 1:
            raise CorruptStoreError(f"dataset strata: {table.strata.dtype}, expected uint8")
        if table.ids.dtype.itemsize > 8 or table.counts.dtype.itemsize > 8:
            raise CorruptStoreError("ids or counts wider than 64 bits")
        nr = n + 1 if stratified else 1
        by_rb = _json_list(a.get("distinct_by_rb", "[]"), "distinct_by_rb")
        n_distinct = _int_attr(a, "n_distinct")
        if stratified:
            if len(by_rb) != n or any(not isinstance(c, int) for c in by_rb) or (by_rb and by_rb[-1] != n_distinct):
                raise CorruptStoreError(f"distinct_by_rb {a.get('distinct_by_rb')} does not fit n_distinct="
                                        f"{n_distinct} and N={n}")
            if not 0 <= n_distinct <= E or any(x > y for x, y in zip(by_rb, by_rb[1:])):
                raise CorruptStoreError(f"n_distinct={n_distinct} or distinct_by_rb out of range")
        elif n_distinct != E or by_rb:
            raise CorruptStoreError(f"n_distinct={n_distinct} and distinct_by_rb for {E} entries without strata")
        versioned = a.get("format_version") is not None
        has_index = source.has("index_raw") or source.has("index_cum")
        if versioned or has_index:
            if table.index is None:
                raise CorruptStoreError("block index missing or index_blocks not [64, 1024]")
            raw, cum = (source.scan("index_raw"), source.scan("index_cum"))
            if raw.shape != ((E + lk.RAW_BLOCK - 1) // lk.RAW_BLOCK,) or raw.dtype != np.float64:
                raise CorruptStoreError(f"index_raw: {raw.dtype} {raw.shape} for {E} entries")
            if cum.shape != ((E + lk.BLOCK - 1) // lk.BLOCK + 1, nr) or cum.dtype != np.int64:
                raise CorruptStoreError(f"index_cum: {cum.dtype} {cum.shape} for {E} entries and N={n}")
            code, pos = lk.check_index(raw, cum, E, 2 * sf.bound, stratified)
            if code:
                raise CorruptStoreError(_INDEX_PROBLEMS[code] + f" (row {pos})")
            last = cum[-1]
            if (stratified and last[1:].tolist() != by_rb) or int(last[-1]) != n_distinct:
                raise CorruptStoreError(f"index_cum ends at {last.tolist()}, the attributes say {n_distinct} "
                                        f"distinct values ({by_rb or 'no strata'})")
        limit = sf.A.shape[0] * sf.S
        if E:                                                   # a few entries, O(1) pages
            rows = np.unique(np.linspace(0, (E - 1) // lk.RAW_BLOCK, 17).astype(np.int64))
            rid = np.asarray(table.ids[rows * lk.RAW_BLOCK], dtype=np.int64)
            if rid.min() < 0 or rid.max() >= limit or int(table.ids[E - 1]) >= limit:
                raise CorruptStoreError("a stored run id outside the run space")
            if table.index is not None and not np.array_equal(sf.raw_of_ids(rid), np.asarray(table.index[0][rows])):
                raise CorruptStoreError("index_raw differs from the raw values of its entries")
            if stratified and not int(table.strata[0]) & lk.FIRST:
                raise CorruptStoreError("the first entry does not start a value")
        if versioned and table.guard is None:
            raise CorruptStoreError("block_sums missing")
        if not deep:
            return
        ids, counts = source.scan("ids"), source.scan("counts")
        strata = source.scan("strata") if stratified else np.zeros(0, np.uint8)
        code, pos, runs, hist = lk.scan_entries(ids, False, E, strata, counts, sf.A, sf.state, sf.B, sf.S, sf.exact,
                                                2 * sf.bound, nr)
        if code:
            raise CorruptStoreError(_ENTRY_PROBLEMS[code] + f" (entry {pos})")
        if runs != table.n_runs:
            raise CorruptStoreError(f"the counts add up to {runs} runs, n_runs={table.n_runs}")
        if stratified and (np.cumsum(hist)[1:].tolist() != by_rb or int(hist.sum()) != n_distinct):
            raise CorruptStoreError(f"distinct values per recall base {np.cumsum(hist)[1:].tolist()}, the attributes "
                                    f"say {by_rb}")
        if table.index is not None:
            raw, cum = lk.build_index(ids, False, E, strata, sf.A, sf.state, sf.B, sf.S, nr)
            if not np.array_equal(raw, table.index[0]):
                raise CorruptStoreError("index_raw differs from the raw values of its entries")
            if not np.array_equal(cum, table.index[1]):
                raise CorruptStoreError("index_cum differs from the distinct values counted in the entries")
        if table.guard is not None:
            table.guard.check_all()         # every block verified: lookups need not check again


#: The datasets the block sums cover, in the order of their weights.
_SUMMED = ("ids", "counts", "strata")


def _summed(pieces: Iterable[np.ndarray], dtype: type[np.unsignedinteger], sums: np.ndarray, d: int,
            pool: ThreadPoolExecutor) -> Iterator[np.ndarray]:
    """The pieces of a dataset as stored (``dtype``), adding them to the block ``sums`` in
    ``pool``'s thread (its kernel releases the GIL) while the caller writes them: one
    piece at a time, in order."""
    offset = 0
    pending = None
    for piece in pieces:
        arr = np.ascontiguousarray(piece, dtype=dtype)
        if pending is not None:
            pending.result()
        pending = pool.submit(lk.add_block_sums, sums, arr, offset, d)
        offset += arr.shape[0]
        yield arr
    if pending is not None:
        pending.result()


_INDEX_PROBLEMS = {1: "index_raw holds NaN", 2: "index_raw out of order",
                   3: "index_cum does not start at 0",
                   4: "index_cum does not grow by at most its block's entries, more for larger recall bases",
                   5: "index_cum does not grow by its block's entries"}
_ENTRY_PROBLEMS = {1: "a stored run id outside the run space", 2: "entries out of value order",
                   3: "a stratum beyond N", 4: "the first entry does not start a value",
                   5: "the entries of a value differ in value or are not by increasing stratum",
                   6: "a run count of 0"}


def _json_list(text: object, name: str) -> list:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        value = None
    if not isinstance(value, list):
        raise CorruptStoreError(f"attr {name} is not a JSON list: {text!r}")
    return value


def _int_attr(attrs: dict, name: str) -> int:
    v = attrs.get(name)
    if not isinstance(v, int) or isinstance(v, bool):
        raise CorruptStoreError(f"attr {name} is not an integer: {v!r}")
    return v


def check_counts(n_entries: int, n_runs: int, measure: Measure, table_rb: tuple[int, ...] | None,
                 attrs: dict) -> None:
    """Checks every layout makes: ``n_entries`` and ``n_runs`` integers in range, ``n_runs``
    the runs of the measure's table (for tables of one recall-base vector: at most its run
    space), ``n`` the measure's N."""
    for name in ("n_entries", "n_runs", "n_distinct", "n"):
        _int_attr(attrs, name)
    if attrs["n"] != measure.n:
        raise CorruptStoreError(f"attr n={attrs['n']} for a measure of N={measure.n}")
    if not 0 <= n_entries <= n_runs:
        raise CorruptStoreError(f"n_entries={n_entries} for n_runs={n_runs}")
    if n_runs > measure.id_count() or (table_rb is None and n_runs != measure.table_runs(None)):
        raise CorruptStoreError(f"n_runs={n_runs}, the measure's table has {measure.table_runs(table_rb)} runs")


LAYOUT = EntriesLayout()
