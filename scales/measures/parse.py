"""Parsing measure names such as ``AP@10``, ``RBP(p=0.8)@30`` or ``nDCG(b=2)@10``.

Names are parsed with :mod:`ast` as the Python expression they happen to be
(``NAME(param=literal, ...) @ N``); only names, keyword arguments with numeric literals
and an integer cutoff are accepted, nothing user-supplied is ever evaluated.
"""
from __future__ import annotations

import ast
import difflib
from typing import NoReturn

from irscale.errors import MeasureError
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.registry import families


class _Choice(str):
    """A bare name given as a parameter value (``crossing=literal``)."""


def _known() -> str:
    return ", ".join(cls.example() for cls in families().values())


def _complete(src: str, name: str, family: str) -> str:
    """A whole name to suggest for ``src`` with its measure name ``name`` replaced by the
    family ``family``: ``src`` so respelled when it parses, else the family's example
    (``nDCG(b=2)@10`` for ``ndcg@10``: irscale's nDCG needs ``b``)."""
    respelled = src.replace(name, family, 1)
    try:
        parse_measure(respelled)
    except MeasureError:
        return families()[family].example()
    return respelled


def _unknown(name: str, src: str) -> NoReturn:
    fams = families()
    lower = [known for known in fams if known.lower() == name.lower()]
    close = lower or difflib.get_close_matches(name, list(fams), n=1, cutoff=0.5)
    hint = f" (did you mean {_complete(src, name, close[0])}?)" if close else ""
    raise MeasureError(f"unknown measure {name!r}{hint}; known measures: {_known()}")


def _with_cutoff(src: str, name: str) -> str:
    """An example of ``src`` with a cutoff, for the error of a name without one."""
    if name in families():
        try:
            return str(parse_measure(f"{src}@10"))
        except MeasureError:
            return families()[name].example()
    return "AP@10 or RBP(p=0.8)@30"


def parse_measure(text: str | Measure) -> Measure:
    """Parse one measure name into a :class:`Measure`.

    >>> str(parse_measure("RBP(p=0.80)@30"))
    'RBP(p=0.8)@30'

    Raises :class:`~irscale.errors.MeasureError` with a message that says what is allowed.
    """
    if isinstance(text, Measure):
        return text
    if not isinstance(text, str) or not text.strip():
        raise MeasureError(f"empty measure name; known measures: {_known()}")
    src = text.strip()
    try:
        tree = ast.parse(src, mode="eval").body
    except SyntaxError:
        raise MeasureError(f"cannot parse measure {src!r}: expected NAME@N or NAME(param=value,...)@N, "
                           f"e.g. AP@10 or RBP(p=0.8)@30") from None
    if not (isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.MatMult)):
        head = tree.func if isinstance(tree, ast.Call) else tree
        if isinstance(head, ast.Name) and head.id not in families():
            _unknown(head.id, src)
        example = _with_cutoff(src, head.id) if isinstance(head, ast.Name) else "AP@10 or RBP(p=0.8)@30"
        raise MeasureError(f"measure {src!r} needs a cutoff: write it as NAME@N, e.g. {example}")
    cutoff = tree.right
    if not (isinstance(cutoff, ast.Constant) and isinstance(cutoff.value, int) and not isinstance(cutoff.value, bool)):
        raise MeasureError(f"measure {src!r}: the cutoff after @ must be a positive integer")
    head = tree.left
    kwargs: dict[str, object] = {}
    if isinstance(head, ast.Call):
        if head.args:
            raise MeasureError(f"measure {src!r}: parameters must be named, e.g. RBP(p=0.8)@30")
        for kw in head.keywords:
            if kw.arg is None:
                raise MeasureError(f"measure {src!r}: parameters must be named, e.g. RBP(p=0.8)@30")
            value = kw.value
            if isinstance(value, ast.Tuple):      # gains=(0,1,3)
                items = value.elts
                if not all(isinstance(e, ast.Constant) and isinstance(e.value, int) and not isinstance(e.value, bool)
                           for e in items):
                    raise MeasureError(f"measure {src!r}: parameter {kw.arg} must be a tuple of integer literals, "
                                       f"got {ast.unparse(value)!r}")
                if kw.arg in kwargs:
                    raise MeasureError(f"measure {src!r}: parameter {kw.arg} given twice")
                kwargs[kw.arg] = tuple(e.value for e in items)
                continue
            if isinstance(value, ast.Name):       # crossing=literal
                if kw.arg in kwargs:
                    raise MeasureError(f"measure {src!r}: parameter {kw.arg} given twice")
                kwargs[kw.arg] = _Choice(value.id)
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, (int, float))
                    and not isinstance(value.value, bool)):
                raise MeasureError(f"measure {src!r}: parameter {kw.arg} must be a plain non-negative number "
                                   f"literal, got {ast.unparse(value)!r}")
            if kw.arg in kwargs:
                raise MeasureError(f"measure {src!r}: parameter {kw.arg} given twice")
            # keep the literal's own text so that 0.3 means 3/10 exactly
            seg = ast.get_source_segment(src, value)
            kwargs[kw.arg] = seg if isinstance(value.value, float) and seg else value.value
        head = head.func
    if not isinstance(head, ast.Name):
        raise MeasureError(f"cannot parse measure {src!r}; known measures: {_known()}")
    cls = families().get(head.id)
    if cls is None:
        _unknown(head.id, src)
    allowed = {p.name: p for p in cls.params}
    for name in kwargs:
        if name not in allowed:
            what = ", ".join(f"{p.name} ({p.description})" for p in cls.params) or "none"
            raise MeasureError(f"{cls.name} has no parameter {name!r}; its parameters: {what}")
    for name, value in list(kwargs.items()):
        kind = allowed[name].kind
        if isinstance(value, _Choice) != (kind == "choice"):
            raise MeasureError(f"{cls.name}: parameter {name} ({allowed[name].description}) "
                               + (f"must be one of {', '.join(allowed[name].choices)}" if kind == "choice"
                                  else "must be a number" if kind != "gains" else "must be a tuple like (0,1,3)"))
        if isinstance(value, _Choice):
            kwargs[name] = str(value)
            continue
        if isinstance(value, tuple) != (kind == "gains"):
            raise MeasureError(f"{cls.name}: parameter {name} ({allowed[name].description}) "
                               + ("must be a tuple like (0,1,3)" if kind == "gains" else "must be a number"))
        if isinstance(value, str) and kind not in ("prob", "positive"):
            kwargs[name] = float(value)
    return cls(n=cutoff.value, **kwargs)


def split_measures(text: str) -> list[str]:
    """Split a comma-separated list of measure names, respecting parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def parse_measures(text: str | list) -> list[Measure]:
    """Parse a comma-separated list (or a list) of measure names; duplicates are dropped."""
    items = split_measures(text) if isinstance(text, str) else list(text)
    if not items:
        raise MeasureError("no measure given")
    out: list[Measure] = []
    for item in items:
        m = parse_measure(item)
        if m not in out:
            out.append(m)
    return out
