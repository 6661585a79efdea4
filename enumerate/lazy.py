"""Modules loaded on first use.

The numba kernel modules cost about 0.4 s to import (numba itself), and most commands
(``irscale --help``, ``irscale measures``, parsing a measure name) never run a kernel.
Modules that call kernels therefore hold them as ``kernels = lazy_module(...)`` at their
top: the dependency is visible where the imports are, and the module is imported (with
numba) the first time one of its attributes is used.

The stand-in is not put in ``sys.modules`` (as :class:`importlib.util.LazyLoader` does):
an import statement reads ``__spec__`` of what it finds there, and an error raised while
that read loads the module (Ctrl-C among its imports) is dropped by the interpreter,
leaving a half-initialised module behind. Here the module is imported by
:func:`importlib.import_module` on first use, so a failed or interrupted import leaves
nothing behind, raises where it happened, and is tried again on the next use.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any


class _Deferred(ModuleType):
    """Stands for the module of its name: attributes are read from (and written to) the
    module, imported on the first read."""

    def __getattr__(self, attr: str) -> Any:       # only for what the stand-in itself lacks
        return getattr(importlib.import_module(self.__name__), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(importlib.import_module(self.__name__), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(importlib.import_module(self.__name__), attr)

    def __dir__(self) -> list[str]:
        return dir(importlib.import_module(self.__name__))

    def __repr__(self) -> str:
        return f"<module {self.__name__!r}, imported on first use>"

    def __reduce__(self) -> tuple:                 # pickled by name, as modules are by reference
        return importlib.import_module, (self.__name__,)


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, imported when one of its attributes is first read. Already
    imported modules are returned as they are; a module that cannot be found raises
    :class:`ModuleNotFoundError` here, not at its first use."""
    if name in sys.modules:
        return sys.modules[name]
    if importlib.util.find_spec(name) is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    return _Deferred(name)
