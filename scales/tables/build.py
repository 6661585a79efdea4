"""Building tables in memory: the generic path (every run scored), the split path
(prefix/suffix merge) and implicit tables; and :func:`scale`."""
from __future__ import annotations

import functools
from collections import defaultdict
from fractions import Fraction
from typing import Iterable, Iterator

import numpy as np

from irscale.errors import RecallBaseError
from irscale.scales.tables.certificate import Certificate, value_order
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.parse import parse_measure
from irscale.enumerate.runspace import count_dtype, id_dtype
from irscale.scales.tables.scale import Table

METHODS = ("auto", "generic", "split")


def table_rbs(measure: Measure, rbs="all") -> list[int | None]:
    """Table recall bases meant by ``rbs`` for ``measure``: ``"all"`` means 1..N; a list
    is mapped to min(RB, N). [None] for measures without RB. (One stored table serves all
    recall bases; this only validates and reports.)"""
    if not measure.rb_dependent:
        return [None]
    if measure.counts_keyed:
        return count_vectors(measure, rbs)
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


def is_implicit(measure: Measure) -> bool:
    """Binary RBP with p <= 1/2 orders runs lexicographically with all values distinct
    (p^(k-1) > sum_{j>k} p^(j-1)), so its table is the identity: rank = run id + 1.
    (Not graded RBP: with gains (0,1,2) and p = 1/2, (0,2,2,...) beats (1,0,0,...).)"""
    return measure.name == "RBP" and measure.levels == 2 and measure.p <= Fraction(1, 2)


def certificate_from_gap(measure, sf, min_gap_raw: float, pair: tuple, redecided: int,
                         rb=None) -> Certificate:
    """Certificate of a table, expressed for the full space (rb = N for RB-dependent
    measures; for tables keyed by per-grade counts, their vector ``rb``): the smallest gap
    between neighbouring values, decided exactly for the pair of representatives ``pair``
    whose float gap is smallest."""
    import mpmath

    from irscale.enumerate.split_kernels import exact_keys
    from irscale.scales.measures.keys import MP_DIGITS, FormalLogKey, LinearKey, words_to_ints
    spec = measure.key_spec()
    if rb is None:
        rb = measure.n if measure.rb_dependent else None
    bound = spec.error_bound(measure, rb)
    method = spec.tie_method
    if not sf.exact:  # values come from split raws: include their float error
        if isinstance(spec, LinearKey):
            method = "exact-integer+float-order"
        bound = max(bound, sf.bound * spec.value_factor(rb))
    if not np.isfinite(min_gap_raw) or pair[0] < 0:
        return Certificate(method, bound, float("inf"), "inf", redecided)
    from irscale.scales.measures.keys import ReciprocalRankKey
    if isinstance(spec, ReciprocalRankKey):  # raw gaps are all 1; values 0, 1/N, ..., 1/2, 1
        n = measure.n
        gap = Fraction(1) if n == 1 else Fraction(1, n - 1) - Fraction(1, n)
        return Certificate(method, bound, float(gap), str(gap), redecided)
    if sf.exact:
        k = [int(sf.raw_of_ids(np.array([i]))[0]) for i in pair]
    else:
        k = words_to_ints(exact_keys(np.array(pair, dtype=np.int64), sf.KA, sf.KB, sf.state, sf.S))
    if isinstance(spec, FormalLogKey):
        with mpmath.workdps(MP_DIGITS):
            gap = spec.exact_value(k[1], measure, rb) - spec.exact_value(k[0], measure, rb)
            text = mpmath.nstr(gap, 20)
    else:
        gap = spec.exact_value(k[1], measure, rb) - spec.exact_value(k[0], measure, rb)
        text = str(gap)
    if gap <= 0:
        from irscale.errors import CertificationError
        raise CertificationError(f"{measure}: neighbouring distinct values out of order")
    return Certificate(method, bound, float(gap), text, redecided)


def implicit_table(measure) -> Table:
    """The identity table of RBP with p <= 1/2 (no enumeration needed)."""
    from irscale.scales.measures.keys import LinearKey
    from irscale.scales.measures.split_forms import split_form
    n = measure.n
    p = measure.p
    # smallest gap between lexicographic neighbours x, x+1: (1-p)(p^j - sum_{k=j+1}^{n-1} p^k)
    gap = min((1 - p) * (p ** j - sum(p ** k for k in range(j + 1, n))) for j in range(n))
    spec = measure.key_spec()
    assert isinstance(spec, LinearKey)
    sf = split_form(measure)
    cert = Certificate("exact-integer+implicit-lexicographic", spec.error_bound(measure, None) + sf.bound * float(
        spec.scale(None)), float(gap), str(gap), 0)
    size = measure.levels ** n
    return Table(measure, None, None, None, size, size, cert)


def table_from_entries(measure, sf, ids, counts, strata, first, min_gap_raw, pair, redecided, n_runs) -> Table:
    """Assemble a table from entry arrays, with compact dtypes (strata packed with the
    new-value flag)."""
    from irscale.scales.tables.scale import pack_strata
    ids = np.ascontiguousarray(ids, dtype=id_dtype(measure.levels, measure.n))
    counts = np.asarray(counts)
    counts = np.ascontiguousarray(counts, dtype=count_dtype(int(counts.max()) if counts.size else 1))
    packed = np.ascontiguousarray(pack_strata(strata, first)) if measure.stratified else None
    cert = certificate_from_gap(measure, sf, min_gap_raw, pair, redecided)
    return Table(measure, ids, counts, packed, int(ids.shape[0]), n_runs, cert)


def table_from_distinct(distinct) -> Table:
    """Generic path: distinct (stratum, key) rows with counts and smallest run ids ->
    table entries in value order."""
    from irscale.enumerate.reduce import KeyCodec
    from irscale.scales.measures.split_forms import split_form

    measure = distinct.measure
    spec = measure.key_spec()
    sf = split_form(measure)
    keys, strata, counts, minids = distinct.keys, distinct.strata, distinct.counts, distinct.minids
    codec = KeyCodec(keys.shape[1], max(1, int(spec.max_key).bit_length()), stratified=False)
    if strata is None:
        ukeys, inv = keys, np.arange(keys.shape[0])
    else:
        uniq, inv = np.unique(codec.encode(keys, None), return_inverse=True)
        inv = inv.reshape(-1)
        ukeys = codec.decode(uniq)[0]
    order, redecided = value_order(spec, ukeys)
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    vpos = pos[inv]
    if strata is None:
        o = np.argsort(vpos, kind="stable")
        first = np.ones(o.size, bool)
        st = np.zeros(o.size, np.uint8)
    else:
        o = np.lexsort((strata, vpos))
        first = np.concatenate(([True], vpos[o][1:] != vpos[o][:-1]))
        st = strata[o]
    ids = minids[o]
    from irscale.enumerate.split import smallest_gap
    min_gap, pair = smallest_gap(sf, ids[first])
    return table_from_entries(measure, sf, ids, counts[o], st, first, min_gap, pair, redecided, distinct.n_runs)


def tables_by_counts(distinct, vectors) -> list[Table]:
    """Tables of a graded RB-dependent measure, one per per-grade count vector (c_1..c_G)
    (each capped at N), from one enumeration stratified by the runs' per-grade counts: the
    table of c holds the distinct values of the runs with n_g <= c_g for every grade g
    (the runs feasible for a topic with those counts), their run counts and smallest ids.
    The order of values does not depend on c (the normaliser is a positive constant), so
    the value order of all keys is decided once."""
    from irscale.enumerate.reduce import KeyCodec
    from irscale.enumerate.runspace import decode_count_codes
    from irscale.enumerate.split import smallest_gap
    from irscale.scales.measures.split_forms import split_form

    measure = distinct.measure
    spec = measure.key_spec()
    sf = split_form(measure)
    keys, codes, counts, minids = distinct.keys, distinct.strata, distinct.counts, distinct.minids
    codec = KeyCodec(keys.shape[1], max(1, int(spec.max_key).bit_length()), stratified=False)
    uniq, inv = np.unique(codec.encode(keys, None), return_inverse=True)
    order, redecided = value_order(spec, codec.decode(uniq)[0])
    pos = np.empty_like(order)
    pos[order] = np.arange(order.size)
    vpos = pos[inv.reshape(-1)]
    o = np.argsort(vpos, kind="stable")              # rows in value order once: every subset stays sorted
    vpos, counts, minids = vpos[o], counts[o], minids[o]
    have = decode_count_codes(codes[o], measure.n, measure.levels - 1)
    out = []
    for c in vectors:
        feasible = (have <= np.asarray(c, dtype=np.int64)).all(axis=1)
        v, cnt, mid = vpos[feasible], counts[feasible], minids[feasible]
        starts = np.flatnonzero(np.concatenate(([True], v[1:] != v[:-1]))) if v.size else np.zeros(0, np.int64)
        ids = np.minimum.reduceat(mid, starts) if v.size else np.zeros(0, np.int64)
        cnt = np.add.reduceat(cnt, starts) if v.size else np.zeros(0, np.int64)
        ids = np.ascontiguousarray(ids, dtype=id_dtype(measure.levels, measure.n))
        min_gap, pair = smallest_gap(sf, ids.astype(np.int64))
        cert = certificate_from_gap(measure, sf, min_gap, pair, redecided, rb=tuple(c))
        cnt = np.ascontiguousarray(cnt, dtype=count_dtype(int(cnt.max()) if cnt.size else 1))
        out.append(Table(measure, ids, cnt, None, int(ids.shape[0]), int(cnt.sum(dtype=np.uint64)), cert,
                         rb_counts=tuple(int(x) for x in c)))
    return out


def count_vectors(measure: Measure, rbs=None) -> list[tuple]:
    """The capped per-grade count vectors meant by ``rbs`` for a graded RB-dependent
    measure: None or ``"all"`` mean the all-runs vector (N, ..., N) of the ``common``
    scale; otherwise a vector (c_1..c_G) or a list of them (capped at N, deduplicated)."""
    if rbs is None or (isinstance(rbs, str) and rbs == "all"):
        if measure.common_rb() is None:
            raise RecallBaseError(f"{measure} has one table per topic: give the topics' per-grade counts "
                                  f"(--rb '(3,2)' or --qrels FILE)")
        return [measure.common_rb()]
    items = [rbs] if isinstance(rbs, tuple) else list(rbs)
    out = []
    for rb in items:
        t = measure.table_rb(tuple(rb) if isinstance(rb, (list, np.ndarray)) else rb)
        if t not in out:
            out.append(t)
    if not out:
        raise RecallBaseError(f"{measure}: no recall base given")
    return sorted(out)


def table_from_buckets(measure, sf, parts, concatenate: bool = True) -> Table:
    """Split path: bucket results into a table (concatenated in memory, or kept as parts
    for the store to write slice by slice)."""
    from irscale.enumerate.split import smallest_gap
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
    if not concatenate:
        cert = certificate_from_gap(measure, sf, min_gap, pair, redecided)
        return Table(measure, None, None, None, sum(int(p.ids.shape[0]) for p in parts),
                     measure.levels ** measure.n, cert, parts=parts)
    ids = np.concatenate([p.ids for p in parts])
    counts = np.concatenate([p.counts.astype(np.uint64) for p in parts])
    strata = np.concatenate([p.strata for p in parts]) if measure.stratified else None
    first = np.concatenate([p.first for p in parts]) if measure.stratified else None
    return table_from_entries(measure, sf, ids, counts, strata, first, min_gap, pair, redecided,
                              measure.levels ** measure.n)


def choose_method(measure, method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}")
    from irscale.scales.measures.families.err import ERRKey
    spec = measure.key_spec()
    if method == "generic" and isinstance(spec, ERRKey) and spec.words > 1:
        from irscale.errors import MeasureError
        raise MeasureError(f"{measure}: its exact keys need {spec.words} words; the generic method scores ERR on "
                           f"one 64-bit word: use --method split or auto")
    if method != "auto":
        return method
    if isinstance(spec, ERRKey):      # small spaces: score every run; else the prefix/suffix split
        return "generic" if measure.levels ** measure.n <= 2 ** 16 and spec.words == 1 else "split"
    return "split" if spec.kernel in ("additive", "ap", "rr") else "generic"


def build_tables(measures: Iterable, method: str = "auto", n_jobs: int = 1, progress: bool = False,
                 chunk_size: int | None = None, workdir=None, backend: str | None = None,
                 concatenate: bool = True, bucket_items: int | None = None,
                 rb_counts: dict | None = None) -> Iterator[Table]:
    """Build and yield the table of every measure (one table serves all recall bases;
    graded RB-dependent measures get one table per capped per-grade count vector:
    ``rb_counts[str(measure)]`` lists them, default the all-runs vector (N, ..., N)).

    ``method``: ``"split"`` (prefix/suffix merge), ``"generic"`` (every run scored; the
    reference) or ``"auto"``. Measures of the generic path with the same N and REL share
    one pass over the run space. ``workdir``: folder for resumable bucket checkpoints of
    the split path (one subfolder per measure).
    """
    from pathlib import Path

    from irscale.enumerate.generic import DEFAULT_CHUNK, enumerate_distinct
    from irscale.enumerate.split import split_enumerate

    ms = [parse_measure(m) for m in measures]
    generic: dict[tuple, list[Measure]] = defaultdict(list)
    for m in ms:
        if m.value_kind != "key":        # exact values per run, tables held in memory
            from irscale.scales.tables.formal import build_formal_table
            from irscale.scales.tables.fraction import build_fraction_table
            build = build_formal_table if m.value_kind == "formal" else build_fraction_table
            for c in (count_vectors(m, (rb_counts or {}).get(str(m))) if m.rb_dependent else [None]):
                yield build(m, c)
        elif m.counts_keyed:
            if method == "split":
                from irscale.errors import MeasureError
                raise MeasureError(f"{m}: tables keyed by per-grade counts are built by the generic method; "
                                   f"use --method auto or generic")
            generic[(m.n, m.levels)].append(m)
        elif method != "generic" and is_implicit(m):
            yield implicit_table(m)
        elif choose_method(m, method) == "split":
            wd = None if workdir is None else Path(workdir) / _safe(str(m))
            sf, parts = split_enumerate(m, n_jobs=n_jobs, progress=progress, workdir=wd, backend=backend,
                                        target=bucket_items)
            yield table_from_buckets(m, sf, parts, concatenate=concatenate)
        else:
            generic[(m.n, m.levels)].append(m)
    for (n, levels), group in sorted(generic.items()):
        for d in enumerate_distinct(group, n_jobs=n_jobs, chunk_size=chunk_size or DEFAULT_CHUNK,
                                    progress=progress, desc=f"N={n}: {len(group)} measure(s)", backend=backend):
            if d.measure.counts_keyed:
                yield from tables_by_counts(d, count_vectors(d.measure, (rb_counts or {}).get(str(d.measure))))
            else:
                yield table_from_distinct(d)


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "@=._-" else "_" for ch in name)


@functools.lru_cache(maxsize=32)
def _table(measure: Measure, counts: tuple | None = None) -> Table:
    [t] = build_tables([measure], rb_counts=None if counts is None else {str(measure): [counts]})
    return t


def held_scale(table, rb):
    """The scale of a table held in memory (exact fractions or formal keys)."""
    if table.layout == "formal":
        from irscale.scales.tables.formal import FormalScale
        return FormalScale(table, rb)
    from irscale.scales.tables.fraction import FractionScale
    return FractionScale(table, rb)


def scale(measure: str | Measure, rb: int | None = None):
    """Build the unq interval scale of ``measure`` in memory.

    Parameters
    ----------
    measure : str or Measure
        Measure name, e.g. ``"AP@10"``, ``"RBP(p=0.8)@20"``, ``"nDCG(b=2)@10"``.
    rb : int or tuple of int, optional
        Recall base (number of relevant documents of the topic). Required for
        RB-dependent measures (R, F1, AP, nDCG, nDCG_trec, gR), rejected for the others.
        For rb > N the order of rb = N is used with values for the actual rb. Graded
        measures take the per-grade counts (c_1..c_G) of the topic's judged documents.

    Returns
    -------
    Scale
        ``scale.values``, ``scale.counts``, ``scale.rank(values)``,
        ``scale.rank_runs(runs)``. Tables are cached per measure.
    """
    from irscale.scales.tables.scale import Scale
    m = parse_measure(measure)
    m.check_rb(rb)
    if m.value_kind != "key":
        return held_scale(_table(m, m.table_rb(rb)), rb)
    return Scale(_table(m, m.table_rb(rb) if m.counts_keyed else None), rb)
