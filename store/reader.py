"""Reading a store (a store folder, or a packed file): listing, tables read by their
layouts, memory-mapped, and their scales. Readers take no lock and write nothing.

A table is checked before any of its data is touched (:func:`_check`): the latest HDF5
file format (checksummed metadata), scalar attributes of fixed-size types that match its
checksum, exactly the datasets its digests name, each a hard link to a contiguous dataset
inside the file of the dtype and shape its digest gives. A file is opened once and its
datasets are memory-mapped from that descriptor, so a table replaced meanwhile is read
whole from the old file or the new one. Then its layout validates the table (whole when it
is smaller than ``VERIFY_ON_OPEN_BYTES``). Damage raises CorruptStoreError naming the
table and the command that rebuilds it; a file of another format is refused in one line.
"""
from __future__ import annotations

import contextlib
import json
import math
import mmap
import os
import shlex
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

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
from irscale.store import format as fmt
from irscale.store.format import VERIFY_ON_OPEN_BYTES, TableInfo, table_name

#: What h5py and numpy raise on damaged HDF5 structures, attributes or datasets.
DAMAGE = (OSError, KeyError, ValueError, TypeError, RuntimeError, IndexError, OverflowError, AttributeError)
_ATTR_CLASSES = (h5py.h5t.INTEGER, h5py.h5t.FLOAT, h5py.h5t.STRING, h5py.h5t.ENUM)


class _DamagedError(Exception):
    """A table that fails a check: what is wrong, in a few words."""


class _RefusedError(_DamagedError):
    """A file of another format than this irscale writes: what it is."""


def _reason(e: BaseException) -> str:
    text = " ".join(str(e).split())           # HDF5's messages have line breaks: an error is one line
    if isinstance(e, _DamagedError):
        return text
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


@contextlib.contextmanager
def _open(path: Path) -> Iterator[tuple[BinaryIO, h5py.File] | None]:
    """The regular file ``path`` opened once, and HDF5 reading it from that descriptor (None
    without it: a FIFO or a device is not read). Its file object, of the descriptor, names
    no path, so that no memory map of it (``filename``) leads a reader to open it again."""
    fd = None
    with contextlib.suppress(FileNotFoundError):
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    if fd is not None and not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        fd = None
    if fd is None:
        yield None
        return
    with os.fdopen(fd, "rb", buffering=0) as fh:
        try:
            f = h5py.File(fh, "r")
        except OSError as e:
            if "signature" in str(e):
                raise _DamagedError("not an HDF5 file") from None
            raise
        with f:
            if f.id.get_create_plist().get_version()[0] < 2:
                raise _RefusedError("an HDF5 file of an older format (no checksums)")
            yield fh, f


def _attrs(g: h5py.Group) -> dict:
    """The attributes of ``g``, decoded after a check of their types (scalars of numbers
    or fixed-length text only: nothing outside the checksummed object header is read)."""
    out = {}
    for key in g.attrs:
        aid = g.attrs.get_id(key)
        t = aid.get_type()
        if aid.shape != () or t.get_class() not in _ATTR_CLASSES or (
                isinstance(t, h5py.h5t.TypeStringID) and t.is_variable_str()):
            raise _DamagedError(f"attr {key} is not of a type irscale writes")
        out[key] = np.empty((), dtype=aid.dtype)
        aid.read(out[key])
    return fmt.decode_attrs({k: v[()] for k, v in out.items()})


def _check(g: h5py.Group, fh: BinaryIO, table: str) -> tuple[TableInfo, dict[str, tuple]]:
    """(the metadata, {dataset: (dtype, shape, offset)}) of the table called ``table``, the
    group ``g`` of the file ``fh``, checked before any of its data is read."""
    a = _attrs(g)
    version = a.get("format_version")
    if version != fmt.FORMAT_VERSION or isinstance(version, bool):
        newer = isinstance(version, int) and version > fmt.FORMAT_VERSION
        raise _RefusedError(f"table format version {version}, "
                            + ("newer than this irscale knows; upgrade irscale" if newer else "of an older irscale"))
    if a.get("complete") is not True:
        raise _DamagedError("incomplete (attr complete is not true)")
    if a.get("checksum") != fmt.table_checksum(a):
        raise _DamagedError("checksum mismatch (the sha256 of its attributes differs from the stored checksum)")
    try:
        info = TableInfo.from_attrs(a, path=g.name)
    except ValueError as e:
        raise _DamagedError(str(e)) from None
    if info.name != table:
        raise _DamagedError(f"its attributes name it {info.name!r}")
    try:
        wanted = {k: (np.dtype(d), tuple(int(s) for s in shape))
                  for k, (d, shape, _) in json.loads(a["digests"]).items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise _DamagedError("attr digests is not a list of datasets") from None
    if set(g) != set(wanted):
        raise _DamagedError(f"datasets {sorted(g)}, its digests name {sorted(wanted)}")
    size, out = os.fstat(fh.fileno()).st_size, {}
    for name, (dtype, shape) in wanted.items():
        if not isinstance(g.get(name, getlink=True), h5py.HardLink):
            raise _DamagedError(f"{name} is a link to elsewhere")
        ds = g[name]
        if not isinstance(ds, h5py.Dataset):
            raise _DamagedError(f"{name} is not a dataset")
        plist = ds.id.get_create_plist()
        if plist.get_external_count():
            raise _DamagedError(f"dataset {name} is stored outside the file (external storage)")
        if plist.get_layout() != h5py.h5d.CONTIGUOUS:
            raise _DamagedError(f"dataset {name} is not contiguous in the file")
        if ds.dtype.str != dtype.str or ds.shape != shape or dtype.kind not in "biuf":
            raise _DamagedError(f"dataset {name} is {ds.dtype.str} {list(ds.shape)}, its digest says "
                                f"{dtype.str} {list(shape)}")
        nbytes = dtype.itemsize * math.prod(shape)
        offset = ds.id.get_offset() if nbytes else 0
        if nbytes and (offset is None or offset + nbytes > size or ds.id.get_storage_size() != nbytes):
            raise _DamagedError(f"dataset {name} lies outside the file")
        out[name] = (ds.dtype, shape, offset)
    return info, out


class _Source:
    """The datasets and attributes of one checked table, for its layout's ``read`` and
    ``validate``: memory-mapped from the descriptor its file was opened as; lookups touch
    a few entries at scattered places, so the kernel is told not to read ahead around them
    (MADV_RANDOM), but for ``scan``, one sequential pass."""

    def __init__(self, fh: BinaryIO, attrs: dict, datasets: dict[str, tuple], random_access: bool = True):
        self.fh, self.attrs, self.datasets, self.random_access = fh, attrs, datasets, random_access

    def has(self, name: str) -> bool:
        return name in self.datasets

    def mapped(self, name: str, random_access: bool | None = None) -> np.ndarray:
        dtype, shape, offset = self.datasets[name]
        if not math.prod(shape):
            return np.zeros(shape, dtype)
        arr = np.memmap(self.fh, dtype=dtype, mode="r", offset=offset, shape=shape)
        if self.random_access if random_access is None else random_access:
            arr._mmap.madvise(mmap.MADV_RANDOM)
        return arr

    def scan(self, name: str) -> np.ndarray:
        return self.mapped(name, random_access=False)

    def read(self, name: str) -> np.ndarray:
        return np.array(self.scan(name))


def _digest(arr: np.ndarray) -> str:
    """sha256 of an array's bytes (little-endian, C order), 64 MiB at a time."""
    h, flat = fmt.new_checksum(), arr.reshape(-1)
    step = max(1, (64 << 20) // max(1, arr.dtype.itemsize))
    for i in range(0, flat.shape[0], step):
        h.update(fmt.little_endian_bytes(flat[i:i + step]))
    return h.hexdigest()


class Store:
    """A store opened for reading: a store folder, or a packed file (opened once, here).
    Tables are memory-mapped on first use: a lookup reads only the parts it touches.

    >>> store = open_store("tables")                # doctest: +SKIP
    >>> store.scale("AP@10", rb=5).rank([0.5])        # doctest: +SKIP
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self._cache, self._scales = {}, {}
        self._packed: tuple[BinaryIO, h5py.File] | None = None
        if self.path.is_dir():
            self.attrs = folder.read_manifest(self.path)
            return
        if not self.path.exists():
            raise StoreError(f"{path}: no such file or folder (a store is the folder irscale build makes, or a file "
                             f"of irscale pack)")
        if not os.access(self.path, os.R_OK):
            raise StoreError(f"{path}: permission denied")
        try:
            with contextlib.ExitStack() as stack:      # the file is opened once: every table is read from it
                self._packed = stack.enter_context(_open(self.path))
                if self._packed is None:
                    raise StoreError(f"{path} is not a regular file (a store is a folder, or a file written by "
                                     f"'irscale pack')")
                f = self._packed[1]
                self.attrs = _attrs(f)
                if self.attrs.get("format") != fmt.FORMAT_NAME:
                    raise _RefusedError("an HDF5 file but not an irscale store")
                if self.attrs.get("format_version") != fmt.FORMAT_VERSION:
                    raise _RefusedError(f"of table format version {self.attrs.get('format_version')}, this irscale "
                                        f"reads {fmt.FORMAT_VERSION}")
                if set(f) != {"tables"} or not isinstance(f.get("tables", getlink=True), h5py.HardLink):
                    raise _DamagedError(f"objects {sorted(set(f))}, not the group tables irscale writes")
                self._group = f["tables"]            # (h5py's get() would take damage for absence)
                self._file = stack.pop_all()         # open as long as the store is
        except _RefusedError as e:
            raise StoreError(f"{path} is {e}: not a store this irscale wrote; rebuild its tables with irscale "
                             f"build ... --rebuild (or upgrade irscale)") from None
        except (_DamagedError, *DAMAGE) as e:
            raise CorruptStoreError(f"{path}: cannot read HDF5 file ({_reason(e)}); the file is damaged") from None

    def __repr__(self) -> str:
        return f"<Store {self.path}: {len(self.tables())} tables>"

    def names(self) -> list[str]:
        """The names of the tables stored (complete or not, sound or not)."""
        return list(folder.table_files(self.path)) if self._packed is None else sorted(self._group)

    @contextlib.contextmanager
    def _checked(self, name: str) -> Iterator[tuple[BinaryIO, TableInfo, dict[str, tuple]] | None]:
        """(the file, the metadata, the datasets) of the table called ``name``, checked
        (:func:`_check`); None without it."""
        if self._packed is None:
            with _open(self.path / folder.file_of(name)) as opened:
                yield None if opened is None else (opened[0], *_check(opened[1], opened[0], name))
            return
        fh, tables = self._packed[0], self._group
        link = None if "/" in name else tables.get(name, getlink=True)
        if link is not None and not isinstance(link, h5py.HardLink):
            raise _DamagedError("a link to elsewhere")
        if link is None and name in list(tables):        # listed, not found: damage
            raise _DamagedError("listed, but not found by its name")
        yield None if link is None else (fh, *_check(tables[name], fh, name))

    def tables(self, skip_damaged: bool = False) -> list[TableInfo]:
        """Metadata (:class:`~irscale.store.format.TableInfo`) of every table, sorted by
        measure name. A table that fails its checks raises CorruptStoreError naming it
        (``skip_damaged``: is left out; :meth:`verify_each` reports it)."""
        out, damaged = self._listing()
        if damaged and not skip_damaged:
            raise self._error(*damaged[0])
        return out

    def _listing(self) -> tuple[list[TableInfo], list[tuple[str, str]]]:
        """(metadata of the sound tables, (name, problem) of the others)."""
        out, damaged = [], []
        for name in self.names():
            try:
                with self._checked(name) as found:
                    out += [] if found is None else [found[1]]       # None: removed since it was listed
            except _RefusedError as e:
                damaged.append((name, f"{e}: not a table this irscale reads"))
            except (_DamagedError, *DAMAGE) as e:
                damaged.append((name, str(e) if isinstance(e, _DamagedError) else
                                f"its metadata cannot be read: {_reason(e)}"))
        return sorted(out, key=lambda t: (t.measure, t.rb_counts or ())), damaged

    def has(self, measure: str | Measure, table_rb: tuple | None = None) -> bool:
        """Whether the store has the table of ``measure`` (for measures with a table per
        recall-base vector: the table of ``table_rb``, default the common one)."""
        return self.layout_of(measure, table_rb, strict=True) is not None

    def layout_of(self, measure: str | Measure, table_rb: tuple | None = None, strict: bool = False) -> str | None:
        """The layout of the stored table of ``measure`` (None when there is none, or, unless
        ``strict``, when it cannot be read; ``strict``: CorruptStoreError)."""
        m = parse_measure(measure)
        name = table_name(str(m), self._table_rb(m, table_rb))
        try:
            with self._checked(name) as found:
                return None if found is None else stored_layout(found[1].attrs).name
        except (_DamagedError, *DAMAGE) as e:
            if strict:
                raise self._error(name, str(e), m.bounded_only) from None
            return None

    @staticmethod
    def _table_rb(m: Measure, table_rb: tuple | None) -> tuple | None:
        """The table recall base meant by ``table_rb`` (None: the common one)."""
        return m.table_rbs([None if table_rb is None else tuple(table_rb)])[0]

    def rebuild_command(self, name: str, bounded: bool = False, rebuild: bool = True) -> str:
        """The command that rebuilds (not ``rebuild``: builds) the table called ``name`` in
        this store."""
        measure, _, vec = name.partition(" rb=")
        return (f'irscale build --measures "{measure}"' + (f' --rb "{vec}"' if vec else "")
                + (" --layout bounded" if bounded else "") + (" --rebuild" if rebuild else "")
                + f" --out {shlex.quote(str(self.path))}")

    def _error(self, name: str, problem: str, bounded: bool = False) -> CorruptStoreError:
        """The error naming the table ``name`` that fails a check (``problem``, a few words)."""
        err = CorruptStoreError(f"{self.path}: table {name} is corrupt ({problem}); rebuild it with: "
                                f"{self.rebuild_command(name, bounded)}")
        err.problem, err.table = problem, name
        return err

    def table(self, measure: str | Measure, verify: bool = False, table_rb: tuple | None = None) -> Table:
        """The :class:`~irscale.scales.tables.scale.Table` of ``measure`` (for measures with a
        table per recall-base vector: of ``table_rb``, default (N, ..., N)), memory-mapped and
        checked; ``verify``: verified whole (every digest, the layout's deep checks)."""
        m = parse_measure(measure)
        key = (m, self._table_rb(m, table_rb))
        if key not in self._cache or verify:
            self._cache[key] = self._load(*key, verify)[0]
        return self._cache[key]

    def _load(self, m: Measure, trb: tuple | None, verify: bool) -> tuple[Table, dict, dict[str, np.ndarray]]:
        """(the table, its attributes, its datasets mapped when ``verify``) read from one
        open file, checked and validated by its layout."""
        name = table_name(str(m), trb)
        try:
            with self._checked(name) as found:
                if found is None:
                    vec = name.partition(" rb=")[2]
                    raise TableNotFoundError(
                        f"{self.path} has no table {m}" + (f" for the per-grade counts {vec}" if vec else "")
                        + f"; create it with: {self.rebuild_command(name, rebuild=False)}"
                        + (" (or --qrels FILE for every topic of a qrels file)" if vec else ""))
                fh, info, datasets = found
                source = _Source(fh, info.attrs, datasets, random_access=not verify)
                t = self._read(source, info, m, trb, verify)
                return t, info.attrs, {k: source.scan(k) for k in datasets} if verify else {}
        except _RefusedError as e:
            raise StoreError(f"{self.path}: table {name} is {e}; rebuild it with: "
                             f"{self.rebuild_command(name, m.bounded_only)}") from None
        except CorruptStoreError as e:       # a layout's finding: name the table
            if getattr(e, "table", None):
                raise
            raise self._error(name, getattr(e, "problem", None) or str(e), m.bounded_only) from None
        except IrscaleError:
            raise
        except (_DamagedError, *DAMAGE) as e:
            problem = str(e) if isinstance(e, _DamagedError) else f"cannot be read ({_reason(e)})"
            raise self._error(name, problem, m.bounded_only) from None

    def _read(self, source: _Source, info: TableInfo, m: Measure, trb: tuple | None, verify: bool) -> Table:
        a = source.attrs
        if info.rb_counts != trb:
            raise _DamagedError(f"attr rb_counts {a.get('rb_counts')!r}")
        if "rel" in a and info.rel != tuple(range(m.levels)):
            raise _DamagedError(f"attr rel {a.get('rel')!r}")
        layout = stored_layout(a)
        if layout.name not in m.layouts + ("entries",) * ("implicit" in m.layouts) + ("bounded",) * m.bounded_only:
            raise _DamagedError(f"layout {layout.name!r} for a measure of layouts {', '.join(m.layouts)}")
        size = sum(d.itemsize * math.prod(shape) for d, shape, _ in source.datasets.values())
        whole = verify or size < VERIFY_ON_OPEN_BYTES or not layout.lazy
        for name, (_, _, digest) in sorted(json.loads(a["digests"]).items()):
            if (whole or name not in layout.lazy) and _digest(source.scan(name)) != digest:
                raise _DamagedError(f"checksum mismatch (the sha256 of dataset {name} differs from its stored digest)")
        if "min_gap_exact" not in a or "redecided" not in a:
            raise _DamagedError("certificate attributes missing or not numbers")
        cert = Certificate(info.tie_method, info.error_bound, info.min_gap, info.min_gap_exact, info.redecided)
        if not cert.error_bound >= 0:
            raise _DamagedError(f"error_bound {cert.error_bound!r}")
        meta = dict(a, store_file=str(self.path), table_name=info.name,
                    rebuild_command=self.rebuild_command(info.name, m.bounded_only))
        t = layout.read(source, measure=m, n_entries=info.n_entries, n_runs=info.n_runs, certificate=cert,
                        table_rb=trb, meta=meta)
        layout.validate(t, source, deep=whole)
        return t

    @contextlib.contextmanager
    def raw(self, info: TableInfo) -> Iterator[tuple[dict, dict[str, np.ndarray]]]:
        """The attributes and the datasets (memory-mapped) of the table ``info`` lists,
        verified whole first: for copying it (:mod:`irscale.store.pack`)."""
        m = parse_measure(info.measure)
        yield self._load(m, self._table_rb(m, info.rb_counts), verify=True)[1:]

    def verify(self) -> list[str]:
        """Verify every table whole (:meth:`table` with ``verify``); returns the tables
        checked (raises CorruptStoreError on the first bad one)."""
        tables = self.tables()
        for t in tables:
            self.table(t.measure, verify=True, table_rb=t.rb_counts)
        return [t.name for t in tables]

    def verify_each(self) -> Iterator[tuple[str, str | None]]:
        """Verify every table whole and go on after a bad one: yields (table name, None) for
        a sound table, (table name, what is wrong, in a few words) for another."""
        tables, damaged = self._listing()
        for t in tables:
            try:
                self.table(t.measure, verify=True, table_rb=t.rb_counts)
            except StoreError as e:
                yield t.name, getattr(e, "problem", None) or str(e)
            else:
                yield t.name, None
        yield from damaged

    def bounded_table(self, measure: str | Measure, table_rb: tuple | None = None) -> BoundedTable | None:
        """The stored bounded table of ``measure`` (and of ``table_rb``), or None when the
        store has none: bounded scales are used only where asked for, never by :meth:`scale`."""
        m = parse_measure(measure)
        trb = self._table_rb(m, table_rb)
        return self.table(m, table_rb=trb) if m.bounded_only and self.layout_of(m, trb) == "bounded" else None

    def scale(self, measure: str | Measure, rb: RecallBase = None) -> Scale:
        """The :class:`~irscale.scales.tables.scale.Scale` of a stored table for the actual
        ``rb`` (an int, or the per-grade counts (c_1..c_G) for measures keyed by them);
        measures with a closed form (P, R, F1, RR, Rprec) need no table: without one
        stored, their closed form answers (:mod:`irscale.scales.tables.closed`)."""
        with contextlib.suppress(KeyError, TypeError):     # as given, checked once (an unhashable rb: each time)
            return self._scales[measure, rb]
        m = parse_measure(measure)
        m.check_scales()
        key = (m, m.check_rb(rb))
        scale = self._scales.get(key)
        if scale is None:
            m.check_defined(key[1])
            try:
                scale = None if m.layout == "closed" else self.table(m, table_rb=m.table_rb(key[1])).scale(key[1])
            except TableNotFoundError:
                if m.closed_form() is None:
                    raise
            scale = closed_scale(m, key[1]) if scale is None else scale
        if len(self._scales) < 4096:
            self._scales[key] = scale
            with contextlib.suppress(TypeError):
                self._scales[measure, rb] = scale
        return scale


def open_store(path: str | os.PathLike) -> Store:
    """Open a store for reading (raises StoreError for missing or foreign files)."""
    return Store(path)
