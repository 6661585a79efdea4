"""``irscale serve`` (:func:`serve`): one uvicorn process with uvicorn's own limits
(``limit_concurrency``, ``timeout_keep_alive``, ``h11_max_incomplete_event_size``). Slow
clients, floods and worker memory are the deployment's (docs/service.md, "Deployment")."""
from __future__ import annotations

import contextlib
import os
import resource
import socket

import uvicorn

import irscale
import irscale.service.limits as limits
from irscale.errors import IrscaleError
from irscale.service.app import create_app


def _check_can_listen(host: str, port: int) -> None:
    """Raise IrscaleError when ``host:port`` cannot be bound (in use, unknown host), so
    that the command line reports it as one line instead of uvicorn exiting."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise IrscaleError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def serve(store_path: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000,
          max_items: int = limits.DEFAULT_MAX_ITEMS, max_body_bytes: int = limits.DEFAULT_MAX_BODY_BYTES,
          log_level: str = "info", *, threads: int = limits.DEFAULT_THREADS,
          max_seconds: float = limits.DEFAULT_MAX_SECONDS,
          max_connections: int = limits.DEFAULT_MAX_CONNECTIONS) -> None:
    """Serve the tables of ``store_path`` over HTTP until interrupted (see docs/service.md).
    The store is opened and the address checked first, so that a missing or foreign store
    raises :class:`~irscale.errors.StoreError` and a busy port
    :class:`~irscale.errors.IrscaleError` (the command line prints one line, exit 2)."""
    store = irscale.open_store(store_path)
    _check_can_listen(host, port)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)    # room for the connections and the table files
    want = max_connections + 256 if hard == resource.RLIM_INFINITY else min(hard, max_connections + 256)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    app = create_app(store, max_items=max_items, max_body_bytes=max_body_bytes, threads=threads,
                     max_seconds=max_seconds)
    uvicorn.run(app, host=host, port=port, log_level=log_level, limit_concurrency=max_connections,
                timeout_keep_alive=limits.KEEP_ALIVE_SECONDS, h11_max_incomplete_event_size=limits.MAX_HEAD_BYTES,
                backlog=1024)
