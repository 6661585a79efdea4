"""Where the lookups run: worker processes (:class:`WorkerPool`), each request with a time and
memory budget beyond which its worker is killed and replaced, or threads of the
application's process (:class:`_Threads`, no budget: ``create_app`` without workers).

Kept by hand, as measured against pebble 5.2 (whose ``ProcessPool`` breaks for good when an
idle worker dies) and a kernel memory limit (under ``RLIMIT_DATA`` pydantic_core aborts or
deadlocks instead of raising MemoryError): one pipe per worker, a queue of idle workers,
and the budgets watched from here (anonymous resident memory, read from /proc), so that an
overrun worker is killed whatever it is doing."""
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
from irscale.store.service.limits import DEFAULT_WORKERS
from irscale.store.service.lookups import LookupService

log = logging.getLogger("irscale.service")

#: Seconds a worker may take to start (import, open the store, prepare scales), and how
#: often the time and memory of a working worker are checked.
WORKER_START_SECONDS = 120.0
_WATCH_SECONDS = 0.05
#: What a worker is asked (a method of LookupService): a POST /v1/rank body, or the
#: checked parameters of a GET /v1/table.
RANK, VIEW = "answer", "answer_view"


def _worker_main(conn, store_path: str, max_items: int) -> None:
    """A worker process: opens the store, says ``"ready"`` (or why not), then answers
    ``(kind, body)`` with ``(status, JSON)`` until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the server stops its workers itself
    try:
        service = LookupService(store_path, max_items=max_items)
    except BaseException as e:  # reported to the parent, which raises it
        conn.send(str(e))
        return
    conn.send("ready")
    try:
        while True:
            kind, body = conn.recv()
            conn.send(getattr(service, kind)(body))
    except (EOFError, OSError):
        return


def _anonymous_bytes(pid: int) -> int:
    """Anonymous resident memory of a process (its heap, not the mapped table files)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            return next((int(line.split()[1]) * 1024 for line in f if line.startswith(b"RssAnon:")), 0)
    except OSError:
        return 0


def _overrun(what: str, kind: str) -> PayloadTooLargeError:
    return PayloadTooLargeError(f"the request {what} of one request of this service: "
                                + ("split the batch" if kind == RANK else "ask for fewer points"))


async def _set_within(event: asyncio.Event, seconds: float) -> bool:
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)
    return event.is_set()


class _Worker:
    """One worker process, started and ready, and the parent's end of its pipe."""

    def __init__(self, store_path: str, max_items: int):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, store_path, max_items), daemon=True,
                                   name="irscale-worker")
        self.process.start()
        child.close()
        try:
            said = self.conn.recv() if self.conn.poll(WORKER_START_SECONDS) else (
                f"a worker process of the service did not start within {WORKER_START_SECONDS:.0f} s")
        except (EOFError, OSError):
            said = "a worker process of the service exited while starting"
        if said != "ready":
            self.kill()
            raise StoreError(said)

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.conn.close()       # after the process: a thread still sending to it gets EPIPE, not a reused fd


class WorkerPool:
    """``size`` worker processes that parse and rank requests, so that the server's event
    loop (and its interpreter lock) stays free for other requests. A request waits at most
    ``queue_timeout`` seconds for an idle worker (then 503); a worker that works on one
    longer than ``time_budget`` seconds or whose anonymous resident memory passes
    ``memory_budget`` bytes is killed and replaced (the request gets 413)."""

    def __init__(self, store_path: str | os.PathLike, size: int, max_items: int, time_budget: float,
                 memory_budget: int, queue_timeout: float):
        self._start = lambda: _Worker(str(store_path), int(max_items))
        self.time_budget, self.memory_budget, self.queue_timeout = time_budget, memory_budget, queue_timeout
        self._workers: set[_Worker] = set()
        self._tasks: set[asyncio.Task] = set()      # replacements being started
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._closed = False
        try:
            for _ in range(max(1, int(size))):
                self._add(self._start())
        except BaseException:
            self.close()
            raise

    def _add(self, worker: _Worker) -> None:
        self._workers.add(worker)
        self._idle.put_nowait(worker)

    async def _replace(self) -> None:
        """Start a worker in place of one killed (trying again every second)."""
        while not self._closed:
            try:
                new = await asyncio.get_running_loop().run_in_executor(None, self._start)
            except Exception:
                log.exception("cannot start a worker process; trying again")
                await asyncio.sleep(1)
                continue
            if self._closed:
                new.kill()
            else:
                self._add(new)
            return

    async def answer(self, body: bytes | dict, kind: str = RANK) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a POST /v1/rank body (or, ``kind`` :data:`VIEW`, of the
        parameters of a GET /v1/table); ServiceBusyError (503) after ``queue_timeout``
        seconds without an idle worker, PayloadTooLargeError (413) beyond a budget."""
        try:
            worker = await asyncio.wait_for(self._idle.get(), self.queue_timeout)
        except asyncio.TimeoutError:
            raise ServiceBusyError(f"every worker of this service has been busy for {self.queue_timeout:g} s; "
                                   f"retry later") from None
        loop = asyncio.get_running_loop()
        start, answered = time.monotonic(), asyncio.Event()
        try:
            await loop.run_in_executor(None, worker.conn.send, (kind, body))
            loop.add_reader(worker.conn.fileno(), answered.set)     # waited for on the loop, not in a thread
            try:
                while not await _set_within(answered, _WATCH_SECONDS):
                    if time.monotonic() - start > self.time_budget:
                        raise _overrun(f"took more than {self.time_budget:g} s, the time budget", kind)
                    if _anonymous_bytes(worker.process.pid) > self.memory_budget:
                        raise _overrun(f"needed more than {self.memory_budget / 2 ** 20:.0f} MiB, the memory budget",
                                       kind)
            finally:
                loop.remove_reader(worker.conn.fileno())
            answer = await loop.run_in_executor(None, worker.conn.recv)
        except BaseException as e:
            self._workers.discard(worker)
            worker.kill()
            task = loop.create_task(self._replace())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            if isinstance(e, (EOFError, OSError)):
                log.error("a worker process died while answering a request (exit code %s)", worker.process.exitcode)
                return 500, error_body("InternalError", "internal server error (a worker process died; a bug in "
                                                        "irscale)")
            raise
        self._idle.put_nowait(worker)
        return answer

    def close(self) -> None:
        """Stop every worker."""
        self._closed = True
        for worker in list(self._workers):
            worker.kill()
        self._workers.clear()


class _Threads:
    """Answers in threads of this process, ``size`` at once (no budget)."""

    def __init__(self, service: LookupService, size: int = DEFAULT_WORKERS):
        self.service = service
        self._slots = asyncio.Semaphore(size)

    async def answer(self, body: bytes | dict, kind: str = RANK) -> tuple[int, bytes]:
        async with self._slots:
            return await run_in_threadpool(getattr(self.service, kind), body)

    def close(self) -> None:
        pass
