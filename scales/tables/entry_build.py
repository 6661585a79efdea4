"""Building entry tables (:mod:`irscale.scales.tables.entries`) of key measures.

* The split path: the measure's split form goes to the split enumerator
  (:mod:`irscale.enumerate.split`), bucket by bucket (resumable with a work folder).
* The generic path: every run scored (:mod:`irscale.enumerate.generic`); measures with the
  same N and REL share one pass over the run space. It is the reference, and the path of
  keys without a split form and of tables keyed by per-grade counts (one enumeration
  stratified by the runs' per-grade count code gives every vector's table; a vector whose
  feasible runs are a small part of the space,
  :meth:`~irscale.scales.measures.keyed.KeyMeasure.own_pass`, has its feasible runs
  enumerated on their own: TREC-COVID's (7, 2) at N = 20 has 1.4e7 of 3.5e9).

Each table gets its certificate: the smallest gap between neighbouring values, decided
exactly for the pair of representatives whose float gap is smallest.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from irscale.enumerate.generic import DEFAULT_CHUNK, Distinct, enumerate_distinct, enumerate_feasible_distinct
from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.reduce import KeyCodec
from irscale.enumerate.runspace import count_dtype, decode_count_codes, id_dtype
from irscale.enumerate.split import BucketResult, SavedBucket, smallest_gap, split_enumerate
from irscale.enumerate.splitform import SplitForm
from irscale.enumerate.words import words_to_ints
from irscale.errors import CertificationError, MeasureError
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.measure import Measure
from irscale.scales.tables.certificate import Certificate, value_order
from irscale.scales.tables.entry_table import EntryTable, pack_strata
from irscale.scales.tables.scale import BuildSettings

#: The split kernels (small calls run interpreted: :mod:`irscale.enumerate.interpreted`).
sk = tiered(lazy_module("irscale.enumerate.split_kernels"))


def certificate_of(measure: KeyMeasure, sf: SplitForm, min_gap_raw: float, pair: tuple, redecided: int,
                   table_rb: tuple[int, ...] | None = None) -> Certificate:
    """Certificate of a table, stated for its recall base (:meth:`KeyMeasure.certificate_rb`):
    float error bound of its values, and the smallest gap between neighbouring values,
    decided exactly for the pair of representatives ``pair`` whose float gap is smallest."""
    spec = measure.spec
    rb = measure.certificate_rb(table_rb)
    bound = spec.error_bound(rb)
    method = spec.tie_method_of(sf)
    if not sf.exact:  # values come from split raws: include their float error
        bound = max(bound, sf.bound * spec.value_factor(rb))
    if not np.isfinite(min_gap_raw) or pair[0] < 0:
        return Certificate(method, bound, float("inf"), "inf", redecided)
    if sf.exact:
        keys = [int(sf.raw_of_ids(np.array([i]))[0]) for i in pair]
    else:
        keys = words_to_ints(sk.exact_keys(np.array(pair, dtype=np.int64), sf.KA, sf.KB, sf.state, sf.S))
    gap, text = spec.certified_gap(keys[0], keys[1], rb)
    if gap <= 0:
        raise CertificationError(f"{measure}: neighbouring distinct values out of order")
    return Certificate(method, bound, gap, text, redecided)


def table_from_entries(measure: KeyMeasure, sf: SplitForm, ids: np.ndarray, counts: np.ndarray,
                       strata: np.ndarray | None, first: np.ndarray | None, min_gap_raw: float, pair: tuple[int, int],
                       redecided: int, n_runs: int, table_rb: tuple[int, ...] | None = None) -> EntryTable:
    """Assemble a table from entry arrays, with compact dtypes (strata packed with the
    new-value flag when the split form is stratified)."""
    ids = np.ascontiguousarray(ids, dtype=id_dtype(measure.levels, measure.n))
    counts = np.asarray(counts)
    counts = np.ascontiguousarray(counts, dtype=count_dtype(int(counts.max()) if counts.size else 1))
    packed = np.ascontiguousarray(pack_strata(strata, first)) if sf.stratified else None
    cert = certificate_of(measure, sf, min_gap_raw, pair, redecided, table_rb)
    return EntryTable(measure=measure, ids=ids, counts=counts, strata=packed, stratified=sf.stratified,
                      n_entries=int(ids.shape[0]), n_runs=n_runs, certificate=cert, table_rb=table_rb)


def _value_positions(measure, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(position in value order of each row's key, the rows' distinct-key index, clusters
    re-decided): distinct keys are ordered by value once (certified)."""
    spec = measure.spec
    codec = KeyCodec(keys.shape[1], max(1, int(spec.max_key).bit_length()), has_stratum=False)
    uniq, inv = np.unique(codec.encode(keys, None), return_inverse=True)
    order, redecided = value_order(spec, codec.decode(uniq)[0])
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    return pos, inv.reshape(-1), redecided


def table_from_distinct(measure: KeyMeasure, distinct: Distinct) -> EntryTable:
    """Generic path: distinct (stratum, key) rows with counts and smallest run ids ->
    table entries in value order."""
    sf = measure.split_form()
    keys, strata, counts, minids = distinct.keys, distinct.strata, distinct.counts, distinct.minids
    if strata is None:
        order, redecided = value_order(measure.spec, keys)
        vpos = np.empty_like(order)
        vpos[order] = np.arange(order.size)
        o = np.argsort(vpos, kind="stable")
        first = np.ones(o.size, bool)
        st = np.zeros(o.size, np.uint8)
    else:
        pos, inv, redecided = _value_positions(measure, keys)
        vpos = pos[inv]
        o = np.lexsort((strata, vpos))
        first = np.concatenate(([True], vpos[o][1:] != vpos[o][:-1]))
        st = strata[o]
    ids = minids[o]
    min_gap, pair = smallest_gap(sf, ids[first])
    return table_from_entries(measure, sf, ids, counts[o], st, first, min_gap, pair, redecided, distinct.n_runs)


def tables_by_counts(measure: KeyMeasure, distinct: Distinct, vectors: Iterable[tuple[int, ...]]) -> list[EntryTable]:
    """Tables of a graded RB-dependent measure, one per per-grade count vector (c_1..c_G)
    (each capped at N), from one enumeration stratified by the runs' per-grade counts: the
    table of c holds the distinct values of the runs with n_g <= c_g for every grade g
    (the runs feasible for a topic with those counts), their run counts and smallest ids.
    The order of values does not depend on c (the normaliser is a positive constant), so
    the value order of all keys is decided once."""
    sf = measure.split_form()
    pos, inv, redecided = _value_positions(measure, distinct.keys)
    vpos = pos[inv]
    o = np.argsort(vpos, kind="stable")              # rows in value order once: every subset stays sorted
    vpos, counts, minids = vpos[o], distinct.counts[o], distinct.minids[o]
    have = decode_count_codes(distinct.strata[o], measure.n, measure.levels - 1)
    out = []
    for c in vectors:
        feasible = (have <= np.asarray(c, dtype=np.int64)).all(axis=1)
        v, cnt, mid = vpos[feasible], counts[feasible], minids[feasible]
        starts = np.flatnonzero(np.concatenate(([True], v[1:] != v[:-1]))) if v.size else np.zeros(0, np.int64)
        ids = np.minimum.reduceat(mid, starts) if v.size else np.zeros(0, np.int64)
        cnt = np.add.reduceat(cnt, starts) if v.size else np.zeros(0, np.int64)
        ids = np.ascontiguousarray(ids, dtype=id_dtype(measure.levels, measure.n))
        min_gap, pair = smallest_gap(sf, ids.astype(np.int64))
        cert = certificate_of(measure, sf, min_gap, pair, redecided, tuple(c))
        cnt = np.ascontiguousarray(cnt, dtype=count_dtype(int(cnt.max()) if cnt.size else 1))
        out.append(EntryTable(measure=measure, ids=ids, counts=cnt, n_entries=int(ids.shape[0]),
                              n_runs=int(cnt.sum(dtype=np.uint64)), certificate=cert,
                              table_rb=tuple(int(x) for x in c)))
    return out


def table_from_buckets(measure: KeyMeasure, sf: SplitForm, parts: list[BucketResult | SavedBucket],
                       concatenate: bool = True) -> EntryTable:
    """Split path: bucket results into a table (concatenated in memory, or kept as parts
    for the store to write slice by slice)."""
    # first occurrence of the smallest gap in value order: inside bucket i, then across edge i
    best = (float("inf"), (-1, -1))
    nonempty = [p for p in parts if p.ids.shape[0]]
    for i, p in enumerate(nonempty):
        if p.min_gap < best[0]:
            best = (p.min_gap, p.gap_pair)
        if i + 1 < len(nonempty):
            ids, first = p.ids, p.first
            last = ids[-1] if first.size == 0 else ids[np.flatnonzero(first)[-1]]
            edge = smallest_gap(sf, np.array([last, nonempty[i + 1].ids[0]], dtype=np.int64))
            if edge[0] < best[0]:
                best = edge
    min_gap, pair = best
    redecided = sum(p.redecided for p in parts)
    n_runs = measure.id_count()
    if not concatenate:
        cert = certificate_of(measure, sf, min_gap, pair, redecided)
        return EntryTable(measure=measure, stratified=sf.stratified, parts=parts,
                          n_entries=sum(int(p.ids.shape[0]) for p in parts), n_runs=n_runs, certificate=cert)
    ids = np.concatenate([p.ids for p in parts])
    counts = np.concatenate([p.counts.astype(np.uint64) for p in parts])
    strata = np.concatenate([p.strata for p in parts]) if sf.stratified else None
    first = np.concatenate([p.first for p in parts]) if sf.stratified else None
    return table_from_entries(measure, sf, ids, counts, strata, first, min_gap, pair, redecided, n_runs)


def safe_name(name: str) -> str:
    """A measure name as a folder name (checkpoints of resumable builds)."""
    return "".join(ch if ch.isalnum() or ch in "@=._-" else "_" for ch in name)


def build_entry_tables(measures: Iterable[KeyMeasure], rbs: dict[Measure, list[tuple[int, ...] | None]],
                       options: BuildSettings) -> Iterator[EntryTable]:
    """Entry tables of key measures (``rbs[measure]``: the table recall bases to build,
    [None] for one table serving every recall base). Split-path tables are yielded as
    they are built; generic-path measures with the same N and REL share one pass."""
    generic: dict[tuple, list] = defaultdict(list)
    shared: dict = dict(rbs)
    for m in measures:
        if m.recall_base.per_grade:          # per-vector tables come from one stratified pass
            if options.method == "split":
                raise MeasureError(f"{m}: tables keyed by per-grade counts are built by the generic method; "
                                   f"use --method auto or generic")
            own = [c for c in rbs[m] if m.own_pass(c)]
            if rbs[m]:
                m.split_form()                   # (cached) what ranks the values: refused before any enumeration
            for c in own:
                [d] = enumerate_feasible_distinct([m.scoring_job()], m.n, m.levels, c,
                                                  options.chunk_size or DEFAULT_CHUNK, options.progress,
                                                  f"{m} with counts {c}")
                yield from tables_by_counts(m, d, [c])
            shared[m] = [c for c in rbs[m] if c not in own]
            if shared[m]:
                generic[(m.n, m.levels)].append(m)
        elif m.spec.enumeration(m.levels, m.n, options.method) == "split":
            wd = None if options.workdir is None else Path(options.workdir) / safe_name(str(m))
            sf = m.split_form()
            parts = split_enumerate(sf, options.fanout, options.progress, wd, options.bucket_items)
            yield table_from_buckets(m, sf, parts, concatenate=options.concatenate)
        else:
            generic[(m.n, m.levels)].append(m)
    for (n, levels), group in sorted(generic.items()):
        found = enumerate_distinct([m.scoring_job() for m in group], n, levels, options.fanout,
                                   options.chunk_size or DEFAULT_CHUNK, options.progress,
                                   f"N={n}: {len(group)} measure(s)")
        for m, d in zip(group, found):
            if m.recall_base.per_grade:
                yield from tables_by_counts(m, d, shared[m])
            else:
                yield table_from_distinct(m, d)
