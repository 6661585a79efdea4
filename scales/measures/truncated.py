"""Measures over the truncated run space: every ranking of length 0..N, the empty one
included (SPEC_MEASURES section 5, seed "Ranking Interruptus"; ids and arrays in
:mod:`irscale.enumerate.truncated`).

Tables cover that space (``run_space = "truncated"``) with exact fractions or formal keys
(:mod:`irscale.scales.measures.fractional`). The utilities do not depend on the recall
base; OIE does (one table per topic, over its feasible rankings).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from irscale.enumerate import runspace
from irscale.enumerate.truncated import (
    PAD,
    pad_rankings,
    truncated_ids,
    truncated_ranking_chunks,
    truncated_rankings_of_ids,
    truncated_space_size,
    validate_rankings,
)
from irscale.scales.measures.fractional import FractionMeasure
from irscale.scales.measures.measure import RecallBase

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclasses.dataclass(frozen=True, repr=False)
class TruncatedMeasure(FractionMeasure):
    """Base class of measures over truncated rankings (exact values, no recall base unless
    a family says so)."""

    rb_dependent: ClassVar[bool] = False
    run_space: ClassVar[str] = "truncated"

    def check_defined(self, rb: RecallBase) -> None:
        self.check_rb(rb)

    def space_size(self, rb: tuple[int, ...] | None) -> int:
        if rb is None:
            return truncated_space_size(self.levels, self.n)
        return sum(runspace.feasible_space_size(length, rb) if length else 1 for length in range(self.n + 1))

    def space_chunks(self, rb: tuple[int, ...] | None, chunk: int) -> Iterator[np.ndarray]:
        if rb is None:
            yield from truncated_ranking_chunks(self.levels, self.n, chunk)
            return
        yield np.full((1, self.n), PAD, dtype=np.int8)
        for length in range(1, self.n + 1):
            for runs in runspace.feasible_run_chunks(length, rb, chunk):
                out = np.full((runs.shape[0], self.n), PAD, dtype=np.int8)
                out[:, :length] = runs
                yield out

    def id_count(self) -> int:
        return truncated_space_size(self.levels, self.n)

    def runs_of_ids(self, ids: ArrayLike) -> np.ndarray:
        return truncated_rankings_of_ids(ids, self.levels, self.n)

    def ids_of_runs(self, runs: np.ndarray) -> np.ndarray:
        return truncated_ids(runs, self.levels)

    def judged_ids(self, grades: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Truncated ids of judged rankings cut at their own length (at most N)."""
        own = np.minimum(lengths, self.n)
        ranked = np.where(np.arange(self.n)[None, :] < own[:, None], np.asarray(grades, np.int64), PAD)
        return truncated_ids(ranked, self.levels)

    def check_runs(self, runs: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        """Rankings as an int8 (m, N) array padded with -1 after their end. Rankings are
        given as lists of their own lengths (one ranking, or a list of them; padded here,
        and -1 in a list is a grade outside REL) or as an (m, N) integer array padded with
        -1 after each ranking's end. Raises :class:`~irscale.errors.RunError` naming the
        first bad ranking: longer than N, items that are not integer grades (booleans,
        strings, non-integral floats, nested lists), grades outside REL, or more
        documents of a grade than the topic ``rb`` has."""
        padded = pad_rankings(runs, self.n, f"rankings of {self}", levels=self.levels)
        grades, valid = validate_rankings(padded, self.levels, n=self.n)
        arr = np.where(valid, grades, PAD).astype(np.int8)
        self.recall_base.refuse_infeasible(arr, rb, "ranking")
        return arr
