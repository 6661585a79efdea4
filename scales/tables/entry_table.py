"""The table of layout ``entries``: key measures over every run of REL^N (or every run
feasible for a per-grade count vector), big enough to be read lazily.

An :class:`EntryTable` holds the *entries* of a measure in increasing value order.
Without strata an entry is a distinct value; in a stratified table (binary RB-dependent
measures, one table for every recall base) it is a (distinct value, stratum) pair, the
stratum being the number of relevant documents of the runs behind it, the entries of one
value adjacent by increasing stratum, and bit 7 of an entry's strata byte
(:data:`~irscale.scales.tables.lookup_kernels.FIRST`) marking the first one. The table of
RB = r holds the values whose smallest stratum is <= r (SPEC section 2).

Each entry keeps the smallest id of its runs (its value is recomputed from it with the
measure's split form, :mod:`irscale.enumerate.splitform`) and the number of runs. A block
index (:func:`streaming_index`) lets lookups read a few pages of a memory-mapped table.

Datasets (all contiguous, uncompressed, memory-mappable):

``ids``       uint32/uint64 (E,)  smallest run id of each entry
``counts``    uint8..uint64 (E,)  runs per entry
``strata``    uint8 (E,)          stratified tables only: bits 0-6 the stratum, bit 7 a new value
``index_raw`` float64             raw value of every 64th entry
``index_cum`` int64 (E/1024+1, R) distinct values present per table recall base before each
                                  block of 1024 entries (attr index_blocks = [64, 1024])
``block_sums`` uint64 (E/1024,)   format 4: per block of 1024 entries, the sum of its ids, counts
                                  and strata times odd weights of their positions
                                  (:func:`~irscale.scales.tables.lookup_kernels.add_block_sums`),
                                  so that lookups verify the blocks they read
                                  (:class:`~irscale.scales.tables.entry_scale.BlockGuard`)

The checksum of a format-3 table covers ids, counts and strata, in that order; a
format-4 table's covers every dataset and attribute (:mod:`irscale.store.format`).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import ClassVar

import numpy as np

from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.runspace import count_dtype, id_dtype
from irscale.scales.measures.measure import RecallBase
from irscale.scales.tables.entry_scale import BlockGuard, EntryScale
from irscale.scales.tables.scale import Table

#: The lookup kernels (small calls run interpreted: :mod:`irscale.enumerate.interpreted`).
lk = tiered(lazy_module("irscale.scales.tables.lookup_kernels"))


@dataclasses.dataclass(kw_only=True)
class EntryTable(Table):
    """Entries of one key measure, in increasing value order (see the module docstring).

    ``ids``: smallest run id per entry (None for an implicit table, whose entry i is run
    i); ``counts``: runs per entry (None: all 1); ``strata``: packed strata bytes (None
    for tables without strata); ``stratified``: whether the table has strata. Arrays may
    be memory maps of a store file. ``parts``: bucket results not yet concatenated (the
    store writes them slice by slice); ``index``: the stored block index (block_raw,
    block_cum); ``run_index``: runs before each block per recall base (built on demand);
    ``guard``: the block sums of a stored format-4 table, which lookups verify the blocks
    they read against (None: nothing verified lazily)."""

    ids: np.ndarray | None = None
    counts: np.ndarray | None = None
    strata: np.ndarray | None = None
    stratified: bool = False
    parts: list | None = None
    index: tuple | None = None
    run_index: np.ndarray | None = None
    guard: BlockGuard | None = None

    layout: ClassVar[str] = "entries"

    @property
    def implicit(self) -> bool:
        return self.ids is None and self.parts is None

    def dataset_plan(self) -> list[tuple[str, type[np.unsignedinteger]]]:
        """(name, dtype) of the checksummed datasets a store writes, in order (the counts'
        dtype is the smallest holding the largest count: one pass over the counts, once)."""
        if self.implicit:
            return []
        if "_plan" not in self.__dict__:
            cmax = max((int(c.max()) for c in self.pieces("counts") if c.size), default=1)
            plan = [("ids", id_dtype(self.measure.levels, self.measure.n)), ("counts", count_dtype(cmax))]
            if self.stratified:
                plan.append(("strata", np.uint8))
            self.__dict__["_plan"] = plan
        return self.__dict__["_plan"]

    def stored_bytes(self) -> int:
        """Bytes of the entry datasets and their block sums (not the block index)."""
        if self.implicit:
            return 0
        sums = 8 * ((self.n_entries + lk.BLOCK - 1) // lk.BLOCK)
        return self.n_entries * sum(np.dtype(dt).itemsize for _, dt in self.dataset_plan()) + sums

    def arrays_for_kernels(self) -> tuple[np.ndarray, np.ndarray]:
        ids = self.ids if self.ids is not None else np.zeros(0, np.int64)
        strata = self.strata if self.strata is not None else np.zeros(0, np.uint8)
        return ids, strata

    def scale(self, rb: RecallBase = None) -> EntryScale:
        return EntryScale(self, rb)

    # -- the entries as consecutive pieces (bucket parts, or the whole arrays) --------------
    def pieces(self, name: str) -> Iterator[np.ndarray]:
        """Dataset ``name`` (ids, counts or strata) as consecutive arrays: bucket parts
        (each mapped from disk only while in use) or the one in-memory array. Strata of
        parts are packed with their new-value flags here."""
        if self.parts is not None:
            for i, p in enumerate(self.parts):
                yield self._packed(i) if name == "strata" else getattr(p, name)
            return
        arr = getattr(self, name)
        if arr is not None:
            yield arr

    def id_strata_pieces(self) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
        """(ids, packed strata or None) per piece."""
        if self.parts is not None:
            for i, p in enumerate(self.parts):
                yield p.ids, (self._packed(i) if p.strata.size else None)
        else:
            yield self.ids, self.strata

    def _packed(self, i: int) -> np.ndarray:
        """Packed strata of part ``i``; kept for parts held in memory (a store writes them,
        indexes them and counts their values: three passes), not for parts on disk."""
        cache = self.__dict__.setdefault("_packed_parts", {})
        if i in cache:
            return cache[i]
        p = self.parts[i]
        packed = pack_strata(p.strata, p.first)
        if isinstance(p.strata, np.ndarray) and not isinstance(p.strata, np.memmap):
            cache[i] = packed
        return packed


def pack_strata(strata: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Stratum (bits 0-6) and new-value flag (bit 7) in one byte per entry."""
    return (np.asarray(strata, dtype=np.uint8) & lk.STRATUM) | (np.asarray(first, dtype=np.uint8) << 7)


def streaming_index(table: EntryTable) -> tuple[np.ndarray, np.ndarray]:
    """Block index of a table given as consecutive pieces, computed without holding the
    table: (block_raw, block_cum)."""
    sf = table.measure.split_form()
    nr = table.measure.n + 1 if table.stratified else 1
    raws, cums = [], [np.zeros((1, nr), np.int64)]
    pend = None
    total = np.zeros(nr, np.int64)

    def flush(ids, strata):
        nonlocal total
        br, bc = lk.build_index(ids, False, ids.shape[0], strata, sf.A, sf.state, sf.B, sf.S, nr)
        raws.append(br)
        cums.append(bc[1:] + total)
        total = total + bc[-1]

    for ids, strata in table.id_strata_pieces():
        ids = np.asarray(ids, dtype=np.int64)
        strata = np.zeros(0, np.uint8) if strata is None or len(strata) == 0 else np.asarray(strata)
        if pend is not None and pend[0].shape[0]:   # complete the block begun in earlier pieces
            take = min(lk.BLOCK - pend[0].shape[0], ids.shape[0])
            pend = (np.concatenate([pend[0], ids[:take]]),
                    np.concatenate([pend[1], strata[:take]]) if strata.size or pend[1].size else strata)
            ids, strata = ids[take:], strata[take:] if strata.size else strata
            if pend[0].shape[0] < lk.BLOCK:
                continue
            flush(*pend)
        full = ids.shape[0] // lk.BLOCK * lk.BLOCK
        if full:
            flush(ids[:full], strata[:full] if strata.size else strata)
        pend = (ids[full:], strata[full:] if strata.size else strata)
    if pend is not None and pend[0].shape[0]:
        flush(*pend)
    block_raw = np.concatenate(raws) if raws else np.zeros(0)
    return block_raw, np.concatenate(cums)
