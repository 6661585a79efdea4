"""The lookup service as an ASGI application (:func:`create_app`): its routes, its error
answers, and the interactive docs served without a CDN."""
from __future__ import annotations

import contextlib
import logging
import os
from http import HTTPStatus

import pydantic_core
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException
from starlette.staticfiles import StaticFiles

from irscale.errors import IrscaleError
from irscale.store.reader import Store
from irscale.store.service.errors import ServiceBusyError, error_body, status_of
from irscale.store.service.intake import BodySizeLimit, _BodyTooLarge, _Intake, _read_body
from irscale.store.service.limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_GAP_BINS,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_PENDING,
    DEFAULT_MEMORY_BUDGET,
    DEFAULT_QUEUE_TIMEOUT,
    DEFAULT_TIME_BUDGET,
    DEFAULT_VIEW_POINTS,
    MAX_GAP_BINS,
    MAX_VIEW_POINTS,
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
from irscale.store.service.page import page_html
from irscale.store.service.views import view_params
from irscale.store.service.workers import _VIEW, WorkerPool, _Threads
from irscale.version import __version__

log = logging.getLogger("irscale.service")

#: Where the files of the interactive docs (Swagger UI, ReDoc, icon) are served.
DOCS_ASSETS = "/docs-assets"
#: The package (and its folder) that ships those files: no page of the service loads
#: anything from a CDN, so the docs work offline.
_DOCS_ASSETS_PACKAGE = ("fastapi_offline", "static")


def _json_response(payload: bytes, status: int = 200, headers: dict | None = None) -> Response:
    return Response(payload, status_code=status, media_type="application/json", headers=headers)


_ERRORS = {status: {"model": ErrorResponse} for status in (400, 404, 408, 413, 422, 503)}
_VIEW_OPENAPI_PARAMETERS = [
    {"name": "measure", "in": "query", "required": True, "schema": {"type": "string", "maxLength": 200},
     "description": "Measure name, e.g. AP@30 (as listed by GET /v1/tables).", "example": "AP@10"},
    {"name": "rb", "in": "query", "required": False, "schema": {"type": "string"},
     "description": "Recall base: required for RB-dependent measures, refused for the others; per-grade counts "
                    "as 3,2 for graded RB-dependent measures."},
    {"name": "points", "in": "query", "required": False,
     "schema": {"type": "integer", "minimum": 2, "maximum": MAX_VIEW_POINTS, "default": DEFAULT_VIEW_POINTS},
     "description": "Bins of consecutive ranks (each answered with its smallest and largest value)."},
    {"name": "bins", "in": "query", "required": False,
     "schema": {"type": "integer", "minimum": 1, "maximum": MAX_GAP_BINS, "default": DEFAULT_GAP_BINS},
     "description": "Bins of the gap histogram."},
    {"name": "gaps", "in": "query", "required": False,
     "schema": {"type": "string", "enum": ["log", "linear"], "default": "log"},
     "description": "Gap histogram bins equally wide in log10 of the gap, or linear from 0."},
]


def create_app(store: str | os.PathLike | Store, max_items: int = DEFAULT_MAX_ITEMS,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, *, workers: int = 0,
               time_budget: float = DEFAULT_TIME_BUDGET, memory_budget: int = DEFAULT_MEMORY_BUDGET,
               queue_timeout: float = DEFAULT_QUEUE_TIMEOUT, max_pending: int = DEFAULT_MAX_PENDING,
               max_buffered_bytes: int | None = None, body_timeout: float = DEFAULT_BODY_TIMEOUT,
               idle_timeout: float = DEFAULT_IDLE_TIMEOUT) -> FastAPI:
    """The lookup service as an ASGI application (see docs/service.md).

    Parameters
    ----------
    store : str, path or Store
        Table file to serve (read-only) or an open store.
    max_items : int
        Most values or runs in one request (more: 413).
    max_body_bytes : int
        Largest request body in bytes (more: 413).
    workers : int
        Worker processes that parse and rank (0: threads of this process, without the
        time and memory budget; :func:`serve` uses 2).
    time_budget, memory_budget : float, int
        Seconds and bytes of anonymous memory a worker may spend on one request (413).
    queue_timeout : float
        Seconds a request may wait for a free worker (503).
    max_pending : int
        Rank requests waiting for or being answered at once (more: 503).
    max_buffered_bytes : int
        Request body bytes held at once, received or not yet answered (default: four
        bodies of the largest size; more: 503).
    body_timeout, idle_timeout : float
        Seconds to receive a whole body, and longest pause within it (408).

    Raises
    ------
    StoreError
        The file is missing, not a store, or holds no table.
    """
    service = LookupService(store, max_items=max_items)
    runner: WorkerPool | _Threads = (
        WorkerPool(service.store.path, workers, max_items, time_budget, memory_budget, queue_timeout)
        if workers > 0 else _Threads(service))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        runner.close()

    app = FastAPI(title="irscale lookup service", version=__version__,
                  description="Unq interval-scale ranks of IR evaluation measure values and judged runs, "
                              "from exact precomputed tables. Every error answers "
                              '`{"error": {"type": ..., "message": ...}}`.',
                  docs_url=None, redoc_url=None, lifespan=lifespan)  # docs: replaced below by pages without CDN
    app.state.service = service
    app.state.runner = runner
    app.add_middleware(BodySizeLimit, max_body_bytes=max_body_bytes)
    _add_docs(app)
    intake = _Intake(max_buffered_bytes or 4 * max_body_bytes, max_pending)

    @app.exception_handler(IrscaleError)
    async def user_error(request: Request, error: IrscaleError) -> Response:
        status = status_of(error)
        headers = {"Retry-After": "1"} if status == 503 else ({"Connection": "close"} if status == 408 else None)
        return _json_response(error_body(type(error).__name__, service.scrub(str(error)),
                                         getattr(error, "details", None)), status, headers)

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
        request.state.held = 0
        try:
            body = await _read_body(request, intake, body_timeout, idle_timeout)
            if intake.pending >= intake.max_pending:
                raise ServiceBusyError(f"this service has {intake.max_pending} requests to answer already; "
                                       f"retry later")
            intake.pending += 1
            try:
                status, payload = await runner.answer(body)
            finally:
                intake.pending -= 1
        except (IrscaleError, _BodyTooLarge):
            raise       # answered by user_error, or by BodySizeLimit (413)
        except Exception:
            # answered here: an exception reaching the server would make it drop the connection
            log.exception("internal error answering POST /v1/rank")
            status, payload = 500, error_body("InternalError", "internal server error (a bug in irscale)")
        finally:
            intake.bytes -= request.state.held
        return _json_response(payload, status)

    @app.get("/v1/tables", response_model=TablesResponse, summary="List the tables")
    def tables() -> dict:
        """The store's format and the metadata of every table served."""
        return {"store": service.store_info, "tables": list(service.tables.values())}

    @app.get("/v1/table", response_model=TableViewResponse, responses=_ERRORS, summary="View one scale",
             openapi_extra={"parameters": _VIEW_OPENAPI_PARAMETERS})
    async def table_view(request: Request) -> Response:
        """A bounded view of the scale of one measure (and recall base) for plotting: the
        values at the first and last rank of at most ``points`` bins of consecutive ranks,
        and a histogram of the gaps between consecutive distinct values. Worked on like a
        rank request (worker processes, time and memory budget), whatever the table's size."""
        query = pydantic_core.to_json(view_params(request.query_params.multi_items()))
        if intake.pending >= intake.max_pending:
            raise ServiceBusyError(f"this service has {intake.max_pending} requests to answer already; retry later")
        intake.pending += 1
        try:
            status, payload = await runner.answer(query, _VIEW)
        except IrscaleError:
            raise       # answered by user_error
        except Exception:
            log.exception("internal error answering GET /v1/table")
            status, payload = 500, error_body("InternalError", "internal server error (a bug in irscale)")
        finally:
            intake.pending -= 1
        return _json_response(payload, status)

    @app.get("/", include_in_schema=False)
    def page(request: Request) -> HTMLResponse:
        """The page for research use: the store's tables, a plot of a scale's values
        against their ranks, a histogram of its gaps, and runs or values ranked."""
        return HTMLResponse(page_html(request.scope.get("root_path", "").rstrip("/")))

    @app.get("/healthz", response_model=HealthResponse, summary="Liveness")
    async def healthz() -> dict:
        """The service is up; the number of tables it answers for (answered on the event
        loop itself, never behind a lookup)."""
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
