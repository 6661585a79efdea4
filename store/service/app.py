"""The lookup service as an ASGI application (:func:`create_app`): its routes, its error
answers, how request bodies come in, the page at ``/`` and the interactive docs served
without a CDN (fastapi-offline)."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import json
import logging
import os
import textwrap
import time
from collections.abc import AsyncIterator
from http import HTTPStatus
from importlib import resources
from typing import Annotated, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException

from irscale.errors import IrscaleError
from irscale.store.reader import Store
from irscale.store.service import limits
from irscale.store.service.errors import (
    PayloadTooLargeError,
    RequestTimeoutError,
    ServiceBusyError,
    error_body,
    status_of,
)
from irscale.store.service.lookups import LookupService
from irscale.store.service.models import (
    ErrorResponse,
    HealthResponse,
    RankRequest,
    RankResponse,
    TablesResponse,
    TableViewResponse,
)
from irscale.store.service.validation import validation_error
from irscale.store.service.views import check_view_names, view_rb
from irscale.store.service.workers import RANK, VIEW, WorkerPool, _Threads
from irscale.version import __version__

log = logging.getLogger("irscale.service")

#: Where the files of the interactive docs (Swagger UI, ReDoc, icon: the fastapi-offline
#: package's) are served: no page of the service loads anything from a CDN.
DOCS_ASSETS = "/docs-assets"
_BUG = error_body("InternalError", "internal server error (a bug in irscale)")
_ERRORS = {status: {"model": ErrorResponse} for status in (400, 404, 408, 413, 422, 503)}


def _json(payload: bytes, status: int = 200, headers: dict | None = None) -> Response:
    return Response(payload, status_code=status, media_type="application/json", headers=headers)


@functools.cache
def _page() -> str:
    """The page at ``/``, a small research tool over the API that loads nothing from elsewhere
    (docs/service.md): the package data files ``static/page.html`` with ``page.css`` (indented)
    and ``page.js`` in place of its lines ``__PAGE_CSS__`` and ``__PAGE_JS__``."""
    static = resources.files(__package__) / "static"
    css, js, page = ((static / name).read_text(encoding="utf-8") for name in ("page.css", "page.js", "page.html"))
    return page.replace("__PAGE_CSS__\n", textwrap.indent(css, "  ")).replace("__PAGE_JS__\n", js)


def page_html(root: str = "") -> str:
    """The page for a service mounted at the root path ``root`` (``""`` or ``/prefix``): every
    URL it calls or links to starts with it (``__ROOT_JSON__``, ``__ROOT_HTML__``)."""
    root = root.rstrip("/")
    as_json = json.dumps(root).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _page().replace("__ROOT_JSON__", as_json).replace("__ROOT_HTML__", html.escape(root, quote=True))


def create_app(store: str | os.PathLike | Store, max_items: int = limits.DEFAULT_MAX_ITEMS,
               max_body_bytes: int = limits.DEFAULT_MAX_BODY_BYTES, *, workers: int = 0,
               time_budget: float = limits.DEFAULT_TIME_BUDGET, memory_budget: int = limits.DEFAULT_MEMORY_BUDGET,
               queue_timeout: float = limits.DEFAULT_QUEUE_TIMEOUT, max_pending: int = limits.DEFAULT_MAX_PENDING,
               max_buffered_bytes: int | None = None, body_timeout: float = limits.DEFAULT_BODY_TIMEOUT,
               idle_timeout: float = limits.DEFAULT_IDLE_TIMEOUT) -> FastAPI:
    """The lookup service as an ASGI application (see docs/service.md): the tables of
    ``store`` (a path, opened read-only, or an open Store; StoreError when it is missing,
    not a store or holds no table), at most ``max_items`` values or runs and
    ``max_body_bytes`` bytes of body per request (413). Lookups run in ``workers`` worker
    processes (:func:`serve` uses 2), each request within ``time_budget`` seconds and
    ``memory_budget`` bytes of anonymous memory of its worker (413) after waiting at most
    ``queue_timeout`` seconds for one (503), or with ``workers=0`` in threads of this
    process, without budgets. At most ``max_pending`` requests wait or are worked on and
    ``max_buffered_bytes`` bytes of bodies are held at once (default: four bodies of the
    largest size; 503 beyond either); a body must arrive within ``body_timeout`` seconds
    with no pause over ``idle_timeout`` (408)."""
    service = LookupService(store, max_items=max_items)
    runner: WorkerPool | _Threads = (
        WorkerPool(service.store.path, workers, max_items, time_budget, memory_budget, queue_timeout)
        if workers > 0 else _Threads(service))
    max_held = max_buffered_bytes or 4 * max_body_bytes
    held = pending = 0      # body bytes held (received, not yet answered), requests waiting or worked on

    @contextlib.asynccontextmanager
    async def received(request: Request) -> AsyncIterator[bytes]:
        """The request body, held (counted) until the request is answered: at most
        ``max_body_bytes`` (by its Content-Length, else as it streams in: 413; starlette's
        ``max_body_size`` would answer in plain text), arriving within ``body_timeout`` s
        with no pause over ``idle_timeout`` s (408), while at most ``max_held`` bytes of
        bodies are held in all (a slow client holds only what it has sent; beyond: 503)."""
        nonlocal held
        too_large = PayloadTooLargeError(f"the request body is larger than this service accepts ({max_body_bytes} "
                                         f"bytes); split the batch")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_body_bytes:
            raise too_large
        deadline, chunks, size = time.monotonic() + body_timeout, [], 0
        stream = request.stream()
        try:
            while True:
                try:
                    chunk = await asyncio.wait_for(stream.__anext__(), max(0.0, min(idle_timeout,
                                                                                    deadline - time.monotonic())))
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError:
                    raise RequestTimeoutError(f"the request body did not arrive in time (this service waits "
                                              f"{body_timeout:g} s for a body, {idle_timeout:g} s for each part of "
                                              f"it)") from None
                if size + len(chunk) > max_body_bytes:
                    raise too_large
                if held + len(chunk) > max_held:
                    raise ServiceBusyError(f"this service is holding {max_held // 2 ** 20} MiB of requests already; "
                                           f"retry later")
                held, size = held + len(chunk), size + len(chunk)
                chunks.append(chunk)
            yield b"".join(chunks)
        finally:
            held -= size

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        runner.close()

    app = FastAPIOffline(title="irscale lookup service", version=__version__,
                         description="Unq interval-scale ranks of IR evaluation measure values and judged runs, "
                                     "from exact precomputed tables. Every error answers "
                                     '`{"error": {"type": ..., "message": ...}}`.',
                         static_url=DOCS_ASSETS, swagger_ui_parameters={"validatorUrl": None},  # no online badge
                         lifespan=lifespan)
    app.state.service, app.state.runner = service, runner

    @app.exception_handler(IrscaleError)
    async def user_error(request: Request, error: IrscaleError) -> Response:
        status = status_of(error)
        # 408, 413: the body may be partly unread, the connection is closed
        headers = {"Retry-After": "1"} if status == 503 else ({"Connection": "close"} if status in (408, 413) else None)
        return _json(error_body(type(error).__name__, service.scrub(str(error)), getattr(error, "details", None)),
                     status, headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        kind = HTTPStatus(error.status_code).phrase.replace(" ", "")
        message = f"{error.detail}: {request.method} {request.url.path} (the API is described at /docs)"
        return _json(error_body(kind, message), error.status_code, error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_query(request: Request, error: RequestValidationError) -> Response:
        return await user_error(request, validation_error([{**p, "loc": p["loc"][1:]} for p in error.errors()]))

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> Response:
        return _json(_BUG, 500)

    async def answered(body: bytes | dict, kind: str, route: str) -> Response:
        """The runner's answer to ``body`` (503 beyond ``max_pending`` requests); an exception
        that is no request's error is answered here (one reaching the server would make it
        drop the connection)."""
        nonlocal pending
        if pending >= max_pending:
            raise ServiceBusyError(f"this service has {max_pending} requests to answer already; retry later")
        pending += 1
        try:
            status, payload = await runner.answer(body, kind)
        except (IrscaleError, HTTPException):
            raise       # answered by user_error, http_error
        except Exception:
            log.exception(f"internal error answering {route}")
            status, payload = 500, _BUG
        finally:
            pending -= 1
        return _json(payload, status)

    @app.post("/v1/rank", response_model=RankResponse, responses=_ERRORS, summary="Rank values or judged runs",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": RankRequest.model_json_schema()}}}})
    async def rank(request: Request) -> Response:
        """Map raw values of a measure (within tolerance) or judged runs (exactly) to their
        1-based unq ranks and to [0, 1]."""
        async with received(request) as body:
            return await answered(body, RANK, "POST /v1/rank")

    @app.get("/v1/tables", response_model=TablesResponse, summary="List the tables")
    def tables() -> dict:
        """The store's format and the metadata of every table served."""
        return {"store": service.store_info, "tables": list(service.tables.values())}

    @app.get("/v1/table", response_model=TableViewResponse, responses=_ERRORS, summary="View one scale")
    async def table_view(
            request: Request,
            measure: Annotated[str, Query(min_length=1, max_length=200, examples=["AP@10"],
                                          description="Measure name, e.g. AP@30 (as listed by GET /v1/tables).")],
            rb: Annotated[str | None, Query(max_length=200, description=(
                "Recall base: required for RB-dependent measures, refused for the others; per-grade counts as 3,2 "
                "for graded RB-dependent measures."))] = None,
            points: Annotated[int, Query(ge=2, le=limits.MAX_VIEW_POINTS, description=(
                "Bins of consecutive ranks (each answered with its smallest and largest value)."))]
            = limits.DEFAULT_VIEW_POINTS,
            bins: Annotated[int, Query(ge=1, le=limits.MAX_GAP_BINS, description="Bins of the gap histogram.")]
            = limits.DEFAULT_GAP_BINS,
            gaps: Annotated[Literal["log", "linear"], Query(description=(
                "Gap histogram bins equally wide in log10 of the gap, or linear from 0."))] = "log") -> Response:
        """A bounded view of the scale of one measure (and recall base) for plotting: the
        values at the first and last rank of at most ``points`` bins of consecutive ranks,
        and a histogram of the gaps between consecutive distinct values. Worked on like a
        rank request (worker processes, time and memory budget), whatever the table's size."""
        check_view_names(request.query_params.multi_items())
        query = {"measure": measure.strip(), "rb": view_rb(rb), "points": points, "bins": bins, "gaps": gaps}
        return await answered(query, VIEW, "GET /v1/table")

    @app.get("/", include_in_schema=False)
    def page(request: Request) -> HTMLResponse:
        """The page for research use (:func:`page_html`)."""
        return HTMLResponse(page_html(request.scope.get("root_path", "").rstrip("/")))

    @app.get("/healthz", response_model=HealthResponse, summary="Liveness")
    async def healthz() -> dict:
        """The service is up; the number of tables it answers for (answered on the event
        loop itself, never behind a lookup)."""
        return {"status": "ok", "tables": len(service.tables)}

    return app
