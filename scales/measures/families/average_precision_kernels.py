"""The scoring kernel of AP: its exact key (the numerator over lcm(1..N)).

Plain-Python twin: ``ap_key`` of ``tests/kernel_references.py``. Loaded lazily, by the
name the family's key spec gives (``average_precision_kernels:ap_keys``), when runs are scored.
"""
from __future__ import annotations

import numba as nb
import numpy as np

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`).
INTERPRETABLE = ("ap_keys",)


@nb.njit(cache=True)
def ap_keys(runs, weights, out):
    """AP numerator: key = sum_k [r_k > 0] * (relevant in top k) * weights[k, 1]
    with weights[k, 1] = lcm(1..N) / k."""
    m, n = runs.shape
    for i in range(m):
        acc = np.uint64(0)
        seen = np.uint64(0)
        for k in range(n):
            if runs[i, k] > 0:
                seen += np.uint64(1)
                acc += seen * weights[k, 1]
        out[i, 0] = acc
