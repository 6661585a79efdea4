"""Numba kernels of the streaming spacing pass (:mod:`irscale.scales.analysis.spacing`).

The orchestration reads a scale's values block by block
(:meth:`irscale.scales.tables.scale.Scale.value_blocks`); these kernels fold them:

* :func:`stats_block` folds a block of sorted distinct values into the running gap,
  deviation and coverage statistics;
* :func:`dist_block` picks the values of the cumulative-run-count targets of
  :func:`irscale.scales.analysis.spacing.value_distribution`.

Running state lives in small arrays owned by the caller (see the ``I_*`` and ``F_*``
positions below), so blocks can be of any size and a value's entries may straddle chunk
boundaries.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

# integer state of stats_block
I_SEEN = 0        # distinct values seen so far (the 0-based index of the next one)
I_COVERED = 1     # grid bins holding at least one value
I_LASTBIN = 2     # highest grid bin seen so far
I_NONPOS = 3      # float gaps <= 0 (neighbours float64 cannot separate)
N_ISTATE = 4
# float state of stats_block
F_PREV = 0        # previous value
F_S1 = 1          # sum of (gap - mu0)
F_S2 = 2          # sum of (gap - mu0)^2
F_GMIN = 3
F_GMAX = 4
F_DEVMAX = 5
F_DEVSUM = 6
N_FSTATE = 7


#: gap-histogram lookup: float64 bits >> LUT_SHIFT (exponent and 4 mantissa bits)
LUT_SHIFT = 48
SUB = 4096


@nb.njit(cache=True, nogil=True)
def stats_block(vals, vmin, span, kk, mu0, edges, lut, key_min, ist, fst, hist):
    """Fold sorted distinct values ``vals`` (the next ones after the ``ist[I_SEEN]``
    already seen) into the running statistics. ``span = vmax - vmin`` (1 when K = 1),
    ``kk = K``, ``mu0`` the expected gap (vmax - vmin)/(K - 1), a shift that keeps the
    gap moments accurate. ``hist`` has len(edges) + 1 slots: bins 0..nb-1 (as
    np.histogram places gaps on ``edges``: half-open bins, the last one closed), then
    gaps below edges[0], then gaps above edges[-1]. ``lut[(bits(g) >> LUT_SHIFT) -
    key_min]`` is an edge index <= the bin of any gap g with those leading bits."""
    nb_ = edges.shape[0] - 1
    e_lo, e_hi = edges[0], edges[nb_]
    km1 = np.float64(kk - 1)
    i = ist[I_SEEN]
    covered, lastbin, nonpos = ist[I_COVERED], ist[I_LASTBIN], ist[I_NONPOS]
    prev, s1, s2 = fst[F_PREV], fst[F_S1], fst[F_S2]
    gmin, gmax, devmax, devsum = fst[F_GMIN], fst[F_GMAX], fst[F_DEVMAX], fst[F_DEVSUM]
    gbuf = np.empty(SUB, np.float64)
    gbits = gbuf.view(np.uint64)
    n = vals.shape[0]
    for a in range(0, n, SUB):
        b = min(n, a + SUB)
        ng = 0
        for j in range(a, b):
            v = vals[j]
            if i > 0:
                g = v - prev
                gbuf[ng] = g
                ng += 1
                d = g - mu0
                s1 += d
                s2 += d * d
                gmin = min(gmin, g)
                gmax = max(gmax, g)
            prev = v
            gb = np.int64(0)
            if kk > 1:
                t = (v - vmin) / span
                dev = abs(t - i / km1)
                devmax = max(devmax, dev)
                devsum += dev
                gb = np.int64(math.floor(t * km1 + 0.5))
                gb = min(max(gb, np.int64(0)), kk - 1)
            if gb > lastbin:
                lastbin = gb
                covered += 1
            i += 1
        for q in range(ng):
            g = gbuf[q]
            if g <= 0.0:
                nonpos += 1
            if not (g >= e_lo):
                hist[nb_] += 1
            elif g >= e_hi:
                if g == e_hi:
                    hist[nb_ - 1] += 1
                else:
                    hist[nb_ + 1] += 1
            else:
                c = lut[np.int64(gbits[q] >> LUT_SHIFT) - key_min]
                while edges[c + 1] <= g:
                    c += 1
                hist[c] += 1
    ist[I_SEEN], ist[I_COVERED], ist[I_LASTBIN], ist[I_NONPOS] = i, covered, lastbin, nonpos
    fst[F_PREV], fst[F_S1], fst[F_S2] = prev, s1, s2
    fst[F_GMIN], fst[F_GMAX], fst[F_DEVMAX], fst[F_DEVSUM] = gmin, gmax, devmax, devsum


@nb.njit(cache=True, nogil=True)
def dist_block(cnts, points, n_runs, st, out_idx, out_cum):
    """Value-distribution targets: target j (1..points) is the first distinct value whose
    cumulative run count ``cum`` satisfies ``cum * points >= j * n_runs``. ``st`` holds
    [values seen, cumulative count, next target j, outputs written]. Records the local
    index of each selected value (once, even when several targets hit it) and its
    cumulative count; the first value overall is always recorded (the minimum)."""
    seen, cum, nxt, w = st[0], st[1], st[2], st[3]
    k = 0
    for j in range(cnts.shape[0]):
        cum += cnts[j]
        take = seen == 0
        while nxt <= points and cum * points >= nxt * n_runs:
            take = True
            nxt += 1
        if take:
            out_idx[k] = j
            out_cum[k] = cum
            k += 1
        seen += 1
    st[0], st[1], st[2], st[3] = seen, cum, nxt, w + k
    return k
