"""Writing tables into a store file, atomically.

A commit that adds tables to an existing store adds them in place
(:mod:`irscale.store.journal`): their data goes past the store's end, the few kilobytes
of metadata that change go through a redo journal, and the tables already there are not
copied. Every other commit (a new store, a table replaced, a file the journal cannot
take) writes a complete new file next to the store (a copy of the old one plus the new
tables), flushes it to disk and renames it over the store; where the file system has
reflinks (XFS, btrfs) that copy is a copy-on-write clone. Either way a crash or kill at
any moment leaves the old store or the new one, never a half-written table.
"""
from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import h5py
import numpy as np
from tqdm.auto import tqdm

from irscale.enumerate.processes import process_alive
from irscale.errors import StoreError
from irscale.scales.tables.layouts import LAYOUTS
from irscale.scales.tables.scale import Table
from irscale.store import journal
from irscale.store.format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    decode_attrs,
    digest_entry,
    little_endian_bytes,
    new_checksum,
    table_checksum,
    table_name,
    table_path,
)
from irscale.store.lock import StoreLock
from irscale.store.reader import check_file
from irscale.version import __version__


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def write_root_attrs(f: h5py.File) -> None:
    """The file's identity: format name and version, generator, creation time."""
    f.attrs["format"] = FORMAT_NAME
    f.attrs["format_version"] = FORMAT_VERSION
    f.attrs["generator"] = "irscale"
    f.attrs["generator_version"] = __version__
    f.attrs["created"] = _now()


def _jsonable(v):
    return str(v) if isinstance(v, Fraction) else v


class _GroupSink:
    """Where a layout writes a table (see :mod:`irscale.scales.tables.layouts`): datasets
    into an HDF5 group (contiguous, so that readers can memory-map them), the digest of
    every dataset as it is written (:mod:`irscale.store.format`), attributes collected
    for the end."""

    def __init__(self, group, bar=None):
        self.group, self.bar = group, bar
        self.digests: dict = {}
        self.collected: dict = {}

    def dataset(self, name: str, dtype, shape: tuple, pieces) -> None:
        ds = self.group.create_dataset(name, shape=shape, dtype=dtype)
        h = new_checksum()
        pos = 0
        hashed = None
        # a thread digests each piece (hashlib releases the GIL) while this one makes and
        # writes the next: in order, one piece at a time
        with ThreadPoolExecutor(1, thread_name_prefix="irscale-digest") as digest:
            for piece in pieces:
                arr = np.ascontiguousarray(piece, dtype=dtype)
                ds[pos:pos + arr.shape[0]] = arr
                if hashed is not None:
                    hashed.result()
                hashed = digest.submit(h.update, little_endian_bytes(arr))
                pos += arr.shape[0]
                if self.bar is not None:
                    self.bar.update(arr.nbytes)
            if hashed is not None:
                hashed.result()
        if pos != shape[0]:
            raise RuntimeError(f"dataset {name}: {pos} rows written, {shape[0]} declared")
        self.digests[name] = digest_entry(ds.dtype, ds.shape, h.hexdigest())

    def array(self, name: str, data: np.ndarray) -> None:
        ds = self.group.create_dataset(name, data=data)
        h = new_checksum()
        h.update(little_endian_bytes(np.asarray(data, dtype=ds.dtype)))
        self.digests[name] = digest_entry(ds.dtype, ds.shape, h.hexdigest())

    def attrs(self, **attrs) -> None:
        self.collected.update(attrs)


def write_table(f: h5py.File, table: Table, build_seconds: float | None = None, bar: tqdm | None = None) -> None:
    """Write one :class:`~irscale.scales.tables.scale.Table` through its layout (replacing a
    table of the same name); ``complete`` is set last."""
    m = table.measure
    path = table_path(str(m), table.table_rb)
    if path in f:
        del f[path]
    g = f.create_group(path)
    sink = _GroupSink(g, bar)
    LAYOUTS[table.layout].write(table, sink)
    cert = table.certificate
    attrs = {
        "measure": str(m), "family": m.name,
        "params": json.dumps({k: _jsonable(v) for k, v in m.param_values().items()}),
        "rel": json.dumps(list(range(m.levels))), "n": m.n, "rb_dependent": bool(m.rb_dependent),
        "layout": table.layout, "n_entries": int(table.n_entries), "n_runs": int(table.n_runs),
        "tie_method": cert.method, "error_bound": float(cert.error_bound), "min_gap": float(cert.min_gap),
        "min_gap_exact": cert.min_gap_exact, "redecided": int(cert.redecided),
        "generator_version": __version__, "created": _now(),
        "build_seconds": float(build_seconds) if build_seconds is not None else -1.0,
        "rb_counts": json.dumps(None if table.table_rb is None else list(table.table_rb)),
    }
    attrs.update(sink.collected)
    attrs["format_version"] = FORMAT_VERSION
    attrs["digests"] = json.dumps(dict(sorted(sink.digests.items())), separators=(",", ":"))
    for k, v in attrs.items():
        g.attrs[k] = v
    g.attrs["checksum"] = table_checksum(decode_attrs(g.attrs))   # of the attributes as readers decode them
    g.attrs["complete"] = True  # last: marks the table as usable


#: ioctl FICLONE (linux/fs.h): make a file share another's data blocks, copy-on-write.
FICLONE = 0x40049409


def _clone(fi, fo) -> bool:
    """Make ``fo`` a copy-on-write clone of ``fi`` (file systems with reflinks: XFS,
    btrfs, bcachefs, ...): no data is copied, and writing the clone leaves the original
    as it was. False where the file system cannot (ext4, tmpfs, across file systems)."""
    try:
        fcntl.ioctl(fo.fileno(), FICLONE, fi.fileno())
    except OSError:
        return False
    return True


def _copy_with_progress(src: Path, dst: Path, bar) -> None:
    """Copy a file, advancing ``bar``: a copy-on-write clone where the file system can make
    one (nothing copied), else os.sendfile in 256 MiB steps."""
    size = src.stat().st_size
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        if _clone(fi, fo):
            if bar is not None:
                bar.update(size)
            return
        off = 0
        while off < size:
            sent = os.sendfile(fo.fileno(), fi.fileno(), off, min(1 << 28, size - off))
            if sent == 0:
                break
            off += sent
            if bar is not None:
                bar.update(sent)


#: Bytes a commit's new file takes beyond the tables' arrays: block indexes (about 5 %),
#: HDF5 metadata (about 12 KiB per table), and room to spare.
COMMIT_OVERHEAD = (0.10, 64 << 10, 1 << 20)


def commit_size(path: Path, tables: list, copy: bool = True) -> int:
    """Upper estimate of the bytes a commit of ``tables`` writes: the new tables, plus a
    copy of the old store where it copies it (``copy``: it does not append,
    :func:`appendable`). With ``copy``, also the store's size after the commit."""
    ratio, per_table, fixed = COMMIT_OVERHEAD
    old = path.stat().st_size if path.exists() and copy else 0
    new = sum(t.stored_bytes() for t in tables)
    return old + int(new * (1 + ratio)) + per_table * len(tables) + fixed


def appendable(path: Path, tables: Iterable[tuple]) -> bool:
    """Whether a commit of ``tables`` ((measure, table_rb) pairs) adds them to the store
    at ``path`` in place (:func:`irscale.store.journal.append`): the store exists, can
    take an append (:func:`~irscale.store.journal.can_append`), and none of ``tables``
    replaces one of its tables."""
    try:
        if not path.is_file() or not journal.can_append(path):
            return False
        with journal.open_for_reading(path) as f:
            return not any(table_path(str(m), trb) in f for m, trb in tables)
    except (OSError, StoreError, RuntimeError, ValueError, KeyError):
        return False


def _reserve(path: Path, size: int) -> None:
    """Allocate ``size`` bytes of disk for ``path`` before HDF5 writes into it: a disk that
    cannot hold the new store fails here, cleanly (ENOSPC, or EFBIG under a file-size
    limit), instead of in the middle of the HDF5 library, which does not survive a failed
    write well. HDF5 trims the file to what it uses when it closes it. File systems without
    fallocate skip the reservation."""
    fd = os.open(path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as e:
        if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            raise
    finally:
        os.close(fd)


def commit(path: str | os.PathLike, tables: list, build_seconds: dict | None = None,
           progress: bool = False) -> None:
    """Add ``tables`` to the store at ``path`` (created if missing), atomically."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(f"cannot write {path}: folder {folder} does not exist")
    _remove_stale_temporaries(path)
    journal.recover(path)              # an interrupted append commit (or a stale journal: set aside)
    tmp = folder / f".{path.name}.tmp-{os.getpid()}"
    old = path.stat().st_size if path.exists() else 0
    new = sum(t.stored_bytes() for t in tables)
    bar = tqdm(total=old + new, unit="B", unit_scale=True, desc=f"write {path.name}", leave=False,
               disable=not progress or old + new < (64 << 20))
    try:
        if path.exists():
            check_file(path)
            if _append(path, tables, build_seconds, bar):
                return
        need = commit_size(path, tables)
        if path.exists():
            _copy_with_progress(path, tmp, bar)
        else:
            with h5py.File(tmp, "w") as f:
                write_root_attrs(f)
        _reserve(tmp, need)
        with h5py.File(tmp, "a") as f:
            _write_tables(f, tables, build_seconds, bar)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        journal.fsync_folder(folder)
    except OSError as e:
        _remove(tmp)
        reason = e.strerror or str(e)
        raise StoreError(f"cannot write {path}: {reason}; the existing store (if any) is unchanged") from None
    except BaseException:
        _remove(tmp)
        raise
    finally:
        bar.close()


def _append(path: Path, tables: list, build_seconds: dict | None, bar) -> bool:
    """Add ``tables`` to the store in place (:func:`irscale.store.journal.append`), holding
    the store's writer lock (re-entrant: a build holds it already); False where it cannot
    take them so (nothing changed: the caller copies the store)."""
    def write(f: h5py.File) -> None:
        if any(table_path(str(t.measure), t.table_rb) in f for t in tables):
            raise journal.NotAppendableError("a table is replaced")
        _write_tables(f, tables, build_seconds, bar)
    try:
        with StoreLock(path):
            journal.append(path, write)
    except journal.NotAppendableError:
        if bar is not None:
            bar.reset()
        return False
    return True


def _write_tables(f: h5py.File, tables: list, build_seconds: dict | None, bar) -> None:
    f.attrs["format_version"] = FORMAT_VERSION   # a version-3 file gains version-4 tables
    for t in tables:
        write_table(f, t, (build_seconds or {}).get(table_name(str(t.measure), t.table_rb)), bar)


def _remove(p: Path) -> None:
    try:
        p.unlink()
    except OSError:
        pass


def _remove_stale_temporaries(path: Path) -> None:
    """Delete temporary files left next to ``path`` by writers that died (their pid is
    gone); a live writer's temporary file is left alone."""
    for p in path.parent.glob(f".{path.name}.tmp-*"):
        try:
            pid = int(p.name.rsplit("-", 1)[1])
        except ValueError:
            continue
        if pid == os.getpid():
            _remove(p)
            continue
        if not process_alive(pid):
            _remove(p)
