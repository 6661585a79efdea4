"""The recall base of a measure's topics as one policy object each measure owns
(:attr:`Measure.recall_base <irscale.scales.measures.measure.Measure.recall_base>`).

A topic's recall base (SPEC section 2, SPEC_MEASURES section 1) is of one of three kinds,
and the kind decides what ``rb`` a topic gives, how tables are keyed, which runs are
feasible and how rank oracles count them:

* :class:`NoRecallBase` (P, RR, RBP, DCG, ERR, the utilities): no ``rb``, one table.
* :class:`IntegerRecallBase` (binary R, F1, AP, nDCG, ...): ``rb`` is the number of
  relevant documents; one table, stratified by the relevant documents of its runs, serves
  every recall base (the scale of RB = r holds the runs with at most r of them).
* :class:`PerGradeCounts` (graded gR, nDCG, nDCG_trec; Twist, CRP, Rprec, OIE): ``rb`` is
  the counts ``(c_1..c_G)`` of the topic's judged documents of each grade; one table per
  count vector, of the runs with at most c_g documents of each grade g (counts capped at
  N where values do not depend on counts beyond N).

Tables, oracles, estimates and transforms ask the policy instead of testing which kind a
measure has.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from irscale.enumerate import runspace
from irscale.errors import RecallBaseError

#: A recall base: an integer (binary relevance) or per-grade counts (c_1..c_G).
RecallBase = int | tuple[int, ...] | None

#: Largest recall base accepted (values for rb > N are computed in float64 from rb).
MAX_RB = 2 ** 53


def is_count(x: Any) -> bool:
    """Whether ``x`` is an integer (Python or numpy, not a bool)."""
    return not isinstance(x, bool) and isinstance(x, (int, np.integer))


@dataclasses.dataclass(frozen=True)
class RecallBasePolicy:
    """What a measure's topics give as recall base (the base class: see the module
    docstring). ``label``: the measure's name, for messages; ``n``: its cutoff N."""

    label: str
    n: int

    #: Whether values depend on the topic's recall base (topics without a relevant document have none).
    depends: ClassVar[bool] = False
    #: Whether tables are keyed by per-grade count vectors (one table per vector).
    per_grade: ClassVar[bool] = False
    #: What the enumerator keeps per run besides its key: None, ``"relevant"`` (the number of
    #: relevant documents) or ``"grade_codes"`` (the per-grade counts).
    strata: ClassVar[str | None] = None

    def check(self, rb: Any) -> RecallBase:
        """``rb`` validated and normalised; raises :class:`~irscale.errors.RecallBaseError`
        saying what to give."""
        raise NotImplementedError

    def of_counts(self, grade_counts: Iterable[int]) -> RecallBase:
        """The recall base of a topic from the counts of its judged documents of each grade 1..G."""
        return None

    def table_rb(self, rb: Any) -> tuple[int, ...] | None:
        """The recall base naming the table that serves ``rb``: None when one table serves
        every recall base, else a per-grade count vector."""
        self.check(rb)
        return None

    def common(self) -> RecallBase:
        """The recall base of the ``common`` scale (every run feasible, SPEC section 2)."""
        return None

    def stratified_rbs(self) -> range:
        """The recall bases one shared table serves by strata (empty when it has none)."""
        return range(0)

    def oracle_count(self, rb: RecallBase) -> tuple[int | None, int]:
        """How a rank oracle counts the runs feasible for ``rb``: (the grade whose documents
        it counts, None for relevant documents or for no count; the largest feasible count)."""
        return None, 0

    def oracle_serves(self, table_rb: tuple[int, ...] | None) -> bool:
        """Whether a rank oracle serves the table recall base ``table_rb``."""
        return True

    def counts_documents(self, counted: int | None) -> bool:
        """Whether the entries of an oracle form counting the grade ``counted`` (None:
        relevant documents) carry document counts (else every run is feasible)."""
        return False

    def refuse_infeasible(self, runs: np.ndarray, rb: Any, what: str = "run") -> None:
        """Validate ``rb`` and raise :class:`~irscale.errors.RunError` for the first run
        (of grades, -1 after a truncated ranking's end) a table for ``rb`` cannot hold."""
        self.check(rb)


@dataclasses.dataclass(frozen=True)
class NoRecallBase(RecallBasePolicy):
    """Values do not depend on the topic: no ``rb``, one table."""

    def check(self, rb: Any) -> None:
        if rb is not None:
            raise RecallBaseError(f"{self.label} does not depend on the recall base; do not give rb (got rb={rb})")
        return None


@dataclasses.dataclass(frozen=True)
class IntegerRecallBase(RecallBasePolicy):
    """Binary relevance: ``rb`` is the number of relevant documents; one stratified table
    serves every recall base (min(rb, N) relevant documents at most)."""

    depends: ClassVar[bool] = True
    strata: ClassVar[str | None] = "relevant"

    def check(self, rb: Any) -> int:
        if rb is None:
            raise RecallBaseError(f"{self.label} depends on the recall base: give rb (the topic's number of "
                                  f"relevant documents, >= 1)")
        if not is_count(rb) or rb < 1:
            raise RecallBaseError(f"{self.label}: rb must be an integer >= 1, got {rb!r}")
        if rb > MAX_RB:
            raise RecallBaseError(f"{self.label}: rb = {rb} is larger than any recall base irscale handles ({MAX_RB})")
        return int(rb)

    def of_counts(self, grade_counts: Iterable[int]) -> int:
        return sum(int(c) for c in grade_counts)

    def common(self) -> int:
        return self.n

    def stratified_rbs(self) -> range:
        return range(1, self.n + 1)

    def oracle_count(self, rb: RecallBase) -> tuple[int | None, int]:
        return None, min(rb, self.n)

    def counts_documents(self, counted: int | None) -> bool:
        return True


@dataclasses.dataclass(frozen=True)
class PerGradeCounts(RecallBasePolicy):
    """Graded relevance: ``rb`` is the counts (c_1..c_G) of the topic's judged documents
    of each grade (an integer stands for (rb,) when G = 1); one table per vector.
    ``capped``: tables are keyed by the counts capped at N (values do not depend on
    counts beyond N); ``common_counts``: the vector of the ``common`` scale, None when
    there is none (measures defined per topic)."""

    grades: int = 1
    capped: bool = True
    common_counts: tuple[int, ...] | None = None

    depends: ClassVar[bool] = True
    per_grade: ClassVar[bool] = True
    strata: ClassVar[str | None] = "grade_codes"

    def check(self, rb: Any) -> tuple[int, ...]:
        g = self.grades
        if rb is None:
            raise RecallBaseError(f"{self.label} depends on the recall base: give the per-grade counts "
                                  f"(c_1..c_{g}) of the topic's judged documents, e.g. rb="
                                  + ("(3,2)" if g > 1 else "(3,) or an integer"))
        if g == 1 and is_count(rb):
            rb = (int(rb),)
        counts = tuple(rb) if isinstance(rb, (tuple, list, np.ndarray)) else None
        if (counts is None or len(counts) != g or any(not is_count(c) or c < 0 for c in counts)
                or not 1 <= sum(counts) <= MAX_RB):
            raise RecallBaseError(f"{self.label}: give the recall base as the counts (c_1..c_{g}) of judged "
                                  f"documents per grade 1..{g}, at least one positive; got {rb!r}")
        return tuple(int(c) for c in counts)

    def of_counts(self, grade_counts: Iterable[int]) -> tuple[int, ...]:
        return tuple(int(c) for c in grade_counts)

    def table_rb(self, rb: Any) -> tuple[int, ...]:
        counts = self.check(rb)
        return tuple(min(c, self.n) for c in counts) if self.capped else counts

    def common(self) -> tuple[int, ...]:
        if self.common_counts is None:
            raise RecallBaseError(f"{self.label} has one table per topic and no common scale: give the topics' "
                                  f"per-grade counts (--rb '(3,2)' or --qrels FILE)")
        return self.common_counts

    def oracle_count(self, rb: RecallBase) -> tuple[int | None, int]:
        """A vector bounding grade g alone (c_g < N) counts the documents of grade g (at most
        c_g); one bounding none counts nothing; one bounding several grades raises
        :class:`~irscale.errors.RecallBaseError` (it has a table, not an oracle)."""
        capped = tuple(min(c, self.n) for c in self.check(rb))
        tight = [g for g, c in enumerate(capped, 1) if c < self.n]
        if len(tight) > 1:
            raise RecallBaseError(f"{self.label}: the per-grade counts {capped} bound {len(tight)} grades; rank "
                                  f"oracles count one (build the table of these counts: its feasible runs are "
                                  f"enumerated)")
        return (tight[0], capped[tight[0] - 1]) if tight else (None, 0)

    def oracle_serves(self, table_rb: tuple[int, ...] | None) -> bool:
        return table_rb is None or sum(c < self.n for c in table_rb) <= 1

    def counts_documents(self, counted: int | None) -> bool:
        return counted is not None

    def refuse_infeasible(self, runs: np.ndarray, rb: Any, what: str = "run") -> None:
        runspace.refuse_infeasible(runspace.grade_counts_of_runs(runs, self.grades), self.check(rb), what)


def recall_base_policy(label: str, n: int, depends: bool, levels: int) -> RecallBasePolicy:
    """The policy of a measure over REL = {0..levels-1} whose values depend on the recall
    base or not (``depends``), with tables capped at N and a common scale."""
    if not depends:
        return NoRecallBase(label, n)
    if levels == 2:
        return IntegerRecallBase(label, n)
    return PerGradeCounts(label, n, levels - 1, capped=True, common_counts=(n,) * (levels - 1))
