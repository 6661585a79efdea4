"""Writing tables into a store file, atomically.

Every commit writes a complete new file next to the store (a copy of the old one plus
the new tables), flushes it to disk and renames it over the store. A crash or kill at
any moment leaves either the old store or the new one, never a half-written table.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path

import h5py
import numpy as np

from irscale.errors import StoreError
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION, table_name, table_path


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


def _chunks_of(table, name):
    """The table's dataset ``name`` as consecutive arrays (bucket parts, each mapped from
    disk only while in use, or the one in-memory array). Strata of parts are packed with
    their new-value flags here."""
    if table.parts is not None:
        from irscale.scales.tables.scale import pack_strata
        for p in table.parts:
            yield pack_strata(p.strata, p.first) if name == "strata" else getattr(p, name)
        return
    arr = getattr(table, name)
    if arr is not None:
        yield arr


def _pairs(table):
    """(ids, packed strata or None) per part."""
    if table.parts is not None:
        from irscale.scales.tables.scale import pack_strata
        for p in table.parts:
            st = p.strata
            yield p.ids, (pack_strata(st, p.first) if st.size else None)
    else:
        yield table.ids, table.strata


def write_table(f: h5py.File, table, build_seconds: float | None = None, bar=None) -> None:
    """Write one :class:`~irscale.scales.Table` (replacing a table of the same measure)."""
    from irscale.enumerate.runspace import count_dtype, id_dtype
    from irscale.store.format import new_checksum

    m = table.measure
    path = table_path(str(m), table.rb_counts)
    if path in f:
        del f[path]
    g = f.create_group(path)
    if getattr(table, "layout", None) in ("fraction", "formal"):
        _write_held_table(g, table, build_seconds)
        return
    E = table.n_entries
    h = new_checksum()
    plan = []
    if not table.implicit:
        cmax = max((int(c.max()) for c in _chunks_of(table, "counts") if c.size), default=1)
        plan = [("ids", id_dtype(m.levels, m.n)), ("counts", count_dtype(cmax))]
        if m.stratified:
            plan.append(("strata", np.uint8))
    for name, dt in plan:
        ds = g.create_dataset(name, shape=(E,), dtype=dt)  # contiguous: memory-mappable
        pos = 0
        for chunk in _chunks_of(table, name):
            arr = np.ascontiguousarray(chunk, dtype=dt)
            ds[pos:pos + arr.size] = arr
            h.update(arr.astype(np.dtype(dt).newbyteorder("<"), copy=False).tobytes())
            pos += arr.size
            if bar is not None:
                bar.update(arr.nbytes)
        assert pos == E, (name, pos, E)
    # block index for lazy lookups (see irscale.scales.tables.lookup_kernels)
    if not table.implicit:
        from irscale.scales.tables.scale import streaming_index
        block_raw, block_cum = streaming_index(m, _pairs(table))
        from irscale.scales.tables.lookup_kernels import BLOCK, RAW_BLOCK
        g.create_dataset("index_raw", data=block_raw)
        g.create_dataset("index_cum", data=block_cum)
        g.attrs["index_blocks"] = json.dumps([RAW_BLOCK, BLOCK])
    # distinct values per recall base
    if m.stratified and not table.implicit:
        hist = np.zeros(m.n + 1, np.int64)
        for _, st in _pairs(table):
            st = np.asarray(st)
            sel = st[st >= 0x80] & 0x7F
            hist += np.bincount(sel, minlength=m.n + 1)[: m.n + 1]
        by_rb = np.cumsum(hist)[1:].tolist()
        n_distinct = int(hist.sum())
    else:
        n_distinct, by_rb = E, []
    attrs = _common_attrs(m, table, build_seconds)
    attrs.update(implicit=bool(table.implicit), n_distinct=n_distinct, distinct_by_rb=json.dumps(by_rb),
                 checksum=h.hexdigest())
    for k, v in attrs.items():
        g.attrs[k] = v
    g.attrs["complete"] = True  # last: marks the table as usable


def _common_attrs(m, table, build_seconds) -> dict:
    cert = table.certificate
    return {
        "measure": str(m), "family": m.name,
        "params": json.dumps({k: _jsonable(v) for k, v in m.param_values().items()}),
        "rel": json.dumps(list(range(m.levels))), "n": m.n, "rb_dependent": bool(m.rb_dependent),
        "n_entries": int(table.n_entries), "n_runs": int(table.n_runs),
        "tie_method": cert.method, "error_bound": float(cert.error_bound), "min_gap": float(cert.min_gap),
        "min_gap_exact": cert.min_gap_exact, "redecided": int(cert.redecided),
        "generator_version": _version(), "created": _now(),
        "build_seconds": float(build_seconds) if build_seconds is not None else -1.0,
        "rb_counts": json.dumps(None if table.rb_counts is None else list(table.rb_counts)),
    }


def _write_held_table(g, table, build_seconds) -> None:
    """A table of exact fractions (:mod:`irscale.scales.tables.fraction`: datasets num,
    den, counts; attr layout = "fraction") or of formal keys
    (:mod:`irscale.scales.tables.formal`: datasets keys (K, C), counts; attrs layout =
    "formal", coords), in value order."""
    from irscale.enumerate.runspace import count_dtype
    from irscale.store.format import FORMAL_DATASETS, FRACTION_DATASETS, new_checksum
    h = new_checksum()
    cmax = int(table.counts.max()) if table.n_entries else 1
    names = FRACTION_DATASETS if table.layout == "fraction" else FORMAL_DATASETS
    types = (np.int64, np.int64, count_dtype(cmax)) if table.layout == "fraction" else (np.int64, count_dtype(cmax))
    for name, dt in zip(names, types):
        arr = np.ascontiguousarray(getattr(table, name), dtype=dt)
        g.create_dataset(name, data=arr)
        h.update(arr.astype(np.dtype(dt).newbyteorder("<"), copy=False).tobytes())
    attrs = _common_attrs(table.measure, table, build_seconds)
    attrs.update(layout=table.layout, implicit=False, n_distinct=int(table.n_entries), distinct_by_rb="[]",
                 checksum=h.hexdigest(), run_space=table.measure.run_space)
    if table.layout == "formal":
        attrs["coords"] = json.dumps(list(table.coords))
    for k, v in attrs.items():
        g.attrs[k] = v
    g.attrs["complete"] = True


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
    from tqdm.auto import tqdm

    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise StoreError(f"cannot write {path}: folder {folder} does not exist")
    _remove_stale_temporaries(path)
    tmp = folder / f".{path.name}.tmp-{os.getpid()}"
    old = path.stat().st_size if path.exists() else 0
    new = sum(4 * t.n_entries for t in tables if not t.implicit)
    bar = tqdm(total=old + new, unit="B", unit_scale=True, desc=f"write {path.name}", leave=False,
               disable=not progress or old + new < (64 << 20))
    try:
        if path.exists():
            from irscale.store.reader import check_file
            check_file(path)
            _copy_with_progress(path, tmp, bar)
            mode = "a"
        else:
            mode = "w"
        with h5py.File(tmp, mode) as f:
            if mode == "w":
                write_root_attrs(f)
            for t in tables:
                write_table(f, t, (build_seconds or {}).get(table_name(str(t.measure), t.rb_counts)), bar)
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
