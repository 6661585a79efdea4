"""Layout ``oracle``: scales that count ranks on demand and store nothing but a few attributes.

A measure whose exact key is a sum of independent parts over groups of ranks
(:mod:`irscale.scales.measures.groups`: binary RBP with p = a/c, DCG and nDCG with their
logarithmic discounts, P, R, F1, RR) has one distinct value per tuple of group options.
The unq rank of a value is then the number of feasible tuples whose value is at most it, a
count answered by meet-in-the-middle over two sides of about sqrt(K) entries each
(:mod:`irscale.scales.tables.oracle_form`, :mod:`irscale.scales.tables.oracle_kernels`):
exactly, since every pair whose float sum lies within the proven error of the query is
decided with exact keys (integers; for logarithms equal keys or
:data:`~irscale.scales.measures.keys.MP_DIGITS`-digit arithmetic). No table is built, so
scales exist up to N = 40 (:data:`~irscale.scales.measures.measure.MAX_ORACLE_N`), where a
table of RBP(p=0.8)@40 would hold 2^40 entries.

An oracle serves every recall base, as a stratified table does: a tuple is feasible for
RB = r when its realisation with the fewest relevant documents has at most r of them.
Graded measures with per-grade recall bases (c_1..c_G) (graded nDCG, nDCG_trec) have one
oracle per count vector (each count capped at N), for the vectors that bound at most one
grade: with c_g < N for grade g alone, a tuple is feasible when its realisation with the
fewest documents of grade g has at most c_g of them (the grouping counting grade g); with
every c_g = N every tuple is. A vector bounding several grades gets the graded oracle of
:mod:`~irscale.scales.tables.graded_oracle`, or where that is not served the table of its runs.
``k``, ``n_runs``, ``rank``, ``rank_runs``, ``rank_ids``, ``scaled``, ``midranks_of_ranks``
and ``values_of_ranks`` work at any K; ``values``, ``counts`` and ``representatives`` list
every distinct value and exist only up to :data:`LIST_LIMIT` of them; ``value_blocks`` (what
spacing statistics read) streams bigger scales band by band (:meth:`OracleScale.streamed_blocks`,
time proportional to K) and ``cdf_points`` counts the points of the distribution of values
over runs (the figures).

Stored: attributes only (``oracle_groups``: the number of options of every group, and
``distinct_by_rb``: K for RB = 1..N; per-vector oracles: ``n_distinct``, K of the vector,
and ``oracle_counted``, the grade counted, 0 for none), checked against the measure when read.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from irscale.enumerate.progress import progress_bar
from irscale.enumerate.runspace import feasible_space_size
from irscale.enumerate.split_kernels import popcount_ids
from irscale.enumerate.words import words_to_ints
from irscale.errors import CorruptStoreError, OracleListError, RunError, ValueNotInScaleError, warn
from irscale.scales.measures.groups import Grouping
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.entries import LAYOUT as ENTRIES
from irscale.scales.tables.entries import check_counts
from irscale.scales.tables.graded_oracle import GradedOracleTable, graded_oracle_table, serves
from irscale.scales.tables.graded_oracle import validate as validate_graded
from irscale.scales.tables.oracle_form import LIST_LIMIT, SPLIT_MANY, OracleForm, Searchable, compare_words, oracle_form
from irscale.scales.tables.scale import (
    AMBIGUOUS,
    ATOL,
    BLOCK_VALUES,
    FOUND,
    RTOL,
    BuildSettings,
    Lookup,
    Scale,
    Table,
    TableSink,
    TableSource,
)
from irscale.scales.tables.units import duration

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

LISTED_KEPT = 4       # listed scales an oracle table keeps (by recall base)
MANY_RANKS = 256      # values_of_ranks of more ranks than this lists the scale when it can (K <= LIST_LIMIT)
MANY_RUNS = 4096      # runs ranked by a scale past which they are ranked with sides split for many queries
#: Values per band of a streamed oracle (:meth:`OracleScale.streamed_blocks`), the values
#: per second it streams on one core (an estimate), and from how many values on it warns
#: with its estimate first.
STREAM_BAND = 1 << 22
STREAM_RATE = 4e6
STREAM_WARN = 1 << 27
#: Scales of at most this many values answer value_range, values_of_ranks and
#: midranks_of_ranks from the list of their values (listed in a few milliseconds); bigger
#: ones count, unless they were listed already.
QUICK_LIST = 1 << 14


@dataclasses.dataclass(kw_only=True)
class OracleTable(Table):
    """A rank oracle: no datasets. ``n_entries`` is K over all runs (the common recall
    base), ``n_runs`` the size of the run space; ``table_rb`` is None (one oracle serves
    every recall base), or for per-grade recall bases the count vector served, with K and
    the runs feasible for it."""

    layout: ClassVar[str] = "oracle"
    kind: ClassVar[str] = "exact: rank oracle"
    #: Listed scales by recall base, kept for the next scale of the same recall base.
    listed: dict = dataclasses.field(default_factory=dict, repr=False)

    def stored_bytes(self) -> int:
        return 0

    def scale(self, rb: RecallBase = None) -> OracleScale:
        return OracleScale(self, rb)


def oracle_count(measure: Measure, rb: RecallBase) -> tuple[int | None, int]:
    """How the oracle of ``measure`` counts the runs feasible for ``rb`` (its :attr:`~Measure.recall_base`)."""
    return measure.recall_base.oracle_count(rb)


def oracle_table(measure: KeyMeasure, table_rb: tuple[int, ...] | None = None) -> OracleTable:
    """The oracle of a measure, for the count vector ``table_rb`` when it has per-grade
    recall bases (default: the common one), counting its K (raises
    :class:`~irscale.errors.MeasureError` when it has none)."""
    policy = measure.recall_base
    table_rb = policy.table_rb(policy.common() if table_rb is None else table_rb)
    if table_rb is None:                          # one oracle serves every recall base
        form = oracle_form(measure)
        rb, k, n_runs = policy.common(), form.grouping.k, measure.id_count()
    elif serves(measure, table_rb):                # a vector bounding several grades
        return graded_oracle_table(measure, table_rb)
    else:                                         # the oracle of one count vector
        counted, r = policy.oracle_count(table_rb)
        form = oracle_form(measure, counted)
        rb, k, n_runs = table_rb, form.distinct(r), feasible_space_size(measure.n, table_rb)
    factor = measure.spec.value_factor(rb)       # NaN for keys not proportional to values (RR)
    pairs = form.bound * abs(factor) if np.isfinite(factor) else 0.0
    method = "oracle:exact-integer" if form.grouping.proven and form.ordered else "oracle:formal-log+mpmath60"
    cert = Certificate(method, max(measure.spec.error_bound(rb), pairs), float("nan"),
                       "not enumerated (rank oracle)", 0)
    return OracleTable(measure=measure, n_entries=k, n_runs=n_runs, certificate=cert, table_rb=table_rb)


class OracleScale(Scale):
    """The unq scale of a rank oracle for one recall base (see the module docstring).
    ``r``: the table recall base min(rb, N) (0 for measures without recall base)."""

    def __init__(self, table: OracleTable, rb=None):
        super().__init__(table, rb)
        m = self.measure
        self.counted, self.r = m.recall_base.oracle_count(self.rb)
        self.form: OracleForm = oracle_form(m, self.counted)
        self._listed = None
        self._value_cache: dict[int, float] = {}
        self._k = None
        self._n_runs = None
        # ranks (sorted) and exact keys of the runs ranked last (mid-ranks of ranks read them); runs ranked so far
        self._recent, self._runs_ranked = (np.zeros(0, np.int64), np.zeros((0, self.form.words), np.uint64)), 0

    @property
    def _distinct(self) -> Searchable:
        return self.form.view("distinct")

    @property
    def _runs(self) -> Searchable:
        return self.form.view("runs")

    # -- facts ----------------------------------------------------------------------------
    @property
    def k(self) -> int:
        if self._k is None:
            self._k = self.form.distinct(self.r)
        return self._k

    @property
    def n_runs(self) -> int:
        if self._n_runs is None:
            self._n_runs = int(self._runs.count(np.array([np.inf]), False, self.r)[0])
        return self._n_runs

    def _check_listable(self, what: str) -> None:
        if self.k > LIST_LIMIT:
            raise OracleListError(
                f"{self._label()} is a rank oracle of {self.k:,} distinct values: it lists {what} only up to "
                f"{LIST_LIMIT:,} (ranks, rank_runs, values_of_ranks and midranks_of_ranks work at any size; "
                f"value_blocks streams every value in order, as spacing statistics read them)")

    def _list(self):
        """(values, counts, representatives) of every feasible distinct value."""
        if self._listed is None:
            self._listed = self.table.listed.get(self.rb)
        if self._listed is None:
            self._check_listable("its values")
            D, form = self._distinct, self.form
            _, pa, pb = D.count_band(-np.inf, np.inf, self.r)
            pa, pb, keys = form.exact_order(D, pa, pb)
            values = self.measure.spec.float_values(keys, self.rb)
            reps = D.A.first_at(pa) + D.B.first_at(pb)
            counts = self._list_counts(pa, pb)
            self._listed = (np.asarray(values, np.float64), counts, reps)
            if len(self.table.listed) >= LISTED_KEPT:
                self.table.listed.clear()
            self.table.listed[self.rb] = self._listed
        return self._listed

    def _list_counts(self, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
        """Feasible runs of each listed distinct value (pairs of the distinct view)."""
        D, R = self._distinct, self._runs
        if R is D:
            return np.ones(pa.shape[0], np.int64)
        _, ra, rb_ = R.count_band(-np.inf, np.inf, self.r)
        w = R.A.w[ra] * R.B.w[rb_]
        ta = R.A.codes_in(D.A, R.A.code[ra])
        tb = R.B.codes_in(D.B, R.B.code[rb_])
        nb = max(len(D.B), 1)
        tuple_of_run = ta * nb + tb
        tuple_of_value = D.A.code[pa] * nb + D.B.code[pb]
        order = np.argsort(tuple_of_value)
        where = np.searchsorted(tuple_of_value[order], tuple_of_run)
        counts = np.zeros(pa.shape[0], np.int64)
        np.add.at(counts, order[where], w)
        return counts

    @property
    def values(self) -> np.ndarray:
        return self._list()[0]

    @property
    def counts(self) -> np.ndarray:
        return self._list()[1]

    @property
    def representatives(self) -> np.ndarray:
        """A feasible run id of each value: the smallest id among its realisations with the
        fewest counted documents (relevant ones, or of the grade a per-grade vector bounds),
        for a per-grade vector maybe larger than the smallest feasible id a table gives."""
        return self._list()[2]

    def value_blocks(self, chunk: int = BLOCK_VALUES) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Blocks of the distinct values in value order with their run counts: from the
        list up to :data:`LIST_LIMIT` values, else streamed band by band
        (:meth:`streamed_blocks`)."""
        if self.k <= LIST_LIMIT or self._listed is not None or self.rb in self.table.listed:
            return super().value_blocks(chunk)
        return self.streamed_blocks(chunk)

    def streamed_blocks(self, chunk: int = BLOCK_VALUES, band: int = STREAM_BAND
                        ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The distinct values in value order with their run counts, without listing them
        all: bands of about ``band`` values between floats found by bisection, in exact
        order (:meth:`OracleForm.bands_in_order`). Values are correctly rounded from the
        exact keys; run counts come from the realisations of the sides' entries by count
        (:meth:`OracleForm.count_polys`). Time grows with K (about a second per 4 million
        values on one core; a progress bar from :data:`STREAM_WARN` values on)."""
        D, form, spec = self._distinct, self.form, self.measure.spec
        if self.k > STREAM_WARN:
            warn(f"{self._label()}: streaming its {self.k:,} distinct values band by band takes about "
                          f"{duration(self.k / STREAM_RATE)}")
        PA, CB = form.count_polys(D, self.r)
        D.A.all_keys(form.words)
        D.B.all_keys(form.words)
        starts = np.arange(band + 1, self.k + 1, band, dtype=np.int64)
        edges = np.concatenate(([-np.inf], self._bisect(starts) if starts.size else [], [np.inf]))
        bar = progress_bar(total=self.k, unit="value", unit_scale=True, desc=f"streaming {self._label()}",
                           disable=self.k <= STREAM_WARN, leave=False)
        try:
            for pa, pb in form.bands_in_order(D, edges, self.r):
                for a in range(0, pa.shape[0], chunk):
                    qa, qb = pa[a:a + chunk], pb[a:a + chunk]
                    values = spec.float_values(form.pair_keys(D, qa, qb), self.rb)
                    counts = np.zeros(qa.shape[0], np.int64)
                    for i in range(PA.shape[1]):
                        counts += PA[qa, i] * CB[qb, PA.shape[1] - 1 - i]
                    bar.update(qa.shape[0])
                    yield np.asarray(values, np.float64), counts
        finally:
            bar.close()

    def _listed_cheaply(self) -> bool:
        """Whether answers may come from the list of values: already listed, or small
        enough to list in a moment (else they are counted)."""
        return (self._listed is not None or self.rb in self.table.listed
                or self.k <= min(QUICK_LIST, LIST_LIMIT))

    def value_range(self) -> tuple[float, float]:
        if self._listed_cheaply():
            return super().value_range()
        lo, hi = self.values_of_ranks(np.array([1, self.k]))
        return float(lo), float(hi)

    # -- value -> rank ------------------------------------------------------------------------
    def _default_atol(self) -> float:
        """The float error of the oracle's values in value units (0 when the raw values are
        integers below 2^53, exact in float64)."""
        if self.form.ordered and self.form.smax < 2 ** 53:
            return 0.0
        return 2 * self.form.bound * abs(self.measure.spec.value_factor(self.rb))

    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        finite = np.isfinite(x)
        x = np.where(finite, x, -1.0)
        if atol is None:
            atol = self._default_atol()
        spec, form, D = self.measure.spec, self.form, self._distinct
        raw, dfac = spec.raw_of_values(x, self.rb)
        tols = (atol + rtol * np.abs(x)) * abs(dfac) + 4 * np.spacing(np.abs(raw) + 1)
        lo, hi = raw - tols, raw + tols
        M = form.margin
        # pairs within M of lo or of hi are decided one by one; the pairs between lo + M and
        # hi - M (wide tolerances, e.g. values rounded to 4 decimals) are certainly within
        # tolerance and only counted
        wide = hi - lo > 4 * M
        c_lo, s_lo, a_lo, b_lo, over_lo = D.scan(lo - M, np.where(wide, lo + M, hi + M), self.r)
        c_hi, s_hi, a_hi, b_hi, over_hi = D.scan(np.where(wide, hi - M, np.inf), hi + M, self.r)
        n = x.shape[0]
        middle = np.where(wide, c_hi - c_lo - np.diff(s_lo), 0)
        q_of = np.concatenate([np.repeat(np.arange(n), np.diff(s_lo)), np.repeat(np.arange(n), np.diff(s_hi))])
        pa, pb = np.concatenate([a_lo, a_hi]), np.concatenate([b_lo, b_hi])
        s = D.A.s[pa] + D.B.s[pb]
        edge = form.bound + 4 * np.spacing(np.abs(s) + 1)
        # classify each candidate against [lo, hi]: by its float sum where that is certain,
        # else by the correctly rounded float of its exact raw value
        rawf = s.copy()
        unsure = (np.abs(s - lo[q_of]) <= edge) | (np.abs(s - hi[q_of]) <= edge)
        if unsure.any():
            idx = np.flatnonzero(unsure)
            for j, key in zip(idx, form.pair_ints(D, pa[idx], pb[idx])):
                rawf[j] = form.raw_float(key)
        is_below = rawf < lo[q_of]
        inside = (rawf >= lo[q_of]) & (rawf <= hi[q_of])
        n_below = c_lo + np.bincount(q_of, weights=is_below, minlength=n).astype(np.int64)
        n_inside = middle + np.bincount(q_of, weights=inside, minlength=n).astype(np.int64)
        ranks = n_below + 1
        status = np.where(n_inside == 1, 0, np.where(n_inside == 0, 1, 2)).astype(np.int8)
        over = over_lo | over_hi
        several = np.flatnonzero((n_inside > 1) | over)
        if several.size:                        # ambiguous: the rank of the value nearest the query
            near = D.count(raw[several], True, self.r)
            below_raw = near.astype(np.float64)
            ranks[several] = np.clip(below_raw + 1, 1, max(self.k, 1)).astype(np.int64)
            status[several] = 2
        status[~finite] = 1
        ranks = np.minimum(ranks, max(self.k, 1))
        return ranks.astype(np.int64), status

    # -- run -> rank --------------------------------------------------------------------------
    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        q = np.asarray(ids, dtype=np.int64).reshape(-1)
        m = self.measure
        if q.size == 0:
            return np.zeros(0, np.int64)
        if self.form.counts and self.counted is None:      # at most r relevant documents
            c = popcount_ids(q, m.levels, m.n)
            bad = np.flatnonzero(c > self.r)
            if bad.size:
                i = int(bad[0])
                raise RunError(f"run {i} has {int(c[i])} relevant documents, more than the recall base "
                               f"rb={self.rb}: it cannot occur for this topic")
        runs = m.runs_of_ids(q)
        m.recall_base.refuse_infeasible(runs, self.rb)     # per-grade counts: at most c_g of each grade g
        keys = m.keys_of_runs(runs)
        self._runs_ranked += q.size
        form = self.form if self._runs_ranked <= MANY_RUNS else oracle_form(m, self.counted, SPLIT_MANY)
        below, _ = self._rank_keys(form.view("distinct"), keys, m.spec.raw_floats(keys), form)
        ranks = below + 1
        known, first = np.unique(ranks, return_index=True)
        self._recent = (known, keys[first])
        return ranks

    def _rank_keys(self, view: Searchable, keys: np.ndarray, y: np.ndarray, form: OracleForm | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """Per exact key (uint64 words) with float raw ``y``: the weight of the pairs of ``view`` (of
        ``form``, default the scale's) whose value is below the key's value, and of those equal to it."""
        form = self.form if form is None else form
        M = form.margin
        lo, hi = y - M, y + M
        below, starts, pa, pb, _ = view.scan(lo, hi, self.r, limit=1 << 62)
        q_of = np.repeat(np.arange(y.shape[0]), np.diff(starts))
        pk = form.pair_keys(view, pa, pb)
        cmp = compare_words(pk, keys[q_of])
        if not form.ordered:
            # different keys: the order of their values, by floats where certain, else exactly
            s = view.A.s[pa] + view.B.s[pb]
            gap = form.bound + form.query_bound + 4 * np.spacing(np.abs(s) + 1)
            diff = np.flatnonzero(cmp != 0)
            cmp[diff] = np.where(s[diff] < y[q_of[diff]], -1, 1)
            unsure = diff[np.abs(s[diff] - y[q_of[diff]]) <= 2 * gap[diff]]
            if unsure.size:
                a = form.pair_ints(view, pa[unsure], pb[unsure])
                b = words_to_ints(keys[q_of[unsure]])
                cmp[unsure] = [form.compare_keys(u, v) for u, v in zip(a, b)]
        w = view.A.w[pa] * view.B.w[pb]
        less = below + np.bincount(q_of, weights=np.where(cmp < 0, w, 0), minlength=y.shape[0]).astype(np.int64)
        equal = np.bincount(q_of, weights=np.where(cmp == 0, w, 0), minlength=y.shape[0]).astype(np.int64)
        return less, equal

    # -- rank -> value, mid-rank ------------------------------------------------------------
    def _bisect(self, ranks: np.ndarray, view: Searchable | None = None) -> np.ndarray:
        """Per rank, the smallest float y with count(y) >= rank (count: feasible distinct
        pairs with float sum <= y; weighted pairs of the runs view when ``view`` is it); the
        value of the rank lies within the pairs' error bound of y. All ranks bisect
        together, one count per step for all of them."""
        D = self._distinct if view is None else view
        ranks = np.asarray(ranks, np.int64)
        a = np.zeros(ranks.shape[0], np.int64)          # bits of 0.0: count(0.0) may already reach
        b = np.full(ranks.shape[0], np.float64(float(self.form.smax) * (1 + 1e-9) + 1.0).view(np.int64))
        at_zero = D.count(np.zeros(1), False, self.r)[0] >= ranks
        b[at_zero] = 0
        while True:
            open_ = b - a > 1
            if not open_.any():
                break
            mid = a + (b - a) // 2               # (a + b) // 2 overflows int64 for floats above 2
            reached = D.count(mid[open_].view(np.float64), False, self.r) >= ranks[open_]
            idx = np.flatnonzero(open_)
            b[idx[reached]] = mid[idx[reached]]
            a[idx[~reached]] = mid[idx[~reached]]
        return b.view(np.float64)

    def runs_at_or_below(self, ranks: ArrayLike) -> np.ndarray:
        """Per unq rank (1..K), the number of feasible runs whose value is at most the
        value of that rank (exact: from the exact keys of the ranks and the runs view)."""
        q = np.asarray(ranks, np.int64).reshape(-1)
        uniq, inverse = np.unique(q, return_inverse=True)
        keys = self._select_keys(uniq)
        less, equal = self._rank_keys(self._runs, keys, self.measure.spec.raw_floats(keys))
        return (less + equal)[inverse]

    def cdf_points(self, targets: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """Per run count ``t`` of ``targets`` (1..n_runs), the smallest unq rank whose
        value is reached by at least t feasible runs counted from the bottom (the runs at
        or below it), and that number of runs: the points of the distribution of values
        over runs, found by bisection over the runs view and decided with exact keys (no
        listing: scales of any K)."""
        t = np.asarray(targets, np.int64).reshape(-1)
        bad = np.flatnonzero((t < 1) | (t > self.n_runs))
        if bad.size:
            raise ValueNotInScaleError(f"{self._label()}: run count {int(t[bad[0]])} is not one of 1..{self.n_runs:,} "
                                       f"(the feasible runs)")
        ranks = np.clip(self._distinct.count(self._bisect(t, self._runs), False, self.r), 1, self.k)
        cum = self.runs_at_or_below(ranks)
        for _ in range(64):                  # float sums near the bound: move by whole ranks
            low = cum < t
            if low.any():
                ranks[low] += 1
            below = np.zeros(t.shape[0], bool)
            step = ranks > 1
            if step.any():
                prev = np.zeros(t.shape[0], np.int64)
                prev[step] = self.runs_at_or_below(ranks[step] - 1)
                below = step & (prev >= t)
                ranks[below] -= 1
            if not (low.any() or below.any()):
                return ranks, cum
            cum = self.runs_at_or_below(ranks)
        raise RuntimeError(f"{self._label()}: ranks of run counts did not settle")

    def _select_keys(self, q: np.ndarray) -> np.ndarray:
        """Exact keys (uint64 words) of the distinct values of ranks ``q`` (1..K, sorted,
        unique). Each run of consecutive ranks is found together: the floats y0, y1 near its
        first and last values by bisection, then the band [y0, y1] widened by the error
        margin, ordered exactly."""
        D, form = self._distinct, self.form
        out = np.zeros((q.shape[0], form.words), np.uint64)
        runs = np.split(np.arange(q.shape[0]), np.flatnonzero(np.diff(q) != 1) + 1)
        firsts = np.array([q[r[0]] for r in runs], np.int64)
        lasts = np.array([q[r[-1]] for r in runs], np.int64)
        ys = self._bisect(np.concatenate([firsts, lasts]))
        M = 2 * form.margin
        for j, run in enumerate(runs):
            n0, pa, pb = D.count_band(ys[j] - M, ys[len(runs) + j] + M, self.r)
            pa, pb, keys = form.exact_order(D, pa, pb)
            out[run] = keys[q[run] - n0 - 1]
        return out

    def values_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        q = self._check_ranks(ranks)
        if self._listed_cheaply() or (q.size > MANY_RANKS and self.k <= LIST_LIMIT):
            return self.values[q - 1].reshape(np.shape(ranks))
        uniq, inverse = np.unique(q, return_inverse=True)
        cache = self._value_cache
        missing = np.array([u for u in uniq.tolist() if u not in cache], np.int64)
        if missing.size:
            found = self.measure.spec.float_values(self._select_keys(missing), self.rb)
            if len(cache) > 1 << 20:
                cache.clear()
            cache.update(zip(missing.tolist(), found.tolist()))
        return np.array([cache[u] for u in uniq.tolist()], np.float64)[inverse].reshape(np.shape(ranks))

    def lookup(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL, *,
               decimals: ArrayLike | None = None) -> Lookup:
        """:meth:`Scale.lookup`, with the values it reads (the matched values, and the
        neighbours that messages about ambiguous values name) selected in one batch."""
        if not self._listed_cheaply():
            x, shape = self._flat(values)
            ranks, status = self._ranked(x, rtol, self._atol(x, shape, atol, decimals))
            need = np.concatenate([ranks[status == FOUND]] + [ranks[status == AMBIGUOUS] + d for d in (-1, 0, 1)])
            need = need[(need >= 1) & (need <= self.k)]
            if need.size:
                self.values_of_ranks(np.unique(need))
        return super().lookup(values, rtol, atol, decimals=decimals)

    def midranks_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """Mid-ranks: listed oracles from their counts; else from the exact key of each rank
        (the runs ranked lately, or selected) and the runs view: runs below + (runs equal
        + 1) / 2."""
        q = self._check_ranks(ranks)
        if self.form.same_views:                 # one run per value: mid-rank = rank
            return q.astype(np.float64)
        if self._listed_cheaply():
            return super().midranks_of_ranks(q)
        uniq, inverse = np.unique(q, return_inverse=True)
        known, known_keys = self._recent
        at = np.minimum(np.searchsorted(known, uniq), max(known.shape[0] - 1, 0))
        have = (known[at] == uniq) if known.shape[0] else np.zeros(uniq.shape[0], bool)
        keys = np.zeros((uniq.shape[0], self.form.words), np.uint64)
        keys[have] = known_keys[at[have]]
        if not have.all():                      # ranks of no run ranked lately: their values selected
            keys[~have] = self._select_keys(uniq[~have])
        less, equal = self._rank_keys(self._runs, keys, self.measure.spec.raw_floats(keys))
        return (less + (equal + 1) / 2.0)[inverse]


class OracleLayout:
    """How rank oracles are built (nothing to enumerate), written and read (attributes)."""

    name = "oracle"
    seconds_per_run = 0.0
    seconds_per_entry = 0.0
    max_runs = None
    checksummed = ()
    lazy = ()

    def build(self, measures: Iterable[KeyMeasure], rbs: dict[Measure, list[tuple[int, ...] | None]],
              options: BuildSettings) -> Iterator[Table]:
        """The oracles; per-grade count vectors that bound several grades get the tables
        of their feasible runs (``recall_base.oracle_serves``)."""
        for m in measures:
            served = [t for t in rbs[m] if m.recall_base.oracle_serves(t) or serves(m, t)]
            yield from (oracle_table(m, t) for t in served)
            rest = [t for t in rbs[m] if t not in served]
            if rest:
                yield from ENTRIES.build([m], {m: rest}, options)

    def write(self, table: OracleTable, sink: TableSink) -> None:
        m = table.measure
        form = oracle_form(m)
        g: Grouping = form.grouping
        if table.table_rb is not None:
            graded = isinstance(table, GradedOracleTable)
            sink.attrs(oracle_counted=-1 if graded else int(m.recall_base.oracle_count(table.table_rb)[0] or 0))
        by_rb = [form.distinct(r) for r in m.recall_base.stratified_rbs()]   # K per rb of a shared oracle
        sink.attrs(implicit=False, n_distinct=int(table.n_entries), distinct_by_rb=json.dumps(by_rb),
                   oracle_groups=json.dumps([len(x) for x in g.groups]), oracle_reason=g.reason)

    def read(self, source: TableSource, **common: Any) -> OracleTable | GradedOracleTable:
        graded = serves(common["measure"], common.get("table_rb"))
        return (GradedOracleTable if graded else OracleTable)(**common)

    def validate(self, table: OracleTable, source: TableSource, deep: bool) -> None:
        """Raise :class:`~irscale.errors.CorruptStoreError` unless the attributes are those
        of the measure's oracle (its groups, K, the run space)."""
        m, a = table.measure, source.attrs
        check_counts(table.n_entries, table.n_runs, m, table.table_rb, a)
        if "oracle" not in m.layouts:
            raise CorruptStoreError(f"an oracle for {m}, which has none ({m.oracle_reason()})")
        g = m.grouping()
        if m.recall_base.per_grade:
            _validate_vector(table, a, g, deep)
        elif table.table_rb is not None:
            raise CorruptStoreError("an oracle for one recall base (oracles serve every recall base)")
        elif (table.n_entries, a["n_distinct"], table.n_runs) != (g.k, g.k, m.id_count()):
            raise CorruptStoreError(f"n_entries={table.n_entries}, n_distinct={a['n_distinct']}, n_runs={table.n_runs}"
                                    f" for an oracle of {g.k} values over {m.id_count()} runs")
        if a.get("oracle_groups") != json.dumps([len(x) for x in g.groups]):
            raise CorruptStoreError(f"oracle_groups {a.get('oracle_groups')!r} differ from the measure's groups")
        try:
            by_rb = json.loads(a.get("distinct_by_rb", "[]"))
        except ValueError:
            raise CorruptStoreError("distinct_by_rb is not JSON") from None
        if not isinstance(by_rb, list) or len(by_rb) != len(m.recall_base.stratified_rbs()):
            raise CorruptStoreError(f"distinct_by_rb {a.get('distinct_by_rb')!r}")


def _validate_vector(table: OracleTable, a: dict, g: Grouping, deep: bool) -> None:
    """Checks of the oracle of one per-grade count vector: a vector it serves, its grade
    counted, its feasible runs, K at most the grouping's (recounted when ``deep``)."""
    m, t = table.measure, table.table_rb
    policy = m.recall_base
    if isinstance(table, GradedOracleTable):
        return validate_graded(table, a, deep)
    if t is None or len(t) != m.levels - 1 or not policy.oracle_serves(t) or t != policy.table_rb(t):
        raise CorruptStoreError(f"an oracle for the per-grade counts {t}, which no oracle of {m} serves")
    counted, r = policy.oracle_count(t)
    if a.get("oracle_counted") != (counted or 0):
        raise CorruptStoreError(f"oracle_counted={a.get('oracle_counted')!r} for the per-grade counts {t}")
    if table.n_runs != feasible_space_size(m.n, t) or not 1 <= table.n_entries <= g.k \
            or a["n_distinct"] != table.n_entries:
        raise CorruptStoreError(f"n_entries={table.n_entries}, n_distinct={a['n_distinct']}, n_runs={table.n_runs} "
                                f"for an oracle of the per-grade counts {t}")
    if deep and (k := oracle_form(m, counted).distinct(r)) != table.n_entries:
        raise CorruptStoreError(f"n_entries={table.n_entries}, counted {k}")


LAYOUT = OracleLayout()

