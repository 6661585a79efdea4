"""Reading a store: file checks, table listing, lazy (memory-mapped) tables as scales."""
from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import h5py
import numpy as np

from irscale.errors import StoreError, TableNotFoundError
from irscale.store.format import DATASETS, FORMAT_NAME, FORMAT_VERSION, new_checksum, table_name, table_path


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
            for name, g in f["tables"].items():
                a = _attrs(g)
                if a.get("complete"):
                    a["path"] = g.name
                    counts = json.loads(a.get("rb_counts", "null"))
                    a["rb_counts"] = None if counts is None else tuple(counts)
                    a["name"] = table_name(a["measure"], a["rb_counts"])
                    out.append(a)
        return sorted(out, key=lambda a: (a["measure"], a["rb_counts"] or ()))

    def has(self, measure, rb_counts: tuple | None = None) -> bool:
        """Whether the file has the complete table of ``measure`` (graded RB-dependent
        measures: the table of the capped per-grade counts ``rb_counts``)."""
        from irscale.scales import parse_measure
        m = parse_measure(measure)
        path = table_path(str(m), self._counts(m, rb_counts))
        with h5py.File(self.path, "r") as f:
            return path in f and bool(f[path].attrs.get("complete", False))

    @staticmethod
    def _counts(m, rb_counts):
        if not m.counts_keyed:
            return None
        if rb_counts is None:
            if m.common_rb() is None:
                from irscale.errors import RecallBaseError
                raise RecallBaseError(f"{m} has one table per topic: give its per-grade counts")
            return m.common_rb()
        return m.table_rb(tuple(rb_counts))

    def _missing(self, m, counts):
        if counts is None:
            return TableNotFoundError(f"{self.path} has no table {m}; create it with: "
                                      f"irscale build --measures \"{m}\" --out {self.path}")
        vec = "(" + ",".join(map(str, counts)) + ")"
        return TableNotFoundError(
            f"{self.path} has no table {m} for the per-grade counts {vec}; create it with: irscale build "
            f"--measures \"{m}\" --rb \"{vec}\" --out {self.path} (or --qrels FILE for every topic of a qrels file)")

    def table(self, measure, verify: bool = False, rb_counts: tuple | None = None):
        """The :class:`~irscale.scales.Table` of ``measure`` (memory-mapped arrays).
        ``verify`` recomputes the checksum (reads the whole table). Graded RB-dependent
        measures: the table of the capped per-grade counts ``rb_counts`` (default: the
        all-runs vector (N, ..., N))."""
        from irscale.scales import Certificate, Table, parse_measure
        m = parse_measure(measure)
        counts = self._counts(m, rb_counts)
        if (m, counts) in self._cache and not verify:
            return self._cache[(m, counts)]
        path = table_path(str(m), counts)
        with h5py.File(self.path, "r") as f:
            g = f.get(path)
            if g is None or not bool(g.attrs.get("complete", False)):
                raise self._missing(m, counts)
            a = _attrs(g)
            if a.get("layout") in ("fraction", "formal"):
                return self._held_table(m, counts, g, a, verify)
            arrays = {name: (_mapped(self.path, g[name], random_access=not verify) if name in g else None)
                      for name in DATASETS}
            from irscale.scales.tables.lookup_kernels import BLOCK, RAW_BLOCK
            usable = "index_raw" in g and json.loads(a.get("index_blocks", "[]")) == [RAW_BLOCK, BLOCK]
            index = (_mapped(self.path, g["index_raw"]), _mapped(self.path, g["index_cum"])) if usable else None
        if verify:
            h = new_checksum()
            for name in DATASETS:
                arr = arrays[name]
                if arr is not None:
                    for i in range(0, arr.size, 1 << 24):
                        h.update(np.ascontiguousarray(arr[i:i + (1 << 24)]).tobytes())
            if h.hexdigest() != a["checksum"]:
                raise StoreError(f"{self.path}: table {table_name(str(m), counts)} is corrupt (checksum mismatch); "
                                 f"rebuild it")
        cert = Certificate(a["tie_method"], a["error_bound"], a["min_gap"], a["min_gap_exact"], a["redecided"])
        t = Table(m, arrays["ids"], arrays["counts"], arrays["strata"], int(a["n_entries"]),
                  int(a["n_runs"]), cert, meta=a, index=index, rb_counts=counts)
        self._cache[(m, counts)] = t
        return t

    def _held_table(self, m, counts, g, a, verify: bool):
        """A table of exact fractions or formal keys (read whole: these tables are small)."""
        from irscale.scales import Certificate
        from irscale.scales.tables.formal import FormalTable
        from irscale.scales.tables.fraction import FractionTable
        from irscale.store.format import FORMAL_DATASETS, FRACTION_DATASETS
        names = FRACTION_DATASETS if a["layout"] == "fraction" else FORMAL_DATASETS
        arrays = {name: g[name][()] for name in names}
        if verify:
            h = new_checksum()
            for name in names:
                h.update(np.ascontiguousarray(arrays[name]).tobytes())
            if h.hexdigest() != a["checksum"]:
                raise StoreError(f"{self.path}: table {table_name(str(m), counts)} is corrupt (checksum mismatch); "
                                 f"rebuild it")
        cert = Certificate(a["tie_method"], a["error_bound"], a["min_gap"], a["min_gap_exact"], a["redecided"])
        if a["layout"] == "fraction":
            t = FractionTable(m, counts, arrays["num"], arrays["den"], arrays["counts"], int(a["n_runs"]), cert,
                              meta=a)
        else:
            t = FormalTable(m, counts, arrays["keys"], arrays["counts"], json.loads(a["coords"]), int(a["n_runs"]),
                            cert, meta=a)
        self._cache[(m, counts)] = t
        return t

    def verify(self) -> list[str]:
        """Recompute every table's checksum; returns the measures checked (raises
        StoreError on the first mismatch)."""
        tables = self.tables()
        for t in tables:
            self.table(t["measure"], verify=True, rb_counts=t.get("rb_counts"))
        return [t["name"] for t in tables]

    def scale(self, measure, rb=None):
        """The :class:`~irscale.scales.Scale` of a stored table for the actual ``rb`` (an
        int, or the per-grade counts (c_1..c_G) for graded RB-dependent measures)."""
        from irscale.scales import Scale, parse_measure
        m = parse_measure(measure)
        rb = m.check_rb(rb)
        m.check_defined(rb)
        table = self.table(m, rb_counts=m.table_rb(rb) if m.counts_keyed else None)
        if getattr(table, "layout", None) in ("fraction", "formal"):
            from irscale.scales.tables.build import held_scale
            return held_scale(table, rb)
        return Scale(table, rb)


def open_store(path: str | os.PathLike) -> Store:
    """Open a table file for reading (raises StoreError for missing/foreign files)."""
    return Store(path)


def params_of(meta: dict) -> dict:
    return json.loads(meta.get("params", "{}"))
