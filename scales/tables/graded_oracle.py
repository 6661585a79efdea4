"""Rank oracles of graded count vectors that bound several grades (graded nDCG, nDCG_trec).

A topic judged on G + 1 levels has the per-grade counts (c_1..c_G); its feasible runs hold
at most c_g documents of grade g. Where a single grade is bounded the rank oracles of
:mod:`irscale.scales.tables.oracles` count them; a vector bounding two or more grades (most
topics of TREC RAG 2024 at N = 20) had only the table of its feasible runs, 4^20 runs for
levels 0-3 at N = 20. For the logarithmic measures (trec_eval's 1/log2(k + 1) and the
Jarvelin-Kekalainen discount, integer gains) the meet-in-the-middle of
:mod:`irscale.scales.tables.graded_mitm` counts their ranks exactly instead; it is used for
the vectors whose feasible runs are more than :data:`TABLE_RUNS` (smaller ones keep their
tables, which also list values and count runs). Nothing is stored but the table's attributes
(``oracle_counted`` = -1, K in ``n_distinct``); the oracle is built when a scale is first used.

``k``, ``n_runs``, ``rank``, ``rank_runs``, ``rank_ids``, ``scaled`` and ``values_of_ranks``
work; ``values``, ``counts``, ``representatives``, ``value_blocks`` and mid-ranks need the
run counts of every value, which this oracle does not count (:class:`~irscale.errors.OracleListError`
says so). The mathematics and the assumption: docs/exactness.md.
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from irscale.enumerate.runspace import feasible_space_size
from irscale.errors import CorruptStoreError, OracleListError
from irscale.scales.measures.keys import FormalLogKey
from irscale.scales.tables import graded_mitm
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.scale import Scale, Table, Unlisted

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from irscale.scales.measures.measure import Measure, RecallBase

#: Count vectors with more feasible runs than this get the oracle (fewer: their table).
TABLE_RUNS = 1 << 22
#: The largest N the oracle serves (measured fast up to it: scripts/bench_graded_oracle.py).
MAX_N = 20
#: Side B of the oracle built for a few queries (quick to build, about |A| probes per query) ...
FEW_B = 1 << 20
#: ... and the probes (queries asked of a scale times its side A) after which it is built
#: again with the default side B (slower to build, 2 to 8 times quicker per query): about
#: the seconds of a build (2-6 s at N = 20 with 4 levels, 2 cores) in probes (about 10^8 a second).
MANY_PROBES = 3 * 10**8
#: Seconds to build one (about 0.2 to 2 s at N = 20 with 4 levels, 2 cores; an estimate).
SECONDS = 2.0
#: The certificate's method: ties decided by exact keys in MP_DIGITS-digit arithmetic.
METHOD = "oracle:mitm-formal-log+mpmath60"


def serves(measure: Measure, table_rb: tuple[int, ...] | None) -> bool:
    """Whether this oracle serves the count vector ``table_rb`` of ``measure``: a logarithmic
    measure with per-grade recall bases, a vector the one-grade oracles do not serve, N at
    most :data:`MAX_N`, and more than :data:`TABLE_RUNS` feasible runs."""
    policy = measure.recall_base
    if table_rb is None or not policy.per_grade or policy.oracle_serves(table_rb) or measure.n > MAX_N:
        return False
    if not isinstance(getattr(measure, "spec", None), FormalLogKey) or "oracle" not in measure.layouts:
        return False
    return feasible_space_size(measure.n, table_rb) > TABLE_RUNS


@dataclasses.dataclass(kw_only=True)
class GradedOracleTable(Table):
    """The oracle of one count vector: ``n_entries`` is K, ``n_runs`` its feasible runs."""

    layout: ClassVar[str] = "oracle"
    kind: ClassVar[str] = "exact: rank oracle"
    #: The oracles built, by side-B limit (built on first use, shared by the table's scales).
    built: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def stored_bytes(self) -> int:
        return 0

    def scale(self, rb: RecallBase = None) -> GradedOracleScale:
        return GradedOracleScale(self, rb)

    def oracle(self, b_limit: int) -> graded_mitm.GradedMitm:
        if b_limit not in self.built:
            like = next(iter(self.built.values()), None)       # (its groups and classes: the same)
            self.built[b_limit] = graded_mitm.oracle_of_measure(self.measure, self.table_rb, b_limit=b_limit, like=like)
        return self.built[b_limit]


def graded_oracle_table(measure: Measure, table_rb: tuple[int, ...]) -> GradedOracleTable:
    """The oracle of ``measure`` for the count vector ``table_rb`` (:func:`serves`), its K counted."""
    table = GradedOracleTable(measure=measure, n_entries=0, n_runs=feasible_space_size(measure.n, table_rb),
                              certificate=_certificate(measure, table_rb, None), table_rb=table_rb)
    o = table.oracle(FEW_B)
    table.n_entries, table.certificate = o.k, _certificate(measure, table_rb, o)
    return table


def _certificate(measure: Measure, table_rb: tuple, o: graded_mitm.GradedMitm | None) -> Certificate:
    spec = measure.spec
    pairs = 0.0 if o is None else o.bound * abs(spec.value_factor(table_rb))
    return Certificate(METHOD, max(spec.error_bound(table_rb), pairs), float("nan"), "not enumerated (rank oracle)", 0)


def validate(table: GradedOracleTable, attrs: dict, deep: bool) -> None:
    """Checks of a stored graded oracle (:class:`~irscale.errors.CorruptStoreError`): a vector
    it serves, its feasible runs, K (counted again when ``deep``)."""
    m, t = table.measure, table.table_rb
    if not serves(m, t):
        raise CorruptStoreError(f"a graded oracle for the per-grade counts {t}, which it does not serve")
    if attrs.get("oracle_counted") != -1 or table.n_runs != feasible_space_size(m.n, t) or table.n_entries < 1 \
            or attrs.get("n_distinct") != table.n_entries:
        raise CorruptStoreError(f"n_entries={table.n_entries}, n_runs={table.n_runs}, oracle_counted="
                                f"{attrs.get('oracle_counted')!r} for a graded oracle of the per-grade counts {t}")
    if deep and (k := table.oracle(FEW_B).k) != table.n_entries:
        raise CorruptStoreError(f"n_entries={table.n_entries}, counted {k}")


class GradedOracleScale(Unlisted, Scale):
    """The unq scale of a graded oracle for one topic's counts (see the module docstring)."""

    def __init__(self, table: GradedOracleTable, rb: Any = None):
        super().__init__(table, rb)
        self._queries = 0
        self._factor = float(self.measure.spec.value_factor(self.rb))     # value = DCG * factor

    def _oracle(self, queries: int) -> graded_mitm.GradedMitm:
        """The oracle for the queries asked so far: one quick to build for a few, the default
        split once they cost more probes than a build would (:data:`MANY_PROBES`)."""
        self._queries += queries
        built = self.table.built
        few = built.get(FEW_B)
        if graded_mitm.B_LIMIT in built or (few is not None and self._queries * len(few.A) > MANY_PROBES):
            return self.table.oracle(graded_mitm.B_LIMIT)
        return self.table.oracle(FEW_B)

    @property
    def k(self) -> int:
        return int(self.table.n_entries)

    @property
    def n_runs(self) -> int:
        return int(self.table.n_runs)

    def _unlisted(self, what: str) -> OracleListError:
        return OracleListError(f"{self._label()} is a graded rank oracle of {self.k:,} distinct values: it ranks "
                               f"values and runs exactly but does not count the runs of each value, so it lists no "
                               f"{what}")

    def value_blocks(self, chunk: int = 0) -> Any:
        raise self._unlisted("values")

    def value_range(self) -> tuple[float, float]:
        lo, hi = self.values_of_ranks(np.array([1, self.k]))
        return float(lo), float(hi)

    def _default_atol(self) -> float:
        return 2 * self._oracle(0).bound * abs(self._factor)       # (the same bound for every split)

    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        finite = np.isfinite(x)
        x = np.where(finite, x, -1.0)
        if atol is None:
            atol = self._default_atol()
        o = self._oracle(x.shape[0])
        raw, dfac = self.measure.spec.raw_of_values(x, self.rb)
        below, within = o.rank_values(raw, (atol + rtol * np.abs(x)) * abs(dfac))
        status = np.where(within == 1, 0, np.where(within == 0, 1, 2)).astype(np.int8)
        status[~finite] = 1
        return np.clip(below + 1, 1, max(self.k, 1)).astype(np.int64), status

    def values_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        q = self._check_ranks(ranks)
        uniq, inverse = np.unique(q, return_inverse=True)
        o = self._oracle(uniq.shape[0])
        pa, pb = o.select(uniq)
        raw = np.array([float(o.exact_value(int(a), int(b))) for a, b in zip(pa, pb)], np.float64)
        return (raw * self._factor)[inverse].reshape(np.shape(ranks))

    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        q = np.asarray(ids, np.int64).reshape(-1)
        if q.size == 0:
            return np.zeros(0, np.int64)
        runs = self.measure.runs_of_ids(q)
        self.measure.recall_base.refuse_infeasible(runs, self.rb)
        return self._oracle(q.shape[0]).rank_runs(runs)
