"""The table store: a folder of immutable table files (:mod:`.folder`), the table format
(:mod:`.format`), writer, reader (also of packed files: :mod:`.pack`) and the filling of a
store with the tables it lacks (:mod:`.fill`, :mod:`.fill_bounded`). The names below are
imported on first use (PEP 562): reading a store does not load what filling one needs."""
from __future__ import annotations

import importlib

_API = {"FORMAT_NAME": "irscale.store.format", "FORMAT_VERSION": "irscale.store.format",
        "Store": "irscale.store.reader", "open_store": "irscale.store.reader", "build_store": "irscale.store.fill"}
__all__ = list(_API)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'irscale.store' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name]), name)
