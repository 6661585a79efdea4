"""Closed-form scales: the unq map of P, R, F1, RR and Rprec as a formula, exact at any N.

These measures have one distinct value per count (:mod:`irscale.scales.measures.closed_forms`),
so their scales need nothing built and nothing stored, at any cutoff up to the raw scores'
(:data:`~irscale.scales.measures.measure.MAX_RAW_N`): trec_eval's ``P_1000``,
``recall_1000``, ``recip_rank`` and ``Rprec`` of runs of 1000 documents get exact scaled
scores. A :class:`ClosedScale` has the whole scale interface: ``k``, ``n_runs`` (a Python
integer: 2^1000 at N = 1000), ``rank`` and ``lookup`` of raw values, ``rank_runs`` and
``rank_judged`` of judged runs (exact: from their counts), ``scaled``, ``midranks`` and
``values``; ``counts``, ``representatives`` and ``rank_ids`` while run counts and run ids
fit 64 bits (N <= 62), else a clear error.

Stores hold no table of them: :meth:`irscale.store.reader.Store.scale` answers from the
closed form when a store has no table of the measure (tables built before hold the same
values), and :data:`CLOSED_FORMS` stands in for a store where none exists.
"""
from __future__ import annotations

import functools
from collections.abc import Iterator
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from irscale.errors import MeasureError, OracleListError, RecallBaseError, RunError
from irscale.scales.measures.closed_forms import ClosedForm
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.scale import AMBIGUOUS, BLOCK_VALUES, FOUND, NOT_A_VALUE, Scale, Table

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: The layout name closed-form scales report (nothing of theirs is ever stored).
LAYOUT = "closed"
#: Largest number of distinct values listed by ``values`` (N + 1 of them; N <= 100,000).
INT64_LIMIT = 2 ** 63


def _int_rb(rb: RecallBase) -> int | None:
    """The recall base as the closed forms take it (Rprec's ``(RB,)`` is RB)."""
    return rb[0] if isinstance(rb, tuple) else rb


class ClosedTable(Table):
    """The (empty) table of a closed-form scale: its measure and certificate."""

    layout = LAYOUT
    kind = "exact: closed form"

    def scale(self, rb: RecallBase = None) -> ClosedScale:
        return ClosedScale(self, rb)

    def stored_bytes(self) -> int:
        return 0


def closed_table(measure: Measure, table_rb: tuple | None = None) -> ClosedTable:
    """The table of a measure with a closed form (:meth:`Measure.closed_form`)."""
    form = measure.closed_form()
    if form is None:
        raise MeasureError(f"{measure} has no closed-form scale")
    gap, exact = _min_gap(measure, form)
    common = _int_rb(measure.common_rb())
    cert = Certificate(method="closed-form", error_bound=form.spec.error_bound(common), min_gap=gap,
                       min_gap_exact=exact)
    return ClosedTable(measure=measure, n_entries=0, n_runs=0, certificate=cert, table_rb=table_rb)


def _min_gap(measure: Measure, form: ClosedForm) -> tuple[float, str]:
    rb = _int_rb(measure.common_rb())
    k = form.k(rb)
    if k < 2:
        return 0.0, "0"
    return form.spec.certified_gap(0, k - 1, rb)


class ClosedScale(Scale):
    """The scale of a closed form for one recall base (see the module docstring)."""

    def __init__(self, table: ClosedTable, rb=None):
        super().__init__(table, rb)
        self.form: ClosedForm = self.measure.closed_form()
        self._rb = _int_rb(self.rb)
        self._k = self.form.k(self._rb)

    # -- facts --------------------------------------------------------------------------
    @property
    def k(self) -> int:
        return self._k

    @functools.cached_property
    def _runs(self) -> list[int]:
        """Runs of each distinct value (Python integers)."""
        return [self.form.runs(i, self._rb) for i in range(self._k)]

    @functools.cached_property
    def n_runs(self) -> int:
        return sum(self._runs)

    def _int64(self, what: str) -> None:
        if self.n_runs >= INT64_LIMIT:
            runs = f"about 2^{self.n_runs.bit_length() - 1} runs"
            raise OracleListError(f"{self._label()}: {what} exceed 64-bit integers ({runs}); the "
                                  f"closed form gives ranks, values and scaled values at any N, run counts and "
                                  f"run ids up to N = 62")

    @property
    def values(self) -> np.ndarray:
        return self._values(np.arange(self._k, dtype=np.int64))

    def _values(self, index: np.ndarray) -> np.ndarray:
        return self.form.spec.float_values(index, self._rb).astype(np.float64)

    @property
    def fractions(self) -> list[Fraction]:
        """The distinct values as exact fractions."""
        return [self.form.spec.exact_value(i, self._rb) for i in range(self._k)]

    @property
    def counts(self) -> np.ndarray:
        self._int64("run counts")
        return np.array(self._runs, dtype=np.int64)

    @property
    def representatives(self) -> np.ndarray:
        self._int64("run ids")
        return np.array([self.form.smallest_id(i, self._rb) for i in range(self._k)], dtype=np.int64)

    @functools.cached_property
    def midranks(self) -> np.ndarray:
        """Mid-ranks of the distinct values (float64; exact integer arithmetic, then rounded)."""
        out, before = np.empty(self._k), 0
        try:
            for i, c in enumerate(self._runs):
                out[i] = (2 * before + c + 1) / 2          # Python integers: exact until the division
                before += c
        except OverflowError:
            runs = f"about 2^{self.n_runs.bit_length() - 1} runs"
            raise OracleListError(f"{self._label()}: mid-ranks exceed float64 ({runs})") from None
        return out

    def value_blocks(self, chunk: int = BLOCK_VALUES) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        self._int64("run counts")
        return super().value_blocks(chunk)

    def value_range(self) -> tuple[float, float]:
        v = self._values(np.array([0, self._k - 1], dtype=np.int64))
        return float(v[0]), float(v[1])

    # -- ranks ----------------------------------------------------------------------------
    def _default_atol(self) -> float:
        return 2 * self.certificate.error_bound

    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The nearest index by the measure's inverse map, then its neighbours by value."""
        atol = self._default_atol() if atol is None else atol
        finite = np.isfinite(x)
        xf = np.where(finite, x, 0.0)
        raw, _ = self.form.spec.raw_of_values(xf, self._rb)
        guess = np.clip(np.rint(np.where(np.isfinite(raw), raw, 0.0)), 0, self._k - 1).astype(np.int64)
        tol = np.broadcast_to(atol, x.shape) + rtol * np.abs(xf)
        best = np.zeros(x.shape, np.int64)
        dist = np.full(x.shape, np.inf)
        within = np.zeros(x.shape, np.int64)
        for step in (-2, -1, 0, 1, 2):
            idx = guess + step
            ok = (idx >= 0) & (idx < self._k)
            idx = np.clip(idx, 0, self._k - 1)
            d = np.where(ok, np.abs(self._values(idx) - xf), np.inf)
            closer = d < dist
            best, dist = np.where(closer, idx, best), np.where(closer, d, dist)
            within += ok & (d <= tol)
        status = np.where(~finite | (within == 0), NOT_A_VALUE, np.where(within > 1, AMBIGUOUS, FOUND))
        return best + 1, status.astype(np.int8)

    def values_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        q = self._check_ranks(ranks)
        return self._values(q - 1).reshape(np.shape(ranks))

    def midranks_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        q = self._check_ranks(ranks)
        return self.midranks[q - 1].reshape(np.shape(ranks))

    def rank_judged(self, grades: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
        """Exact ranks of judged runs: ``grades`` (m, N) holds degrees 0..G (the counts
        decide; runs with more relevant documents than the recall base are refused)."""
        grades = np.asarray(grades)
        bad = self.form.infeasible(grades, self._rb)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise RecallBaseError(f"{self._label()}: run {i} has {(grades[i] > 0).sum()} relevant documents, "
                                  f"more than the recall base {self._rb}: it cannot occur")
        return self.form.index_of_runs(grades, self._rb) + 1

    def rank_runs(self, runs: ArrayLike) -> np.ndarray:
        arr = self.measure.check_runs(runs, self.rb)
        if arr.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self.rank_judged(arr)

    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        self._int64("run ids")
        runs = self.measure.runs_of_ids(ids)
        bad = self.form.infeasible(runs, self._rb)
        if bad.any():
            raise RunError(f"run id {int(np.asarray(ids).reshape(-1)[np.flatnonzero(bad)[0]])} cannot occur for "
                           f"{self._label()} (more relevant documents than the recall base)")
        return self.form.index_of_runs(runs, self._rb) + 1


class ClosedForms:
    """Where no store exists: the scales of closed forms (anything else has none)."""

    path = None

    def scale(self, measure: Measure, rb: RecallBase = None) -> ClosedScale:
        return closed_scale(measure, rb)


def closed_scale(measure: Measure, rb: RecallBase = None) -> ClosedScale:
    """The closed-form scale of ``measure`` for the recall base ``rb``."""
    rb = measure.check_rb(rb)
    measure.check_defined(rb)
    return closed_table(measure, measure.table_rb(rb)).scale(rb)


#: The stand-in of a store that does not exist.
CLOSED_FORMS = ClosedForms()

__all__ = ["CLOSED_FORMS", "LAYOUT", "ClosedForms", "ClosedScale", "ClosedTable", "closed_scale", "closed_table"]
