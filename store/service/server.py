"""The server (:func:`serve`): uvicorn with its own limits (``limit_concurrency``,
``timeout_keep_alive``, ``h11_max_incomplete_event_size``) and one no server library has,
kept by hand: a deadline for request heads (:class:`HeadDeadlineH11Protocol`, a subclass of
uvicorn's h11 protocol; pyproject.toml pins the uvicorn versions it is tested with)."""
from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import socket

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from irscale.errors import IrscaleError
from irscale.store.reader import open_store
from irscale.store.service import limits
from irscale.store.service.app import create_app


class HeadDeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for request heads: a connection must deliver
    a complete request head within :attr:`header_timeout` seconds of opening or of the end
    of its previous answer, else it is closed. (uvicorn times out idle keep-alive
    connections only: never one that sends part of a head and holds, or trickles it.)"""

    header_timeout = limits.DEFAULT_HEADER_TIMEOUT
    _head_timer: asyncio.TimerHandle | None = None
    _awaited = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_head()

    def _await_head(self) -> None:
        self._cancel_head()
        self._awaited = self.cycle     # a head has arrived when the cycle is another one
        self._head_timer = self.loop.call_later(self.header_timeout, self._head_timeout)

    def _cancel_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timeout(self) -> None:
        self._head_timer = None
        if (self.cycle is self._awaited or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_timer is not None and self.cycle is not self._awaited and not self.cycle.response_complete:
            self._cancel_head()     # a request head arrived: the application's deadlines apply

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle.response_complete:
            self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head()
        super().connection_lost(exc)


def _check_can_listen(host: str, port: int) -> None:
    """Raise IrscaleError when ``host:port`` cannot be bound (in use, unknown host), so
    that the command line reports it as one line instead of uvicorn exiting."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise IrscaleError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def _raise_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (at most 65536);
    returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
    return 65536 if soft == resource.RLIM_INFINITY else soft


def serve(store_path: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000,
          max_items: int = limits.DEFAULT_MAX_ITEMS, max_body_bytes: int = limits.DEFAULT_MAX_BODY_BYTES,
          log_level: str = "info", *, workers: int = limits.DEFAULT_WORKERS,
          time_budget: float = limits.DEFAULT_TIME_BUDGET, memory_budget: int = limits.DEFAULT_MEMORY_BUDGET,
          header_timeout: float = limits.DEFAULT_HEADER_TIMEOUT,
          max_connections: int = limits.DEFAULT_MAX_CONNECTIONS) -> None:
    """Serve the tables of ``store_path`` over HTTP until interrupted, parsing and ranking
    in ``workers`` worker processes with a time and memory budget per request, and
    guarding connections (see Limits in docs/service.md).

    The store is opened and the address checked before the server starts, so a missing
    or foreign file raises :class:`~irscale.errors.StoreError` and a busy port
    :class:`~irscale.errors.IrscaleError` (the command line prints one line, exit 2).
    """
    store = open_store(store_path)
    _check_can_listen(host, port)
    max_connections = max(1, min(int(max_connections), _raise_file_limit() - 64 - 8 * workers))
    app = create_app(store, max_items=max_items, max_body_bytes=max_body_bytes, workers=workers,
                     time_budget=time_budget, memory_budget=memory_budget)
    protocol = type("HeadDeadlineH11Protocol", (HeadDeadlineH11Protocol,), {"header_timeout": header_timeout})
    uvicorn.run(app, host=host, port=port, log_level=log_level, http=protocol, limit_concurrency=max_connections,
                timeout_keep_alive=limits.KEEP_ALIVE_SECONDS, h11_max_incomplete_event_size=limits.MAX_HEAD_BYTES,
                backlog=1024)
