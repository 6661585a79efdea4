"""Measures whose exact values are computed run by run for one topic: the base classes of
Twist, the CRP indicators, R-precision, the utilities and OIE (SPEC_MEASURES sections 3-5).

Their values depend on the topic's per-grade counts ``c = (c_1..c_G)`` in a way no single
integer key serves for all topics (the ideal and full-scale runs move with every count),
so a table is built per count vector ``c`` (not capped at N) from the exact values of the
runs feasible for it (at most c_g documents of grade g). Runs hold grades 0..G, ``G``
being the ``grades`` parameter (default 1: binary relevance, where ``rb`` may be given as
an integer).

Exact values are either reduced fractions (:class:`FractionMeasure`,
:meth:`FractionMeasure.fractions_many`; tables of layout ``fraction``) or integer
coefficients of fixed irrational units such as ``1 / log2 m`` or ``ln q``
(:class:`FormalValues`; tables of layout ``formal``).
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

import mpmath
import numpy as np

from irscale.enumerate import runspace
from irscale.scales.measures.keys import MP_DIGITS, U
from irscale.scales.measures.measure import MAX_N, Measure, RecallBase
from irscale.scales.measures.recall_base import NoRecallBase, PerGradeCounts, RecallBasePolicy

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclasses.dataclass(frozen=True, repr=False)
class FractionMeasure(Measure):
    """A measure with exact rational values per topic (see the module docstring).

    Subclasses implement :meth:`fractions_many` (numpy, exact int64 numerators and
    denominators) and :meth:`exact_value` (the scalar exact reference)."""

    rb_dependent: ClassVar[bool] = True
    grades: int = 1

    @property
    def levels(self) -> int:
        return self.grades + 1

    @property
    def layout(self) -> str:
        return "fraction"

    @functools.cached_property
    def recall_base(self) -> RecallBasePolicy:
        """Per-grade counts (an int accepted when G = 1), tables keyed by the counts
        themselves (no cap: values depend on every count) and no all-runs (``common``)
        scale: one table per topic."""
        if not self.rb_dependent:
            return NoRecallBase(str(self), self.n)
        return PerGradeCounts(str(self), self.n, self.grades, capped=False)

    # -- implemented by families -------------------------------------------------------
    def fractions_many(self, runs: np.ndarray, rb: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Exact values of feasible ``runs`` (uint8 (m, N)) for the topic ``rb`` (per-grade counts): reduced
        int64 numerators and positive denominators (a denominator 0 with numerator -1 stands
        for minus infinity). Raises :class:`~irscale.errors.RecallBaseError` when the measure
        is undefined for this topic and cutoff."""
        raise NotImplementedError

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        raise NotImplementedError

    # -- the run space of its tables ---------------------------------------------------------
    def space_size(self, rb: tuple[int, ...]) -> int:
        """Number of runs a table for ``rb`` covers (the runs feasible for the counts)."""
        return runspace.feasible_space_size(self.n, rb)

    def table_runs(self, table_rb: tuple[int, ...] | None = None) -> int:
        """Runs of the table of ``table_rb`` (None: the common one, where there is one)."""
        return self.space_size(self.table_rbs([table_rb])[0])

    def space_chunks(self, rb: tuple[int, ...], chunk: int) -> Iterator[np.ndarray]:
        """The runs of the table for ``rb`` as arrays of up to ``chunk`` rows."""
        return runspace.feasible_run_chunks(self.n, rb, chunk)

    def check_runs(self, runs: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        """Validated runs (uint8 (m, N)); runs with more documents of a grade than the topic
        has raise :class:`~irscale.errors.RunError`."""
        arr = runspace.validate_runs(runs, self.levels, self.n, label=str(self))
        self.recall_base.refuse_infeasible(arr, rb)
        return arr

    def check_defined(self, rb: RecallBase) -> None:
        """Raise :class:`~irscale.errors.RecallBaseError` when the measure is undefined for a
        topic with these per-grade counts at this cutoff (Twist and CRP need N >= 2 RB)."""
        self.fractions_many(np.zeros((1, self.n), np.uint8), self.check_rb(rb))

    # -- values ------------------------------------------------------------------------------
    def values_many(self, runs: np.ndarray, rb: tuple[int, ...] | None) -> np.ndarray:
        """Float64 values (correctly rounded quotients, -inf for minus infinity)."""
        num, den = self.fractions_many(runs, rb)
        return fraction_floats(np.asarray(num), np.asarray(den))

    def values_of_ids(self, ids: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        rb = self.check_rb(rb)
        return self.values_many(self.runs_of_ids(np.asarray(ids, dtype=np.int64).reshape(-1)), rb)

    def values_of_judged(self, grades: np.ndarray, lengths: np.ndarray, rb: RecallBase = None) -> np.ndarray:
        """Raw values of judged rankings; beyond the run spaces with scales (families with
        ``raw_any_cutoff``) straight from the rankings' exact fractions."""
        if self.has_scales and self.n <= MAX_N:                 # run ids (closed forms have none past N = 32)
            return super().values_of_judged(grades, lengths, rb)
        return self.values_many(np.asarray(grades), self.check_rb(rb))


def fraction_floats(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den in float64 (correctly rounded), -inf where den = 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, -np.inf, num / np.where(den == 0, 1, den))


class FormalValues:
    """Mixin of measures whose exact values are integer coefficients (int64 (m, C)) of C
    fixed real units (tables of layout ``formal``): value = sum_j keys[:, j] * unit_j.
    Families implement :meth:`formal_many`, :meth:`coords` and :meth:`units_mp`."""

    @property
    def layout(self) -> str:
        return "formal"

    def formal_many(self, runs: np.ndarray, rb: tuple[int, ...] | None) -> np.ndarray:
        """Exact values of ``runs`` as integer coefficients (int64 (m, C)) of the units
        :meth:`units_mp`."""
        raise NotImplementedError

    def coords(self, rb: tuple[int, ...] | None) -> list[str]:
        """Labels of the C units (stored with the table)."""
        raise NotImplementedError

    def units_mp(self, rb: tuple[int, ...] | None) -> list:
        """The C units as mpmath numbers at the current precision."""
        raise NotImplementedError

    def units_float(self, rb: tuple[int, ...] | None) -> np.ndarray:
        with mpmath.workdps(MP_DIGITS):
            return np.array([float(u) for u in self.units_mp(rb)], dtype=np.float64)

    def formal_floats(self, keys: np.ndarray, rb: tuple[int, ...] | None) -> np.ndarray:
        """Float64 values of formal keys (default: the float sum of coefficients times
        units)."""
        return keys @ self.units_float(rb) if keys.size else np.zeros(keys.shape[0])

    def formal_error_bound(self, keys: np.ndarray, rb: tuple[int, ...] | None) -> float:
        """Bound on |formal_floats - exact value| over ``keys`` (default: the float sum's)."""
        if keys.size == 0:
            return 0.0
        terms = np.abs(keys).astype(np.float64) @ np.abs(self.units_float(rb))
        return float(2 * (keys.shape[1] + 2) * U * terms.max())

    def value_key(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> tuple:
        """The run's integer coefficients (equal exactly when the values are equal)."""
        return tuple(int(x) for x in self.formal_many(np.asarray([run]), self.check_rb(rb))[0])

    def values_many(self, runs: np.ndarray, rb: tuple[int, ...] | None) -> np.ndarray:
        """Float64 values: the float sum of coefficients times units."""
        return self.formal_floats(self.formal_many(runs, rb), rb)
