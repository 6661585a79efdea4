"""Numba kernels of the graded meet-in-the-middle oracle (:mod:`irscale.scales.tables.graded_mitm`).

The arrays they read (built there):

* side A: ``sA`` (float64 partial raw values, sorted increasingly) and ``rowA`` (int32, the
  row of each A entry: which B classes it is feasible with);
* side B: ``Bs`` (float64 values, sorted increasingly), ``Bcls`` (the class of each entry), a
  bucket index ``Bidx`` (``Bidx[g]`` = the number of entries below ``bmin + g / binv``;
  ``binv`` = 0 when every entry has one value);
* rows: ``F`` (uint8 (rows, classes): 1 where the row's A entries are feasible with the
  class), ``total``, ``rmin``, ``rmax`` (per row: its feasible entries, their smallest and
  largest value), and its *bases* (:mod:`irscale.scales.tables.graded_mitm_bases`): the
  terms ``tstart[r]:tstart[r + 1]`` of ``tbase`` and ``tsign``, the row's feasible entries
  being the signed sum of its bases';
* bases: ``cm`` (int64 (bases, blocks, 2): per block j of 64 entries of B, the base's entries
  before it, and a mask of the block's entries in the base, bit i for entry 64 j + i).

For a query band [lo, hi] the *count* is the number of pairs (a, e), e feasible for a's row,
with ``Bs[e] < fl(lo - sA[a])``, the *band* the feasible pairs with
``fl(lo - sA[a]) <= Bs[e] <= fl(hi - sA[a])``. Plain-Python twins: tests/test_graded_mitm.py.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Queries a thread takes together (every A entry is read once for all of them).
CHUNK = 64


@nb.njit(cache=True, inline="always")
def _popcount(x):
    """The number of 1 bits of a uint64."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@nb.njit(cache=True)
def _chunk(ch, los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, tstart, tbase, tsign, cm, total, rmin, rmax, cap,
           counts, sizes, out_a, out_b):
    """The queries ``ch * CHUNK ..`` of :func:`scan_many`: per A entry, the bucket starts of
    all of them first, then their positions, then the block counts (passes of independent
    memory reads, which the processor overlaps)."""
    q0 = ch * CHUNK
    q1 = min(los.shape[0], q0 + CHUNK)
    n = Bs.shape[0]
    nbk = Bidx.shape[0] - 1
    pos = np.zeros(CHUNK, np.int64)
    end = np.zeros(CHUNK, np.int64)
    todo = np.zeros(CHUNK, np.int64)
    for q in range(q0, q1):
        counts[q] = 0
        sizes[q] = 0
    for i in range(sA.shape[0]):
        r = rowA[i]
        t = total[r]
        if t == 0:
            continue
        a = sA[i]
        lmin, lmax = rmin[r], rmax[r]
        m = 0
        for q in range(q0, q1):
            zl = los[q] - a
            if zl > lmax:                   # every feasible entry is below
                counts[q] += t
            elif his[q] - a >= lmin:        # else none below, none in the band
                g = (zl - bmin) * binv
                if not g >= 0.0:
                    pos[m], end[m] = 0, 0
                elif g >= nbk:
                    pos[m], end[m] = n, n
                else:
                    pos[m], end[m] = Bidx[int(g)], Bidx[int(g) + 1]
                todo[m] = q
                m += 1
        for j in range(m):
            zl = los[todo[j]] - a
            p, hi = pos[j], end[j]
            while p < hi:                   # within the bucket, then fixed up (float edges)
                mid = (p + hi) >> 1
                if Bs[mid] < zl:
                    p = mid + 1
                else:
                    hi = mid
            while p > 0 and Bs[p - 1] >= zl:
                p -= 1
            while p < n and Bs[p] < zl:
                p += 1
            pos[j] = p
        t0, t1 = tstart[r], tstart[r + 1]
        for j in range(m):
            q = todo[j]
            p = pos[j]
            k = p >> 6
            low = (np.uint64(1) << np.uint64(p & 63)) - np.uint64(1)
            c = 0
            for t in range(t0, t1):                 # the row's bases, signed
                b = tbase[t]
                c += tsign[t] * (cm[b, k, 0] + _popcount(np.uint64(cm[b, k, 1]) & low))
            counts[q] += c
            zh = his[q] - a
            s = sizes[q]
            e = p
            while e < n and Bs[e] <= zh:
                if F[r, Bcls[e]]:
                    if s < cap:
                        out_a[q * cap + s] = i
                        out_b[q * cap + s] = e
                    s += 1
                e += 1
            sizes[q] = s


@nb.njit(cache=True, parallel=True)
def scan_many(los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, tstart, tbase, tsign, cm, total, rmin, rmax, cap,
              counts, sizes, out_a, out_b):
    """Per query q (queries in increasing order of ``los``): ``counts[q]``, the count of
    the module docstring at ``los[q]``, and the band [los[q], his[q]]: its number of pairs in
    ``sizes[q]`` and the first ``cap`` of them as (A entry, B entry) at ``out_a[q * cap:]``,
    ``out_b[q * cap:]``. Chunks of :data:`CHUNK` queries in parallel."""
    for ch in nb.prange((los.shape[0] + CHUNK - 1) // CHUNK):
        _chunk(ch, los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, tstart, tbase, tsign, cm, total, rmin, rmax,
               cap, counts, sizes, out_a, out_b)


@nb.njit(cache=True)
def scan_serial(los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, tstart, tbase, tsign, cm, total, rmin, rmax, cap,
                counts, sizes, out_a, out_b):
    """:func:`scan_many` in one thread (small batches: no parallel start-up)."""
    for ch in range((los.shape[0] + CHUNK - 1) // CHUNK):
        _chunk(ch, los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, tstart, tbase, tsign, cm, total, rmin, rmax,
               cap, counts, sizes, out_a, out_b)


@nb.njit(cache=True)
def _block_row(r, Bs, Bcls, F, cm, total, rmin, rmax):
    """Row r of :func:`block_counts` (block by block, without branches within a block)."""
    n = Bcls.shape[0]
    c = 0
    for j in range((n >> 6) + 1):
        cm[r, j, 0] = c
        mask = np.uint64(0)
        for e in range(j << 6, min(n, (j + 1) << 6)):
            mask |= np.uint64(F[r, Bcls[e]]) << np.uint64(e & 63)
        cm[r, j, 1] = np.int64(mask)
        c += _popcount(mask)
    total[r] = c
    first, last = -1, -1
    for e in range(n):
        if F[r, Bcls[e]]:
            first = e
            break
    for e in range(n - 1, -1, -1):
        if F[r, Bcls[e]]:
            last = e
            break
    rmin[r] = Bs[first] if first >= 0 else 0.0
    rmax[r] = Bs[last] if last >= 0 else 0.0


@nb.njit(cache=True, parallel=True)
def block_counts(Bs, Bcls, F, cm, total, rmin, rmax):
    """Per row r (entry e of B feasible for r when F[r, Bcls[e]]): ``cm[r, j]`` = (the feasible
    entries before block j, the mask of block j's), ``total[r]`` all of them, ``rmin[r]``,
    ``rmax[r]`` the values of the first and the last. Rows in parallel."""
    for r in nb.prange(F.shape[0]):
        _block_row(r, Bs, Bcls, F, cm, total, rmin, rmax)


@nb.njit(cache=True)
def block_counts_serial(Bs, Bcls, F, cm, total, rmin, rmax):
    """:func:`block_counts` in one thread (small sides: no parallel start-up)."""
    for r in range(F.shape[0]):
        _block_row(r, Bs, Bcls, F, cm, total, rmin, rmax)


@nb.njit(cache=True)
def feasible_pairs(rowA, total):
    """K: the number of feasible pairs, sum over A entries of their row's feasible B entries."""
    out = np.int64(0)
    for i in range(rowA.shape[0]):
        out += total[rowA[i]]
    return out


def bucket_index(x: np.ndarray, buckets: int) -> tuple[np.ndarray, float, float]:
    """Bucket starts of a sorted array: ``idx[g]`` = number of elements below
    ``xmin + g / inv`` for g = 0..buckets; returns (idx, xmin, inv) (inv = 0: one value)."""
    if x.shape[0] == 0:
        return np.zeros(buckets + 1, np.int32), 0.0, 0.0
    xmin, xmax = float(x[0]), float(x[-1])
    width = (xmax - xmin) / buckets
    inv = 1.0 / width if width > 0 else 0.0
    edges = xmin + np.arange(buckets + 1, dtype=np.float64) * width if width > 0 else np.full(buckets + 1, xmin)
    return np.searchsorted(x, edges, side="left").astype(np.int32), xmin, inv
