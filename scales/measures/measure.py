"""The measure abstraction shared by enumeration, tables, lookups, transforms and the CLI.

A :class:`Measure` is a small frozen value: a family name (``AP``), its parameter
values (``p=0.8``) and the cutoff ``n`` (the run length N). Its canonical string,
``str(measure)``, follows the ir_measures convention (``AP@10``, ``RBP(p=0.8)@30``,
``nDCG(b=2)@10``): parameters sorted by name, defaults dropped. The canonical string is
the one key used by the store, the CLI and output files, and parsing it gives the same
measure back (:func:`irscale.scales.measures.parse.parse_measure`).

A measure also says everything the rest of the pipeline asks of it, so that no other
module tests which measure or which kind of measure it holds:

* its recall base: the policy :attr:`Measure.recall_base`
  (:mod:`irscale.scales.measures.recall_base`: what ``rb`` a topic gives, nothing, an
  integer or the per-grade counts ``(c_1..c_G)``; which table serves it; the common one;
  how oracles count its feasible runs), with :meth:`Measure.check_rb`,
  :meth:`Measure.table_rb` and :meth:`Measure.common_rb` asking it;
* its run space: run ids, validation of runs given by users, the ids of judged rankings;
* its values: :meth:`Measure.values_of_ids` (float64, for transforms) and
  :meth:`Measure.exact_value` (exact, for certificates and reports);
* its table layout (:attr:`Measure.layout`, the name of a module of
  :mod:`irscale.scales.tables`) and what building its tables costs.

Kinds of measures subclass it: :class:`~irscale.scales.measures.keyed.KeyMeasure`
(exact integer keys, tables of every run of REL^N),
:class:`~irscale.scales.measures.fractional.FractionMeasure` (exact values computed per
topic) and :class:`~irscale.scales.measures.truncated.TruncatedMeasure` (rankings of
length 0..N). A family is one module in :mod:`irscale.scales.measures.families`.

Conventions: ranks k are 1-based, ``k = 1`` is the top document; a judged run is a vector
of relevance degrees in {0..G} (binary: {0, 1}); run ids are base-``levels`` numbers with
r_1 the most significant digit (SPEC section 2); the recall base RB is the number of
relevant documents of the topic (graded: the count of each relevant grade).
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable, Iterable, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from irscale.enumerate import runspace
from irscale.errors import MeasureError, RecallBaseError
from irscale.scales.measures.params import REQUIRED, Param, format_value
from irscale.scales.measures.recall_base import (
    RecallBase,
    RecallBasePolicy,
    is_count,
    recall_base_policy,
)

if TYPE_CHECKING:
    import mpmath
    from numpy.typing import ArrayLike

    from irscale.scales.measures.closed_forms import ClosedForm

#: Largest cutoff N the enumerator accepts (run ids of binary runs fit 64 bits and every
#: exact key is checked not to overflow up to here): tables, scales and run ids exist up to
#: here (and while the run space has fewer than 2^63 runs).
MAX_N = 32

#: Largest cutoff of rank oracles (:mod:`irscale.scales.tables.oracles`): measures whose
#: values are sums of independent parts (binary RBP, DCG, nDCG, P, R, F1, RR) have scales up
#: to here without tables (run ids of binary runs of length 40 fit 64 bits).
MAX_ORACLE_N = 40

#: Largest cutoff of raw scores (measures with ``raw_any_cutoff``: no run ids, no tables;
#: exact values from Python integers, e.g. AP@1000, trec_eval's ``map``).
MAX_RAW_N = 100_000

#: A request for table recall bases (:meth:`Measure.table_rbs`, what ``irscale build --rb`` takes): ``"all"``,
#: one recall base, or a list of them.
RecallBaseRequest = str | RecallBase | list[RecallBase]


@dataclasses.dataclass(frozen=True)
class Measure:
    """Base class of all measures. Subclasses are frozen dataclasses with the field ``n``
    (the cutoff, a positive int) plus one field per declared parameter.

    Class attributes a family sets:

    ``name``
        Family name as written by users (``"AP"``).
    ``params``
        Tuple of :class:`~irscale.scales.measures.params.Param` declarations.
    ``rb_dependent``
        Whether the value depends on the topic's recall base (lookups then need ``rb``);
        the kind of recall base, the policy :attr:`recall_base` the rest of the pipeline
        asks, follows from it and the relevance degrees.
    ``summary``
        One line for ``irscale measures`` and docs.
    ``run_space``
        ``"fixed"`` (runs of exactly N documents) or ``"truncated"`` (rankings of length
        0..N); recorded with every table.
    """

    n: int

    name: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    rb_dependent: ClassVar[bool] = False
    summary: ClassVar[str] = ""
    run_space: ClassVar[str] = "fixed"
    #: Whether raw values exist beyond the run spaces that have scales (any cutoff up to
    #: :data:`MAX_RAW_N`, any number of grades): see :meth:`values_of_judged`.
    raw_any_cutoff: ClassVar[bool] = False
    #: Whether trec_eval and ir_measures read this family as binary on graded qrels (every
    #: level >= 1 relevant, as irscale's binary version does), so that graded qrels folded
    #: into its grades mean the same there (RR: ``recip_rank``); families with gains whose
    #: counterparts take the levels as gains (``ndcg_cut``, ``rbp``, gdeval's ERR) leave it False.
    binary_elsewhere: ClassVar[bool] = False
    #: Whether certified rank intervals exist past the exact scales (opt-in, layout
    #: ``bounded``: :mod:`irscale.scales.tables.bounded`): RBP, DCG, nDCG, nDCG_trec.
    bounded_scales: ClassVar[bool] = False

    def __post_init__(self) -> None:
        n = self.n
        if not is_count(n):
            raise MeasureError(f"{self.name}: cutoff must be an integer, got {n!r}")
        top = MAX_RAW_N if self.raw_any_cutoff else MAX_N
        if not 1 <= n <= top:
            raise MeasureError(f"{self.name}: cutoff N must be between 1 and {top}, got {n}"
                               + (f" (raw scores of {self.name} exist up to N = {MAX_RAW_N}; scales up to "
                                  f"N = {MAX_N})" if self.raw_any_cutoff else ""))
        object.__setattr__(self, "n", int(n))
        for param in self.params:
            value = getattr(self, param.name)
            if value is REQUIRED:
                raise MeasureError(f"{self.name} needs parameter {param.name} ({param.description}), "
                                   f"e.g. {self.example()}")
            object.__setattr__(self, param.name, param.convert(self.name, value))
        if not self.raw_any_cutoff:
            self.check_scales()

    # -- where scales exist -----------------------------------------------------------
    def scales_reason(self) -> str | None:
        """Why this measure has no scale (no table, no run ids), or None when it has one:
        scales need N <= :data:`MAX_N` and fewer than 2^63 runs, or a rank oracle (N <=
        :data:`MAX_ORACLE_N`), or a closed form (any N). The reason names the family, not
        the measure (messages group measures by reason)."""
        if (self.n > MAX_N or self.id_count() >= 2 ** 63) and ("oracle" in self.layouts or "closed" in self.layouts):
            return None
        if self.n > MAX_N:
            if self.bounded_scales:      # RBP, DCG, nDCG, nDCG_trec: sums of independent parts
                top = MAX_ORACLE_N if getattr(self, "prefers_oracle", False) else MAX_N
                return (f"no exact scale exists for {self.name} at N > {top}; certified intervals of its scaled "
                        f"values: transform, compare or lookup with --bounded (bounded=True), or "
                        f"irscale.scale(\"{self}\", layout=\"bounded\") (docs/bounded.md)")
            return (f"no exact or bounded scale exists for {self.name} at N > {MAX_N} (tables up to N = {MAX_N}, "
                    f"rank oracles up to N = {MAX_ORACLE_N}, closed forms of P, R, F1, RR and Rprec at any N; raw "
                    f"scores at any cutoff)")
        if self.id_count() >= 2 ** 63:
            return (f"the run space has {self.id_count():.3g} runs, more than 64-bit run ids can number "
                    f"(scales need fewer than 2^63 runs: a smaller N or fewer grades)")
        return None

    @property
    def has_scales(self) -> bool:
        """Whether tables, scales and run ids exist for this measure (see :meth:`scales_reason`)."""
        return self.scales_reason() is None

    @property
    def bounded_only(self) -> bool:
        """Whether the only scale of this measure is a bounded one (opt-in: RBP, DCG, nDCG,
        nDCG_trec past N = 40; :mod:`irscale.scales.tables.bounded`)."""
        return self.bounded_scales and not self.has_scales

    def check_scales(self) -> None:
        """Raise :class:`~irscale.errors.MeasureError` when the measure has no scale."""
        reason = self.scales_reason()
        if reason is not None:
            raise MeasureError(f"{self}: {reason}")

    # -- naming -----------------------------------------------------------------
    @classmethod
    def example(cls) -> str:
        """An example name of this family, used in help and error messages."""
        inner = ",".join(f"{p.name}={p.example}" for p in sorted(cls.params, key=lambda p: p.name)
                         if p.default is REQUIRED)
        return f"{cls.name}({inner})@10" if inner else f"{cls.name}@10"

    def param_values(self) -> dict[str, Any]:
        """Parameter values by name (exact types: Fraction for probabilities)."""
        return {p.name: getattr(self, p.name) for p in self.params}

    def __str__(self) -> str:
        shown = [(p.name, getattr(self, p.name)) for p in sorted(self.params, key=lambda p: p.name)
                 if p.default is REQUIRED or getattr(self, p.name) != p.default]
        inner = "(" + ",".join(f"{k}={format_value(v)}" for k, v in shown) + ")" if shown else ""
        return f"{self.name}{inner}@{self.n}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    @property
    def levels(self) -> int:
        """Number of relevance degrees |REL| (2: binary); ``len(gains)`` for measures with
        gains."""
        gains = getattr(self, "gains", None)
        return 2 if gains is None else len(gains)

    # -- recall base -------------------------------------------------------------
    @functools.cached_property
    def recall_base(self) -> RecallBasePolicy:
        """The recall-base policy of this measure's topics
        (:mod:`irscale.scales.measures.recall_base`): none, an integer, or per-grade counts,
        from :attr:`rb_dependent` and the number of relevance degrees."""
        return recall_base_policy(str(self), self.n, self.rb_dependent, self.levels)

    @property
    def per_grade_rb(self) -> bool:
        """Whether a topic's recall base is given as per-grade counts (c_1..c_G) rather
        than as an integer (:attr:`recall_base`)."""
        return self.recall_base.per_grade

    def check_rb(self, rb: RecallBase) -> RecallBase:
        """Validate the recall base for this measure and return it normalised: None for
        measures that do not depend on it (which refuse any rb), an int >= 1 for binary
        measures, the per-grade counts ``(c_1, ..., c_G)`` of the topic's judged documents
        for graded ones (SPEC_MEASURES section 1). Raises
        :class:`~irscale.errors.RecallBaseError` saying what to give."""
        return self.recall_base.check(rb)

    def recall_base_of(self, grade_counts: Iterable[int]) -> RecallBase:
        """The recall base of a topic in this measure's form, from the counts of its judged
        documents of each grade 1..G (grades above G folded into G): None for measures
        without recall base, the number of relevant documents for binary measures, the
        per-grade counts for graded ones."""
        return self.recall_base.of_counts(grade_counts)

    def table_rb(self, rb: RecallBase) -> tuple[int, ...] | None:
        """The recall base that names the table serving a topic with recall base ``rb``:
        None when one table serves every recall base (measures without recall base, and
        binary measures whose table is stratified by the number of relevant documents),
        else a per-grade count vector."""
        return self.recall_base.table_rb(rb)

    def common_rb(self) -> RecallBase:
        """The recall base of the ``common`` scale (every topic on the scale of all runs,
        SPEC section 2): N, or (N, ..., N) for per-grade counts; None for measures without
        recall base. Measures without a common scale raise
        :class:`~irscale.errors.RecallBaseError`."""
        return self.recall_base.common()

    def has_common_scale(self) -> bool:
        """Whether :meth:`common_rb` exists (measures defined per topic may have none)."""
        try:
            self.common_rb()
        except RecallBaseError:
            return False
        return True

    def check_defined(self, rb: RecallBase) -> None:
        """Raise :class:`~irscale.errors.RecallBaseError` when the measure has no value for a
        topic with this recall base (e.g. normalised measures whose ideal run scores 0;
        Twist with N < 2 RB)."""
        self.check_rb(rb)

    def defined(self, rb: RecallBase) -> bool:
        """Whether the measure has values for a topic with this recall base."""
        try:
            self.check_defined(rb)
        except RecallBaseError:
            return False
        return True

    def table_rbs(self, rbs: RecallBaseRequest = "all") -> list:
        """The table recall bases meant by a request ``rbs`` (what ``irscale build --rb``
        takes): ``"all"`` or None, one recall base, or a list of them (None in the list:
        the common one). Measures with one table for every recall base give ``[None]``
        (given recall bases are validated); the others the deduplicated, sorted
        :meth:`table_rb` of each (``"all"``: the one of :meth:`common_rb`)."""
        if rbs is None or (isinstance(rbs, str) and rbs == "all"):
            items = [None]                   # the common one
        elif isinstance(rbs, (int, np.integer, tuple)) and not isinstance(rbs, bool):
            items = [rbs]
        else:
            items = [tuple(r) if isinstance(r, (list, np.ndarray)) else r for r in rbs]
            if not items:
                raise RecallBaseError(f"{self}: no recall base given")
        out = []
        for rb in items:
            t = self.table_rb(self.common_rb() if rb is None else rb)
            if t not in out:
                out.append(t)
        return sorted(out, key=lambda t: () if t is None else t)

    # -- the run space -------------------------------------------------------------
    def id_count(self) -> int:
        """Number of run ids of the measure's run space (levels^N for runs of length N)."""
        return self.levels ** self.n

    def runs_of_ids(self, ids: ArrayLike) -> np.ndarray:
        """The runs (uint8 (m, N)) with the given ids."""
        self.check_scales()
        return runspace.runs_of_ids(ids, self.levels, self.n)

    def check_runs(self, runs: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        """Judged runs given by a user as a validated uint8 (m, N) array; raises
        :class:`~irscale.errors.RunError` naming the first bad run (wrong length, degrees
        outside REL, not integers, more documents of a grade than the topic ``rb`` has)."""
        return runspace.validate_runs(runs, self.levels, self.n, label=str(self))

    def ids_of_runs(self, runs: np.ndarray) -> np.ndarray:
        """Run ids (int64) of runs validated by :meth:`check_runs`."""
        self.check_scales()
        return runspace.ids_of_runs(runs, self.levels).astype(np.int64)

    def judged_ids(self, grades: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Run ids (int64) of judged rankings: ``grades`` (m, N) already folded to 0..G and
        each ranking's own length (ignored here: rankings are padded to N)."""
        self.check_scales()
        return runspace.ids_of_runs(grades, self.levels).astype(np.int64)

    def values_of_judged(self, grades: np.ndarray, lengths: np.ndarray, rb: RecallBase = None) -> np.ndarray:
        """Float64 raw values of judged rankings: ``grades`` (m, N) already folded to
        0..G, each ranking's own length, the topic's recall base. Works wherever run ids do
        (through :meth:`values_of_ids`); measures with :attr:`raw_any_cutoff` also beyond."""
        return self.values_of_ids(self.judged_ids(grades, lengths), rb)

    def topic_value_factor(self, top_grade: int) -> float:
        """Factor that multiplies the values of a topic whose highest judged grade (qrels
        levels folded to this measure's grades 0..G) is ``top_grade`` (1 unless a measure
        normalises per topic, as trec_eval's graded RBP does). Applied to raw values of
        transforms only; scales and ranks do not depend on it."""
        return 1.0

    # -- values (implemented by kinds) ----------------------------------------------
    def values_of_ids(self, ids: ArrayLike, rb: RecallBase = None) -> np.ndarray:
        """Float64 values of the runs with ids ``ids`` for a topic with recall base ``rb``
        (correctly rounded for rational measures; within the measure's stated error bound
        otherwise)."""
        raise NotImplementedError

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction | mpmath.mpf:
        """Exact value of one judged run (a Fraction for rational measures, an mpmath
        number for measures with logarithms); for certificates and reports (the
        independent references live in the tests)."""
        raise NotImplementedError

    def value_key(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Hashable:
        """A hashable token of a run's exact value, equal for two runs exactly when their
        values are equal (default: the exact value itself, for measures whose exact values
        are exact numbers)."""
        return self.exact_value(run, rb)

    def exact_gaps(self, runs: np.ndarray, rb: RecallBase = None) -> tuple[list, str]:
        """The distinct gaps between the exact values of consecutive runs of ``runs``
        (runs in increasing value order), sorted, and the name of the arithmetic used."""
        vals = [self.exact_value(r, rb) for r in np.asarray(runs).tolist()]
        return sorted({b - a for a, b in zip(vals, vals[1:])}), "exact-rational"

    # -- tables ---------------------------------------------------------------------
    @property
    def layout(self) -> str:
        """Name of the default table layout of this measure (a module of
        :mod:`irscale.scales.tables`, see :mod:`irscale.scales.tables.layouts`)."""
        raise NotImplementedError

    @property
    def layouts(self) -> tuple[str, ...]:
        """The layouts this measure's scales can have, the default first (``"oracle"``
        among them when it has a rank oracle, :meth:`oracle_reason`)."""
        return (self.layout,)

    def grouping(self) -> Any:
        """The rank grouping of this measure (:class:`~irscale.scales.measures.groups.Grouping`),
        or a string saying why it has none (then it has no rank oracle)."""
        return "its values are not sums of independent parts of the ranking"

    def oracle_reason(self) -> str | None:
        """Why this measure has no rank oracle, or None when it has one."""
        return "no rank oracle"

    def closed_form(self) -> ClosedForm | None:
        """The closed form of this measure's unq map, exact at any N
        (:mod:`irscale.scales.measures.closed_forms`; layout ``closed``), or None."""
        return None

    def table_runs(self, table_rb: tuple[int, ...] | None = None) -> int:
        """Number of runs scored to build the table named by ``table_rb``."""
        return self.id_count()

    def own_pass(self, table_rb: tuple[int, ...] | None) -> bool:
        """Whether the table of ``table_rb`` is built from its feasible runs alone, in one
        process (key measures with per-grade recall bases, for vectors whose feasible runs
        are a small part of the space)."""
        return False
