"""Where tables live when the user names no store: one store per user, shared by every
project, so that a scale is built once: ``$IRSCALE_STORE``, else
``$XDG_CACHE_HOME/irscale/tables`` (by default ``~/.cache/irscale/tables``), after the XDG
convention for data that can be made again. ``irscale info`` lists what it holds; deleting
it costs only the time to build the tables again.
"""
from __future__ import annotations

import os
from pathlib import Path

from irscale.errors import StoreError

#: Environment variable naming the default store.
STORE_ENV = "IRSCALE_STORE"


def default_store() -> Path:
    """The path of the default store (it may not exist yet); raises StoreError, in one
    line, when ``$IRSCALE_STORE`` is set to blanks or names the root or the current folder
    ("." is a folder of other files, never a store of its own)."""
    named = os.environ.get(STORE_ENV)
    if named:
        path = Path(named.strip()).expanduser()
        if not named.strip() or path.name in ("", "..") or path.resolve() == Path(path.anchor or "/"):
            raise StoreError(f"{STORE_ENV}={named!r} names no store folder: set it to the path of a folder for "
                             f"irscale's tables, such as ~/irscale-tables (or unset it for ~/.cache/irscale/tables)")
        return path
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "irscale" / "tables"
