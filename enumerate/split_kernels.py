"""Numba kernels of the split (meet-in-the-middle) enumerator.

Raw values are ``A[p] + Bs[c, j]`` with ``c = state[p]`` and ``Bs`` the suffix raw values
sorted per state. For a value bucket [lo, hi) every prefix contributes one contiguous
range of sorted suffixes; kernels find those ranges by binary search on the computed
float sums (float addition is monotone, so the ranges are exact for the sums as
computed), emit (raw, run id) pairs, and reduce sorted pairs to table entries.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`; tests/test_interpreted.py).
INTERPRETABLE = ("count_between", "fill_between", "gather_items", "pack_sort_keys", "unpack_order", "settle",
                 "popcount_ids", "grade_counts_ids", "key_of_id", "exact_keys", "reduce_sorted", "smallest_gap")


@nb.njit(cache=True, inline="always")
def _first_at_least(a, row, x):
    """Smallest j with a + row[j] >= x (len(row) if none)."""
    lo, hi = 0, row.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a + row[mid] >= x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@nb.njit(cache=True)
def count_between(A, state, Bs, lo, hi):
    """Number of runs whose raw value lies in [lo, hi)."""
    total = 0
    for p in range(A.shape[0]):
        row = Bs[state[p]]
        total += _first_at_least(A[p], row, hi) - _first_at_least(A[p], row, lo)
    return total


@nb.njit(cache=True)
def fill_between(A, state, pstrat, pcount, pmin, Bs, Bstrat, Bcount, Bmin, S, lo, hi, out):
    """Emit one item per (prefix group, suffix group) whose raw value lies in [lo, hi)
    into the record array ``out`` (:data:`irscale.enumerate.split.ITEM`: raw value,
    smallest run id, number of runs, stratum). Returns the number of items."""
    m = 0
    for p in range(A.shape[0]):
        c = state[p]
        row = Bs[c]
        j0 = _first_at_least(A[p], row, lo)
        j1 = _first_at_least(A[p], row, hi)
        a = A[p]
        base = pmin[p] * S
        for j in range(j0, j1):
            item = out[m]
            item.raw = a + row[j]
            item.id = base + Bmin[c, j]
            item.count = pcount[p] * Bcount[c, j]
            item.stratum = pstrat[p] + Bstrat[c, j]
            m += 1
    return m


@nb.njit(cache=True)
def gather_items(order, items, raw, ids, counts, strata):
    """Unpack the records ``items[order]`` into four arrays (one read of one record per
    item: a cache line, where four arrays gathered one by one would take four)."""
    for i in range(order.shape[0]):
        item = items[order[i]]
        raw[i] = item.raw
        ids[i] = item.id
        counts[i] = item.count
        strata[i] = item.stratum


@nb.njit(cache=True)
def pack_sort_keys(bits, low, shift, index_bits, out):
    """``out[i]`` = ((``bits[i]``, the bits of a float64, without the sign) - low) >>
    shift, shifted left by ``index_bits``, or i: one sortable uint64 per item, magnitude
    first (see :func:`irscale.enumerate.split.sorted_items`). ``bits`` may be strided
    (a field of records)."""
    magnitude = np.uint64(0x7FFFFFFFFFFFFFFF)
    sh = np.uint64(shift)
    ib = np.uint64(index_bits)
    for i in range(bits.shape[0]):
        out[i] = (((bits[i] & magnitude) - low) >> sh) << ib | np.uint64(i)


@nb.njit(cache=True)
def unpack_order(packed, index_bits, reverse, out):
    """The item indexes in the low ``index_bits`` bits of ``packed`` (in reverse order
    when ``reverse``)."""
    mask = (np.uint64(1) << np.uint64(index_bits)) - np.uint64(1)
    m = packed.shape[0]
    for i in range(m):
        out[m - 1 - i if reverse else i] = np.int64(packed[i] & mask)


@nb.njit(cache=True)
def settle(raw, ids, counts, strata, max_moves):
    """Insertion sort of items by ``raw``, in place, moving ``ids``, ``counts`` and
    ``strata`` alongside: linear in the size plus the moves needed, for items already
    nearly sorted. Gives up after ``max_moves`` moves and returns False (the arrays then
    still hold the same items, partly sorted); True when sorted."""
    moves = 0
    for x in range(1, raw.shape[0]):
        v = raw[x]
        if raw[x - 1] <= v:
            continue
        i, c, st = ids[x], counts[x], strata[x]
        y = x - 1
        while y >= 0 and raw[y] > v:
            raw[y + 1] = raw[y]
            ids[y + 1] = ids[y]
            counts[y + 1] = counts[y]
            strata[y + 1] = strata[y]
            y -= 1
            moves += 1
        raw[y + 1] = v
        ids[y + 1] = i
        counts[y + 1] = c
        strata[y + 1] = st
        if moves > max_moves:
            return False
    return True


@nb.njit(cache=True)
def popcount_ids(ids, levels, n):
    """Number of nonzero base-``levels`` digits of each run id (the stratum)."""
    out = np.empty(ids.shape[0], dtype=np.uint8)
    for i in range(ids.shape[0]):
        v = ids[i]
        c = 0
        for _ in range(n):
            if v % levels != 0:
                c += 1
            v //= levels
        out[i] = c
    return out


@nb.njit(cache=True)
def grade_counts_ids(ids, levels, n, grades):
    """Number of base-``levels`` digits equal to g = 1..grades of each run id, shape
    (len(ids), grades) (the per-grade counts of graded runs)."""
    out = np.zeros((ids.shape[0], grades), dtype=np.int64)
    for i in range(ids.shape[0]):
        v = ids[i]
        for _ in range(n):
            d = v % levels
            if d != 0:
                out[i, d - 1] += 1
            v //= levels
    return out


@nb.njit(cache=True)
def key_of_id(rid, KA, KB, state, S, out):
    """Exact multi-word key KA[p] + KB[state[p], s] of run ``rid`` into ``out`` (most
    significant word first), adding word by word with carries."""
    p = rid // S
    s = rid - p * S
    c = state[p]
    carry = np.uint64(0)
    for w in range(KA.shape[1] - 1, -1, -1):
        a = KA[p, w]
        t = a + KB[c, s, w]
        c1 = np.uint64(1) if t < a else np.uint64(0)
        t2 = t + carry
        c2 = np.uint64(1) if t2 < t else np.uint64(0)
        out[w] = t2
        carry = c1 + c2


@nb.njit(cache=True)
def exact_keys(ids, KA, KB, state, S):
    """Exact multi-word keys of runs given by id (see :func:`key_of_id`)."""
    out = np.empty((ids.shape[0], KA.shape[1]), dtype=np.uint64)
    for i in range(ids.shape[0]):
        key_of_id(np.int64(ids[i]), KA, KB, state, S, out[i])
    return out


@nb.njit(cache=True, inline="always")
def _key_less(keys, a, b):
    for w in range(keys.shape[1]):
        if keys[a, w] != keys[b, w]:
            return keys[a, w] < keys[b, w]
    return False


@nb.njit(cache=True, inline="always")
def _key_equal(keys, a, b):
    for w in range(keys.shape[1]):
        if keys[a, w] != keys[b, w]:
            return False
    return True


@nb.njit(cache=True, inline="always")
def _one_key(keys, a, b):
    """Whether the items a..b-1 all have the same exact key."""
    for t in range(a + 1, b):
        if not _key_equal(keys, a, t):
            return False
    return True


@nb.njit(cache=True)
def _put_in_order(buf, a, b, ids, counts, strata, keys):
    """Reorder the items a..b-1 (ids, counts, strata, keys) as ``buf[a:b]`` lists them."""
    n = b - a
    t_ids = np.empty(n, dtype=ids.dtype)
    t_counts = np.empty(n, dtype=counts.dtype)
    t_strata = np.empty(n, dtype=strata.dtype)
    t_keys = np.empty((n, keys.shape[1]), dtype=keys.dtype)
    for t in range(n):
        k = buf[a + t]
        t_ids[t] = ids[k]
        t_counts[t] = counts[k]
        t_strata[t] = strata[k]
        for w in range(keys.shape[1]):
            t_keys[t, w] = keys[k, w]
    for t in range(n):
        ids[a + t] = t_ids[t]
        counts[a + t] = t_counts[t]
        strata[a + t] = t_strata[t]
        for w in range(keys.shape[1]):
            keys[a + t, w] = t_keys[t, w]


@nb.njit(cache=True)
def _sort_by_key(buf, a, b, keys):
    """Sort buf[a:b] by exact key: insertion sort for short clusters, argsort otherwise."""
    if keys.shape[1] == 1 and b - a > 16:
        sub = np.empty(b - a, dtype=np.uint64)
        for t in range(a, b):
            sub[t - a] = keys[buf[t], 0]
        order = np.argsort(sub)
        tmp = buf[a:b].copy()
        for t in range(b - a):
            buf[a + t] = tmp[order[t]]
        return
    for x in range(a + 1, b):
        v = buf[x]
        y = x - 1
        while y >= a and _key_less(keys, v, buf[y]):
            buf[y + 1] = buf[y]
            y -= 1
        buf[y + 1] = v


@nb.njit(cache=True, inline="always")
def _emit_value(a, b, ids, counts, out_ids, out_counts, out_strata, out_first, e):
    """Emit the entry of one distinct value (items a..b-1, unstratified): the smallest
    run id and the number of runs."""
    bestid = ids[a]
    total = counts[a]
    for i in range(a + 1, b):
        if ids[i] < bestid:
            bestid = ids[i]
        total += counts[i]
    out_ids[e] = bestid
    out_counts[e] = total
    out_strata[e] = 0
    out_first[e] = True
    return e + 1


@nb.njit(cache=True, inline="always")
def _emit_strata(a, b, ids, counts, strata, cnt, best, out_ids, out_counts, out_strata, out_first, e):
    """Emit the entries of one distinct value (items a..b-1, stratified): one per stratum
    present (ascending), each with the smallest run id and the number of runs.
    ``cnt``/``best`` are scratch arrays of length N + 1, left zeroed."""
    lo_st = np.int64(cnt.shape[0])
    hi_st = np.int64(-1)
    for i in range(a, b):
        st = np.int64(strata[i])
        if cnt[st] == 0 or ids[i] < best[st]:
            best[st] = ids[i]
        cnt[st] += counts[i]
        if st < lo_st:
            lo_st = st
        if st > hi_st:
            hi_st = st
    first = True
    for st in range(lo_st, hi_st + 1):
        if cnt[st] > 0:
            out_ids[e] = best[st]
            out_counts[e] = cnt[st]
            out_strata[e] = st
            out_first[e] = first
            first = False
            e += 1
            cnt[st] = 0
    return e


@nb.njit(cache=True)
def reduce_sorted(raw, ids, counts, strata, keys, exact, two_bound, stratified, nstrata,
                  out_ids, out_counts, out_strata, out_first, flagged):
    """Reduce items (raw, smallest id, count, stratum) sorted by raw to table entries.

    Exact raws: a distinct value is a run of equal raws. Otherwise clusters (chains of
    neighbours closer than ``two_bound``) are split into distinct values by exact key
    (sorted lexicographically); a cluster holding several distinct keys is recorded in
    ``flagged`` as (first entry, end entry) when key order may differ from value order.
    ``keys`` are read for the items of clusters only (other rows may hold anything); the
    items of a cluster are reordered by key in place (ids, counts, strata, keys).
    Returns (number of entries, number of flagged clusters, smallest raw gap between
    neighbouring clusters, first entry of the cluster before that gap, first entry of
    the cluster after it); the entries are -1 when there is no gap (one cluster at
    most). For exact raws a cluster is a distinct value, and its first entry holds its
    representative (smallest run id of its lowest stratum).
    """
    m = raw.shape[0]
    buf = np.empty(0 if exact else m, dtype=np.int64)     # items of a cluster, sorted by key
    cnt = np.zeros(nstrata, dtype=np.int64)
    best = np.zeros(nstrata, dtype=np.int64)
    e = 0
    nflag = 0
    min_gap = np.inf
    gap_lo = -1
    gap_hi = -1
    i = 0
    while i < m:
        e_start = e
        new_min = False
        j = i + 1
        if exact:
            while j < m and raw[j] == raw[i]:
                j += 1
        else:
            while j < m and raw[j] - raw[j - 1] <= two_bound:
                j += 1
        if j < m:
            g = raw[j] - raw[j - 1]
            if g < min_gap:
                min_gap = g
                new_min = True
        one_value = exact or j - i == 1 or _one_key(keys, i, j)      # most clusters: equal raws, one key
        if one_value and stratified:
            e = _emit_strata(i, j, ids, counts, strata, cnt, best, out_ids, out_counts, out_strata, out_first, e)
        elif one_value:
            e = _emit_value(i, j, ids, counts, out_ids, out_counts, out_strata, out_first, e)
        else:
            for t in range(i, j):
                buf[t] = t
            _sort_by_key(buf, i, j, keys)
            _put_in_order(buf, i, j, ids, counts, strata, keys)
            e0 = e
            ngroups = 0
            a = i
            while a < j:
                b = a + 1
                while b < j and _key_equal(keys, a, b):
                    b += 1
                if stratified:
                    e = _emit_strata(a, b, ids, counts, strata, cnt, best, out_ids, out_counts, out_strata,
                                     out_first, e)
                else:
                    e = _emit_value(a, b, ids, counts, out_ids, out_counts, out_strata, out_first, e)
                ngroups += 1
                a = b
            if ngroups > 1:
                flagged[nflag, 0] = e0
                flagged[nflag, 1] = e
                nflag += 1
        if new_min:
            gap_lo = e_start
            gap_hi = e
        i = j
    return e, nflag, min_gap, gap_lo, gap_hi


@nb.njit(cache=True)
def smallest_gap(reps, A, state, B, S):
    """(smallest raw difference between consecutive representatives, its index)."""
    best = np.inf
    at = 0
    p = reps[0] // S
    prev = A[p] + B[state[p], reps[0] - p * S]
    for i in range(1, reps.shape[0]):
        p = reps[i] // S
        cur = A[p] + B[state[p], reps[i] - p * S]
        if cur - prev < best:
            best = cur - prev
            at = i - 1
        prev = cur
    return best, at
