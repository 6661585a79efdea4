"""Writing tables into a store file, atomically.

Every commit writes a complete new file next to the store (a copy of the old one plus
the new tables), flushes it to disk and renames it over the store. A crash or kill at
any moment leaves either the old store or the new one, never a half-written table.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from fractions import Fraction
from pathlib import Path

import h5py
import numpy as np
from tqdm.auto import tqdm

from irscale.errors import StoreError
from irscale.scales.tables.layouts import LAYOUTS
from irscale.scales.tables.scale import Table
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION, new_checksum, table_name, table_path
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
    into an HDF5 group (contiguous, so that readers can memory-map them), the checksum
    over the checksummed ones as they are written, attributes collected for the end."""

    def __init__(self, group, bar=None):
        self.group, self.bar = group, bar
        self.hash = new_checksum()
        self.collected: dict = {}

    def dataset(self, name: str, dtype, shape: tuple, pieces) -> None:
        ds = self.group.create_dataset(name, shape=shape, dtype=dtype)
        pos = 0
        for piece in pieces:
            arr = np.ascontiguousarray(piece, dtype=dtype)
            ds[pos:pos + arr.shape[0]] = arr
            self.hash.update(arr.astype(np.dtype(dtype).newbyteorder("<"), copy=False).tobytes())
            pos += arr.shape[0]
            if self.bar is not None:
                self.bar.update(arr.nbytes)
        if pos != shape[0]:
            raise RuntimeError(f"dataset {name}: {pos} rows written, {shape[0]} declared")

    def array(self, name: str, data: np.ndarray) -> None:
        self.group.create_dataset(name, data=data)

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
    attrs["checksum"] = sink.hash.hexdigest()
    for k, v in attrs.items():
        g.attrs[k] = v
    g.attrs["complete"] = True  # last: marks the table as usable


def _copy_with_progress(src: Path, dst: Path, bar) -> None:
    """Copy a file with os.sendfile in 256 MiB steps, advancing ``bar``."""
    size = src.stat().st_size
    with open(src, "rb") as fi, open(dst, "wb") as fo:
        off = 0
        while off < size:
            sent = os.sendfile(fo.fileno(), fi.fileno(), off, min(1 << 28, size - off))
            if sent == 0:
                break
            off += sent
            if bar is not None:
                bar.update(sent)


def commit(path: str | os.PathLike, tables: list, build_seconds: dict | None = None,
           progress: bool = False) -> None:
    """Add ``tables`` to the store at ``path`` (created if missing), atomically."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(f"cannot write {path}: folder {folder} does not exist")
    _remove_stale_temporaries(path)
    tmp = folder / f".{path.name}.tmp-{os.getpid()}"
    old = path.stat().st_size if path.exists() else 0
    new = sum(t.stored_bytes() for t in tables)
    bar = tqdm(total=old + new, unit="B", unit_scale=True, desc=f"write {path.name}", leave=False,
               disable=not progress or old + new < (64 << 20))
    try:
        if path.exists():
            check_file(path)
            _copy_with_progress(path, tmp, bar)
            mode = "a"
        else:
            mode = "w"
        with h5py.File(tmp, mode) as f:
            if mode == "w":
                write_root_attrs(f)
            for t in tables:
                write_table(f, t, (build_seconds or {}).get(table_name(str(t.measure), t.table_rb)), bar)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        try:
            dfd = os.open(folder, os.O_RDONLY)
            os.fsync(dfd)
            os.close(dfd)
        except OSError:
            pass
    except OSError as e:
        _remove(tmp)
        reason = e.strerror or str(e)
        raise StoreError(f"cannot write {path}: {reason}; the existing store (if any) is unchanged") from None
    except BaseException:
        _remove(tmp)
        raise
    finally:
        bar.close()


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
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            _remove(p)
        except OSError:
            pass
