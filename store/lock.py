"""One writer at a time per store: an exclusive lock on the file ``.STORE.lock`` next to
the store, held for a whole build (its commits and its checkpoint folder ``.STORE.build/``).

The lock is a ``flock`` on the lock file, so the kernel releases it when its holder
dies, however it dies (SIGKILL included): a lock file left behind by a killed build is
not a held lock, and the next build takes it at once. The file holds the holder's PID,
host and start time, for the message of a build that finds the store busy. Releasing
removes the file (unlinked while still locked; a waiter that locked the removed file
notices that the path no longer names it and locks the new one).

Readers take no lock of this kind: a commit either adds its tables in place, behind a
redo journal and a ``flock`` on the store file that readers share while they read its
metadata (:mod:`irscale.store.journal`), or replaces the store whole (temporary file +
rename); either way a reader sees the old store or the new one.

Within one process the lock is re-entrant for the thread that holds it (a build that
builds missing tables through another ``build_store`` call), and other threads wait for
it like other processes do.
"""
from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from irscale.enumerate.processes import process_alive
from irscale.errors import StoreBusyError, StoreError

#: flock errors of file systems that do not support it (some network and FUSE ones).
_NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}

#: Seconds between two attempts to take a busy lock (the first attempts are quicker).
POLL_SECONDS = 0.25


def lock_path(store: str | os.PathLike) -> Path:
    """The lock file of the store at ``store``: ``.NAME.lock`` in the same folder."""
    store = Path(store)
    return store.parent / f".{store.name}.lock"


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) a store's lock, as its lock file says."""

    pid: int | None
    host: str
    since: str

    def describe(self) -> str:
        """``PID 1234 on HOST (writing since 2026-11-26T10:00:00+00:00)``, saying when the PID has exited."""
        if self.pid is None:
            return "another process (its lock file names none)"
        where = f" on {self.host}" if self.host else ""
        notes = [f"writing since {self.since}"] if self.since else []
        if self.host == socket.gethostname() and not process_alive(self.pid):
            notes.append("it has exited, but a process it started still holds the lock")
        return f"PID {self.pid}{where}" + (f" ({'; '.join(notes)})" if notes else "")


def read_holder(fd: int) -> Holder:
    """The holder recorded in an open lock file (fields missing when it is being written)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
    except (OSError, ValueError, UnicodeDecodeError):
        info = {}
    pid = info.get("pid")
    return Holder(pid if isinstance(pid, int) else None, str(info.get("host", "")), str(info.get("since", "")))


class _Held:
    """This process's hold on one lock file: the open descriptor and the re-entry count,
    under a thread lock that other threads of the process wait on."""

    def __init__(self) -> None:
        self.thread_lock = threading.RLock()
        self.fd: int | None = None
        self.count = 0


_HELD: dict[str, _Held] = {}
_HELD_GUARD = threading.Lock()


def _say(message: str) -> None:
    print(f"irscale: {message}", file=sys.stderr, flush=True)


class StoreLock:
    """The write lock of the store at ``store``, as a context manager.

    ``wait``: seconds to wait for a busy lock (None: as long as it takes; 0: not at all).
    When the lock is busy, ``notify`` is called once with a message naming the holder
    ("waiting for PID N on HOST to finish writing STORE ..."; default: printed to stderr);
    when the wait runs out, :class:`~irscale.errors.StoreBusyError` names the holder.
    """

    def __init__(self, store: str | os.PathLike, wait: float | None = None,
                 notify: Callable[[str], None] | None = _say):
        if wait is not None and not wait >= 0:
            raise StoreError(f"the wait for a busy store must be a number of seconds >= 0 or None, got {wait!r}")
        self.store = Path(store)
        self.path = lock_path(self.store)
        self.wait = wait
        self.notify = notify
        self._held: _Held | None = None

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock, waiting for its holder as ``wait`` allows."""
        deadline = None if self.wait is None else time.monotonic() + self.wait
        key = os.path.abspath(self.path)
        with _HELD_GUARD:
            held = _HELD.setdefault(key, _Held())
        told = False
        # another thread of this process may hold it: wait on the thread lock first
        while not held.thread_lock.acquire(timeout=POLL_SECONDS if deadline is None else
                                           max(0.0, min(POLL_SECONDS, deadline - time.monotonic()))):
            told = self._busy(Holder(os.getpid(), socket.gethostname(), "") if held.fd is None else
                              read_holder(held.fd), deadline, told)
        try:
            if held.count == 0:
                held.fd = self._take_file(deadline, told)
            held.count += 1
        except BaseException:
            held.thread_lock.release()
            raise
        self._held = held

    def release(self) -> None:
        """Release the lock (the lock file is removed when the last re-entry ends)."""
        held = self._held
        if held is None:
            return
        self._held = None
        try:
            held.count -= 1
            if held.count == 0 and held.fd is not None:
                fd, held.fd = held.fd, None
                try:
                    os.unlink(self.path)   # while still locked: nobody takes a file about to vanish
                except OSError:
                    pass
                os.close(fd)               # releases the flock
        finally:
            held.thread_lock.release()

    def _take_file(self, deadline: float | None, told: bool) -> int:
        pause = 0.02
        while True:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as e:
                raise StoreError(f"cannot write {self.store}: cannot create its lock file {self.path}: "
                                 f"{e.strerror or e}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                if e.errno in _NO_LOCKS:   # a file system without flock: build, but say so
                    if self.notify is not None:
                        self.notify(f"cannot lock {self.path} ({e.strerror}): nothing keeps another build from "
                                    f"writing {self.store} at the same time")
                    return fd
                if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    os.close(fd)
                    raise StoreError(f"cannot lock {self.path} for writing {self.store}: {e.strerror or e}") from None
                holder = read_holder(fd)
                os.close(fd)
                told = self._busy(holder, deadline, told)
                time.sleep(pause if deadline is None else max(0.0, min(pause, deadline - time.monotonic())))
                pause = min(POLL_SECONDS, pause * 2)
                continue
            # locked; but the holder before us may have removed this file on release
            try:
                same = os.path.samestat(os.stat(self.path), os.fstat(fd))
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            self._record(fd)
            return fd

    def _record(self, fd: int) -> None:
        """Write who holds the lock into the lock file (best effort: a full disk leaves it empty)."""
        since = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        text = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": since}).encode()
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, text + b"\n", 0)
        except OSError:
            pass

    def _busy(self, holder: Holder, deadline: float | None, told: bool) -> bool:
        """Give up (StoreBusyError) when the wait is over, else say once whom we wait for;
        returns whether that has been said."""
        if deadline is not None and time.monotonic() >= deadline:
            waited = "without waiting" if not self.wait else f"after waiting {self.wait:g} s"
            raise StoreBusyError(f"{self.store} is being written by {holder.describe()} (lock file {self.path}); "
                                 f"gave up {waited}: run the build again when it has finished, or let it wait longer "
                                 f"(irscale build --wait SECONDS; by default a build waits as long as it takes)")
        if holder.pid is None and not told:
            return False               # the holder is writing its name: say it on the next try
        if not told and self.notify is not None:
            limit = "with no time limit" if self.wait is None else f"for at most {self.wait:g} s"
            self.notify(f"waiting for {holder.describe()} to finish writing {self.store} (lock file {self.path}), "
                        f"{limit}")
        return True
