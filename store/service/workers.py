"""Where the lookups run: worker processes (:class:`WorkerPool`), each request with a time and
memory budget beyond which its worker is killed and replaced, or threads of the
application's process (:class:`_Threads`, no budget: :func:`~irscale.store.service.create_app`
without workers)."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import time

from starlette.concurrency import run_in_threadpool

from irscale.errors import StoreError
from irscale.store.service.errors import PayloadTooLargeError, ServiceBusyError, error_body
from irscale.store.service.limits import (
    DEFAULT_MAX_ITEMS,
    DEFAULT_MEMORY_BUDGET,
    DEFAULT_QUEUE_TIMEOUT,
    DEFAULT_TIME_BUDGET,
    DEFAULT_WORKERS,
)
from irscale.store.service.lookups import LookupService

log = logging.getLogger("irscale.service")

#: Seconds a worker process may take to start (import, open the store, prepare scales),
#: and how often the time and memory of a working worker are checked.
WORKER_START_SECONDS = 120.0
_WATCH_SECONDS = 0.05
#: What a worker is asked (the first byte string of a request): a POST /v1/rank body, or
#: the checked parameters of a GET /v1/table (JSON).
_RANK, _VIEW = b"rank", b"view"


def _resident_anonymous_bytes(pid: int) -> int | None:
    """Anonymous resident memory of a process (heap, not mapped table pages), from
    /proc (None where there is none)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            return next((int(line.split()[1]) * 1024 for line in f if line.startswith(b"RssAnon:")), None)
    except OSError:
        return None


def _worker_main(conn, store_path: str, max_items: int) -> None:
    """A worker process: opens the store, says it is ready (``R``, or ``E`` and the error),
    then answers requests (:data:`_RANK` or :data:`_VIEW`, then the body or the view's
    parameters) with the status as 2 bytes and the JSON, until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the server stops its workers itself
    try:
        service = LookupService(store_path, max_items=max_items)
    except BaseException as e:  # reported to the parent, which raises it
        conn.send_bytes(b"E" + str(e).encode())
        return
    conn.send_bytes(b"R")
    try:
        while True:
            kind, body = conn.recv_bytes(), conn.recv_bytes()
            status, payload = service.answer_view(body) if kind == _VIEW else service.answer(body)
            conn.send_bytes(status.to_bytes(2, "big") + payload)
    except (EOFError, OSError):
        return


class _Worker:
    """One worker process and the parent's end of its pipe, started and ready."""

    def __init__(self, ctx, args: tuple):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, *args), daemon=True, name="irscale-worker")
        self.process.start()
        child.close()
        message = f"Ea worker process of the service did not start within {WORKER_START_SECONDS:.0f} s".encode()
        try:
            if self.conn.poll(WORKER_START_SECONDS):
                message = self.conn.recv_bytes()
        except (EOFError, OSError):
            message = b"Ea worker process of the service exited while starting"
        if message != b"R":
            self.kill()
            raise StoreError(message[1:].decode("utf-8", "replace"))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


class _Overrun(Exception):  # noqa: N818  (turned into a 413 answer)
    """A worker passed the time or memory budget of its request."""


class WorkerPool:
    """Worker processes that parse and rank requests, so that the server's event loop (and
    its interpreter lock) stays free for other requests; each request has a time and
    memory budget, beyond which its worker is killed and replaced.

    Parameters
    ----------
    store_path : path
        The store each worker opens.
    size : int
        Number of worker processes (requests worked on at once).
    max_items : int
        Most values or runs in one request.
    time_budget, memory_budget : float, int
        Seconds a worker may work on one request, anonymous resident memory (bytes) it
        may reach.
    queue_timeout : float
        Seconds a request may wait for a free worker (then 503).
    """

    def __init__(self, store_path: str | os.PathLike, size: int = DEFAULT_WORKERS, max_items: int = DEFAULT_MAX_ITEMS,
                 time_budget: float = DEFAULT_TIME_BUDGET, memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 queue_timeout: float = DEFAULT_QUEUE_TIMEOUT):
        self._start = lambda: _Worker(multiprocessing.get_context("spawn"), (str(store_path), int(max_items)))
        self.time_budget, self.memory_budget, self.queue_timeout = time_budget, memory_budget, queue_timeout
        self._closed = False
        self._tasks: set = set()
        self._idle: list[_Worker] = []
        try:
            for _ in range(max(1, int(size))):
                self._idle.append(self._start())
        except BaseException:
            self.close()
            raise
        self._all = set(self._idle)
        self._slots = asyncio.Semaphore(len(self._idle))

    async def _replace(self) -> None:
        """Start a worker for one that was killed, then free its slot."""
        try:
            while not self._closed:
                try:
                    worker = await asyncio.get_running_loop().run_in_executor(None, self._start)
                except Exception:
                    log.exception("cannot start a worker process; trying again")
                    await asyncio.sleep(1)
                    continue
                if self._closed:
                    worker.kill()
                else:
                    self._all.add(worker)
                    self._idle.append(worker)
                return
        finally:
            self._slots.release()

    async def answer(self, body: bytes, kind: bytes = _RANK) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a POST /v1/rank body (or, ``kind`` :data:`_VIEW`, of the
        parameters of a GET /v1/table), worked on by a worker process.

        Raises
        ------
        ServiceBusyError
            No worker became free within ``queue_timeout`` seconds.
        PayloadTooLargeError
            The request passed its time or memory budget.
        """
        try:
            await asyncio.wait_for(self._slots.acquire(), self.queue_timeout)
        except asyncio.TimeoutError:
            raise ServiceBusyError(f"every worker of this service has been busy for {self.queue_timeout:g} s; "
                                   f"retry later") from None
        worker = self._idle.pop()
        try:
            result = await self._exchange(worker, body, kind)
        except BaseException as e:
            self._all.discard(worker)
            worker.kill()
            task = asyncio.get_running_loop().create_task(self._replace())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            if isinstance(e, _Overrun):
                advice = "split the batch" if kind == _RANK else "ask for fewer points"
                raise PayloadTooLargeError(f"{e.args[0]}, the {e.args[1]} budget of one request of this service: "
                                           f"{advice}") from None
            if isinstance(e, (EOFError, OSError)):
                log.error("a worker process died while answering a request (exit code %s)", worker.process.exitcode)
                return 500, error_body("InternalError", "internal server error (a worker process died; a bug in "
                                                        "irscale)")
            raise
        self._idle.append(worker)
        self._slots.release()
        return result

    async def _exchange(self, worker: _Worker, body: bytes, kind: bytes) -> tuple[int, bytes]:
        """Send ``body`` to ``worker`` and wait for its answer, checking its time and memory
        every :data:`_WATCH_SECONDS` (:class:`_Overrun` beyond either)."""
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        await loop.run_in_executor(None, lambda: (worker.conn.send_bytes(kind), worker.conn.send_bytes(body)))
        ready = asyncio.Event()
        loop.add_reader(worker.conn.fileno(), ready.set)
        try:
            while not ready.is_set():
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(ready.wait(), _WATCH_SECONDS)
                    break
                if time.monotonic() - start > self.time_budget:
                    raise _Overrun(f"the request took more than {self.time_budget:g} s", "time")
                used = _resident_anonymous_bytes(worker.process.pid)
                if used is not None and used > self.memory_budget:
                    raise _Overrun(f"the request needed more than {self.memory_budget / 2 ** 20:.0f} MiB", "memory")
        finally:
            loop.remove_reader(worker.conn.fileno())
        data = await loop.run_in_executor(None, worker.conn.recv_bytes)
        return int.from_bytes(data[:2], "big"), data[2:]

    def close(self) -> None:
        """Stop every worker (idle ones end when their pipe closes)."""
        self._closed = True
        workers = list(getattr(self, "_all", self._idle))
        for worker in workers:
            worker.conn.close()
        for worker in workers:
            worker.process.join(2)
            worker.kill()
        self._idle.clear()


class _Threads:
    """Answers in threads of this process (no budget; :func:`create_app` without workers)."""

    def __init__(self, service: LookupService, size: int = DEFAULT_WORKERS):
        self.service = service
        self._slots = asyncio.Semaphore(size)

    async def answer(self, body: bytes, kind: bytes = _RANK) -> tuple[int, bytes]:
        async with self._slots:
            return await run_in_threadpool(self.service.answer_view if kind == _VIEW else self.service.answer, body)

    def close(self) -> None:
        pass
