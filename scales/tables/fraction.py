"""Tables and scales of measures with exact fraction values per topic (Twist, the CRP
indicators; :mod:`irscale.scales.measures.fractional`).

A :class:`FractionTable` holds, for one measure and one topic's per-grade counts
``c = (c_1..c_G)``, the distinct values of the runs feasible for ``c`` (at most c_g
documents of grade g) as reduced fractions ``num / den`` in increasing order, with the
number of runs taking each. Values are ordered exactly (float order, then every pair of
neighbours checked by integer cross-multiplication), so ties are never decided by
rounding. A :class:`FractionScale` answers the same questions as
:class:`~irscale.scales.tables.scale.Scale` (unq ranks 1..K of values and of runs, mid-ranks,
K, the number of feasible runs), with the arrays held in memory (these tables are built
per topic and are small: the feasible runs of a topic with N >= 2 RB).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from irscale.errors import RunError, ValueNotInScaleError
from irscale.scales.tables.certificate import Certificate

#: Feasible runs scored per numpy batch while building.
CHUNK = 1 << 18

U = 2.0 ** -53


class HeldTable:
    """What tables held in memory share: no strata, no parts, never implicit; one entry
    per distinct value (``counts`` runs each)."""

    implicit = False
    strata = None
    parts = None

    @property
    def n_entries(self) -> int:
        return int(self.counts.shape[0])


@dataclass
class FractionTable(HeldTable):
    """Distinct exact values of a measure over the runs feasible for ``rb_counts``.

    ``num``/``den``: int64 reduced fractions in increasing value order (den = 0 with
    num = -1 stands for minus infinity); ``counts``: runs per value; ``n_runs``: feasible
    runs (their sum); ``certificate``: ``exact-fraction``, the float error bound of the
    values (half an ulp) and the exact smallest gap."""

    measure: object
    rb_counts: tuple
    num: np.ndarray
    den: np.ndarray
    counts: np.ndarray
    n_runs: int
    certificate: Certificate
    meta: dict = field(default_factory=dict)

    layout = "fraction"


def _floats(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, -np.inf, num / np.where(den == 0, 1, den))


def _less(n1, d1, n2, d2) -> np.ndarray:
    """Exact n1/d1 < n2/d2 for int64 arrays (den > 0, or den = 0 for minus infinity),
    in Python integers where the products could overflow int64."""
    inf1, inf2 = d1 == 0, d2 == 0
    big = max(int(np.abs(n1).max(initial=0)), int(np.abs(n2).max(initial=0))) * \
        max(int(d1.max(initial=1)), int(d2.max(initial=1)))
    if big < 2 ** 62:
        finite = n1 * d2 < n2 * d1
    else:
        finite = np.array([int(a) * int(d) < int(b) * int(c) for a, c, b, d in zip(n1, d1, n2, d2)], dtype=bool)
    return np.where(inf1 | inf2, inf1 & ~inf2, finite)


def order_fractions(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Permutation sorting distinct reduced fractions by value, exactly: float order,
    then neighbours are checked exactly and any inverted stretch re-sorted with
    :class:`fractions.Fraction`."""
    order = np.argsort(_floats(num, den), kind="stable")
    n, d = num[order], den[order]
    bad = ~_less(n[:-1], d[:-1], n[1:], d[1:])
    if bad.any():  # floats too close to order: sort the whole list exactly (rare, small tables)
        key = [Fraction(int(a), int(b)) if b else -float("inf") for a, b in zip(num, den)]
        order = np.array(sorted(range(len(key)), key=key.__getitem__), dtype=np.int64)
    return order


#: Largest number of feasible runs a fraction table is built from (numpy scoring, about
#: 400k runs per second here: 2^27 runs take 5-6 minutes).
MAX_RUNS = 2 ** 27


def build_fraction_table(measure, counts, progress: bool = False) -> FractionTable:
    """Table of a :class:`~irscale.scales.measures.fractional.FractionMeasure` for the topic
    ``counts``: every feasible run scored exactly (in chunks), distinct fractions ordered
    exactly."""
    from tqdm.auto import tqdm

    from irscale.errors import MeasureError
    c = measure.table_rb(counts)
    total = measure.space_size(c)
    if total > MAX_RUNS:
        what = "" if c is None else f" with per-grade counts {c}"
        raise MeasureError(f"{measure}{what}: {total:,} runs, more than irscale scores exactly for one table "
                           f"({MAX_RUNS:,}); use a smaller N")
    measure.fractions_many(next(iter(measure.space_chunks(c, 1))), c)   # undefined topics fail here, early
    pairs, counts_ = [], []
    with tqdm(total=total, unit="run", unit_scale=True, desc=f"{measure} {c}", disable=not progress,
              leave=False) as bar:
        for runs in measure.space_chunks(c, CHUNK):
            num, den = measure.fractions_many(runs, c)
            u, cnt = np.unique(np.stack([np.asarray(num, np.int64), np.asarray(den, np.int64)], axis=1), axis=0,
                               return_counts=True)
            pairs.append(u)
            counts_.append(cnt)
            bar.update(runs.shape[0])
    allp = np.concatenate(pairs)
    uniq, inv = np.unique(allp, axis=0, return_inverse=True)
    cnt = np.bincount(inv.reshape(-1), weights=np.concatenate(counts_).astype(np.float64), minlength=len(uniq))
    order = order_fractions(uniq[:, 0], uniq[:, 1])
    unum, uden = uniq[order, 0].copy(), uniq[order, 1].copy()
    cnt = np.rint(cnt[order]).astype(np.uint64)
    assert int(cnt.sum()) == total
    return FractionTable(measure, c, unum, uden, cnt, total, _certificate(unum, uden))


def _certificate(num: np.ndarray, den: np.ndarray) -> Certificate:
    """Exact smallest gap between neighbouring finite values."""
    finite = den > 0
    n, d = num[finite], den[finite]
    if n.size < 2:
        return Certificate("exact-fraction", U, float("inf"), "inf", 0)
    gaps = _floats(n[1:], d[1:]) - _floats(n[:-1], d[:-1])
    cand = np.flatnonzero(gaps <= gaps.min() * (1 + 1e-9) + 1e-300)
    exact = min(Fraction(int(n[i + 1]), int(d[i + 1])) - Fraction(int(n[i]), int(d[i])) for i in cand)
    bound = U * float(np.abs(_floats(n, d)).max())
    return Certificate("exact-fraction", bound, float(exact), str(exact), 0)


class HeldScale:
    """Scale interface (:class:`~irscale.scales.tables.scale.Scale`) over a table held in memory:
    sorted distinct float ``values`` (value i has unq rank i + 1) and their run ``counts``.
    Subclasses match runs to values exactly (:meth:`_match`)."""

    def __init__(self, table, rb, values: np.ndarray, counts: np.ndarray):
        self.table = table
        self.measure = table.measure
        self.rb = rb
        self.certificate = table.certificate
        self._values = np.asarray(values, dtype=np.float64)
        self._counts = np.asarray(counts, dtype=np.int64)

    def __repr__(self) -> str:
        rb = "" if self.rb is None else f", rb={self.rb}"
        return f"<{type(self).__name__} {self.measure}{rb}: {self.k} distinct values>"

    @property
    def n(self) -> int:
        return self.measure.n

    @property
    def k(self) -> int:
        return int(self._values.shape[0])

    def __len__(self) -> int:
        return self.k

    @property
    def n_runs(self) -> int:
        return int(self.table.n_runs)

    @property
    def values(self) -> np.ndarray:
        return self._values

    @property
    def counts(self) -> np.ndarray:
        return self._counts

    @property
    def midranks(self) -> np.ndarray:
        c = self._counts
        return np.concatenate(([0], np.cumsum(c)[:-1])) + (c + 1) / 2.0

    def midranks_of_ranks(self, ranks) -> np.ndarray:
        q = np.asarray(ranks, dtype=np.int64).reshape(-1)
        if q.size and (q.min() < 1 or q.max() > self.k):
            raise ValueError(f"ranks must be in 1..{self.k}")
        return self.midranks[q - 1]

    def scaled(self, ranks) -> np.ndarray:
        r = np.asarray(ranks, dtype=np.float64)
        return (r - 1) / (self.k - 1) if self.k > 1 else np.zeros_like(r)

    def rank(self, values, rtol: float = 64 * 2.0 ** -52, atol: float | None = None,
             errors: str = "raise") -> np.ndarray:
        """1-based unq ranks of raw values: each must lie within ``atol + rtol * |value|``
        of exactly one distinct value (``atol`` defaults to twice the values' float error
        bound); see :meth:`irscale.scales.tables.scale.Scale.rank`."""
        if errors not in ("raise", "zero"):
            raise ValueError("errors must be 'raise' or 'zero'")
        x = np.asarray(values, dtype=np.float64)
        shape = x.shape
        x = x.reshape(-1)
        atol = 2 * self.certificate.error_bound if atol is None else atol
        v = self._values
        if self.k == 0:
            raise ValueNotInScaleError(f"{self._label()} has no values")
        tol = atol + rtol * np.abs(np.where(np.isfinite(x), x, 0))
        i = np.searchsorted(v, x)
        lo, hi = np.clip(i - 1, 0, self.k - 1), np.clip(i, 0, self.k - 1)
        with np.errstate(invalid="ignore"):          # -inf - -inf
            same_lo = (v[lo] == x) | (np.abs(v[lo] - x) <= tol)
            same_hi = (v[hi] == x) | (np.abs(v[hi] - x) <= tol)
        ranks = np.where(same_hi, hi + 1, np.where(same_lo, lo + 1, 0)).astype(np.int64)
        ambiguous = same_lo & same_hi & (lo != hi)
        finite_or_value = np.isfinite(x) | (x == -np.inf) & (v[0] == -np.inf)
        status = np.where(~finite_or_value | (ranks == 0), 1, np.where(ambiguous, 2, 0))
        if errors == "zero":
            return np.where(status == 0, ranks, 0).reshape(shape)
        if (status == 1).any():
            raise ValueNotInScaleError(f"{float(x[status == 1][0])!r} is not a value of {self._label()}")
        if (status == 2).any():
            raise ValueNotInScaleError(f"{float(x[status == 2][0])!r} is ambiguous for {self._label()}: two "
                                       f"distinct values lie within tolerance; rank the judged runs instead")
        return ranks.reshape(shape)

    def midrank(self, values, rtol: float = 64 * 2.0 ** -52, atol: float | None = None) -> np.ndarray:
        return self.midranks_of_ranks(self.rank(values, rtol, atol))

    def rank_runs(self, runs) -> np.ndarray:
        """Exact 1-based unq ranks of judged runs ((m, N) grades 0..G; truncated rankings
        padded with -1 or given as shorter lists); runs that cannot occur (more documents
        of a grade than the topic has) raise :class:`RunError`."""
        arr = self.measure.check_runs(runs, self.rb)
        if arr.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self._match(arr)

    def rank_ids(self, ids) -> np.ndarray:
        """Exact ranks of runs given by run id."""
        q = np.asarray(ids, dtype=np.int64).reshape(-1)
        if q.size and (q.min() < 0 or q.max() >= self.measure.n_ids):
            raise RunError(f"run ids must be in [0, {self.measure.n_ids})")
        return self.rank_runs(self.measure.runs_of_ids(q))

    def _match(self, runs: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _label(self) -> str:
        return f"{self.measure}" + ("" if self.rb is None else f" with rb={self.rb}")


class FractionScale(HeldScale):
    """The unq interval scale of a fraction measure for one topic (see the module
    docstring); the interface of :class:`~irscale.scales.tables.scale.Scale`."""

    def __init__(self, table: FractionTable, rb):
        measure = table.measure
        rb = measure.check_rb(rb)
        if measure.table_rb(rb) != table.rb_counts:
            raise ValueError(f"{measure}: the table is for {table.rb_counts}, not {rb}")
        self._num = np.asarray(table.num, dtype=np.int64)
        self._den = np.asarray(table.den, dtype=np.int64)
        super().__init__(table, rb, _floats(self._num, self._den), table.counts)

    @property
    def fractions(self) -> list:
        """The distinct values as :class:`fractions.Fraction` (minus infinity as a float)."""
        return [Fraction(int(a), int(b)) if b else -float("inf") for a, b in zip(self._num, self._den)]

    def _match(self, arr: np.ndarray) -> np.ndarray:
        num, den = self.measure.fractions_many(arr, self.rb)
        num, den = np.asarray(num, np.int64), np.asarray(den, np.int64)
        i = np.searchsorted(self._values, _floats(num, den))
        ranks = np.zeros(num.shape[0], np.int64)
        for shift in (0, -1, 1, -2, 2):   # the exact match is next to the float position
            j = np.clip(i + shift, 0, self.k - 1)
            hit = (ranks == 0) & (self._num[j] == num) & (self._den[j] == den)
            ranks[hit] = j[hit] + 1
        if (ranks == 0).any():
            raise RuntimeError(f"{self._label()}: run value not in the table; the table is incomplete")
        return ranks
