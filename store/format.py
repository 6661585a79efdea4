"""The HDF5 table format (version 3).

One file holds many tables::

    /                   attrs: format="irscale-tables", format_version=3,
                               generator="irscale", generator_version, created
    /tables/<name>      one group per table; <name> is the canonical measure name
                        (``AP@10``), followed for tables of one recall-base vector by it
                        (``nDCG(b=2,gains=(0,1,2))@10 rb=(3,10)``, ``Twist@20 rb=(4,)``)

Every table group has the attributes

    measure, family, params (JSON), rel (JSON list), n, rb_dependent, layout,
    n_entries, n_runs, n_distinct, distinct_by_rb (JSON list, rb = 1..N; [] when the
    table has no strata), rb_counts (JSON list: the recall-base vector of the table, or
    null), implicit, tie_method, error_bound, min_gap, min_gap_exact, redecided,
    generator_version, created, build_seconds, checksum (sha256 over the bytes of the
    layout's checksummed datasets, in its order), complete (True, written last)

and the datasets of its layout, which owns them (:mod:`irscale.scales.tables.layouts`):
``entries`` (ids, counts, strata, index_raw, index_cum; :mod:`irscale.scales.tables.entries`),
``implicit`` (none), ``fraction`` (num, den, counts; attr run_space) and ``formal``
(keys, counts; attrs run_space, coords). Tables written before the ``layout`` attribute
existed are ``entries`` tables, or ``implicit`` ones when their attr implicit is true.

Datasets are contiguous and uncompressed so that readers memory-map them and never read a
table whole. A table counts as present only when ``complete`` is True. Files are only
ever replaced whole (a temporary file in the same folder, then a rename), so an
interrupted write never changes a store.
"""
from __future__ import annotations

import hashlib

FORMAT_NAME = "irscale-tables"
FORMAT_VERSION = 3


def table_name(measure: str, table_rb: tuple | None = None) -> str:
    """Name of a table in the file: the canonical measure name, followed for tables of one
    recall-base vector by that vector (``nDCG(b=2,gains=(0,1,2))@10 rb=(3,10)``)."""
    if table_rb is None:
        return str(measure)
    return f"{measure} rb=({','.join(str(int(c)) for c in table_rb)})"


def table_path(measure: str, table_rb: tuple | None = None) -> str:
    """HDF5 path of a table inside the file."""
    return f"/tables/{table_name(measure, table_rb)}"


def new_checksum() -> hashlib._Hash:
    """The hash of table checksums (sha256)."""
    return hashlib.sha256()
