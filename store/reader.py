"""Reading a store: a store folder (:mod:`irscale.store.folder`: one file per table) or a
packed file (one HDF5 file of many tables: what ``irscale pack`` writes, and every store
irscale wrote before store folders), table listing, tables read by their layouts (lazily:
memory-mapped where the layout maps its datasets) and their scales. Readers take no lock
and write nothing.

Every table is validated when it is first opened, before any lookup kernel sees it
(:meth:`Store.table`): a version-4 table's attributes against its checksum and its
datasets' dtypes and shapes against its digests; then its layout's checks (``validate``:
attributes against the measure and each other, shapes, the block index); tables of less
than :data:`~irscale.store.format.VERIFY_ON_OPEN_BYTES`, and held ones (read whole
anyway), are verified whole (digests or the version-3 checksum, and the layout's deep
checks); of bigger version-4 tables the digests of everything but the entry arrays (the
block index). Damage of any kind, HDF5 structures included, raises
:class:`~irscale.errors.CorruptStoreError` naming the table (or the file when no table
can be named) and the command that rebuilds it, never another exception.
"""
from __future__ import annotations

import contextlib
import errno
import json
import mmap
import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path

import h5py
import numpy as np

from irscale.errors import CorruptStoreError, IrscaleError, StoreError, TableNotFoundError
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.bounded import BoundedTable
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.closed import closed_scale
from irscale.scales.tables.layouts import stored_layout
from irscale.scales.tables.scale import Scale, Table
from irscale.store import folder
from irscale.store.format import (
    FORMAT_NAME,
    FORMAT_VERSION,
    OLDEST_VERSION,
    VERIFY_ON_OPEN_BYTES,
    TableInfo,
    decode_attrs,
    little_endian_bytes,
    new_checksum,
    table_checksum,
    table_name,
)

#: What h5py and numpy raise on damaged HDF5 structures, attributes or datasets.
DAMAGE = (OSError, KeyError, ValueError, TypeError, RuntimeError, IndexError, OverflowError, AttributeError)


class _FolderTables:
    """The tables of a store folder: one HDF5 file each. Readers take no lock (HDF5's file
    locks included: a table file is never written in place, and a file changed by another
    program fails its checksums)."""

    def __init__(self, path: Path):
        self.path = path
        self.attrs = folder.read_manifest(path)

    def names(self) -> list[str]:
        return list(folder.table_files(self.path))

    def files(self) -> dict[str, Path]:
        return folder.table_files(self.path)

    @contextlib.contextmanager
    def group(self, name: str) -> Iterator[tuple[object, Path]]:
        """(the table's HDF5 group, the file holding it), or (None, None) without it (HDF5
        checks the checksums of the metadata of the files irscale writes before it parses
        them: their text attributes are fixed-length strings)."""
        file = self.path / folder.file_of(name)
        try:
            regular = stat.S_ISREG(file.stat().st_mode)
        except FileNotFoundError:
            regular = False
        if not regular:
            yield None, None
            return
        try:
            f = h5py.File(file, "r", locking=False)
        except OSError as e:
            if "already open for write" not in str(e):
                raise
            raise StoreError(f"{self.path}: table {name} is open for writing by another HDF5 program (irscale never "
                             f"writes a table file in place); try again once it has closed it (if it crashed, "
                             f"h5clear -s {shlex.quote(str(file))} clears the flag)") from None
        with f:
            yield f, file


class _PackedTables:
    """The tables of a packed file: groups ``/tables/NAME`` of one HDF5 file (what
    ``irscale pack`` writes, and every store of an older irscale), checked: an HDF5 file of
    irscale tables, of a format version this irscale reads."""

    def __init__(self, path: Path):
        self.path = path
        if not os.access(path, os.R_OK):
            raise StoreError(f"{path}: permission denied")
        if not stat.S_ISREG(path.stat().st_mode):
            raise StoreError(f"{path} is not a regular file (a store is a folder, or a file written by 'irscale pack')")
        problem = folder.screen([path]).get(path)   # old packed files carry no HDF5 checksums: a child parses it
        if problem is not None:
            raise CorruptStoreError(f"{path}: {problem}; the file is damaged")
        if not h5py.is_hdf5(path):
            raise StoreError(f"{path} is not an HDF5 file (expected a store written by 'irscale build')")
        if (path.parent / f".{path.name}.redo").exists():
            raise StoreError(f"{path} has an unfinished commit of an older irscale (.{path.name}.redo beside "
                             f"it): finish it by reading the store once with that irscale, or rebuild the store")
        try:
            with h5py.File(path, "r", locking=False) as f:
                self.attrs = _attrs(f)
            version = self.attrs.get("format_version")
            version = None if version is None else int(version)
        except DAMAGE as e:
            raise CorruptStoreError(f"{path}: cannot read HDF5 file ({_reason(e)}); the file is damaged") from None
        if self.attrs.get("format") != FORMAT_NAME:
            raise StoreError(f"{path} is an HDF5 file but not an irscale table file")
        if version is None or version > FORMAT_VERSION:
            raise StoreError(f"{path} uses table format version {version}, newer than this irscale knows "
                             f"({FORMAT_VERSION}); upgrade irscale")
        if version < OLDEST_VERSION:
            raise StoreError(f"{path} uses the old table format version {version}; rebuild it with 'irscale build'")

    def names(self) -> list[str]:
        with h5py.File(self.path, "r", locking=False) as f:
            return list(f["tables"]) if "tables" in f else []

    @contextlib.contextmanager
    def group(self, name: str) -> Iterator[tuple[object, Path]]:
        with h5py.File(self.path, "r", locking=False) as f:
            listed = "tables" in f and "/" not in name and name in f["tables"]      # a link lookup, not a listing
            yield (f["tables"][name] if listed else None), self.path     # a listed group that cannot open: damage


def _reason(e: BaseException) -> str:
    text = " ".join(str(e).split())           # HDF5's messages have line breaks: an error is one line
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _attrs(g) -> dict:
    """A table's attributes, decoded; attributes that cannot be decoded, or of a complete
    version-4 table that fail their checksum, are damage (OSError), not a missing table."""
    a = decode_attrs(g.attrs)
    if a.get("complete") is True and "format_version" in a and a.get("checksum") != table_checksum(a):
        raise OSError(errno.EIO, "checksum mismatch (the sha256 of its attributes differs from the stored checksum)")
    return a


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
    store and answering a lookup reads only the parts of a table the lookup touches
    (tables are validated when first opened: see the module docstring).

    >>> store = open_store("tables")                # doctest: +SKIP
    >>> store.scale("AP@10", rb=5).rank([0.5])        # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.exists():
            raise StoreError(f"{path}: no such file or folder (a store is the folder irscale build makes, or a file "
                             f"of irscale pack)")
        self._tables = _FolderTables(self.path) if self.path.is_dir() else _PackedTables(self.path)
        self.attrs = self._tables.attrs
        self._cache: dict = {}
        self._scales: dict = {}

    def __repr__(self) -> str:
        return f"<Store {self.path}: {len(self.tables())} tables>"

    def tables(self, skip_damaged: bool = False, screened: bool = False) -> list[TableInfo]:
        """Metadata (:class:`~irscale.store.format.TableInfo`) of every complete table,
        sorted by measure name. A table whose
        metadata are damaged raises CorruptStoreError naming it (``skip_damaged``: is left
        out; :meth:`verify_each` reports it)."""
        out, _, damaged = self._listing(screened)
        if damaged and not skip_damaged:
            name, problem = damaged[0]
            raise CorruptStoreError(f"{self.path}: table {name} is corrupt ({problem}); rebuild it with: "
                                    f"{self.rebuild_command(name)}")
        return out

    def _listing(self, screened: bool = False) -> tuple[list[TableInfo], list[str], list[tuple[str, str]]]:
        """(metadata of the complete tables, names of the groups not marked complete,
        (name, problem) of the groups whose metadata are damaged; ``screened``: the table
        files parsed in a child first, :meth:`screen`)."""
        out, incomplete, damaged = [], [], []
        try:
            names = self._tables.names()
        except DAMAGE as e:
            raise CorruptStoreError(f"{self.path}: its list of tables cannot be read ({_reason(e)}); the store is "
                                    f"damaged: rebuild it") from None
        if screened:
            bad = self.screen()
            damaged += list(bad.items())
            names = [name for name in names if name not in bad]
        for name in names:
            try:
                with self._tables.group(name) as (g, _):
                    if g is None:
                        continue                      # removed since it was listed
                    a = _attrs(g)
                    if a.get("complete") is not True:
                        incomplete.append(name)
                        continue
                    info = TableInfo.from_attrs(a, path=g.name)
                if info.name != name:
                    raise ValueError(f"its attributes name it {info.name!r}")
                out.append(info)
            except DAMAGE as e:
                damaged.append((name, f"its metadata cannot be read: {_reason(e)}"))
        return sorted(out, key=lambda t: (t.measure, t.rb_counts or ())), incomplete, damaged

    def screen(self) -> dict[str, str]:
        """Let a child process parse every table file first, with a time limit
        (:func:`irscale.store.folder.screen`): {table name: what happened} of the files whose
        parsing crashed or hung it. ``irscale info --verify`` and the service's start-up do;
        a packed file is screened when it is opened."""
        files = self._tables.files() if isinstance(self._tables, _FolderTables) else {}
        problems = folder.screen(list(files.values()))
        return {name: problems[file] for name, file in files.items() if file in problems}

    def group(self, name: str) -> contextlib.AbstractContextManager:
        """A context manager giving the HDF5 group of the table called ``name`` (the root of
        its file in a store folder) and the file holding it, or (None, None); for copying
        tables whole (:mod:`irscale.store.pack`)."""
        return self._tables.group(name)

    def _stored_attrs(self, m: Measure, trb: tuple | None) -> dict | None:
        """The attributes of the complete table of ``m`` (and ``trb``), or None."""
        with self._tables.group(table_name(str(m), trb)) as (g, _):
            a = None if g is None else _attrs(g)
        return a if a is not None and a.get("complete") is True else None

    def has(self, measure: str | Measure, table_rb: tuple | None = None) -> bool:
        """Whether the store has the complete table of ``measure`` (for measures with a
        table per recall-base vector: the table of ``table_rb``, default the common one)."""
        m = parse_measure(measure)
        trb = self._table_rb(m, table_rb)
        try:
            return self._stored_attrs(m, trb) is not None
        except DAMAGE as e:
            raise self._corrupt(m, trb, f"cannot be read ({_reason(e)})") from None

    def layout_of(self, measure: str | Measure, table_rb: tuple | None = None) -> str | None:
        """The layout of the stored table of ``measure`` (None when there is none, or when
        it cannot be read)."""
        m = parse_measure(measure)
        try:
            a = self._stored_attrs(m, self._table_rb(m, table_rb))
        except DAMAGE:
            return None
        return None if a is None else stored_layout(a).name

    @staticmethod
    def _table_rb(m, table_rb):
        """The table recall base meant by ``table_rb`` (None: the common one)."""
        return m.table_rbs([None if table_rb is None else tuple(table_rb)])[0]

    def _missing(self, m, table_rb):
        if table_rb is None:
            return TableNotFoundError(f"{self.path} has no table {m}; create it with: "
                                      f"irscale build --measures \"{m}\" --out {shlex.quote(str(self.path))}")
        vec = "(" + ",".join(map(str, table_rb)) + ")"
        return TableNotFoundError(
            f"{self.path} has no table {m} for the per-grade counts {vec}; create it with: irscale build "
            f"--measures \"{m}\" --rb \"{vec}\" --out {shlex.quote(str(self.path))} (or --qrels FILE for every "
            f"topic of a qrels file)")

    def rebuild_command(self, name: str, bounded: bool = False) -> str:
        """The command that rebuilds the table called ``name`` in this store."""
        measure, _, vec = name.partition(" rb=")
        return (f'irscale build --measures "{measure}"' + (f' --rb "{vec}"' if vec else "")
                + (" --layout bounded" if bounded else "") + f" --rebuild --out {shlex.quote(str(self.path))}")

    def _corrupt(self, m, table_rb, problem: str) -> CorruptStoreError:
        """The error naming a corrupt table (``problem``: what is wrong, in a few words;
        ``table``: the table's name)."""
        name = table_name(str(m), table_rb)
        err = CorruptStoreError(f"{self.path}: table {name} is corrupt ({problem}); rebuild it with: "
                                f"{self.rebuild_command(name, m.bounded_only)}")
        err.problem, err.table = problem, name
        return err

    def table(self, measure: str | Measure, verify: bool = False, table_rb: tuple | None = None) -> Table:
        """The :class:`~irscale.scales.tables.scale.Table` of ``measure`` (memory-mapped
        arrays where its layout maps them), validated (see the module docstring; raises
        :class:`~irscale.errors.CorruptStoreError` naming the table). ``verify`` verifies
        it whole: every digest (the checksum of a version-3 table) and the layout's deep
        checks (reads the whole table). Measures with a table per recall-base vector: the
        table of ``table_rb`` (default: the common one, (N, ..., N))."""
        m = parse_measure(measure)
        trb = self._table_rb(m, table_rb)
        if (m, trb) in self._cache and not verify:
            return self._cache[(m, trb)]
        try:
            with self._tables.group(table_name(str(m), trb)) as (g, file):
                a = None if g is None else _attrs(g)     # damaged attributes raise: not a missing table
                if a is None or a.get("complete") is not True:
                    raise self._missing(m, trb)
                t = self._read(g, a, m, trb, verify, file)
        except CorruptStoreError as e:       # a layout's finding: name the table
            if getattr(e, "table", None):
                raise
            raise self._corrupt(m, trb, getattr(e, "problem", None) or str(e)) from None
        except IrscaleError:
            raise
        except DAMAGE as e:
            raise self._corrupt(m, trb, f"cannot be read ({_reason(e)})") from None
        self._cache[(m, trb)] = t
        return t

    def _read(self, g, a: dict, m: Measure, trb: tuple | None, verify: bool, file: Path) -> Table:
        """Read and validate one table group of attributes ``a`` (see :meth:`table`)."""
        version = a.get("format_version")
        digests = None
        if version is not None:                      # a version-4 table: attributes first
            if version != FORMAT_VERSION or isinstance(version, bool):
                raise CorruptStoreError(f"table format version {version!r}")
            digests = json.loads(a["digests"])
            if not isinstance(digests, dict) or set(digests) != set(g.keys()):
                raise CorruptStoreError(f"datasets {sorted(g.keys())}, its digests name {sorted(digests)}")
            for name, (dtype, shape, _) in digests.items():
                ds = g[name]
                if ds.dtype.str != dtype or list(ds.shape) != shape:
                    raise CorruptStoreError(f"dataset {name} is {ds.dtype.str} {list(ds.shape)}, its digest says "
                                            f"{dtype} {shape}")
        elif "digests" in a:
            raise CorruptStoreError("attr format_version missing")
        try:
            info = TableInfo.from_attrs(a, path=g.name)
        except ValueError as e:
            raise CorruptStoreError(str(e)) from None
        if info.measure != str(m):
            raise CorruptStoreError(f"attr measure {info.measure!r}")
        if info.rb_counts != trb:
            raise CorruptStoreError(f"attr rb_counts {a.get('rb_counts')!r}")
        if "rel" in a and info.rel != tuple(range(m.levels)):
            raise CorruptStoreError(f"attr rel {a.get('rel')!r}")
        layout = stored_layout(a)
        allowed = m.layouts + (("entries",) if "implicit" in m.layouts else ()) + (("bounded",) if m.bounded_only
                                                                                  else ())
        if layout.name not in allowed:
            raise CorruptStoreError(f"layout {layout.name!r} for a measure of layouts {', '.join(m.layouts)}")
        size = sum(int(ds.id.get_storage_size()) for ds in g.values() if isinstance(ds, h5py.Dataset))
        whole = verify or size < VERIFY_ON_OPEN_BYTES or not layout.lazy
        source = _GroupSource(file, g, a, random_access=not verify)
        if digests is not None:
            for name, (_, _, digest) in sorted(digests.items()):
                if (whole or name not in layout.lazy) and _digest(source.scan(name)) != digest:
                    raise CorruptStoreError(f"checksum mismatch (the sha256 of dataset {name} differs from its "
                                            f"stored digest)")
        elif whole:
            h = new_checksum()
            for name in layout.checksummed:
                if source.has(name):
                    _update(h, source.scan(name))
            if h.hexdigest() != a.get("checksum"):
                raise CorruptStoreError("checksum mismatch (the sha256 recomputed from its datasets differs from the "
                                        "stored one)")
        try:
            cert = Certificate(a["tie_method"], float(a["error_bound"]), float(a["min_gap"]), a["min_gap_exact"],
                               int(a["redecided"]))
        except (KeyError, TypeError, ValueError):
            raise CorruptStoreError("certificate attributes missing or not numbers") from None
        if not cert.error_bound >= 0:
            raise CorruptStoreError(f"error_bound {cert.error_bound!r}")
        meta = dict(a, store_file=str(self.path), table_name=table_name(str(m), trb),
                    rebuild_command=self.rebuild_command(table_name(str(m), trb), m.bounded_only))
        t = layout.read(source, measure=m, n_entries=info.n_entries, n_runs=info.n_runs,
                        certificate=cert, table_rb=trb, meta=meta)
        layout.validate(t, source, deep=whole)
        return t

    def verify(self) -> list[str]:
        """Verify every table whole (:meth:`table` with ``verify``); returns the tables
        checked (raises CorruptStoreError on the first bad one)."""
        tables = self.tables()
        for t in tables:
            self.table(t["measure"], verify=True, table_rb=t.get("rb_counts"))
        return [t["name"] for t in tables]

    def verify_each(self) -> Iterator[tuple[str, str | None]]:
        """Verify every table whole, table by table, and go on after a bad one: yields
        (table name, None) for a sound table and (table name, what is wrong, in a few
        words) for one that is corrupt or cannot be read. :meth:`verify` stops at the
        first bad table instead."""
        tables, incomplete, damaged = self._listing(screened=True)
        for t in tables:
            try:
                self.table(t["measure"], verify=True, table_rb=t.get("rb_counts"))
            except CorruptStoreError as e:
                yield t["name"], getattr(e, "problem", None) or str(e)
            except StoreError as e:
                yield t["name"], str(e)
            else:
                yield t["name"], None
        for name, problem in damaged:
            yield name, problem
        for name in incomplete:    # a committed store has none: writers mark a table complete last
            yield name, "incomplete (attr complete is not true): not listed, not used"

    def bounded_table(self, measure: str | Measure, table_rb: tuple | None = None) -> BoundedTable | None:
        """The stored bounded table of ``measure`` (and of ``table_rb``), or None when the
        store has none (:mod:`irscale.scales.tables.bounded_layout`): bounded scales are
        used only where asked for, so :meth:`scale` never answers with one."""
        m = parse_measure(measure)
        trb = self._table_rb(m, table_rb)
        if not m.bounded_only or self.layout_of(m, trb) != "bounded":
            return None
        return self.table(m, table_rb=trb)

    def scale(self, measure: str | Measure, rb: RecallBase = None) -> Scale:
        """The :class:`~irscale.scales.tables.scale.Scale` of a stored table for the actual
        ``rb`` (an int, or the per-grade counts (c_1..c_G) for measures keyed by them);
        measures with a closed form (P, R, F1, RR, Rprec) need no table: without one
        stored, their closed form answers (:mod:`irscale.scales.tables.closed`)."""
        given = (measure, rb)
        try:                                     # the arguments as given: checked once, then cached
            hit = self._scales.get(given)
        except TypeError:                        # an unhashable rb (a list of counts)
            hit = None
        if hit is not None:
            return hit
        m = parse_measure(measure)
        m.check_scales()
        key = (m, m.check_rb(rb))
        hit = self._scales.get(key)
        if hit is not None:
            return hit
        rb = key[1]
        m.check_defined(rb)
        if m.layout == "closed":
            scale = closed_scale(m, rb)
        else:
            try:
                scale = self.table(m, table_rb=m.table_rb(rb)).scale(rb)
            except TableNotFoundError:
                if m.closed_form() is None:
                    raise
                scale = closed_scale(m, rb)
        if len(self._scales) < 4096:
            self._scales[key] = scale
            with contextlib.suppress(TypeError):
                self._scales[given] = scale
        return scale


def _update(h, arr: np.ndarray) -> None:
    """Feed an array's bytes (little-endian, C order) to the hash ``h``, 64 MiB at a time."""
    flat = arr.reshape(-1)
    step = max(1, (64 << 20) // max(1, arr.dtype.itemsize))
    for i in range(0, flat.shape[0], step):
        h.update(little_endian_bytes(flat[i:i + step]))


def _digest(arr: np.ndarray) -> str:
    """sha256 of an array's bytes (little-endian, C order)."""
    h = new_checksum()
    _update(h, arr)
    return h.hexdigest()


class _GroupSource:
    """The datasets and attributes of one stored table, for its layout's ``read`` and
    ``validate``."""

    def __init__(self, path: Path, group, attrs: dict, random_access: bool = True):
        self.path, self.group, self.attrs, self.random_access = path, group, attrs, random_access

    def has(self, name: str) -> bool:
        return name in self.group

    def mapped(self, name: str) -> np.ndarray:
        """A dataset memory-mapped (read whole when it cannot be mapped)."""
        return _mapped(self.path, self.group[name], random_access=self.random_access)

    def scan(self, name: str) -> np.ndarray:
        """A dataset mapped for one sequential pass (read ahead by the kernel)."""
        return _mapped(self.path, self.group[name], random_access=False)

    def read(self, name: str) -> np.ndarray:
        return self.group[name][()]


def open_store(path: str | os.PathLike) -> Store:
    """Open a table file for reading (raises StoreError for missing/foreign files)."""
    return Store(path)
