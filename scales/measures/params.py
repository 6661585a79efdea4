"""Declarations of measure parameters: their kinds, validation and canonical text.

A :class:`Param` is declared once per family (name, kind, one-line description,
default); values given by users (parsed names or Python arguments) are converted and
checked by the kind's converter, and printed back in one canonical form
(:func:`format_value`: ``4/5`` as ``0.8``, gains as ``(0,1,3)``), so that a measure's
name parses back to the same measure.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from irscale.errors import MeasureError

#: Largest number of relevance degrees |REL| (graded measures: G <= 9).
MAX_LEVELS = 10

#: Marks a parameter without default (the user must give it).
REQUIRED = object()

#: Example values of each kind, for help texts and error messages.
EXAMPLES = {"prob": "0.8", "log_base": "2", "gains": "(0,1,3)", "grade": "2", "positive": "1.05",
            "count": "20000", "exponent": "4"}

#: Largest value of an ``exponent`` parameter (ERR's factors 2^m + 1 - 2^g stay below 2^32).
MAX_EXPONENT = 31


def _integral(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float, Fraction, np.integer)) \
        and value == int(value)


def _rational(param: Param, family: str, value: Any) -> Fraction:
    """``prob``: a rational number in (0, 1); ``positive``: a rational number > 0. Decimal
    text is exact: 0.8 means 4/5, not the nearest double."""
    what = "a number in (0, 1)" if param.kind == "prob" else "a positive number"
    if isinstance(value, bool) or not isinstance(value, (int, float, Fraction, str)):
        raise MeasureError(f"{family}: parameter {param.name} must be {what}, got {value!r}")
    try:
        frac = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, ZeroDivisionError):
        raise MeasureError(f"{family}: parameter {param.name} must be {what}, got {value!r}") from None
    if not 0 < frac or (param.kind == "prob" and not frac < 1):
        raise MeasureError(f"{family}: parameter {param.name} must be {what}, got {format_value(frac)}")
    return frac


def _gains(param: Param, family: str, value: Any) -> tuple[int, ...]:
    ok = isinstance(value, (tuple, list)) and all(
        isinstance(g, (int, np.integer)) and not isinstance(g, bool) for g in value)
    gains = tuple(int(g) for g in value) if ok else ()
    if (not ok or not 2 <= len(gains) <= MAX_LEVELS or gains[0] != 0 or gains[-1] <= 0
            or any(b < a for a, b in zip(gains, gains[1:]))):
        raise MeasureError(f"{family}: parameter {param.name} must be a tuple of {MAX_LEVELS} or fewer "
                           f"non-decreasing integers from 0 (grade 0) to a positive top gain, e.g. "
                           f"(0,1,3), got {value!r}")
    return gains


def _count(param: Param, family: str, value: Any) -> int:
    if not _integral(value) or not 1 <= int(value) <= 2 ** 40:
        raise MeasureError(f"{family}: parameter {param.name} must be a positive integer, got {value!r}")
    return int(value)


def _choice(param: Param, family: str, value: Any) -> str:
    if not isinstance(value, str) or value not in param.choices:
        raise MeasureError(f"{family}: parameter {param.name} must be one of {', '.join(param.choices)}, "
                           f"got {value!r}")
    return value


def _grade(param: Param, family: str, value: Any) -> int:
    if not _integral(value) or not 1 <= int(value) < MAX_LEVELS:
        raise MeasureError(f"{family}: parameter {param.name} must be a grade, an integer from 1 to "
                           f"{MAX_LEVELS - 1}, got {value!r}")
    return int(value)


def _exponent(param: Param, family: str, value: Any) -> int | None:
    if value is None:               # the default: the family decides (e.g. the top gain)
        return None
    if not _integral(value) or not 1 <= int(value) <= MAX_EXPONENT:
        raise MeasureError(f"{family}: parameter {param.name} must be an integer from 1 to {MAX_EXPONENT}, "
                           f"got {value!r}")
    return int(value)


def _log_base(param: Param, family: str, value: Any) -> int:
    if not _integral(value) or int(value) < 2:
        raise MeasureError(f"{family}: parameter {param.name} must be an integer >= 2, got {value!r}")
    return int(value)


#: Converter of each parameter kind: (param, family name, given value) -> canonical value.
CONVERTERS: dict[str, Callable[[Param, str, Any], Any]] = {
    "prob": _rational, "positive": _rational, "gains": _gains, "count": _count, "choice": _choice,
    "grade": _grade, "log_base": _log_base, "exponent": _exponent,
}


@dataclasses.dataclass(frozen=True)
class Param:
    """Declaration of one measure parameter.

    ``kind`` selects parsing and validation (:data:`CONVERTERS`): ``"prob"`` is a rational
    number strictly between 0 and 1 (kept exact as a :class:`fractions.Fraction` parsed
    from its decimal text), ``"positive"`` a rational number > 0, ``"log_base"`` an integer
    >= 2, ``"gains"`` the gains g(0), ..., g(G) of the relevance degrees 0..G: a tuple of
    non-negative integers, non-decreasing, g(0) = 0 and g(G) > 0 (its length sets
    REL = {0..G}; ``(0, 1)`` is binary relevance), ``"grade"`` an integer 1..9,
    ``"count"`` a positive integer, ``"choice"`` one of the names ``choices`` (written
    bare: ``crossing=literal``), ``"exponent"`` an integer 1..31 or None (its default
    None stands for a value the family derives from its other parameters, e.g. ERR's
    ``max_grade``: the top gain).
    """

    name: str
    kind: str
    description: str
    default: Any = REQUIRED
    choices: tuple = ()

    def __post_init__(self) -> None:
        if self.kind not in CONVERTERS:
            raise ValueError(f"unknown parameter kind {self.kind!r}; kinds: {', '.join(CONVERTERS)}")

    def convert(self, family: str, value: Any) -> Any:
        """The canonical value of a given one; :class:`~irscale.errors.MeasureError` says
        what is allowed."""
        return CONVERTERS[self.kind](self, family, value)

    @property
    def example(self) -> str:
        """An example value as written in a measure name."""
        return self.choices[0] if self.kind == "choice" else EXAMPLES[self.kind]


def format_value(value: Any) -> str:
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
#: The ``grades`` parameter of measures without gains: the top grade G (runs hold grades 0..G).
GRADES = Param("grades", "grade", "top relevance grade G (runs hold grades 0..G; 1 = binary)", default=1)
#: Persistence of rank-biased measures.
PERSISTENCE = Param("p", "prob", "persistence, a number in (0, 1)")
