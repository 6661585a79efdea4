"""A request's content checked: pydantic's validation problems as one
:class:`~irscale.store.service.errors.RequestError` naming the first, and the judged runs
of a request (parsed JSON) as the array the scales rank, checked in bulk."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from pydantic import ValidationError

from irscale.errors import RunError
from irscale.scales.measures.measure import Measure
from irscale.store.service.errors import RequestError
from irscale.store.service.limits import MAX_DETAILS
from irscale.store.service.models import RankRequest


def _loc(loc: tuple) -> str:
    """('runs', 0, 2) -> 'runs[0][2]'."""
    return "".join(f"[{part}]" if isinstance(part, int) else (f".{part}" if i else str(part))
                   for i, part in enumerate(loc)) or "body"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _validation_error(error: ValidationError) -> RequestError:
    """A pydantic validation error as a RequestError whose message names the first
    problem; ``details`` lists the first :data:`MAX_DETAILS`."""
    fields = ", ".join(RankRequest.model_fields)
    details = []
    problems, count = [], 0
    for problem in error.errors():
        if problem["loc"][:1] == ("rb",) and len(problem["loc"]) > 1 and problem["loc"][1] in ("int", "list[int]"):
            # one message for both branches of rb's type (an integer, or a list of per-grade counts)
            if any(p["loc"] == ("rb",) for p in problems):
                continue
            problem = {"loc": ("rb",), "type": "rb", "input": problem["input"],
                       "msg": "Input should be a valid integer (or, for graded measures, a list of per-grade counts)"}
        problems.append(problem)
    count = len(problems)
    for problem in problems[:MAX_DETAILS]:
        loc = _loc(problem["loc"])
        if problem["type"] == "extra_forbidden":
            message = f"unknown field {loc!r} (the fields are {fields})"
        elif problem["type"] == "missing":
            message = "field required"
        else:
            message = f"{problem['msg']}, got {_short(problem['input'])}"
        details.append({"loc": loc, "message": message})
    more = count - 1
    first = details[0]
    return RequestError(f"{first['loc']}: {first['message']}"
                        + (f" (and {more} more problem{'s' * (more > 1)})" if more else ""), details)


def runs_array(runs: list, measure: Measure, first: int = 0) -> np.ndarray:
    """Judged runs of a request (a list of lists, as parsed from JSON) as the array
    :meth:`~irscale.scales.tables.scale.Scale.rank_runs` takes, checked in bulk and
    stopping at the first bad run: every run a list, of length N (at most N for
    measures over truncated rankings, which are padded here with their end marker),
    every degree an integer in 0..G (booleans, floats, strings and negative numbers
    refused). Raises :class:`~irscale.errors.RunError` naming the run (and item), ``runs[i
    + first]`` for the run at index i of ``runs``."""
    n, top = measure.n, measure.levels - 1
    truncated = measure.run_space == "truncated"
    m = len(runs)
    if m == 0:
        return np.zeros((0, n), np.uint8)
    if set(map(type, runs)) != {list}:
        i = next(i for i, r in enumerate(runs) if type(r) is not list)
        raise RunError(f"runs[{i + first}] must be a list of relevance degrees, got {_short(runs[i])}")
    lengths = np.fromiter(map(len, runs), np.int64, m)
    bad = np.flatnonzero(lengths > n if truncated else lengths != n)
    if bad.size:
        i = int(bad[0])
        if truncated:
            raise RunError(f"runs[{i + first}] has {lengths[i]} degrees; rankings of {measure} have at most N = {n}")
        raise RunError(f"runs[{i + first}] has length {lengths[i]}; runs of {measure} have length N = {n}")
    total = int(lengths.sum())
    if set(map(type, itertools.chain.from_iterable(runs))) - {int}:
        for i, run in enumerate(runs):
            for j, g in enumerate(run):
                if type(g) is not int:
                    raise RunError(f"runs[{i + first}][{j}]: relevance degrees must be integers, got {_short(g)}")
    try:
        flat = np.fromiter(itertools.chain.from_iterable(runs), np.int64, total)
    except OverflowError:       # an integer beyond 64 bits: certainly outside REL
        flat = np.fromiter((g if -1 <= g <= top + 1 else -1 for g in itertools.chain.from_iterable(runs)),
                           np.int64, total)
    bad = np.flatnonzero((flat < 0) | (flat > top))
    if bad.size:
        k = int(bad[0])
        ends = np.cumsum(lengths)
        i = int(np.searchsorted(ends, k, side="right"))
        j = k - int(ends[i] - lengths[i])
        g = runs[i][j]
        raise RunError(f"runs[{i + first}]: degree {_short(g)} at rank {j + 1} is outside REL = {{0..{top}}}"
                       + (" (a ranking ends where its list ends)" if truncated and g < 0 else ""))
    if not truncated:
        return flat.astype(np.uint8).reshape(m, n)
    out = np.full((m, n), -1, np.int8)              # -1: after the end of a ranking (irscale's marker)
    out[np.arange(n)[None, :] < lengths[:, None]] = flat
    return out

