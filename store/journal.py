"""Commits that add tables to a store in place, without copying the tables already there.

Adding a table to an HDF5 file writes its data past the file's end and changes a few
kilobytes of metadata inside it (the superblock, the table group's links). An append
commit opens the store through a file object (h5py's ``fileobj`` driver) that writes
what lies past the old end straight to the file and keeps every change inside it in
memory, then:

1. flushes the new data to disk (the store's metadata is still the old one, so readers
   and a crash see the old store: bytes past its end are ignored);
2. under an exclusive lock on the store (readers of this package share it while they
   read HDF5 metadata: :func:`open_for_reading`), writes the changes to a redo journal
   ``.STORE.redo`` (temporary file, flush, rename: the commit point), then into the
   store, flushes the store and deletes the journal; SIGINT and SIGTERM wait meanwhile
   (a Ctrl-C is then raised as :class:`CommittedInterrupt`).

A crash before the journal's rename leaves the old store (and data past its end, cut
off by the next commit); a crash after it leaves a journal that the next reader or
writer replays (:func:`recover`) before reading, so that the store is the new one. The
journal names the file it belongs to (device, inode, old end of data, length written):
a journal left next to a store that was since replaced, moved or deleted is set aside
(``.STORE.redo-stale-TIME``) with a warning, never replayed into another file. Readers'
memory maps of existing tables stay valid: their bytes are never written.

The lock is an open-file-description byte-range lock (``F_OFD_SETLK``, Linux), which
HDF5's own ``flock`` of open files does not meet: a store open in another program
(h5py, HDFView) delays nothing. A commit waits at most :data:`WAIT_SECONDS` for readers,
then copies the store instead. Append commits need a version-0 superblock at the start
of the file (the format h5py writes), OFD locks, and no table being replaced; other
commits copy the store (:mod:`irscale.store.writer`). The journal holds a JSON header,
the changes in the order HDF5 wrote them, and a sha256 of everything before it.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import io
import json
import os
import signal
import struct
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import h5py

from irscale.errors import CorruptStoreError, IrscaleWarning, StoreError

#: Bytes of metadata changes an append commit may hold in memory; beyond, it gives up
#: (and the caller copies the store): a commit changes kilobytes.
MAX_CHANGED_BYTES = 64 << 20
#: Seconds a commit waits for readers to finish reading the store's metadata before it
#: gives up appending (and the caller copies the store).
WAIT_SECONDS = 10.0
#: The HDF5 format signature, at the start of a file without a user block.
SIGNATURE = b"\x89HDF\r\n\x1a\n"
MAGIC = b"irscale-redo-2\n"
#: Lock errors of file systems without OFD locks.
NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}
_OFD_SET = getattr(fcntl, "F_OFD_SETLK", None)
_OFD_WAIT = getattr(fcntl, "F_OFD_SETLKW", None)


class NotAppendableError(Exception):
    """This store cannot take an append commit; copy it instead (nothing was changed)."""


class CommittedInterrupt(KeyboardInterrupt):  # noqa: N818 (a KeyboardInterrupt, named like one)
    """Ctrl-C during an append commit, raised once the commit is complete."""


class JournaledError(StoreError):
    """An append commit failed after its journal was written: the store is the new one
    once the journal is replayed (by the next reader or writer), not the old one."""


def redo_path(path: str | os.PathLike) -> Path:
    """The redo journal of the store at ``path``: ``.NAME.redo`` in the same folder (of
    the file a symbolic link names)."""
    path = Path(os.path.realpath(path))
    return path.parent / f".{path.name}.redo"


def end_of_data(path: str | os.PathLike) -> int | None:
    """The end of the HDF5 data of the file at ``path`` (its superblock's end-of-file
    address), or None where the superblock is not a version-0 one at offset 0 with 8-byte
    addresses and base address 0."""
    with open(path, "rb") as fh:
        return _end_in(fh.read(48))


def _end_in(head: bytes) -> int | None:
    if len(head) < 48 or head[:8] != SIGNATURE or head[8] != 0 or head[13] != 8:
        return None
    base, _free, end = struct.unpack_from("<3Q", head, 24)
    return end if base == 0 else None


def _lock(fd: int, exclusive: bool, wait: bool = True) -> bool:
    """An OFD lock on the whole of ``fd``'s file (shared or exclusive); False where the
    system has none or, with ``wait`` False, where another holds a conflicting one."""
    if _OFD_SET is None:
        return False
    kind = fcntl.F_WRLCK if exclusive else fcntl.F_RDLCK
    try:
        fcntl.fcntl(fd, _OFD_WAIT if wait else _OFD_SET, struct.pack("hh4xqqi4x", kind, os.SEEK_SET, 0, 0, 0))
    except OSError as e:
        if e.errno in NO_LOCKS or (not wait and e.errno in (errno.EAGAIN, errno.EACCES)):
            return False
        raise
    return True


def _unlock(fd: int) -> None:
    if _OFD_SET is not None:
        try:
            fcntl.fcntl(fd, _OFD_SET, struct.pack("hh4xqqi4x", fcntl.F_UNLCK, os.SEEK_SET, 0, 0, 0))
        except OSError:
            pass


def can_append(path: str | os.PathLike) -> bool:
    """Whether the store at ``path`` can take an append commit (superblock, OFD locks)."""
    try:
        if end_of_data(path) is None:
            return False
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        if _lock(fd, exclusive=False, wait=False):
            _unlock(fd)
            return True
        return _OFD_SET is not None           # held by another: locks work
    except OSError:
        return False
    finally:
        os.close(fd)


class _ChangesHeld(io.RawIOBase):
    """The store as HDF5 sees it during an append: bytes from ``end`` on are written to
    the file as they come; changes to bytes before ``end`` are held (in order) and read
    back over the file's bytes."""

    def __init__(self, fd: int, end: int):
        self.fd, self.end, self.size, self.pos = fd, end, end, 0
        self.changes: list[tuple[int, bytes]] = []
        self.changed_bytes = 0
        self.asked_size = end          # the length HDF5 last truncated the file to (its end of data)
        self.too_many = False

    @property
    def final_size(self) -> int:
        """The store's length after the commit: what HDF5 asked for, and never less than
        the old end or the last byte written."""
        return max(self.end, self.size, self.asked_size)

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else self.size + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def readinto(self, b) -> int:
        view = memoryview(b).cast("B")
        n = max(0, min(len(view), self.size - self.pos))
        got = os.preadv(self.fd, [view[:n]], self.pos) if n else 0
        view[got:n] = bytes(n - got)
        lo, hi = self.pos, self.pos + n
        for off, data in self.changes:
            a, z = max(off, lo), min(off + len(data), hi)
            if a < z:
                view[a - lo:z - lo] = data[a - off:z - off]
        self.pos += n
        return n

    def write(self, b) -> int:
        view = memoryview(b).cast("B")
        n, start = len(view), self.pos
        if start < self.end:
            k = min(n, self.end - start)
            self.changed_bytes += k
            if self.changed_bytes > MAX_CHANGED_BYTES:
                self.too_many = True
                raise OSError(errno.EFBIG, "too many changes for an append commit")
            self.changes.append((start, bytes(view[:k])))
        if start + n > self.end:
            skip = max(0, self.end - start)
            _pwrite_all(self.fd, view[skip:], start + skip)
        self.pos = start + n
        self.size = max(self.size, self.pos)
        return n

    def truncate(self, size: int | None = None) -> int:
        self.asked_size = self.pos if size is None else size
        return self.asked_size

    def flush(self) -> None:
        pass


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename, an unlink) to disk, where the system can."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends: they are recorded (in the main
    thread, where Python runs signal handlers; elsewhere nothing changes) and acted on
    after it, SIGINT as :class:`CommittedInterrupt` when the block ended normally."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {s: signal.signal(s, lambda signum, frame: got.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    ok = False
    try:
        yield
        ok = True
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if signal.SIGTERM in got:
            os.kill(os.getpid(), signal.SIGTERM)          # its own handler (by default: the end) acts now
        if signal.SIGINT in got and ok:
            if old[signal.SIGINT] is signal.default_int_handler:
                raise CommittedInterrupt("interrupted after a commit that is complete")
            os.kill(os.getpid(), signal.SIGINT)


def _lock_writing(fd: int) -> bool:
    """The exclusive lock, waiting up to :data:`WAIT_SECONDS` for readers; False if they
    held it that long."""
    deadline = time.monotonic() + WAIT_SECONDS
    pause = 0.001
    while not _lock(fd, exclusive=True, wait=False):
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return True


def append(path: str | os.PathLike, write: Callable[[h5py.File], None]) -> None:
    """Run ``write`` on the store at ``path`` opened for writing, as one append commit
    (see the module docstring). Raises :class:`NotAppendableError` (the store unchanged)
    where the store cannot take one, :class:`JournaledError` where it failed after its
    journal was written. The caller holds the store's writer lock."""
    path = Path(path)
    recover(path)
    for p in redo_path(path).parent.glob(f"{redo_path(path).name}-tmp-*"):    # of writers killed writing one
        p.unlink(missing_ok=True)
    end = end_of_data(path)
    if end is None:
        raise NotAppendableError("not a version-0 superblock")
    fd = os.open(path, os.O_RDWR)
    try:
        st = os.fstat(fd)
        if st.st_size < end:
            raise NotAppendableError("shorter than its superblock says")
        if not can_append(path):
            raise NotAppendableError("no OFD locks here")
        if st.st_size > end:
            os.ftruncate(fd, end)          # data of an append that never reached its journal
        held = _ChangesHeld(fd, end)
        try:
            with h5py.File(held, "r+") as f:
                write(f)
            os.fsync(fd)
        except BaseException:
            os.ftruncate(fd, end)
            if held.too_many:
                raise NotAppendableError("too many changes") from None
            raise
        if not _lock_writing(fd):
            os.ftruncate(fd, end)
            raise NotAppendableError("readers held the store")
        try:
            with _signals_held():
                identity = {"dev": st.st_dev, "ino": st.st_ino, "end": end, "written": held.size}
                try:
                    _write_journal(path, held.changes, held.final_size, identity)
                except BaseException:
                    if not redo_path(path).exists():      # not the commit point yet
                        os.ftruncate(fd, end)
                        raise
                try:
                    _apply(fd, held.changes, held.final_size)
                    redo_path(path).unlink()
                    fsync_folder(path.parent)
                except OSError as e:
                    raise JournaledError(f"cannot finish the commit to {path} ({e.strerror or e}): its journal "
                                         f"{redo_path(path)} holds it, and the next read or build of the store "
                                         f"finishes it") from None
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def _write_journal(path: Path, changes: list[tuple[int, bytes]], final_size: int, identity: dict) -> None:
    """Write the redo journal of ``changes`` (temporary file, fsync, rename, folder fsync)."""
    header = json.dumps({"store_size": final_size, "store": identity,
                         "changes": [[off, len(d)] for off, d in changes]}).encode()
    h = hashlib.sha256()
    tmp = redo_path(path).with_name(f"{redo_path(path).name}-tmp-{os.getpid()}")
    try:
        with open(tmp, "wb") as fh:
            for part in (MAGIC, struct.pack("<Q", len(header)), header, *(d for _, d in changes)):
                fh.write(part)
                h.update(part)
            fh.write(h.digest())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, redo_path(path))
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


def _read_journal(journal: Path) -> tuple[list[tuple[int, bytes]], int, dict]:
    data = journal.read_bytes()
    body, digest = data[:-32], data[-32:]
    if not data.startswith(MAGIC) or hashlib.sha256(body).digest() != digest:
        raise CorruptStoreError(f"{journal}, the journal of an interrupted commit, is damaged, so the store next "
                                f"to it may be half-written: delete {journal}, then check the store with "
                                f"'irscale verify' (and rebuild what it reports)")
    pos = len(MAGIC)
    (n,) = struct.unpack_from("<Q", body, pos)
    header = json.loads(body[pos + 8:pos + 8 + n])
    pos += 8 + n
    changes = []
    for off, length in header["changes"]:
        changes.append((off, body[pos:pos + length]))
        pos += length
    return changes, header["store_size"], header["store"]


def _belongs(fd: int, changes: list[tuple[int, bytes]], identity: dict) -> bool:
    """Whether a journal was written for the open file ``fd``: the same device and inode,
    at least the bytes its commit wrote, and a superblock saying the old end of data or
    the journal's new one (a commit stopped before or after writing the superblock)."""
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (identity["dev"], identity["ino"]) or st.st_size < identity["written"]:
        return False
    head = bytearray(os.pread(fd, 48, 0))
    now = _end_in(bytes(head))
    for off, data in changes:
        a, z = max(off, 0), min(off + len(data), len(head))
        if a < z:
            head[a:z] = data[a - off:z - off]
    return now is not None and now in (identity["end"], _end_in(bytes(head)))


def _pwrite_all(fd: int, data, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (pwrite may write less)."""
    view, done = memoryview(data), 0
    while done < len(view):
        done += os.pwrite(fd, view[done:], offset + done)


def _apply(fd: int, changes: list[tuple[int, bytes]], final_size: int) -> None:
    for off, data in changes:
        _pwrite_all(fd, data, off)
    if os.fstat(fd).st_size != final_size:
        os.ftruncate(fd, final_size)
    os.fsync(fd)


def recover(path: str | os.PathLike) -> bool:
    """Finish the append commit of a writer that died after its journal was written:
    write the journal's changes into the store, delete it. A journal that belongs to
    another file (the store was replaced, moved or deleted since) is set aside with a
    warning. True if there was a journal."""
    path = Path(path)
    journal = redo_path(path)
    if not journal.exists():
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        _set_aside(journal, f"{path} does not exist")
        return True
    except OSError as e:
        raise StoreError(f"{path}: a commit was interrupted and its journal {journal} must be written into the "
                         f"store, which needs write access to it ({e.strerror}); run 'irscale verify {path}' "
                         f"as a user who may write it") from None
    try:
        locked = _lock(fd, exclusive=True)
        try:
            if journal.exists():               # not finished by another process meanwhile
                changes, final_size, identity = _read_journal(journal)
                if not _belongs(fd, changes, identity):
                    _set_aside(journal, f"it was written for another file than the present {path}")
                    return True
                with _signals_held():
                    _apply(fd, changes, final_size)
                    journal.unlink()
                    fsync_folder(path.parent)
        finally:
            if locked:
                _unlock(fd)
    finally:
        os.close(fd)
    return True


def _set_aside(journal: Path, why: str) -> None:
    aside = journal.with_name(f"{journal.name}-stale-{time.strftime('%Y%m%dT%H%M%S')}")
    try:
        journal.rename(aside)
    except FileNotFoundError:
        return
    warnings.warn(f"{journal}, the journal of an interrupted commit, was not replayed: {why}; it is kept as "
                  f"{aside}", IrscaleWarning, stacklevel=3)


@contextmanager
def open_for_reading(path: str | os.PathLike) -> Iterator[h5py.File]:
    """``h5py.File(path, "r")``, holding a shared lock on the store while it is open, so
    that an append commit does not change its metadata meanwhile; an interrupted append
    commit is finished first (:func:`recover`)."""
    path = Path(path)
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            break                              # h5py reports it
        try:
            locked = _lock(fd, exclusive=False)
            if redo_path(path).exists():
                if locked:
                    _unlock(fd)
                recover(path)
                continue                       # lock again, look again
            with h5py.File(path, "r") as f:
                try:
                    opened, locked = os.fstat(f.id.get_vfd_handle()), os.fstat(fd)
                    same = (opened.st_dev, opened.st_ino) == (locked.st_dev, locked.st_ino)
                except (OSError, TypeError, ValueError):
                    same = True
                if same:                       # not replaced (by a copying commit) since we locked it
                    yield f
                    return
        finally:
            os.close(fd)                       # releases the lock
    with h5py.File(path, "r") as f:
        yield f
