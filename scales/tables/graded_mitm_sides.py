"""The entries of the two sides of a graded meet-in-the-middle oracle
(:mod:`irscale.scales.tables.graded_mitm`): a group's options (:class:`Group`), a side's
partial tuples sorted by value (:class:`Side`), Pareto-minimal count vectors."""
from __future__ import annotations

import math

import numpy as np

#: Sides with at most this many codes, or this many per entry, find a run's entry in a table of every code.
DIRECT_CODES = 1 << 22
DIRECT_PER_ENTRY = 4


def pareto(vectors: set) -> tuple:
    """The Pareto-minimal vectors of a set (componentwise <=), sorted."""
    kept: list = []
    for v in sorted(vectors, key=lambda x: (sum(x), x)):
        if not any(all(a <= b for a, b in zip(u, v)) for u in kept):
            kept.append(v)
    return tuple(sorted(kept))


class Group:
    """One group of ranks: ``keys`` (the distinct parts t, sorted), ``floats`` (their values
    (X_m / L) t, correctly rounded), ``classes`` (the antichain class of each option)."""

    def __init__(self, ranks: list[int], m: int | None, weights: list[int], L: int, keys: list[int],
                 floats: np.ndarray, classes: np.ndarray):
        self.ranks, self.m, self.weights, self.L = ranks, m, weights, L
        self.keys = np.array(keys, np.int64)
        self.floats, self.classes = floats, classes

    def __len__(self) -> int:
        return self.keys.shape[0]


class Side:
    """Entries of one side sorted by value: ``s``, ``code`` (mixed radix over the side's
    groups, first most significant), ``cls`` (antichain class); a run's entry is found by
    its code (:meth:`find`: a table of every code where the codes are few, else the codes
    sorted)."""

    def __init__(self, groups: list[int], radices: list[int], s: np.ndarray, code: np.ndarray, cls: np.ndarray):
        self.groups, self.radices = groups, radices
        self.s, self.code, self.cls = s, code, cls
        space = math.prod(radices)
        if space <= max(DIRECT_CODES, DIRECT_PER_ENTRY * len(s)):
            self._at = np.full(space, -1, np.int64)
            self._at[code] = np.arange(len(s))
        else:
            self._at = None
            self._by_code = np.argsort(code)
            self._codes = code[self._by_code]

    def __len__(self) -> int:
        return self.s.shape[0]

    def find(self, codes: np.ndarray) -> np.ndarray:
        """Positions of the entries with these codes (-1 for codes not present)."""
        codes = np.asarray(codes, np.int64)
        if self._at is not None:
            inside = (codes >= 0) & (codes < self._at.shape[0])
            return np.where(inside, self._at[np.where(inside, codes, 0)], -1)
        at = np.minimum(np.searchsorted(self._codes, codes), max(len(self._codes) - 1, 0))
        found = self._codes[at] == codes if len(self._codes) else np.zeros(codes.shape, bool)
        return np.where(found, self._by_code[at], -1)

    def digits(self, pos: np.ndarray) -> np.ndarray:
        """The option of every group of the entries at ``pos`` (int64 (len, groups))."""
        rest = self.code[np.asarray(pos, np.int64)]
        out = np.zeros((rest.shape[0], len(self.radices)), np.int64)
        for j in range(len(self.radices) - 1, -1, -1):
            out[:, j] = rest % self.radices[j]
            rest = rest // self.radices[j]
        return out


def classes_of(cls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The classes present (sorted) and the index of each entry's among them (np.unique with
    return_inverse, in linear time for small class ids)."""
    present = np.flatnonzero(np.bincount(cls))
    index = np.zeros(int(cls.max()) + 1, np.int64)
    index[present] = np.arange(present.shape[0])
    return present, index[cls]
