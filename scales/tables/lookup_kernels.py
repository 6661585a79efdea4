"""Numba kernels of table lookups (value -> rank, run id -> rank).

Tables are arrays of *entries* in increasing value order; an entry is a (distinct value,
stratum) pair represented by its smallest run id. For RB-dependent measures ``strata``
holds per entry the stratum (bits 0-6) and, in bit 7, whether the entry starts a new
distinct value (:data:`FIRST`); tables without strata have one entry per value. Values are recomputed from run ids with
the split form ``raw = A[p] + B[state[p], s]`` (:mod:`irscale.scales.measures.split_forms`), so a table
stores 4 to 6 bytes per entry and is never read whole: the arrays may be memory maps.

A block index (the raw value of every ``RAW_BLOCK``-th entry, and every ``BLOCK``
entries, per table recall base r, the number of distinct values present before the
block) turns a lookup into a binary search in the index plus a few probes of the table. Raw values are sorted up to
inversions smaller than twice the error bound (``two_bound``), which the searches allow
for. Status codes: 0 found, 1 not a value, 2 ambiguous, 3 infeasible run, 4 corrupt table.

The arrays may come from a damaged file, so no kernel trusts a stored value as an index:
a run id outside the run space gives the raw value NaN (:func:`_raw`), which the lookups
answer with status :data:`CORRUPT` (the Python side raises
:class:`~irscale.errors.CorruptStoreError` naming the table); a stratum byte beyond N is
reported by the index builders (first cell -1); ranks of a rank that is not in the
table's index are -1 / NaN. Positions ``0 <= j < n_entries`` are safe because readers
check every dataset's shape against ``n_entries`` before a kernel sees it.
:func:`check_index` and :func:`scan_entries` are the validations of a stored table.

Block sums. Tables of format 4 store a sum per block of :data:`BLOCK` entries over their
ids, counts and strata (:func:`add_block_sums`), so that the entries a lookup reads can
be verified without reading the table. The lookups mark every block whose entries they
read in ``seen`` (one byte per block; an empty array marks nothing), and the caller
verifies the marked blocks (:func:`check_blocks`) before it returns the answer.
"""
from __future__ import annotations

import numba as nb
import numpy as np

from irscale.enumerate.split_kernels import key_of_id

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`; tests/test_interpreted.py).
INTERPRETABLE = ("build_index", "rank_raw", "rank_ids", "build_run_index", "check_index", "scan_entries",
                 "add_block_sums", "check_blocks")

BLOCK = 1024
RAW_BLOCK = 64
FIRST = 0x80      # bit of a strata byte: the entry starts a new distinct value
STRATUM = 0x7F
#: Status of a lookup that met a stored value that cannot be right (a run id outside the
#: run space): the table is corrupt.
CORRUPT = 4
#: log2(BLOCK): block of an entry = entry >> BLOCK_SHIFT.
BLOCK_SHIFT = 10
#: ``seen`` of lookups that mark nothing.
NO_SEEN = np.zeros(0, np.uint8)
#: Odd multiplier of the block sums (2^64 / golden ratio).
_SUM_K = np.uint64(0x9E3779B97F4A7C15)


@nb.njit(cache=True, inline="always")
def _mark(seen, j):
    if seen.shape[0] > 0:
        seen[j >> BLOCK_SHIFT] = 1


@nb.njit(cache=True, inline="always")
def _rid(ids, implicit, i):
    return np.int64(i) if implicit else np.int64(ids[i])


@nb.njit(cache=True, inline="always")
def _raw(ids, implicit, i, A, state, B, S):
    """Raw value of entry i; NaN when its stored run id lies outside the run space (a
    corrupt table: no raw value of a sound table is NaN)."""
    rid = _rid(ids, implicit, i)
    if rid < 0:
        return np.nan
    p = rid // S
    if p >= A.shape[0]:
        return np.nan
    return A[p] + B[state[p], rid - p * S]


@nb.njit(cache=True, nogil=True)
def build_index(ids, implicit, n_entries, strata, A, state, B, S, nr):
    """(block_raw, block_cum): raw value of every RAW_BLOCK-th entry; distinct values
    present per table recall base (column r = rb r; one column for tables without strata)
    before each BLOCK of entries. A stratum byte of nr or more (a corrupt table) stops the
    count with block_cum[0, 0] = -1; run ids outside the run space give NaN raws."""
    nb_ = (n_entries + BLOCK - 1) // BLOCK
    nraw = (n_entries + RAW_BLOCK - 1) // RAW_BLOCK
    block_raw = np.empty(nraw, dtype=np.float64)
    for b in range(nraw):
        block_raw[b] = _raw(ids, implicit, b * RAW_BLOCK, A, state, B, S)
    block_cum = np.zeros((nb_ + 1, nr), dtype=np.int64)
    has_strata = strata.shape[0] > 0
    hist = np.zeros(nr, dtype=np.int64)
    for b in range(nb_):
        hist[:] = 0
        end = min(n_entries, (b + 1) * BLOCK)
        if not has_strata:
            hist[0] = end - b * BLOCK
        else:
            for j in range(b * BLOCK, end):
                if strata[j] & FIRST:
                    s = strata[j] & STRATUM
                    if s >= nr:
                        block_cum[0, 0] = -1
                        return block_raw, block_cum
                    hist[s] += 1
        run = 0
        for r in range(nr):
            run += hist[r]
            block_cum[b + 1, r] = block_cum[b, r] + run
    return block_raw, block_cum


@nb.njit(cache=True)
def _lower_index(x, block_raw, lo, hi):
    """First index position in [lo, hi) with block_raw >= x."""
    while lo < hi:
        mid = (lo + hi) // 2
        if block_raw[mid] >= x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@nb.njit(cache=True)
def _lower_in(x, b, ids, implicit, n_entries, A, state, B, S, seen):
    """Binary search of the table around index position b (one RAW_BLOCK either side)."""
    lo = max(b - 2, 0) * RAW_BLOCK
    hi = min(n_entries, (b + 1) * RAW_BLOCK)
    while lo < hi:
        mid = (lo + hi) // 2
        _mark(seen, mid)
        if _raw(ids, implicit, mid, A, state, B, S) >= x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@nb.njit(cache=True)
def _lower_from(x, hint, ids, implicit, n_entries, A, state, B, S, block_raw, seen):
    """Approximate first entry with raw >= x (exact when raws are sorted), galloping
    forward in the index from ``hint`` (the index position found for a smaller query), so
    sorted batches stay in cache. Returns (entry, index position)."""
    nraw = block_raw.shape[0]
    if hint <= 0 or hint >= nraw or block_raw[hint] >= x:
        b = _lower_index(x, block_raw, 0, nraw)
    else:
        lo, step = hint, 1
        while lo + step < nraw and block_raw[lo + step] < x:
            lo += step
            step *= 2
        b = _lower_index(x, block_raw, lo + 1, min(lo + step, nraw))
    return _lower_in(x, b, ids, implicit, n_entries, A, state, B, S, seen), b


@nb.njit(cache=True)
def _value_start(strata, j, seen):
    if strata.shape[0] == 0:
        return j
    while j > 0 and not (strata[j] & FIRST):
        j -= 1
        _mark(seen, j)
    return j


@nb.njit(cache=True)
def _present(strata, j, r):
    """Entry j starts a value present in the table of recall base r."""
    if strata.shape[0] == 0:
        return True
    v = strata[j]
    return (v & FIRST) != 0 and (v & STRATUM) <= r


@nb.njit(cache=True)
def _count_present(strata, lo, hi, r):
    """Values present for recall base r that start in entries lo..hi-1 (branch-free, so
    LLVM vectorises the loop)."""
    k = 0
    for t in range(lo, hi):
        v = np.int64(strata[t])
        k += (v >> 7) & np.int64((v & STRATUM) <= r)
    return k


@nb.njit(cache=True)
def _rank_of(j, r, strata, block_cum, seen):
    """1-based rank of the value starting at entry j in the table of recall base r."""
    if strata.shape[0] == 0:
        return j + 1
    _mark(seen, j)
    b = j // BLOCK
    start = b * BLOCK
    end = min((b + 1) * BLOCK, strata.shape[0])
    if j - start <= end - 1 - j:  # count from the nearer end of the block
        return block_cum[b, r] + _count_present(strata, start, j + 1, r)
    return block_cum[b + 1, r] - _count_present(strata, j + 1, end, r)


@nb.njit(cache=True)
def rank_raw(xs, tols, r, two_bound, ids, implicit, n_entries, strata, A, state, B, S,
             block_raw, block_cum, out_rank, out_status, seen):
    """Ranks of raw values: the one distinct value (present for r) within tols[i] of xs[i]
    (status 0); status 1 when none is, 2 when several are (``out_rank`` then holds the rank
    of the nearest of them, for messages). The table is scanned outward from x, up and then
    down, and a scan stops once no further entry can lie within the tolerance, or, when two
    values within it have been seen, once no further entry can be nearer than the nearest:
    a wide tolerance costs the entries up to the second value found, not the whole window.
    An entry whose run id is outside the run space gives status :data:`CORRUPT`. Blocks
    read are marked in ``seen``."""
    hint = 0
    for i in range(xs.shape[0]):
        x, tol = xs[i], tols[i]
        s, hint = _lower_from(x - two_bound, hint, ids, implicit, n_entries, A, state, B, S, block_raw, seen)
        best, nbest, bestd = -1, 0, np.inf
        corrupt = False
        for step in (1, -1):                         # upward from s, then downward from s - 1
            j = s if step == 1 else s - 1
            while 0 <= j < n_entries and not corrupt:
                _mark(seen, j)
                v = _raw(ids, implicit, j, A, state, B, S)
                if v != v:
                    corrupt = True
                    break
                ahead = step * (v - x)                   # distance beyond x in the scan's direction
                if ahead > tol + two_bound or (nbest > 1 and ahead > bestd + two_bound):
                    break
                if _present(strata, j, r):
                    d = abs(v - x)
                    if d <= tol:
                        nbest += 1
                        if d < bestd:
                            best, bestd = j, d
                j += step
        if corrupt:
            out_status[i] = CORRUPT
        elif nbest == 0:
            out_status[i] = 1
        else:
            out_status[i] = 0 if nbest == 1 else 2
            out_rank[i] = _rank_of(best, r, strata, block_cum, seen)


@nb.njit(cache=True)
def rank_ids(qids, r, exact, two_bound, ids, implicit, n_entries, strata, A, state, B, S,
             block_raw, block_cum, qkeys, KA, KB, levels, n, out_rank, out_status, seen):
    """Exact ranks of runs given by id. ``qkeys`` are the runs' exact keys (inexact raws).
    ``qids`` must lie in the run space; an entry whose run id does not gives status
    :data:`CORRUPT`. Blocks read are marked in ``seen``."""
    hint = 0
    key = np.empty(KA.shape[1], dtype=np.uint64)
    for i in range(qids.shape[0]):
        q = qids[i]
        # feasibility: number of nonzero digits <= r (strata tables only)
        if strata.shape[0] > 0:
            v = q
            c = 0
            for _ in range(n):
                if v % levels != 0:
                    c += 1
                v //= levels
            if c > r:
                out_status[i] = 3
                continue
        p = q // S
        x = A[p] + B[state[p], q - p * S]
        j, hint = _lower_from(x - two_bound, hint, ids, implicit, n_entries, A, state, B, S, block_raw, seen)
        j = max(j - 1, 0)
        found = -1
        ncand = 0
        corrupt = False
        while j < n_entries:
            _mark(seen, j)
            v = _raw(ids, implicit, j, A, state, B, S)
            if v != v:
                corrupt = True
                break
            if v > x + two_bound:
                break
            if exact:
                if v == x:
                    found = j
                    break
            elif abs(v - x) <= two_bound:
                ncand += 1
                # exact key of the entry's representative run
                key_of_id(_rid(ids, implicit, j), KA, KB, state, S, key)
                same = True
                for w in range(KA.shape[1]):
                    if key[w] != qkeys[i, w]:
                        same = False
                if same:
                    found = j
                    break
            j += 1
        if corrupt:
            out_status[i] = CORRUPT
        elif found < 0:
            out_status[i] = 1
        else:
            out_status[i] = 0
            out_rank[i] = _rank_of(_value_start(strata, found, seen), r, strata, block_cum, seen)


@nb.njit(cache=True)
def build_run_index(counts, strata, n_entries, nr):
    """Runs (with multiplicity) in the entries before each BLOCK, per table recall base
    (column r: entries of stratum <= r; one column without strata): shape (blocks + 1, nr).
    ``counts`` empty means one run per entry. A stratum byte of nr or more (a corrupt
    table) stops the count with out[0, 0] = -1."""
    nb_ = (n_entries + BLOCK - 1) // BLOCK
    out = np.zeros((nb_ + 1, nr), dtype=np.int64)
    has_counts = counts.shape[0] > 0
    has_strata = strata.shape[0] > 0
    hist = np.zeros(nr, dtype=np.int64)
    for b in range(nb_):
        hist[:] = 0
        end = min(n_entries, (b + 1) * BLOCK)
        for j in range(b * BLOCK, end):
            c = np.int64(counts[j]) if has_counts else np.int64(1)
            s = (strata[j] & STRATUM) if has_strata else 0
            if s >= nr:
                out[0, 0] = -1
                return out
            hist[s] += c
        run = 0
        for r in range(nr):
            run += hist[r]
            out[b + 1, r] = out[b, r] + run
    return out


@nb.njit(cache=True)
def _entry_of_rank(q, r, strata, block_cum, n_entries, seen):
    """First entry of the value of 1-based rank q in the table of recall base r (-1 when
    there is none: q beyond the table, or an index that does not fit the strata)."""
    if strata.shape[0] == 0:
        return q - 1 if 1 <= q <= n_entries else -1
    lo, hi = 0, block_cum.shape[0] - 1          # last block b with block_cum[b, r] < q
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if block_cum[mid, r] < q:
            lo = mid
        else:
            hi = mid - 1
    need = q - block_cum[lo, r]
    j = lo * BLOCK
    while j < n_entries:
        _mark(seen, j)
        if _present(strata, j, r):
            need -= 1
            if need == 0:
                return j
        j += 1
    return -1


@nb.njit(cache=True)
def entries_of_ranks(qs, r, strata, block_cum, n_entries, out, seen):
    """First entry of the value of each 1-based rank ``qs[i]`` in the table of recall base r
    (blocks read marked in ``seen``, the block of each entry found included)."""
    for i in range(qs.shape[0]):
        j = _entry_of_rank(qs[i], r, strata, block_cum, n_entries, seen)
        if j >= 0:
            _mark(seen, j)
        out[i] = j


@nb.njit(cache=True)
def midranks_of_ranks(qs, r, counts, strata, n_entries, block_cum, block_runs, out, seen):
    """Mid-ranks of the values of unq ranks ``qs`` in the table of recall base r: runs of
    smaller value plus (runs of this value + 1) / 2, counting feasible runs only (NaN for
    a rank the table's index does not locate: a corrupt table). Blocks read are marked in
    ``seen``."""
    has_counts = counts.shape[0] > 0
    has_strata = strata.shape[0] > 0
    col = r if has_strata else 0
    for i in range(qs.shape[0]):
        j = _entry_of_rank(qs[i], r, strata, block_cum, n_entries, seen)
        if j < 0:
            out[i] = np.nan
            continue
        _mark(seen, j)
        b = j // BLOCK
        before = block_runs[b, col]
        for t in range(b * BLOCK, j):
            if not has_strata or (strata[t] & STRATUM) <= r:
                before += np.int64(counts[t]) if has_counts else 1
        here = 0
        t = j
        while t < n_entries and (t == j or (has_strata and not (strata[t] & FIRST))):
            _mark(seen, t)
            if not has_strata or (strata[t] & STRATUM) <= r:
                here += np.int64(counts[t]) if has_counts else 1
            t += 1
        out[i] = before + (here + 1) / 2.0


@nb.njit(cache=True, nogil=True)
def present_raw(ids, implicit, start, m, strata, counts, r, A, state, B, S, out_raw, out_cnt):
    """See :func:`_present_raw`; picks shifts for S a power of two (binary runs) instead of
    64-bit divisions. Returns k = -1 when a run id lies outside the run space (a corrupt
    table)."""
    if S & (S - 1) == 0:
        sh = 0
        while (np.int64(1) << sh) < S:
            sh += 1
        return _present_raw(ids, implicit, start, m, strata, counts, r, A, state, B, S, sh, out_raw, out_cnt)
    return _present_raw(ids, implicit, start, m, strata, counts, r, A, state, B, S, -1, out_raw, out_cnt)


@nb.njit(cache=True, nogil=True)
def _present_raw(ids, implicit, start, m, strata, counts, r, A, state, B, S, sh, out_raw, out_cnt):
    """Entries ``start .. start+m-1`` of a table (chunk-local arrays ``ids``, ``strata``,
    ``counts``; ``strata``/``counts`` empty when the table has none; ``ids`` unused for an
    implicit table, whose entry i is run i).

    Writes, for every value present for table recall base ``r`` whose first entry lies in
    the chunk, the raw value of its first entry (``A[p] + B[state[p], s]``, exactly as
    :meth:`SplitForm.raw_of_ids`) to ``out_raw`` and the sum of the counts of its
    feasible entries in the chunk to ``out_cnt``. Returns ``(k, lead)``: the number of
    values written, and the feasible count of the entries before the first of them (the
    continuation of a value that started in an earlier chunk).
    """
    has_strata = strata.shape[0] > 0
    has_counts = counts.shape[0] > 0
    k = -1
    lead = np.int64(0)
    for j in range(m):
        first = True
        if has_strata:
            v = strata[j]
            if (v & STRATUM) > r:      # infeasible entry (and a value absent for r when first)
                continue
            first = (v & FIRST) != 0
        c = np.int64(counts[j]) if has_counts else np.int64(1)
        if first:
            k += 1
            rid = np.int64(start + j) if implicit else np.int64(ids[j])
            if rid < 0 or rid // S >= A.shape[0]:
                return -1, lead
            if sh >= 0:
                p = rid >> sh
                out_raw[k] = A[p] + B[state[p], rid & (S - 1)]
            else:
                p = rid // S
                out_raw[k] = A[p] + B[state[p], rid - p * S]
            out_cnt[k] = c
        elif k >= 0:
            out_cnt[k] += c
        else:
            lead += c
    return k + 1, lead


@nb.njit(cache=True)
def check_index(block_raw, block_cum, n_entries, two_bound, has_strata):
    """The first problem of a stored block index, as (code, position); (0, -1) when it is
    sound. Codes: 1 a NaN raw, 2 raws out of order by more than ``two_bound``, 3 a first
    row that is not 0, 4 a block that adds more values than it has entries, fewer than
    zero, or fewer for a recall base than for a smaller one, 5 (tables without strata) a
    block that does not add exactly its entries."""
    for i in range(block_raw.shape[0]):
        v = block_raw[i]
        if v != v:
            return 1, i
        if i > 0 and v < block_raw[i - 1] - two_bound:
            return 2, i
    nr = block_cum.shape[1]
    for r in range(nr):
        if block_cum[0, r] != 0:
            return 3, 0
    for b in range(block_cum.shape[0] - 1):
        size = min(n_entries, (b + 1) * BLOCK) - b * BLOCK
        prev = np.int64(0)
        inc = np.int64(0)
        for r in range(nr):
            inc = block_cum[b + 1, r] - block_cum[b, r]
            if inc < prev or inc > size:
                return 4, b + 1
            prev = inc
        if not has_strata and inc != size:
            return 5, b + 1
    return 0, -1


@nb.njit(cache=True)
def scan_entries(ids, implicit, n_entries, strata, counts, A, state, B, S, exact, two_bound, nr):
    """One pass over a table's entries (``strata``/``counts`` empty when the table has
    none): ``(code, position, runs, hist)`` with ``hist[s]`` the values whose smallest
    stratum is s and ``runs`` the sum of the counts; ``code`` 0 when the entries are sound,
    else the first problem at entry ``position``: 1 a run id outside the run space, 2 raw
    values out of order (a new value not above the values before it, by more than
    ``two_bound`` for inexact raws), 3 a stratum beyond N, 4 a first entry that does not
    start a value, 5 a value's entries not of one raw value or not by increasing stratum,
    6 a count of 0."""
    hist = np.zeros(nr, dtype=np.int64)
    runs = np.int64(0)
    has_strata = strata.shape[0] > 0
    has_counts = counts.shape[0] > 0
    top = -np.inf          # largest raw so far
    prev = -np.inf         # raw of the previous entry
    prev_s = -1
    for j in range(n_entries):
        v = _raw(ids, implicit, j, A, state, B, S)
        if v != v:
            return 1, j, runs, hist
        first = True
        if has_strata:
            b = strata[j]
            s = b & STRATUM
            if s >= nr:
                return 3, j, runs, hist
            first = (b & FIRST) != 0
            if j == 0 and not first:
                return 4, j, runs, hist
            if first:
                hist[s] += 1
            elif s <= prev_s or (v != prev if exact else abs(v - prev) > two_bound):
                return 5, j, runs, hist
            prev_s = s
        if first and j > 0 and (v <= top if exact else v < top - two_bound):
            return 2, j, runs, hist
        if has_counts:
            c = np.int64(counts[j])
            if c <= 0:
                return 6, j, runs, hist
            runs += c
        else:
            runs += 1
        prev = v
        top = max(top, v)
    return 0, -1, runs, hist


@nb.njit(cache=True, inline="always")
def _sum_weight(pos, d):
    """Odd weight of position ``pos`` (0..BLOCK-1) of dataset ``d`` (0 ids, 1 counts, 2
    strata) in a block sum: a change of any one element changes the sum."""
    return (np.uint64(2) * (np.uint64(pos) * np.uint64(3) + np.uint64(d)) + np.uint64(1)) * _SUM_K


@nb.njit(cache=True, nogil=True)
def add_block_sums(sums, arr, offset, d):
    """Add the elements ``arr`` of dataset ``d`` (0 ids, 1 counts, 2 strata), entries
    ``offset ..``, to their blocks' sums (uint64, wrapping): sum over the block's entries
    and datasets of value * weight(position in block, dataset)."""
    for i in range(arr.shape[0]):
        g = offset + i
        sums[g >> BLOCK_SHIFT] += np.uint64(arr[i]) * _sum_weight(g & (BLOCK - 1), d)


@nb.njit(cache=True)
def _block_sum(k, ids, counts, strata, n_entries):
    a = k * BLOCK
    e = min(n_entries, a + BLOCK)
    total = np.uint64(0)
    for g in range(a, e):
        total += np.uint64(ids[g]) * _sum_weight(g - a, 0)
    if counts.shape[0] > 0:
        for g in range(a, e):
            total += np.uint64(counts[g]) * _sum_weight(g - a, 1)
    if strata.shape[0] > 0:
        for g in range(a, e):
            total += np.uint64(strata[g]) * _sum_weight(g - a, 2)
    return total


@nb.njit(cache=True, nogil=True)
def check_blocks(blocks, ids, counts, strata, n_entries, sums, verified):
    """Verify the blocks ``blocks`` not yet ``verified`` against their stored ``sums``:
    the first block that is not sound, or -1 (the caller marks them verified)."""
    for i in range(blocks.shape[0]):
        k = blocks[i]
        if verified[k]:
            continue
        if _block_sum(k, ids, counts, strata, n_entries) != sums[k]:
            return k
    return -1
