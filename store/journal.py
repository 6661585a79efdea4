"""Commits that add tables to a store in place, without copying the tables already there.

Adding a table to an HDF5 file writes its data past the file's end and changes a few
kilobytes of metadata inside it (the superblock, the table group's links). An append
commit opens the store through a file object (h5py's ``fileobj`` driver) that writes
what lies past the old end straight to the file and keeps every change inside it in
memory, then:

1. flushes the new data to disk (the store's metadata is still the old one, so readers
   and a crash see the old store: bytes past its end are ignored);
2. under an exclusive ``flock`` on the store file (readers of this package take a
   shared one while they read HDF5 metadata: :func:`reading`), writes the changes to a
   redo journal ``.STORE.redo`` (temporary file, flush, rename: the commit point) and
   then into the store, flushes the store and deletes the journal.

A crash before the journal's rename leaves the old store (and data past its end, cut
off by the next commit); a crash after it leaves a journal that the next reader or
writer replays (:func:`recover`) before reading, so that the store is the new one.
Readers' memory maps of existing tables stay valid: their bytes are never written.

Append commits need a version-0 superblock at the start of the file (the format h5py
writes), a file system with ``flock``, and no table being replaced; other commits copy
the store (:mod:`irscale.store.writer`). The journal holds the changes in the order
HDF5 wrote them, a JSON header and a sha256 of everything before it.
"""
from __future__ import annotations

import errno
import fcntl
import hashlib
import io
import json
import os
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import h5py

from irscale.errors import CorruptStoreError, StoreError

#: Bytes of metadata changes an append commit may hold in memory; beyond, it gives up
#: (and the caller copies the store): a commit changes kilobytes.
MAX_CHANGED_BYTES = 64 << 20
#: The HDF5 format signature, at the start of a file without a user block.
SIGNATURE = b"\x89HDF\r\n\x1a\n"
MAGIC = b"irscale-redo-1\n"
#: flock errors of file systems without it (some network and FUSE ones).
NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}


class NotAppendableError(Exception):
    """This store cannot take an append commit; copy it instead (nothing was changed)."""


def redo_path(path: str | os.PathLike) -> Path:
    """The redo journal of the store at ``path``: ``.NAME.redo`` in the same folder."""
    path = Path(path)
    return path.parent / f".{path.name}.redo"


def end_of_data(path: str | os.PathLike) -> int | None:
    """The end of the HDF5 data of the file at ``path`` (its superblock's end-of-file
    address), or None where the superblock is not a version-0 one at offset 0 with 8-byte
    addresses and base address 0."""
    with open(path, "rb") as fh:
        head = fh.read(48)
    if len(head) < 48 or head[:8] != SIGNATURE or head[8] != 0 or head[13] != 8:
        return None
    base, _free, end = struct.unpack_from("<3Q", head, 24)
    return end if base == 0 else None


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
        done = max(0, self.end - start)
        while done < n:
            done += os.pwrite(self.fd, view[done:], start + done)
        self.pos = start + n
        self.size = max(self.size, self.pos)
        return n

    def truncate(self, size: int | None = None) -> int:
        self.asked_size = self.pos if size is None else size
        return self.asked_size

    def flush(self) -> None:
        pass


def _fsync_folder(folder: Path) -> None:
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


def _lock(fd: int, how: int) -> bool:
    """flock ``fd``; False where the file system has no flock."""
    try:
        fcntl.flock(fd, how)
    except OSError as e:
        if e.errno in NO_LOCKS:
            return False
        raise
    return True


def append(path: str | os.PathLike, write: Callable[[h5py.File], None]) -> None:
    """Run ``write`` on the store at ``path`` opened for writing, as one append commit
    (see the module docstring). Raises :class:`NotAppendableError` (the store unchanged) where
    the store cannot take one. The caller holds the store's writer lock."""
    path = Path(path)
    recover(path)
    end = end_of_data(path)
    if end is None:
        raise NotAppendableError("not a version-0 superblock")
    fd = os.open(path, os.O_RDWR)
    try:
        if os.fstat(fd).st_size < end:
            raise NotAppendableError("shorter than its superblock says")
        if not _lock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB):
            raise NotAppendableError("no flock on this file system")
        fcntl.flock(fd, fcntl.LOCK_UN)
        if os.fstat(fd).st_size > end:
            os.ftruncate(fd, end)          # data of an append that never reached its journal
        held = _ChangesHeld(fd, end)
        try:
            with h5py.File(held, "r+") as f:
                write(f)
            os.fsync(fd)
        except BaseException as e:
            os.ftruncate(fd, end)
            if held.too_many:
                raise NotAppendableError("too many changes") from None
            if isinstance(e, RuntimeError) and isinstance(e.__context__, OSError):
                raise e.__context__ from None      # h5py wraps the file object's OSError (a full disk)
            raise
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            try:
                _write_journal(path, held.changes, held.final_size)
            except BaseException:
                os.ftruncate(fd, end)
                raise
            try:
                _apply(fd, held.changes, held.final_size)
                redo_path(path).unlink()
                _fsync_folder(path.parent)
            except OSError as e:
                raise StoreError(f"cannot finish the commit to {path} ({e.strerror or e}): its journal "
                                 f"{redo_path(path)} holds it, and the next read or build of the store finishes "
                                 f"it") from None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _write_journal(path: Path, changes: list[tuple[int, bytes]], final_size: int) -> None:
    """Write the redo journal of ``changes`` (temporary file, fsync, rename, folder fsync)."""
    header = json.dumps({"store_size": final_size, "changes": [[off, len(d)] for off, d in changes]}).encode()
    h = hashlib.sha256()
    tmp = redo_path(path).with_suffix(f".redo-tmp-{os.getpid()}")
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
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    _fsync_folder(path.parent)


def _read_journal(journal: Path) -> tuple[list[tuple[int, bytes]], int]:
    data = journal.read_bytes()
    body, digest = data[:-32], data[-32:]
    if not data.startswith(MAGIC) or hashlib.sha256(body).digest() != digest:
        raise CorruptStoreError(f"{journal}: the journal of an interrupted commit is damaged; the store next to "
                                f"it may be half-written: rebuild it (irscale build --rebuild)")
    pos = len(MAGIC)
    (n,) = struct.unpack_from("<Q", body, pos)
    header = json.loads(body[pos + 8:pos + 8 + n])
    pos += 8 + n
    changes = []
    for off, length in header["changes"]:
        changes.append((off, body[pos:pos + length]))
        pos += length
    return changes, header["store_size"]


def _apply(fd: int, changes: list[tuple[int, bytes]], final_size: int) -> None:
    for off, data in changes:
        done = 0
        while done < len(data):
            done += os.pwrite(fd, data[done:], off + done)
    if os.fstat(fd).st_size != final_size:
        os.ftruncate(fd, final_size)
    os.fsync(fd)


def recover(path: str | os.PathLike) -> bool:
    """Finish the append commit of a writer that died after its journal was written:
    write the journal's changes into the store, delete it. True if there was one."""
    path = Path(path)
    journal = redo_path(path)
    if not journal.exists():
        return False
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as e:
        raise StoreError(f"{path}: a commit was interrupted and its journal {journal} must be written into the "
                         f"store, which needs write access to it ({e.strerror}); run 'irscale verify {path}' "
                         f"as a user who may write it") from None
    try:
        locked = _lock(fd, fcntl.LOCK_EX)
        try:
            if journal.exists():               # not finished by another process meanwhile
                changes, final_size = _read_journal(journal)
                _apply(fd, changes, final_size)
                journal.unlink()
                _fsync_folder(path.parent)
        finally:
            if locked:
                fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    return True


@contextmanager
def reading(path: str | os.PathLike) -> Iterator[None]:
    """Hold a shared ``flock`` on the store at ``path`` while reading its HDF5 metadata,
    so that an append commit does not change it meanwhile; first finish an interrupted
    append commit (:func:`recover`)."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        yield                  # the caller's open reports it
        return
    try:
        locked = _lock(fd, fcntl.LOCK_SH)
        if redo_path(path).exists():
            if locked:
                fcntl.flock(fd, fcntl.LOCK_UN)
            recover(path)
            locked = _lock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)           # releases the lock
