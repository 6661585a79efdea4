"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn), read-only,
never taking or giving a filesystem path. ``irscale serve`` (:func:`serve`), gunicorn behind a
reverse proxy (docs/service.md, "Deployment") or an ASGI application (:func:`create_app`). The
modules, each importing only those before it: ``limits``, ``models``, ``intake``, ``lookups``,
``app``. The names below load their modules (and FastAPI) when first used."""
from __future__ import annotations

import importlib

_API = {"create_app": "irscale.service.app", "serve": "irscale.service.app", "RequestError": "irscale.service.intake"}
__all__ = list(_API)


def __getattr__(name: str) -> object:
    if name not in _API:
        raise AttributeError(f"module 'irscale.service' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name]), name)
