"""The counting form of a rank oracle: a measure's grouping split into two searchable sides.

A measure with a grouping (:mod:`irscale.scales.measures.groups`) has one distinct value per
tuple of group options. The groups are split into two sides, A (the groups with the widest
value ranges: the top ranks) and B (the rest); each side lists the tuples of its groups'
options as entries with

* ``s``: the raw value (the measure's raw unit: the exact key for rational measures, the
  unnormalised DCG for logarithmic ones) in float64, the sum of the options' correctly
  rounded raw values, within ``(groups + 1) * u * s_max`` of the exact one;
* ``c``: the count of relevant documents (the fewest any realisation has, in the *distinct*
  view; the exact count, in the *runs* view);
* ``w``: the weight (1 in the distinct view; the number of realisations in the runs view);
* the exact partial key (uint64 words, most significant first) and the smallest run id
  part of the realisations with the fewest relevant documents.

Every distinct value feasible for a recall base r is then one pair (a, b) of the distinct
view with c_a + c_b <= r, and every feasible run one pair of the runs view counted w_a w_b
times. :mod:`irscale.scales.tables.oracle_kernels` counts pairs below a bound; the pairs
whose float sum lies within the proven error of a query are listed and decided exactly
(integer keys for rational measures; equal keys, else
:data:`~irscale.scales.measures.keys.MP_DIGITS`-digit arithmetic, for logarithmic ones).
"""
from __future__ import annotations

import dataclasses
import functools
import math
import threading
from collections.abc import Iterator

import mpmath
import numpy as np

from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.words import ints_to_words, words_to_ints
from irscale.errors import CertificationError, MeasureError
from irscale.scales.measures.groups import SIDE_LIMIT, Grouping, RankGroup
from irscale.scales.measures.keys import MP_DIGITS, U
from irscale.scales.measures.measure import Measure

#: The oracle kernels (small calls run interpreted: :mod:`irscale.enumerate.interpreted`).
ok = tiered(lazy_module("irscale.scales.tables.oracle_kernels"))

#: Largest number of distinct values an oracle lists (``values``, ``counts``).
LIST_LIMIT = 1 << 22
#: Pairs per query a scan keeps in its first pass (queries with more are scanned again).
SCAN_SLOTS = 4
#: Memory the lists of side B may take (bytes; about 14 per entry per count threshold).
B_BUDGET = 1 << 30
#: Count thresholds the split of a measure with a recall base plans for (recall bases up
#: to 15; lists for bigger ones are built when asked for).
SPLIT_LISTS = 15
#: Batches of at least this many queries are counted in parallel (smaller ones in one
#: thread: the parallel start-up of a fresh process costs more than it saves).
PARALLEL_QUERIES = 2048
#: Entries per bucket of the index of B's lists (16, not 2: an index 8 times smaller stays in cache, a probe
#: reads one more line of the list; 10,000 ranks of (20, 20, 5) at N = 20, levels 0-3: 8.6 s, not 10.7 s).
BUCKET_ENTRIES = 16
#: The split of a measure's groups into sides is chosen for this many queries (a command asks a few per run and
#: topic: 3,000, not 10,000, halves the warm RAG 2024 compare, 19.8 to 9.4 s, 2.9 to 1.3 GB) ...
SPLIT_QUERIES = 3000
#: ... and building a side entry costing this many visits of an entry by a query.
SPLIT_BUILD = 6
#: Queries a split is chosen for past :data:`~irscale.scales.tables.oracles.MANY_RUNS` runs ranked by a scale
#: (10,000 lookups of (20, 20, 5) at N = 20, levels 0-3: 10 s, not 20 s).
SPLIT_MANY = 10_000
#: Bytes of decoded entry keys a side keeps for streams (:meth:`Side.all_keys`).
KEPT_KEYS = 1 << 27
#: Queries whose band holds more pairs than this are answered as ambiguous (value lookups
#: with a tolerance that covers many distinct values).
BAND_LIMIT = 1 << 16


def add_words(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Sum of multi-word unsigned integers (uint64 rows, most significant word first,
    broadcast against each other), exactly; raises OverflowError on a carry out."""
    a, b = np.broadcast_arrays(np.asarray(a, np.uint64), np.asarray(b, np.uint64))
    out = np.empty(a.shape, np.uint64)
    carry = np.zeros(a.shape[:-1], np.uint64)
    for j in range(a.shape[-1] - 1, -1, -1):
        s = a[..., j] + b[..., j]
        c1 = s < a[..., j]
        s2 = s + carry
        c2 = s2 < s
        out[..., j] = s2
        carry = (c1 | c2).astype(np.uint64)
    if carry.any():
        raise OverflowError("key sum does not fit its words")
    return out


def compare_words(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 per row: the order of multi-word integers a and b (int8)."""
    out = np.zeros(a.shape[0], np.int8)
    for j in range(a.shape[1]):
        undecided = out == 0
        out[undecided & (a[:, j] < b[:, j])] = -1
        out[undecided & (a[:, j] > b[:, j])] = 1
    return out


@dataclasses.dataclass
class Side:
    """Entries of one side in one view, sorted by ``s`` (see the module docstring).
    ``code``: the entry's mixed-radix code over the side's groups (first group most
    significant), digit = the group's item; per group, ``options`` (the option of each
    item), ``item_keys`` (uint64 words of each item's partial key) and ``item_first``
    (each item's smallest run id part). Keys and run ids of entries are decoded from their
    codes when asked for (:meth:`keys_at`, :meth:`first_at`): sides of 2^24 entries keep
    25 bytes each; ``full_keys`` holds every entry's key once a stream asked for them
    (:meth:`all_keys`)."""

    s: np.ndarray
    c: np.ndarray
    w: np.ndarray
    code: np.ndarray
    radices: list[int]
    options: list[np.ndarray]
    item_keys: list[np.ndarray]
    item_first: list[np.ndarray]
    full_keys: np.ndarray | None = dataclasses.field(default=None, repr=False)

    def __len__(self) -> int:
        return self.s.shape[0]

    def digits(self, pos: np.ndarray) -> list[np.ndarray]:
        """The item of every group of the entries at sorted positions ``pos``."""
        rest = self.code[np.asarray(pos, np.int64)]
        out = []
        for radix in reversed(self.radices):
            out.append(rest % radix)
            rest = rest // radix
        return out[::-1]

    def keys_at(self, pos: np.ndarray, words: int) -> np.ndarray:
        """Exact partial keys (uint64 words) of the entries at ``pos`` (from the keys of
        every entry when :meth:`all_keys` holds them)."""
        if self.full_keys is not None and self.full_keys.shape[1] == words:
            return self.full_keys[np.asarray(pos, np.int64)]
        keys = np.zeros((np.asarray(pos).shape[0], words), np.uint64)
        for keys_g, d in zip(self.item_keys, self.digits(pos)):
            keys = add_words(keys, keys_g[d])
        return keys

    def all_keys(self, words: int) -> None:
        """Decode and keep the partial key of every entry (streams that read keys of most
        entries many times: :meth:`keys_at` then indexes instead of decoding), when they take
        at most :data:`KEPT_KEYS` bytes."""
        if self.full_keys is None and len(self) * words * 8 <= KEPT_KEYS:
            self.full_keys = self.keys_at(np.arange(len(self)), words)

    def codes_in(self, other: Side, code: np.ndarray) -> np.ndarray:
        """The codes in ``other`` (the distinct view's side of the same groups) of entries of
        this side (the runs view's) with codes ``code``: their items' options, mixed radix."""
        out = np.zeros(code.shape[0], np.int64)
        rest = code.copy()
        digits = []
        for radix in reversed(self.radices):
            digits.append(rest % radix)
            rest //= radix
        for g, d in enumerate(reversed(digits)):
            out = out * other.radices[g] + self.options[g][d]
        return out

    def first_at(self, pos: np.ndarray) -> np.ndarray:
        """Smallest run id parts of the entries at ``pos`` (see :class:`RankGroup`)."""
        out = np.zeros(np.asarray(pos).shape[0], np.int64)
        for first_g, d in zip(self.item_first, self.digits(pos)):
            out += first_g[d]
        return out


class Lists:
    """Side B as the kernels read it: one list per count threshold t = 0..T (the entries
    with c <= t, sorted by value; T = 0 for measures without recall base), each with a
    bucket index. Lists are built up to the thresholds asked for (a topic with recall base r
    needs t <= r), so that nDCG at RB = 12 holds 13 lists, not N / 2."""

    def __init__(self, B: Side, counts: bool):
        self.B = B
        self.T_full = int(B.c.max()) if counts and len(B) else 0
        self.unit = bool((B.w == 1).all())
        self.bmin_all = float(B.s.min()) if len(B) else 0.0
        self.bmax_all = float(B.s.max()) if len(B) else 0.0
        self.arrays: tuple = ()             # (Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv), lists 0..T
        self.T = -1
        self._lock = threading.Lock()

    def ready(self, r: int) -> tuple:
        """The arrays of the lists up to threshold min(r, T_full), built if they are not
        (replaced as one tuple, so that threads of the service read consistent arrays)."""
        want = min(max(r, 0), self.T_full)
        with self._lock:
            if want > self.T:
                self._build(want)
            return self.arrays

    def _build(self, want: int) -> None:
        B = self.B
        lists = want + 1
        if self.T_full:                      # list t: the entries with c <= t
            sizes = np.cumsum(np.bincount(B.c, minlength=lists)[:lists])
        else:
            sizes = np.full(lists, len(B))
        sizes = sizes.astype(np.int64)
        buckets = np.maximum(1, sizes // BUCKET_ENTRIES) + 1
        Boff = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        Bidx_off = np.concatenate(([0], np.cumsum(buckets))).astype(np.int64)
        Bx, Bpos = np.empty(int(Boff[-1]), np.float64), np.empty(int(Boff[-1]), np.int32)
        Bcw = np.zeros(0 if self.unit else int(Boff[-1]), np.int64)
        Bidx = np.empty(int(Bidx_off[-1]), np.int32)
        Bmin, Binv, WB = np.zeros(lists), np.zeros(lists), np.zeros(lists, np.int64)
        ok.fill_lists(B.s, B.c, B.w, bool(self.T_full), self.unit, Boff, Bidx_off, Bx, Bpos, Bcw, Bidx, Bmin, Binv, WB)
        self.arrays = (Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, want)
        self.T = want


class Searchable:
    """One view's arrays for the kernels: side A as it is, side B as :class:`Lists`
    (shared by the two views when B's entries are the same in both)."""

    def __init__(self, A: Side, lists: Lists):
        self.A, self.lists = A, lists
        self.full: dict = {}

    @property
    def B(self) -> Side:  # noqa: N802  (the sides are A and B throughout)
        return self.lists.B

    @property
    def T(self) -> int:  # noqa: N802  (the largest count threshold, T in the kernels)
        return self.lists.T

    def full_a(self, r: int, WB: np.ndarray, T: int) -> np.ndarray:
        """Prefix sums over A of w_a * (weight of B's list for threshold r - c_a)."""
        got = self.full.get((r, T))
        if got is None:
            t = r - self.A.c
            per = np.where(t >= 0, self.A.w * WB[np.clip(t, 0, T)], 0)
            got = np.concatenate(([0], np.cumsum(per))).astype(np.int64)
            self.full[(r, T)] = got
        return got

    def _args(self, r: int, band: bool) -> tuple:
        L = self.lists
        Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T = L.ready(r)
        A = self.A
        return ((r, A.s, A.c, A.w, self.full_a(r, WB, T), Bx) + ((Bpos,) if band else ())
                + (Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T, L.bmin_all, L.bmax_all))

    def count(self, ys: np.ndarray, strict: bool, r: int) -> np.ndarray:
        """count(y) of :mod:`~irscale.scales.tables.oracle_kernels` for every bound."""
        ys = np.ascontiguousarray(ys, np.float64).reshape(-1)
        out = np.zeros(ys.shape[0], np.int64)
        args = self._args(r, False)
        kernel = ok.count_many if ys.shape[0] >= PARALLEL_QUERIES else ok.count_serial
        kernel(ys, strict, *args, out)
        return out

    def scan(self, los: np.ndarray, his: np.ndarray, r: int, limit: int = BAND_LIMIT
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per query: count(lo) (strict) and the pairs counted at ``hi`` (<=) but not at
        ``lo``, as (counts, starts, A entries, B entries, over): query q's pairs at
        ``starts[q]:starts[q + 1]``; queries with more than ``limit`` pairs (``over``) get
        none listed."""
        los = np.ascontiguousarray(los, np.float64).reshape(-1)
        his = np.ascontiguousarray(his, np.float64).reshape(-1)
        nq = los.shape[0]
        order = np.argsort(los, kind="stable")         # neighbouring queries read neighbouring entries
        lo_s, hi_s = los[order], his[order]
        args = self._args(r, True)
        scan = ok.scan_many if nq >= PARALLEL_QUERIES else ok.scan_serial
        cap = SCAN_SLOTS
        counts = np.zeros(nq, np.int64)
        sizes = np.zeros(nq, np.int64)
        pa = np.zeros(nq * cap, np.int64)
        pb = np.zeros(nq * cap, np.int64)
        scan(lo_s, hi_s, *args, cap, counts, sizes, pa, pb)
        over = sizes > limit
        redo = np.flatnonzero((sizes > cap) & ~over)
        kept = np.where(over, 0, sizes)
        offset = np.arange(nq, dtype=np.int64) * cap         # where each sorted query's pairs are
        if redo.size:                                         # the few queries with more pairs than slots
            big = int(sizes[redo].max())
            c2, s2 = np.zeros(redo.size, np.int64), np.zeros(redo.size, np.int64)
            a2, b2 = np.zeros(redo.size * big, np.int64), np.zeros(redo.size * big, np.int64)
            scan(lo_s[redo], hi_s[redo], *args, big, c2, s2, a2, b2)
            pa, pb = np.concatenate((pa, a2)), np.concatenate((pb, b2))
            offset[redo] = nq * cap + np.arange(redo.size, dtype=np.int64) * big
        inv = np.empty(nq, np.int64)                          # back to the callers' order
        inv[order] = np.arange(nq)
        sizes_o = kept[inv]
        starts = np.concatenate(([0], np.cumsum(sizes_o))).astype(np.int64)
        idx = np.repeat(offset[inv], sizes_o) + (np.arange(int(starts[-1])) - np.repeat(starts[:-1], sizes_o))
        return counts[inv], starts, pa[idx], pb[idx], over[inv]

    def count_band(self, lo: float, hi: float, r: int) -> tuple[int, np.ndarray, np.ndarray]:
        """count(lo) and every pair of the band [lo, hi] of one query, however many."""
        counts, starts, pa, pb, over = self.scan(np.array([lo]), np.array([hi]), r, limit=1 << 62)
        return int(counts[0]), pa, pb


class OracleForm:
    """The sides of one measure's grouping in the distinct and runs views (built once per
    measure and counted grade, :func:`oracle_form`). ``bound``: absolute error bound of a
    pair's float raw value; ``margin``: how far from a query bound pairs are decided
    exactly. ``counted``: for graded measures with per-grade recall bases, the grade whose
    documents the counts are of (None: relevant documents, or no count); ``counts``:
    whether entries carry counts at all (:meth:`RecallBasePolicy.counts_documents
    <irscale.scales.measures.recall_base.RecallBasePolicy.counts_documents>`; else every
    run is feasible)."""

    def __init__(self, measure: Measure, counted: int | None = None, queries: int = SPLIT_QUERIES):
        grouping = measure.grouping() if counted is None else measure.grouping(counted)
        if not isinstance(grouping, Grouping):
            raise MeasureError(f"{measure}: {grouping}")
        self.measure = measure
        self.grouping = grouping
        self.spec = spec = measure.spec
        self.ordered = spec.ordered
        self.words = spec.words
        self.counted = counted
        self.counts = measure.recall_base.counts_documents(counted)
        groups = list(grouping.groups)
        raws = [np.array([self.raw_float(k) for k in g.keys]) for g in groups]
        spans = [float(r.max() - r.min()) for r in raws]
        order = sorted(range(len(groups)), key=lambda i: (-spans[i], i))
        self.same_views = all(len(runs) == 1 and next(iter(runs.values())) == 1 for g in groups for runs in g.runs)
        a_groups = _split(groups, raws, order, self.counts, queries)
        if a_groups is None:
            raise MeasureError(f"{measure}: a rank oracle would need more than {SIDE_LIMIT} entries per side")
        b_groups = [i for i in order if i not in a_groups]
        self.a_groups, self.b_groups = sorted(a_groups), sorted(b_groups)
        self.same_b = all(_single(groups[i]) for i in b_groups)
        self._groups, self._raws = groups, raws
        self._views: dict[str, Searchable] = {}
        self._lock = threading.RLock()         # the service's threads share forms
        smax = sum(float(r.max()) for r in raws)
        self.smax = smax
        self.bound = 2 * (len(groups) + 3) * U * smax
        self.query_bound = spec.raw_float_bound(smax)
        self.margin = 2 * (self.bound + self.query_bound) + 16 * U * smax + 4 * np.nextafter(0, 1)

    def distinct(self, r: int) -> int:
        """K: the number of distinct values feasible for the count bound ``r``."""
        return int(self.view("distinct").count(np.array([np.inf]), False, r)[0])

    # -- exact raw values ------------------------------------------------------------------
    def raw_float(self, key: int) -> float:
        """The correctly rounded float64 raw value of an exact key."""
        raw = self.spec.raw_exact(key)
        if isinstance(raw, int):
            return float(raw)
        with mpmath.workdps(MP_DIGITS):
            return float(raw)

    def sort_keys(self, keys: list[int]) -> list[int]:
        """Positions of ``keys`` in increasing order of their values (exactly)."""
        return sorted(range(len(keys)), key=functools.cmp_to_key(lambda u, v: self.compare_keys(keys[u], keys[v])))

    def compare_keys(self, a: int, b: int) -> int:
        """-1, 0, 1: the order of the values of two exact keys (re-decided in MP_DIGITS
        digits for logarithmic keys; two different keys of values equal to that precision
        raise :class:`~irscale.errors.CertificationError`)."""
        if a == b:
            return 0
        if self.ordered:
            return -1 if a < b else 1
        with mpmath.workdps(MP_DIGITS):
            va, vb = self.spec.raw_exact(a), self.spec.raw_exact(b)
            tiny = mpmath.mpf(10) ** (-(MP_DIGITS - 10)) * max(1, abs(va))
            if abs(va - vb) <= tiny:
                raise CertificationError(f"{self.measure}: keys {a} and {b} have values equal to {MP_DIGITS - 10} "
                                         f"digits but different formal forms; cannot certify the rank")
            return -1 if va < vb else 1

    # -- sides -----------------------------------------------------------------------------
    def view(self, name: str) -> Searchable:
        """The ``"distinct"`` or ``"runs"`` view (built on first use; the runs view shares
        B's lists with the distinct view when B's groups have one realisation per option)."""
        if name == "runs" and self.same_views:
            name = "distinct"
        with self._lock:
            return self._view(name)

    def _view(self, name: str) -> Searchable:
        got = self._views.get(name)
        if got is None:
            runs = name == "runs"
            A = self._side(self.a_groups, runs)
            if runs and self.same_b:
                got = Searchable(A, self._view("distinct").lists)
            else:
                got = searchable(A, self._side(self.b_groups, runs), self.counts)
            self._views[name] = got
        return got

    def _items(self, i: int, runs: bool):
        g: RankGroup = self._groups[i]
        raws = self._raws[i]
        rows = []
        for o in range(len(g)):
            if runs:
                rows += [(o, c, m) for c, m in sorted(g.runs[o].items())]
            else:
                rows.append((o, g.first[o][0], 1))
        opt = np.array([r[0] for r in rows], np.int64)
        c = np.array([r[1] for r in rows], np.int16) if self.counts else np.zeros(len(rows), np.int16)
        w = np.array([r[2] for r in rows], np.int64)
        keys = ints_to_words([g.keys[o] for o in opt], self.words)
        first = np.array([g.first[o][1] if self.counts else g.min_id[o] for o in opt], np.int64)
        return raws[opt], c, w, keys, first, opt

    def _side(self, idx: list[int], runs: bool) -> Side:
        s = np.zeros(1)
        c = np.zeros(1, np.int16)
        w = np.ones(1, np.int64)
        code = np.zeros(1, np.int64)
        radices, options, item_keys, item_first = [], [], [], []
        for i in idx:
            gs, gc, gw, gk, gf, opt = self._items(i, runs)
            m = len(gs)
            s = (s[:, None] + gs[None, :]).reshape(-1)
            c = (c[:, None] + gc[None, :]).reshape(-1)
            if (gw != 1).any() or (w != 1).any():
                w = (w[:, None] * gw[None, :]).reshape(-1)
            else:
                w = np.ones(s.shape[0], np.int64)
            code = (code[:, None] * m + np.arange(m)[None, :]).reshape(-1)
            radices.append(m)
            options.append(opt)
            item_keys.append(gk)
            item_first.append(gf)
        order = np.argsort(s)
        return Side(s[order], c[order], w[order], code[order], radices, options, item_keys, item_first)

    def count_polys(self, view: Searchable, r: int) -> tuple[np.ndarray, np.ndarray]:
        """The runs behind every pair of ``view`` (the distinct view) for the count bound
        ``r``, as two arrays: per A entry, its realisations by count 0..r (int64 (|A|, r + 1));
        per B entry, the cumulative realisations with count at most 0..r. The runs of the pair
        (a, b) are ``sum_i PA[a, i] * CB[b, r - i]``; for forms without counts, r = 0 and the
        totals. Raises :class:`~irscale.errors.MeasureError` when the arrays would exceed
        :data:`B_BUDGET`."""
        width = r + 1 if self.counts else 1
        if (len(view.A) + len(view.B)) * width * 8 > B_BUDGET:
            raise MeasureError(f"{self.measure}: the runs of its values at RB = {r} need more than "
                               f"{B_BUDGET >> 20} MiB to count")
        out = []
        for side, idx in ((view.A, self.a_groups), (view.B, self.b_groups)):
            poly = np.zeros((len(side), width), np.int64)
            poly[:, 0] = 1                   # no group yet: one realisation, count 0
            for j, (g, d) in enumerate(zip(idx, side.digits(np.arange(len(side))))):
                group = self._groups[g]
                per = np.zeros((len(group), width), np.int64)
                for o, runs in enumerate(group.runs):
                    for c, m in runs.items():
                        if not self.counts:
                            per[o, 0] += m
                        elif c <= r:
                            per[o, c] += m
                q = per[side.options[j][d]]
                new = np.zeros((len(side), width), np.int64)
                for i in range(poly.shape[1]):
                    new[:, i:] += poly[:, i:i + 1] * q[:, :width - i]
                poly = new
            out.append(poly)
        return out[0], np.cumsum(out[1], axis=1)

    # -- pairs -------------------------------------------------------------------------------
    def pair_keys(self, view: Searchable, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
        """Exact keys (uint64 words) of pairs (A entry, B entry)."""
        return add_words(view.A.keys_at(pa, self.words), view.B.keys_at(pb, self.words))

    def exact_order(self, view: Searchable, pa: np.ndarray, pb: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pairs (A entries, B entries) in increasing order of their exact values, and their
        keys: sorted by float sum, every run of neighbours closer than twice the error bound
        re-ordered exactly (integer keys, or :meth:`compare_keys`)."""
        s = view.A.s[pa] + view.B.s[pb]
        order = np.argsort(s, kind="stable")
        pa, pb, s = pa[order], pb[order], s[order]
        keys = self.pair_keys(view, pa, pb)
        close = np.flatnonzero(np.diff(s) <= 2 * self.bound)
        if not close.size:
            return pa, pb, keys
        if self.ordered:                   # key order is value order
            perm = np.lexsort(tuple(keys[:, j] for j in range(keys.shape[1] - 1, -1, -1)))
            return pa[perm], pb[perm], keys[perm]
        perm = np.arange(s.shape[0])
        i = 0
        while i < close.size:              # runs of neighbours too close to order by floats
            lo = hi = close[i]
            while i < close.size and close[i] == hi:
                i += 1
                hi += 1
            members = np.arange(lo, hi + 1)
            perm[lo:hi + 1] = members[self.sort_keys(words_to_ints(keys[members]))]
        return pa[perm], pb[perm], keys[perm]

    def bands_in_order(self, view: Searchable, edges: np.ndarray, r: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The pairs of ``view`` feasible for the count bound ``r`` in exact value order, band
        by band between ``edges`` (floats, -inf first and inf last): each band's pairs sorted
        by float sum, neighbours closer than twice the error bound re-ordered exactly, and
        the pairs near a band's upper edge carried into the next band (so the order is exact
        across edges too)."""
        hold = 4 * self.bound
        carry_a, carry_b, carry_s = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        for j in range(edges.shape[0] - 1):
            lo, hi = edges[j], edges[j + 1]
            # the kernels compare s_b with y - s_a: fetch a little more and keep the pairs whose
            # float sum s_a + s_b lies in [lo, hi), a partition of the pairs
            _, pa, pb = view.count_band(lo - self.bound, hi + self.bound, r)
            s = view.A.s[pa] + view.B.s[pb]
            mine = (s >= lo) & (s < hi)
            pa, pb = np.concatenate([carry_a, pa[mine]]), np.concatenate([carry_b, pb[mine]])
            pa, pb, s = self._float_order(view, pa, pb, np.concatenate([carry_s, s[mine]]))
            cut = pa.shape[0]
            if np.isfinite(hi):           # pairs within the error of the edge may belong after the next band's
                near = np.flatnonzero(s >= hi - hold)
                cut = int(near[0]) if near.size else cut
            carry_a, carry_b, carry_s = pa[cut:], pb[cut:], s[cut:]
            yield pa[:cut], pb[:cut]

    def _float_order(self, view: Searchable, pa: np.ndarray, pb: np.ndarray, s: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pairs (with their float sums ``s``) sorted by float sum, each run of neighbours
        closer than twice the error bound re-ordered exactly (:meth:`exact_order` of the
        run's pairs only); the pairs and their float sums in that order."""
        order = np.argsort(s)                  # equal floats are re-ordered exactly below
        pa, pb, s = pa[order], pb[order], s[order]
        close = np.flatnonzero(np.diff(s) <= 2 * self.bound)
        if close.size:
            starts = close[np.concatenate(([True], np.diff(close) > 1))]
            ends = close[np.concatenate((np.diff(close) > 1, [True]))] + 2
            for a, b in zip(starts.tolist(), ends.tolist()):
                pa[a:b], pb[a:b], _ = self.exact_order(view, pa[a:b], pb[a:b])
                s[a:b] = view.A.s[pa[a:b]] + view.B.s[pb[a:b]]
        return pa, pb, s

    def pair_ints(self, view: Searchable, pa: np.ndarray, pb: np.ndarray) -> list[int]:
        return words_to_ints(self.pair_keys(view, pa, pb))


def searchable(A: Side, B: Side, counts: bool) -> Searchable:
    """The kernels' view of two sides (B by count threshold when entries carry ``counts``,
    built as needed)."""
    return Searchable(A, Lists(B, counts))


def _single(group: RankGroup) -> bool:
    """Whether every option of a group has one realisation (its runs view is its distinct view)."""
    return all(len(runs) == 1 and next(iter(runs.values())) == 1 for runs in group.runs)


def _split(groups: list[RankGroup], raws: list[np.ndarray], order: list[int], counts: bool,
           queries: int = SPLIT_QUERIES) -> list[int] | None:
    """The groups of side A: a prefix of ``order`` (groups by decreasing span of values),
    chosen to make ``queries`` (default :data:`SPLIT_QUERIES`) queries (each visits the A entries within B's span
    of it, about |A| * span(B) / span(A)) and building the sides (about
    :data:`SPLIT_BUILD` times as much per entry) cheap while B's lists (one per count
    threshold up to :data:`SPLIT_LISTS` for forms with ``counts``, about 14 bytes an
    entry, once more for the runs view unless B's options have one realisation each) fit
    :data:`B_BUDGET` and no side exceeds :data:`~irscale.scales.measures.groups.SIDE_LIMIT`;
    None when no split fits."""
    sizes = [len(groups[i]) for i in order]
    spans = [float(raws[i].max() - raws[i].min()) for i in order]
    tops = [max(max(r) for r in groups[i].runs) for i in order]
    singles = [_single(groups[i]) for i in order]
    total = math.prod(sizes)
    best, best_key = None, None
    size_a, span_a = 1, 0.0
    for j in range(1, len(order) + 1):
        size_a *= sizes[j - 1]
        span_a += spans[j - 1]
        size_b = total // size_a
        span_b = sum(spans[j:])
        lists = (min(sum(tops[j:]), SPLIT_LISTS) + 1) if counts else 1
        if size_a > SIDE_LIMIT or size_b > SIDE_LIMIT:
            continue
        views = 1 if all(singles[j:]) else 2
        memory = size_b * 14 * lists * views
        query = size_a * min(1.0, span_b / span_a if span_a > 0 else 1.0) + math.log2(size_a + 1)
        cost = queries * query + SPLIT_BUILD * (2 * size_a + size_b * (1 + lists) * views)
        fits = memory <= B_BUDGET
        key = (not fits, cost if fits else memory)
        if best_key is None or key < best_key:
            best, best_key = order[:j], key
    return best


@functools.lru_cache(maxsize=8)
def oracle_form(measure: Measure, counted: int | None = None, queries: int = SPLIT_QUERIES) -> OracleForm:
    """The oracle form of a measure counting relevant documents, or the documents of grade
    ``counted``, its sides split for ``queries`` queries (built once; its views are built on
    first use; another split that comes out as the default's is the default's form)."""
    form = OracleForm(measure, counted, queries)       # (choosing the split builds no side)
    few = oracle_form(measure, counted) if queries != SPLIT_QUERIES else form
    return few if form.a_groups == few.a_groups else form
