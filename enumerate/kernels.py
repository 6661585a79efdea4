"""Numba kernels of the enumerator: run decoding and the generic exact-key scoring (sums of
per-rank weights); a family with keys of its own brings its kernels in its own module
(``families/<family>_kernels.py``, e.g. AP's, RR's and ERR's).

All kernels take judged runs as a ``uint8`` array of shape (n_runs, N), column 0 being
rank 1, and write one key per run. Integer arithmetic only; no ``fastmath``.
Python orchestration lives in :mod:`irscale.enumerate.generic`; the plain-Python reference
of every key is the ``key_python`` of its key kind (:mod:`irscale.scales.measures.keys`),
and ``tests/naive.py`` holds references of the run-space kernels.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`; tests/test_interpreted.py).
INTERPRETABLE = ("decode_runs", "decode_ids", "encode_runs", "relevant_counts", "additive_keys")


@nb.njit(cache=True)
def decode_runs(start, count, levels, n, out):
    """Write the runs with ids start .. start+count-1 into ``out[:count]``.

    The run id is the base-``levels`` number whose most significant digit is rank 1
    (SPEC section 2), so consecutive ids are consecutive in lexicographic order.
    """
    for i in range(count):
        rid = start + i
        for k in range(n - 1, -1, -1):
            out[i, k] = rid % levels
            rid //= levels


@nb.njit(cache=True)
def decode_ids(ids, levels, n, out):
    """Write the runs with the given ids (any order) into ``out`` (uint8, (len(ids), n))."""
    for i in range(ids.shape[0]):
        rid = ids[i]
        for k in range(n - 1, -1, -1):
            out[i, k] = rid % levels
            rid //= levels


@nb.njit(cache=True)
def feasible_runs(n, caps, run, have, pos, out):
    """Continue writing the runs of length n with at most caps[g - 1] documents of each
    grade g >= 1 into ``out`` (uint8, (rows, n)), in increasing run id order (depth
    first, grades 0..G at every rank); returns the number of rows written (< rows only
    when the enumeration is finished; :func:`irscale.enumerate.runspace.feasible_space_size`
    counts them). The enumeration state lives in ``run`` (int64 (n,),
    grade tried at each rank), ``have`` (int64 (G + 1,), documents per grade in the
    current prefix) and ``pos`` (int64 (1,), the current rank, -1 when done); start with
    ``run[0] = -1``, ``have = 0``, ``pos[0] = 0``."""
    G = caps.shape[0]
    row = 0
    k = pos[0]
    while k >= 0 and row < out.shape[0]:
        if run[k] >= 1:                      # take back the grade tried last at rank k
            have[run[k]] -= 1
        run[k] += 1
        while run[k] >= 1 and run[k] <= G and have[run[k]] >= caps[run[k] - 1]:
            run[k] += 1
        if run[k] > G:                       # every grade tried: back to rank k - 1
            k -= 1
            continue
        if run[k] >= 1:
            have[run[k]] += 1
        if k == n - 1:
            for j in range(n):
                out[row, j] = run[j]
            row += 1
        else:
            k += 1
            run[k] = -1
    pos[0] = k
    return row


@nb.njit(cache=True)
def encode_runs(runs, levels):
    """Run ids of the given runs (inverse of :func:`decode_runs`)."""
    m, n = runs.shape
    out = np.empty(m, dtype=np.uint64)
    for i in range(m):
        rid = np.uint64(0)
        for k in range(n):
            rid = rid * np.uint64(levels) + np.uint64(runs[i, k])
        out[i] = rid
    return out


@nb.njit(cache=True)
def relevant_counts(runs):
    """Number of documents with relevance degree > 0 in each run (the stratum of binary
    RB-dependent measures)."""
    m, n = runs.shape
    out = np.empty(m, dtype=np.int64)
    for i in range(m):
        c = 0
        for k in range(n):
            if runs[i, k] > 0:
                c += 1
        out[i] = c
    return out


@nb.njit(cache=True)
def grade_count_codes(runs, levels):
    """Per-grade document counts (n_1..n_G) of each run packed into one integer,
    sum_g n_g * (N + 1)^(g - 1) (the stratum of graded RB-dependent measures; see
    :func:`irscale.enumerate.runspace.decode_count_codes`)."""
    m, n = runs.shape
    out = np.empty(m, dtype=np.int64)
    for i in range(m):
        c = 0
        for k in range(n):
            g = runs[i, k]
            if g > 0:
                c += (n + 1) ** (g - 1)
        out[i] = c
    return out


@nb.njit(cache=True)
def additive_keys(runs, weights, out):
    """key = sum_k weights[k, r_k], single 64-bit word (caller guarantees no overflow)."""
    m, n = runs.shape
    for i in range(m):
        acc = np.uint64(0)
        for k in range(n):
            acc += weights[k, runs[i, k]]
        out[i, 0] = acc


@nb.njit(cache=True)
def additive_keys_mw(runs, limbs, out):
    """key = sum_k weights[k, r_k] on several 64-bit words.

    ``limbs[k, g, j]`` is the j-th little-endian 32-bit limb of the weight; sums of up
    to 2**31 limbs cannot overflow the uint64 accumulators, carries are propagated at
    the end and pairs of limbs are packed into words, most significant word first.
    """
    m, n = runs.shape
    nl = limbs.shape[2]
    words = nl // 2
    acc = np.zeros(nl, dtype=np.uint64)
    mask = np.uint64(0xFFFFFFFF)
    for i in range(m):
        acc[:] = 0
        for k in range(n):
            g = runs[i, k]
            for j in range(nl):
                acc[j] += limbs[k, g, j]
        carry = np.uint64(0)
        for j in range(nl):
            v = acc[j] + carry
            acc[j] = v & mask
            carry = v >> np.uint64(32)
        for w in range(words):
            out[i, words - 1 - w] = acc[2 * w] | (acc[2 * w + 1] << np.uint64(32))
