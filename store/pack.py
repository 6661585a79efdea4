"""One file for sharing: :func:`pack` writes every table of a store folder into one HDF5
file (the single-file layout irscale wrote before store folders: groups ``/tables/NAME``,
today's table attributes and datasets in each), and :func:`unpack` makes a store folder of
such a file (the conversion of a single-file store). A packed file is read directly, like
a folder (:class:`irscale.store.reader.Store`). Both verify every table whole before they
copy it: a damaged table is refused, naming it, and never copied.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import h5py

from irscale.errors import StoreError
from irscale.store import folder
from irscale.store.format import table_path
from irscale.store.reader import Store
from irscale.store.writer import hdf5_written, write_root_attrs


def _verified(store: Store) -> list[dict]:
    """The tables of ``store``, each verified whole (CorruptStoreError names a bad one)."""
    tables = store.tables()
    for t in tables:
        store.table(t["measure"], verify=True, table_rb=t.get("rb_counts"))
    return tables


def pack(store: str | os.PathLike, out: str | os.PathLike) -> int:
    """Write the tables of the store at ``store`` into the new file ``out`` (written aside,
    flushed, renamed into place); returns the number of tables."""
    source, out = Store(store), Path(out)
    if out.exists():
        raise StoreError(f"{out} exists; give a new file name")
    if not out.parent.is_dir():
        raise StoreError(f"cannot write {out}: folder {out.parent} does not exist")
    tables = _verified(source)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.tmp-", dir=out.parent)
    renamed = False
    try:
        os.close(fd)
        with hdf5_written(Path(tmp)) as f:          # every error of the close and the flush fails the pack
            write_root_attrs(f)
            f.create_group("tables")
            for t in tables:
                with source.group(t["name"]) as (g, _):
                    _copy(g, f.create_group(table_path(t["name"])))
        os.replace(tmp, out)
        renamed = True
        folder.fsync_folder(out.parent)
    except OSError as e:
        if renamed:                  # the folder could not be flushed: the new file goes again
            with contextlib.suppress(OSError):
                os.unlink(out)
        raise StoreError(f"cannot write {out}: {e.strerror or e}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return len(tables)


def unpack(file: str | os.PathLike, out: str | os.PathLike) -> int:
    """Make the store folder ``out`` (new, or a store folder to add to) of the tables of
    the packed file ``file``; returns the number of tables."""
    source, out = Store(file), Path(out)
    if source.path.is_dir():
        raise StoreError(f"{file} is a store folder already")
    if out.exists() and not (out.is_dir() and (out / folder.MANIFEST).exists()):
        raise StoreError(f"{out} exists and is not a store folder; give a new folder name")
    tables = _verified(source)
    folder.create(out)

    def write(name: str):
        def at(tmp: Path) -> None:
            with source.group(name) as (g, _), hdf5_written(tmp) as f:
                _copy(g, f)
        return at
    try:
        for t in tables:
            folder.publish(out, folder.file_of(t["name"]), write(t["name"]))
    except OSError as e:
        raise StoreError(f"cannot write {out}: {e.strerror or e}") from None
    return len(tables)


def _copy(src: h5py.Group, dst: h5py.Group) -> None:
    """A table's datasets (contiguous, as written) and attributes from ``src`` into ``dst``."""
    for name in src:
        src.file.copy(src[name], dst, name=name)
    for key, value in src.attrs.items():
        dst.attrs[key] = value
