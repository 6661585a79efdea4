"""The scoring kernel of RR: N + 1 - the rank of the first relevant document.

Plain-Python twin: ``rr_key`` of ``tests/kernel_references.py``. Loaded lazily, by the
name the family's key spec gives (``reciprocal_rank_kernels:rr_keys``), when runs are scored.
"""
from __future__ import annotations

import numba as nb

#: Kernels whose Python source gives the same results run by the interpreter: small calls
#: of them need no compiling (:mod:`irscale.enumerate.interpreted`).
INTERPRETABLE = ("rr_keys",)


@nb.njit(cache=True)
def rr_keys(runs, weights, out):
    """RR key: N + 1 - (rank of the first relevant document), 0 if none. A document is
    relevant when its degree is >= ``weights[0, 0]`` (1 when ``weights`` is empty)."""
    m, n = runs.shape
    threshold = weights[0, 0] if weights.shape[0] > 0 else 1
    for i in range(m):
        key = 0
        for k in range(n):
            if runs[i, k] >= threshold:
                key = n - k
                break
        out[i, 0] = key
