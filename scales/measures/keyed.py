"""Measures scored by exact integer keys over every run of REL^N.

A :class:`KeyMeasure` gives its :class:`~irscale.scales.measures.keys.KeySpec`; from it
come the run scoring of the enumerator (:meth:`KeyMeasure.scoring_job`), the split form
(:meth:`KeyMeasure.split_form`), values of runs and exact values. Its tables (layout
``entries``, :mod:`irscale.scales.tables.entries`) hold every run of the space:

* without recall base: one table;
* binary and RB-dependent: one table stratified by the number of relevant documents of
  the runs, serving every recall base (strata ``"relevant"``; SPEC section 2: the table
  of RB = r holds the values of the runs with at most r relevant documents);
* graded and RB-dependent: one table per per-grade count vector (c_1..c_G), each count
  capped at N, holding the runs feasible for it (strata ``"grade_codes"`` during the
  enumeration; SPEC_MEASURES section 1).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from irscale.enumerate import runspace
from irscale.enumerate.jobs import ScoringJob
from irscale.enumerate.reduce import KeyCodec
from irscale.enumerate.splitform import SplitForm
from irscale.scales.measures.groups import SIDE_LIMIT, Grouping
from irscale.scales.measures.keys import KeySpec
from irscale.scales.measures.measure import MAX_N, MAX_ORACLE_N, Measure, RecallBase

if TYPE_CHECKING:
    import mpmath
    from numpy.typing import ArrayLike


#: A per-grade count vector whose feasible runs are at most this share of the run space
#: has its table built from them alone (:meth:`KeyMeasure.own_pass`).
OWN_PASS_SHARE = 1 / 8


@functools.lru_cache(maxsize=256)
def _spec(measure: KeyMeasure) -> KeySpec:
    return measure.key_spec()


@functools.lru_cache(maxsize=256)
def _grouping(measure: KeyMeasure, counted: int | None = None) -> Grouping | str:
    if measure.n > MAX_ORACLE_N:
        return f"rank oracles count up to N = {MAX_ORACLE_N}"
    if measure.id_count() >= 2 ** 63:
        return "run ids of this run space do not fit 64 bits"
    got = measure.rank_grouping() if counted is None else measure.rank_grouping(counted=counted)
    if isinstance(got, Grouping) and math.isqrt(got.k) > SIDE_LIMIT:
        return f"its {got.k:.3g} distinct values are too many to count (more than {SIDE_LIMIT} per side)"
    return got


@functools.lru_cache(maxsize=64)
def _split(measure: KeyMeasure) -> SplitForm:
    return measure.spec.split_form(measure.levels, measure.n, None, stratified=measure.strata_kind == "relevant",
                                   label=str(measure))


@dataclasses.dataclass(frozen=True)
class KeyMeasure(Measure):
    """A measure with an exact integer key per run (see the module docstring).

    Families implement :meth:`key_spec`. Raw values exist at any cutoff and for run spaces
    beyond 64-bit run ids (:meth:`values_of_judged`: exact keys in Python integers)."""

    raw_any_cutoff: ClassVar[bool] = True

    def key_spec(self) -> KeySpec:
        """The exact key of this measure (:mod:`irscale.scales.measures.keys`)."""
        raise NotImplementedError

    @property
    def spec(self) -> KeySpec:
        """:meth:`key_spec`, built once per measure."""
        return _spec(self)

    #: Whether the family's scales default to the rank oracle where there is one (big
    #: tables: RBP, DCG, nDCG) rather than to its table (tables of N + 1 values: P, R, RR).
    prefers_oracle: ClassVar[bool] = False

    @property
    def table_layout(self) -> str:
        """The layout of this measure's tables (``entries``; ``implicit`` for identity tables)."""
        return "entries"

    @property
    def layouts(self) -> tuple[str, ...]:
        tables = (self.table_layout,) if self.n <= MAX_N and self.id_count() < 2 ** 63 else ()
        oracle = ("oracle",) if self.oracle_reason() is None else ()
        closed = ("closed",) if self.closed_form() is not None else ()
        return (oracle + tables if self.prefers_oracle else tables + oracle) + closed

    @property
    def layout(self) -> str:
        layouts = self.layouts
        return layouts[0] if layouts else self.table_layout

    def grouping(self, counted: int | None = None) -> Grouping | str:
        """The rank grouping (cached; see :meth:`rank_grouping`), or why there is none;
        ``counted``: the grade whose documents its counts are of (graded measures whose
        topics bound one grade, :mod:`irscale.scales.measures.groups`), None for relevant
        documents."""
        return _grouping(self, counted)

    def rank_grouping(self) -> Grouping | str:
        """The family's grouping of ranks (:mod:`irscale.scales.measures.groups`), or a
        string saying why it has none. Families with rank oracles override it; graded
        families with per-grade recall bases take ``counted`` (the grade counted) too."""
        return super().grouping()

    def oracle_reason(self) -> str | None:
        got = self.grouping()
        return None if isinstance(got, Grouping) else got

    @property
    def strata_kind(self) -> str | None:
        """What the enumerator keeps besides keys (:attr:`RecallBasePolicy.strata
        <irscale.scales.measures.recall_base.RecallBasePolicy.strata>`): None, ``"relevant"``
        (binary RB-dependent: one table for every recall base) or ``"grade_codes"`` (graded
        RB-dependent: one table per per-grade count vector)."""
        return self.recall_base.strata

    def own_pass(self, table_rb: tuple[int, ...] | None) -> bool:
        """Whether the table of the per-grade count vector ``table_rb`` is built from its
        feasible runs alone (at most :data:`OWN_PASS_SHARE` of the run space) rather than
        from the pass over every run that serves all vectors."""
        return (table_rb is not None
                and runspace.feasible_space_size(self.n, table_rb) <= OWN_PASS_SHARE * self.id_count())

    def table_runs(self, table_rb: tuple[int, ...] | None = None) -> int:
        """Runs scored to build the table of ``table_rb``: the feasible ones of a vector
        built on its own (:meth:`own_pass`), else the whole run space."""
        return runspace.feasible_space_size(self.n, table_rb) if self.own_pass(table_rb) else self.id_count()

    def check_defined(self, rb: RecallBase) -> None:
        rb = self.check_rb(rb)
        if rb is not None:
            self.spec.value_factor(rb)     # normalisers refuse topics whose ideal run scores 0

    def certificate_rb(self, table_rb: tuple[int, ...] | None) -> RecallBase:
        """The recall base a table's certificate is stated for: its own vector, or the
        common one (N) for a table serving every recall base."""
        return table_rb if table_rb is not None else self.common_rb()

    # -- scoring ----------------------------------------------------------------------------
    def scoring_job(self) -> ScoringJob:
        """The enumerator's scoring job (:mod:`irscale.enumerate.jobs`)."""
        self.check_scales()
        spec = self.spec
        kernel, words, weights = spec.kernel_arrays()
        stratum_bits = 8
        if self.strata_kind == "grade_codes":
            stratum_bits = max(8, ((self.n + 1) ** (self.levels - 1)).bit_length())
        codec = KeyCodec(words=words, key_bits=max(1, int(spec.max_key).bit_length()),
                         has_stratum=self.strata_kind is not None, stratum_bits=stratum_bits)
        return ScoringJob(kernel, words, weights, codec, self.strata_kind)

    def split_form(self) -> SplitForm:
        """The split form with the default split (prefix of N/2 ranks), cached per
        measure (prefix and suffix tables of 2**15 entries at N = 30 are reused by every
        lookup and transform)."""
        self.check_scales()
        return _split(self)

    def keys_of_runs(self, runs: np.ndarray) -> np.ndarray:
        """Exact keys (uint64 (m, words)) of runs (uint8 (m, N))."""
        return self.spec.keys_of_runs(runs)

    def values_of_ids(self, ids: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        """Values come from each run's exact key, scored by the enumerator's kernel
        (correctly rounded for rational measures; for log discounts within the measure's
        stated error bound), never from a float sum in another order."""
        rb = self.check_rb(rb)
        runs = self.runs_of_ids(np.asarray(ids, dtype=np.int64).reshape(-1))
        return self.spec.float_values(self.keys_of_runs(runs), rb)

    def values_of_judged(self, grades: np.ndarray, lengths: np.ndarray, rb: RecallBase = None) -> np.ndarray:
        """Raw values of judged rankings; beyond the run spaces with scales (N > MAX_N, or
        more than 2^63 runs) from each distinct ranking's exact key in Python integers,
        converted once to float64 (correctly rounded for rational measures, within the
        stated error bound for log discounts, as in tables)."""
        if self.has_scales and self.id_count() < 2 ** 63:        # run ids (closed forms have none past N = 62)
            return super().values_of_judged(grades, lengths, rb)
        rb = self.check_rb(rb)
        grades = np.asarray(grades, dtype=np.uint8).reshape(-1, self.n)
        if grades.shape[0] == 0:
            return np.zeros(0)
        distinct, inverse = np.unique(grades, axis=0, return_inverse=True)
        spec = self.spec
        values = spec.values_of_python_keys([spec.key_python(row) for row in distinct.tolist()], rb)
        return values[inverse.reshape(-1)]

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction | mpmath.mpf:
        spec = self.spec
        return spec.exact_value(spec.key_python([int(r) for r in run]), self.check_rb(rb))

    def value_key(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> int:
        return self.spec.key_python([int(r) for r in run])

    def exact_gaps(self, runs: np.ndarray, rb: RecallBase = None) -> tuple[list, str]:
        return self.spec.gap_values(self.keys_of_runs(runs), self.check_rb(rb))

    def check_runs(self, runs: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        arr = super().check_runs(runs, rb)
        if rb is not None:              # tables keyed by per-grade counts hold only the feasible runs
            self.recall_base.refuse_infeasible(arr, rb)
        return arr
