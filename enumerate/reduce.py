"""Reduction of scored runs to sorted distinct keys with multiplicities.

Keys of several 64-bit words and the optional stratum (the number of relevant documents
of a run, for recall-base dependent measures) are packed into one sortable 1-D array:
a single ``uint64`` when they fit, otherwise big-endian byte strings (numpy compares
fixed-width byte strings like unsigned big integers). Sorting that array orders rows by
(stratum, key).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class KeyCodec:
    """Packs (stratum, key words) rows into a sortable 1-D array and back."""

    words: int
    key_bits: int
    has_stratum: bool
    stratum_bits: int = 8

    @property
    def packed_u64(self) -> bool:
        if not self.has_stratum:
            return self.words == 1
        return self.key_bits + self.stratum_bits <= 64

    def encode(self, keys: np.ndarray, strata: np.ndarray | None) -> np.ndarray:
        if self.packed_u64:
            out = keys[:, -1].copy()
            if self.has_stratum:
                out |= strata.astype(np.uint64) << np.uint64(self.key_bits)
            return out
        cols = [strata.astype(np.uint64)[:, None]] if self.has_stratum else []
        rows = np.ascontiguousarray(np.concatenate(cols + [keys], axis=1).astype(">u8"))
        width = 8 * rows.shape[1]
        return rows.view(f"S{width}").reshape(-1)

    def decode(self, packed: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        if self.packed_u64:
            if self.has_stratum:
                mask = np.uint64((1 << self.key_bits) - 1)
                keys = (packed & mask)[:, None]
                strata = (packed >> np.uint64(self.key_bits)).astype(np.int64)
                return keys, strata
            return packed[:, None].copy(), None
        ncols = self.words + (1 if self.has_stratum else 0)
        # numpy drops trailing NUL bytes of 'S' items on access, so view the buffer instead
        raw = np.frombuffer(np.ascontiguousarray(packed).tobytes(), dtype=">u8").reshape(-1, ncols)
        raw = raw.astype(np.uint64)
        if self.has_stratum:
            return np.ascontiguousarray(raw[:, 1:]), raw[:, 0].astype(np.int64)
        return np.ascontiguousarray(raw), None


def distinct_counts(packed: np.ndarray, counts: np.ndarray | None = None, minids: np.ndarray | None = None,
                    base: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted distinct entries of ``packed``, how many runs each stands for, and the
    smallest run id behind each.

    ``counts``/``minids`` give the multiplicity and smallest run id of every input entry;
    when None, entry i is the single run ``base + i``.
    """
    if packed.shape[0] == 0:
        return packed, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if counts is None:
        uniq, first, cnt = np.unique(packed, return_index=True, return_counts=True)
        return uniq, cnt.astype(np.int64), base + first.astype(np.int64)
    order = np.argsort(packed, kind="stable")
    s = packed[order]
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1])))
    return (s[starts], np.add.reduceat(counts[order], starts).astype(np.int64),
            np.minimum.reduceat(minids[order], starts).astype(np.int64))


class Accumulator:
    """Merges chunk reductions, keeping memory to (merge threshold + distinct output)."""

    def __init__(self, merge_every: int = 1 << 22):
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.pending = 0
        self.merge_every = merge_every

    def add(self, packed: np.ndarray, counts: np.ndarray, minids: np.ndarray) -> None:
        self.parts.append((packed, counts, minids))
        self.pending += packed.shape[0]
        if self.pending >= self.merge_every and len(self.parts) > 1:
            self._merge()

    def _merge(self) -> None:
        merged = distinct_counts(*(np.concatenate([p[i] for p in self.parts]) for i in range(3)))
        self.parts = [merged]
        self.pending = merged[0].shape[0]
        # keep merging cheap when the output itself is large
        self.merge_every = max(self.merge_every, 2 * self.pending)

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(self.parts) > 1:
            self._merge()
        return self.parts[0]
