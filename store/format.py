"""The HDF5 table format (version 3).

One file holds many tables::

    /                   attrs: format="irscale-tables", format_version=3,
                               generator="irscale", generator_version, created
    /tables/<measure>   one group per table; <measure> is the canonical measure name
                        (``AP@10``). One table serves every recall base, except for
                        graded RB-dependent measures: one table per capped per-grade
                        count vector, named ``<measure> rb=(c_1,...,c_G)``, holding the
                        runs feasible for it (attr rb_counts, no strata)
        ids      uint32/uint64 (E,)  smallest run id of each entry, entries in increasing
                                     value order (absent for implicit tables)
        counts   uint8..uint64 (E,)  runs per entry (absent for implicit tables: all 1)
        strata   uint8 (E,)          RB measures only: bits 0-6 the number of relevant
                                     documents of the entry's runs, bit 7 set when the
                                     entry starts a new distinct value
        index_raw float64            raw value of every 64th entry (lookup index)
        index_cum int64 (E/1024+1, R) distinct values present per recall base before each
                                     block of 1024 entries (attr index_blocks = [64, 1024])
        attrs    measure, family, params (JSON), rel (JSON list), n, rb_dependent,
                 implicit, n_entries, n_runs, n_distinct (whole space), distinct_by_rb,
                 rb_counts (JSON list or null)
                 (JSON list, rb = 1..N), tie_method, error_bound, min_gap, min_gap_exact,
                 redecided, generator_version, created, build_seconds,
                 checksum (sha256 over the datasets' bytes in the order ids, counts,
                 strata), complete (True, written last)

Tables of measures with exact fractions per run (Twist, the CRP indicators, the
utilities while their keys fit 62 bits) have attr ``layout = "fraction"`` and the
datasets num, den (int64, reduced, in value order) and counts instead (see
:mod:`irscale.scales.tables.fraction`); tables of formal keys (DCGU, OIE, utilities with
larger keys as 30-bit limbs) ``layout = "formal"``, attr coords and the datasets keys
(int64 (K, C)) and counts (:mod:`irscale.scales.tables.formal`). Both record
``run_space`` ("fixed", or "truncated" for rankings of length 0..N).

Entries and run ids are defined in :mod:`irscale.scales.tables.scale`; values are recomputed
from run ids (:mod:`irscale.scales.measures.split_forms`). Datasets are contiguous and uncompressed so
that readers memory-map them and never read a table whole. A table counts as present
only when ``complete`` is True. Files are only ever replaced whole (a temporary file in
the same folder, then a rename), so an interrupted write never changes a store.
"""
from __future__ import annotations

import hashlib

FORMAT_NAME = "irscale-tables"
FORMAT_VERSION = 3
DATASETS = ("ids", "counts", "strata")
#: Datasets of tables of exact fractions (attr layout = "fraction"; Twist, CRP): per
#: distinct value its reduced numerator and denominator (int64) and run count.
FRACTION_DATASETS = ("num", "den", "counts")
#: Datasets of tables of formal keys (attr layout = "formal", coords = the unit labels;
#: DCGU, OIE): per distinct value its integer coefficients (int64 (K, C)) and run count.
FORMAL_DATASETS = ("keys", "counts")


def table_name(measure: str, rb_counts: tuple | None = None) -> str:
    """Name of a table in the file: the canonical measure name, followed for graded
    RB-dependent measures by the capped per-grade counts of its table
    (``nDCG(b=2,gains=(0,1,2))@10 rb=(3,10)``)."""
    if rb_counts is None:
        return str(measure)
    return f"{measure} rb=({','.join(str(int(c)) for c in rb_counts)})"


def table_path(measure: str, rb_counts: tuple | None = None) -> str:
    """HDF5 path of a table inside the file."""
    return f"/tables/{table_name(measure, rb_counts)}"


def new_checksum():
    return hashlib.sha256()
