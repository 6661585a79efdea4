"""The HTTP lookup service, read-only: ``irscale serve`` (:func:`serve`), gunicorn behind a reverse proxy
(docs/service.md) or an ASGI app (:func:`create_app`); modules ``models`` (requests read and checked,
answers), ``lookups``, ``app``, loaded (with FastAPI) when first used. Its limits and defaults:"""
from __future__ import annotations

import importlib

MAX_DETAILS = 20                    # validation problems listed in one error answer
MAX_QUOTED = 40                     # characters quoted of anything the client sent
MAX_FIELDS = 64                     # fields of one request (six are known)
MAX_RB_ITEMS = 10                   # items of an rb list (one count per grade)
DEFAULT_MAX_ITEMS = 1_000_000       # values or runs of one request
DEFAULT_MAX_BODY_BYTES = 64 * 2 ** 20
DEFAULT_MAX_SECONDS = 5.0           # estimated seconds of one core per request (lookups.cost); beyond, 422
DEFAULT_THREADS = 2                 # the fixed pool of threads answering requests
DEFAULT_MAX_CONNECTIONS = 1000      # open connections of irscale serve
MAX_HEAD_BYTES = 16 * 1024          # request line and headers
KEEP_ALIVE_SECONDS = 5
MAX_VIEW_POINTS, DEFAULT_VIEW_POINTS = 10_000, 1000     # GET /v1/table: bins of consecutive ranks
MAX_GAP_BINS, DEFAULT_GAP_BINS = 500, 40                # and of the gap histogram
_API = {"create_app": "irscale.service.app", "serve": "irscale.service.app", "RequestError": "irscale.service.models"}
__all__ = list(_API)


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'irscale.service' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name]), name)
