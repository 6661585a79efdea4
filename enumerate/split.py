"""The split enumerator: distinct values of a measure over REL^N without scoring runs
one by one.

Prefixes (first h ranks) and suffixes (last N - h ranks) are grouped by exact key,
state and stratum (2 x levels**(N/2) items instead of levels**N runs); the raw value of
a (prefix group, suffix group) pair is ``A + B`` (:mod:`irscale.enumerate.splitform`). The value
axis is cut into buckets holding about ``target`` pairs each; a bucket collects its pairs
by binary search in the sorted suffix lists (records of :data:`ITEM`), sorts them by raw
value, and reduces them to table entries (ties decided by exact keys, order of close
distinct values by exact arithmetic). Buckets are independent units of work: they run in
joblib workers (tables of at least :data:`FANOUT_ITEMS` pairs), which hand their results
over through shared memory (:mod:`~irscale.enumerate.handoff`) and, for big tables
(:func:`checkpoints_worth`), are checkpointed to disk, so a killed build resumes where it
stopped; the result never depends on the number of workers or on interruptions.

Everything the enumerator knows of the measure is its :class:`SplitForm`.

Checkpoint files are written to a temporary name and renamed; a write that fails (a full
disk, a file-size limit) removes what it wrote and raises
:class:`~irscale.errors.DiskFullError` saying so (:mod:`~irscale.enumerate.disk`), whether
it failed in a worker or in the parent. Finished buckets stay on disk for the next run.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import mpmath
import numpy as np
from tqdm.auto import tqdm

from irscale.enumerate import handoff
from irscale.enumerate.disk import disk_error, write_text
from irscale.enumerate.fanout import Fanout
from irscale.enumerate.interpreted import compiled, tiered
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.memory import available_memory
from irscale.enumerate.progress import progress_bar
from irscale.enumerate.runspace import count_dtype, id_dtype
from irscale.enumerate.splitform import SplitForm
from irscale.enumerate.words import words_to_ints
from irscale.errors import CertificationError

#: The kernels (small calls run interpreted: :mod:`irscale.enumerate.interpreted`).
sk = tiered(lazy_module("irscale.enumerate.split_kernels"))

TARGET_ITEMS = 1 << 22     # (prefix group, suffix group) pairs per bucket at most
MIN_ITEMS = 1 << 18
#: Tables of fewer pairs keep their buckets in memory, without checkpoints, when their
#: entries fit in half the memory available (:func:`checkpoints_worth`): they take a
#: minute or two at most on 2 cores (2^30 pairs), so resuming would save little, and
#: checkpoints would write the table to disk twice.
CHECKPOINT_ITEMS = 1 << 31
#: Tables of fewer pairs are built in-process, without workers (a fraction of a second).
FANOUT_ITEMS = 1 << 22


@dataclass
class Grouped:
    """Prefix groups (flat arrays) and per-state suffix groups (rows padded with +inf)."""

    A: np.ndarray
    state: np.ndarray
    pstrat: np.ndarray
    pcount: np.ndarray
    pmin: np.ndarray
    Bs: np.ndarray
    Bstrat: np.ndarray
    Bcount: np.ndarray
    Bmin: np.ndarray
    lengths: np.ndarray
    S: int

    @property
    def n_items(self) -> int:
        return int(self.lengths[self.state].sum())


#: Bytes per pair that :func:`held_bytes` counts at most (64-bit run ids, strata).
MAX_HELD_BYTES = 14


def held_bytes(sf: SplitForm, n_items: int) -> int:
    """Upper estimate of the bytes of a table's entries held in memory (at most one entry
    per pair: run id, a count of at most 4 bytes, the stratum and new-value flag)."""
    return n_items * (np.dtype(id_dtype(sf.levels, sf.n)).itemsize + 4 + (2 if sf.stratified else 0))


def checkpoints_worth(sf: SplitForm, n_items: int, explicit: bool = False) -> bool:
    """Whether a table of ``n_items`` pairs checkpoints its buckets: when asked for with
    an explicit work-unit size, when it has at least :data:`CHECKPOINT_ITEMS` pairs, or
    when its entries would not fit in half the memory available."""
    if explicit or n_items >= CHECKPOINT_ITEMS:
        return True
    free = available_memory()
    return free is not None and held_bytes(sf, n_items) > free // 2


def _digits_nonzero(ids: np.ndarray, levels: int, digits: int) -> np.ndarray:
    return sk.popcount_ids(ids.astype(np.int64), levels, digits).astype(np.int64)


def group_split(sf: SplitForm) -> Grouped:
    """Group prefixes and suffixes that behave identically (same exact key, state and,
    for stratified split forms, number of relevant documents)."""
    P, S, stratified = sf.P, sf.S, sf.stratified
    pids = np.arange(P, dtype=np.int64)
    pstr = _digits_nonzero(pids, sf.levels, sf.h) if stratified else np.zeros(P, np.int64)
    if sf.exact:
        pkey = sf.A.astype(np.uint64)[:, None]
    else:
        pkey = sf.KA
    rows = np.concatenate([pkey, sf.state.astype(np.uint64)[:, None], pstr.astype(np.uint64)[:, None]], axis=1)
    _, first, inv = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(first)          # groups in order of their smallest prefix id
    first = first[order]
    remap = np.empty_like(order)
    remap[order] = np.arange(order.size)
    pcount = np.bincount(remap[inv], minlength=first.size).astype(np.int64)
    A, state, pstrat, pmin = sf.A[first], sf.state[first], pstr[first], first.astype(np.int64)

    sids = np.arange(S, dtype=np.int64)
    sstr = _digits_nonzero(sids, sf.levels, sf.n - sf.h) if stratified else np.zeros(S, np.int64)
    rows_by_state = []
    for c in range(sf.B.shape[0]):
        skey = sf.B[c].astype(np.uint64)[:, None] if sf.exact else sf.KB[c]
        r = np.concatenate([skey, sstr.astype(np.uint64)[:, None]], axis=1)
        _, f, iv = np.unique(r, axis=0, return_index=True, return_inverse=True)
        cnt = np.bincount(iv.reshape(-1), minlength=f.size)
        raw = sf.B[c][f]
        o = np.lexsort((f, raw))
        rows_by_state.append((raw[o], sstr[f][o], cnt[o], f[o]))
    L = max(len(r[0]) for r in rows_by_state)
    ns = len(rows_by_state)
    Bs = np.full((ns, L), np.inf)
    Bstrat = np.zeros((ns, L), np.int64)
    Bcount = np.zeros((ns, L), np.int64)
    Bmin = np.zeros((ns, L), np.int64)
    lengths = np.zeros(ns, np.int64)
    for c, (raw, st, cnt, f) in enumerate(rows_by_state):
        k = len(raw)
        Bs[c, :k], Bstrat[c, :k], Bcount[c, :k], Bmin[c, :k], lengths[c] = raw, st, cnt, f, k
    return Grouped(A, state, pstrat, pcount, pmin, Bs, Bstrat, Bcount, Bmin, lengths, S)


def plan_buckets(g: Grouped, sf: SplitForm, target: int = TARGET_ITEMS, seed: int = 0) -> list[float]:
    """Bucket edges on the raw axis: [-inf, t1, ..., +inf], about ``target`` items each.
    Deterministic. For inexact raws no edge lies within twice the error bound of any raw
    value, so runs with equal values never straddle an edge."""
    total = g.n_items
    nb = max(1, -(-total // target))
    if nb == 1:
        return [-np.inf, np.inf]
    rng = np.random.default_rng(seed)
    w = g.lengths[g.state].astype(np.float64)
    ps = rng.choice(len(g.A), size=min(1 << 18, nb << 12), p=w / w.sum())    # 4096 samples per bucket
    js = (rng.random(ps.size) * g.lengths[g.state[ps]]).astype(np.int64)
    sample = np.sort(g.A[ps] + g.Bs[g.state[ps], js])
    edges = [float(sample[int(i * sample.size / nb)]) for i in range(1, nb)]
    out = [-np.inf]
    for t in edges:
        if not sf.exact:
            step = 4 * sf.bound if sf.bound > 0 else abs(t) * 1e-15
            for _ in range(10000):
                if sk.count_between(g.A, g.state, g.Bs, t - 2 * sf.bound, t + 2 * sf.bound) == 0:
                    break
                t += step
        if t > out[-1]:
            out.append(t)
    out.append(np.inf)
    return out


@dataclass
class BucketResult:
    """Entries of one bucket, in value order (see :class:`irscale.scales.tables.scale.Table`)."""

    ids: np.ndarray
    counts: np.ndarray
    strata: np.ndarray
    first: np.ndarray
    min_gap: float          # smallest raw gap between neighbouring distinct values (rep raws)
    redecided: int
    gap_pair: tuple = (-1, -1)  # representative run ids of that pair

    ARRAYS = ("ids", "counts", "strata", "first")

    def save(self, path: Path) -> None:
        """Write to the folder ``path`` atomically (a temporary folder, then a rename)."""
        tmp = path.with_name(path.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        current = tmp
        try:
            tmp.mkdir()
            for name in self.ARRAYS:
                current = tmp / f"{name}.npy"
                with open(current, "wb") as fh:
                    np.save(fh, getattr(self, name))
                    fh.flush()
                    os.fsync(fh.fileno())
            current = tmp / "meta.json"
            current.write_text(json.dumps({"min_gap": repr(self.min_gap), "redecided": self.redecided,
                                           "gap_pair": list(self.gap_pair)}))
            os.replace(tmp, path)
        except BaseException as e:   # a full disk, a file-size limit, an interrupt: no half-written bucket
            full = disk_error(e, current, path.parent)
            shutil.rmtree(tmp, ignore_errors=True)
            if full is not None:
                raise full from None
            raise

    @classmethod
    def load(cls, path: Path) -> SavedBucket:
        """A saved bucket whose arrays are mapped from disk on each access."""
        return SavedBucket(path)


class SavedBucket:
    """A bucket on disk: metadata in memory; every access to an array maps its file anew,
    so the pages are released as soon as the caller drops the array (writing a table of
    a billion entries never holds it)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        meta = json.loads((self.path / "meta.json").read_text())
        self.min_gap = float(meta["min_gap"])
        self.redecided = int(meta["redecided"])
        self.gap_pair = tuple(meta["gap_pair"])

    def _arr(self, name):
        return np.load(self.path / f"{name}.npy", mmap_mode="r")

    ids = property(lambda self: self._arr("ids"))
    counts = property(lambda self: self._arr("counts"))
    strata = property(lambda self: self._arr("strata"))
    first = property(lambda self: self._arr("first"))


#: One (prefix group, suffix group) pair of a bucket, as :func:`split_kernels.fill_between`
#: emits it: raw value, smallest run id, number of runs, stratum (32 bytes, aligned).
ITEM = np.dtype([("raw", np.float64), ("id", np.int64), ("count", np.int64), ("stratum", np.uint8)], align=True)


def process_bucket(sf: SplitForm, g: Grouped, lo: float, hi: float) -> BucketResult:
    """Collect, sort and reduce the items of one bucket."""
    stratified = sf.stratified
    m = sk.count_between(g.A, g.state, g.Bs, lo, hi)
    items = np.empty(m, ITEM)
    sk.fill_between(g.A, g.state, g.pstrat, g.pcount, g.pmin, g.Bs, g.Bstrat, g.Bcount, g.Bmin, g.S,
                    lo, hi, items)
    raw, ids, cnt, strat = sorted_items(items)
    del items
    keys = cluster_keys(sf, raw, ids)
    nstrata = sf.n + 1
    out_ids = np.empty(m, np.int64)
    out_counts = np.empty(m, np.int64)
    out_strata = np.empty(m, np.uint8)
    out_first = np.empty(m, np.bool_)
    flagged = np.empty((m, 2), np.int64) if not sf.exact else np.empty((0, 2), np.int64)
    e, nflag, min_gap, gap_lo, gap_hi = sk.reduce_sorted(raw, ids, cnt, strat, keys, sf.exact, 2 * sf.bound,
                                                         stratified, nstrata, out_ids, out_counts, out_strata,
                                                         out_first, flagged)
    del raw, ids, cnt, strat, keys
    cnt_dt = count_dtype(int(out_counts[:e].max()) if e else 0)
    res = BucketResult(out_ids[:e].astype(id_dtype(sf.levels, sf.n)), out_counts[:e].astype(cnt_dt),
                       out_strata[:e].astype(np.uint8),
                       out_first[:e].copy(), float(min_gap), 0)
    if not stratified:  # every entry is a distinct value: nothing to keep
        res.strata = np.zeros(0, np.uint8)
        res.first = np.zeros(0, np.bool_)
    if nflag and not sf.ordered_keys:
        res.redecided = resolve_flagged(sf, res, flagged[:nflag])
    if sf.exact:        # clusters are the distinct values: the reduction saw the smallest gap
        res.gap_pair = (int(out_ids[gap_lo]), int(out_ids[gap_hi])) if gap_lo >= 0 else (-1, -1)
    else:
        res.min_gap, res.gap_pair = smallest_gap(sf, res.ids if res.first.size == 0 else res.ids[res.first])
    return res


def _packed_order(raw: np.ndarray) -> tuple[np.ndarray, int]:
    """(permutation that sorts ``raw`` up to neighbours less than 2^shift units in the
    last place apart, shift); ``raw`` may be strided (a field of records).

    Faster than :func:`numpy.argsort` (which does not use SIMD sorting): for raws of one
    sign, whose float bit patterns sort like the values, the bits (above the lowest
    ``shift`` ones, so that they fit beside the item index) and the index are packed into
    one uint64 that :meth:`numpy.ndarray.sort` sorts. Raws of both signs, or not finite,
    are sorted by argsort (shift 0: exact order)."""
    m = raw.shape[0]
    lo, hi = raw.min(), raw.max()
    if not (lo >= 0 or hi <= 0) or not np.isfinite(lo) or not np.isfinite(hi):
        return np.argsort(raw), 0
    negative = not lo >= 0                             # all raws <= 0: larger magnitude first
    small, large = (-hi, -lo) if negative else (lo, hi)
    low = np.array([abs(small)]).view(np.uint64)[0]     # abs: -0.0 is 0.0
    span = int(np.array([abs(large)]).view(np.uint64)[0] - low)
    index_bits = int(m - 1).bit_length()
    shift = max(0, span.bit_length() - (64 - index_bits))
    packed = np.empty(m, np.uint64)
    sk.pack_sort_keys(raw.view(np.uint64), low, shift, index_bits, packed)
    packed.sort()
    order = np.empty(m, np.int64)
    sk.unpack_order(packed, index_bits, negative, order)
    return order, shift


def sorted_items(items: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The records ``items`` (:data:`ITEM`) sorted by raw value, as four arrays: raws,
    run ids, run counts, strata (equal raws in any order; the items of one value reduce
    to the same entries in any order).

    The packed sort of :func:`_packed_order` orders the items up to neighbours a few units
    in the last place apart; :func:`split_kernels.gather_items` reads each record once in
    that order, and :func:`split_kernels.settle` puts the neighbours in order in place
    (argsort when that needs too many moves)."""
    m = items.shape[0]
    raw, ids = np.empty(m, np.float64), np.empty(m, np.int64)
    counts, strata = np.empty(m, np.int64), np.empty(m, np.uint8)
    if m == 0:
        return raw, ids, counts, strata
    order, shift = _packed_order(items["raw"])
    sk.gather_items(order, items, raw, ids, counts, strata)
    del order
    if shift and not sk.settle(raw, ids, counts, strata, 8 * m):
        again = np.argsort(raw)
        raw, ids, counts, strata = raw[again], ids[again], counts[again], strata[again]
    return raw, ids, counts, strata


def cluster_keys(sf: SplitForm, raw: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Exact keys of the items (sorted by raw) that :func:`split_kernels.reduce_sorted`
    reads: those of clusters (a neighbour within twice the error bound); zeros elsewhere
    (untouched memory) and for exact raws."""
    keys = np.zeros((raw.shape[0], max(1, sf.words) if not sf.exact else 1), np.uint64)
    if sf.exact or raw.shape[0] < 2:
        return keys
    close = np.diff(raw) <= 2 * sf.bound
    near = np.zeros(raw.shape[0], np.bool_)
    near[:-1] = close
    near[1:] |= close
    if near.any():
        keys[near] = sk.exact_keys(ids[near], sf.KA, sf.KB, sf.state, sf.S)
    return keys


def smallest_gap(sf: SplitForm, reps: np.ndarray) -> tuple[float, tuple[int, int]]:
    """Smallest difference of raw values between neighbouring representatives (value
    order) and the pair of run ids where it occurs (first occurrence)."""
    if reps.size < 2:
        return float("inf"), (-1, -1)
    gap, i = sk.smallest_gap(np.ascontiguousarray(reps), sf.A, sf.state, sf.B, sf.S)
    return float(gap), (int(reps[i]), int(reps[i + 1]))


def resolve_flagged(sf: SplitForm, res: BucketResult, flagged: np.ndarray) -> int:
    """Order the distinct values inside clusters of close raw values by the split form's
    high-precision raw values of their exact keys (``sf.exact_raw``, ``sf.digits``
    digits); distinct keys whose values agree to all but 10 of those digits raise
    :class:`~irscale.errors.CertificationError`."""
    digits = sf.digits
    tiny = mpmath.mpf(10) ** (-(digits - 10))
    for e0, e1 in flagged:
        starts = [i for i in range(e0, e1) if res.first.size == 0 or res.first[i]] + [e1]
        groups = [(starts[t], starts[t + 1]) for t in range(len(starts) - 1)]
        reps = np.array([res.ids[a:b].min() for a, b in groups], dtype=np.int64)
        keys = words_to_ints(sk.exact_keys(reps, sf.KA, sf.KB, sf.state, sf.S))
        with mpmath.workdps(digits):
            vals = [sf.exact_raw(k) for k in keys]
            perm = sorted(range(len(groups)), key=lambda t: vals[t])
            for a, b in zip(perm, perm[1:]):
                if abs(vals[b] - vals[a]) <= tiny * max(1, abs(vals[a])):
                    raise CertificationError(f"{sf.label}: keys {keys[a]} and {keys[b]} cannot be separated")
        sl = [np.arange(*groups[t]) for t in perm]
        idx = np.concatenate(sl)
        for arr in (res.ids, res.counts, res.strata, res.first):
            if arr.size:
                arr[e0:e1] = arr[idx]
    return len(flagged)


def _plan_file(workdir: Path) -> Path:
    return workdir / "plan.json"


@dataclass
class CheckpointStatus:
    """What a work folder of :func:`split_enumerate` holds: finished buckets out of the
    plan's, their size on disk, and the build seconds spent before (all segments up to
    the last finished bucket)."""

    label: str
    done: int
    total: int
    bytes: int
    seconds: float


def checkpoint_status(workdir: str | os.PathLike) -> CheckpointStatus | None:
    """The state of a work folder (None when it holds no plan)."""
    wd = Path(workdir)
    try:
        plan = json.loads(_plan_file(wd).read_text())
    except (OSError, ValueError):
        return None
    done = sum(1 for f in wd.glob("bucket-*") if (f / "meta.json").exists())
    size = sum(f.stat().st_size for f in wd.rglob("*") if f.is_file())
    try:
        seconds = float(json.loads((wd / "elapsed.json").read_text())["seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        seconds = 0.0
    return CheckpointStatus(plan.get("measure", ""), done, len(plan.get("edges", [])) - 1, size, seconds)


def remove_partial(workdir: str | os.PathLike) -> None:
    """Delete what unfinished checkpoint writes left in a work folder (``*.tmp`` files and
    folders of a killed process or worker). Only for a caller that holds the store's lock:
    no other process writes there then."""
    wd = Path(workdir)
    if not wd.is_dir():
        return
    for f in wd.glob("*.tmp"):
        if f.is_dir():
            shutil.rmtree(f, ignore_errors=True)
        else:
            f.unlink(missing_ok=True)


def _read_json(path: Path) -> object:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _save_elapsed(workdir: Path, seconds: float) -> None:
    write_text(workdir / "elapsed.json", json.dumps({"seconds": seconds}))


def split_enumerate(sf: SplitForm, fanout: Fanout = Fanout(), progress: bool = False,
                    workdir: str | os.PathLike | None = None, target: int | None = None) -> list:
    """Entries of a table from the split form ``sf``, bucket by bucket.

    Returns a list of :class:`BucketResult` (or :class:`SavedBucket`) in value order.
    With ``workdir``, finished buckets of big tables (:func:`checkpoints_worth`: at least
    :data:`CHECKPOINT_ITEMS` pairs or more entries than half the memory available, or any
    table built with an explicit work-unit size ``target``) are saved there and reused by
    a later call with the same split form label and plan (resumable builds), with the
    seconds spent so far (``elapsed.json``, see :func:`checkpoint_status`); the caller
    deletes the folder when the table is committed. Other tables keep their buckets in
    memory. Tables of fewer than
    :data:`FANOUT_ITEMS` pairs (and no explicit ``target``) are built in-process, whatever
    ``fanout`` says: starting workers would cost more than the work.
    """
    g = group_split(sf)
    explicit = target is not None
    if not explicit and g.n_items < FANOUT_ITEMS:
        fanout = Fanout()
    resumable = workdir is not None and any(Path(workdir).glob("bucket-*/meta.json"))
    if not checkpoints_worth(sf, g.n_items, explicit) and not resumable:   # a killed build's buckets are kept
        workdir = None
    # at least ~16 buckets (memory per worker stays small at every N), at most 4M pairs each;
    # depends on the split form only, so a resumed build finds the same plan
    target = target or min(TARGET_ITEMS, max(MIN_ITEMS, -(-g.n_items // 16)))
    edges = plan_buckets(g, sf, target)
    n_b = len(edges) - 1
    done: dict[int, BucketResult] = {}
    wd = Path(workdir) if workdir is not None else None
    if wd is not None:
        wd.mkdir(parents=True, exist_ok=True)
        remove_partial(wd)
        plan = {"measure": sf.label, "edges": [repr(float(e)) for e in edges], "target": target}
        pf = _plan_file(wd)
        if pf.exists() and _read_json(pf) != plan:
            for f in wd.glob("bucket-*"):
                shutil.rmtree(f, ignore_errors=True)
            (wd / "elapsed.json").unlink(missing_ok=True)
        write_text(pf, json.dumps(plan))
        for i in range(n_b):
            f = wd / f"bucket-{i:05d}"
            if (f / "meta.json").exists():
                done[i] = BucketResult.load(f)
    todo = [i for i in range(n_b) if i not in done]
    before = 0.0
    if done:
        status = checkpoint_status(wd)
        before = status.seconds
        if progress:
            tqdm.write(f"resuming {sf.label}: {len(done)} of {n_b} buckets done ({status.bytes / 1e9:.2f} GB of "
                       f"checkpoints in {wd})", file=sys.stderr)
    started = time.perf_counter()

    bar = progress_bar(total=n_b, initial=n_b - len(todo), unit="bucket", desc=sf.label, disable=not progress,
                       leave=False)
    # remote (dask) workers may not share the work folder: they send results back
    save_in_worker = wd is not None and fanout.shares_files
    # local worker processes hand in-memory results over through shared memory
    prefix = handoff.handoff_prefix() if wd is None and fanout.separate_processes and len(todo) > 1 else None
    if prefix is not None:
        handoff.remove_stale(os.path.dirname(prefix))
    if fanout.separate_processes and len(todo) > 1:
        _compile_kernels(sf, g)
    results = None
    try:
        results = fanout.map(_run_bucket, ((sf, g, edges[i], edges[i + 1], i, str(wd) if save_in_worker else None,
                                            prefix) for i in todo), len(todo), ordered=False)
        for i, r in results:
            r = handoff.take_back(r)
            if r is not None and wd is not None:
                r.save(wd / f"bucket-{i:05d}")
                r = None
            done[i] = r if r is not None else BucketResult.load(wd / f"bucket-{i:05d}")
            if wd is not None:
                _save_elapsed(wd, before + time.perf_counter() - started)
            bar.update(1)
    finally:
        bar.close()
        if results is not None and hasattr(results, "close"):
            with warnings.catch_warnings():      # joblib's count of results not used
                warnings.simplefilter("ignore", UserWarning)
                results.close()                  # an error or interrupt here: workers stop taking buckets
        handoff.remove_unclaimed(prefix)
    return [done[i] for i in range(n_b)]


def _compile_kernels(sf: SplitForm, g: Grouped) -> None:
    """Compile the bucket kernels here (or load them from numba's cache) on the few pairs
    of the smallest raw value, so that worker processes load them from the cache instead
    of each compiling them."""
    if g.n_items == 0:
        return
    lowest = float((g.A + g.Bs[g.state, 0]).min())
    with compiled():
        process_bucket(sf, g, -np.inf, float(np.nextafter(lowest, np.inf)))


def _run_bucket(sf, g, lo, hi, i, wd, prefix=None):
    """One unit of work; with a work folder the result goes to disk and only its index
    comes back (the parent maps it from disk), so the parent never holds all buckets.
    Otherwise, with a hand-over ``prefix``, its arrays go through shared memory
    (:mod:`~irscale.enumerate.handoff`)."""
    r = process_bucket(sf, g, lo, hi)
    if wd is None:
        return i, handoff.hand_over(r, BucketResult.ARRAYS, prefix)
    r.save(Path(wd) / f"bucket-{i:05d}")
    return i, None
