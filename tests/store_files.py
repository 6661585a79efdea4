"""Where tests reach into a store's files: a table's file in a store folder, and stores
packed into one file (the single-file layout, read directly), which the tests of damaged
stores edit with h5py (:func:`rewrite`: a crafted file, its checksum made valid again)."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import h5py
import numpy as np

import irscale
from irscale.store import folder
from irscale.store.format import decode_attrs, table_checksum
from irscale.store.pack import pack


def table_file(store: str | os.PathLike, name: str) -> Path:
    """The file of the table called ``name`` in the store folder ``store``."""
    return Path(store) / folder.file_of(name)


def build_packed(path: str | os.PathLike, measures, **options) -> Path:
    """Build ``measures`` into a store folder beside ``path`` and pack it into the file
    ``path`` (replacing it); returns ``path``."""
    path = Path(path)
    built = path.with_name(path.name + ".folder")
    irscale.build_store(built, measures, **options)
    if path.exists():
        path.unlink()
    pack(built, path)
    shutil.rmtree(built)
    return path


def rewrite(file: str | os.PathLike, change: Callable[[h5py.Group], None], group: str = "/",
            checksum: bool = True) -> None:
    """Apply ``change`` to a table (the root of ``file``, or its ``group``), text
    attributes kept fixed-length as irscale writes them, and (``checksum``) give it a
    valid checksum again: a crafted file, which only the checks past the checksum catch."""
    with h5py.File(file, "r+") as f:
        g = f[group]
        change(g)
        for k, v in list(g.attrs.items()):
            if isinstance(v, str):
                g.attrs[k] = np.bytes_(v.encode())
        if checksum:
            g.attrs["checksum"] = np.bytes_(table_checksum(decode_attrs(g.attrs)).encode())
