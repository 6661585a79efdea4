"""The HDF5 table format (version 1).

One file holds many tables::

    /                      attrs: format="irscale-tables", format_version=1,
                                  generator="irscale", generator_version, created
    /tables/<measure>/<rb> one group per table; <measure> is the canonical measure name
                           (``AP@10``), <rb> is ``rb=K`` (K = min(RB, N)) or ``all``
        keys    uint64 (K, W)  exact keys in increasing value order
        values  float64 (K,)   distinct values (for rb=K), increasing
        counts  int64 (K,)     runs per distinct value
        attrs   measure, family, params (JSON), rel (JSON list of degrees), n, rb (0: no
                RB), n_runs, n_distinct, tie_method, error_bound, min_gap, min_gap_exact,
                redecided, generator_version, created, checksum (sha256 of the three
                datasets' bytes), complete (True, written last)

A table counts as present only when its ``complete`` attribute is True and, when read,
its checksum matches. Files are only ever replaced whole (written to a temporary file in
the same folder, then renamed), so an interrupted write never changes an existing store.
"""
from __future__ import annotations

import hashlib

import numpy as np

FORMAT_NAME = "irscale-tables"
FORMAT_VERSION = 1


def table_path(measure: str, table_rb: int | None) -> str:
    """HDF5 path of a table inside the file."""
    return f"/tables/{measure}/" + ("all" if table_rb is None else f"rb={table_rb}")


def checksum(keys: np.ndarray, values: np.ndarray, counts: np.ndarray) -> str:
    """sha256 over the bytes of the three datasets (little-endian, C order)."""
    h = hashlib.sha256()
    for arr, dt in ((keys, "<u8"), (values, "<f8"), (counts, "<i8")):
        h.update(np.ascontiguousarray(arr, dtype=dt).tobytes())
    return h.hexdigest()
