"""A store is a folder of immutable tables (the way zarr and TileDB keep arrays)::

    NAME/
        irscale-store.json        the manifest: format name and version, generator, created
        AP@10.h5                  one HDF5 file per table (its name percent-encoded but
        nDCG(b=2,gains=(0,1,2))@10%20rb=(3,10).h5     letters, digits and @=(),.+-_)
        .locks/KEY                the lock of one file (KEY: a hash of its name; flock)
        .tmp-KEY-XXXX/            the temporary folder of the holder of lock KEY

A commit is a rename (:func:`publish`): written in a temporary folder, flushed, renamed into place, the folder
flushed; a failed step fails it, a crash leaves the old file or the new one, both whole. Readers take no lock.
Writers hold the lock of each file they write (:func:`TableLocks`): builds of different tables go on at once,
builds of one table take turns; a temporary folder whose lock nobody holds was left by a writer that died,
wherever it ran (another container, another host of an NFS mount): :func:`remove_stale`.
"""
from __future__ import annotations

import collections
import contextlib
import datetime as _dt
import errno
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, unquote

from irscale.errors import CorruptStoreError, StoreBusyError, StoreError
from irscale.version import __version__

MANIFEST = "irscale-store.json"
STORE_FORMAT = "irscale-store"
STORE_VERSION = 1
MAX_MANIFEST_BYTES = 64 << 10
SUFFIX = ".h5"
LOCKS = ".locks"
_TMP = re.compile(r"\.tmp-([0-9a-f]{20})-")
POLL_SECONDS = 0.25
_NO_LOCKS = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS)
_OPEN = os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC
#: The locks this process holds: (device, inode of the lock folder, key) -> count.
_held: collections.Counter = collections.Counter()


def file_of(name: str) -> str:
    """The file name of the table called ``name``."""
    return quote(name, safe="@=(),.+-_") + SUFFIX


def name_of(file: str) -> str | None:
    """The table name of a table file name (None for other files)."""
    if file.startswith(".") or not file.endswith(SUFFIX):
        return None
    return unquote(file[: -len(SUFFIX)])


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk, where the file system can."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EROFS, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _key(file: str) -> str:
    """The key of the lock and the temporary folders of a file (a name of any length)."""
    return hashlib.sha256(file.encode()).hexdigest()[:20]


def create(path: str | os.PathLike) -> None:
    """Make an empty store folder at ``path`` (in an existing folder; a store already there is kept)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path} is a single-file store (a packed store): it is read as it is, but tables are "
                         f"added to store folders; convert it first with: irscale unpack "
                         f"{shlex.quote(str(path))} {shlex.quote(str(path.with_suffix('')))}")
    if not path.parent.is_dir():
        raise StoreError(f"cannot write {path}: folder {path.parent} does not exist")
    try:
        path.mkdir(exist_ok=True)
        names = [e.name for e in os.scandir(path)]
    except OSError as e:
        raise StoreError(f"cannot write {path}: cannot create the store folder ({e.strerror or e})") from None
    if MANIFEST in names:
        return
    if any(n != LOCKS and not n.startswith(".tmp-") for n in names):       # another first build's are fine
        raise StoreError(f"{path} is a folder of other files, not an irscale store; give a new or an empty folder")
    text = json.dumps({"format": STORE_FORMAT, "format_version": STORE_VERSION, "generator": "irscale",
                       "generator_version": __version__,
                       "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}, indent=1)

    def write(tmp: Path) -> None:
        with open(tmp, "xb") as f:
            f.write(text.encode())
            f.flush()
            os.fsync(f.fileno())
    try:
        with TableLocks(path, [MANIFEST], quiet=True):
            if not (path / MANIFEST).exists():
                publish(path, MANIFEST, write)
    except OSError as e:
        raise StoreError(f"cannot write {path}: {e.strerror or e}") from None


@contextlib.contextmanager
def writing(path: Path, names: list[str], wait: float | None = None) -> Iterator[None]:
    """Hold the locks of the tables ``names`` of the store folder ``path`` (made if missing; removed again if
    left without a table: a refused or interrupted first build leaves nothing)."""
    existed = path.exists()
    try:
        create(path)
        with TableLocks(path, names, wait) as keys:
            remove_stale(path, keys)
            yield
    finally:
        if not existed:
            remove_if_unused(path)


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the store folder at ``path``, checked (damaged: CorruptStoreError)."""
    path = Path(path)
    file = path / MANIFEST
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise StoreError(f"{path} is a folder but not an irscale store (no {MANIFEST})" if e.errno == errno.ENOENT
                         else f"{file}: cannot read it ({e.strerror or e})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise CorruptStoreError(f"{file} is not a regular file; the store is damaged")
        data = os.read(fd, MAX_MANIFEST_BYTES + 1)
    except OSError as e:
        raise CorruptStoreError(f"{file}: cannot read it ({e.strerror or e}); the store is damaged") from None
    finally:
        os.close(fd)
    try:
        manifest = json.loads(data) if len(data) <= MAX_MANIFEST_BYTES else None
    except (ValueError, RecursionError):      # RecursionError: nested deeper than the parser goes
        manifest = None
    if not isinstance(manifest, dict) or manifest.get("format") != STORE_FORMAT:
        raise CorruptStoreError(f"{file} is damaged (not the manifest of an irscale store)")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CorruptStoreError(f"{file} is damaged (format_version {version!r})")
    if version > STORE_VERSION:
        raise StoreError(f"{path} uses store format version {version}, newer than this irscale knows "
                         f"({STORE_VERSION}); upgrade irscale")
    return manifest


def table_files(path: str | os.PathLike) -> dict[str, Path]:
    """The table files of the store folder at ``path`` by table name: regular files only
    (a FIFO, device or folder named like a table is not read; symlinks are followed)."""
    try:
        entries = list(os.scandir(path))
    except OSError as e:
        raise StoreError(f"{path}: cannot list its tables ({e.strerror or e})") from None
    out = {}
    for entry in entries:
        with contextlib.suppress(OSError):
            if (name := name_of(entry.name)) is not None and entry.is_file():
                out[name] = Path(entry.path)
    return dict(sorted(out.items()))


def publish(path: Path, file: str, write: Callable[[Path], None]) -> None:
    """Commit the file ``file`` of the store folder ``path`` (the caller holds its lock), which ``write`` writes
    and flushes in a fresh temporary folder of the store."""
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{_key(file)}-", dir=path))
    try:
        write(tmp / file)
        os.replace(tmp / file, path / file)
        fsync_folder(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _free(locks: contextlib.ExitStack, file: str) -> bool:
    """Whether nobody holds the lock file ``file`` (or there is none); if so it is held until ``locks`` closes."""
    try:
        locks.callback(os.close, fd := os.open(file, _OPEN))
    except OSError as e:
        return e.errno == errno.ENOENT
    with contextlib.suppress(OSError):
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    return False


def remove_stale(path: Path, mine: frozenset[str] = frozenset()) -> None:
    """Remove the temporary folders whose lock nobody holds (or the caller, whose keys are ``mine``)."""
    try:
        entries = [e.name for e in os.scandir(path)]
        folder = os.stat(path / LOCKS)
    except OSError:
        return
    for key in sorted({m.group(1) for n in entries if (m := _TMP.match(n))}):
        with contextlib.ExitStack() as locks:
            if key not in mine and (_held[(folder.st_dev, folder.st_ino, key)]       # this process writes it
                                    or not _free(locks, str(path / LOCKS / key))):
                continue
            for n in entries:
                if n.startswith(f".tmp-{key}-"):
                    shutil.rmtree(path / n, ignore_errors=True)


def remove_if_unused(path: Path) -> None:
    """Remove the store folder ``path`` a build made and left without a table, unless another build holds a lock."""
    locks = path / LOCKS
    with contextlib.ExitStack() as held, contextlib.suppress(OSError):
        if any(name not in (MANIFEST, LOCKS) for name in os.listdir(path)):
            return
        if not all(_free(held, str(locks / name)) for name in (os.listdir(locks) if locks.is_dir() else ())):
            return
        shutil.rmtree(locks, ignore_errors=True)
        (path / MANIFEST).unlink(missing_ok=True)
        path.rmdir()


def _lock(fd: int, name: str, path: Path, wait: float | None, deadline: float | None, quiet: bool) -> None:
    """Lock ``fd``, waiting for another build that holds it (said once on stderr unless ``quiet``)."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as e:
            if e.errno in _NO_LOCKS:
                return
            if e.errno not in (errno.EACCES, errno.EAGAIN):
                raise StoreError(f"cannot lock table {name} of {path}: {e.strerror or e}") from None
        if deadline is not None and time.monotonic() >= deadline:
            waited = "without waiting" if not wait else f"after waiting {wait:g} s"
            raise StoreBusyError(f"table {name} of {path} is being built by another build; gave up {waited}: "
                                 f"run the build again when it has finished, or let it wait longer (irscale build "
                                 f"--wait SECONDS; by default a build waits as long as it takes)")
        if not quiet:
            print(f"irscale: waiting for another build to finish table {name} of {path}", file=sys.stderr, flush=True)
            quiet = True
        time.sleep(POLL_SECONDS if deadline is None else max(0.0, min(POLL_SECONDS, deadline - time.monotonic())))


@contextlib.contextmanager
def table_locks(path: Path, names: list[str], wait: float | None = None,
                quiet: bool = False) -> Iterator[frozenset[str]]:
    """Hold the locks of the tables ``names`` of a store folder (``.locks/KEY``, flock: the
    kernel lets them go when their holder dies) while a build writes them; yields their
    keys. A table another build holds is waited for (``wait`` seconds at most; None: as
    long as it takes; said once on stderr unless ``quiet``); a file system without locks
    goes without (a commit is a rename: the store stays whole anyway)."""
    if wait is not None and not wait >= 0:
        raise StoreError(f"the wait for a busy store must be a number of seconds >= 0 or None, got {wait!r}")
    path, deadline = Path(path), None if wait is None else time.monotonic() + wait
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(path / LOCKS)
        folder = os.open(path / LOCKS, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        raise StoreError(f"cannot write {path}: cannot open its lock folder {LOCKS} ({e.strerror or e})") from None
    keys = []
    with contextlib.ExitStack() as held:
        try:
            st = os.fstat(folder)
            for name in sorted(set(names)):          # in name order: two builds never wait for each other
                key = _key(name if name == MANIFEST else file_of(name))
                try:
                    fd = os.open(key, _OPEN | os.O_CREAT, 0o644, dir_fd=folder)
                except OSError as e:
                    raise StoreError(f"cannot write {path}: cannot open the lock file of {name} "
                                     f"({e.strerror or e})") from None
                held.callback(os.close, fd)           # releases the lock
                _lock(fd, name, path, wait, deadline, quiet)
                _held[(st.st_dev, st.st_ino, key)] += 1
                held.callback(_held.subtract, [(st.st_dev, st.st_ino, key)])
                keys.append(key)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted while waiting for another build to finish writing {path}: "
                                    f"this build wrote nothing") from None
        finally:
            os.close(folder)
        yield frozenset(keys)


TableLocks = table_locks
