"""Fan-out of independent units of work: in-process, joblib workers (loky processes or
threads) or a dask.distributed cluster through joblib's dask backend.

:class:`Fanout` is the one setting both enumerators take (``n_jobs`` as joblib counts
them, the backend); :func:`dask_client` connects to (or starts) the cluster the dask
backend runs on.

Local worker processes (loky) end with the process that started them, however it ends
(SIGKILL included): each runs :func:`watch_parent` as its initializer, a thread that
ends the worker within about :data:`WATCH_SECONDS` of its parent's death (once the
worker's current numba kernel call, which holds the GIL, returns). Without it, loky
workers of a killed build stay alive, idle, holding their memory. Before it ends, a
worker removes the results handed over to its dead parent (:mod:`irscale.enumerate.handoff`).
"""
from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from irscale.enumerate import handoff
from irscale.enumerate.jobs import available_cores
from irscale.enumerate.lazy import lazy_module
from irscale.errors import IrscaleError

if TYPE_CHECKING:
    from distributed import Client

#: joblib (about 45 ms to import), imported by the first fan-out: small builds run in-process.
joblib = lazy_module("joblib")

BACKENDS = ("loky", "threading", "dask")

#: Seconds between two checks of a worker that its parent is alive.
WATCH_SECONDS = 0.5


def watch_parent(parent: int) -> None:
    """Worker initializer: end this process when the process ``parent`` that started it
    is gone (its parent process id changes: the worker was handed to init or a subreaper).

    A daemon thread polls :func:`os.getppid`; ``prctl(PR_SET_PDEATHSIG)`` is not used
    because Linux sends that signal when the *thread* that forked the worker ends, and
    loky forks workers from its manager thread too.

    SIGINT is ignored: Ctrl-C in a terminal reaches the whole process group, and it is the
    parent's to handle (it stops the workers and says what was kept), not a traceback per
    worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.getppid() != parent:
        _orphaned(parent)
    threading.Thread(target=_watch, args=(parent,), name="irscale-watch-parent", daemon=True).start()


def _watch(parent: int) -> None:
    while True:
        time.sleep(WATCH_SECONDS)
        if os.getppid() != parent:
            _orphaned(parent)


def _orphaned(parent: int) -> None:
    """End this worker of a dead parent, removing the results handed over that the
    parent did not live to take (:func:`~irscale.enumerate.handoff.remove_of_parent`)."""
    handoff.remove_of_parent(parent)
    os._exit(1)


@dataclass(frozen=True)
class Fanout:
    """Where units of work run: ``n_jobs`` workers (1: in-process; -1: all cores, as joblib
    counts them) of the joblib ``backend`` (None: loky processes; ``"threading"``;
    ``"dask"``, which needs a connected :func:`dask_client`)."""

    n_jobs: int = 1
    backend: str | None = None

    def __post_init__(self) -> None:
        if self.n_jobs == 0 or self.n_jobs < -1:
            raise IrscaleError(f"n_jobs must be a positive number or -1, got {self.n_jobs}")
        if self.backend is not None and self.backend not in BACKENDS:
            raise IrscaleError(f"backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")

    @property
    def workers(self) -> int:
        """Number of workers (-1: the cores this process may use; a dask cluster counts as
        n_jobs)."""
        return self.n_jobs if self.n_jobs > 0 else available_cores()

    @property
    def separate_processes(self) -> bool:
        """Whether units of work run in other processes of this machine (loky workers)."""
        return self.workers > 1 and self.backend in (None, "loky")

    @property
    def shares_files(self) -> bool:
        """Whether workers see this machine's files (not so for remote dask workers)."""
        return self.backend != "dask"

    def map(self, fn: Callable, items: Iterable[tuple], n_items: int, ordered: bool = True) -> Iterator:
        """``fn(*item)`` for every item, as results arrive (in item order when ``ordered``).
        Runs in-process when there is one worker or at most one item."""
        if self.n_jobs == 1 or n_items <= 1:
            return (fn(*item) for item in items)
        if self.backend in (None, "loky"):
            # workers of the reusable executor end with this process (the executor is
            # reused as long as the initializer and its argument are the same)
            cfg = {"backend": "loky", "initializer": watch_parent, "initargs": (os.getpid(),)}
        else:
            cfg = {"backend": self.backend}
        with joblib.parallel_config(**cfg):
            return joblib.Parallel(n_jobs=self.n_jobs, return_as="generator" if ordered else "generator_unordered")(
                joblib.delayed(fn)(*item) for item in items)


def dask_client(scheduler: str | None, n_jobs: int) -> Client:
    """A dask.distributed client for joblib's dask backend: connected to ``scheduler``
    (tcp://host:port), or to a local cluster of ``n_jobs`` single-threaded workers."""
    try:
        from distributed import Client
    except ImportError:
        raise IrscaleError("the dask backend needs dask.distributed: pip install 'irscale[dask]'") from None
    try:
        if scheduler:
            return Client(scheduler, timeout="20s")
        return Client(n_workers=n_jobs if n_jobs > 0 else available_cores(), threads_per_worker=1,
                      dashboard_address=None)
    except OSError as e:
        raise IrscaleError(f"cannot reach the dask scheduler {scheduler}: {e}") from None
