"""Modules loaded on first use.

The numba kernel modules cost about 0.4 s to import (numba itself), and most commands
(``irscale --help``, ``irscale measures``, parsing a measure name) never run a kernel.
Modules that call kernels therefore hold them as ``kernels = lazy_module(...)`` at their
top: the dependency is visible where the imports are, and the module is imported (with
numba) the first time one of its attributes is used.
"""
from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, imported when one of its attributes is first read
    (:class:`importlib.util.LazyLoader`). Already imported modules are returned as they are."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"no module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
