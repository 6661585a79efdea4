"""The server (:func:`serve`): uvicorn with limits on connections and request heads (a
guarded h11 protocol), after checking the store and the address."""
from __future__ import annotations

import logging
import os
import resource
import socket

from irscale.errors import IrscaleError
from irscale.store.reader import open_store
from irscale.store.service.app import create_app
from irscale.store.service.limits import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_ITEMS,
    DEFAULT_MEMORY_BUDGET,
    DEFAULT_TIME_BUDGET,
    DEFAULT_WORKERS,
    EVICTION_GRACE,
    KEEP_ALIVE_SECONDS,
    MAX_HEAD_BYTES,
)

log = logging.getLogger("irscale.service")


def _check_can_listen(host: str, port: int) -> None:
    """Raise IrscaleError when ``host:port`` cannot be bound (in use, unknown host), so
    that the command line reports it as one line instead of uvicorn exiting."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise IrscaleError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def _guarded_h11(header_timeout: float, max_connections: int) -> type:
    """uvicorn's h11 protocol with a deadline for request heads and a cap on connections:
    a connection must deliver a complete request head within ``header_timeout`` seconds
    of opening or of the end of its previous answer (uvicorn itself never times out a
    connection that sends part of a request, nor one that trickles bytes after an
    answer), and beyond ``max_connections`` open connections the one that has waited
    longest for a request head is closed, if it has waited :data:`EVICTION_GRACE`
    seconds (a client that has just connected has had no time to send its request),
    else the new one."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: dict = {}      # connections waiting for a request head -> since when, longest first

    class GuardedH11Protocol(H11Protocol):
        _head_timer = None
        _awaited = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._await_head()
            if len(self.connections) > max_connections:
                victim, since = next(iter(waiting.items()))
                if victim is self or self.loop.time() - since < EVICTION_GRACE:
                    victim = self
                log.debug("%d connections open: closing one that waits for a request head", len(self.connections))
                victim._close()

        def _await_head(self) -> None:
            self._cancel_head()
            waiting[self] = self.loop.time()
            self._awaited = self.cycle
            self._head_timer = self.loop.call_later(header_timeout, self._head_timeout)

        def _cancel_head(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            waiting.pop(self, None)

        def _head_timeout(self) -> None:
            self._head_timer = None
            if self.cycle is self._awaited or self.cycle.response_complete:
                self._close()

        def _close(self) -> None:
            self._cancel_head()
            if not self.transport.is_closing():
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

    return GuardedH11Protocol


def _raise_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (at most 65536);
    returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return 65536 if soft == resource.RLIM_INFINITY else soft


def serve(store_path: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000,
          max_items: int = DEFAULT_MAX_ITEMS, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, log_level: str = "info",
          *, workers: int = DEFAULT_WORKERS, time_budget: float = DEFAULT_TIME_BUDGET,
          memory_budget: int = DEFAULT_MEMORY_BUDGET, header_timeout: float = DEFAULT_HEADER_TIMEOUT,
          max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
    """Serve the tables of ``store_path`` over HTTP until interrupted, parsing and ranking
    in ``workers`` worker processes with a time and memory budget per request, and
    guarding connections (see Limits in docs/service.md).

    The store is opened and the address checked before the server starts, so a missing
    or foreign file raises :class:`~irscale.errors.StoreError` and a busy port
    :class:`~irscale.errors.IrscaleError` (the command line prints one line, exit 2).
    """
    import uvicorn

    store = open_store(store_path)
    _check_can_listen(host, port)
    files = _raise_file_limit()
    max_connections = max(1, min(int(max_connections), files - 64 - 8 * workers))
    app = create_app(store, max_items=max_items, max_body_bytes=max_body_bytes, workers=workers,
                     time_budget=time_budget, memory_budget=memory_budget)
    uvicorn.run(app, host=host, port=port, log_level=log_level, http=_guarded_h11(header_timeout, max_connections),
                timeout_keep_alive=KEEP_ALIVE_SECONDS, h11_max_incomplete_event_size=MAX_HEAD_BYTES, backlog=1024)
