"""Jobs and the cores they run on: :func:`available_cores` says how many workers a build
may use, :func:`score` runs a scoring kernel, and a :class:`ScoringJob` is what a worker
needs to score runs for one measure (picklable, measure-agnostic; built by
:meth:`irscale.scales.measures.keyed.KeyMeasure.scoring_job`)."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.reduce import KeyCodec

kernels = tiered(lazy_module("irscale.enumerate.kernels"))     # small calls run interpreted


def available_cores() -> int:
    """The number of CPU cores this process may run on: the size of its CPU affinity set
    (``os.sched_getaffinity``, which ``taskset``, cgroup cpusets and batch schedulers such
    as Slurm restrict) where the platform has one, else ``os.cpu_count()``; at least 1.
    The default number of workers of ``irscale build`` and
    :func:`~irscale.store.fill.build_store` (and of other commands that build tables)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):              # macOS, Windows: no affinity
        return max(1, os.cpu_count() or 1)

#: The built-in scoring kernels by name (functions of :mod:`irscale.enumerate.kernels`).
KERNELS = {
    "additive": "additive_keys",
    "additive_mw": "additive_keys_mw",
    "ap": "ap_keys",
    "rr": "rr_keys",
    "err": "err_keys",
}


def score(kernel: str | Callable[[np.ndarray, np.ndarray, np.ndarray], None], words: int, weights: np.ndarray,
          runs: np.ndarray) -> np.ndarray:
    """Keys of ``runs`` (uint8, shape (m, N)) as a (m, words) uint64 array.

    ``kernel`` is the name of a built-in kernel (:data:`KERNELS`) or any numba-jitted
    function with the signature ``(runs, weights, out)``: a measure may bring its own
    kernel without changes to the enumerator.
    """
    out = np.empty((runs.shape[0], words), dtype=np.uint64)
    fn = getattr(kernels, KERNELS[kernel]) if isinstance(kernel, str) else kernel
    fn(runs, weights, out)
    return out

#: Strata of scored runs: none, the number of nonzero degrees (relevant documents), or
#: the code of the per-grade counts (:func:`irscale.enumerate.kernels.grade_count_codes`).
STRATA = (None, "relevant", "grade_codes")


@dataclass(frozen=True)
class ScoringJob:
    """Everything a worker needs to score runs for one measure (picklable): the kernel
    (a name of :data:`KERNELS` or a numba function), its weights,
    the key codec and which strata to keep (:data:`STRATA`)."""

    kernel: object
    words: int
    weights: np.ndarray
    codec: KeyCodec
    strata: str | None = None

    def __post_init__(self) -> None:
        if self.strata not in STRATA:
            raise ValueError(f"strata must be one of {STRATA}, got {self.strata!r}")
