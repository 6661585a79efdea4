"""Where tables live when the user names no store: one store per user, shared by every
project, so that a scale is built once (``irscale compare`` builds what it needs there).

``$IRSCALE_STORE`` names it; else ``$XDG_CACHE_HOME/irscale/tables.h5`` (by default
``~/.cache/irscale/tables.h5``), the XDG base-directory convention for data that can be
made again. ``irscale info`` on that path lists what it holds; deleting it costs only the
time to build the tables again.
"""
from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the default store.
STORE_ENV = "IRSCALE_STORE"


def default_store() -> Path:
    """The path of the default store (it may not exist yet)."""
    named = os.environ.get(STORE_ENV, "").strip()
    if named:
        return Path(named).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "irscale" / "tables.h5"


__all__ = ["STORE_ENV", "default_store"]
