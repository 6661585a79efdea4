"""irscale: interval scales for IR evaluation measures.

Enumerate every judged run of length N, keep each measure's mathematically distinct
values, and map every value to its rank among them (the unq interval scale). Tables are
built once, stored in HDF5 and used to transform real systems' scores.

>>> import irscale
>>> s = irscale.scale("DCG(b=2)@4")
>>> len(s), s.rank_runs([[1, 1, 1, 1], [0, 0, 0, 0]]).tolist()
(12, [12, 1])

The names below are imported on first use (PEP 562), so ``import irscale`` is instant and
loads numba, pandas or h5py only when something needs them.
"""
from __future__ import annotations

import importlib
import os

from irscale.errors import (
    BuildTooLargeError,
    CertificationError,
    CorruptStoreError,
    DiskFullError,
    IrscaleError,
    IrscaleWarning,
    MeasureError,
    OracleListError,
    OutputError,
    RecallBaseError,
    RunError,
    StoreBusyError,
    StoreError,
    TableNotFoundError,
    TrecFormatError,
    ValueNotInScaleError,
)

# From the repository root (``python -c``, ``python -m irscale``) this source folder comes
# first on sys.path and shadows the installed package, whose subpackages are mapped to the
# root's folders (pyproject's package-dir: irscale.scales -> scales/, irscale.store ->
# store/, ...): the root joins the package's path, so that they import from the source
# as they do from an install.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isfile(os.path.join(_ROOT, "pyproject.toml")) and os.path.isfile(
        os.path.join(_ROOT, "scales", "__init__.py")):
    __path__.append(_ROOT)  # noqa: F821 (a package's __path__)

#: Public name -> the module that defines it.
_API = {
    "__version__": "irscale.version",
    "scale": "irscale.scales.tables.build",
    "bounded_scale": "irscale.scales.tables.bounded",
    "build_tables": "irscale.scales.tables.build",
    "Scale": "irscale.scales.tables.scale",
    "Table": "irscale.scales.tables.scale",
    "Certificate": "irscale.scales.tables.certificate",
    "Measure": "irscale.scales.measures.measure",
    "Param": "irscale.scales.measures.params",
    "parse_measure": "irscale.scales.measures.parse",
    "parse_measures": "irscale.scales.measures.parse",
    "families": "irscale.scales.measures.registry",
    "Store": "irscale.store.reader",
    "open_store": "irscale.store.reader",
    "build_store": "irscale.store.fill",
    "transform": "irscale.scales.runs.transform",
    "Evaluator": "irscale.scales.runs.evaluator",
    "Conventions": "irscale.scales.runs.conventions",
    "read_qrels": "irscale.scales.runs.qrels",
    "read_run": "irscale.scales.runs.run_files",
    "read_scores": "irscale.scales.runs.scores",
    "write_scores": "irscale.scales.runs.scores",
    "Scaled": "irscale.scales.runs.ir_measures_scaled",
    "wide": "irscale.scales.runs.results",
    "to_ranx_runs": "irscale.scales.runs.results",
    "ranx_compare": "irscale.scales.runs.results",
    "parse_user_measures": "irscale.scales.measures.user_names",
    "standardize": "irscale.scales.runs.standardize",
    "analyze": "irscale.scales.analysis.analyze",
    "compare": "irscale.scales.analysis.compare",
    "leaderboard": "irscale.scales.analysis.leaderboard",
    "Leaderboard": "irscale.scales.analysis.leaderboard",
    "default_store": "irscale.store.location",
}

__all__ = [*_API, "IrscaleWarning", "TrecFormatError", "OutputError", "IrscaleError", "MeasureError",
           "RecallBaseError", "RunError", "BuildTooLargeError", "StoreError", "TableNotFoundError",
           "ValueNotInScaleError", "CertificationError", "StoreBusyError", "CorruptStoreError", "DiskFullError",
           "OracleListError"]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'irscale' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
