"""The requests read and checked: a POST /v1/rank body (:func:`parse_request`, its runs read
in bulk by :func:`runs_array`), GET /v1/table's query, and the errors of requests. Messages
quote at most :data:`MAX_QUOTED` characters of what the client sent."""
from __future__ import annotations

import contextlib
import reprlib
from typing import Any

import numpy as np
import pydantic_core
from pydantic import ValidationError

from irscale.errors import IrscaleError, RunError
from irscale.scales.measures.measure import Measure
from irscale.service.limits import MAX_DETAILS, MAX_FIELDS, MAX_QUOTED, MAX_RB_ITEMS, VIEW_PARAMETERS
from irscale.service.models import RankQuery, RankRequest

_FIELDS = ", ".join(RankRequest.model_fields)
_QUOTE = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = _QUOTE.maxlong = MAX_QUOTED


class RequestError(IrscaleError, ValueError):
    """A request that is not a valid one, or asks for more work than the service does at
    once (HTTP 422); ``details`` lists validation problems as ``{"loc": ..., "message": ...}``."""

    def __init__(self, message: str, details: list | None = None):
        super().__init__(message)
        self.details = details


class InvalidJSONError(RequestError):
    """The request body is not JSON (HTTP 400)."""


class PayloadTooLargeError(IrscaleError):
    """A request body, or a list of it, larger than the service reads (HTTP 413)."""


def short(value: Any) -> str:
    """The repr of ``value`` cut to about :data:`MAX_QUOTED` characters (lists to their first items)."""
    return _QUOTE.repr(value)


def parse_request(body: bytes, max_items: int) -> RankQuery:
    """The request of a POST /v1/rank body, its runs still lists. Raises InvalidJSONError
    (400) for empty or malformed JSON, PayloadTooLargeError (413) for more than ``max_items``
    values or runs or :data:`MAX_RB_ITEMS` counts in ``rb``, RequestError (422) else."""
    if not body.strip():
        raise InvalidJSONError('the request body is empty; send a JSON object like '
                               '{"measure": "AP@10", "rb": 5, "values": [0.5]}')
    try:
        request = pydantic_core.from_json(body)     # its parser bounds nesting and the length of integers
    except ValueError as e:
        if str(e).startswith(("recursion limit exceeded", "number out of range")):
            raise RequestError(f"the request body nests lists too deeply or holds too long an integer ({e}); a "
                               f"request is an object whose fields hold numbers, lists of numbers (values, rb) "
                               f"or lists of runs (runs)") from None
        raise InvalidJSONError(f"the request body is not valid JSON: {e}") from None
    if not isinstance(request, dict):
        raise RequestError(f"the request body must be a JSON object with the fields {_FIELDS}")
    if len(request) > MAX_FIELDS:
        raise RequestError(f"the request has {len(request)} fields, at most {MAX_FIELDS} are read; the fields "
                           f"are {_FIELDS}")
    for name, most in (("values", max_items), ("runs", max_items), ("rb", MAX_RB_ITEMS)):
        items = request.get(name)
        if isinstance(items, list) and len(items) > most:
            raise PayloadTooLargeError(f"rb has {len(items)} items; per-grade counts have at most {most} (one per "
                                       f"grade)" if name == "rb" else f"{len(items)} {name} in one request; this "
                                       f"service answers at most {most} per request: split the batch")
    try:
        return RankQuery.model_validate(request)
    except ValidationError as e:
        raise validation_error(e.errors(include_url=False)) from None


def _loc(loc: tuple) -> str:
    """('runs', 0, 2) -> 'runs[0][2]' (names cut to :data:`MAX_QUOTED` characters)."""
    return "".join(f"[{part}]" if isinstance(part, int) else (f".{part}" if i else str(part)[:MAX_QUOTED])
                   for i, part in enumerate(loc)) or "body"


def validation_error(errors: list[dict]) -> RequestError:
    """Pydantic's validation problems as a RequestError naming the first; ``details`` lists
    the first :data:`MAX_DETAILS`."""
    details: list[dict] = []
    for problem in errors:
        loc = problem["loc"]
        if loc[:1] == ("rb",) and len(loc) > 1 and loc[1] in ("int", "list[int]"):    # one message for rb's types
            if details and details[-1]["loc"] == "rb":
                continue
            message = "Input should be a valid integer (or, for graded measures, a list of per-grade counts)"
            loc, problem = ("rb",), {**problem, "msg": message}
        if problem["type"] == "extra_forbidden":
            message = f"unknown field {short(loc[0])} (the fields are {_FIELDS})"
        elif problem["type"] == "missing":
            message = "field required"
        else:
            message = f"{problem['msg']}, got {short(problem['input'])}"
        details.append({"loc": _loc(loc), "message": message})
    more = len(details) - 1
    return RequestError(f"{details[0]['loc']}: {details[0]['message']}"
                        + (f" (and {more} more problem{'s' * (more > 1)})" if more else ""), details[:MAX_DETAILS])


def runs_array(runs: list, measure: Measure, maybe_bools: bool = True) -> np.ndarray | list:
    """Judged runs as :meth:`Scale.rank_runs` takes them: runs of length N as one integer
    array when numpy reads them so (checked in bulk), else the lists, checked one by one
    (``maybe_bools``: the body holds ``true`` or ``false``, which numpy reads as 1 and 0)."""
    if set(map(type, runs)) - {list}:       # the scale would read a flat list as one run
        i = next(i for i, run in enumerate(runs) if type(run) is not list)
        raise RunError(f"runs[{i}] must be a list of relevance degrees, got {short(runs[i])}")
    n, truncated = measure.n, measure.run_space == "truncated"
    lengths = np.fromiter(map(len, runs), np.int64, len(runs))
    bad = np.flatnonzero(lengths > n if truncated else lengths != n)
    if bad.size:
        i = int(bad[0])
        raise RunError(f"runs[{i}] has {lengths[i]} documents; rankings of {measure} have at most N = {n}" if truncated
                       else f"runs[{i}] has length {lengths[i]}; runs of {measure} have length N = {n}")
    if not truncated and not maybe_bools:
        with contextlib.suppress(ValueError, TypeError, OverflowError):
            whole = np.array(runs)
            if whole.dtype == np.int64 and whole.ndim == 2:
                return whole
    return runs


def check_view_names(items: list[tuple[str, str]]) -> None:
    """Raise RequestError (422) for a query parameter of GET /v1/table unknown or given twice."""
    seen: set[str] = set()
    for name, _ in items:
        if name not in VIEW_PARAMETERS:
            raise RequestError(f"unknown parameter {short(name)} (the parameters are {', '.join(VIEW_PARAMETERS)})",
                               [{"loc": name[:MAX_QUOTED], "message": "unknown parameter"}])
        if name in seen:
            raise RequestError(f"parameter {name!r} given twice", [{"loc": name, "message": "given twice"}])
        seen.add(name)


def view_rb(text: str | None) -> int | tuple[int, ...] | None:
    """The ``rb`` of GET /v1/table: ``5``, or per-grade counts ``3,2`` (brackets or
    parentheses allowed, which make counts even of one: ``(3)``)."""
    text = (text or "").strip()
    if not text:
        return None
    inner = text[1:-1] if text[:1] + text[-1:] in ("()", "[]") else text
    parts = [part.strip() for part in inner.strip().removesuffix(",").split(",")]
    if len(parts) > MAX_RB_ITEMS or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
        raise RequestError(f"rb must be an integer (the topic's recall base) or per-grade counts like 3,2; "
                           f"got {short(text)}", [{"loc": "rb", "message": "an integer or counts like 3,2"}])
    return tuple(map(int, parts)) if len(parts) > 1 or inner != text else int(parts[0])
