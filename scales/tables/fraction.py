"""Layout ``fraction``: tables of measures with exact fraction values per topic (Twist,
the CRP indicators, R-precision, the utilities while their keys fit 62 bits;
:class:`~irscale.scales.measures.fractional.FractionMeasure`).

A :class:`FractionTable` holds, for one measure and one topic's per-grade counts
``c = (c_1..c_G)`` (or none, for measures without recall base), the distinct values of
the runs feasible for ``c`` as reduced fractions ``num / den`` in increasing order, with
the number of runs taking each. Values are ordered exactly (float order, then every pair
of neighbours checked by integer cross-multiplication), so ties are never decided by
rounding. Datasets: ``num``, ``den`` (int64) and ``counts``, all checksummed; attr
``run_space``.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from irscale.enumerate.runspace import count_dtype
from irscale.errors import CorruptStoreError
from irscale.scales.measures.fractional import FractionMeasure
from irscale.scales.measures.fractional import fraction_floats as _floats
from irscale.scales.measures.keys import U
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.entry_scale import corrupt_error
from irscale.scales.tables.held import MAX_RUNS, HeldScale, HeldTable, check_held, scored_chunks
from irscale.scales.tables.scale import BuildSettings, TableSink, TableSource


@dataclasses.dataclass(kw_only=True)
class FractionTable(HeldTable):
    """Distinct exact values of a measure over the runs feasible for ``table_rb``.

    ``num``/``den``: int64 reduced fractions in increasing value order (den = 0 with
    num = -1 stands for minus infinity); ``counts``: runs per value; ``n_runs``: feasible
    runs (their sum); ``certificate``: ``exact-fraction``, the float error bound of the
    values (half an ulp) and the exact smallest gap."""

    num: np.ndarray
    den: np.ndarray

    layout: ClassVar[str] = "fraction"

    def stored_bytes(self) -> int:
        cmax = int(self.counts.max()) if self.n_entries else 1
        return self.n_entries * (16 + np.dtype(count_dtype(cmax)).itemsize)

    def scale(self, rb: RecallBase = None) -> FractionScale:
        return FractionScale(self, rb)


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


def build_fraction_table(measure: FractionMeasure, table_rb: tuple[int, ...] | None, progress: bool = False
                         ) -> FractionTable:
    """Table of a fraction measure for the topic ``table_rb``: every feasible run scored
    exactly (in chunks), distinct fractions ordered exactly."""
    c = measure.table_rb(table_rb)
    measure.fractions_many(next(iter(measure.space_chunks(c, 1))), c)   # undefined topics fail here, early
    pairs, counts_ = [], []
    total = 0
    for runs in scored_chunks(measure, c, progress):
        num, den = measure.fractions_many(runs, c)
        u, cnt = np.unique(np.stack([np.asarray(num, np.int64), np.asarray(den, np.int64)], axis=1), axis=0,
                           return_counts=True)
        pairs.append(u)
        counts_.append(cnt)
        total += runs.shape[0]
    allp = np.concatenate(pairs)
    uniq, inv = np.unique(allp, axis=0, return_inverse=True)
    cnt = np.bincount(inv.reshape(-1), weights=np.concatenate(counts_).astype(np.float64), minlength=len(uniq))
    order = order_fractions(uniq[:, 0], uniq[:, 1])
    unum, uden = uniq[order, 0].copy(), uniq[order, 1].copy()
    cnt = np.rint(cnt[order]).astype(np.uint64)
    if int(cnt.sum()) != total:
        raise RuntimeError(f"{measure}: {int(cnt.sum())} runs counted, {total} scored")
    return FractionTable(measure=measure, table_rb=c, num=unum, den=uden, counts=cnt, n_entries=int(cnt.shape[0]),
                         n_runs=total, certificate=_certificate(unum, uden))


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


class FractionScale(HeldScale):
    """The unq interval scale of a fraction measure for one topic (see the module
    docstring)."""

    def __init__(self, table: FractionTable, rb=None):
        self._num = np.asarray(table.num, dtype=np.int64)
        self._den = np.asarray(table.den, dtype=np.int64)
        super().__init__(table, rb, _floats(self._num, self._den))

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
            raise corrupt_error(self.table, "a run's value is not in it")
        return ranks


class FractionLayout:
    """How fraction tables are built (one per table recall base), written and read."""

    name = "fraction"
    #: Core-seconds a build spends per run of the space and per entry of the table, for
    #: estimates (:mod:`irscale.scales.tables.estimate`): numpy scoring, about 400k runs per second.
    seconds_per_run = 2.5e-6
    #: Largest run space its tables are built from (None: no limit but memory and disk).
    max_runs = MAX_RUNS
    seconds_per_entry = 0.0
    checksummed = ("num", "den", "counts")
    lazy = ()

    def build(self, measures: Iterable[FractionMeasure], rbs: dict[Measure, list[tuple[int, ...] | None]],
              options: BuildSettings) -> Iterator[FractionTable]:
        for m in measures:
            for c in rbs[m]:
                yield build_fraction_table(m, c, options.progress)

    def write(self, table: FractionTable, sink: TableSink) -> None:
        cmax = int(table.counts.max()) if table.n_entries else 1
        for name, dt in (("num", np.int64), ("den", np.int64), ("counts", count_dtype(cmax))):
            arr = getattr(table, name)
            sink.dataset(name, dt, arr.shape, [arr])
        sink.attrs(implicit=False, n_distinct=int(table.n_entries), distinct_by_rb="[]",
                   run_space=table.measure.run_space)

    def read(self, source: TableSource,
             **common: Measure | int | Certificate | tuple[int, ...] | dict[str, Any] | None) -> FractionTable:
        return FractionTable(num=source.read("num"), den=source.read("den"), counts=source.read("counts"), **common)

    def validate(self, table: FractionTable, source: TableSource, deep: bool) -> None:
        """Raise :class:`~irscale.errors.CorruptStoreError` unless the table is sound:
        reduced fractions (den > 0, or -1/0 for minus infinity) in strictly increasing
        order, counts of at least 1 adding up to the runs of the measure's table (the
        arrays are held in memory, so this is always the deep check)."""
        E = check_held(table, source, ("num", "den"))
        num, den = table.num, table.den
        if num.dtype != np.int64 or den.dtype != np.int64:
            raise CorruptStoreError(f"num/den: {num.dtype}/{den.dtype}, expected int64")
        if (den < 0).any() or ((den == 0) & (num != -1)).any():
            raise CorruptStoreError("a fraction with a negative or zero denominator")
        if E > 1 and not _less(num[:-1], den[:-1], num[1:], den[1:]).all():
            raise CorruptStoreError("values not in strictly increasing order")
        if table.certificate.error_bound != _certificate(num, den).error_bound:   # the default tolerance
            raise CorruptStoreError(f"error_bound {table.certificate.error_bound!r} is not that of its values")


LAYOUT = FractionLayout()
