"""Where tables live when the user names no store: one store per user, shared by every
project, so that a scale is built once (``irscale compare`` builds what it needs there).

``$IRSCALE_STORE`` names it; else ``$XDG_CACHE_HOME/irscale/tables`` (by default
``~/.cache/irscale/tables``, a store folder), the XDG base-directory convention for data
that can be made again. A default store of an older irscale (the single file
``tables.h5`` beside it) is unpacked into it the first time it is used
(:func:`adopt_older_default`). ``irscale info`` on that path lists what it holds;
deleting it costs only the time to build the tables again.
"""
from __future__ import annotations

import os
from pathlib import Path

from irscale.enumerate.lazy import lazy_module

packing = lazy_module("irscale.store.pack")     # h5py and the reader: only when there is something to move

#: Environment variable naming the default store.
STORE_ENV = "IRSCALE_STORE"


def default_store() -> Path:
    """The path of the default store (it may not exist yet)."""
    named = os.environ.get(STORE_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "irscale" / "tables"


def adopt_older_default(path: Path) -> str | None:
    """When ``path`` (the default store) does not exist and the older default store, the
    single file ``tables.h5`` beside it, does, unpack that into ``path``; returns what was
    done, to be said (None: nothing)."""
    older = path.with_name("tables.h5")
    if path.exists() or not older.is_file():
        return None
    n = packing.unpack(older, path)
    return f"{n} tables of the default store {older} unpacked into the store folder {path} (the file is kept)"


__all__ = ["STORE_ENV", "adopt_older_default", "default_store"]
