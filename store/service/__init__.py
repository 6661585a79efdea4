"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn).

Run it with ``irscale serve --store tables`` (:func:`serve`), behind gunicorn
(docs/service.md, "Deployment"), or embed it as an ASGI application (:func:`create_app`). It
is read-only and never accepts or returns a filesystem path; docs/service.md describes the
API, its errors and limits. The modules, each importing only those before it: ``limits``,
``errors``, ``models``, ``validation`` (a request body read and checked), ``views`` (GET
/v1/table), ``lookups`` (:class:`LookupService`), ``workers`` (worker processes and their
budgets), ``app`` (:func:`create_app`: routes, request intake, the page at ``/``) and
``server`` (:func:`serve`: uvicorn and the request-head deadline).
"""
from __future__ import annotations

from irscale.store.service import limits
from irscale.store.service.app import DOCS_ASSETS, create_app
from irscale.store.service.errors import (
    InvalidJSONError,
    PayloadTooLargeError,
    RequestError,
    RequestTimeoutError,
    ServiceBusyError,
)
from irscale.store.service.limits import *  # noqa: F403  (the limits and defaults, named in docs/service.md)
from irscale.store.service.lookups import LookupService
from irscale.store.service.server import HeadDeadlineH11Protocol, serve
from irscale.store.service.validation import parse_request, runs_array
from irscale.store.service.views import check_view_names, view_rb
from irscale.store.service.workers import WorkerPool

__all__ = ["create_app", "serve", "LookupService", "WorkerPool", "HeadDeadlineH11Protocol", "parse_request",
           "runs_array", "check_view_names", "view_rb", "DOCS_ASSETS", "RequestError", "InvalidJSONError",
           "PayloadTooLargeError", "RequestTimeoutError", "ServiceBusyError", *limits.__all__]
