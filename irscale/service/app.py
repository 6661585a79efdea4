"""The lookup service as an ASGI application (:func:`create_app`): its routes, its error
answers, the fixed pool of threads that answers requests, the page at ``/`` and the
interactive docs served without a CDN (fastapi-offline)."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import json
import logging
import textwrap
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from importlib import resources
from typing import Annotated, Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException

import irscale.service.limits as limits
from irscale.errors import IrscaleError
from irscale.service.errors import PayloadTooLargeError, error_body, status_of
from irscale.service.intake import validation_error
from irscale.service.lookups import LookupService
from irscale.service.models import ErrorResponse, HealthResponse, RankRequest, RankResponse, TablesResponse
from irscale.service.models import TableViewResponse as ViewResponse
from irscale.service.views import check_view_names, view_rb
from irscale.version import __version__

log = logging.getLogger("irscale.service")

#: Where the files of the interactive docs (Swagger UI, ReDoc, icon: the fastapi-offline
#: package's) are served: no page of the service loads anything from a CDN.
DOCS_ASSETS = "/docs-assets"
_BUG = error_body("InternalError", "internal server error (a bug in irscale)")
_ERRORS = {status: {"model": ErrorResponse} for status in (400, 404, 413, 422)}


def _json(payload: bytes, status: int = 200, headers: dict | None = None) -> Response:
    return Response(payload, status_code=status, media_type="application/json", headers=headers)


@functools.cache
def _page() -> str:
    """The page at ``/`` (docs/service.md): the package data files ``static/page.html`` with
    ``page.css`` (indented) and ``page.js`` in place of its lines ``__PAGE_CSS__``, ``__PAGE_JS__``."""
    static = resources.files(__package__) / "static"
    css, js, page = ((static / name).read_text(encoding="utf-8") for name in ("page.css", "page.js", "page.html"))
    return page.replace("__PAGE_CSS__\n", textwrap.indent(css, "  ")).replace("__PAGE_JS__\n", js)


def page_html(root: str = "") -> str:
    """The page for a service mounted at the root path ``root`` (``""`` or ``/prefix``): every
    URL it calls or links to starts with it (``__ROOT_JSON__``, ``__ROOT_HTML__``)."""
    root = root.rstrip("/")
    as_json = json.dumps(root).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _page().replace("__ROOT_JSON__", as_json).replace("__ROOT_HTML__", html.escape(root, quote=True))


def create_app(store: Any, max_items: int = limits.DEFAULT_MAX_ITEMS,
               max_body_bytes: int = limits.DEFAULT_MAX_BODY_BYTES, *, threads: int = limits.DEFAULT_THREADS,
               max_seconds: float = limits.DEFAULT_MAX_SECONDS) -> FastAPI:
    """The lookup service as an ASGI application (see docs/service.md) over the snapshot of
    ``store`` taken now (a path, opened read-only, or an open Store; StoreError when it is
    missing, not a store or holds no table): at most ``max_items`` values or runs,
    ``max_body_bytes`` bytes of body (413) and ``max_seconds`` of estimated work (422) per
    request, answered by a pool of ``threads`` threads (requests beyond wait their turn)."""
    service = LookupService(store, max_items=max_items, max_seconds=max_seconds)
    pool = ThreadPoolExecutor(max(1, int(threads)), thread_name_prefix="irscale-lookup")

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        pool.shutdown(wait=False, cancel_futures=True)

    app = FastAPIOffline(title="irscale lookup service", version=__version__,
                         description="Unq interval-scale ranks of IR evaluation measure values and judged runs, "
                                     "from exact precomputed tables. Every error answers "
                                     '`{"error": {"type": ..., "message": ...}}`.',
                         static_url=DOCS_ASSETS, swagger_ui_parameters={"validatorUrl": None},  # no online badge
                         lifespan=lifespan)
    app.state.service = service

    @app.exception_handler(IrscaleError)
    async def user_error(request: Request, error: IrscaleError) -> Response:
        status = status_of(error)
        headers = {"Connection": "close"} if status == 413 else None     # the body may be partly unread
        return _json(error_body(type(error).__name__, service.scrub(str(error)), getattr(error, "details", None)),
                     status, headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        kind = HTTPStatus(error.status_code).phrase.replace(" ", "")
        path = request.url.path
        path = path if len(path) <= limits.MAX_QUOTED else path[:limits.MAX_QUOTED] + "..."     # not echoed whole
        message = f"{error.detail}: {request.method} {path} (the API is described at /docs)"
        return _json(error_body(kind, message), error.status_code, error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_query(request: Request, error: RequestValidationError) -> Response:
        return await user_error(request, validation_error([{**p, "loc": p["loc"][1:]} for p in error.errors()]))

    async def answered(request: Request, work: Callable[..., bytes], *args: Any) -> Response:
        """``work(*args)`` in the pool, as a JSON answer: an exception that is no request's
        error is answered here (one reaching the server would make it drop the connection)."""
        try:
            return _json(await asyncio.get_running_loop().run_in_executor(pool, work, *args))
        except IrscaleError as e:
            return await user_error(request, e)
        except MemoryError:
            return _json(error_body("PayloadTooLargeError", "the request needs more memory than this service "
                                                            "has; split the batch"), 413, {"Connection": "close"})
        except Exception:
            log.exception(f"internal error answering {request.method} {request.url.path}")
            return _json(_BUG, 500)

    @app.post("/v1/rank", response_model=RankResponse, responses=_ERRORS, summary="Rank values or judged runs",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": RankRequest.model_json_schema()}}}})
    async def rank(request: Request) -> Response:
        """Map raw values of a measure (within tolerance) or judged runs (exactly) to their
        1-based unq ranks and to [0, 1]."""
        too_large = PayloadTooLargeError(f"the request body is larger than this service accepts ({max_body_bytes} "
                                         f"bytes); split the batch")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_body_bytes:
            raise too_large
        chunks, size = [], 0
        async for chunk in request.stream():        # no Content-Length (chunked): counted as it comes
            size += len(chunk)
            if size > max_body_bytes:
                raise too_large
            chunks.append(chunk)
        return await answered(request, service.rank, b"".join(chunks))

    @app.get("/v1/tables", response_model=TablesResponse, summary="List the tables")
    async def tables() -> Response:
        """The store's format and the metadata of every table served (those of ``irscale info
        --json``, with the names ir_measures and trec_eval give each measure)."""
        return _json(service.tables_json)

    @app.get("/v1/table", response_model=ViewResponse, responses=_ERRORS, summary="View one scale")
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
        and a histogram of the gaps between consecutive distinct values. Its work is
        estimated first, like a rank request's (422 beyond the limit)."""
        check_view_names(request.query_params.multi_items())
        counts = view_rb(rb)
        return await answered(request, service.view, measure.strip(),
                              tuple(counts) if isinstance(counts, list) else counts, points, bins, gaps)

    @app.get("/", include_in_schema=False)
    async def page(request: Request) -> HTMLResponse:
        """The page for research use (:func:`page_html`)."""
        return HTMLResponse(page_html(request.scope.get("root_path", "").rstrip("/")))

    @app.get("/healthz", response_model=HealthResponse, summary="Liveness")
    async def healthz() -> dict:
        """The service is up; the number of tables it answers for (answered on the event
        loop itself, never behind a lookup)."""
        return {"status": "ok", "tables": len(service.tables)}

    return app
