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


@nb.njit(cache=True)
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
def fill_between(A, state, pstrat, pcount, pmin, Bs, Bstrat, Bcount, Bmin, S, lo, hi,
                 out_raw, out_id, out_count, out_strat):
    """Emit one item per (prefix group, suffix group) whose raw value lies in [lo, hi):
    raw value, smallest run id, number of runs, stratum. Returns the number of items."""
    m = 0
    for p in range(A.shape[0]):
        c = state[p]
        row = Bs[c]
        j0 = _first_at_least(A[p], row, lo)
        j1 = _first_at_least(A[p], row, hi)
        a = A[p]
        base = pmin[p] * S
        for j in range(j0, j1):
            out_raw[m] = a + row[j]
            out_id[m] = base + Bmin[c, j]
            out_count[m] = pcount[p] * Bcount[c, j]
            out_strat[m] = pstrat[p] + Bstrat[c, j]
            m += 1
    return m


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
def exact_keys(ids, KA, KB, state, S):
    """Exact multi-word keys KA[p] + KB[state[p], s] (most significant word first)."""
    m = ids.shape[0]
    W = KA.shape[1]
    out = np.empty((m, W), dtype=np.uint64)
    for i in range(m):
        p = ids[i] // S
        s = ids[i] % S
        c = state[p]
        carry = np.uint64(0)
        for w in range(W - 1, -1, -1):
            a = KA[p, w]
            b = KB[c, s, w]
            t = a + b
            c1 = np.uint64(1) if t < a else np.uint64(0)
            t2 = t + carry
            c2 = np.uint64(1) if t2 < t else np.uint64(0)
            out[i, w] = t2
            carry = c1 + c2
    return out


@nb.njit(cache=True)
def _key_less(keys, a, b):
    for w in range(keys.shape[1]):
        if keys[a, w] != keys[b, w]:
            return keys[a, w] < keys[b, w]
    return False


@nb.njit(cache=True)
def _key_equal(keys, a, b):
    for w in range(keys.shape[1]):
        if keys[a, w] != keys[b, w]:
            return False
    return True


@nb.njit(cache=True)
def _emit_group(members, ids, counts, strata, stratified, nstrata, out_ids, out_counts, out_strata,
                out_first, e):
    """Emit the entries of one distinct value: one per stratum present (ascending), each
    with the smallest run id and the number of runs."""
    if not stratified:
        best = ids[members[0]]
        total = 0
        for t in range(members.shape[0]):
            if ids[members[t]] < best:
                best = ids[members[t]]
            total += counts[members[t]]
        out_ids[e] = best
        out_counts[e] = total
        out_strata[e] = 0
        out_first[e] = True
        return e + 1
    cnt = np.zeros(nstrata, dtype=np.int64)
    best = np.zeros(nstrata, dtype=np.int64)
    for t in range(members.shape[0]):
        i = members[t]
        st = strata[i]
        if cnt[st] == 0 or ids[i] < best[st]:
            best[st] = ids[i]
        cnt[st] += counts[i]
    first = True
    for st in range(nstrata):
        if cnt[st] > 0:
            out_ids[e] = best[st]
            out_counts[e] = cnt[st]
            out_strata[e] = st
            out_first[e] = first
            first = False
            e += 1
    return e


@nb.njit(cache=True)
def _sort_by_key(idx, keys):
    """Sort indices by exact key: argsort for one-word keys, insertion sort otherwise."""
    if keys.shape[1] == 1:
        sub = np.empty(idx.shape[0], dtype=np.uint64)
        for t in range(idx.shape[0]):
            sub[t] = keys[idx[t], 0]
        order = np.argsort(sub)
        return idx[order]
    for a in range(1, idx.shape[0]):
        v = idx[a]
        b = a - 1
        while b >= 0 and _key_less(keys, v, idx[b]):
            idx[b + 1] = idx[b]
            b -= 1
        idx[b + 1] = v
    return idx


@nb.njit(cache=True)
def reduce_sorted(raw, ids, counts, strata, keys, exact, two_bound, stratified, nstrata,
                  out_ids, out_counts, out_strata, out_first, flagged):
    """Reduce items (raw, smallest id, count, stratum) sorted by raw to table entries.

    Exact raws: a distinct value is a run of equal raws. Otherwise clusters (chains of
    neighbours closer than ``two_bound``) are split into distinct values by exact key
    (sorted lexicographically); a cluster holding several distinct keys is recorded in
    ``flagged`` as (first entry, end entry) when key order may differ from value order.
    Returns (number of entries, number of flagged clusters, smallest raw gap between
    neighbouring clusters).
    """
    m = raw.shape[0]
    e = 0
    nflag = 0
    min_gap = np.inf
    i = 0
    while i < m:
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
        if exact or j - i == 1:
            e = _emit_group(np.arange(i, j), ids, counts, strata, stratified, nstrata,
                            out_ids, out_counts, out_strata, out_first, e)
        else:
            idx = _sort_by_key(np.arange(i, j), keys)
            e0 = e
            ngroups = 0
            a = 0
            while a < idx.shape[0]:
                b = a + 1
                while b < idx.shape[0] and _key_equal(keys, idx[a], idx[b]):
                    b += 1
                e = _emit_group(idx[a:b], ids, counts, strata, stratified, nstrata,
                                out_ids, out_counts, out_strata, out_first, e)
                ngroups += 1
                a = b
            if ngroups > 1:
                flagged[nflag, 0] = e0
                flagged[nflag, 1] = e
                nflag += 1
        i = j
    return e, nflag, min_gap
