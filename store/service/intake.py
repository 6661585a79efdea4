"""How request bodies come in: at most ``max_body_bytes`` each (:class:`BodySizeLimit`, 413),
at most so many bytes and requests held at once (:class:`_Intake`, 503), and within a
time limit (:func:`_read_body`, 408)."""
from __future__ import annotations

import asyncio
import time

from fastapi import Request

from irscale.store.service.errors import RequestTimeoutError, ServiceBusyError, error_body


class _BodyTooLarge(Exception):  # noqa: N818  (a signal inside the middleware, never shown)
    """Raised into the application when a streamed body passes the limit."""


class BodySizeLimit:
    """Pure ASGI middleware answering 413 to HTTP requests whose body is larger than
    ``max_body_bytes``: by the Content-Length header before the body is read, and by
    counting the bytes of a streamed (chunked) body as the application receives it."""

    def __init__(self, app, max_body_bytes: int):
        self.app = app
        self.max_body_bytes = int(max_body_bytes)

    async def _refuse(self, send) -> None:
        payload = error_body("PayloadTooLargeError",
                             f"the request body is larger than this service accepts "
                             f"({self.max_body_bytes} bytes); split the batch")
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._refuse(send)
            return
        received = 0
        started = False

        async def counting_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise _BodyTooLarge
            return message

        async def watching_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except _BodyTooLarge:
            if started:
                raise
            await self._refuse(send)


class _Intake:
    """Request bodies held at once: at most ``max_bytes`` bytes (received, waiting or being
    answered), and at most ``max_pending`` whole bodies waiting or being answered; beyond
    either, ServiceBusyError (503). A slow client holds only what it has sent."""

    def __init__(self, max_bytes: int, max_pending: int):
        self.max_bytes, self.max_pending = max_bytes, max_pending
        self.bytes = 0
        self.pending = 0

    def take(self, size: int) -> None:
        if self.bytes + size > self.max_bytes:
            raise ServiceBusyError(f"this service is holding {self.max_bytes // 2 ** 20} MiB of requests already; "
                                   f"retry later")
        self.bytes += size


async def _read_body(request: Request, intake: _Intake, total: float, idle: float) -> bytes:
    """The request body, counted against ``intake`` as it arrives (the caller gives the
    bytes back); it must arrive within ``total`` seconds with no pause longer than
    ``idle`` (else RequestTimeoutError)."""
    deadline = time.monotonic() + total
    chunks = []
    stream = request.stream().__aiter__()
    while True:
        wait = min(idle, deadline - time.monotonic())
        try:
            if wait <= 0:
                raise asyncio.TimeoutError
            chunk = await asyncio.wait_for(stream.__anext__(), wait)
        except StopAsyncIteration:
            return b"".join(chunks)
        except asyncio.TimeoutError:
            raise RequestTimeoutError(f"the request body did not arrive in time (this service waits {total:g} s "
                                      f"for a body, {idle:g} s for each part of it)") from None
        intake.take(len(chunk))
        request.state.held = getattr(request.state, "held", 0) + len(chunk)
        chunks.append(chunk)
