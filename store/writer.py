"""Writing tables into a store file, atomically.

Every commit writes a complete new file next to the store (a copy of the old one plus
the new tables), flushes it to disk and renames it over the store. A crash or kill at
any moment leaves either the old store or the new one, never a half-written table.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from pathlib import Path

import h5py
import numpy as np

from irscale.errors import StoreError
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION, checksum, table_path


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _version() -> str:
    import irscale
    return irscale.__version__


def write_root_attrs(f: h5py.File) -> None:
    """The file's identity: format name and version, generator, creation time."""
    f.attrs["format"] = FORMAT_NAME
    f.attrs["format_version"] = FORMAT_VERSION
    f.attrs["generator"] = "irscale"
    f.attrs["generator_version"] = _version()
    f.attrs["created"] = _now()


def _jsonable(v):
    from fractions import Fraction
    if isinstance(v, Fraction):
        return str(v)
    return v


def write_table(f: h5py.File, table) -> None:
    """Write one :class:`~irscale.scales.Table` (replacing a table of the same key)."""
    m = table.measure
    spec = m.key_spec()
    values = np.ascontiguousarray(spec.float_values(table.keys, m, table.table_rb), dtype=np.float64)
    keys = np.ascontiguousarray(table.keys, dtype=np.uint64)
    counts = np.ascontiguousarray(table.counts, dtype=np.int64)
    path = table_path(str(m), table.table_rb)
    if path in f:
        del f[path]
    g = f.create_group(path)
    opts = dict(chunks=True, compression="gzip", compression_opts=4, shuffle=True) if len(keys) > 4096 else {}
    g.create_dataset("keys", data=keys, **opts)
    g.create_dataset("values", data=values, **opts)
    g.create_dataset("counts", data=counts, **opts)
    cert = table.certificate
    attrs = {
        "measure": str(m), "family": m.name,
        "params": json.dumps({k: _jsonable(v) for k, v in m.param_values().items()}),
        "rel": json.dumps(list(range(m.levels))), "n": m.n,
        "rb": 0 if table.table_rb is None else table.table_rb,
        "n_runs": int(table.n_runs), "n_distinct": int(len(keys)),
        "tie_method": cert.method, "error_bound": float(cert.error_bound), "min_gap": float(cert.min_gap),
        "min_gap_exact": cert.min_gap_exact, "redecided": int(cert.redecided),
        "generator_version": _version(), "created": _now(),
        "checksum": checksum(keys, values, counts),
    }
    for k, v in attrs.items():
        g.attrs[k] = v
    g.attrs["complete"] = True  # last: marks the table as usable


def commit(path: str | os.PathLike, tables: list) -> None:
    """Add ``tables`` to the store at ``path`` (created if missing), atomically."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(f"cannot write {path}: folder {folder} does not exist")
    _remove_stale_temporaries(path)
    tmp = folder / f".{path.name}.tmp-{os.getpid()}"
    try:
        if path.exists():
            from irscale.store.reader import check_file
            check_file(path)
            shutil.copyfile(path, tmp)
            mode = "a"
        else:
            mode = "w"
        with h5py.File(tmp, mode) as f:
            if mode == "w":
                write_root_attrs(f)
            for t in tables:
                write_table(f, t)
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
