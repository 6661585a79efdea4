"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn).

Run it with ``irscale serve --store tables.h5 [--host 127.0.0.1 --port 8000]``; the
OpenAPI description is at ``/openapi.json`` and interactive docs at ``/docs`` (Swagger
UI) and ``/redoc`` (ReDoc), which work offline: their scripts, style sheet and icon are
served by the service itself under ``/docs-assets/`` (the files of the fastapi-offline
package), never from a CDN. The service is read-only: it opens every table of the store
once at start-up (memory maps, nothing is read whole) and answers from that snapshot; it
never accepts or returns a filesystem path.

Endpoints
---------
``POST /v1/rank``
    Body ``{"measure": "AP@30", "rb": 12, "values": [0.0, 0.25]}`` or
    ``{"measure": "AP@30", "rb": 12, "runs": [[1, 0, ...], ...]}`` (exactly one of
    ``values`` and ``runs``). ``rb`` is the topic's recall base, required for
    RB-dependent measures and refused for the others. Value lookups accept optional
    ``rtol`` / ``atol`` (finite, >= 0; defaults: 64 ulps and the table's float error
    bound, see :meth:`irscale.scales.Scale.rank`). Answer
    ``{"measure": canonical name, "rb": rb or null, "k": K, "rank": [...], "scaled": [...]}``.
``GET /v1/tables``
    The store's format and version, and every table's metadata (measure, N, recall base
    dependence, runs, distinct values overall and per recall base, tie method, error
    bound, smallest gap, implicit, creation time, irscale version, checksum).
``GET /healthz``
    ``{"status": "ok", "tables": number of tables}``.

Conventions
-----------
Ranks are the 1-based unq ranks 1..K (K distinct values; tied values share a rank);
``scaled = (rank - 1) / (K - 1)`` (0 when K = 1). A judged run is the list of relevance
degrees ``[r_1, ..., r_N]``, ``r_1`` being the top document; runs are ranked exactly,
values within tolerance.

Errors
------
Every error is JSON of one shape, ``{"error": {"type": ..., "message": ...}}``, the
message naming the problem (the field, the index of the offending value or run).
Request validation errors add ``"details": [{"loc": "values[3]", "message": ...}, ...]``
(at most 20). Status codes: 400 malformed JSON; 404 table not in the store (the message
lists the tables) or unknown path; 405 wrong method; 413 body or batch too large; 422
anything else the request got wrong (measure name, rb, types, NaN or infinite values,
values that are not values of the measure or are ambiguous, run length, degrees outside
REL, infeasible runs, both or neither of values and runs); 500 a bug in irscale.

Limits
------
At most ``max_items`` values or runs per request (default 10^6) and request bodies of
at most ``max_body_bytes`` (default 64 MiB, checked against Content-Length and by
counting the bytes of streamed uploads before any JSON is parsed); both answer 413.
"""
from __future__ import annotations

import functools
import logging
import os
import socket
from http import HTTPStatus
from typing import Annotated, Any

import numpy as np
import pydantic_core
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.staticfiles import StaticFiles

from irscale.errors import IrscaleError, MeasureError, StoreError, TableNotFoundError, ValueNotInScaleError
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.scale import RTOL
from irscale.store.reader import Store, open_store
from irscale.version import __version__

log = logging.getLogger("irscale.service")

#: Scales (one per measure and recall base) kept ready between requests.
SCALE_CACHE_SIZE = 128
#: Validation problems listed in one error answer.
MAX_DETAILS = 20
#: Where the files of the interactive docs (Swagger UI, ReDoc, icon) are served.
DOCS_ASSETS = "/docs-assets"
#: The package (and its folder) that ships those files: no page of the service loads
#: anything from a CDN, so the docs work offline.
_DOCS_ASSETS_PACKAGE = ("fastapi_offline", "static")


# -- errors ----------------------------------------------------------------------------
class RequestError(IrscaleError, ValueError):
    """A lookup request that is valid JSON but not a valid request (HTTP 422);
    ``details`` lists validation problems as ``{"loc": ..., "message": ...}``."""

    def __init__(self, message: str, details: list | None = None):
        super().__init__(message)
        self.details = details


class InvalidJSONError(RequestError):
    """The request body is not JSON (HTTP 400)."""


class PayloadTooLargeError(IrscaleError):
    """A request with more items than the service answers at once (HTTP 413)."""


_STATUS = ((InvalidJSONError, 400), (TableNotFoundError, 404), (PayloadTooLargeError, 413))


def status_of(error: IrscaleError) -> int:
    """HTTP status of a user error: 400, 404 or 413 for the kinds above, else 422."""
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 422


def error_body(kind: str, message: str, details: list | None = None) -> bytes:
    """The JSON of an error answer (see the module docstring)."""
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    return pydantic_core.to_json({"error": error})


def _json_response(payload: bytes, status: int = 200, headers: dict | None = None) -> Response:
    return Response(payload, status_code=status, media_type="application/json", headers=headers)


# -- models (validation and OpenAPI) ----------------------------------------------------
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class RankRequest(BaseModel):
    """Raw values of one measure, or judged runs, to map to unq ranks."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "values": [0.0, 0.25, 1.0]},
        {"measure": "DCG(b=2)@4", "runs": [[1, 0, 1, 0], [0, 0, 0, 1]]},
    ]})

    measure: str = Field(max_length=200, description="Measure name in ir_measures style, e.g. AP@30, RBP(p=0.8)@30, "
                                     "nDCG(b=2)@30 (answers use the canonical spelling).",
                         examples=["AP@30"])
    rb: int | list[int] | None = Field(
        None, description="Recall base of the topic (its number of relevant documents, >= 1): required for "
                          "RB-dependent measures, refused for the others. Graded RB-dependent measures "
                          "(gR, nDCG with gains) take the per-grade counts [c_1, ..., c_G] of the topic's "
                          "judged documents.",
        examples=[12, [3, 2]])
    values: list[FiniteFloat] | None = Field(
        None, fail_fast=True,  # one bad item is reported; a million of them would take seconds
        description="Raw measure values to rank (finite numbers). Give exactly one of values and runs.",
        examples=[[0.0, 0.25, 1.0]])
    runs: list[list[int]] | None = Field(
        None, description="Judged runs to rank exactly: each the list of N relevance degrees r_1..r_N, "
                          "r_1 the top document (measures over truncated rankings, e.g. RBPU: 0 to N "
                          "degrees). Give exactly one of values and runs.",
        examples=[[[1, 0, 1, 0]]])
    rtol: Tolerance | None = Field(None, description="Relative tolerance of value lookups (default 64 ulps).")
    atol: Tolerance | None = Field(None, description="Absolute tolerance of value lookups (default: the "
                                                     "table's certified float error bound).")


class _RankQuery(RankRequest):
    """:class:`RankRequest` as validated: runs are checked with numpy, not item by item
    (pydantic takes about 0.8 s per million runs of length 8)."""

    runs: list[Any] | None = None


class RankResponse(BaseModel):
    """Unq ranks of the request's values or runs, in request order."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "k": 1094, "rank": [1, 530, 1094], "scaled": [0.0, 0.48490393, 1.0]},
    ]})

    measure: str = Field(max_length=200, description="Canonical measure name.")
    rb: int | list[int] | None = Field(description="The recall base of the request (null for measures without "
                                                   "one; per-grade counts for graded RB-dependent measures).")
    k: int = Field(description="Number of distinct values K: ranks run from 1 to K.")
    rank: list[int] = Field(description="1-based unq rank of each value or run.")
    scaled: list[float] = Field(description="Ranks mapped to [0, 1]: (rank - 1) / (K - 1).")


class TableInfo(BaseModel):
    """Metadata of one table of the store."""

    measure: str = Field(max_length=200, description="Canonical measure name (use it in POST /v1/rank).")
    rb_counts: list[int] | None = Field(None, description="Graded RB-dependent measures: the per-grade counts "
                                                          "(c_1..c_G, each capped at N) this table serves; null "
                                                          "for the others.")
    family: str = Field(description="Measure family, e.g. AP.")
    params: dict[str, int | str | list[int]] = Field(
        description="Parameter values; probabilities as exact fractions ('4/5'), gains as lists.")
    n: int = Field(description="Cutoff N (run length).")
    rel: list[int] = Field(description="Relevance degrees REL.")
    rb_dependent: bool = Field(description="Whether lookups need the recall base rb.")
    runs: int = Field(description="Runs in the whole run space REL^N.")
    distinct: int = Field(description="Distinct values over the whole run space.")
    distinct_by_rb: list[int] | None = Field(description="Distinct values for rb = 1..N (rb > N as rb = N); "
                                                         "null for measures without recall base.")
    entries: int = Field(description="Stored entries (value, stratum) pairs.")
    implicit: bool = Field(description="Identity table that stores nothing (RBP with p <= 1/2).")
    tie_method: str = Field(description="How ties were decided, e.g. exact-integer, formal-log+mpmath60.")
    error_bound: float = Field(description="Proven float error bound of the computed values.")
    min_gap: float = Field(description="Smallest gap between neighbouring distinct values.")
    min_gap_exact: str = Field(description="The smallest gap: an exact fraction, or decimal digits when irrational.")
    redecided: int = Field(description="Neighbour pairs re-decided in high precision.")
    created: str = Field(description="Creation time of the table (ISO 8601).")
    build_seconds: float | None = Field(description="Build time in seconds (null when unknown).")
    irscale_version: str = Field(description="Version of irscale that built the table.")
    checksum: str = Field(description="sha256 of the table's datasets.")


class StoreInfo(BaseModel):
    """The store file's format (never its location)."""

    format: str
    format_version: int
    created: str | None
    irscale_version: str | None = Field(description="Version of irscale that wrote the file.")


class TablesResponse(BaseModel):
    """Every table the service answers for."""

    store: StoreInfo
    tables: list[TableInfo]


class HealthResponse(BaseModel):
    """The service is up and answers for this many tables."""

    status: str = Field(examples=["ok"])
    tables: int = Field(description="Number of tables served.")


class ErrorDetail(BaseModel):
    """One request validation problem."""

    loc: str = Field(description="Where in the request, e.g. values[3] or runs[0][2].")
    message: str


class ErrorInfo(BaseModel):
    """What went wrong."""

    type: str = Field(description="Kind of error, e.g. MeasureError, RunError, RequestError.", examples=["RunError"])
    message: str = Field(description="What is wrong, naming the field or the index of the offending item.",
                         examples=["runs[2] has length 7; runs of AP@8 have length N = 8"])
    details: list[ErrorDetail] | None = Field(None, description="Request validation problems (at most 20).")


class ErrorResponse(BaseModel):
    """The shape of every error answer."""

    error: ErrorInfo


# -- the lookups -------------------------------------------------------------------------
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


def _table_info(meta: dict) -> dict:
    measure = parse_measure(meta["measure"])
    build_seconds = meta.get("build_seconds", -1)
    return {
        "measure": str(measure), "rb_counts": None if meta.get("rb_counts") is None else list(meta["rb_counts"]),
        "family": measure.name, "params": pydantic_core.from_json(meta.get("params", "{}")),
        "n": measure.n, "rel": pydantic_core.from_json(meta["rel"]), "rb_dependent": measure.rb_dependent,
        "runs": meta["n_runs"], "distinct": meta["n_distinct"],
        "distinct_by_rb": pydantic_core.from_json(meta["distinct_by_rb"]) or None,
        "entries": meta["n_entries"], "implicit": bool(meta.get("implicit", False)),
        "tie_method": meta["tie_method"], "error_bound": meta["error_bound"], "min_gap": meta["min_gap"],
        "min_gap_exact": str(meta["min_gap_exact"]), "redecided": meta.get("redecided", 0),
        "created": meta["created"], "build_seconds": build_seconds if build_seconds >= 0 else None,
        "irscale_version": meta["generator_version"], "checksum": meta["checksum"],
    }


class LookupService:
    """The lookups behind the HTTP API, on a snapshot of a store's tables.

    Parameters
    ----------
    store : str, path or Store
        The table file (opened read-only) or an open store.
    max_items : int
        Most values or runs answered in one request.

    Every table is opened (memory-mapped) and its lookup structures prepared here, so
    requests never touch the file system and the first one is as fast as the others.
    Methods are thread-safe; scales are cached per (measure, rb).
    """

    def __init__(self, store: str | os.PathLike | Store, max_items: int = 1_000_000):
        self.store = store if isinstance(store, Store) else open_store(store)
        self.max_items = int(max_items)
        self.tables: dict[str, dict] = {}
        for meta in self.store.tables():
            try:
                info = _table_info(meta)
            except MeasureError as e:  # a family this irscale does not know
                log.warning("skipping table %s: %s", meta["measure"], e)
                continue
            self.tables[meta["name"]] = info
        self.measures = {info["measure"] for info in self.tables.values()}
        if not self.tables:
            raise StoreError(f"{self.store.path} holds no table to serve; build some with 'irscale build'")
        attrs = self.store.attrs
        self.store_info = {"format": attrs.get("format"), "format_version": attrs.get("format_version"),
                           "created": attrs.get("created"), "irscale_version": attrs.get("generator_version")}
        self.scale = functools.lru_cache(maxsize=SCALE_CACHE_SIZE)(self._open_scale)
        for info in self.tables.values():
            rb = info["rb_counts"] if info["rb_counts"] is not None else (1 if info["rb_dependent"] else None)
            self.scale(info["measure"], tuple(rb) if isinstance(rb, list) else rb)

    def _open_scale(self, measure: str, rb):
        m = parse_measure(measure)
        if str(m) not in self.measures:
            raise TableNotFoundError(f"this store has no table {m}; available tables: {', '.join(self.tables)}")
        return self.store.scale(m, rb)

    def rank_body(self, body: bytes) -> bytes:
        """Answer a POST /v1/rank body (JSON bytes) with the JSON of a RankResponse."""
        if not body.strip():
            raise InvalidJSONError("the request body is empty; send a JSON object like "
                                   '{"measure": "AP@10", "rb": 5, "values": [0.5]}')
        try:
            request = pydantic_core.from_json(body)
        except ValueError as e:
            raise InvalidJSONError(f"the request body is not valid JSON: {e}") from None
        if not isinstance(request, dict):
            raise RequestError("the request body must be a JSON object with the fields "
                               + ", ".join(RankRequest.model_fields))
        for field in ("values", "runs"):  # before item validation, which takes time
            items = request.get(field)
            if isinstance(items, list) and len(items) > self.max_items:
                raise PayloadTooLargeError(f"{len(items)} {field} in one request; this service answers at most "
                                           f"{self.max_items} per request: split the batch")
        try:
            query = _RankQuery.model_validate(request)
        except ValidationError as e:
            raise _validation_error(e) from None
        if (query.values is None) == (query.runs is None):
            raise RequestError("give exactly one of values (raw measure values) and runs (judged runs)")
        if query.runs is not None and (query.rtol is not None or query.atol is not None):
            raise RequestError("rtol and atol apply to value lookups only; runs are ranked exactly")
        scale = self.scale(query.measure, tuple(query.rb) if isinstance(query.rb, list) else query.rb)
        if query.values is not None:
            ranks = self._rank_values(scale, np.array(query.values, dtype=np.float64), query.rtol, query.atol)
        elif query.runs:
            ranks = scale.rank_runs(query.runs)
        else:
            ranks = np.zeros(0, np.int64)
        rb = list(scale.rb) if isinstance(scale.rb, tuple) else scale.rb
        return pydantic_core.to_json({"measure": str(scale.measure), "rb": rb, "k": scale.k,
                                      "rank": ranks.tolist(), "scaled": scale.scaled(ranks).tolist()})

    @staticmethod
    def _rank_values(scale, values: np.ndarray, rtol: float | None, atol: float | None) -> np.ndarray:
        """Ranks of a batch of values; ValueNotInScaleError names the first rejected index."""
        rtol = RTOL if rtol is None else rtol
        ranks = scale.rank(values, rtol=rtol, atol=atol, errors="zero")
        rejected = np.flatnonzero(ranks == 0)
        if rejected.size:
            i = int(rejected[0])
            try:
                scale.rank(values[i:i + 1], rtol=rtol, atol=atol)
            except ValueNotInScaleError as e:
                raise ValueNotInScaleError(f"values[{i}]: {e}") from None
            raise ValueNotInScaleError(f"values[{i}]: {values[i]!r} is not a value of {scale.measure}")
        return ranks


# -- HTTP --------------------------------------------------------------------------------
class _BodyTooLarge(Exception):  # noqa: N818  (a signal inside the middleware, never shown)
    """Raised into the application when a streamed body passes the limit."""


class BodySizeLimit:
    """Pure ASGI middleware answering 413 to HTTP requests whose body is larger than
    ``max_body_bytes``: by the Content-Length header before the body is read, and by
    counting the bytes of a streamed (chunked) body as the application receives it."""

    def __init__(self, app, max_body_bytes: int):
        self.app = app
        self.max_body_bytes = int(max_body_bytes)

    async def _refuse(self, send) -> None:
        payload = error_body("PayloadTooLargeError",
                             f"the request body is larger than this service accepts "
                             f"({self.max_body_bytes} bytes); split the batch")
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._refuse(send)
            return
        received = 0
        started = False

        async def counting_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise _BodyTooLarge
            return message

        async def watching_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except _BodyTooLarge:
            if started:
                raise
            await self._refuse(send)


_ERRORS = {status: {"model": ErrorResponse} for status in (400, 404, 413, 422)}


def create_app(store: str | os.PathLike | Store, max_items: int = 1_000_000,
               max_body_bytes: int = 64 * 2 ** 20) -> FastAPI:
    """The lookup service as an ASGI application (see the module docstring).

    Parameters
    ----------
    store : str, path or Store
        Table file to serve (read-only) or an open store.
    max_items : int
        Most values or runs in one request (more: 413).
    max_body_bytes : int
        Largest request body in bytes (more: 413).

    Raises
    ------
    StoreError
        The file is missing, not a store, or holds no table.
    """
    service = LookupService(store, max_items=max_items)
    app = FastAPI(title="irscale lookup service", version=__version__,
                  description="Unq interval-scale ranks of IR evaluation measure values and judged runs, "
                              "from exact precomputed tables. Every error answers "
                              '`{"error": {"type": ..., "message": ...}}`.',
                  docs_url=None, redoc_url=None)  # replaced below by pages that load no CDN
    app.state.service = service
    app.add_middleware(BodySizeLimit, max_body_bytes=max_body_bytes)
    _add_docs(app)

    @app.exception_handler(IrscaleError)
    async def user_error(request: Request, error: IrscaleError) -> Response:
        return _json_response(error_body(type(error).__name__, str(error), getattr(error, "details", None)),
                              status_of(error))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        kind = HTTPStatus(error.status_code).phrase.replace(" ", "")
        message = f"{error.detail}: {request.method} {request.url.path} (the API is described at /docs)"
        return _json_response(error_body(kind, message), error.status_code, error.headers)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> Response:
        return _json_response(error_body("InternalError", "internal server error (a bug in irscale)"), 500)

    @app.post("/v1/rank", response_model=RankResponse, responses=_ERRORS, summary="Rank values or judged runs",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": RankRequest.model_json_schema()}}}})
    async def rank(request: Request) -> Response:
        """Map raw values of a measure (within tolerance) or judged runs (exactly) to their
        1-based unq ranks and to [0, 1]."""
        body = await request.body()
        return _json_response(await run_in_threadpool(service.rank_body, body))

    @app.get("/v1/tables", response_model=TablesResponse, summary="List the tables")
    def tables() -> dict:
        """The store's format and the metadata of every table served."""
        return {"store": service.store_info, "tables": list(service.tables.values())}

    @app.get("/healthz", response_model=HealthResponse, summary="Liveness")
    def healthz() -> dict:
        """The service is up; the number of tables it answers for."""
        return {"status": "ok", "tables": len(service.tables)}

    return app


def _add_docs(app: FastAPI) -> None:
    """Serve ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) with their assets mounted at
    :data:`DOCS_ASSETS`, so that the pages reference no external URL and work offline.
    URLs are prefixed with the ASGI ``root_path``, as FastAPI's own docs pages do."""
    app.mount(DOCS_ASSETS, StaticFiles(packages=[_DOCS_ASSETS_PACKAGE]), name="docs-assets")

    def prefix(request: Request) -> str:
        return request.scope.get("root_path", "").rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = prefix(request)
        return get_swagger_ui_html(openapi_url=root + app.openapi_url, title=app.title + " - Swagger UI",
                                   swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
                                   # no badge fetched from the online validator
                                   swagger_ui_parameters={"validatorUrl": None})

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = prefix(request)
        return get_redoc_html(openapi_url=root + app.openapi_url, title=app.title + " - ReDoc",
                              redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
                              redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png", with_google_fonts=False)


def _check_can_listen(host: str, port: int) -> None:
    """Raise IrscaleError when ``host:port`` cannot be bound (in use, unknown host), so
    that the command line reports it as one line instead of uvicorn exiting."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise IrscaleError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def serve(store_path: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000, max_items: int = 1_000_000,
          max_body_bytes: int = 64 * 2 ** 20, log_level: str = "info") -> None:
    """Serve the tables of ``store_path`` over HTTP until interrupted.

    The store is opened and the address checked before the server starts, so a missing
    or foreign file raises :class:`~irscale.errors.StoreError` and a busy port
    :class:`~irscale.errors.IrscaleError` (the command line prints one line, exit 2).
    """
    import uvicorn

    app = create_app(store_path, max_items=max_items, max_body_bytes=max_body_bytes)
    _check_can_listen(host, port)
    uvicorn.run(app, host=host, port=port, log_level=log_level)
