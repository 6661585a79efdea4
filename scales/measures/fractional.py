"""Measures whose exact values are fractions computed per topic: the base class of Twist
and the CRP indicators (SPEC_MEASURES sections 3 and 4).

Their values depend on the topic's per-grade counts ``c = (c_1..c_G)`` in a non-linear
way (the ideal and full-scale runs move with every count), so no integer key serves all
topics: a table is built per count vector ``c`` (not capped at N: these measures need
``N >= 2 RB``) from the exact fractions of the runs feasible for it
(:mod:`irscale.scales.tables.fraction`). Runs hold grades 0..G, ``G`` being the ``grades``
parameter (default 1: binary relevance, where ``rb`` may be given as an integer).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from irscale.errors import MeasureError, RecallBaseError
from irscale.scales.measures.measure import MAX_RB, Measure, Param

#: The ``grades`` parameter: the top grade G (runs hold grades 0..G).
GRADES = Param("grades", "grade", "top relevance grade G (runs hold grades 0..G; 1 = binary)", default=1)


@dataclass(frozen=True, repr=False)
class FractionMeasure(Measure):
    """A measure with exact rational values per topic (see the module docstring).

    Subclasses implement :meth:`fractions_many` (numpy, exact int64 numerators and
    denominators) and :meth:`exact_value` (the scalar exact reference)."""

    rb_dependent: ClassVar[bool] = True
    value_kind: ClassVar[str] = "fraction"
    grades: int = 1

    @property
    def levels(self) -> int:
        return self.grades + 1

    def check_rb(self, rb):
        """The per-grade counts ``(c_1..c_G)`` as a tuple (an int is accepted when G = 1)."""
        if rb is None:
            raise RecallBaseError(f"{self} depends on the topic: give its per-grade counts (c_1..c_{self.grades}) "
                                  f"of judged documents" + (" (or the recall base, an integer)" if self.grades == 1
                                                            else ""))
        if self.grades == 1 and isinstance(rb, (int, np.integer)) and not isinstance(rb, bool):
            rb = (int(rb),)
        counts = tuple(rb) if isinstance(rb, (tuple, list, np.ndarray)) else None
        if (counts is None or len(counts) != self.grades
                or any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0 for c in counts)
                or not 1 <= sum(counts) <= MAX_RB):
            raise RecallBaseError(f"{self}: give the recall base as the counts (c_1..c_{self.grades}) of judged "
                                  f"documents per grade 1..{self.grades}, at least one positive; got {rb!r}")
        return tuple(int(c) for c in counts)

    def table_rb(self, rb):
        """Tables are keyed by the counts themselves (no cap: values depend on every count)."""
        return self.check_rb(rb)

    def common_rb(self):
        """None: these measures have no all-runs (``common``) scale (they are undefined for
        recall bases above N/2)."""
        return None

    def key_spec(self):
        raise MeasureError(f"{self} has exact values computed run by run (tables held in memory), not an "
                           f"integer key; this command handles measures with integer keys")

    # -- implemented by subclasses -----------------------------------------------------
    def fractions_many(self, runs: np.ndarray, counts: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Exact values of feasible ``runs`` (uint8 (m, N)) for the topic ``counts``: reduced
        int64 numerators and positive denominators (a denominator 0 with numerator -1 stands
        for minus infinity). Raises :class:`~irscale.errors.RecallBaseError` when the measure
        is undefined for this topic and cutoff."""
        raise NotImplementedError

    def exact_value(self, run, rb=None) -> Fraction:
        raise NotImplementedError

    # -- the run space of the tables (feasible runs of the topic; overridden for truncated
    # -- rankings, irscale.scales.measures.truncated) ---------------------------------------
    def space_size(self, rb) -> int:
        """Number of runs a table for ``rb`` covers (the runs feasible for the counts)."""
        from irscale.enumerate.runspace import feasible_space_size
        return feasible_space_size(self.n, rb)

    def space_chunks(self, rb, chunk: int):
        """The runs of the table for ``rb`` as arrays of up to ``chunk`` rows."""
        from irscale.enumerate.runspace import feasible_run_chunks
        return feasible_run_chunks(self.n, rb, chunk)

    @property
    def n_ids(self) -> int:
        """Number of run ids (ids are 0 .. n_ids - 1)."""
        return self.levels ** self.n

    def runs_of_ids(self, ids) -> np.ndarray:
        from irscale.enumerate.runspace import runs_of_ids
        return runs_of_ids(ids, self.levels, self.n)

    def check_runs(self, runs, rb) -> np.ndarray:
        """Validated runs (uint8 (m, N)); runs with more documents of a grade than the topic
        has raise :class:`~irscale.errors.RunError`."""
        from irscale.enumerate.runspace import grade_counts_of_runs, refuse_infeasible, validate_runs
        arr = validate_runs(runs, self.levels, self.n)
        refuse_infeasible(grade_counts_of_runs(arr, self.grades), rb)
        return arr

    def check_defined(self, counts) -> None:
        """Raise :class:`~irscale.errors.RecallBaseError` when the measure is undefined for a
        topic with these per-grade counts at this cutoff (Twist and CRP need N >= 2 RB)."""
        self.fractions_many(np.zeros((1, self.n), np.uint8), self.check_rb(counts))

    # -- formal measures (value_kind = "formal"; irscale.scales.tables.formal) ----------------
    def formal_many(self, runs: np.ndarray, counts) -> np.ndarray:
        """Exact values of ``runs`` as integer coefficients (int64 (m, C)) of the units
        :meth:`units_mp`: value = sum_j keys[:, j] * unit_j."""
        raise NotImplementedError

    def coords(self, counts) -> list[str]:
        """Labels of the C units (stored with the table)."""
        raise NotImplementedError

    def units_mp(self, counts) -> list:
        """The C units as mpmath numbers at the current precision."""
        raise NotImplementedError

    def units_float(self, counts) -> np.ndarray:
        import mpmath

        from irscale.scales.measures.keys import MP_DIGITS
        with mpmath.workdps(MP_DIGITS):
            return np.array([float(u) for u in self.units_mp(counts)], dtype=np.float64)

    def formal_floats(self, keys: np.ndarray, counts) -> np.ndarray:
        """Float64 values of formal keys (default: the float sum of coefficients times
        units)."""
        return keys @ self.units_float(counts) if keys.size else np.zeros(keys.shape[0])

    def formal_error_bound(self, keys: np.ndarray, counts) -> float:
        """Bound on |formal_floats - exact value| over ``keys`` (default: the float sum's)."""
        from irscale.scales.measures.keys import U
        if keys.size == 0:
            return 0.0
        terms = np.abs(keys).astype(np.float64) @ np.abs(self.units_float(counts))
        return float(2 * (keys.shape[1] + 2) * U * terms.max())

    def values_many(self, runs: np.ndarray, counts: tuple) -> np.ndarray:
        """Float64 values (fractions: correctly rounded quotients, -inf for minus infinity;
        formal keys: the float sum of coefficients times units)."""
        if self.value_kind == "formal":
            return self.formal_floats(self.formal_many(runs, counts), counts)
        num, den = self.fractions_many(runs, counts)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den == 0, -np.inf, num / np.where(den == 0, 1, den))
