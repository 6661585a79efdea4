"""The requests of the lookup service read and checked (:func:`parse_request`, :func:`view_rb`), their errors
(quoting at most MAX_QUOTED characters of the request), and the models ``/openapi.json`` shows."""
from __future__ import annotations

import contextlib
import reprlib
from typing import Annotated, Any, Literal, get_type_hints

import numpy as np
import pydantic_core
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

import irscale
import irscale.service as limits
from irscale.errors import IrscaleError, RunError
from irscale.store.format import TableInfo

Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
RB = (int | list[int] | None, Field(description="The recall base (null without one; per-grade counts if graded)."))


class RankRequest(BaseModel):
    """Raw values of one measure, or judged runs, to map to unq ranks: exactly one of values and runs."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "values": [0.0, 0.25, 1.0]}, {"measure": "DCG(b=2)@4", "runs": [[1, 0, 1, 0]]}]})

    measure: str = Field(max_length=200, examples=["AP@30"], description="Measure name, e.g. AP@30, RBP(p=0.8)@30.")
    rb: int | list[int] | None = Field(None, examples=[12, [3, 2]], description=(
        "Recall base of the topic (>= 1), for RB-dependent measures only; per-grade counts [c_1, ..., c_G] for "
        "graded ones (gR, nDCG with gains)."))
    values: list[Annotated[float, Field(allow_inf_nan=False)]] | None = Field(  # fail_fast: one bad item reported
        None, fail_fast=True, examples=[[0.0, 0.25, 1.0]], description="Raw measure values to rank.")
    runs: list[list[int]] | None = Field(None, examples=[[[1, 0, 1, 0]]], description=(
        "Judged runs to rank exactly: each the relevance degrees r_1..r_N, r_1 the top document (0 to N for RBPU)."))
    rtol: Tolerance | None = Field(None, description="Relative tolerance of value lookups (default 64 ulps).")
    atol: Tolerance | None = Field(None, description="Absolute tolerance (default: the table's float error bound).")
    decimals: int | None = Field(None, ge=0, le=17, examples=[4], description=(
        "The values were rounded to this many decimals (trec_eval: 4): each ranks the one distinct value within "
        "half a unit of the last decimal (or atol, if larger)."))


#: A RankRequest as validated: its runs are checked with numpy, not item by item.
RankQuery = create_model("RankQuery", __base__=RankRequest, runs=(list[Any] | None, None))


class ViewQuery(BaseModel):
    """The query of GET /v1/table."""

    measure: str = Field(min_length=1, max_length=200, examples=["AP@10"], description="Measure name, e.g. AP@30.")
    rb: str | None = Field(None, max_length=200, description="Recall base, or per-grade counts as 3,2.")
    points: int = Field(limits.DEFAULT_VIEW_POINTS, ge=2, le=limits.MAX_VIEW_POINTS, description="Bins of ranks.")
    bins: int = Field(limits.DEFAULT_GAP_BINS, ge=1, le=limits.MAX_GAP_BINS, description="Bins of the gap histogram.")
    gaps: Literal["log", "linear"] = Field("log", description="Gap bins equally wide in log10 of the gap, or linear.")


RankResponse = create_model(
    "RankResponse", __doc__="Unq ranks (1..k) of the values or runs, in request order, scaled to [0, 1], and what "
                            "answered (exact: table, rank oracle or closed form).",
    measure=(str, ...), rb=RB, k=(int, ...), rank=(list[int], ...), scaled=(list[float], ...), scale=(str, ...))


TableModel = create_model(
    "TableModel", __doc__="Metadata of one table: the fields of irscale info --json, its names (those of ir_measures "
                          "and trec_eval) and whether lookups need the recall base rb.",
    **{name: (int | str if hint is int and name.startswith("n_") else float | None if hint is float else hint, ...)
       for name, hint in get_type_hints(TableInfo).items() if name != "attrs"},    # as to_json writes them
    names=(list[str], ...), rb_dependent=(bool, ...))
StoreInfo = create_model("StoreInfo", __doc__="The store's format (never its location).", format=(str, ...),
                         format_version=(int, ...), created=(str | None, ...), generator_version=(str | None, ...))
TablesResponse = create_model("TablesResponse", __doc__="Every table the service answers for.",
                              store=(StoreInfo, ...), tables=(list[TableModel], ...))
HealthResponse = create_model("HealthResponse", __doc__="The service is up and answers for this many tables.",
                              status=(str, Field(examples=["ok"])), tables=(int, ...))
ErrorResponse = create_model("ErrorResponse", __doc__="The shape of every error answer.", error=(create_model(
    "ErrorInfo", __doc__="The kind of error, a message naming the field or item at fault, and validation problems.",
    type=(str, Field(examples=["RunError"])), message=(str, Field(examples=["runs[2] has length 7"])),
    details=(list[dict[str, str]] | None, None)), ...))
GapHistogram = create_model(
    "GapHistogram", __doc__="Histogram of the gaps between consecutive distinct values (or of those within windows "
                            "of ranks: sampled), bins in log10 of the gap or linear; gaps of 0 counted apart.",
    scale=(str, ...), edges=(list[float], ...), counts=(list[int], ...), zero=(int, ...), used=(int, ...),
    total=(int, ...), sampled=(bool, ...), **dict.fromkeys(("min", "max", "mean", "median"), (float | None, ...)))
TableViewResponse = create_model(
    "TableViewResponse", __doc__="A bounded view of one scale: its ranks 1..K in min(points, K) bins of consecutive "
                                 "ranks, with their first and last ranks and values, and the histogram of its gaps.",
    measure=(str, ...), rb=RB, k=(int, ...), n_runs=(int, ...), points=(int, ...), exact=(bool, ...),
    rank_lo=(list[int], ...), rank_hi=(list[int], ...), value_lo=(list[float], ...), value_hi=(list[float], ...),
    gaps=(GapHistogram, ...))

_FIELDS = ", ".join(RankRequest.model_fields)
VIEW_PARAMETERS = tuple(ViewQuery.model_fields)
_QUOTE = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = _QUOTE.maxlong = limits.MAX_QUOTED
#: The repr of a value cut to about limits.MAX_QUOTED characters (lists to their first items).
short = _QUOTE.repr


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


def parse_request(body: bytes, max_items: int) -> RankQuery:
    """The request of a POST /v1/rank body, its runs still lists. Raises InvalidJSONError
    (400) for empty or malformed JSON, PayloadTooLargeError (413) for more than ``max_items``
    values or runs or :data:`MAX_RB_ITEMS` counts in ``rb``, RequestError (422) else."""
    try:
        request = pydantic_core.from_json(body)     # its parser bounds nesting and the length of integers
    except ValueError as e:
        if str(e).startswith(("recursion limit exceeded", "number out of range")):
            raise RequestError(f"the request body nests lists too deeply or holds too long an integer ({e}); a request "
                               f"is an object of numbers, lists of numbers (values, rb) or of runs (runs)") from None
        raise InvalidJSONError(f"the request body is not valid JSON: {e}" if body.strip() else "the request body is "
                               'empty; send a JSON object like {"measure": "AP@10", "values": [0.5]}') from None
    if not isinstance(request, dict):
        raise RequestError(f"the request body must be a JSON object with the fields {_FIELDS}")
    if len(request) > limits.MAX_FIELDS:
        raise RequestError(f"the request has {len(request)} fields, at most {limits.MAX_FIELDS} are read; the fields "
                           f"are {_FIELDS}")
    for name, most in (("values", max_items), ("runs", max_items), ("rb", limits.MAX_RB_ITEMS)):
        items = request.get(name)
        if isinstance(items, list) and len(items) > most:
            raise PayloadTooLargeError(f"rb has {len(items)} items; per-grade counts have at most {most} (one per "
                                       f"grade)" if name == "rb" else f"{len(items)} {name} in one request; this "
                                       f"service answers at most {most} per request: split the batch")
    try:
        return RankQuery.model_validate(request)
    except ValidationError as e:
        raise validation_error(e.errors(include_url=False)) from None


def validation_error(errors: list[dict]) -> RequestError:
    """Pydantic's validation problems as a RequestError naming the first; ``details`` lists
    the first :data:`MAX_DETAILS`."""
    details: list[dict] = []
    for problem in errors:
        loc, kind = problem["loc"] or ("body",), problem["type"]
        if loc[0] == "rb" and len(loc) > 1:     # one message for both branches of rb's type
            if details and details[-1]["loc"] == "rb":
                continue
            loc, problem = ("rb",), {**problem, "msg": "Input should be a valid integer (or, for graded measures, "
                                                       "a list of per-grade counts)"}
        message = (f"unknown field {short(loc[0])} (the fields are {_FIELDS})" if kind == "extra_forbidden" else
                   "field required" if kind == "missing" else f"{problem['msg']}, got {short(problem['input'])}")
        where = str(loc[0])[:limits.MAX_QUOTED] + "".join(f"[{part}]" for part in loc[1:])
        details.append({"loc": where, "message": message})
    more = len(details) - 1
    return RequestError(f"{details[0]['loc']}: {details[0]['message']}" + (
        f" (and {more} more problem{'s' * (more > 1)})" if more else ""), details[:limits.MAX_DETAILS])


def runs_array(runs: list, measure: irscale.Measure, maybe_bools: bool = True) -> np.ndarray | list:
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


def view_rb(items: list[tuple[str, str]]) -> int | tuple[int, ...] | None:
    """The ``rb`` of a GET /v1/table query (its items): ``5``, or per-grade counts ``3,2`` (brackets or
    parentheses make counts even of one: ``(3)``); RequestError for a parameter unknown or given twice."""
    names = [name for name, _ in items]
    for name in names:
        if name not in VIEW_PARAMETERS:
            raise RequestError(f"unknown parameter {short(name)} (the parameters are {', '.join(VIEW_PARAMETERS)})",
                               [{"loc": name[:limits.MAX_QUOTED], "message": "unknown parameter"}])
        if names.count(name) > 1:
            raise RequestError(f"parameter {name!r} given twice", [{"loc": name, "message": "given twice"}])
    text = dict(items).get("rb", "").strip()
    if not text:
        return None
    inner = text[1:-1] if text[:1] + text[-1:] in ("()", "[]") else text
    parts = [part.strip() for part in inner.strip().removesuffix(",").split(",")]
    if len(parts) > limits.MAX_RB_ITEMS or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
        raise RequestError(f"rb must be an integer (the topic's recall base) or per-grade counts like 3,2; "
                           f"got {short(text)}", [{"loc": "rb", "message": "an integer or counts like 3,2"}])
    return tuple(map(int, parts)) if len(parts) > 1 or inner != text else int(parts[0])
