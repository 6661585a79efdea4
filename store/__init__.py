"""The table store, a folder of immutable table files (:mod:`.folder`): table format
(:mod:`.format`), writer (:mod:`.writer`), reader (:mod:`.reader`, also of packed
files), pack and unpack (:mod:`.pack`), filling a store with the tables it lacks
(:mod:`.fill`, :mod:`.fill_bounded`). The names below are imported on first use (PEP
562): reading a store does not load the build machinery that filling one needs."""
from __future__ import annotations

import importlib

_API = {"FORMAT_NAME": "irscale.store.format", "FORMAT_VERSION": "irscale.store.format",
        "Store": "irscale.store.reader", "open_store": "irscale.store.reader", "build_store": "irscale.store.fill"}

__all__ = list(_API)


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'irscale.store' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
