"""A store is a folder of immutable tables (the way zarr and TileDB keep arrays)::

    NAME/
        irscale-store.json        the manifest: format name and version, generator, created
        AP@10.h5                  one HDF5 file per table: the table's attributes on its
        nDCG(b=2,gains=(0,1,2))@10%20rb=(3,10).h5     root, its layout's datasets
        .lock-AP@10.h5            a build's lock on one table while it builds it (fcntl;
                                  empty; removed by the build when it is done)
        .build/                   checkpoints of unfinished big tables (resumable)

A table file is written into a private temporary folder of the store (``mkdtemp``: mode
0700, a fresh name), flushed to disk, renamed into place and the store folder flushed: a
commit is a rename, a replaced table is a new file (memory maps of the old one stay
valid), and a crash at any moment leaves the old table or the new one. Every error of a
commit's writes, flushes and closes fails it and leaves the store as it was (a rename
whose folder flush fails is undone). Readers take no lock and write nothing, so a store
on a read-only mount or of another user reads like any other. Nothing is ever written
through a path a reader of the folder could have planted: temporary files live in the
writer's own ``mkdtemp`` folder, renames replace what they land on, lock files are
opened without following symlinks (and removed by their holder, :class:`TableLocks`).

HDF5 parses a file's metadata in the reader's process, and not all of it carries a
checksum: :func:`screen` lets a child process parse table files first, with a time
limit, so that a damaged file that crashes or hangs HDF5 is reported as damaged.

Table file names are the table names (:func:`irscale.store.format.table_name`) with
characters other than letters, digits and ``@=(),.+-_`` percent-encoded, plus ``.h5``.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import fcntl
import json
import os
import select
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote, unquote

from irscale.enumerate.processes import process_alive
from irscale.errors import CorruptStoreError, StoreBusyError, StoreError
from irscale.version import __version__

#: The manifest file of a store folder.
MANIFEST = "irscale-store.json"
#: Format of the folder (its manifest's ``format`` and ``format_version``).
STORE_FORMAT = "irscale-store"
STORE_VERSION = 1
#: Largest manifest read (bytes): a manifest is a few hundred bytes.
MAX_MANIFEST_BYTES = 64 << 10
#: Suffix of table files.
SUFFIX = ".h5"
_SAFE = "@=(),.+-_"
#: Seconds between two attempts to take a busy table lock.
POLL_SECONDS = 0.25


def file_of(name: str) -> str:
    """The file name of the table called ``name``."""
    return quote(name, safe=_SAFE) + SUFFIX


def name_of(file: str) -> str | None:
    """The table name of a table file name (None for other files)."""
    if file.startswith(".") or not file.endswith(SUFFIX):
        return None
    return unquote(file[: -len(SUFFIX)])


def is_store_folder(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a folder (the folder store; not a single table file)."""
    return Path(path).is_dir()


def fsync_folder(folder: Path) -> None:
    """Flush a folder's entries (a rename into it) to disk; file systems that cannot
    flush a folder are skipped, and any other failure fails the commit."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.EROFS, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def create(path: str | os.PathLike) -> None:
    """Make an empty store folder at ``path`` (its parent must exist), its manifest
    written like a table (temporary folder, rename); a store already there is kept."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise StoreError(f"{path} is a single-file store (a packed store, or one of an older irscale): it is read "
                         f"as it is, but tables are added to store folders; convert it first with: irscale unpack "
                         f"{shlex.quote(str(path))} {shlex.quote(str(path.with_suffix('')))}")
    if not path.parent.is_dir():
        raise StoreError(f"cannot write {path}: folder {path.parent} does not exist")
    try:
        path.mkdir()
        made = True
    except FileExistsError:
        made = False
    except OSError as e:
        raise StoreError(f"cannot write {path}: cannot create the store folder ({e.strerror or e})") from None
    names = [e.name for e in os.scandir(path)]
    if MANIFEST in names:      # (one scan: a build that just committed the manifest is seen with it)
        return
    if any(not n.startswith((".lock-", ".tmp-")) for n in names):   # another build's are fine
        raise StoreError(f"{path} is a folder of other files, not an irscale store; give a new or an empty folder")
    text = json.dumps({"format": STORE_FORMAT, "format_version": STORE_VERSION, "generator": "irscale",
                       "generator_version": __version__, "created": _now()}, indent=1).encode()

    def write(tmp: Path) -> None:
        with open(tmp, "xb") as f:            # in the writer's own temporary folder
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    try:
        publish(path, MANIFEST, write)
        if made:
            fsync_folder(path.parent)
    except OSError as e:     # the folder made here goes again: a failed first commit leaves nothing
        if made:
            remove_if_unused(path)
        raise StoreError(f"cannot write {path}: {e.strerror or e}") from None


@contextlib.contextmanager
def writing(path: Path, names: list[str], wait: float | None = None) -> Iterator[None]:
    """Hold the locks of the tables ``names`` of the store folder ``path`` (made if
    missing; :class:`TableLocks`) while a build writes them; a store made here and left
    without a table is removed again (a refused or interrupted first build leaves nothing)."""
    existed = path.exists()
    create(path)
    try:
        with TableLocks(path, names, wait):
            yield
    finally:
        if not existed:
            remove_if_unused(path)


def read_manifest(path: str | os.PathLike) -> dict:
    """The manifest of the store folder at ``path``, checked: a folder without one is not
    a store (:class:`~irscale.errors.StoreError`), a damaged one is
    :class:`~irscale.errors.CorruptStoreError`."""
    path = Path(path)
    file = path / MANIFEST
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise StoreError(f"{path} is a folder but not an irscale store (no {MANIFEST})") from None
    except OSError as e:
        raise StoreError(f"{file}: cannot read it ({e.strerror or e})") from None
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
    (a FIFO, device or folder named like a table is not read; symlinks are followed to a
    regular file)."""
    path = Path(path)
    out = {}
    try:
        entries = list(os.scandir(path))
    except OSError as e:
        raise StoreError(f"{path}: cannot list its tables ({e.strerror or e})") from None
    for entry in entries:
        name = name_of(entry.name)
        if name is None:
            continue
        try:
            if entry.is_file():           # follows a symlink; a FIFO or device is not a file
                out[name] = Path(entry.path)
        except OSError:
            continue
    return dict(sorted(out.items()))


def publish(path: Path, file: str, write: Callable[[Path], None]) -> None:
    """Write the file ``file`` of the store folder ``path`` atomically: ``write`` writes it
    (and flushes it to disk) at a path in a fresh private folder of the store, which is
    then renamed over ``path / file`` and the store folder flushed. A failure or an
    interrupt leaves the store as it was (and no temporary file): when the flush of the
    folder fails after the rename, the rename is undone (the file replaced, kept aside by
    a hard link, is put back; a new file is removed)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{os.getpid()}-", dir=path))
    try:
        target = tmp / file
        write(target)
        old = tmp / f".old-{file}"
        try:
            os.link(path / file, old, follow_symlinks=False)
            had: bool | None = True
        except FileNotFoundError:
            had = False
        except OSError:
            had = None                        # no hard links here: a replaced file cannot be put back
        os.replace(target, path / file)
        try:
            fsync_folder(path)
        except OSError:
            _undo(path, file, old, had)
            raise
    finally:
        _remove_tree(tmp)


def _undo(path: Path, file: str, old: Path, had: bool | None) -> None:
    """Undo the rename of a commit whose folder flush failed (best effort: the error of
    the flush is what the caller reports)."""
    with contextlib.suppress(OSError):
        if had:
            os.replace(old, path / file)
        elif had is False:
            os.unlink(path / file)
        fsync_folder(path)


def _remove_tree(tmp: Path) -> None:
    """Remove a temporary folder; errors (even of closing its file descriptors) ignored."""
    with contextlib.suppress(OSError):
        shutil.rmtree(tmp, ignore_errors=True)


def remove_if_unused(path: Path) -> None:
    """Remove the store folder ``path`` that a build created and left without a table (its
    manifest and lock files only): a refused or interrupted first build leaves nothing. A
    lock file another build holds (or waits for) keeps the folder: the store is in use."""
    try:
        entries = list(os.scandir(path))
        if any(not (e.name == MANIFEST or e.name.startswith(".lock-")) for e in entries):
            return
        for e in entries:
            if e.name.startswith(".lock-") and not _remove_lock_file(Path(e.path)):
                return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path / MANIFEST)
        path.rmdir()
    except OSError:
        pass


def _remove_lock_file(file: Path) -> bool:
    """Remove the lock file ``file`` if no build holds it (taken, then removed as its holder
    removes it); whether it is gone."""
    try:
        fd = os.open(file, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            os.close(fd)
            return False                  # held (EAGAIN, EACCES): a build is at it
    _release(file, fd)
    return True


def remove_stale(path: Path) -> None:
    """Remove the temporary folders of writers that died (their pid is gone)."""
    for entry in path.glob(".tmp-*"):
        try:
            pid = int(entry.name.split("-")[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not process_alive(pid):
            shutil.rmtree(entry, ignore_errors=True)


def _same_file(fd: int, file: Path) -> bool:
    """Whether the path ``file`` (not followed if a symlink) names the file open as ``fd``."""
    try:
        named = os.stat(file, follow_symlinks=False)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


def _release(file: Path, fd: int) -> None:
    """Give up the lock file ``file`` open (and locked) as ``fd``: removed while the lock is
    held, if the path still names it, then closed (which releases the lock). A build
    waiting for it finds, once it has the lock, that the path names another file or none,
    and opens the path again (:meth:`TableLocks._take`)."""
    try:
        if _same_file(fd, file):
            os.unlink(file)
    except OSError:
        pass                              # left in the folder: harmless, the next build takes it
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)


class TableLocks:
    """Locks on tables of a store folder, one lock file each (``.lock-FILE``), held while
    a build writes them: two builds of different tables go on at once, a build of a table
    another one is building waits for it (``wait`` seconds at most; None: as long as it
    takes; it says once on stderr that it waits). fcntl locks, released by the kernel when
    their holder dies; the lock files are opened without following symlinks and never
    written.

    A lock file lasts as long as its lock: its holder removes it before it lets it go, and
    a build that gets the lock of a file no longer at the lock file's path (removed by the
    holder it waited for) lets it go and opens the path again; so the path names, at every
    moment, the file whose lock is the table's. A build killed while it holds a lock leaves
    its lock file, which the next build takes (the kernel released its lock) and removes."""

    def __init__(self, path: Path, names: list[str], wait: float | None = None):
        if wait is not None and not wait >= 0:
            raise StoreError(f"the wait for a busy store must be a number of seconds >= 0 or None, got {wait!r}")
        self.path, self.names, self.wait = path, sorted(set(names)), wait
        self._held: list[tuple[Path, int]] = []

    def __enter__(self) -> TableLocks:
        deadline = None if self.wait is None else time.monotonic() + self.wait
        told: set[str] = set()
        try:
            for name in self.names:          # in name order: two builds never wait for each other
                self._held.append(self._take(name, deadline, told))
        except KeyboardInterrupt:
            self.__exit__()
            raise KeyboardInterrupt(f"interrupted while waiting for another build to finish writing {self.path}: "
                                    f"this build wrote nothing") from None
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        while self._held:                 # a lock file is never written: removing it loses nothing
            _release(*self._held.pop())

    def _take(self, name: str, deadline: float | None, told: set[str]) -> tuple[Path, int]:
        """The lock file of table ``name`` and its descriptor, locked (or on a file system
        without locks, open)."""
        file = self.path / f".lock-{file_of(name)}"
        while True:
            try:
                fd = os.open(file, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            except OSError as e:
                raise StoreError(f"cannot write {self.path}: cannot open the lock file {file.name} "
                                 f"({e.strerror or e})") from None
            try:
                locked = self._lock(fd, file, name, deadline, told)
                if not locked or _same_file(fd, file):
                    return file, fd           # no locks on this file system: renames keep the store whole anyway
            except BaseException:
                os.close(fd)                  # not held: the file is not ours to remove
                raise
            os.close(fd)                      # its holder removed it before letting it go: open the path again

    def _lock(self, fd: int, file: Path, name: str, deadline: float | None, told: set[str]) -> bool:
        """Lock ``fd``, waiting for another build that holds it (said once on stderr); False
        on a file system without locks."""
        while True:
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError as e:
                if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
                    return False
                if e.errno not in (errno.EACCES, errno.EAGAIN):
                    raise StoreError(f"cannot lock {file}: {e.strerror or e}") from None
            if deadline is not None and time.monotonic() >= deadline:
                waited = "without waiting" if not self.wait else f"after waiting {self.wait:g} s"
                raise StoreBusyError(f"table {name} of {self.path} is being built by another build; gave up {waited}: "
                                     f"run the build again when it has finished, or let it wait longer (irscale build "
                                     f"--wait SECONDS; by default a build waits as long as it takes)")
            if name not in told:
                print(f"irscale: waiting for another build to finish table {name} of {self.path}", file=sys.stderr,
                      flush=True)
                told.add(name)
            time.sleep(POLL_SECONDS if deadline is None else max(0.0, min(POLL_SECONDS, deadline - time.monotonic())))



# -- parsing in a child ---------------------------------------------------------------
#: Seconds the child of :func:`screen` may take to parse the HDF5 metadata of one file
#: before the file counts as damaged (a hang); parsing takes milliseconds.
SCREEN_SECONDS = 5.0
#: Seconds the child may take to start (import h5py).
SCREEN_START_SECONDS = 60.0
#: The child: reads file names on stdin, parses each one's HDF5 metadata (every attribute,
#: every dataset's type, shape and place, three levels deep) and says "ok" (or the error,
#: which the reader meets again and reports), after "ready" once h5py is imported.
_SCREEN = r"""
import sys
import h5py
def walk(o, depth):
    for k in o.attrs:
        o.attrs[k]
    if isinstance(o, h5py.Dataset):
        o.dtype, o.shape, o.chunks, o.compression, o.id.get_offset(), o.id.get_storage_size()
    elif depth < 3:
        for k in o:
            walk(o[k], depth + 1)
print("ready", flush=True)
for line in sys.stdin:
    try:
        with h5py.File(line.rstrip("\n"), "r") as f:
            walk(f, 0)
        print("ok", flush=True)
    except Exception as e:
        print("error", type(e).__name__, flush=True)
"""
_screened: dict[tuple, str | None] = {}


def _key(file: Path) -> tuple | None:
    try:
        st = file.stat()
    except OSError:
        return None
    return str(file), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def screen(files: list[Path], timeout: float | None = None) -> dict[Path, str]:
    """Parse the HDF5 metadata of ``files`` in a child process, a time limit for each, as
    a reader is about to parse them: the files whose parsing crashed the child (a signal)
    or hung (``timeout`` seconds, default :data:`SCREEN_SECONDS`), with what happened.

    HDF5 verifies the checksums of the metadata of files of the latest format before it
    parses them, but not all of it: the text of string attributes lies in a global heap,
    which has no checksum, and files of older formats (packed stores of older irscale
    versions) have none at all; damage there can crash HDF5 or make it loop forever. So a
    reader lets a child parse a file first, once per file and process (the verdict is kept
    while the file's size, times and inode stay the same); a child that dies or hangs is
    replaced for the files after it. Errors that do not crash the child are not reported
    here: the reader meets them again and reports them."""
    limit = SCREEN_SECONDS if timeout is None else timeout
    out: dict[Path, str] = {}
    todo = []
    for file in files:
        key = _key(Path(file))
        if key is None:
            continue
        if key in _screened:
            if _screened[key] is not None:
                out[Path(file)] = _screened[key]
            continue
        todo.append((Path(file), key))
    while todo:
        problem, done = _screen_some(todo, limit)
        for _, key in todo[:done]:
            _screened[key] = None
        if problem is None:
            break
        file, key = todo[done]
        _screened[key] = out[file] = problem
        todo = todo[done + 1:]
    if len(_screened) > 100_000:
        _screened.clear()
    return out


def _screen_some(todo: list[tuple[Path, tuple]], limit: float) -> tuple[str | None, int]:
    """Let one child parse the files of ``todo`` in order: (None, all of them) when it
    parsed them all, else (what happened to the file it stopped at, how many it parsed
    before)."""
    child = subprocess.Popen([sys.executable, "-I", "-c", _SCREEN], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, bufsize=1)
    done = 0
    try:
        if not _answer(child, SCREEN_START_SECONDS):
            return None, len(todo)           # no child (no h5py for -I?): nothing can be screened
        for file, _ in todo:
            child.stdin.write(str(file) + "\n")
            child.stdin.flush()
            said = _answer(child, limit)
            if said is None:
                child.kill()
                return f"parsing its HDF5 metadata did not end within {limit:g} s", done
            if said == "":
                rc = child.wait()
                how = f"killed by signal {-rc}" if rc < 0 else f"exit status {rc}"
                return f"parsing its HDF5 metadata crashed the process ({how})", done
            done += 1
        return None, done
    except (OSError, ValueError):          # a broken pipe: the child died
        rc = child.wait()
        return f"parsing its HDF5 metadata crashed the process (status {rc})", done
    finally:
        with contextlib.suppress(OSError):
            child.kill()
        child.wait()
        for stream in (child.stdin, child.stdout):
            with contextlib.suppress(OSError):
                stream.close()


def _answer(child: subprocess.Popen, limit: float) -> str | None:
    """The child's next line ("" at its end), or None after ``limit`` seconds."""
    ready, _, _ = select.select([child.stdout], [], [], limit)
    if not ready:
        return None
    return child.stdout.readline()
