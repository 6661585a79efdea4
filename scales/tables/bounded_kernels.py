"""Numba kernels of the bounded scales: dynamic programmes over a grid of values.

:mod:`irscale.scales.tables.bounded` counts the tuples of group options (or the runs of
RBP) whose value, rounded to a grid of step h, is at most a grid index (the group options
rounded with an offset per group, which bounds the count from both sides; RBP's runs once
rounded down, once up). The kernels move *mass* (float64: counts relative to the number of
tuples) between cells:

:func:`group_pass` adds one group of options to a histogram over (count, value cell): the
mass at (c, i) becomes ``q * sum_o mass[c - counts[o], i - shifts[o]]`` (``q`` the weight
of one option, counts the documents a recall base bounds, shifts the options' values in
cells). Rows are stored ragged: row c holds cells ``flo[c] .. flo[c] + (off[c + 1] -
off[c]) - 1`` at ``buf[off[c]:off[c + 1]]``; ``lo[c] .. hi[c]`` is the part of row c
that may be nonzero (empty when lo > hi), updated by the pass. The pass works in place:
rows from the highest count down, and each row rewritten in one pass from its highest
block of cells down (:func:`_fused_row`), so that every read sees the mass before the pass. The options of a
group include the empty one (count 0, shift 0). :func:`last_group` adds the last group on
sums of rows (one per distinct count of its options) instead of on every row, giving the
masses by cell of the tuples of count at most the recall base.

:func:`geometric_stage` is one rank of RBP's self-similar programme: the tail value
T_j = g(r_j) + p T_(j+1), p = a/c: the mass of cell i of T_(j+1) goes, times ``q``, to
cell ``shift + floor(a i / c)`` of T_j (``ceil`` when ``up``) for every gain's shift, a/c
being p times the ratio of the steps of the two grids (T_j's grid is finer than T_(j+1)'s).

Every cell's mass is a sum of non-negative products, so the relative float error of the
result is bounded by the number of roundings along its path (the caller's error bound,
:func:`irscale.scales.tables.bounded.rounding_depth`). Plain-Python twins of the kernels
are in ``tests/bounded_reference.py``.
"""
from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def _one_dimension(rows, counts):
    """Digits of one count dimension: row c's is c, option o's its count (no borrow: c >= count)."""
    return np.arange(rows).reshape(rows, 1), np.ascontiguousarray(counts).reshape(counts.shape[0], 1)


@nb.njit(cache=True, nogil=True)
def group_spans(lo, hi, shifts, counts):
    """The spans of the rows after adding a group (new arrays; see :func:`group_pass`):
    :func:`group_spans_md` of one dimension."""
    dig, odig = _one_dimension(lo.shape[0], counts)
    return group_spans_md(lo, hi, shifts, counts, dig, odig)


@nb.njit(cache=True, nogil=True)
def group_pass(buf, off, flo, lo, hi, shifts, counts, q):
    """Add one group to the ragged histogram ``buf`` in place (see the module docstring).
    ``shifts``/``counts``: int64 per option, sorted by count then shift, the first option
    (0, 0); ``q``: the weight of each option. :func:`group_pass_md` of one dimension."""
    dig, odig = _one_dimension(lo.shape[0], counts)
    group_pass_md(buf, off, flo, lo, hi, shifts, counts, dig, odig, q)


@nb.njit(cache=True, nogil=True)
def last_group(buf, off, flo, lo, hi, shifts, counts, q, prefix, out):
    """Add the last group and sum the rows: ``out[i] = q * sum_o sum_(c <= R - counts[o])
    mass[c, i - shifts[o]]`` (R + 1 rows; ``out`` zeroed by the caller, long enough for every
    cell, ``prefix`` a zeroed scratch array as long as the longest row reach). The sums over
    rows are cumulated once per distinct count (options taken by decreasing count)."""
    R1 = lo.shape[0]
    done = -1                    # prefix = sum of rows 0..done
    plo = np.int64(1) << 62
    phi = np.int64(-1)
    for o in range(shifts.shape[0] - 1, -1, -1):
        t = R1 - 1 - counts[o]
        if t < 0:
            continue
        while done < t:
            done += 1
            if lo[done] <= hi[done]:
                base = off[done] - flo[done]
                for i in range(lo[done], hi[done] + 1):
                    prefix[i] += buf[base + i]
                plo = min(plo, lo[done])
                phi = max(phi, hi[done])
        s = shifts[o]
        for i in range(plo, phi + 1):
            out[i + s] += prefix[i]
    for i in range(out.shape[0]):
        out[i] *= q


@nb.njit(cache=True, nogil=True)
def geometric_stage(old, n_old, new, a, c, shifts, q, up):
    """One rank of RBP's programme (module docstring): ``new`` (zeroed by the caller over
    the cells it receives) gets ``q * old[i]`` at ``shift + floor(a i / c)`` (``ceil``
    when ``up``) for every shift; a/c is p times the ratio of the two grids' steps
    (a < c). Returns the number of cells of ``new`` in use."""
    top = 0
    t = 0                        # a i = t c + rem, 0 <= rem < c: no division per cell
    rem = 0
    for i in range(n_old):
        v = old[i]
        if v != 0.0:
            tt = t + 1 if up and rem > 0 else t
            w = v * q
            for s in shifts:
                new[s + tt] += w
            top = tt
        rem += a
        if rem >= c:
            rem -= c
            t += 1
    return top + shifts.max() + 1


# -- several count dimensions: rows are flattened multi-indices ------------------------------
@nb.njit(cache=True, nogil=True, inline="always")
def _fits(dig, odig, c, o):
    """Whether row ``c`` (digits ``dig[c]``) holds option ``o``'s counts ``odig[o]`` in every
    dimension (row c - counts[o] then exists: no borrow between digits)."""
    for d in range(dig.shape[1]):
        if dig[c, d] < odig[o, d]:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def group_spans_md(lo, hi, shifts, counts, dig, odig):
    """:func:`group_spans` over flattened multi-index rows: ``counts`` the options' flattened
    offsets, ``dig`` (rows, D) every row's digits, ``odig`` (options, D) the options' digits."""
    R1 = lo.shape[0]
    nlo = np.empty(R1, np.int64)
    nhi = np.empty(R1, np.int64)
    for c in range(R1):
        a = np.int64(1) << 62
        b = np.int64(-1)
        for o in range(shifts.shape[0]):
            if not _fits(dig, odig, c, o):
                continue
            s = c - counts[o]
            if lo[s] <= hi[s]:
                if lo[s] + shifts[o] < a:
                    a = lo[s] + shifts[o]
                if hi[s] + shifts[o] > b:
                    b = hi[s] + shifts[o]
        nlo[c] = a
        nhi[c] = b
    return nlo, nhi


#: Cells of a row summed at once (an L1-resident block; rows are taken from the top block down).
BLOCK = 1024


@nb.njit(cache=True, nogil=True, inline="always")
def _fused_row(buf, base, olo, ohi, a, b, tb, tl, th, ts, nt, q, acc):
    """Row ``base`` (cells ``olo..ohi`` before the pass) replaced in place by ``q`` times its
    sum over the terms ``t < nt``: the cells ``tl[t]..th[t]`` at ``buf[tb[t] + j]`` shifted by
    ``ts[t]`` (a term may be the row itself: its cells are read before the block holding them
    is written, blocks from the top down, shifts >= 0), over the new span ``a..b``; the
    row's cells outside it are emptied. One pass over the row: every term read once, the row
    written once."""
    i1 = b + 1
    while i1 > a:
        i0 = max(a, i1 - BLOCK)
        for i in range(i1 - i0):
            acc[i] = 0.0
        for t in range(nt):
            sh = ts[t]
            src = tb[t] - sh
            for i in range(max(i0, tl[t] + sh), min(i1, th[t] + sh + 1)):
                acc[i - i0] += buf[src + i]
        for i in range(i0, i1):
            buf[base + i] = acc[i - i0] * q
        i1 = i0
    for i in range(olo, min(ohi, a - 1) + 1):
        buf[base + i] = 0.0
    for i in range(max(olo, b + 1), ohi + 1):
        buf[base + i] = 0.0


@nb.njit(cache=True, nogil=True)
def group_pass_md(buf, off, flo, lo, hi, shifts, counts, dig, odig, q):
    """:func:`group_pass` over flattened multi-index rows (see :func:`group_spans_md`): a
    nonzero offset vector has a positive flattened offset, so rows taken from the highest
    index down read only rows not yet updated by the pass."""
    R1 = lo.shape[0]
    m = shifts.shape[0]
    nlo, nhi = group_spans_md(lo, hi, shifts, counts, dig, odig)
    tb, tl, th, ts = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, np.int64)
    acc = np.empty(BLOCK)
    for c in range(R1 - 1, -1, -1):
        nt = 0
        for o in range(m):
            s = c - counts[o]
            if _fits(dig, odig, c, o) and lo[s] <= hi[s]:
                tb[nt], tl[nt], th[nt], ts[nt] = off[s] - flo[s], lo[s], hi[s], shifts[o]
                nt += 1
        _fused_row(buf, off[c] - flo[c], lo[c], hi[c], nlo[c], nhi[c], tb, tl, th, ts, nt, q, acc)
    lo[:] = nlo
    hi[:] = nhi


@nb.njit(cache=True, nogil=True)
def row_sums(buf, off, flo, lo, hi, out):
    """``out[i] += sum_c mass[c, i]`` over every row (``out`` as long as the longest reach)."""
    for c in range(lo.shape[0]):
        base = off[c] - flo[c]
        for i in range(lo[c], hi[c] + 1):
            out[i] += buf[base + i]


# -- antichain states: rows are states, an option's class moves a row to another ----------------
@nb.njit(cache=True, nogil=True)
def group_spans_states(lo, hi, shifts, cstart, start, source, cls, kept):
    """:func:`group_spans` over antichain states (:mod:`irscale.scales.tables.bounded_states`):
    options sorted by class then shift (class k at ``cstart[k]:cstart[k + 1]``, class 0 the one
    keeping a state c where ``kept[c]``), state c reached from ``source[j]`` by class ``cls[j]``
    for j in ``start[c]:start[c + 1]``."""
    R1 = lo.shape[0]
    nlo = np.empty(R1, np.int64)
    nhi = np.empty(R1, np.int64)
    for c in range(R1):
        a = np.int64(1) << 62
        b = np.int64(-1)
        if kept[c] and lo[c] <= hi[c] and cstart[1] > cstart[0]:
            a = lo[c] + shifts[cstart[0]]
            b = hi[c] + shifts[cstart[1] - 1]
        for j in range(start[c], start[c + 1]):
            s = source[j]
            k = cls[j]
            if lo[s] <= hi[s] and cstart[k + 1] > cstart[k]:
                if lo[s] + shifts[cstart[k]] < a:
                    a = lo[s] + shifts[cstart[k]]
                if hi[s] + shifts[cstart[k + 1] - 1] > b:
                    b = hi[s] + shifts[cstart[k + 1] - 1]
        nlo[c] = a
        nhi[c] = b
    return nlo, nhi


@nb.njit(cache=True, nogil=True)
def group_pass_states(buf, off, flo, lo, hi, shifts, cstart, start, source, cls, kept, q):
    """:func:`group_pass` over antichain states (see :func:`group_spans_states`): every move
    goes to a later state, so rows taken from the last state down read only rows not yet
    updated by the pass (a row not kept is emptied once its moves have read it)."""
    R1 = lo.shape[0]
    nlo, nhi = group_spans_states(lo, hi, shifts, cstart, start, source, cls, kept)
    states_rows(buf, off, flo, lo, hi, nlo, nhi, np.arange(R1 - 1, -1, -1), shifts, cstart, start, source, cls,
                kept, q)
    lo[:] = nlo
    hi[:] = nhi


@nb.njit(cache=True, nogil=True)
def states_rows(buf, off, flo, lo, hi, nlo, nhi, rows, shifts, cstart, start, source, cls, kept, q):
    """The rows ``rows`` of :func:`group_pass_states`, in that order (``nlo``/``nhi`` their
    spans after the pass; ``lo``/``hi`` are left as before it): rows that read none of each
    other's may be taken in any order, or at once."""
    into = 0                                           # the most moves into one state
    for c in range(start.shape[0] - 1):
        into = max(into, start[c + 1] - start[c])
    nt_max = cstart[-1] * (1 + into) + 1
    tb, tl, th, ts = np.empty(nt_max, np.int64), np.empty(nt_max, np.int64), np.empty(nt_max, np.int64), \
        np.empty(nt_max, np.int64)
    acc = np.empty(BLOCK)
    for c in rows:
        nt = 0
        if kept[c] and lo[c] <= hi[c]:                 # the class keeping the state
            for o in range(cstart[0], cstart[1]):
                tb[nt], tl[nt], th[nt], ts[nt] = off[c] - flo[c], lo[c], hi[c], shifts[o]
                nt += 1
        for j in range(start[c], start[c + 1]):
            s = source[j]
            if lo[s] <= hi[s]:
                for o in range(cstart[cls[j]], cstart[cls[j] + 1]):
                    tb[nt], tl[nt], th[nt], ts[nt] = off[s] - flo[s], lo[s], hi[s], shifts[o]
                    nt += 1
        _fused_row(buf, off[c] - flo[c], lo[c], hi[c], nlo[c], nhi[c], tb, tl, th, ts, nt, q, acc)


@nb.njit(cache=True, nogil=True)
def last_group_states(buf, off, flo, lo, hi, shifts, cstart, fstart, fstate, q, prefix, out):
    """Add the last group over antichain states and sum the rows: ``out[i] = q * sum_k
    sum_(o in class k) sum_(c feasible with k) mass[c, i - shifts[o]]``, the states feasible
    with class k at ``fstart[k]:fstart[k + 1]`` of ``fstate`` (``out`` zeroed by the caller,
    long enough for every cell; ``prefix`` a scratch array as long as the longest row reach):
    the rows are summed once per class, not once per option."""
    last_group_states_cells(buf, off, flo, lo, hi, shifts, cstart, fstart, fstate, 0, prefix.shape[0], prefix, out)
    for i in range(out.shape[0]):
        out[i] *= q


@nb.njit(cache=True, nogil=True)
def last_group_states_cells(buf, off, flo, lo, hi, shifts, cstart, fstart, fstate, c0, c1, prefix, out):
    """:func:`last_group_states` over the rows' cells ``c0 .. c1 - 1`` only, without the weight
    (``out`` and ``prefix`` the caller's, as there): cell ranges apart may be summed at once
    into outputs apart."""
    for k in range(cstart.shape[0] - 1):
        if cstart[k + 1] == cstart[k] or fstart[k + 1] == fstart[k]:
            continue
        plo = np.int64(1) << 62
        phi = np.int64(-1)
        for j in range(fstart[k], fstart[k + 1]):
            c = fstate[j]
            if lo[c] <= hi[c]:
                plo = min(plo, max(lo[c], c0))
                phi = max(phi, min(hi[c], c1 - 1))
        if phi < plo:
            continue
        for i in range(plo, phi + 1):
            prefix[i] = 0.0
        for j in range(fstart[k], fstart[k + 1]):
            c = fstate[j]
            base = off[c] - flo[c]
            for i in range(max(lo[c], c0), min(hi[c], c1 - 1) + 1):
                prefix[i] += buf[base + i]
        for o in range(cstart[k], cstart[k + 1]):
            s = shifts[o]
            for i in range(plo, phi + 1):
                out[i + s] += prefix[i]
