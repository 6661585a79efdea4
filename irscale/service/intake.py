"""A POST /v1/rank body read (:func:`parse_request`): parsed (pydantic_core, whose parser
bounds nesting and number length), its fields and lists counted, validated (pydantic), and its
judged runs read in bulk (:func:`runs_array`). Every message quotes at most a few dozen
characters of what the client sent."""
from __future__ import annotations

import contextlib

import numpy as np
import pydantic_core
from pydantic import ValidationError

from irscale.errors import RunError
from irscale.scales.measures.measure import Measure
from irscale.service.errors import InvalidJSONError, PayloadTooLargeError, RequestError, short
from irscale.service.limits import MAX_DETAILS, MAX_FIELDS, MAX_QUOTED, MAX_RB_ITEMS
from irscale.service.models import RankRequest, _RankQuery

_FIELDS = ", ".join(RankRequest.model_fields)
#: What the parser says of valid JSON it will not read: too deep, or an integer too long.
_REFUSED = ("recursion limit exceeded", "number out of range")


def parse_request(body: bytes, max_items: int) -> _RankQuery:
    """The request of a POST /v1/rank body, parsed and validated (its runs still lists:
    :func:`runs_array` checks them against the measure). Raises InvalidJSONError for empty
    or malformed JSON (400); PayloadTooLargeError for ``values`` or ``runs`` of more than
    ``max_items`` items or more than :data:`MAX_RB_ITEMS` in ``rb`` (413); RequestError for
    anything else (not an object, nested too deeply, an integer too long, more than
    :data:`MAX_FIELDS` fields, not a valid request: 422)."""
    if not body.strip():
        raise InvalidJSONError('the request body is empty; send a JSON object like '
                               '{"measure": "AP@10", "rb": 5, "values": [0.5]}')
    try:
        request = pydantic_core.from_json(body)
    except ValueError as e:
        if str(e).startswith(_REFUSED):
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
        return _RankQuery.model_validate(request)
    except ValidationError as e:
        raise validation_error(e.errors(include_url=False)) from None


def _loc(loc: tuple) -> str:
    """('runs', 0, 2) -> 'runs[0][2]' (names cut to :data:`MAX_QUOTED` characters)."""
    return "".join(f"[{part}]" if isinstance(part, int) else (f".{part}" if i else str(part)[:MAX_QUOTED])
                   for i, part in enumerate(loc)) or "body"


def validation_error(errors: list[dict]) -> RequestError:
    """The problems of a pydantic validation error (its ``errors()``) as a RequestError
    whose message names the first; ``details`` lists the first :data:`MAX_DETAILS`."""
    problems: list[dict] = []
    for problem in errors:
        if problem["loc"][:1] == ("rb",) and len(problem["loc"]) > 1 and problem["loc"][1] in ("int", "list[int]"):
            # one message for both branches of rb's type (an integer, or a list of per-grade counts)
            if any(p["loc"] == ("rb",) for p in problems):
                continue
            problem = {"loc": ("rb",), "type": "rb", "input": problem["input"],
                       "msg": "Input should be a valid integer (or, for graded measures, a list of per-grade counts)"}
        problems.append(problem)
    details = []
    for problem in problems[:MAX_DETAILS]:
        if problem["type"] == "extra_forbidden":
            message = f"unknown field {short(problem['loc'][0])} (the fields are {_FIELDS})"
        elif problem["type"] == "missing":
            message = "field required"
        else:
            message = f"{problem['msg']}, got {short(problem['input'])}"
        details.append({"loc": _loc(problem["loc"]), "message": message})
    more = len(problems) - 1
    return RequestError(f"{details[0]['loc']}: {details[0]['message']}"
                        + (f" (and {more} more problem{'s' * (more > 1)})" if more else ""), details)


def runs_array(runs: list, measure: Measure, maybe_bools: bool = True) -> np.ndarray | list:
    """Judged runs of a request as :meth:`~irscale.scales.tables.scale.Scale.rank_runs` takes
    them: runs of length N that numpy reads as one integer array as that array (the scale
    checks their degrees in bulk), else the lists, which the scale checks one by one (each
    an integer in 0..G, booleans, floats and strings refused: hence ``maybe_bools``, the
    body holds ``true`` or ``false``, which numpy would read as 1 and 0)."""
    if set(map(type, runs)) - {list}:       # the scale would read a flat list as one run
        i = next(i for i, run in enumerate(runs) if type(run) is not list)
        raise RunError(f"runs[{i}] must be a list of relevance degrees, got {short(runs[i])}")
    n, truncated = measure.n, measure.run_space == "truncated"
    lengths = np.fromiter(map(len, runs), np.int64, len(runs))
    bad = np.flatnonzero(lengths > n if truncated else lengths != n)
    if bad.size:        # named here in bulk (the scale would check the lists one by one)
        i = int(bad[0])
        raise RunError(f"runs[{i}] has {lengths[i]} documents; rankings of {measure} have at most N = {n}" if truncated
                       else f"runs[{i}] has length {lengths[i]}; runs of {measure} have length N = {n}")
    if not truncated and not maybe_bools:
        with contextlib.suppress(ValueError, TypeError, OverflowError):
            whole = np.array(runs)
            if whole.dtype == np.int64 and whole.ndim == 2:
                return whole
    return runs
