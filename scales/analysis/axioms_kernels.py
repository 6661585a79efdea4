"""Numba kernels of the order-theoretic checks (:mod:`irscale.scales.analysis.axioms`,
:mod:`irscale.scales.analysis.disagreements`).

Conventions: runs are identified by their run id (base-``levels`` number, rank 1 most
significant, SPEC section 2); a *rank array* ``ranks`` holds the exact 1-based unq rank of
every run id of REL^N (``ranks[id]``), so equal ranks mean equal values and rank order is
value order. All arithmetic is integer; nothing is decided in floating point.
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def strict_inversions(x, kmax, per_pos):
    """Strict inversions of ``x``: pairs i < j with ``x[i] > x[j]``.

    ``x`` holds integers in 1..kmax (unq ranks). Counted with a Fenwick tree in
    O(len(x) log kmax). ``per_pos[j]`` receives the number of i < j with x[i] > x[j].
    Returns the total (int64; at most C(2^20, 2) ~ 5.5e11 for the spaces checked).
    """
    tree = np.zeros(kmax + 1, np.int64)
    total = 0
    for j in range(x.shape[0]):
        v = x[j]
        # previous elements <= v
        s = 0
        i = v
        while i > 0:
            s += tree[i]
            i -= i & (-i)
        c = j - s
        per_pos[j] = c
        total += c
        i = v
        while i <= kmax:
            tree[i] += 1
            i += i & (-i)
    return total


@nb.njit(cache=True, nogil=True)
def partner_before(x, j):
    """Largest i < j with ``x[i] > x[j]`` (-1 if none): a partner of position j in an
    inversion found by :func:`strict_inversions`."""
    for i in range(j - 1, -1, -1):
        if x[i] > x[j]:
            return i
    return -1


@nb.njit(cache=True, nogil=True)
def _dominates_pref(pref, a, b):
    """Run a dominates run b (b <= a): every prefix count of a >= that of b."""
    G, n = pref.shape[1], pref.shape[2]
    for t in range(G):
        for k in range(n):
            if pref[a, t, k] < pref[b, t, k]:
                return False
    return True


@nb.njit(cache=True, nogil=True)
def all_pairs_check(r1, r2, pref, max_examples, ex_a, ex_b):
    """Enumerate every unordered pair {a, b} of run ids (a < b) of the space.

    ``r1``, ``r2``: rank arrays of two measures; ``pref``: (R, G, N) prefix counts
    (documents of grade >= t + 1 in the top k + 1) of every run. Returns
    ``(discordant, comparable_discordant, n_examples)``: pairs ordered in strictly
    opposite directions by the two measures, and those among them that are comparable in
    the partial order (then recorded, up to ``max_examples``, in ``ex_a``/``ex_b`` with
    ``ex_a[i]`` <= ``ex_b[i]`` in the order). O(R^2): for small spaces only.
    """
    R = r1.shape[0]
    disc = 0
    comp = 0
    nex = 0
    for a in range(R):
        for b in range(a + 1, R):
            d1 = r1[a] - r1[b]
            d2 = r2[a] - r2[b]
            if (d1 < 0 and d2 > 0) or (d1 > 0 and d2 < 0):
                disc += 1
                lo, hi = -1, -1
                if _dominates_pref(pref, b, a):
                    lo, hi = a, b
                elif _dominates_pref(pref, a, b):
                    lo, hi = b, a
                if lo >= 0:
                    comp += 1
                    if nex < max_examples:
                        ex_a[nex] = lo
                        ex_b[nex] = hi
                        nex += 1
    return disc, comp, nex
