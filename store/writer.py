"""Writing tables: :func:`write_table` writes a table into an HDF5 group (a table file's root, or a group of a
packed file), :func:`commit` commits table files to a store folder (:func:`irscale.store.folder.publish`).
Every file is of the latest HDF5 format (:data:`LIBVER`), text attributes fixed-length: all metadata carry
checksums."""
from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path

import h5py
import numpy as np
from tqdm.auto import tqdm

from irscale.errors import StoreError
from irscale.scales.tables.layouts import LAYOUTS
from irscale.scales.tables.scale import Table
from irscale.store import folder
from irscale.store import format as fmt
from irscale.store.format import table_name
from irscale.version import __version__

#: HDF5 file format of every file written: the latest (checksummed metadata).
LIBVER = "latest"


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def write_root_attrs(f: h5py.File) -> None:
    """A packed file's identity: format name and version, generator, creation time."""
    for key, value in {"format": fmt.FORMAT_NAME, "format_version": fmt.FORMAT_VERSION, "generator": "irscale",
                       "generator_version": __version__, "created": _now()}.items():
        f.attrs[key] = stored(value)


class _GroupSink:
    """Where a layout writes a table (:mod:`irscale.scales.tables.layouts`): datasets into an HDF5 group
    (contiguous, so that readers can memory-map them) with the digest of each, attributes collected."""

    def __init__(self, group: h5py.Group, bar: tqdm | None):
        self.group, self.bar = group, bar
        self.digests: dict = {}
        self.collected: dict = {}

    def dataset(self, name: str, dtype: object, shape: tuple, pieces: Iterator) -> None:
        ds = self.group.create_dataset(name, shape=shape, dtype=dtype)
        h, pos = fmt.new_checksum(), 0
        # a thread digests each piece (hashlib releases the GIL) while this one writes the next, in order
        with ThreadPoolExecutor(1, thread_name_prefix="irscale-digest") as digest:
            hashed = digest.submit(h.update, b"")
            for piece in pieces:
                arr = np.ascontiguousarray(piece, dtype=dtype)
                ds[pos:pos + arr.shape[0]] = arr
                hashed.result()
                hashed = digest.submit(h.update, fmt.little_endian_bytes(arr))
                pos += arr.shape[0]
                if self.bar is not None:
                    self.bar.update(arr.nbytes)
            hashed.result()
        if pos != shape[0]:
            raise RuntimeError(f"dataset {name}: {pos} rows written, {shape[0]} declared")
        self.digests[name] = fmt.digest_entry(ds.dtype, ds.shape, h.hexdigest())

    def array(self, name: str, data: np.ndarray) -> None:
        ds = self.group.create_dataset(name, data=data)
        h = fmt.new_checksum()
        h.update(fmt.little_endian_bytes(np.asarray(data, dtype=ds.dtype)))
        self.digests[name] = fmt.digest_entry(ds.dtype, ds.shape, h.hexdigest())

    def attrs(self, **attrs: object) -> None:
        self.collected.update(attrs)


def write_table(g: h5py.Group, table: Table, build_seconds: float | None = None, bar: tqdm | None = None) -> None:
    """Write ``table`` through its layout into the empty group ``g``; ``complete`` is set last."""
    m, cert, sink = table.measure, table.certificate, _GroupSink(g, bar)
    LAYOUTS[table.layout].write(table, sink)
    attrs = {
        "measure": str(m), "family": m.name,
        "params": json.dumps({k: str(v) if isinstance(v, Fraction) else v for k, v in m.param_values().items()}),
        "rel": json.dumps(list(range(m.levels))), "n": m.n, "rb_dependent": bool(m.rb_dependent),
        "layout": table.layout, "n_entries": int(table.n_entries), "n_runs": fmt.int_attr(table.n_runs),
        "tie_method": cert.method, "error_bound": float(cert.error_bound), "min_gap": float(cert.min_gap),
        "min_gap_exact": cert.min_gap_exact, "redecided": int(cert.redecided),
        "generator_version": __version__, "created": _now(),
        "build_seconds": float(build_seconds) if build_seconds is not None else -1.0,
        "rb_counts": json.dumps(None if table.table_rb is None else list(table.table_rb)),
        **sink.collected, "format_version": fmt.FORMAT_VERSION,
        "digests": json.dumps(dict(sorted(sink.digests.items())), separators=(",", ":")),
    }
    for k, v in attrs.items():
        g.attrs[k] = stored(v)
    g.attrs["checksum"] = stored(fmt.table_checksum(fmt.decode_attrs(g.attrs)))   # as readers decode them
    g.attrs["complete"] = True  # last: marks the table as usable


def stored(value: object) -> object:
    """An attribute as written: text fixed-length, in the checksummed object header (not the global heap)."""
    return np.bytes_(value.encode()) if isinstance(value, str) else value


def table_bytes(table: Table) -> int:
    """Upper estimate of the bytes of ``table``'s file (arrays, block index, metadata)."""
    return int(table.stored_bytes() * 1.1) + (1 << 20)


def finish_hdf5(f: h5py.File, close: bool = True) -> None:
    """Flush (``close``: close) ``f``; a failure is an OSError of the errno HDF5 names ("... errno = 28, ...")."""
    name = Path(f.filename).name         # unknown once closed
    try:
        f.close() if close else f.flush()
    except (RuntimeError, OSError) as e:
        found = re.search(r"errno = (\d+)", str(e))
        code = int(found.group(1)) if found else getattr(e, "errno", None) or errno.EIO
        raise OSError(code, f"{'closing' if close else 'flushing'} {name} failed ({e})") from e


@contextlib.contextmanager
def hdf5_written(tmp: Path, mode: str = "w") -> Iterator[h5py.File]:
    """The HDF5 file ``tmp`` open for writing in the latest format; when the block ends,
    flushed, closed and synced to disk, every error failing it; when it fails, closed."""
    f = h5py.File(tmp, mode, libver=LIBVER)
    try:
        yield f
        finish_hdf5(f, close=False)
    except BaseException:
        with contextlib.suppress(Exception):
            f.close()
        raise
    finish_hdf5(f)
    fd = os.open(tmp, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def commit(path: str | os.PathLike, tables: list, build_seconds: dict | None = None,
           progress: bool = False) -> None:
    """Add ``tables`` to the store folder at ``path`` (made if missing), replacing those of the same names; the
    caller holds their locks (:func:`irscale.store.folder.writing`)."""
    path = Path(path)
    folder.create(path)
    new = sum(t.stored_bytes() for t in tables)
    bar = tqdm(total=new, unit="B", unit_scale=True, desc=f"write {path.name}", leave=False,
               disable=not progress or new < (64 << 20))

    def write(tmp: Path, table: Table, seconds: float | None) -> None:
        finish_hdf5(h5py.File(tmp, "w", libver=LIBVER))
        fd = os.open(tmp, os.O_RDWR | os.O_NOFOLLOW)
        try:     # the disk space reserved: no room fails here, cleanly, not in the middle of HDF5
            os.posix_fallocate(fd, 0, table_bytes(table))
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
        finally:
            os.close(fd)
        with hdf5_written(tmp, "a") as f:            # HDF5 trims the file when it closes
            write_table(f, table, seconds, bar)
    try:
        for t in tables:
            name = table_name(str(t.measure), t.table_rb)
            seconds = (build_seconds or {}).get(name)
            folder.publish(path, folder.file_of(name), lambda tmp, t=t, s=seconds: write(tmp, t, s))
    except OSError as e:     # the cause stays the context: irscale.store.fill tells a full disk by it
        raise StoreError(f"cannot write {path}: {e.strerror or e}; the tables already in the store are "
                         f"unchanged") from None
    finally:
        bar.close()
