"""The lookup service as an ASGI application (:func:`create_app`) and ``irscale serve`` (:func:`serve`:
one uvicorn process with uvicorn's own limits; slow clients and memory are the deployment's)."""
from __future__ import annotations

import contextlib
import functools
import html
import logging
import os
import resource
import socket
from http import HTTPStatus
from importlib import resources
from typing import Annotated, Any

import anyio.to_thread
import pydantic_core
import uvicorn
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi_offline import FastAPIOffline
from starlette.exceptions import HTTPException

import irscale
import irscale.service as limits
import irscale.service.models as models
from irscale.errors import CorruptStoreError, IrscaleError, TableNotFoundError
from irscale.service.lookups import LookupService
from irscale.service.models import InvalidJSONError, PayloadTooLargeError, validation_error, view_rb
from irscale.version import __version__

log = logging.getLogger("irscale.service")
_STATUS = ((InvalidJSONError, 400), (TableNotFoundError, 404), (PayloadTooLargeError, 413), (CorruptStoreError, 500))
_ERRORS = {status: {"model": models.ErrorResponse} for status in (400, 404, 413, 422)}


def _error(kind: str, message: str, status: int, details: list | None = None, headers: dict | None = None) -> Response:
    error = {"type": kind, "message": message} | ({"details": details} if details else {})
    return Response(pydantic_core.to_json({"error": error}), status, headers, "application/json")


@functools.lru_cache(maxsize=16)
def page_html(root: str = "") -> str:
    """The page at ``/`` (``static/page.html`` with ``page.css`` and ``page.js`` in place) for a
    service mounted at the root path ``root`` (``""`` or ``/prefix``)."""
    static = resources.files(__package__) / "static"
    css, js, page = ((static / name).read_text(encoding="utf-8") for name in ("page.css", "page.js", "page.html"))
    root = root.rstrip("/")
    as_json = pydantic_core.to_json(root).decode().translate({ord(c): f"\\u{ord(c):04x}" for c in "<>&"})
    return (page.replace("__PAGE_CSS__\n", css).replace("__PAGE_JS__\n", js)
            .replace("__ROOT_JSON__", as_json).replace("__ROOT_HTML__", html.escape(root, quote=True)))


def create_app(store: Any, max_items: int = limits.DEFAULT_MAX_ITEMS,
               max_body_bytes: int = limits.DEFAULT_MAX_BODY_BYTES, *, threads: int = limits.DEFAULT_THREADS,
               max_seconds: float = limits.DEFAULT_MAX_SECONDS) -> FastAPI:
    """The lookup service (docs/service.md) over the snapshot of ``store`` (a path or an open Store)
    taken now: per request at most ``max_items`` values or runs, ``max_body_bytes`` of body (413) and
    ``max_seconds`` of estimated work (422), answered by a pool of ``threads`` threads."""
    service = LookupService(store, max_items=max_items, max_seconds=max_seconds)
    pool = anyio.CapacityLimiter(max(1, int(threads)))      # the threads that answer at once; the others wait

    app = FastAPIOffline(title="irscale lookup service", version=__version__,
                         description="Unq interval-scale ranks of IR measure values and judged runs, from exact "
                                     'tables. Every error answers `{"error": {"type": ..., "message": ...}}`.',
                         static_url="/docs-assets", swagger_ui_parameters={"validatorUrl": None})  # no CDN, no badge
    app.state.service = service

    @app.exception_handler(IrscaleError)
    async def user_error(request: Request, error: IrscaleError) -> Response:
        status = next((status for kind, status in _STATUS if isinstance(error, kind)), 422)
        return _error(type(error).__name__, service.scrub(str(error)), status, getattr(error, "details", None),
                      {"Connection": "close"} if status == 413 else None)      # the body may be partly unread

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        path = request.url.path[:limits.MAX_QUOTED] + "..." * (len(request.url.path) > limits.MAX_QUOTED)   # cut
        return _error(HTTPStatus(error.status_code).phrase.replace(" ", ""), f"{error.detail}: {request.method} "
                      f"{path} (the API is described at /docs)", error.status_code, headers=error.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_query(request: Request, error: RequestValidationError) -> Response:
        problems = [{**p, "loc": p["loc"][1:] or p["loc"]} for p in error.errors()]      # without "query"
        return await user_error(request, validation_error(problems))

    async def answered(request: Request, work: Any, *args: Any) -> Response:
        """``work(*args)`` in the pool as a JSON answer, every exception answered here (not by the server)."""
        try:
            answer = await anyio.to_thread.run_sync(work, *args, limiter=pool)
            return Response(answer, media_type="application/json")
        except IrscaleError as e:
            return await user_error(request, e)
        except MemoryError:
            return await user_error(request, PayloadTooLargeError("the request needs more memory than this service "
                                                                  "has; split the batch"))
        except Exception:
            log.exception(f"internal error answering {request.method} {request.url.path}")
            return _error("InternalError", "internal server error (a bug in irscale)", 500)

    @app.post("/v1/rank", response_model=models.RankResponse, responses=_ERRORS, summary="Rank values or judged runs",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": models.RankRequest.model_json_schema()}}}})
    async def rank(request: Request) -> Response:
        """Map raw values of a measure (within tolerance) or judged runs (exactly) to unq ranks and to [0, 1]."""
        too_large = PayloadTooLargeError(f"the request body is larger than this service accepts ({max_body_bytes} "
                                         f"bytes); split the batch")
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_body_bytes:
            raise too_large
        body = bytearray()
        async for chunk in request.stream():        # no Content-Length (chunked): counted as it comes
            body += chunk
            if len(body) > max_body_bytes:
                raise too_large
        return await answered(request, service.rank, bytes(body))

    @app.get("/v1/tables", response_model=models.TablesResponse, summary="List the tables")
    async def tables() -> Response:
        """The store's format and every table's metadata (of ``irscale info --json``, with its names)."""
        return Response(service.tables_json, media_type="application/json")

    @app.get("/v1/table", response_model=models.TableViewResponse, responses=_ERRORS, summary="View one scale")
    async def table_view(request: Request, query: Annotated[models.ViewQuery, Query()]) -> Response:
        """A bounded view of one scale for plotting: the values at the first and last rank of ``points``
        bins of consecutive ranks, and a histogram of the gaps between consecutive distinct values."""
        rb = view_rb(request.query_params.multi_items())
        return await answered(request, service.view, query.measure.strip(), rb, query.points, query.bins, query.gaps)

    @app.get("/", include_in_schema=False)
    async def page(request: Request) -> Response:
        """The page for research use (:func:`page_html`)."""
        return Response(page_html(request.scope.get("root_path", "")), media_type="text/html")

    @app.get("/healthz", response_model=models.HealthResponse, summary="Liveness")
    async def healthz() -> dict:
        """The service is up; the number of tables it answers for (answered on the event loop)."""
        return {"status": "ok", "tables": len(service.tables)}

    return app


def serve(store_path: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000, log_level: str = "info", *,
          max_connections: int = limits.DEFAULT_MAX_CONNECTIONS, **options: Any) -> None:
    """Serve the tables of ``store_path`` over HTTP until interrupted (``options``: those of
    :func:`create_app`); a missing store raises StoreError and a busy port IrscaleError first."""
    store = irscale.open_store(store_path)
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise IrscaleError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)    # room for the connections and the table files
    want = max_connections + 256 if hard == resource.RLIM_INFINITY else min(hard, max_connections + 256)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    uvicorn.run(create_app(store, **options), host=host, port=port, log_level=log_level, backlog=1024,
                limit_concurrency=max_connections, timeout_keep_alive=limits.KEEP_ALIVE_SECONDS,
                h11_max_incomplete_event_size=limits.MAX_HEAD_BYTES)
