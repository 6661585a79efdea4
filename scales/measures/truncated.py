"""Measures over the truncated run space: every ranking of length 0..N, the empty one
included (SPEC_MEASURES section 5, seed "Ranking Interruptus").

A ranking of its own length n <= N is an array row of grades 0..G padded with -1 after
its end; its id orders rankings by length, then by their base-(G+1) number
(:func:`irscale.enumerate.runspace.truncated_ids`), so ids 0 .. sum_n (G+1)^n - 1 are the
whole space. Tables cover that space (attr ``run_space = "truncated"``) with exact
fractions (:mod:`irscale.scales.tables.fraction`) or formal keys
(:mod:`irscale.scales.tables.formal`: DCGU, OIE, utilities whose keys exceed 62 bits).
The utilities do not depend on the recall base; OIE does (one table per topic, over its
feasible rankings).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from irscale.errors import RecallBaseError, RunError
from irscale.scales.measures.fractional import FractionMeasure


@dataclass(frozen=True, repr=False)
class TruncatedMeasure(FractionMeasure):
    """Base class of the effort-aware utilities (exact fractions over truncated rankings)."""

    rb_dependent: ClassVar[bool] = False
    run_space: ClassVar[str] = "truncated"

    def check_rb(self, rb):
        if rb is not None:
            raise RecallBaseError(f"{self} does not depend on the recall base; do not give rb (got rb={rb})")
        return None

    def table_rb(self, rb):
        return self.check_rb(rb)

    def check_defined(self, counts) -> None:
        self.check_rb(counts)

    def space_size(self, rb) -> int:
        from irscale.enumerate.runspace import truncated_space_size
        return truncated_space_size(self.levels, self.n)

    def space_chunks(self, rb, chunk: int):
        from irscale.enumerate.runspace import truncated_ranking_chunks
        return truncated_ranking_chunks(self.levels, self.n, chunk)

    @property
    def n_ids(self) -> int:
        return self.id_count()

    def id_count(self) -> int:
        from irscale.enumerate.runspace import truncated_space_size
        return truncated_space_size(self.levels, self.n)

    def runs_of_ids(self, ids) -> np.ndarray:
        from irscale.enumerate.runspace import truncated_rankings_of_ids
        return truncated_rankings_of_ids(ids, self.levels, self.n)

    def judged_ids(self, grades, lengths) -> np.ndarray:
        """Truncated ids of judged rankings cut at their own length (at most N)."""
        from irscale.enumerate.runspace import PAD, truncated_ids
        own = np.minimum(lengths, self.n)
        ranked = np.where(np.arange(self.n)[None, :] < own[:, None], np.asarray(grades, np.int64), PAD)
        return truncated_ids(ranked, self.levels)

    def check_runs(self, runs, rb) -> np.ndarray:
        """Rankings as an int8 (m, N) array padded with -1 after their end; a shorter
        list (one ranking, or lists of rankings) is padded here."""
        from irscale.enumerate.runspace import PAD
        if isinstance(runs, (list, tuple)) and (not runs or not isinstance(runs[0], (list, tuple, np.ndarray))):
            runs = [runs]
        if isinstance(runs, (list, tuple)):
            if any(len(r) > self.n for r in runs):
                raise RunError(f"rankings of {self} have at most N = {self.n} documents")
            runs = [list(r) + [PAD] * (self.n - len(r)) for r in runs]
        from irscale.enumerate.runspace import validate_rankings
        grades, valid = validate_rankings(runs, self.levels, n=self.n)
        return np.where(valid, grades, PAD).astype(np.int8)
