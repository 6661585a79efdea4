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
CHUNK = 256
#: A entries per tile of a chunk (positions: TILE x CHUNK x 4 bytes per thread; B's entries a tile's probes
#: read stay in cache).
TILE = 1024


@nb.njit(cache=True, inline="always")
def _popcount(x):
    """The number of 1 bits of a uint64."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@nb.njit(cache=True)
def _chunk(ch, los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, ustart, uentry, usign, cm, total, rmin, rmax, tile,
           cap, counts, sizes, out_a, out_b):
    """The queries ``ch * CHUNK ..`` of :func:`scan_many`, A in tiles of ``tile`` entries.
    Per tile, first every (A entry, query) position in B (``P``; 0 where the A entry's row
    counts wholly or not at all: no base counts an entry below position 0), with the band;
    then base by base, the signed block counts of the A entries whose rows use the base
    (``ustart``, ``uentry``, ``usign``): one base's block counts at a time, from cache."""
    q0 = ch * CHUNK
    q1 = min(los.shape[0], q0 + CHUNK)
    w = q1 - q0
    n = Bs.shape[0]
    nbk = Bidx.shape[0] - 1
    nA = sA.shape[0]
    nbase = ustart.shape[0] - 1
    P = np.empty((max(1, min(nA, tile)), CHUNK), np.int32)
    pos = np.zeros(CHUNK, np.int64)
    end = np.zeros(CHUNK, np.int64)
    acc = np.zeros(CHUNK, np.int64)
    cur = ustart[:nbase].copy()
    for q in range(q0, q1):
        counts[q] = 0
        sizes[q] = 0
    for i0 in range(0, nA, tile):
        i1 = min(nA, i0 + tile)
        for i in range(i0, i1):
            pr = P[i - i0]
            r = rowA[i]
            t = total[r]
            if t == 0:
                for j in range(w):
                    pr[j] = 0
                continue
            a = sA[i]
            lmin, lmax = rmin[r], rmax[r]
            for j in range(w):
                q = q0 + j
                zl = los[q] - a
                pos[j] = -1
                if zl > lmax:                   # every feasible entry is below
                    counts[q] += t
                elif his[q] - a >= lmin:        # else none below, none in the band
                    g = (zl - bmin) * binv
                    if not g >= 0.0:
                        pos[j], end[j] = 0, 0
                    elif g >= nbk:
                        pos[j], end[j] = n, n
                    else:
                        pos[j], end[j] = Bidx[int(g)], Bidx[int(g) + 1]
            for j in range(w):
                p = pos[j]
                if p < 0:
                    pr[j] = 0                   # position 0 counts nothing in any base
                    continue
                q = q0 + j
                zl = los[q] - a
                hi = end[j]
                c = p
                for e in range(p, hi):          # within the bucket (without branches) ...
                    c += Bs[e] < zl
                p = c
                while p > 0 and Bs[p - 1] >= zl:    # ... then fixed up (float edges)
                    p -= 1
                while p < n and Bs[p] < zl:
                    p += 1
                pr[j] = p
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
        for b in range(nbase):
            u, ue = cur[b], ustart[b + 1]
            if u >= ue or uentry[u] >= i1:
                continue
            for j in range(w):
                acc[j] = 0
            while u < ue and uentry[u] < i1:
                pr = P[uentry[u] - i0]
                sg = usign[u]
                for j in range(w):
                    p = pr[j]
                    k = p >> 6
                    low = (np.uint64(1) << np.uint64(p & 63)) - np.uint64(1)
                    acc[j] += sg * (cm[b, k, 0] + _popcount(np.uint64(cm[b, k, 1]) & low))
                u += 1
            cur[b] = u
            for j in range(w):
                counts[q0 + j] += acc[j]


@nb.njit(cache=True, parallel=True)
def scan_many(los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, ustart, uentry, usign, cm, total, rmin, rmax, tile,
              cap, counts, sizes, out_a, out_b):
    """Per query q (queries in increasing order of ``los``): ``counts[q]``, the count of
    the module docstring at ``los[q]``, and the band [los[q], his[q]]: its number of pairs in
    ``sizes[q]`` and the first ``cap`` of them as (A entry, B entry) at ``out_a[q * cap:]``,
    ``out_b[q * cap:]``. Chunks of :data:`CHUNK` queries in parallel; the bases' users
    (``ustart``, ``uentry``, ``usign``): :func:`base_users`."""
    for ch in nb.prange((los.shape[0] + CHUNK - 1) // CHUNK):
        _chunk(ch, los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, ustart, uentry, usign, cm, total, rmin, rmax,
               tile, cap, counts, sizes, out_a, out_b)


@nb.njit(cache=True)
def scan_serial(los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, ustart, uentry, usign, cm, total, rmin, rmax, tile,
                cap, counts, sizes, out_a, out_b):
    """:func:`scan_many` in one thread (small batches: no parallel start-up)."""
    for ch in range((los.shape[0] + CHUNK - 1) // CHUNK):
        _chunk(ch, los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, ustart, uentry, usign, cm, total, rmin, rmax,
               tile, cap, counts, sizes, out_a, out_b)


def base_users(rowA: np.ndarray, tstart: np.ndarray, tbase: np.ndarray, tsign: np.ndarray, nbase: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per base b, the A entries whose rows have a term of b, increasing, with the term's
    sign: at ``ustart[b]:ustart[b + 1]`` of ``uentry`` (int64) and ``usign`` (int64)."""
    rowA = np.asarray(rowA, np.int64)
    per = np.diff(tstart)[rowA]
    entry = np.repeat(np.arange(rowA.shape[0], dtype=np.int64), per)
    first = np.repeat(np.cumsum(per) - per, per)
    term = np.repeat(tstart[rowA], per) + (np.arange(entry.shape[0], dtype=np.int64) - first)
    base = np.asarray(tbase, np.int64)[term]
    order = np.argsort(base, kind="stable")             # stable: entries stay increasing per base
    ustart = np.concatenate(([0], np.cumsum(np.bincount(base, minlength=nbase)))).astype(np.int64)
    return ustart, entry[order], np.asarray(tsign, np.int64)[term][order]


#: Blocks of 64 entries of B a thread masks together in :func:`block_counts`.
BLOCKS = 256


@nb.njit(cache=True)
def _transposed(F):
    """F as uint64 (classes, rows): a class's column of 0/1, contiguous."""
    out = np.zeros((F.shape[1], F.shape[0]), np.uint64)
    for r in range(F.shape[0]):
        for c in range(F.shape[1]):
            out[c, r] = F[r, c]
    return out


@nb.njit(cache=True)
def _mask_blocks(ch, Bcls, FT, cm):
    """The masks ``cm[:, j, 1]`` of every row for the blocks j of chunk ``ch`` (entry by
    entry, its class's column shifted into every row's mask at once)."""
    n = Bcls.shape[0]
    rows = FT.shape[1]
    acc = np.zeros(rows, np.uint64)
    for j in range(ch * BLOCKS, min((n >> 6) + 1, (ch + 1) * BLOCKS)):
        acc[:] = 0
        for e in range(j << 6, min(n, (j + 1) << 6)):
            col = FT[Bcls[e]]
            sh = np.uint64(e & 63)
            for r in range(rows):
                acc[r] |= col[r] << sh
        for r in range(rows):
            cm[r, j, 1] = np.int64(acc[r])


@nb.njit(cache=True)
def _finish_row(r, Bs, Bcls, F, cm, total, rmin, rmax):
    """Row r of :func:`block_counts` once its masks are in: the counts before each block, the
    total, the values of its first and last entries."""
    n = Bcls.shape[0]
    c = 0
    for j in range((n >> 6) + 1):
        cm[r, j, 0] = c
        c += _popcount(np.uint64(cm[r, j, 1]))
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
    ``rmax[r]`` the values of the first and the last. Chunks of blocks, then rows, in parallel."""
    FT = _transposed(F)
    for ch in nb.prange(((Bcls.shape[0] >> 6) + BLOCKS) // BLOCKS):
        _mask_blocks(ch, Bcls, FT, cm)
    for r in nb.prange(F.shape[0]):
        _finish_row(r, Bs, Bcls, F, cm, total, rmin, rmax)


@nb.njit(cache=True)
def block_counts_serial(Bs, Bcls, F, cm, total, rmin, rmax):
    """:func:`block_counts` in one thread (small sides: no parallel start-up)."""
    FT = _transposed(F)
    for ch in range(((Bcls.shape[0] >> 6) + BLOCKS) // BLOCKS):
        _mask_blocks(ch, Bcls, FT, cm)
    for r in range(F.shape[0]):
        _finish_row(r, Bs, Bcls, F, cm, total, rmin, rmax)


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


@nb.njit(cache=True)
def side_step(s, code, cls, floats, table, empty, out_s, out_code, out_cls):
    """One group more on a side sorted by value: every (entry e, option o) whose class
    ``table[cls[e], o]`` is not ``empty``, with value ``s[e] + floats[o]``, code
    ``code[e] * m + o`` (m options) and that class, written in increasing order of value (a
    merge of the m streams e -> s[e] + floats[o], each nondecreasing since s is and float
    addition of a constant is monotone); returns how many were written."""
    n, m = s.shape[0], floats.shape[0]
    head = np.zeros(m, np.int64)
    for o in range(m):
        e = 0
        while e < n and table[cls[e], o] == empty:
            e += 1
        head[o] = e
    k = 0
    while True:
        best, bv = -1, 0.0
        for o in range(m):
            e = head[o]
            if e < n:
                v = s[e] + floats[o]
                if best < 0 or v < bv:
                    best, bv = o, v
        if best < 0:
            return k
        e = head[best]
        out_s[k] = bv
        out_code[k] = code[e] * m + best
        out_cls[k] = table[cls[e], best]
        k += 1
        e += 1
        while e < n and table[cls[e], best] == empty:
            e += 1
        head[best] = e
