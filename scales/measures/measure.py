"""The measure abstraction shared by enumeration, tables, lookups and the CLI.

A :class:`Measure` is a small frozen value: a family name (``AP``), its parameter
values (``p=0.8``) and the cutoff ``n`` (the run length N). Its canonical string,
``str(measure)``, follows the ir_measures convention (``AP@10``, ``RBP(p=0.8)@30``,
``nDCG(b=2)@10``): parameters sorted by name, defaults dropped. The canonical string is
the one key used by the store, the CLI and output files, and parsing it gives the same
measure back (see :func:`irscale.scales.parse_measure`).

How a measure scores runs is told to the enumerator through an *exact key*
(:mod:`irscale.scales.measures.keys`): an integer computed from a judged run such that two runs
have the same key exactly when they have the same (real-number) value. The enumerator
never needs to know which measure it runs; adding a measure is adding one module in
``scales/defs`` that subclasses :class:`Measure` and registers itself.

Conventions: ranks k are 1-based, ``k = 1`` is the top document; a binary judged run is
a vector of relevance degrees in {0, 1}; the recall base RB is the number of relevant
documents of the topic.
"""
from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from irscale.errors import MeasureError, RecallBaseError

#: Largest cutoff N the enumerator accepts (run ids of binary runs fit 64 bits and every
#: exact key is checked not to overflow up to here).
MAX_N = 32

#: Largest number of relevance degrees |REL| (graded measures: G <= 9).
MAX_LEVELS = 10

#: Largest recall base accepted (values for rb > N are computed in float64 from rb).
MAX_RB = 2 ** 53

REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Param:
    """Declaration of one measure parameter.

    ``kind`` selects parsing and validation: ``"prob"`` is a rational number strictly
    between 0 and 1 (kept exact as a :class:`fractions.Fraction` parsed from its decimal
    text), ``"log_base"`` an integer >= 2, ``"gains"`` the gains g(0), ..., g(G) of the
    relevance degrees 0..G: a tuple of non-negative integers, non-decreasing, g(0) = 0 and
    g(G) > 0 (its length sets REL = {0..G}; ``(0, 1)`` is binary relevance), ``"grade"``
    an integer 1..9, ``"choice"`` one of the names ``choices`` (written bare:
    ``crossing=literal``).
    """

    name: str
    kind: str
    description: str
    default: Any = REQUIRED
    choices: tuple = ()

    def convert(self, family: str, value: Any) -> Any:
        if self.kind in ("prob", "positive"):
            what = "a number in (0, 1)" if self.kind == "prob" else "a positive number"
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, str)):
                raise MeasureError(f"{family}: parameter {self.name} must be {what}, got {value!r}")
            try:
                # Decimal text is exact: 0.8 means 4/5, not the nearest double.
                frac = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
            except (ValueError, ZeroDivisionError):
                raise MeasureError(f"{family}: parameter {self.name} must be {what}, got {value!r}") from None
            if not 0 < frac or (self.kind == "prob" and not frac < 1):
                raise MeasureError(f"{family}: parameter {self.name} must be {what}, got {_fmt(frac)}")
            return frac
        if self.kind == "gains":
            ok = isinstance(value, (tuple, list)) and all(
                isinstance(g, (int, np.integer)) and not isinstance(g, bool) for g in value)
            gains = tuple(int(g) for g in value) if ok else ()
            if (not ok or not 2 <= len(gains) <= MAX_LEVELS or gains[0] != 0 or gains[-1] <= 0
                    or any(b < a for a, b in zip(gains, gains[1:]))):
                raise MeasureError(f"{family}: parameter {self.name} must be a tuple of {MAX_LEVELS} or fewer "
                                   f"non-decreasing integers from 0 (grade 0) to a positive top gain, e.g. "
                                   f"(0,1,3), got {value!r}")
            return gains
        if self.kind == "count":
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or value != int(value) \
                    or not 1 <= int(value) <= 2 ** 40:
                raise MeasureError(f"{family}: parameter {self.name} must be a positive integer, got {value!r}")
            return int(value)
        if self.kind == "choice":
            if not isinstance(value, str) or value not in self.choices:
                raise MeasureError(f"{family}: parameter {self.name} must be one of {', '.join(self.choices)}, "
                                   f"got {value!r}")
            return value
        if self.kind == "grade":
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or value != int(value) \
                    or not 1 <= int(value) < MAX_LEVELS:
                raise MeasureError(f"{family}: parameter {self.name} must be a grade, an integer from 1 to "
                                   f"{MAX_LEVELS - 1}, got {value!r}")
            return int(value)
        if self.kind == "log_base":
            if isinstance(value, bool) or not isinstance(value, (int, float, Fraction)) or value != int(value):
                raise MeasureError(f"{family}: parameter {self.name} must be an integer >= 2, got {value!r}")
            value = int(value)
            if value < 2:
                raise MeasureError(f"{family}: parameter {self.name} must be an integer >= 2, got {value}")
            return value
        raise AssertionError(f"unknown parameter kind {self.kind}")


def _fmt(value: Any) -> str:
    """Canonical text of a parameter value (``4/5`` prints as ``0.8``, gains as ``(0,1,3)``)."""
    if isinstance(value, tuple):
        return "(" + ",".join(str(v) for v in value) + ")"
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        # Fractions parsed from decimals have terminating decimal expansions.
        text = f"{float(value)!r}"
        if Fraction(text) == value:
            return text
        return f"{value.numerator}/{value.denominator}"
    return str(value)


#: The ``gains`` parameter of graded measures (default: binary relevance).
GAINS = Param("gains", "gains", "gains g(0)..g(G) of the relevance degrees, e.g. (0,1,3); its length sets "
              "REL = {0..G}", default=(0, 1))


@dataclasses.dataclass(frozen=True)
class Measure:
    """Base class of all measures. Subclasses are frozen dataclasses with the field ``n``
    (the cutoff, a positive int) plus one field per declared parameter.

    Class attributes a subclass sets:

    ``name``
        Family name as written by users (``"AP"``).
    ``params``
        Tuple of :class:`Param` declarations.
    ``rb_dependent``
        Whether the value depends on the recall base RB (then tables are keyed by
        ``min(RB, n)`` and scaled over the feasible runs, SPEC section 2).
    ``levels`` (property)
        Size of REL: ``len(gains)`` for measures with a ``gains`` parameter, else 2
        (binary relevance).
    ``summary``
        One line for ``irscale --help`` and docs.
    """

    n: int

    name: ClassVar[str] = ""
    params: ClassVar[tuple[Param, ...]] = ()
    rb_dependent: ClassVar[bool] = False
    summary: ClassVar[str] = ""
    #: ``"key"``: exact integer keys (:mod:`irscale.scales.measures.keys`); ``"fraction"``: exact
    #: fractions per run, ``"formal"``: exact rational combinations of logarithms per run
    #: (:mod:`irscale.scales.measures.fractional`; tables held in memory).
    value_kind: ClassVar[str] = "key"
    #: ``"fixed"``: runs of exactly N documents; ``"truncated"``: rankings of length 0..N
    #: (:mod:`irscale.scales.measures.truncated`).
    run_space: ClassVar[str] = "fixed"

    def __post_init__(self) -> None:
        n = self.n
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
            raise MeasureError(f"{self.name}: cutoff must be an integer, got {n!r}")
        if not 1 <= n <= MAX_N:
            raise MeasureError(f"{self.name}: cutoff N must be between 1 and {MAX_N}, got {n}")
        object.__setattr__(self, "n", int(n))
        for param in self.params:
            value = getattr(self, param.name)
            if value is REQUIRED:
                raise MeasureError(f"{self.name} needs parameter {param.name} ({param.description}), "
                                   f"e.g. {self.example()}")
            object.__setattr__(self, param.name, param.convert(self.name, value))
        if self.id_count() >= 2 ** 63:
            raise MeasureError(f"{self}: its run space has {self.id_count():.3g} runs, more than 64-bit run ids "
                               f"can number; use a smaller N or fewer grades")

    def judged_ids(self, grades, lengths) -> "np.ndarray":
        """Run ids (int64) of judged rankings: ``grades`` (m, N) already folded to 0..G and
        each ranking's own length (ignored here: runs are padded to N)."""
        from irscale.enumerate.runspace import ids_of_runs
        return ids_of_runs(grades, self.levels).astype(np.int64)

    def id_count(self) -> int:
        """Number of run ids of the measure's run space (levels^N)."""
        return self.levels ** self.n

    @property
    def levels(self) -> int:
        """Number of relevance degrees |REL| (2: binary)."""
        gains = getattr(self, "gains", None)
        return 2 if gains is None else len(gains)

    # -- naming -----------------------------------------------------------------
    @classmethod
    def example(cls) -> str:
        """An example name of this family, used in help and error messages."""
        examples = {"prob": "0.8", "log_base": "2", "gains": "(0,1,3)", "grade": "2", "positive": "1.05",
                    "count": "20000"}
        inner = ",".join(f"{p.name}={p.choices[0] if p.kind == 'choice' else examples[p.kind]}"
                         for p in sorted(cls.params, key=lambda p: p.name)
                         if p.default is REQUIRED)
        return f"{cls.name}({inner})@10" if inner else f"{cls.name}@10"

    def param_values(self) -> dict[str, Any]:
        """Parameter values by name (exact types: Fraction for probabilities)."""
        return {p.name: getattr(self, p.name) for p in self.params}

    def __str__(self) -> str:
        shown = [(p.name, getattr(self, p.name)) for p in sorted(self.params, key=lambda p: p.name)
                 if p.default is REQUIRED or getattr(self, p.name) != p.default]
        inner = "(" + ",".join(f"{k}={_fmt(v)}" for k, v in shown) + ")" if shown else ""
        return f"{self.name}{inner}@{self.n}"

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    # -- recall base -------------------------------------------------------------
    def check_rb(self, rb):
        """Validate the recall base for this measure and return it as an int (or None).

        RB-dependent measures need ``rb >= 1``; the others reject any ``rb``. Graded
        RB-dependent measures (levels > 2) take the per-grade counts ``(c_1, ..., c_G)`` of
        the topic's judged documents of grades 1..G (a tuple; SPEC_MEASURES section 1).
        """
        if not self.rb_dependent:
            if rb is not None:
                raise RecallBaseError(f"{self} does not depend on the recall base; do not give rb (got rb={rb})")
            return None
        if self.levels > 2 and rb is not None:
            counts = tuple(rb) if isinstance(rb, (tuple, list, np.ndarray)) else None
            if (counts is None or len(counts) != self.levels - 1
                    or any(isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 0 for c in counts)
                    or sum(counts) < 1 or sum(counts) > MAX_RB):
                raise RecallBaseError(f"{self}: give the recall base as the counts (c_1..c_{self.levels - 1}) of "
                                      f"judged documents per grade 1..{self.levels - 1}, at least one positive; "
                                      f"got {rb!r}")
            return tuple(int(c) for c in counts)
        if rb is None and self.levels > 2:
            raise RecallBaseError(f"{self} depends on the recall base: give the per-grade counts "
                                  f"(c_1..c_{self.levels - 1}) of the topic's judged documents, e.g. rb=(3,2)")
        if rb is None:
            raise RecallBaseError(f"{self} depends on the recall base: give rb (the topic's number of "
                                  f"relevant documents, >= 1)")
        if isinstance(rb, bool) or not isinstance(rb, (int, np.integer)) or rb < 1:
            raise RecallBaseError(f"{self}: rb must be an integer >= 1, got {rb!r}")
        if rb > MAX_RB:
            raise RecallBaseError(f"{self}: rb = {rb} is larger than any recall base irscale handles ({MAX_RB})")
        return int(rb)

    def check_defined(self, rb) -> None:
        """Raise :class:`~irscale.errors.RecallBaseError` when the measure has no value for a
        topic with this recall base (graded gR/nDCG whose judged documents all have gain 0;
        Twist and CRP with N < 2 RB)."""
        if self.rb_dependent:
            self.key_spec().value_factor(self.check_rb(rb))

    def defined(self, rb) -> bool:
        """Whether the measure has values for a topic with this recall base."""
        try:
            self.check_defined(rb)
        except RecallBaseError:
            return False
        return True

    @property
    def stratified(self) -> bool:
        """Whether one table serves every recall base through strata (binary RB-dependent
        measures: entries carry the number of relevant documents of their runs)."""
        return self.rb_dependent and self.levels == 2 and self.value_kind == "key"

    @property
    def counts_keyed(self) -> bool:
        """Whether tables are keyed by the per-grade recall-base vector (c_1..c_G), each
        capped at N (graded RB-dependent measures; SPEC_MEASURES section 1): one table
        per vector, over the runs feasible for it."""
        return self.rb_dependent and (self.levels > 2 or self.value_kind != "key")

    def common_rb(self):
        """The recall base of the ``common`` (all-runs) scale: N, or (N, ..., N) for
        measures keyed by per-grade counts; None for measures without a recall base."""
        if not self.rb_dependent:
            return None
        return (self.n,) * (self.levels - 1) if self.counts_keyed else self.n

    def table_rb(self, rb):
        """The recall base that keys this measure's table: ``min(rb, n)`` (SPEC section 2),
        or for graded measures the per-grade counts each capped at n."""
        rb = self.check_rb(rb)
        if isinstance(rb, tuple):
            return tuple(min(c, self.n) for c in rb)
        return None if rb is None else min(rb, self.n)

    # -- scoring interface (implemented by subclasses) ------------------------------
    def key_spec(self):
        """The exact key of this measure (:mod:`irscale.scales.measures.keys`)."""
        raise NotImplementedError

    def value_scale(self, rb: int | None) -> Fraction:
        """Positive factor turning a rational key into the measure value for ``rb``
        (rational measures only)."""
        raise NotImplementedError

    def exact_value(self, run, rb: int | None = None):
        """Exact value of one judged run (Fraction for rational measures, an mpmath
        number for measures with logarithms). Used for certification and reporting; the
        independent reference implementations live in the tests."""
        from irscale.scales.measures.keys import key_of_run
        return self.key_spec().exact_value(key_of_run(self, run), self, rb)
