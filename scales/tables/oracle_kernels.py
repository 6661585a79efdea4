"""Numba kernels of the rank oracles: weighted counts of pairs (a, b) with a + b below a bound.

A rank oracle (:mod:`irscale.scales.tables.oracles`) holds two *sides*, A and B, each a list
of entries with a float64 raw value ``s``, a count ``c`` (relevant documents) and an integer
weight ``w``; every distinct value (or every run, with run weights) of the measure is one
pair (a, b) with ``c_a + c_b <= r`` (``r`` the table recall base; 0 for measures without
one, whose counts are all 0). The kernels answer, for bounds ``y``:

    count(y) = sum of w_a * w_b over pairs with c_a + c_b <= r and s_b < fl(y - s_a)

(``<=`` when ``strict`` is false). The comparison is always made in exactly this form, so
that :func:`count_many` and :func:`scan_many` (which also lists the pairs counted at ``hi``
but not at ``lo``: the *band*) partition the pairs consistently whatever the rounding; the
callers choose bounds wide enough for the float error of the sums and decide the pairs of
the band exactly.

Side A: entries sorted by ``s`` (``sA``, ``cA``, ``wA``) and, per recall base, the prefix
sums ``fullA[i] = sum_{j < i} w_j * W_B(r - c_j)`` of the weight of whole B lists.
Side B: for every threshold ``t = 0..T`` the entries with ``c <= t`` sorted by ``s``,
concatenated (list t at ``Boff[t]:Boff[t + 1]``): ``Bx`` (values), ``Bpos`` (their index
in B's own entry list), ``Bcw`` (the weight of the entries before each in its list; empty
when every weight is 1, the weight before entry k then being k), ``WB`` (each list's
weight) and a bucket index (``Bidx`` from ``Bidx_off[t]``: the first entry of each bucket;
``Bmin``, ``Binv``: the list's first value and buckets per unit of value) that turns each
search into a few probes. Pairs with ``c_a + c_b <= r`` use the list of threshold
``min(r - c_a, T)``.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`; tests/test_interpreted.py).
INTERPRETABLE = ("count_serial", "scan_serial")

#: Queries a thread of :func:`scan_many` takes together.
CHUNK = 64


@nb.njit(cache=True, inline="always")
def _bucket(Bidx, ib, nb_, n, bmin, binv, q):
    """A start for the search of q in a list of n entries: the first entry of q's bucket."""
    g = (q - bmin) * binv
    if not g >= 0.0:            # also NaN
        return 0
    if g >= nb_:
        return n
    return Bidx[ib + int(g)]


@nb.njit(cache=True, inline="always")
def _probe(Bx, lo, n, pos, q, strict):
    """From a start ``pos``, the number of entries of the sorted list ``Bx[lo:lo + n]``
    that are < q (``strict``) or <= q."""
    if strict:
        while pos > 0 and Bx[lo + pos - 1] >= q:
            pos -= 1
        while pos < n and Bx[lo + pos] < q:
            pos += 1
    else:
        while pos > 0 and Bx[lo + pos - 1] > q:
            pos -= 1
        while pos < n and Bx[lo + pos] <= q:
            pos += 1
    return pos


@nb.njit(cache=True, inline="always")
def _weight_before(Bcw, lo, n, k, WB, t):
    """Weight of the first ``k`` entries of list t."""
    if Bcw.shape[0] == 0:
        return np.int64(k)
    if k < n:
        return Bcw[lo + k]
    return WB[t]


@nb.njit(cache=True)
def _prefix_end(sA, y, v, strict):
    """First index i such that NOT (v < fl(y - sA[i])) (strict) / NOT (v <= fl(y - sA[i])).
    fl(y - sA[i]) does not increase with i, so the predicate holds on a prefix."""
    lo, hi = 0, sA.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        d = y - sA[mid]
        ok = (v < d) if strict else (v <= d)
        if ok:
            lo = mid + 1
        else:
            hi = mid
    return lo


@nb.njit(cache=True)
def count_one(y, strict, r, sA, cA, wA, fullA, Bx, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, bmin_all,
              bmax_all):
    """count(y) of the module docstring (int64)."""
    if sA.shape[0] == 0 or Bx.shape[0] == 0:
        return 0
    i_full = _prefix_end(sA, y, bmax_all, strict)   # A entries whose whole B list counts
    i_end = _prefix_end(sA, y, bmin_all, strict)    # A entries some of whose B entries count
    total = fullA[i_full]
    for i in range(i_full, i_end):
        ca = cA[i]
        if ca > r:
            continue
        t = min(r - ca, T)
        lo = Boff[t]
        n = Boff[t + 1] - lo
        d = y - sA[i]
        k = _probe(Bx, lo, n, _bucket(Bidx, Bidx_off[t], Bidx_off[t + 1] - Bidx_off[t] - 1, n, Bmin[t], Binv[t], d),
                   d, strict)
        total += wA[i] * _weight_before(Bcw, lo, n, k, WB, t)
    return total


@nb.njit(cache=True, parallel=True)
def count_many(ys, strict, r, sA, cA, wA, fullA, Bx, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, bmin_all,
               bmax_all, out):
    """:func:`count_one` of every bound of ``ys`` into ``out`` (int64), in parallel."""
    for q in nb.prange(ys.shape[0]):
        out[q] = count_one(ys[q], strict, r, sA, cA, wA, fullA, Bx, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T,
                           bmin_all, bmax_all)


@nb.njit(cache=True)
def count_serial(ys, strict, r, sA, cA, wA, fullA, Bx, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, bmin_all,
                 bmax_all, out):
    """:func:`count_many` in one thread (a few bounds: no parallel start-up)."""
    for q in range(ys.shape[0]):
        out[q] = count_one(ys[q], strict, r, sA, cA, wA, fullA, Bx, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T,
                           bmin_all, bmax_all)


@nb.njit(cache=True)
def _scan_chunk(ch, los, his, r, sA, cA, wA, fullA, Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, bmin_all,
                bmax_all, cap, counts, sizes, out_a, out_b):
    """The queries of chunk ``ch`` (see :func:`scan_many`)."""
    nq = los.shape[0]
    q0 = ch * CHUNK
    q1 = min(nq, q0 + CHUNK)
    m = q1 - q0
    i0 = np.zeros(m, np.int64)
    i1 = np.zeros(m, np.int64)
    start = np.zeros(m, np.int64)
    first, last = sA.shape[0], 0
    for j in range(m):
        q = q0 + j
        sizes[q] = 0
        counts[q] = 0
        if sA.shape[0] == 0 or Bx.shape[0] == 0:
            continue
        i0[j] = _prefix_end(sA, los[q], bmax_all, True)     # before: every pair counted at lo
        i1[j] = _prefix_end(sA, his[q], bmin_all, False)    # from: no pair counted at hi
        counts[q] = fullA[i0[j]]
        first = min(first, i0[j])
        last = max(last, i1[j])
    for i in range(first, last):
        ca = cA[i]
        if ca > r:
            continue
        t = min(r - ca, T)
        lo = Boff[t]
        n = Boff[t + 1] - lo
        ib = Bidx_off[t]
        nb_ = Bidx_off[t + 1] - ib - 1
        bmin, binv = Bmin[t], Binv[t]
        a = sA[i]
        w = wA[i]
        for j in range(m):
            if i0[j] <= i < i1[j]:
                start[j] = _bucket(Bidx, ib, nb_, n, bmin, binv, los[q0 + j] - a)
        for j in range(m):
            if not i0[j] <= i < i1[j]:
                continue
            q = q0 + j
            k0 = _probe(Bx, lo, n, start[j], los[q] - a, True)
            counts[q] += w * _weight_before(Bcw, lo, n, k0, WB, t)
            d = his[q] - a
            k = k0
            s = sizes[q]
            while k < n and Bx[lo + k] <= d:
                if s < cap:
                    out_a[q * cap + s] = i
                    out_b[q * cap + s] = Bpos[lo + k]
                s += 1
                k += 1
            sizes[q] = s


@nb.njit(cache=True, parallel=True)
def scan_many(los, his, r, sA, cA, wA, fullA, Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, bmin_all,
              bmax_all, cap, counts, sizes, out_a, out_b):
    """Per query q: ``counts[q]`` = count(los[q]) (strict) and the band, the pairs counted
    by count(his[q]) (non-strict) but not by count(los[q]): their number in ``sizes[q]``
    and the first ``cap`` of them as (A entry, B entry) indices at ``out_a[q * cap:]``,
    ``out_b[q * cap:]``.

    Queries must come in increasing order of ``los``: they are taken in chunks of
    :data:`CHUNK` (in parallel), and within a chunk every A entry is visited once for all
    the queries whose window holds it, first finding every query's bucket, then probing
    (independent memory reads that the processor overlaps; 2-5 times faster than query by
    query)."""
    for ch in nb.prange((los.shape[0] + CHUNK - 1) // CHUNK):
        _scan_chunk(ch, los, his, r, sA, cA, wA, fullA, Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T,
                    bmin_all, bmax_all, cap, counts, sizes, out_a, out_b)


@nb.njit(cache=True)
def scan_serial(los, his, r, sA, cA, wA, fullA, Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, bmin_all,
                bmax_all, cap, counts, sizes, out_a, out_b):
    """:func:`scan_many` in one thread (small batches: no parallel start-up)."""
    for ch in range((los.shape[0] + CHUNK - 1) // CHUNK):
        _scan_chunk(ch, los, his, r, sA, cA, wA, fullA, Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T,
                    bmin_all, bmax_all, cap, counts, sizes, out_a, out_b)


@nb.njit(cache=True)
def fill_lists(s, c, w, thresholds, unit, Boff, Bidx_off, Bx, Bpos, Bcw, Bidx, Bmin, Binv, WB):
    """Side B's lists (see the module docstring) for thresholds 0..len(WB) - 1, written into
    arrays sized by the caller (``Boff``, ``Bidx_off``: where each list and its bucket index
    go): list t holds the entries with ``c <= t`` (every entry unless ``thresholds``) in
    their order (B is sorted by value); its bucket index: entry g (g = 0..buckets) the number
    of its entries below ``Bmin[t] + g * width``, width = (last - first value) / buckets."""
    for t in range(WB.shape[0]):
        k, total = Boff[t], 0
        for i in range(s.shape[0]):
            if thresholds and c[i] > t:
                continue
            Bx[k] = s[i]
            Bpos[k] = i
            if not unit:
                Bcw[k] = total
            total += w[i]
            k += 1
        WB[t] = total
        lo, hi, g0 = Boff[t], Boff[t + 1], Bidx_off[t]
        buckets = Bidx_off[t + 1] - g0 - 1
        if hi == lo:
            for g in range(buckets + 1):
                Bidx[g0 + g] = 0
            Bmin[t], Binv[t] = 0.0, 0.0
            continue
        xmin, xmax = Bx[lo], Bx[hi - 1]
        width = (xmax - xmin) / buckets
        Bmin[t] = xmin
        Binv[t] = 1.0 / width if width > 0 else 0.0
        j = lo
        for g in range(buckets + 1):           # entries below each edge: a merge of two sorted lists
            edge = xmin + g * width if width > 0 else xmin
            while j < hi and Bx[j] < edge:
                j += 1
            Bidx[g0 + g] = j - lo
