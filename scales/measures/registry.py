"""The registry of measure families: every module of
:mod:`irscale.scales.measures.families` is imported, and every
:class:`~irscale.scales.measures.measure.Measure` subclass it defines with a ``name`` is a
family (modules named ``*_kernels`` hold a family's numba kernels, loaded only to score
runs). Adding a family is adding a module; there is no list to edit.

One registry serves parsing, building, transforms, the service and ``irscale measures``.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil

from irscale.scales.measures import families as _families_package
from irscale.scales.measures.measure import Measure


@functools.lru_cache(maxsize=1)
def _discover() -> dict[str, type]:
    found: dict[str, type] = {}
    for info in sorted(pkgutil.iter_modules(_families_package.__path__), key=lambda i: i.name):
        if info.name.endswith("_kernels"):
            continue                          # numba: imported when runs are scored
        module = importlib.import_module(f"{_families_package.__name__}.{info.name}")
        for obj in vars(module).values():
            if (isinstance(obj, type) and issubclass(obj, Measure) and obj.__module__ == module.__name__
                    and obj.__dict__.get("name")):
                if obj.name in found and found[obj.name] is not obj:
                    raise RuntimeError(f"measure family {obj.name} defined twice ({found[obj.name].__module__} "
                                       f"and {module.__name__})")
                found[obj.name] = obj
    return found


def families() -> dict[str, type]:
    """All measure families by name, in alphabetical order (a new dict; the family modules
    are imported on first use)."""
    return dict(sorted(_discover().items(), key=lambda kv: kv[0].lower()))
