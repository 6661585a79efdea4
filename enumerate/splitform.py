"""The split-form contract: a run's raw value from its prefix and its suffix.

Write a run id as ``p * S + s`` where ``p`` is the id of the first ``h`` ranks (the
prefix) and ``s`` the id of the last ``N - h`` ranks (the suffix), ``S = levels**(N-h)``.
A measure that has a split form gives the raw value of every run as

    raw(p, s) = A[p] + B[state[p], s]

where ``state[p]`` is a small summary of the prefix (the number of relevant documents for
AP, whether a relevant document was seen for RR, nothing for sums over ranks). Two tables
of 2**15 entries each then give the raw value of any of the 2**30 runs of length 30 with
two memory reads and one addition. The split enumerator (:mod:`irscale.enumerate.split`)
merges prefix and suffix lists in value order instead of scoring runs one by one, and the
lookups of big tables compute values from representative run ids the same way.

``exact``: raw values are exact integers below 2**53 whose order is the value order.
Otherwise raw values carry an absolute error of at most ``bound``, and ties and the order
of close raw values are decided with the exact keys ``KA[p] + KB[state[p], s]``
(multi-word integers, :mod:`irscale.enumerate.words`); when the order of distinct exact
keys is not the value order (``ordered_keys`` False: formal coefficients of logarithms),
``exact_raw(key)`` gives a key's raw value in high precision to order them.

The enumerator knows nothing else of the measure: a measure hands it a :class:`SplitForm`
(see :meth:`irscale.scales.measures.keys.KeySpec.split_form`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from irscale.enumerate.memory import available_memory
from irscale.enumerate.runspace import all_runs
from irscale.errors import BuildTooLargeError

#: Raw values below this bound are exact in float64.
EXACT_LIMIT = 2 ** 53
EMPTY_KEYS = np.zeros((0, 0), dtype=np.uint64)


@dataclass
class SplitForm:
    """Prefix/suffix tables of one measure (see the module docstring).

    ``stratified``: the enumerator keeps, per distinct value, the numbers of nonzero
    degrees (relevant documents) of its runs, for tables serving every recall base.
    ``label`` names the measure in messages and checkpoints."""

    n: int
    levels: int
    h: int
    A: np.ndarray            # float64 (P,)
    state: np.ndarray        # int64 (P,)
    B: np.ndarray            # float64 (n_states, S)
    exact: bool
    bound: float             # absolute bound on raw errors (0 when exact)
    KA: np.ndarray           # uint64 (P, W) exact prefix keys (empty when exact)
    KB: np.ndarray           # uint64 (n_states, S, W)
    ordered_keys: bool       # exact key order is value order
    stratified: bool = False
    label: str = ""
    exact_raw: Callable[[int], object] | None = None   # key -> raw value in high precision (mpmath)
    digits: int = 60         # decimal digits exact_raw is evaluated with

    @property
    def S(self) -> int:  # noqa: N802  (S and P name the suffix and prefix counts, as in the docs)
        return self.levels ** (self.n - self.h)

    @property
    def P(self) -> int:  # noqa: N802
        return self.levels ** self.h

    @property
    def words(self) -> int:
        return self.KA.shape[1] if self.KA.ndim == 2 else 0

    def raw_of_ids(self, ids: np.ndarray) -> np.ndarray:
        """Raw values (float64) of the runs with the given ids."""
        ids = np.asarray(ids, dtype=np.int64)
        p, s = ids // self.S, ids % self.S
        return self.A[p] + self.B[self.state[p], s]


def default_h(n: int) -> int:
    """The default prefix length: half the run."""
    return n // 2


def padded_parts(levels: int, n: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """All prefixes and all suffixes as full-length runs (uint8 (levels**h, n) and
    (levels**(n-h), n)) with zeros elsewhere, in id order: what a measure scores to fill
    A and B. Raises :class:`~irscale.errors.BuildTooLargeError` when they would take more
    memory than is available (checked before anything is allocated)."""
    need = (levels ** h + levels ** (n - h)) * n
    free = available_memory()
    if free is not None and need > free:
        raise BuildTooLargeError(f"the prefixes and suffixes of {levels}^{n} runs take {need / 2 ** 30:.1f} GiB, "
                                 f"more than the {free / 2 ** 30:.1f} GiB of memory available")
    pre = np.zeros((levels ** h, n), dtype=np.uint8)
    pre[:, :h] = all_runs(levels, h)
    suf = np.zeros((levels ** (n - h), n), dtype=np.uint8)
    suf[:, h:] = all_runs(levels, n - h)
    return pre, suf
