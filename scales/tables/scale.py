"""Tables of distinct values and the unq interval scale built from them.

A :class:`Table` is what enumeration produces and the store keeps: the *entries* of a
measure over the whole run space in increasing value order. Without a recall base an
entry is a distinct value; for RB-dependent measures it is a (distinct value, stratum)
pair, the stratum being the number of relevant documents of the runs behind it, and the
entries of one value are adjacent, by increasing stratum; bit 7 of an entry's strata byte
(:data:`~irscale.scales.tables.lookup_kernels.FIRST`) marks the first one.
Each entry keeps the smallest id of its runs (the value is recomputed from it, see
:mod:`irscale.scales.measures.split_forms`) and the number of runs. One table serves every recall base:
the table of RB = r holds the values whose smallest stratum is <= r (SPEC section 2).

A :class:`Scale` is a table seen for one actual recall base, with the rank maps

* unq rank: ``phi(m) = |{x in M(space) : x <= m}|``, 1-based (the minimum has rank 1),
  tied runs share a rank and no rank is skipped, so ranks 1..K are equally spaced;
* mid-rank (for comparison only): the mean of the 1-based positions the runs with that
  value occupy in the sorted list of all (feasible) runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from irscale.errors import RunError, ValueNotInScaleError
from irscale.scales.tables import lookup_kernels as lk
from irscale.scales.tables.certificate import Certificate

#: Default relative tolerance of :meth:`Scale.rank`: what float64 arithmetic may lose
#: when a caller sums up to 64 terms in another order than irscale (64 ulps). The default
#: absolute tolerance is the table's certified float error bound. Tables at N = 30 have
#: neighbouring values 1e-13 apart, so looser tolerances make lookups ambiguous.
RTOL = 64 * 2.0 ** -52
ATOL = None


@dataclass
class Table:
    """Entries of one measure over REL^N, in increasing value order.

    ``ids``: smallest run id per entry (None for an implicit table whose entry i is run
    i); ``counts``: runs per entry (None: all 1); ``strata``: per entry the number of
    relevant documents of its runs (bits 0-6) and whether it starts a new distinct value
    (bit 7), uint8 (None for measures without recall base: one entry per value);
    ``n_entries``; ``n_runs``: runs in the whole space. Arrays may be memory maps of a
    store file. Tables of graded RB-dependent measures have no strata: each holds the
    runs feasible for one capped per-grade count vector ``rb_counts`` and ``n_runs``
    counts those runs.
    """

    measure: object
    ids: np.ndarray | None
    counts: np.ndarray | None
    strata: np.ndarray | None
    n_entries: int
    n_runs: int
    certificate: Certificate
    meta: dict = field(default_factory=dict)
    parts: list | None = None   # bucket results not yet concatenated (written by the store)
    index: tuple | None = None  # stored block index (block_raw, block_cum), see lookup_kernels
    run_index: np.ndarray | None = None  # runs before each block per recall base (built on demand)
    rb_counts: tuple | None = None  # graded RB-dependent measures: the capped (c_1..c_G) of this table

    @property
    def implicit(self) -> bool:
        return self.ids is None and self.parts is None

    def arrays_for_kernels(self):
        ids = self.ids if self.ids is not None else np.zeros(0, np.int64)
        strata = self.strata if self.strata is not None else np.zeros(0, np.uint8)
        return ids, strata


def pack_strata(strata: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Stratum (bits 0-6) and new-value flag (bit 7) in one byte per entry."""
    return (np.asarray(strata, dtype=np.uint8) & lk.STRATUM) | (np.asarray(first, dtype=np.uint8) << 7)


def streaming_index(measure, parts_iter):
    """Block index of a table given as consecutive parts ``(ids, packed strata or None)``,
    computed without holding the table: (block_raw, block_cum)."""
    sf = _split(measure)
    nr = measure.n + 1 if measure.stratified else 1
    raws, cums = [], [np.zeros((1, nr), np.int64)]
    pend = None
    total = np.zeros(nr, np.int64)

    def flush(ids, strata):
        nonlocal total
        br, bc = lk.build_index(ids, False, ids.shape[0], strata, sf.A, sf.state, sf.B, sf.S, nr)
        raws.append(br)
        cums.append(bc[1:] + total)
        total = total + bc[-1]

    for ids, strata in parts_iter:
        ids = np.asarray(ids, dtype=np.int64)
        strata = np.zeros(0, np.uint8) if strata is None or len(strata) == 0 else np.asarray(strata)
        if pend is not None:
            ids = np.concatenate([pend[0], ids])
            strata = np.concatenate([pend[1], strata]) if strata.size or pend[1].size else strata
        full = ids.shape[0] // lk.BLOCK * lk.BLOCK
        if full:
            flush(ids[:full], strata[:full] if strata.size else strata)
        pend = (ids[full:], strata[full:] if strata.size else strata)
    if pend is not None and pend[0].shape[0]:
        flush(*pend)
    block_raw = np.concatenate(raws) if raws else np.zeros(0)
    return block_raw, np.concatenate(cums)


def _split(measure):
    from irscale.scales.measures.split_forms import cached_split_form
    return cached_split_form(measure)


class Scale:
    """The unq interval scale of a measure at cutoff N (and recall base RB).

    Attributes
    ----------
    measure : Measure
    n : int
        Run length N.
    rb : int or None
        The actual recall base (may exceed N: values then use it while the order is that
        of ``min(rb, N)``).
    values : ndarray of float64, shape (K,)
        Sorted distinct values; ``values[i]`` has unq rank ``i + 1`` (computed on first
        use; for very large tables prefer :meth:`rank`, which reads only what it needs).
    counts : ndarray of int64, shape (K,)
        Number of (feasible) runs taking each value.
    certificate : Certificate
        How ties were decided, float error bound, smallest gap.
    """

    def __init__(self, table: Table, rb: int | None = None):
        self.table = table
        self.measure = table.measure
        self.rb = self.measure.check_rb(rb)
        if self.measure.counts_keyed:
            if self.rb is None:
                from irscale.errors import RecallBaseError
                raise RecallBaseError(f"{self.measure} depends on the recall base: give the per-grade counts "
                                      f"(c_1..c_{self.measure.levels - 1}) of the topic's judged documents")
            want = self.measure.table_rb(self.rb)
            if table.rb_counts != want:
                raise ValueError(f"{self.measure}: the table is for the per-grade counts {table.rb_counts}, "
                                 f"not {want}")
            self.r = 0                      # the table holds exactly the feasible runs
        else:
            self.r = self.measure.table_rb(self.rb) if self.rb is not None else 0
        self._sf = _split(self.measure)
        self._spec = self.measure.key_spec()
        self.certificate = table.certificate
        self._ids, self._strata = table.arrays_for_kernels()
        self._index = None
        self._materialised = None

    # -- index -------------------------------------------------------------------------
    def _idx(self):
        if self._index is None and self.table.index is not None:
            self._index = tuple(self.table.index)
        if self._index is None:
            t, sf = self.table, self._sf
            nr = self.measure.n + 1 if t.strata is not None else 1
            self._index = lk.build_index(self._ids, t.implicit, t.n_entries, self._strata,
                                         sf.A, sf.state, sf.B, sf.S, nr)
        return self._index

    def _args(self):
        t, sf = self.table, self._sf
        block_raw, block_cum = self._idx()
        return (self._ids, t.implicit, t.n_entries, self._strata, sf.A, sf.state, sf.B, sf.S,
                block_raw, block_cum)

    # -- raw <-> value -----------------------------------------------------------------
    def _value_factor(self) -> float:
        """value = raw * factor (raw is the exact key, or the unnormalised float value)."""
        return self._spec.value_factor(self.rb)

    def _values_of_raw(self, raw: np.ndarray) -> np.ndarray:
        from irscale.scales.measures.keys import FormalLogKey, LinearKey
        spec = self._spec
        if self._sf.exact:
            return spec.float_values(raw.astype(np.uint64), self.measure, self.rb)
        if isinstance(spec, (FormalLogKey, LinearKey)):
            return raw * self._value_factor()
        raise AssertionError

    def _raw_of_values(self, x: np.ndarray) -> tuple[np.ndarray, float]:
        """Raw query values and the factor d(raw)/d(value) for tolerances."""
        from irscale.scales.measures.keys import ReciprocalRankKey
        if isinstance(self._spec, ReciprocalRankKey):
            n = self.measure.n
            with np.errstate(divide="ignore"):
                raw = np.where(x > 0, n + 1 - 1.0 / np.where(x > 0, x, 1.0), 0.0)
            return raw, float(n * n)  # d raw / d x = 1/x^2 <= N^2 on (1/N, 1]
        f = self._value_factor()
        return x / f, 1.0 / f

    # -- basic facts -----------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.measure.n

    def _materialise(self):
        """values, counts and representative run ids of the distinct values present."""
        if self._materialised is None:
            t = self.table
            E = t.n_entries
            ids = np.arange(E, dtype=np.int64) if t.implicit else np.asarray(t.ids, dtype=np.int64)
            counts = np.ones(E, np.int64) if t.counts is None else np.asarray(t.counts, dtype=np.int64)
            packed = None if t.strata is None else np.asarray(t.strata)
            first = np.ones(E, bool) if packed is None else (packed & lk.FIRST) != 0
            vid = np.cumsum(first) - 1                      # distinct value of each entry
            nv = int(vid[-1]) + 1 if E else 0
            if packed is None:
                present = np.ones(nv, bool)
            else:
                feasible = (packed & lk.STRATUM) <= self.r
                counts = np.where(feasible, counts, 0)
                present = np.zeros(nv, bool)
                present[vid[first & feasible]] = True    # a value's first entry has its smallest stratum
            cnt = np.bincount(vid, weights=counts.astype(np.float64), minlength=nv)
            rep = ids[first]                                # smallest id among runs of the smallest stratum
            cnt, rep = cnt[present], rep[present]
            raw = self._sf.raw_of_ids(rep)
            self._materialised = (self._values_of_raw(raw), np.rint(cnt).astype(np.int64), rep)
        return self._materialised

    @property
    def values(self) -> np.ndarray:
        return self._materialise()[0]

    @property
    def counts(self) -> np.ndarray:
        return self._materialise()[1]

    @property
    def representatives(self) -> np.ndarray:
        """Smallest run id taking each distinct value (for RB tables: among feasible runs
        of the smallest stratum)."""
        return self._materialise()[2]

    @property
    def n_runs(self) -> int:
        """Runs in the (feasible) space."""
        if self.table.strata is None:
            return self.table.n_runs
        from math import comb  # runs with at most r relevant documents
        n, g = self.measure.n, self.measure.levels - 1
        return sum(comb(n, c) * g ** c for c in range(self.r + 1))

    def __len__(self) -> int:
        return self.k

    @property
    def k(self) -> int:
        """Number of distinct values K (the largest rank)."""
        if self.table.strata is None:
            return self.table.n_entries
        block_raw, block_cum = self._idx()
        return int(block_cum[-1, self.r if self.table.strata is not None else 0])

    def __repr__(self) -> str:
        rb = "" if self.rb is None else f", rb={self.rb}"
        return f"<Scale {self.measure}{rb}: {self.k} distinct values>"

    @property
    def midranks(self) -> np.ndarray:
        """Mid-rank of every distinct value (float64, 1-based positions among all runs)."""
        c = self.counts
        before = np.concatenate(([0], np.cumsum(c)[:-1]))
        return before + (c + 1) / 2.0

    # -- value -> rank ---------------------------------------------------------------
    def rank(self, values, rtol: float = RTOL, atol: float | None = ATOL, errors: str = "raise") -> np.ndarray:
        """1-based unq ranks of raw measure values.

        A value must lie within ``atol + rtol * |value|`` of exactly one distinct value
        of the measure (``atol`` defaults to twice the float error bound of the table's
        values, ``rtol`` to 64 ulps). Raises :class:`~irscale.errors.ValueNotInScaleError` naming the
        first offending value: NaN or infinite, not a value of the measure, or ambiguous
        (two distinct values within tolerance; use :meth:`rank_runs`, which is exact).
        With ``errors="zero"`` such values get rank 0 instead (batch use).

        Queries are answered in value order (sorted first), which keeps a lookup batch on
        a memory-mapped table cache-friendly.
        """
        if errors not in ("raise", "zero"):
            raise ValueError("errors must be 'raise' or 'zero'")
        x = np.asarray(values, dtype=np.float64)
        shape = x.shape
        x = x.reshape(-1)
        finite = np.isfinite(x)
        if not finite.all():
            if errors == "raise":
                bad = x[~finite][0]
                raise ValueNotInScaleError(f"{float(bad)!r} is not a value of {self._label()}")
            x = np.where(finite, x, -1.0)
        if atol is None:  # the float error of the table's own values, in value units
            atol = 0.0 if self._sf.exact else 2 * self._sf.bound * abs(self._value_factor())
        raw, dfac = self._raw_of_values(x)
        tols = (atol + rtol * np.abs(x)) * abs(dfac) + 4 * np.spacing(np.abs(raw) + 1)
        order = np.argsort(raw, kind="stable")
        ranks_s = np.zeros(x.shape[0], np.int64)
        status_s = np.zeros(x.shape[0], np.int8)
        lk.rank_raw(raw[order], tols[order], self.r, 2 * self._sf.bound, *self._args(), ranks_s, status_s)
        ranks = np.empty_like(ranks_s)
        status = np.empty_like(status_s)
        ranks[order], status[order] = ranks_s, status_s
        status[~finite] = 1
        if errors == "zero":
            ranks[status != 0] = 0
            return ranks.reshape(shape)
        if (status == 1).any():
            bad = float(x[status == 1][0])
            raise ValueNotInScaleError(f"{bad!r} is not a value of {self._label()}")
        if (status == 2).any():
            bad = float(x[status == 2][0])
            raise ValueNotInScaleError(
                f"{bad!r} is ambiguous for {self._label()}: two distinct values lie within tolerance; "
                f"rank the judged runs instead (rank_runs), which is exact")
        return ranks.reshape(shape)

    def midrank(self, values, rtol: float = RTOL, atol: float | None = ATOL) -> np.ndarray:
        """Mid-ranks of raw values (comparison only; see :attr:`midranks`)."""
        return self.midranks_of_ranks(self.rank(values, rtol, atol))

    def midranks_of_ranks(self, ranks) -> np.ndarray:
        """Mid-ranks (float64, 1-based positions among all feasible runs; see
        :attr:`midranks`) of the values with unq ranks ``ranks``, read from the table
        without materialising it: the first call builds a run-count index of the table
        (one pass over its counts, cached with the table)."""
        q = np.asarray(ranks, dtype=np.int64).reshape(-1)
        if q.size and (q.min() < 1 or q.max() > self.k):
            raise ValueError(f"ranks must be in 1..{self.k}")
        t = self.table
        if t.implicit or (t.counts is None and t.strata is None):
            return q.astype(np.float64)     # one run per value: the mid-rank is the rank
        if getattr(t, "run_index", None) is None:
            counts = np.zeros(0, np.uint8) if t.counts is None else t.counts
            nr = self.measure.n + 1 if t.strata is not None else 1
            t.run_index = lk.build_run_index(counts, self._strata, t.n_entries, nr)
        counts = np.zeros(0, np.uint8) if t.counts is None else t.counts
        out = np.empty(q.size, np.float64)
        lk.midranks_of_ranks(q, self.r, counts, self._strata, t.n_entries, self._idx()[1], t.run_index, out)
        return out

    def scaled(self, ranks) -> np.ndarray:
        """Ranks mapped to [0, 1]: (rank - 1) / (K - 1) (0 when K = 1)."""
        r = np.asarray(ranks, dtype=np.float64)
        return (r - 1) / (self.k - 1) if self.k > 1 else np.zeros_like(r)

    # -- judged run -> rank -------------------------------------------------------------
    def rank_runs(self, runs) -> np.ndarray:
        """1-based unq ranks of judged runs, given as an (n_runs, N) array of relevance
        degrees (or one run). Exact: ranks come from the run's exact key, no tolerance.

        Raises :class:`~irscale.errors.RunError` for wrong lengths, degrees outside REL,
        or runs with more relevant documents than the recall base (infeasible).
        """
        from irscale.enumerate.runspace import ids_of_runs, validate_runs
        arr = validate_runs(runs, self.measure.levels, self.n)
        return self.rank_ids(ids_of_runs(arr, self.measure.levels))

    def _check_feasible_counts(self, ids: np.ndarray) -> None:
        """Tables keyed by per-grade counts hold only the feasible runs: refuse a run with
        more documents of some grade than the topic has."""
        from irscale.enumerate.runspace import refuse_infeasible
        from irscale.enumerate.split_kernels import grade_counts_ids
        refuse_infeasible(grade_counts_ids(ids, self.measure.levels, self.n, self.measure.levels - 1), self.rb)

    def rank_ids(self, ids) -> np.ndarray:
        """Exact ranks of runs given by run id (SPEC section 2 numbering)."""
        from irscale.enumerate.split_kernels import exact_keys
        q = np.asarray(ids, dtype=np.int64).reshape(-1)
        sf = self._sf
        if q.size and (q.min() < 0 or q.max() >= self.measure.levels ** self.n):
            raise RunError(f"run ids must be in [0, {self.measure.levels ** self.n})")
        if self.measure.counts_keyed and q.size:
            self._check_feasible_counts(q)
        qkeys = exact_keys(q, sf.KA, sf.KB, sf.state, sf.S) if not sf.exact else np.zeros((q.size, 1), np.uint64)
        KA = sf.KA if not sf.exact else np.zeros((1, 1), np.uint64)
        KB = sf.KB if not sf.exact else np.zeros((1, 1, 1), np.uint64)
        order = np.argsort(sf.raw_of_ids(q), kind="stable")  # answer in value order (locality)
        ranks_s = np.zeros(q.size, np.int64)
        status_s = np.zeros(q.size, np.int8)
        lk.rank_ids(q[order], self.r, sf.exact, 2 * sf.bound, *self._args(), qkeys[order], KA, KB,
                    self.measure.levels, self.n, ranks_s, status_s)
        ranks = np.empty_like(ranks_s)
        status = np.empty_like(status_s)
        ranks[order], status[order] = ranks_s, status_s
        if (status == 3).any():
            i = int(np.argmax(status == 3))
            from irscale.enumerate.split_kernels import popcount_ids
            c = int(popcount_ids(q[i:i + 1], self.measure.levels, self.n)[0])
            raise RunError(f"run {i} has {c} relevant documents, more than the recall base "
                           f"rb={self.rb}: it cannot occur for this topic")
        if (status != 0).any():  # cannot happen for a complete table
            raise RuntimeError(f"{self._label()}: run not found in the table; the table is incomplete")
        return ranks

    def _label(self) -> str:
        return f"{self.measure}" + ("" if self.rb is None else f" with rb={self.rb}")
