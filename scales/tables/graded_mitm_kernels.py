"""Numba kernels of the graded meet-in-the-middle oracle (:mod:`irscale.scales.tables.graded_mitm`).

The arrays they read (built there):

* side A: ``sA`` (float64 partial raw values, sorted increasingly) and ``rowA`` (int32, the
  row of each A entry: which list of B entries it is feasible with);
* the lists of B, one per row, concatenated: ``Lx`` (float64 values, sorted within each
  list), ``Lpos`` (int32: the B entry of each list element), ``Loff`` (int64, list rho is
  ``Lx[Loff[rho]:Loff[rho + 1]]``), and per list a bucket index: ``Bidx`` from
  ``Bidx_off[rho]`` (int64 starts: ``Bidx[Bidx_off[rho] + g]`` = the number of elements of the
  list below ``Lmin[rho] + g / Linv[rho]``), ``Lmin``, ``Lmax`` (first and last value) and
  ``Linv`` (buckets per unit of value, 0 for lists of one distinct value).

For a query band [lo, hi] the *count* is the number of pairs (a, l) with
``Lx[l] < fl(lo - sA[a])`` (l in a's list), the *band* the pairs with
``fl(lo - sA[a]) <= Lx[l] <= fl(hi - sA[a])``. Plain-Python twins: tests/test_graded_mitm.py.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Queries a thread takes together (every A entry is read once for all of them).
CHUNK = 64


@nb.njit(cache=True, inline="always")
def _start(Bidx, ib, nbk, n, lmin, linv, z):
    """A start for the search of z in a list of n elements: the first element of z's bucket."""
    g = (z - lmin) * linv
    if not g >= 0.0:
        return 0
    if g >= nbk:
        return n
    return Bidx[ib + int(g)]


@nb.njit(cache=True, inline="always")
def _below(Lx, lo, n, pos, z):
    """From a start ``pos``, the number of elements of ``Lx[lo:lo + n]`` (sorted) below z."""
    while pos > 0 and Lx[lo + pos - 1] >= z:
        pos -= 1
    while pos < n and Lx[lo + pos] < z:
        pos += 1
    return pos


@nb.njit(cache=True)
def _chunk(ch, los, his, sA, rowA, Lx, Lpos, Loff, Bidx, Bidx_off, Lmin, Lmax, Linv, cap, counts, sizes,
           out_a, out_b):
    """The queries ``ch * CHUNK ..`` of :func:`scan_many`."""
    q0 = ch * CHUNK
    q1 = min(los.shape[0], q0 + CHUNK)
    for q in range(q0, q1):
        counts[q] = 0
        sizes[q] = 0
    for i in range(sA.shape[0]):
        rho = rowA[i]
        lo = Loff[rho]
        n = Loff[rho + 1] - lo
        if n == 0:
            continue
        a = sA[i]
        lmin, lmax = Lmin[rho], Lmax[rho]
        ib = Bidx_off[rho]
        nbk = Bidx_off[rho + 1] - ib - 1
        linv = Linv[rho]
        for q in range(q0, q1):
            zl = los[q] - a
            if zl > lmax:                   # the whole list is below
                counts[q] += n
                continue
            zh = his[q] - a
            if zh < lmin:                   # nothing below, nothing in the band
                continue
            k = _below(Lx, lo, n, _start(Bidx, ib, nbk, n, lmin, linv, zl), zl)
            counts[q] += k
            s = sizes[q]
            while k < n and Lx[lo + k] <= zh:
                if s < cap:
                    out_a[q * cap + s] = i
                    out_b[q * cap + s] = Lpos[lo + k]
                s += 1
                k += 1
            sizes[q] = s


@nb.njit(cache=True, parallel=True)
def scan_many(los, his, sA, rowA, Lx, Lpos, Loff, Bidx, Bidx_off, Lmin, Lmax, Linv, cap, counts, sizes, out_a,
              out_b):
    """Per query q (queries in increasing order of ``los``): ``counts[q]``, the count of
    the module docstring at ``los[q]``, and the band [los[q], his[q]]: its number of pairs in
    ``sizes[q]`` and the first ``cap`` of them as (A entry, B entry) at ``out_a[q * cap:]``,
    ``out_b[q * cap:]``. Chunks of :data:`CHUNK` queries in parallel."""
    for ch in nb.prange((los.shape[0] + CHUNK - 1) // CHUNK):
        _chunk(ch, los, his, sA, rowA, Lx, Lpos, Loff, Bidx, Bidx_off, Lmin, Lmax, Linv, cap, counts, sizes,
               out_a, out_b)


@nb.njit(cache=True)
def feasible_pairs(rowA, Loff):
    """K: the number of feasible pairs, sum over A entries of the length of their list."""
    total = np.int64(0)
    for i in range(rowA.shape[0]):
        total += Loff[rowA[i] + 1] - Loff[rowA[i]]
    return total


def bucket_index(x: np.ndarray, buckets: int) -> tuple[np.ndarray, float, float]:
    """Bucket starts of a sorted array: ``idx[g]`` = number of elements below
    ``xmin + g / inv`` for g = 0..buckets; returns (idx, xmin, inv) (inv = 0: one value)."""
    if x.shape[0] == 0:
        return np.zeros(buckets + 1, np.int64), 0.0, 0.0
    xmin, xmax = float(x[0]), float(x[-1])
    width = (xmax - xmin) / buckets
    inv = 1.0 / width if width > 0 else 0.0
    edges = xmin + np.arange(buckets + 1, dtype=np.float64) * width if width > 0 else np.full(buckets + 1, xmin)
    return np.searchsorted(x, edges, side="left").astype(np.int64), xmin, inv
