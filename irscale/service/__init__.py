"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn).

Run it with ``irscale serve --store tables`` (:func:`serve`), behind gunicorn and a reverse
proxy (docs/service.md, "Deployment"), or embed it as an ASGI application
(:func:`create_app`). It is read-only and never accepts or returns a filesystem path. The
modules, each importing only those before it: ``limits``, ``errors``, ``models``,
``intake`` (a request body read and checked), ``views`` (GET /v1/table), ``lookups`` (the
snapshot of a store and the cost of each request), ``app`` (:func:`create_app`) and
``server`` (:func:`serve`).
"""
from __future__ import annotations

from irscale.service.app import create_app
from irscale.service.errors import RequestError
from irscale.service.server import serve

__all__ = ["create_app", "serve", "RequestError"]
