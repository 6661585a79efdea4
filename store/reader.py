"""Reading a store: file checks, table listing, tables read by their layouts (lazily:
memory-mapped where the layout maps its datasets) and their scales."""
from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

import h5py
import numpy as np

from irscale.errors import StoreError, TableNotFoundError
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.layouts import stored_layout
from irscale.scales.tables.scale import Scale, Table
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION, new_checksum, table_name, table_path


def check_file(path: str | os.PathLike) -> None:
    """Raise :class:`~irscale.errors.StoreError` unless ``path`` is a readable irscale
    store of a format version this package knows."""
    path = Path(path)
    if not path.exists():
        raise StoreError(f"{path}: no such file")
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a table file")
    if not os.access(path, os.R_OK):
        raise StoreError(f"{path}: permission denied")
    if not h5py.is_hdf5(path):
        raise StoreError(f"{path} is not an HDF5 file (expected a table file written by 'irscale build')")
    try:
        with h5py.File(path, "r") as f:
            fmt = f.attrs.get("format")
            ver = f.attrs.get("format_version")
    except OSError as e:
        raise StoreError(f"{path}: cannot read HDF5 file ({e})") from None
    if isinstance(fmt, bytes):
        fmt = fmt.decode()
    if fmt != FORMAT_NAME:
        raise StoreError(f"{path} is an HDF5 file but not an irscale table file")
    if ver is None or int(ver) > FORMAT_VERSION:
        raise StoreError(f"{path} uses table format version {ver}, newer than this irscale knows "
                         f"({FORMAT_VERSION}); upgrade irscale")
    if int(ver) < FORMAT_VERSION:
        raise StoreError(f"{path} uses the old table format version {ver}; rebuild it with 'irscale build'")


def _attrs(g) -> dict:
    out = {}
    for k, v in g.attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


def _mapped(path: Path, ds, random_access: bool = True) -> np.ndarray:
    """A dataset as a read-only memory map (contiguous datasets), else read.

    Lookups touch a few entries at scattered places, so the kernel is told not to read
    ahead around them (MADV_RANDOM): without it, each lookup brings in ~128 KiB per array
    and a batch of a few thousand lookups at N = 30 makes gigabytes resident."""
    offset = ds.id.get_offset()
    if offset is None or ds.chunks is not None or ds.compression is not None or ds.size == 0:
        return ds[()]
    arr = np.memmap(path, dtype=ds.dtype, mode="r", offset=offset, shape=ds.shape)
    mm = getattr(arr, "_mmap", None)
    if random_access and mm is not None and hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
        mm.madvise(mmap.MADV_RANDOM)
    return arr


class Store:
    """A table file opened for reading. Tables are memory-mapped on first use: opening a
    store and answering a lookup reads only the parts of a table the lookup touches.

    >>> store = open_store("tables.h5")                # doctest: +SKIP
    >>> store.scale("AP@10", rb=5).rank([0.5])        # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        check_file(self.path)
        with h5py.File(self.path, "r") as f:
            self.attrs = _attrs(f)
        self._cache: dict = {}

    def __repr__(self) -> str:
        return f"<Store {self.path}: {len(self.tables())} tables>"

    def tables(self) -> list[dict]:
        """Metadata of every complete table, sorted by measure name."""
        out = []
        with h5py.File(self.path, "r") as f:
            if "tables" not in f:
                return out
            for _name, g in f["tables"].items():
                a = _attrs(g)
                if a.get("complete"):
                    a["path"] = g.name
                    counts = json.loads(a.get("rb_counts", "null"))
                    a["rb_counts"] = None if counts is None else tuple(counts)
                    a["name"] = table_name(a["measure"], a["rb_counts"])
                    out.append(a)
        return sorted(out, key=lambda a: (a["measure"], a["rb_counts"] or ()))

    def has(self, measure: str | Measure, table_rb: tuple | None = None) -> bool:
        """Whether the file has the complete table of ``measure`` (for measures with a
        table per recall-base vector: the table of ``table_rb``, default the common one)."""
        m = parse_measure(measure)
        path = table_path(str(m), self._table_rb(m, table_rb))
        with h5py.File(self.path, "r") as f:
            return path in f and bool(f[path].attrs.get("complete", False))

    @staticmethod
    def _table_rb(m, table_rb):
        """The table recall base meant by ``table_rb`` (None: the common one)."""
        return m.table_rbs([None if table_rb is None else tuple(table_rb)])[0]

    def _missing(self, m, table_rb):
        if table_rb is None:
            return TableNotFoundError(f"{self.path} has no table {m}; create it with: "
                                      f"irscale build --measures \"{m}\" --out {self.path}")
        vec = "(" + ",".join(map(str, table_rb)) + ")"
        return TableNotFoundError(
            f"{self.path} has no table {m} for the per-grade counts {vec}; create it with: irscale build "
            f"--measures \"{m}\" --rb \"{vec}\" --out {self.path} (or --qrels FILE for every topic of a qrels file)")

    def table(self, measure: str | Measure, verify: bool = False, table_rb: tuple | None = None) -> Table:
        """The :class:`~irscale.scales.tables.scale.Table` of ``measure`` (memory-mapped
        arrays where its layout maps them). ``verify`` recomputes the checksum (reads the
        whole table). Measures with a table per recall-base vector: the table of
        ``table_rb`` (default: the common one, (N, ..., N))."""
        m = parse_measure(measure)
        trb = self._table_rb(m, table_rb)
        if (m, trb) in self._cache and not verify:
            return self._cache[(m, trb)]
        path = table_path(str(m), trb)
        with h5py.File(self.path, "r") as f:
            g = f.get(path)
            if g is None or not bool(g.attrs.get("complete", False)):
                raise self._missing(m, trb)
            a = _attrs(g)
            layout = stored_layout(a)
            source = _GroupSource(self.path, g, a, random_access=not verify)
            if verify:
                h = new_checksum()
                for name in layout.checksummed:
                    if source.has(name):
                        arr = source.mapped(name)
                        for i in range(0, arr.shape[0], 1 << 24):
                            h.update(np.ascontiguousarray(arr[i:i + (1 << 24)]).tobytes())
                if h.hexdigest() != a["checksum"]:
                    raise _CorruptTableError(
                        f"{self.path}: table {table_name(str(m), trb)} is corrupt (checksum mismatch); rebuild it",
                        "checksum mismatch (the sha256 recomputed from its datasets differs from the stored one)")
            cert = Certificate(a["tie_method"], a["error_bound"], a["min_gap"], a["min_gap_exact"], a["redecided"])
            t = layout.read(source, measure=m, n_entries=int(a["n_entries"]), n_runs=int(a["n_runs"]),
                            certificate=cert, table_rb=trb, meta=a)
        self._cache[(m, trb)] = t
        return t

    def verify(self) -> list[str]:
        """Recompute every table's checksum; returns the tables checked (raises
        StoreError on the first mismatch)."""
        tables = self.tables()
        for t in tables:
            self.table(t["measure"], verify=True, table_rb=t.get("rb_counts"))
        return [t["name"] for t in tables]

    def verify_each(self) -> Iterator[tuple[str, str | None]]:
        """Recompute every table's checksum, table by table, and go on after a bad one:
        yields (table name, None) for a table whose checksum matches and (table name, what
        is wrong, in a few words) for one that is corrupt or cannot be read. :meth:`verify`
        stops at the first bad table instead."""
        for t in self.tables():
            try:
                self.table(t["measure"], verify=True, table_rb=t.get("rb_counts"))
            except _CorruptTableError as e:
                yield t["name"], e.problem
            except StoreError as e:
                yield t["name"], str(e)
            except (OSError, KeyError, ValueError) as e:  # damaged HDF5 structures or attributes
                yield t["name"], f"cannot be read ({type(e).__name__}: {e})"
            else:
                yield t["name"], None

    def scale(self, measure: str | Measure, rb: RecallBase = None) -> Scale:
        """The :class:`~irscale.scales.tables.scale.Scale` of a stored table for the actual
        ``rb`` (an int, or the per-grade counts (c_1..c_G) for measures keyed by them)."""
        m = parse_measure(measure)
        rb = m.check_rb(rb)
        m.check_defined(rb)
        return self.table(m, table_rb=m.table_rb(rb)).scale(rb)


class _CorruptTableError(StoreError):
    """A table whose checksum does not match (a StoreError like any other; ``problem`` says
    what is wrong without naming the file or the table)."""

    def __init__(self, message: str, problem: str):
        super().__init__(message)
        self.problem = problem


class _GroupSource:
    """The datasets and attributes of one stored table, for its layout's ``read``."""

    def __init__(self, path: Path, group, attrs: dict, random_access: bool = True):
        self.path, self.group, self.attrs, self.random_access = path, group, attrs, random_access

    def has(self, name: str) -> bool:
        return name in self.group

    def mapped(self, name: str) -> np.ndarray:
        """A dataset memory-mapped (read whole when it cannot be mapped)."""
        return _mapped(self.path, self.group[name], random_access=self.random_access)

    def read(self, name: str) -> np.ndarray:
        return self.group[name][()]


def open_store(path: str | os.PathLike) -> Store:
    """Open a table file for reading (raises StoreError for missing/foreign files)."""
    return Store(path)
