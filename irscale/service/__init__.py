"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn).

Run it with ``irscale serve --store tables`` (:func:`serve`), behind gunicorn and a reverse
proxy (docs/service.md, "Deployment"), or embed it as an ASGI application
(:func:`create_app`). It is read-only and never accepts or returns a filesystem path. The
modules, each importing only those before it: ``limits``, ``errors``, ``models``,
``intake`` (a request body read and checked), ``views`` (GET /v1/table), ``lookups`` (the
snapshot of a store and the cost of each request), ``app`` (:func:`create_app`) and
``server`` (:func:`serve`). The names below load their modules (and FastAPI) when first used.
"""
from __future__ import annotations

import importlib

_API = {"create_app": "irscale.service.app", "serve": "irscale.service.server",
        "RequestError": "irscale.service.errors"}
__all__ = list(_API)


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'irscale.service' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name]), name)
