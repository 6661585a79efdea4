"""One file for sharing: :func:`pack` writes every table of a store folder into one HDF5
file (groups ``/tables/NAME``), read directly like a folder; :func:`unpack` makes a store
folder of it. Both verify every table whole and copy it from the file they verified (a
damaged table is refused, naming it); irscale writes what they write (:func:`_copy`)."""
from __future__ import annotations

import os
from pathlib import Path

import h5py

from irscale.errors import StoreError
from irscale.store import folder
from irscale.store.format import TableInfo, table_path
from irscale.store.reader import Store
from irscale.store.writer import hdf5_written, stored, write_root_attrs


def pack(store: str | os.PathLike, out: str | os.PathLike) -> int:
    """Write the tables of the store folder at ``store`` into the new file ``out`` (written
    aside, flushed, renamed into place); returns the number of tables."""
    source, out = Store(store), Path(out)
    if out.exists() or out.is_symlink():
        raise StoreError(f"{out} exists; give a new file name")
    if not out.parent.is_dir():
        raise StoreError(f"cannot write {out}: folder {out.parent} does not exist")
    inside = Path(os.path.realpath(out.parent))
    if source.path.is_dir() and Path(os.path.realpath(source.path)) in (inside, *inside.parents):
        raise StoreError(f"{out} is inside the store {store}: give a file outside it")
    tables = source.tables()

    def write(tmp: Path) -> None:
        with hdf5_written(tmp) as f:          # every error of the close and the flush fails the pack
            write_root_attrs(f)
            f.create_group("tables")
            for t in tables:
                _copy(source, t, f.create_group(table_path(t.name)))
    try:
        folder.publish(out.parent, out.name, write)
    except OSError as e:
        raise StoreError(f"cannot write {out}: {e.strerror or e}") from None
    return len(tables)


def unpack(file: str | os.PathLike, out: str | os.PathLike) -> int:
    """Make the store folder ``out`` (new, or a store folder to add to) of the tables of
    the packed file ``file``; returns the number of tables."""
    source, out = Store(file), Path(out)
    if source.path.is_dir():
        raise StoreError(f"{file} is a store folder already")
    if out.exists() and not (out.is_dir() and (out / folder.MANIFEST).exists()):
        raise StoreError(f"{out} exists and is not a store folder; give a new folder name")
    tables = source.tables()
    for t in tables:                      # every table verified before the first is written
        source.table(t.measure, verify=True, table_rb=t.rb_counts)

    def write(tmp: Path, t: TableInfo) -> None:
        with hdf5_written(tmp) as f:
            _copy(source, t, f)
    try:
        with folder.writing(out, [t.name for t in tables]):
            for t in tables:
                folder.publish(out, folder.file_of(t.name), lambda tmp, t=t: write(tmp, t))
    except OSError as e:
        raise StoreError(f"cannot write {out}: {e.strerror or e}") from None
    return len(tables)


def _copy(source: Store, table: TableInfo, dst: h5py.Group) -> None:
    """A table's datasets (contiguous, as irscale writes them) and attributes, verified
    whole, from ``source`` into ``dst``; ``complete`` last."""
    with source.raw(table) as (attrs, arrays):
        for name, arr in arrays.items():
            dst.create_dataset(name, data=arr)
        for key, value in attrs.items():
            if key != "complete":
                dst.attrs[key] = stored(value)
        dst.attrs["complete"] = True
