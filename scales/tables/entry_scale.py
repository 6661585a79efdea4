"""The scale of an entry table (:mod:`irscale.scales.tables.entries`), answered without
reading the table whole.

Values are recomputed from the entries' representative run ids with the measure's split
form (``raw = A[p] + B[state[p], s]``) and mapped to values by its key kind; lookups are
binary searches in the block index plus a few probes of the (memory-mapped) table, in the
numba kernels of :mod:`irscale.scales.tables.lookup_kernels`. Batches are answered in
value order (sorted first), which keeps a lookup batch on a memory-mapped table
cache-friendly.

A stored table was validated when it was opened (:mod:`irscale.store.reader`), but a big
one is not read whole then. Lookups on a format-4 table verify every block of entries
they read against its stored block sum (:class:`BlockGuard`) before they answer, and
whatever a lookup meets that cannot be right (a block that does not match its sum, a run
id outside the run space, a rank outside 1..K, a value that starts inside another)
raises :class:`~irscale.errors.CorruptStoreError` naming the table
(:func:`corrupt_error`). On a format-3 table (no block sums) the kernels' checks still
rule out crashes, but a damaged entry the checks cannot see (a strata byte, a count)
may give a wrong answer there; ``irscale info --verify`` finds it.
"""
from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from math import comb
from typing import TYPE_CHECKING

import numpy as np

from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.runspace import refuse_infeasible
from irscale.errors import CorruptStoreError, RunError
from irscale.scales.tables.scale import BLOCK_VALUES, Scale, Table

#: The lookup kernels (small calls run interpreted: :mod:`irscale.enumerate.interpreted`).
lk = tiered(lazy_module("irscale.scales.tables.lookup_kernels"))
sk = tiered(lazy_module("irscale.enumerate.split_kernels"))          # exact keys, strata of run ids

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def corrupt_error(table: Table, problem: str) -> CorruptStoreError:
    """The error of a table found corrupt while it is used: names the table and, for a
    table read from a store (``table.meta``: ``store_file``, ``table_name``,
    ``rebuild_command`` set by the reader), the file and the command that rebuilds it."""
    meta = table.meta or {}
    name = meta.get("table_name") or str(table.measure)
    where = f"{meta['store_file']}: " if meta.get("store_file") else ""
    hint = f"; rebuild it with: {meta['rebuild_command']}" if meta.get("rebuild_command") else ""
    err = CorruptStoreError(f"{where}table {name} is corrupt ({problem}){hint}")
    err.problem, err.table = problem, name
    return err


class BlockGuard:
    """The block sums of a stored table (one per :data:`~lookup_kernels.BLOCK` entries
    over ids, counts and strata) and which blocks have been verified against them.
    Lookups mark the blocks they read (:meth:`new_seen`) and :meth:`check` them before
    answering: each block is read and summed once per process, and once every block is
    verified (:attr:`done`) lookups mark nothing. Thread-safe (two threads may verify a
    block twice; blocks are marked verified, and counted, under a lock)."""

    def __init__(self, sums: np.ndarray, ids: np.ndarray, counts: np.ndarray, strata: np.ndarray | None,
                 n_entries: int):
        self.sums = np.ascontiguousarray(sums, dtype=np.uint64)
        self.verified = np.zeros(self.sums.shape[0], np.uint8)
        self.left = self.sums.shape[0]            # blocks not verified yet
        self._lock = threading.Lock()
        self.ids, self.counts = ids, counts
        self.strata = _EMPTY_U8 if strata is None else strata
        self.n_entries = n_entries

    @property
    def done(self) -> bool:
        """Whether every block has been verified."""
        return self.left <= 0

    def new_seen(self) -> np.ndarray:
        """An array for the kernels to mark the blocks they read in (an empty one, which
        marks nothing, once every block is verified)."""
        return lk.NO_SEEN if self.done else np.zeros(self.sums.shape[0], np.uint8)

    def check(self, seen: np.ndarray) -> int:
        """Verify the blocks marked in ``seen``: the first that fails, or -1."""
        if seen.shape[0] == 0:
            return -1
        return self.check_blocks(np.flatnonzero(seen))

    def check_blocks(self, blocks: np.ndarray) -> int:
        """Verify ``blocks`` (indexes): the first that fails, or -1."""
        if self.done:
            return -1
        blocks = np.asarray(blocks, dtype=np.int64)
        if blocks.size == 0:
            return -1
        bad = int(lk.check_blocks(blocks, self.ids, self.counts, self.strata, self.n_entries, self.sums,
                                  self.verified))
        if bad < 0:
            self._mark_verified(blocks)
        return bad

    def _mark_verified(self, blocks: np.ndarray) -> None:
        """Mark ``blocks`` (unique indexes) verified."""
        with self._lock:
            new = blocks[self.verified[blocks] == 0]
            self.verified[new] = 1
            self.left -= int(new.size)

    def check_entries(self, entries: np.ndarray) -> int:
        """Verify the blocks of the entries ``entries``: the first that fails, or -1."""
        return self.check_blocks(np.unique(np.asarray(entries, dtype=np.int64) >> lk.BLOCK_SHIFT))

    def check_chunk(self, a: int, b: int, ids: np.ndarray, counts: np.ndarray, strata: np.ndarray | None) -> int:
        """Verify the blocks of entries a..b-1 given as arrays read from the file (whole
        blocks summed from them, partial ones from the table): the first that fails, or -1."""
        if self.done:
            return -1
        k0, k1 = -(-a // lk.BLOCK), min(b, self.n_entries) // lk.BLOCK       # blocks inside a..b
        if b == self.n_entries:
            k1 = self.sums.shape[0]
        edge = [k for k in (a // lk.BLOCK, (b - 1) // lk.BLOCK) if not k0 <= k < k1]
        bad = self.check_blocks(np.unique(np.array(edge, np.int64)))
        if bad >= 0 or k1 <= k0 or self.verified[k0:k1].all():
            return bad
        lo = k0 * lk.BLOCK - a
        hi = min(k1 * lk.BLOCK, self.n_entries) - a
        sums = np.zeros(k1 - k0, np.uint64)
        for d, arr in enumerate((ids, counts, strata)):
            if arr is not None and arr.shape[0]:
                lk.add_block_sums(sums, np.ascontiguousarray(arr[lo:hi]), 0, d)
        wrong = np.flatnonzero(sums != self.sums[k0:k1])
        if wrong.size:
            return k0 + int(wrong[0])
        self._mark_verified(np.arange(k0, k1))
        return -1

    def check_all(self) -> None:
        """Verify every block (reads the table once, in steps of 2^20 entries); raises
        :class:`BlockSumError` for the first bad block."""
        if self.done:
            return
        srcs = [None if arr is None or arr.shape[0] == 0 else _Source(arr) for arr in (self.ids, self.counts,
                                                                                          self.strata)]
        step = 1 << 20
        try:
            for a in range(0, self.n_entries, step):
                b = min(self.n_entries, a + step)
                ids, counts, strata = (None if src is None else src.read(a, b) for src in srcs)
                bad = self.check_chunk(a, b, ids, counts, strata)
                if bad >= 0:
                    raise BlockSumError(bad)
        finally:
            for src in srcs:
                if src is not None:
                    src.close()


class BlockSumError(CorruptStoreError):
    """A block of entries that does not match its stored sum."""

    def __init__(self, block: int):
        a = block * lk.BLOCK
        self.problem = f"entries {a}..{a + lk.BLOCK - 1} do not match their block sum"
        super().__init__(self.problem)


class EntryScale(Scale):
    """The unq interval scale of an entry table for one recall base (see
    :class:`~irscale.scales.tables.scale.Scale`). ``r`` is the table recall base of a
    stratified table (min(rb, N)); 0 otherwise."""

    def __init__(self, table, rb=None):
        super().__init__(table, rb)
        self.r = min(self.rb, self.n) if table.stratified else 0
        self._sf = self.measure.split_form()
        self._spec = self.measure.spec
        self._ids, self._strata = table.arrays_for_kernels()
        self._guard = getattr(table, "guard", None)
        self._index = None
        self._materialised = None

    # -- index -------------------------------------------------------------------------
    def _idx(self):
        if self._index is None and self.table.index is not None:
            self._index = tuple(self.table.index)
        if self._index is None:
            t, sf = self.table, self._sf
            nr = self.n + 1 if t.stratified else 1
            index = lk.build_index(self._ids, t.implicit, t.n_entries, self._strata, sf.A, sf.state, sf.B, sf.S, nr)
            if index[1][0, 0] < 0:
                raise self._corrupt(f"a stratum beyond N={self.n}")
            self._index = index
        return self._index

    def _corrupt(self, problem: str) -> CorruptStoreError:
        return corrupt_error(self.table, problem)

    def _raws_of_ids(self, rid: np.ndarray) -> np.ndarray:
        """Raw values of stored run ids, which must lie in the run space."""
        if rid.size and (rid.min() < 0 or rid.max() >= self._sf.A.shape[0] * self._sf.S):
            raise self._corrupt("a stored run id outside the run space")
        return self._sf.raw_of_ids(rid)

    def _seen(self) -> np.ndarray:
        return lk.NO_SEEN if self._guard is None else self._guard.new_seen()

    def _verify(self, seen: np.ndarray | None = None, entries: np.ndarray | None = None,
                whole: bool = False) -> None:
        """Verify the blocks marked in ``seen``, those of ``entries``, or (``whole``) all,
        against the table's block sums (nothing for tables without them)."""
        g = self._guard
        if g is None:
            return
        try:
            if whole:
                g.check_all()
                return
            bad = g.check(seen) if seen is not None else g.check_entries(entries)
        except BlockSumError as e:
            raise self._corrupt(e.problem) from None
        if bad >= 0:
            raise self._corrupt(BlockSumError(bad).problem)

    def _check_status(self, status: np.ndarray) -> None:
        if (status == lk.CORRUPT).any():
            raise self._corrupt("a stored run id outside the run space")

    def _check_found(self, ranks: np.ndarray, status: np.ndarray) -> None:
        """Ranks the kernels found must lie in 1..K."""
        got = ranks[status == 0]
        if got.size and (got.min() < 1 or got.max() > self.k):
            raise self._corrupt(f"a rank outside 1..{self.k} (block index)")

    def _args(self):
        t, sf = self.table, self._sf
        block_raw, block_cum = self._idx()
        return (self._ids, t.implicit, t.n_entries, self._strata, sf.A, sf.state, sf.B, sf.S,
                block_raw, block_cum)

    # -- raw <-> value -----------------------------------------------------------------
    def _values_of_raw(self, raw: np.ndarray) -> np.ndarray:
        return self._spec.values_of_raw(raw, self._sf.exact, self.rb)

    # -- facts ----------------------------------------------------------------------------
    def _materialise(self):
        """values, counts and representative run ids of the distinct values present."""
        if self._materialised is None:
            t = self.table
            E = t.n_entries
            self._verify(whole=True)
            ids = np.arange(E, dtype=np.int64) if t.implicit else np.asarray(t.ids, dtype=np.int64)
            counts = np.ones(E, np.int64) if t.counts is None else np.asarray(t.counts, dtype=np.int64)
            packed = None if t.strata is None else np.asarray(t.strata)
            first = np.ones(E, bool) if packed is None else (packed & lk.FIRST) != 0
            if E and not first[0]:
                raise self._corrupt("the first entry does not start a value")
            vid = np.cumsum(first) - 1                      # distinct value of each entry
            nv = int(vid[-1]) + 1 if E else 0
            if packed is None:
                present = np.ones(nv, bool)
            else:
                feasible = (packed & lk.STRATUM) <= self.r
                counts = np.where(feasible, counts, 0)
                present = np.zeros(nv, bool)
                present[vid[first & feasible]] = True    # a value's first entry has its smallest stratum
            cnt = np.bincount(vid, weights=counts.astype(np.float64), minlength=nv)
            rep = ids[first]                                # smallest id among runs of the smallest stratum
            cnt, rep = cnt[present], rep[present]
            raw = self._raws_of_ids(rep)
            if packed is not None and int(present.sum()) != self.k:
                raise self._corrupt(f"{int(present.sum())} values present for rb={self.r}, the index says {self.k}")
            self._materialised = (self._values_of_raw(raw), np.rint(cnt).astype(np.int64), rep)
        return self._materialised

    @property
    def values(self) -> np.ndarray:
        """Sorted distinct values (computed on first use; for very large tables prefer
        :meth:`rank` and :meth:`value_blocks`, which read only what they need)."""
        return self._materialise()[0]

    @property
    def counts(self) -> np.ndarray:
        return self._materialise()[1]

    @property
    def representatives(self) -> np.ndarray:
        """Smallest run id taking each distinct value (for stratified tables: among the
        feasible runs of the smallest stratum)."""
        return self._materialise()[2]

    @property
    def n_runs(self) -> int:
        if self.table.strata is None:
            return self.table.n_runs
        n, g = self.n, self.measure.levels - 1    # runs with at most r relevant documents
        return sum(comb(n, c) * g ** c for c in range(self.r + 1))

    @property
    def k(self) -> int:
        if self.table.strata is None:
            return self.table.n_entries
        block_raw, block_cum = self._idx()
        return int(block_cum[-1, self.r])

    # -- value -> rank ---------------------------------------------------------------
    def _default_atol(self) -> float:
        """The float error of the table's own values, in value units (0 for exact raws)."""
        return 0.0 if self._sf.exact else 2 * self._sf.bound * abs(self._spec.value_factor(self.rb))

    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        finite = np.isfinite(x)
        x = np.where(finite, x, -1.0)
        if atol is None:
            atol = self._default_atol()
        raw, dfac = self._spec.raw_of_values(x, self.rb)
        tols = (atol + rtol * np.abs(x)) * abs(dfac) + 4 * np.spacing(np.abs(raw) + 1)
        order = np.argsort(raw, kind="stable")
        ranks_s = np.zeros(x.shape[0], np.int64)
        status_s = np.zeros(x.shape[0], np.int8)
        seen = self._seen()
        lk.rank_raw(raw[order], tols[order], self.r, 2 * self._sf.bound, *self._args(), ranks_s, status_s, seen)
        self._verify(seen)
        self._check_status(status_s)
        self._check_found(ranks_s, np.where(status_s == 2, 0, status_s))
        ranks = np.empty_like(ranks_s)
        status = np.empty_like(status_s)
        ranks[order], status[order] = ranks_s, status_s
        status[~finite] = 1
        return ranks, status

    def values_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """The distinct values of unq ranks ``ranks``, recomputed from the representative
        run of each (the block index locates its entry: the table is not materialised)."""
        q = self._check_ranks(ranks)
        t = self.table
        entries = np.empty(q.size, np.int64)
        seen = self._seen()
        lk.entries_of_ranks(q, self.r, self._strata, self._idx()[1], t.n_entries, entries, seen)
        self._verify(seen)
        if entries.size and (entries.min() < 0 or entries.max() >= t.n_entries):
            raise self._corrupt("a rank the block index does not locate")
        rid = entries if t.implicit else np.asarray(t.ids[entries], dtype=np.int64)
        return self._values_of_raw(self._raws_of_ids(rid)).reshape(np.shape(ranks))

    def midranks_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """Mid-ranks read from the table without materialising it: the first call builds
        a run-count index of the table (one pass over its counts, cached with the table)."""
        q = self._check_ranks(ranks)
        t = self.table
        if t.implicit or (t.counts is None and t.strata is None):
            return q.astype(np.float64)     # one run per value: the mid-rank is the rank
        counts = np.zeros(0, np.uint8) if t.counts is None else t.counts
        if t.run_index is None:
            self._verify(whole=True)
            nr = self.n + 1 if t.stratified else 1
            run_index = lk.build_run_index(counts, self._strata, t.n_entries, nr)
            if run_index[0, 0] < 0:
                raise self._corrupt(f"a stratum beyond N={self.n}")
            t.run_index = run_index
        out = np.empty(q.size, np.float64)
        seen = self._seen()
        lk.midranks_of_ranks(q, self.r, counts, self._strata, t.n_entries, self._idx()[1], t.run_index, out, seen)
        self._verify(seen)
        if np.isnan(out).any():
            raise self._corrupt("a rank the block index does not locate")
        return out

    # -- judged run -> rank -------------------------------------------------------------
    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        q = np.asarray(ids, dtype=np.int64).reshape(-1)
        sf = self._sf
        if q.size and (q.min() < 0 or q.max() >= self.measure.id_count()):
            raise RunError(f"run ids must be in [0, {self.measure.id_count()})")
        if self.table.table_rb is not None and q.size:   # the table holds only the runs feasible for rb
            grades = self.measure.levels - 1
            refuse_infeasible(sk.grade_counts_ids(q, self.measure.levels, self.n, grades), self.rb)
        qkeys = sk.exact_keys(q, sf.KA, sf.KB, sf.state, sf.S) if not sf.exact else np.zeros((q.size, 1), np.uint64)
        KA = sf.KA if not sf.exact else np.zeros((1, 1), np.uint64)
        KB = sf.KB if not sf.exact else np.zeros((1, 1, 1), np.uint64)
        order = np.argsort(sf.raw_of_ids(q), kind="stable")  # answer in value order (locality)
        ranks_s = np.zeros(q.size, np.int64)
        status_s = np.zeros(q.size, np.int8)
        seen = self._seen()
        lk.rank_ids(q[order], self.r, sf.exact, 2 * sf.bound, *self._args(), qkeys[order], KA, KB,
                    self.measure.levels, self.n, ranks_s, status_s, seen)
        self._verify(seen)
        self._check_status(status_s)
        self._check_found(ranks_s, status_s)
        ranks = np.empty_like(ranks_s)
        status = np.empty_like(status_s)
        ranks[order], status[order] = ranks_s, status_s
        if (status == 3).any():
            i = int(np.argmax(status == 3))
            c = int(sk.popcount_ids(q[i:i + 1], self.measure.levels, self.n)[0])
            raise RunError(f"run {i} has {c} relevant documents, more than the recall base "
                           f"rb={self.rb}: it cannot occur for this topic")
        if (status != 0).any():  # cannot happen for a sound table
            raise self._corrupt(f"run {int(q[int(np.argmax(status != 0))])} is not in it")
        return ranks

    # -- streaming ------------------------------------------------------------------------
    def value_blocks(self, chunk: int = BLOCK_VALUES) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Blocks ``(values, counts)`` of the distinct values present, in value order, with
        complete run counts, streamed from the table in chunks of ``chunk`` entries (a
        value whose entries straddle a chunk boundary is held back until its last entry is
        read). Values come from representative run ids as in :attr:`values` (identical
        float64 values), so tables of 2^30 entries are never held whole."""
        if self.table.parts is not None:
            raise ValueError("table not assembled (parts pending)")
        pend_v = pend_c = None
        for vals, cnts, lead in self._present_chunks(chunk):
            if lead:
                if pend_c is None:
                    raise self._corrupt("the first entry does not start a value")
                pend_c[0] += lead
            k = vals.shape[0]
            if k == 0:
                continue
            if pend_v is not None:
                yield pend_v, pend_c
            if k > 1:
                yield vals[:-1], cnts[:-1]
            pend_v, pend_c = vals[-1:].copy(), cnts[-1:].copy()
        if pend_v is not None:
            yield pend_v, pend_c

    def _present_chunks(self, chunk: int, workers: int = 2):
        """Per chunk of table entries: ``(values, counts, lead)`` of the values present
        whose first entry lies in the chunk (counts so far) and the feasible count of the
        chunk's entries before the first of them (:func:`lookup_kernels.present_raw`).
        ``workers`` threads read and decode the next chunks while the caller folds the
        current one (the kernels, file reads and numpy release the GIL)."""
        t, sf = self.table, self._sf
        r = self.r
        srcs = [None if a is None else _Source(a) for a in (t.ids, t.strata, t.counts)]
        E = t.n_entries
        size = min(chunk, max(E, 1))
        local = threading.local()

        def load(a):
            if not hasattr(local, "raw"):             # per-thread decode buffers
                local.raw = _buffer(size, np.float64, 0)
                local.cnt = _buffer(size, np.int64, 72)
            raw, cnt = local.raw, local.cnt
            b = min(E, a + chunk)
            ids, strata, counts = (None if s is None else s.read(a, b) for s in srcs)
            if self._guard is not None and self._guard.check_chunk(a, b, ids, counts, strata) >= 0:
                raise self._corrupt(f"entries in {a}..{b - 1} do not match their block sums")
            k, lead = lk.present_raw(_EMPTY_I64 if ids is None else ids, t.implicit, a, b - a,
                                     _EMPTY_U8 if strata is None else strata,
                                     _EMPTY_I64 if counts is None else counts, r,
                                     sf.A, sf.state, sf.B, sf.S, raw, cnt)
            if k < 0:
                raise self._corrupt("a stored run id outside the run space")
            del ids, strata, counts
            return self._values_of_raw(raw[:k]), cnt[:k].copy(), int(lead)

        try:
            with ThreadPoolExecutor(max(1, workers)) as pool:
                starts = iter(range(0, E, chunk))
                pending = deque(pool.submit(load, a) for a in itertools.islice(starts, max(1, workers)))
                while pending:
                    vals, cnts, lead = pending.popleft().result()
                    nxt = next(starts, None)
                    if nxt is not None:
                        pending.append(pool.submit(load, nxt))
                    yield vals, cnts, lead
                    del vals, cnts
        finally:
            for s in srcs:
                if s is not None:
                    s.close()

    def _value_of_entry(self, j: int) -> float:
        t = self.table
        self._verify(entries=np.array([j]))
        rid = np.array([j], np.int64) if t.implicit else np.asarray(t.ids[j:j + 1], dtype=np.int64)
        return float(self._values_of_raw(self._raws_of_ids(rid))[0])

    def value_range(self) -> tuple[float, float]:
        """(min, max) of the values, from the first and last entries present (for
        stratified tables located with the block index, reading a few blocks)."""
        t = self.table
        E = t.n_entries
        if t.strata is None:
            return self._value_of_entry(0), self._value_of_entry(E - 1)
        col = self._idx()[1]
        r = self.r
        nb = col.shape[0] - 1
        total = int(col[nb, r])

        def first_block_reaching(target):  # smallest b with col[b + 1, r] >= target
            lo, hi = 0, nb - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if int(col[mid + 1, r]) >= target:
                    hi = mid
                else:
                    lo = mid + 1
            return lo

        def present_in(b):
            a, e = b * lk.BLOCK, min(E, (b + 1) * lk.BLOCK)
            self._verify(entries=np.array([a]))
            s = np.asarray(t.strata[a:e])
            return a + np.flatnonzero(((s & lk.FIRST) != 0) & ((s & lk.STRATUM) <= r))

        lo_b, hi_b = first_block_reaching(1), first_block_reaching(total)
        lo_e, hi_e = present_in(lo_b), present_in(hi_b)
        if not (lo_e.size and hi_e.size):
            raise self._corrupt("the block index does not fit the strata")
        return self._value_of_entry(int(lo_e[0])), self._value_of_entry(int(hi_e[-1]))


_EMPTY_U8 = np.zeros(0, np.uint8)
_EMPTY_I64 = np.zeros(0, np.int64)


def _buffer(n: int, dtype, shift: int) -> np.ndarray:
    """An empty array starting ``shift`` elements into its allocation, so that buffers
    written in the same loop do not share their addresses modulo 4 KiB (4K aliasing makes
    such loops several times slower)."""
    return np.empty(n + shift, dtype)[shift:]


class _Source:
    """Reads ranges of one table array: plain file reads for a store's memory map (so a
    pass over the table neither faults pages in one by one under MADV_RANDOM nor keeps
    them resident), slices otherwise."""

    def __init__(self, arr):
        self.arr = arr
        self.fd = None
        if isinstance(arr, np.memmap) and getattr(arr, "filename", None) and arr.ndim == 1 \
                and arr.flags.c_contiguous:
            self.fd = os.open(arr.filename, os.O_RDONLY)
            self.offset = int(arr.offset)
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(self.fd, self.offset, arr.nbytes, os.POSIX_FADV_SEQUENTIAL)

    def read(self, a: int, b: int) -> np.ndarray:
        if self.fd is None:
            return np.asarray(self.arr[a:b])
        dt = self.arr.dtype
        out = np.empty(b - a, dt)
        buf = memoryview(out).cast("B")
        pos, off = 0, self.offset + a * dt.itemsize
        while pos < len(buf):
            got = os.preadv(self.fd, [buf[pos:]], off + pos)
            if got <= 0:
                raise OSError(f"{self.arr.filename}: short read")
            pos += got
        return out

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
