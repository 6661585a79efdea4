"""Reading a store: file checks, table listing, loading tables as scales."""
from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np

from irscale.errors import StoreError, TableNotFoundError
from irscale.store.format import FORMAT_NAME, FORMAT_VERSION, checksum, table_path


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


def _attrs(g) -> dict:
    out = {}
    for k, v in g.attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out


class Store:
    """A table file opened for reading.

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
        """Metadata of every complete table, sorted by measure and rb."""
        out = []
        with h5py.File(self.path, "r") as f:
            if "tables" not in f:
                return out
            for mname, mg in f["tables"].items():
                for rbname, g in mg.items():
                    a = _attrs(g)
                    if a.get("complete"):
                        a["path"] = g.name
                        out.append(a)
        return sorted(out, key=lambda a: (a["measure"], a["rb"]))

    def has(self, measure, rb: int | None = None) -> bool:
        from irscale.scales import parse_measure
        m = parse_measure(measure)
        path = table_path(str(m), m.table_rb(rb))
        with h5py.File(self.path, "r") as f:
            return path in f and bool(f[path].attrs.get("complete", False))

    def table(self, measure, rb: int | None = None):
        """Load a :class:`~irscale.scales.Table` (checksum verified)."""
        from irscale.scales import Certificate, Table, parse_measure
        m = parse_measure(measure)
        trb = m.table_rb(rb)
        key = (m, trb)
        if key in self._cache:
            return self._cache[key]
        path = table_path(str(m), trb)
        with h5py.File(self.path, "r") as f:
            g = f.get(path)
            if g is None or not bool(g.attrs.get("complete", False)):
                rbopt = f" --rb {trb}" if trb is not None else ""
                raise TableNotFoundError(
                    f"{self.path} has no table {m}" + (f" for rb={trb}" if trb is not None else "") +
                    f"; create it with: irscale build --measures \"{m}\"{rbopt} --out {self.path}")
            a = _attrs(g)
            keys, values, counts = g["keys"][()], g["values"][()], g["counts"][()]
        if checksum(keys, values, counts) != a["checksum"]:
            raise StoreError(f"{self.path}: table {m} rb={trb} is corrupt (checksum mismatch); rebuild it")
        cert = Certificate(a["tie_method"], a["error_bound"], a["min_gap"], a["min_gap_exact"], a["redecided"])
        t = Table(m, trb, keys, counts, int(a["n_runs"]), cert, meta=a)
        self._cache[key] = t
        return t

    def scale(self, measure, rb: int | None = None):
        """The :class:`~irscale.scales.Scale` of a stored table (for the actual ``rb``)."""
        from irscale.scales import Scale, parse_measure
        m = parse_measure(measure)
        return Scale(self.table(m, rb), m.check_rb(rb))


def open_store(path: str | os.PathLike) -> Store:
    """Open a table file for reading (raises StoreError for missing/foreign files)."""
    return Store(path)


def params_of(meta: dict) -> dict:
    return json.loads(meta.get("params", "{}"))
