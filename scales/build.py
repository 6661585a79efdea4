"""Building tables and scales in memory from an exhaustive enumeration."""
from __future__ import annotations

import functools
from collections import defaultdict
from typing import Iterable, Iterator

import numpy as np

from irscale.errors import RecallBaseError
from irscale.scales.certify import certificate, value_order
from irscale.scales.measure import Measure
from irscale.scales.parse import parse_measure
from irscale.scales.scale import Scale, Table


def table_rbs(measure: Measure, rbs="all") -> list[int | None]:
    """Table recall bases to build for ``measure``: ``"all"`` means 1..N; a list of
    recall bases is mapped to min(RB, N) and deduplicated. [None] for measures without
    RB."""
    if not measure.rb_dependent:
        return [None]
    if rbs is None or (isinstance(rbs, str) and rbs == "all"):
        return list(range(1, measure.n + 1))
    out = []
    for rb in ([rbs] if isinstance(rbs, int) else rbs):
        t = measure.table_rb(rb)
        if t not in out:
            out.append(t)
    if not out:
        raise RecallBaseError(f"{measure}: no recall base given")
    return sorted(out)


def tables_from_distinct(distinct, rbs="all") -> list[Table]:
    """Tables (one per table recall base) from an enumeration result."""
    from irscale.enumerate.reduce import KeyCodec

    measure = distinct.measure
    spec = measure.key_spec()
    keys, strata, counts = distinct.keys, distinct.strata, distinct.counts
    codec = KeyCodec(keys.shape[1], max(1, int(spec.max_key).bit_length()), stratified=False)
    if strata is None:
        ukeys, inv = keys, np.arange(keys.shape[0])
    else:
        packed = codec.encode(keys, None)
        uniq, inv = np.unique(packed, return_inverse=True)
        ukeys = codec.decode(uniq)[0]
    order, redecided = value_order(spec, ukeys)
    tables = []
    for trb in table_rbs(measure, rbs):
        mask = slice(None) if strata is None or trb >= measure.n else strata <= trb
        cnt = np.bincount(inv[mask], weights=counts[mask].astype(np.float64), minlength=ukeys.shape[0])
        cnt = np.rint(cnt).astype(np.int64)[order]
        present = cnt > 0
        tkeys = np.ascontiguousarray(ukeys[order][present])
        tcounts = cnt[present]
        values = spec.float_values(tkeys, measure, trb)
        cert = certificate(spec, measure, trb, tkeys, values, redecided)
        tables.append(Table(measure, trb, tkeys, tcounts, int(tcounts.sum()), cert))
    return tables


def build_tables(measures: Iterable, rbs="all", n_jobs: int = 1, progress: bool = False,
                 chunk_size: int | None = None) -> Iterator[list[Table]]:
    """Enumerate and yield, per measure, the list of its tables (one per table RB).

    Measures with the same N and REL share one pass over the run space.
    """
    from irscale.enumerate.engine import DEFAULT_CHUNK, enumerate_distinct

    groups: dict[tuple, list[Measure]] = defaultdict(list)
    for m in measures:
        m = parse_measure(m)
        groups[(m.n, m.levels)].append(m)
    for (n, levels), ms in sorted(groups.items()):
        for d in enumerate_distinct(ms, n_jobs=n_jobs, chunk_size=chunk_size or DEFAULT_CHUNK,
                                    progress=progress, desc=f"N={n}: {len(ms)} measure(s)"):
            yield tables_from_distinct(d, rbs)


@functools.lru_cache(maxsize=64)
def _table(measure: Measure, table_rb: int | None) -> Table:
    [tables] = build_tables([measure], rbs=[table_rb] if table_rb is not None else "all")
    return tables[0]


def scale(measure: str | Measure, rb: int | None = None) -> Scale:
    """Build the unq interval scale of ``measure`` in memory (fine up to N of about 24).

    Parameters
    ----------
    measure : str or Measure
        Measure name, e.g. ``"AP@10"``, ``"RBP(p=0.8)@20"``, ``"nDCG(b=2)@10"``.
    rb : int, optional
        Recall base (number of relevant documents of the topic). Required for
        RB-dependent measures (R, F1, AP, nDCG, nDCG_trec), rejected for the others.
        For rb > N the table of rb = N is used with values for the actual rb.

    Returns
    -------
    Scale
        ``scale.values``, ``scale.counts``, ``scale.rank(values)``,
        ``scale.rank_runs(runs)``. Results are cached per (measure, min(rb, N)).
    """
    m = parse_measure(measure)
    trb = m.table_rb(rb)
    return Scale(_table(m, trb), rb)
