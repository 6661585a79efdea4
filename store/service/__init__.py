"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn).

Run it with ``irscale serve --store tables`` (:func:`serve`) or embed it as an ASGI
application (:func:`create_app`). It is read-only, opens every table once at start-up and
never accepts or returns a filesystem path. The API, its conventions, its errors and its
limits are in docs/service.md; the OpenAPI description is at ``/openapi.json``, the
interactive docs (offline) at ``/docs`` and ``/redoc``, a page for research use at ``/``.

The modules, each importing only those before it: :mod:`.limits` (limits and defaults),
:mod:`.errors` (request errors, HTTP status, error bodies), :mod:`.models` (pydantic
models), :mod:`.scan_kernels` and :mod:`.scan` (the scan of a request's raw bytes),
:mod:`.validation` (validation errors, runs), :mod:`.views` (GET /v1/table),
:mod:`.lookups` (:class:`LookupService`), :mod:`.workers` (worker processes and their
budgets), :mod:`.intake` (request bodies), :mod:`.page` (the page at ``/``), :mod:`.app`
(:func:`create_app`, the routes) and :mod:`.server` (:func:`serve`).
"""
from __future__ import annotations

from irscale.store.service.app import DOCS_ASSETS, create_app
from irscale.store.service.errors import (
    InvalidJSONError,
    PayloadTooLargeError,
    RequestError,
    RequestTimeoutError,
    ServiceBusyError,
    error_body,
    status_of,
)
from irscale.store.service.intake import BodySizeLimit
from irscale.store.service.limits import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_GAP_BINS,
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MAX_PENDING,
    DEFAULT_MEMORY_BUDGET,
    DEFAULT_QUEUE_TIMEOUT,
    DEFAULT_TIME_BUDGET,
    DEFAULT_VIEW_POINTS,
    DEFAULT_WORKERS,
    EVICTION_GRACE,
    KEEP_ALIVE_SECONDS,
    MAX_DEPTH,
    MAX_DETAILS,
    MAX_FIELDS,
    MAX_GAP_BINS,
    MAX_HEAD_BYTES,
    MAX_OTHER_ITEMS,
    MAX_RB_ITEMS,
    MAX_RUN_LENGTH,
    MAX_TOKEN,
    MAX_VIEW_POINTS,
    SCALE_CACHE_SIZE,
    VIEW_CACHE_SIZE,
    VIEW_PARAMETERS,
)
from irscale.store.service.lookups import LookupService
from irscale.store.service.models import (
    ErrorDetail,
    ErrorInfo,
    ErrorResponse,
    GapHistogram,
    HealthResponse,
    RankRequest,
    RankResponse,
    StoreInfo,
    TableInfo,
    TablesResponse,
    TableViewResponse,
)
from irscale.store.service.page import page_html
from irscale.store.service.scan import prescan
from irscale.store.service.server import serve
from irscale.store.service.validation import runs_array
from irscale.store.service.views import GAP_WINDOW, GAP_WINDOWS, VIEW_EXACT_VALUES, view_params
from irscale.store.service.workers import WORKER_START_SECONDS, WorkerPool

__all__ = [
    # the service
    "create_app", "serve", "LookupService", "WorkerPool", "BodySizeLimit", "prescan", "runs_array", "view_params",
    "page_html", "status_of", "error_body",
    # errors of requests
    "RequestError", "InvalidJSONError", "PayloadTooLargeError", "RequestTimeoutError", "ServiceBusyError",
    # models
    "RankRequest", "RankResponse", "TableInfo", "StoreInfo", "TablesResponse", "HealthResponse", "ErrorDetail",
    "ErrorInfo", "ErrorResponse", "GapHistogram", "TableViewResponse",
    # limits and defaults
    "MAX_FIELDS", "MAX_DEPTH", "MAX_RUN_LENGTH", "MAX_RB_ITEMS", "MAX_OTHER_ITEMS", "MAX_TOKEN", "MAX_DETAILS",
    "MAX_HEAD_BYTES", "MAX_VIEW_POINTS", "MAX_GAP_BINS", "VIEW_PARAMETERS", "VIEW_EXACT_VALUES", "GAP_WINDOWS",
    "GAP_WINDOW", "SCALE_CACHE_SIZE", "VIEW_CACHE_SIZE", "EVICTION_GRACE", "KEEP_ALIVE_SECONDS",
    "WORKER_START_SECONDS", "DOCS_ASSETS",
    "DEFAULT_MAX_ITEMS", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_WORKERS", "DEFAULT_TIME_BUDGET", "DEFAULT_MEMORY_BUDGET",
    "DEFAULT_QUEUE_TIMEOUT", "DEFAULT_MAX_PENDING", "DEFAULT_BODY_TIMEOUT", "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT", "DEFAULT_MAX_CONNECTIONS", "DEFAULT_VIEW_POINTS", "DEFAULT_GAP_BINS",
]
