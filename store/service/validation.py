"""A POST /v1/rank body read (:func:`parse_request`): its size bounded on the raw bytes,
parsed (pydantic_core: nesting and number length bounded by the parser), its fields and
lists counted, validated (pydantic), and its judged runs checked in bulk (:func:`runs_array`).
Every message quotes at most a few dozen characters of what the client sent."""
from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pydantic_core
from pydantic import ValidationError

from irscale.errors import RunError
from irscale.scales.measures.measure import Measure
from irscale.store.service.errors import InvalidJSONError, PayloadTooLargeError, RequestError, short
from irscale.store.service.limits import (
    MAX_DETAILS,
    MAX_FIELDS,
    MAX_OTHER_ITEMS,
    MAX_QUOTED,
    MAX_RB_ITEMS,
    MAX_RUN_LENGTH,
)
from irscale.store.service.models import RankRequest, _RankQuery

_FIELDS = ", ".join(RankRequest.model_fields)
#: What the parser says of valid JSON it will not read: too deep, or an integer too long.
_REFUSED = ("recursion limit exceeded", "number out of range")


def parse_request(body: bytes, max_items: int) -> _RankQuery:
    """The request of a POST /v1/rank body, parsed and validated (its runs still lists:
    :func:`runs_array` checks them against the measure).

    Raises
    ------
    InvalidJSONError
        Empty or malformed JSON (400).
    PayloadTooLargeError
        More lists than ``max_items`` runs need, ``values`` or ``runs`` of more than
        ``max_items`` items, more than :data:`MAX_RB_ITEMS` in ``rb``, more than
        :data:`MAX_OTHER_ITEMS` in another list (413).
    RequestError
        Not an object, nested too deeply, an integer too long, more than
        :data:`MAX_FIELDS` fields (or ``:`` than they need), or not a valid request (422).
    """
    if not body.strip():
        raise InvalidJSONError('the request body is empty; send a JSON object like '
                               '{"measure": "AP@10", "rb": 5, "values": [0.5]}')
    # each [ or { costs the parser a Python object of 56 bytes or more: counted before it
    # builds any (a body of 64 MiB of [] would need 1.4 GB), with room for brackets in strings
    most = max_items + MAX_FIELDS + 200
    if body.count(b"[") + body.count(b"{") > most:
        raise PayloadTooLargeError(f"the request body holds more than {most} lists; this service answers at most "
                                   f"{max_items} runs per request: split the batch")
    if body.count(b":") > MAX_FIELDS + 200:     # each field costs a ':', a measure name may hold 200
        raise RequestError(f"the request body holds more than {MAX_FIELDS + 200} ':'; a request has at most "
                           f"{MAX_FIELDS} fields (the fields are {_FIELDS})")
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
    for name, items in request.items():
        if not isinstance(items, list):
            continue
        if name in ("values", "runs") and len(items) > max_items:
            raise PayloadTooLargeError(f"{len(items)} {name} in one request; this service answers at most "
                                       f"{max_items} per request: split the batch")
        if name == "rb" and len(items) > MAX_RB_ITEMS:
            raise PayloadTooLargeError(f"rb has {len(items)} items; per-grade counts have at most {MAX_RB_ITEMS} "
                                       f"(one per grade)")
        if name not in ("values", "runs", "rb") and len(items) > MAX_OTHER_ITEMS:
            raise PayloadTooLargeError(f"{short(name)} holds a list of {len(items)} items; only values and runs "
                                       f"take more than {MAX_OTHER_ITEMS}")
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


def runs_array(runs: list, measure: Measure, maybe_bools: bool = True) -> np.ndarray:
    """Judged runs of a request (a list of lists, as parsed from JSON) as the array
    :meth:`~irscale.scales.tables.scale.Scale.rank_runs` takes, checked in bulk and
    stopping at the first bad run: every run a list, of length N (at most N for
    measures over truncated rankings, which are padded here with their end marker),
    every degree an integer in 0..G (booleans, floats, strings and negative numbers
    refused). Raises :class:`~irscale.errors.RunError` naming the run (and item), or
    PayloadTooLargeError for a run longer than any cutoff. Without ``maybe_bools`` (the
    body has no ``true`` nor ``false``), runs of equal length that numpy reads as one
    integer array skip the check of each item's type."""
    n, top = measure.n, measure.levels - 1
    truncated = measure.run_space == "truncated"
    m = len(runs)
    if m == 0:
        return np.zeros((0, n), np.uint8)
    if set(map(type, runs)) != {list}:
        i = next(i for i, r in enumerate(runs) if type(r) is not list)
        raise RunError(f"runs[{i}] must be a list of relevance degrees, got {short(runs[i])}")
    lengths = np.fromiter(map(len, runs), np.int64, m)
    if lengths.max() > MAX_RUN_LENGTH:
        i = int(np.argmax(lengths > MAX_RUN_LENGTH))
        raise PayloadTooLargeError(f"runs[{i}] has {lengths[i]} items; runs have at most N = {MAX_RUN_LENGTH} "
                                   f"degrees (the largest cutoff)")
    bad = np.flatnonzero(lengths > n if truncated else lengths != n)
    if bad.size:
        i = int(bad[0])
        if truncated:
            raise RunError(f"runs[{i}] has {lengths[i]} degrees; rankings of {measure} have at most N = {n}")
        raise RunError(f"runs[{i}] has length {lengths[i]}; runs of {measure} have length N = {n}")
    whole = None
    if not truncated and not maybe_bools:      # floats, strings, lists, huge integers: not int64, or 3-d
        with contextlib.suppress(ValueError, TypeError, OverflowError):
            whole = np.array(runs)
        whole = whole if whole is not None and whole.dtype == np.int64 and whole.ndim == 2 else None
    if whole is None and set(map(type, itertools.chain.from_iterable(runs))) != {int}:
        i, j, g = next((i, j, g) for i, run in enumerate(runs) for j, g in enumerate(run) if type(g) is not int)
        if isinstance(g, list):
            raise RunError(f"runs[{i}] holds a list where a relevance degree belongs: a run is a flat list of "
                           f"integers, e.g. [1, 0, 1]")
        raise RunError(f"runs[{i}][{j}]: relevance degrees must be integers, got {short(g)}")
    try:
        flat = (whole if whole is not None else np.array(runs, np.int64)).reshape(-1) if not truncated else (
                np.fromiter(itertools.chain.from_iterable(runs), np.int64, int(lengths.sum())))
    except OverflowError:       # an integer beyond 64 bits: certainly outside REL
        flat = np.fromiter((g if -1 <= g <= top + 1 else -1 for g in itertools.chain.from_iterable(runs)),
                           np.int64, int(lengths.sum()))
    bad = np.flatnonzero((flat < 0) | (flat > top))
    if bad.size:
        ends = np.cumsum(lengths)
        i = int(np.searchsorted(ends, bad[0], side="right"))
        j = int(bad[0] - (ends[i] - lengths[i]))
        g = runs[i][j]
        raise RunError(f"runs[{i}]: degree {short(g)} at rank {j + 1} is outside REL = {{0..{top}}}"
                       + (" (a ranking ends where its list ends)" if truncated and g < 0 else ""))
    if not truncated:
        return flat.astype(np.uint8).reshape(m, n)
    out = np.full((m, n), -1, np.int8)              # -1: after the end of a ranking (irscale's marker)
    out[np.arange(n)[None, :] < lengths[:, None]] = flat
    return out
