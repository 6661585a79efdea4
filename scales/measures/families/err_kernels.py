"""The scoring kernel of ERR: its exact key, a sum of products of per-grade weights.

Plain-Python twin: ``err_key`` of ``tests/kernel_references.py``. Loaded lazily, by the
name the family's key spec gives (``err_kernels:err_keys``), when runs are scored.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`).
INTERPRETABLE = ()


@nb.njit(cache=True)
def err_keys(runs, weights, out):
    """ERR keys: sum_k weights[k, r_k] * prod_{j<k} weights[N, r_j] (see
    :mod:`irscale.scales.measures.families.err`); one 64-bit word."""
    n = runs.shape[1]
    for i in range(runs.shape[0]):
        key = np.uint64(0)
        prod = np.uint64(1)
        for k in range(n):
            g = runs[i, k]
            key += weights[k, g] * prod
            prod *= weights[n, g]
        out[i, 0] = key
