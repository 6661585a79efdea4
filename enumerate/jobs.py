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

#: The generic scoring kernels by name (functions of :mod:`irscale.enumerate.kernels`).
KERNELS = {
    "additive": "additive_keys",
    "additive_mw": "additive_keys_mw",
}
_kernel_modules: dict[str, object] = {}        # module name -> its tiered view (one per process)


def kernel_of(kernel: str | Callable) -> Callable:
    """The scoring function ``kernel`` names: a generic kernel (:data:`KERNELS`), or
    ``"module:function"``, a kernel of a family's own module (imported on first use, its
    ``INTERPRETABLE`` kernels tiered); a function is itself."""
    if not isinstance(kernel, str):
        return kernel
    if kernel in KERNELS:
        return getattr(kernels, KERNELS[kernel])
    module, _, name = kernel.partition(":")
    if not name:
        raise ValueError(f"unknown scoring kernel {kernel!r}: a name of KERNELS or 'module:function'")
    view = _kernel_modules.get(module)
    if view is None:
        view = _kernel_modules.setdefault(module, tiered(lazy_module(module)))
    return getattr(view, name)


def score(kernel: str | Callable[[np.ndarray, np.ndarray, np.ndarray], None], words: int, weights: np.ndarray,
          runs: np.ndarray) -> np.ndarray:
    """Keys of ``runs`` (uint8, shape (m, N)) as a (m, words) uint64 array.

    ``kernel`` names a generic kernel (:data:`KERNELS`) or a family's
    (``"module:function"``), or is any numba-jitted function with the signature ``(runs,
    weights, out)``: a measure brings its own kernel without changes to the enumerator
    (:func:`kernel_of`).
    """
    out = np.empty((runs.shape[0], words), dtype=np.uint64)
    kernel_of(kernel)(runs, weights, out)
    return out

#: Strata of scored runs: none, the number of nonzero degrees (relevant documents), or
#: the code of the per-grade counts (:func:`irscale.enumerate.kernels.grade_count_codes`).
STRATA = (None, "relevant", "grade_codes")


@dataclass(frozen=True)
class ScoringJob:
    """Everything a worker needs to score runs for one measure (picklable): the kernel
    (a name :func:`kernel_of` knows, or a numba function), its weights,
    the key codec and which strata to keep (:data:`STRATA`)."""

    kernel: object
    words: int
    weights: np.ndarray
    codec: KeyCodec
    strata: str | None = None

    def __post_init__(self) -> None:
        if self.strata not in STRATA:
            raise ValueError(f"strata must be one of {STRATA}, got {self.strata!r}")
