"""irscale: interval scales for IR evaluation measures.

Enumerate every judged run of length N, keep each measure's mathematically distinct
values, and map every value to its rank among them (the unq interval scale). Tables are
built once, stored in HDF5 and used to transform real systems' scores.

>>> import irscale
>>> s = irscale.scale("DCG(b=2)@4")
>>> len(s), s.rank_runs([[1, 1, 1, 1], [0, 0, 0, 0]]).tolist()
(12, [12, 1])
"""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("irscale")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

from irscale.errors import (  # noqa: E402
    CertificationError, IrscaleError, IrscaleWarning, MeasureError, OutputError, RecallBaseError, RunError,
    StoreError, TableNotFoundError, TrecFormatError, ValueNotInScaleError,
)
from irscale.scales import Measure, Scale, Table, families, parse_measure, parse_measures, scale  # noqa: E402
from irscale.store import Store, build_store, open_store  # noqa: E402
from irscale.scales.runs.transform import read_scores, transform, write_scores  # noqa: E402
from irscale.scales.runs.trec import read_qrels, read_run  # noqa: E402

__all__ = [
    "__version__", "scale", "open_store", "build_store", "Store", "Scale", "Table", "Measure",
    "parse_measure", "parse_measures", "families", "transform", "read_qrels", "read_run", "read_scores",
    "write_scores", "IrscaleWarning", "TrecFormatError", "OutputError", "IrscaleError", "MeasureError", "RecallBaseError",
    "RunError", "StoreError", "TableNotFoundError", "ValueNotInScaleError", "CertificationError",
]
