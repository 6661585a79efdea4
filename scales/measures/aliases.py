"""Names other tools give irscale's measures: ir_measures' (``nDCG@10``, ``AP(rel=2)@10``,
``RBP(rel=2,p=0.8)@10``, ``ERR@20``) and trec_eval's (``P_10`` as it prints them, ``P.10``
as ``-m`` takes them, ``map_cut_10``, ``ndcg_cut.10``, ``recip_rank``, ``rbp_p=0.8``).

Each name is mapped to the irscale measure with the same per-query values (the tests
compare them with ir_measures, pytrec_eval, gdeval and trec_eval 10.0 on TREC data).
irscale's own names stay canonical: stores, outputs and :func:`parse_measure` use them
only; the readers here are for what users type.

The mapping data live with the families (a measure owns its special cases): a family
class lists ``other_names``, a tuple of :class:`OtherName` declarations, each naming the
tool, the tool's name and a reader ``(family class, Request) -> Measure``. This module is
the generic machinery: it parses the other tool's syntax into a :class:`Request`, finds the
declaration and lets the family read it. A family without other names declares nothing.

Some names need facts about the data:

``top_level``
    the qrels' highest relevance level T. ir_measures' ``nDCG@10`` is trec_eval's
    ``ndcg_cut.10``, whose gains are the levels, so it is
    ``nDCG_trec(gains=(0,1,..,T))@10``; its ``ERR@10`` (gdeval) is
    ``ERR(gains=(0,1,..,T),max_grade=4)@10``.
``depth``
    the length of the runs' rankings, for the names without a cutoff that rank the whole
    run (ir_measures' ``AP``, ``RR``, ``Rprec``; trec_eval's ``map``, ``recip_rank``,
    ``Rprec``, ``rbp``): irscale cuts at N = depth, which gives the same values when no
    ranking is longer than depth.

A name that cannot be read raises :class:`~irscale.errors.MeasureError` saying why and
what to write instead.

:mod:`irscale.scales.measures.user_names` reads the names users type with these readers.
"""
from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from irscale.errors import MeasureError
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.params import MAX_LEVELS
from irscale.scales.measures.registry import families

#: The vocabularies of measure names users may write in.
NAMES = ("irscale", "ir_measures", "trec_eval")
#: The vocabulary of every user entry point by default: names as ir_measures and trec_eval
#: spell them mean what they mean there; names only irscale has read as irscale's.
DEFAULT_NAMES = "ir_measures"


class MissingFactError(MeasureError):
    """A name whose measure depends on a fact about the data the caller did not give
    (``fact``: ``"depth"``, the runs' ranking length, or ``"top_level"``, the qrels'
    highest relevance level)."""

    def __init__(self, message: str, fact: str) -> None:
        super().__init__(message)
        self.fact = fact

#: Prefixes choosing the vocabulary of one name.
PREFIXES = {"irscale:": "irscale", "irm:": "ir_measures", "ir_measures:": "ir_measures", "trec:": "trec_eval",
            "trec_eval:": "trec_eval"}

#: Tools whose names families declare.
TOOLS = ("ir_measures", "trec_eval")


@dataclasses.dataclass(frozen=True)
class Request:
    """A name of another tool being read, as the family's reader gets it.

    ``text`` is the name as written, ``name`` the tool's measure name (``"AP"``,
    ``"map_cut"``), ``params`` ir_measures' parameters with their defaults filled in
    (floats kept as the text written, so that ``p=0.85`` is 17/20 exactly), ``cutoff`` the
    number after ``@`` (ir_measures) or after ``_`` / ``.`` (trec_eval), ``arg`` the text
    after trec_eval's ``_`` / ``.`` when it is not a cutoff (``p=0.8``), ``top_level`` and
    ``depth`` what the caller knows of the data (module docstring).
    """

    tool: str
    text: str
    name: str
    params: Mapping[str, Any]
    cutoff: int | None
    arg: str | None
    top_level: int | None
    depth: int | None
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def fail(self, why: str, fact: str | None = None) -> NoReturn:
        """Raise the MeasureError of this name (``why``: what is wrong and what to write;
        ``fact``: the fact about the data it lacks, see :class:`MissingFactError`)."""
        message = f"{self.tool} measure {self.text!r}: {why}"
        raise MeasureError(message) if fact is None else MissingFactError(message, fact)

    def n(self, whole_ranking: bool = True) -> int:
        """irscale's cutoff: the name's cutoff, or, for a name that ranks the whole run
        (``whole_ranking``), the runs' depth."""
        if self.cutoff is not None:
            return self.cutoff
        if not whole_ranking:
            self.fail("it needs a cutoff")
        if self.depth is None:          # the readers below add an example with a cutoff
            self.fail("it ranks the whole run, and irscale cuts rankings at N: give the runs' depth (depth=1000 for "
                      "runs of at most 1000 documents: the same values) or write a cutoff", "depth")
        return self.depth

    def top(self) -> int:
        """The qrels' highest relevance level T (fails when the caller did not give it)."""
        if self.top_level is None:      # the readers below add an example of the irscale measure
            self.fail("its meaning depends on the qrels' relevance levels: give top_level, their highest level "
                      "(top_level=2 for levels 0..2; read from the qrels wherever qrels are given), or write the "
                      "irscale measure", "top_level")
        return self.top_level

    def levels(self) -> tuple[int, ...]:
        """The gains (0, 1, ..., T) of the qrels' levels."""
        return tuple(range(self.top() + 1))

    def default(self, param: str, why: str) -> None:
        """Fail unless ``param`` has its default (``why``: what irscale does instead)."""
        if self.params.get(param) != self.defaults.get(param):
            self.fail(f"{param}={self.params.get(param)!r} is not supported: {why}")

    def threshold(self) -> int:
        """ir_measures' ``rel``: the lowest level counted as relevant (an integer >= 1)."""
        rel = self.params.get("rel")
        if isinstance(rel, bool) or not isinstance(rel, int) or rel < 1:
            self.fail(f"rel must be an integer >= 1 (the lowest relevance level counted as relevant), got {rel!r}")
        return rel

    def binary(self, family: str) -> None:
        """Fail unless ``rel`` is 1: irscale's binary measures count every level >= 1 as
        relevant; other thresholds are a property of the qrels, not of the measure."""
        rel = self.threshold()
        if rel != 1:
            plain = f"{self.name}@{self.cutoff}" if self.cutoff is not None else self.name
            self.fail(f"irscale's {family} counts levels >= 1 as relevant; for a threshold of {rel}, apply it to the "
                      f"qrels with rel_level={rel} (--rel-level {rel} or -l {rel}, as trec_eval's -l: levels below "
                      f"{rel} become 0) and write {plain}")


@dataclasses.dataclass(frozen=True)
class OtherName:
    """A name another tool gives measures of a family (declared by the family).

    ``tool``: ``"ir_measures"`` or ``"trec_eval"``. ``name``: the tool's measure name
    (ir_measures: ``"AP"``; trec_eval: the measure as ``-m`` names it, ``"map_cut"``).
    ``read``: ``(family class, Request) -> Measure``, failing with :meth:`Request.fail`.
    ``meaning``: what the tool computes under this name (for messages and ``irscale
    measures``). ``example``: a name as written (``"AP@10"``, ``"map_cut_10"``) and
    ``maps_to``: the irscale measure it reads as, in words (``"AP@10"``,
    ``"nDCG_trec(gains=(0,1,..,T))@10"``). ir_measures only: ``params``, the parameters
    ir_measures accepts with their defaults (None: not given), ``synonyms`` (``MAP``),
    ``cutoff`` (``"required"``, ``"optional"``: without it the whole ranking,
    ``"none"``). trec_eval only: ``cutoff`` ``"required"`` (``P_10``), ``"none"``
    (``recip_rank``) or ``"arg"`` (``rbp_p=0.8``: parameters after the name).
    """

    tool: str
    name: str
    read: Callable[[type, Request], Measure]
    meaning: str
    example: str
    maps_to: str
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    synonyms: tuple[str, ...] = ()
    cutoff: str = "required"

    def __post_init__(self) -> None:
        if self.tool not in TOOLS:
            raise ValueError(f"unknown tool {self.tool!r}; tools: {', '.join(TOOLS)}")


def other_names(tool: str | None = None) -> list[tuple[type, OtherName]]:
    """(family class, declaration) of every name families declare for ``tool`` (all tools
    when None), in family order."""
    return [(cls, other) for cls in families().values() for other in vars(cls).get("other_names", ())
            if tool is None or other.tool == tool]


# -- ir_measures -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Reading:
    """The outcome of reading a name in one vocabulary: ``measure``, or ``error`` (why it
    cannot be read); ``known``: whether the vocabulary has the name at all."""

    measure: Measure | None = None
    error: str = ""
    known: bool = True
    other: OtherName | None = None
    fact: str | None = None           # what the reading lacks (MissingFactError), if that is why it failed

    def raise_error(self) -> NoReturn:
        raise MeasureError(self.error) if self.fact is None else MissingFactError(self.error, self.fact)


def _literal(src: str, node: ast.AST) -> Any:
    """A parameter value of ir_measures' syntax: a number (floats as their text), a string,
    a boolean, None or a dict of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, float):
        return ast.get_source_segment(src, node) or repr(node.value)
    return ast.literal_eval(node)


def _parse_ir_measures(text: str) -> tuple[str, dict, int | None] | str:
    """(name, parameters, cutoff) of ir_measures' ``NAME(param=value,...)@cutoff`` (both
    parts optional), or the reason it is not that syntax."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return "not ir_measures' syntax NAME(param=value,...)@cutoff"
    cutoff = None
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.MatMult):
        right = tree.right
        if not (isinstance(right, ast.Constant) and isinstance(right.value, int) and not isinstance(right.value, bool)
                and right.value >= 1):
            return "the cutoff after @ must be a positive integer"
        cutoff, tree = right.value, tree.left
    params: dict[str, Any] = {}
    if isinstance(tree, ast.Call):
        if tree.args or any(kw.arg is None for kw in tree.keywords):
            return "parameters must be named"
        for kw in tree.keywords:
            try:
                params[kw.arg] = _literal(text, kw.value)
            except (ValueError, TypeError, SyntaxError):
                return f"parameter {kw.arg} must be a literal, got {ast.get_source_segment(text, kw.value)!r}"
        tree = tree.func
    if not isinstance(tree, ast.Name):
        return "not ir_measures' syntax NAME(param=value,...)@cutoff"
    return tree.id, params, cutoff


def _ir_measures_names() -> str:
    return ", ".join(dict.fromkeys(o.name for _, o in other_names("ir_measures")))


def _read_ir_measures(text: str, top_level: int | None, depth: int | None) -> _Reading:
    parsed = _parse_ir_measures(text)
    if isinstance(parsed, str):
        return _Reading(error=f"ir_measures measure {text!r}: {parsed}", known=False)
    name, params, cutoff = parsed
    found = [(cls, o) for cls, o in other_names("ir_measures") if name == o.name or name in o.synonyms]
    if not found:
        return _Reading(error=f"irscale has no measure for ir_measures' {name!r}; the ir_measures measures it reads "
                              f"are {_ir_measures_names()}", known=False)
    cls, other = found[0]
    unknown = [p for p in params if p not in other.params]
    if unknown:
        accepted = ", ".join(other.params) or "none"
        return _Reading(error=f"ir_measures measure {text!r}: ir_measures' {other.name} has no parameter "
                              f"{unknown[0]!r} (its parameters: {accepted})", known=False)
    if cutoff is not None and other.cutoff == "none":
        return _Reading(error=f"ir_measures measure {text!r}: ir_measures' {other.name} takes no cutoff", known=False)
    if cutoff is None and other.cutoff == "required":
        return _Reading(error=f"ir_measures measure {text!r}: ir_measures' {other.name} needs a cutoff, e.g. "
                              f"{other.example}", known=False)
    request = Request("ir_measures", text, other.name, {**other.params, **params}, cutoff, None, top_level, depth,
                      other.params)
    return _read_declared(cls, other, request)


def _read_declared(cls: type, other: OtherName, request: Request) -> _Reading:
    """The reading of a name by its family's declaration; a name that lacks a fact about
    the data gets an example of what to write instead (the measure on runs of 1000
    documents, or on qrels of levels 0..2)."""
    try:
        return _Reading(measure=other.read(cls, request), other=other)
    except MeasureError as e:
        fact = getattr(e, "fact", None)
        error = str(e)
    if fact is not None:
        given, where = ({"depth": 1000}, "runs of 1000 documents") if fact == "depth" else \
            ({"top_level": 2}, "levels 0..2")
        try:
            example = other.read(cls, dataclasses.replace(request, **given))
        except MeasureError:
            pass
        else:
            error += f", e.g. {example} for {where}"
    return _Reading(error=error, other=other, fact=fact)


def _check_facts(top_level: int | None, depth: int | None) -> None:
    if top_level is not None and (isinstance(top_level, bool) or not isinstance(top_level, int)
                                  or not 1 <= top_level < MAX_LEVELS):
        raise MeasureError(f"top_level (the qrels' highest relevance level) must be an integer from 1 to "
                           f"{MAX_LEVELS - 1}, got {top_level!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1):
        raise MeasureError(f"depth (the length of the runs' rankings) must be a positive integer, got {depth!r}")


def _text_of(measure: Any) -> str:
    if isinstance(measure, str):
        return measure.strip()
    if isinstance(measure, Measure):
        raise MeasureError(f"{measure} is already an irscale measure, not an ir_measures or trec_eval name")
    text = str(measure)                   # ir_measures' measure objects print as their names
    if not text or text.startswith("<"):
        raise MeasureError(f"not a measure name: {measure!r}")
    return text.strip()


def from_ir_measures(measure: Any, top_level: int | None = None, depth: int | None = None) -> Measure:
    """The irscale measure with ir_measures' meaning of ``measure``: a name (``"nDCG@10"``,
    ``"RBP(rel=2,p=0.8)@10"``) or an ir_measures measure object (read as ``str(obj)``).

    ``top_level``: the qrels' highest relevance level (needed by names whose gains are the
    levels: ``nDCG@k``, ``ERR@k``, graded ``RBP``); ``depth``: the runs' ranking length, for
    names without a cutoff (``AP``, ``RR``, ``Rprec``). Raises
    :class:`~irscale.errors.MeasureError` for names irscale does not have (naming those it
    has) and for names it cannot read with what is given (saying what to give or write).

    >>> str(from_ir_measures("nDCG@10", top_level=2))
    'nDCG_trec(gains=(0,1,2))@10'
    """
    return _measure_of(_read_ir_measures, measure, top_level, depth)


def _measure_of(read: Callable[[str, int | None, int | None], _Reading], name: Any, top_level: int | None,
                depth: int | None) -> Measure:
    """The measure a vocabulary's reader reads ``name`` as, or its MeasureError."""
    _check_facts(top_level, depth)
    reading = read(_text_of(name), top_level, depth)
    if reading.measure is None:
        reading.raise_error()
    return reading.measure


# -- trec_eval ---------------------------------------------------------------------------------
_CUTOFF = re.compile(r"[1-9][0-9]*")


def _read_trec_eval(text: str, top_level: int | None, depth: int | None) -> _Reading:
    declared = other_names("trec_eval")
    for cls, other in sorted(declared, key=lambda co: -len(co[1].name)):
        if text == other.name:
            arg = None
        elif text[:len(other.name) + 1] in (other.name + "_", other.name + "."):
            arg = text[len(other.name) + 1:]
        else:
            continue
        cutoff = None
        if other.cutoff == "required":
            if arg is None or not _CUTOFF.fullmatch(arg):
                if arg is None or "," in arg:
                    why = "give one cutoff" if arg else "needs a cutoff"
                    return _Reading(error=f"trec_eval measure {text!r}: {why}, e.g. {other.example}")
                continue                     # another measure whose name starts alike (P_avgjg)
            cutoff, arg = int(arg), None
        elif other.cutoff == "none" and arg is not None:
            continue
        return _read_declared(cls, other, Request("trec_eval", text, other.name, {}, cutoff, arg, top_level, depth))
    names = ", ".join(o.example for _, o in declared)
    return _Reading(error=f"irscale has no measure for trec_eval's {text!r}; the trec_eval measures it reads are "
                          f"{names} (printed with _ as here, or with . as -m takes them: P.10)", known=False)


def from_trec_eval(name: str, top_level: int | None = None, depth: int | None = None) -> Measure:
    """The irscale measure with trec_eval's meaning of ``name``, written as trec_eval prints
    it (``P_10``, ``ndcg_cut_10``, ``rbp_p=0.8``) or as its ``-m`` option takes it
    (``P.10``, ``ndcg_cut.10``, ``rbp.p=0.8``). ``top_level`` and ``depth`` as for
    :func:`from_ir_measures` (``ndcg_cut`` needs the top level; ``map``, ``recip_rank``,
    ``Rprec``, ``rbp`` the depth).

    >>> str(from_trec_eval("map_cut.10"))
    'AP@10'
    """
    return _measure_of(_read_trec_eval, name, top_level, depth)


def is_trec_eval_name(text: str) -> bool:
    """Whether ``text`` is in trec_eval's syntax for a measure irscale reads (such names
    exist in no other vocabulary: they have no ``@``)."""
    return "@" not in text and "(" not in text and _read_trec_eval(text.strip(), None, None).known


def mapping_rows() -> list[tuple[str, str, str, str]]:
    """(tool, example name, irscale measure, what the tool computes) of every declared
    name, for ``irscale measures`` and docs."""
    return [(o.tool, o.example, o.maps_to, o.meaning) for _, o in other_names()]


__all__ = ["DEFAULT_NAMES", "NAMES", "PREFIXES", "MissingFactError", "OtherName", "Request", "from_ir_measures",
           "from_trec_eval", "is_trec_eval_name", "mapping_rows", "other_names"]
