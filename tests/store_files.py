"""Where tests reach into a store's files: a table's file in a store folder, and stores
packed into one file (the single-file layout, read directly), which the tests of damaged
and old stores edit with h5py."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import irscale
from irscale.store import folder
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
