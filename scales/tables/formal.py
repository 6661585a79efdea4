"""Layout ``formal``: tables of measures whose exact values are rational combinations of fixed logarithms
(DCGU over truncated rankings, OIE, the utilities whose keys exceed 62 bits): each value
is ``sum_j keys[j] * unit_j`` with integer ``keys`` and real units such as
``1 / (den * log2 m)`` or ``ln q / den``
(:class:`~irscale.scales.measures.fractional.FormalValues`); layout ``formal``.

Equal key rows are equal values; distinct rows are taken as distinct values (logarithms
of distinct primes, and 1 / log2 m for distinct m that are not perfect powers, are
linearly independent over the rationals), and this is checked for every table as for the
``formal-log`` tables of :mod:`irscale.scales.measures.keys`: values are sorted in float64 with a
proven error bound and every pair of neighbours closer than twice the bound is re-decided
with :data:`~irscale.scales.measures.keys.MP_DIGITS`-digit arithmetic (a pair it cannot separate
raises :class:`~irscale.errors.CertificationError`).
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import mpmath
import numpy as np

from irscale.enumerate.runspace import count_dtype
from irscale.errors import CertificationError, CorruptStoreError
from irscale.scales.measures.fractional import FormalValues
from irscale.scales.measures.keys import MP_DIGITS
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.certificate import Certificate, close_clusters
from irscale.scales.tables.entry_scale import corrupt_error
from irscale.scales.tables.held import MAX_RUNS, HeldScale, HeldTable, check_held, scored_chunks
from irscale.scales.tables.scale import BuildSettings, TableSink, TableSource


@dataclasses.dataclass(kw_only=True)
class FormalTable(HeldTable):
    """Distinct exact values of a formal measure (see the module docstring): ``keys``
    (int64 (K, C)) in increasing value order, ``counts`` runs per value, ``coords`` the
    labels of the C units; ``table_rb`` the topic (None when the measure has none)."""

    keys: np.ndarray
    coords: list

    layout: ClassVar[str] = "formal"

    def stored_bytes(self) -> int:
        cmax = int(self.counts.max()) if self.n_entries else 1
        return self.keys.size * 8 + self.n_entries * np.dtype(count_dtype(cmax)).itemsize

    def scale(self, rb: RecallBase = None) -> FormalScale:
        return FormalScale(self, rb)


def _rows(keys: np.ndarray) -> np.ndarray:
    """Rows of an int64 matrix as one sortable void item each (equality = equal rows)."""
    keys = np.ascontiguousarray(keys, dtype=np.int64)
    return keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).reshape(-1)


def order_values(measure: FormalValues, rb: tuple[int, ...] | None, keys: np.ndarray) -> tuple[np.ndarray, float, int]:
    """Permutation sorting distinct key rows by value, the float error bound and the
    number of clusters re-decided in high precision."""
    values = measure.formal_floats(keys, rb)
    order = np.argsort(values, kind="stable")
    bound = measure.formal_error_bound(keys, rb)
    srt = values[order]
    clusters = close_clusters(np.diff(srt) <= 2 * bound)
    if not clusters:
        return order, bound, 0
    tiny = mpmath.mpf(10) ** (-(MP_DIGITS - 10))
    with mpmath.workdps(MP_DIGITS):
        mp_units = measure.units_mp(rb)
        for lo, hi in clusters:
            members = order[lo:hi + 1]
            vals = [mpmath.fsum(int(k) * u for k, u in zip(keys[i], mp_units)) for i in members]
            perm = sorted(range(len(members)), key=lambda j: vals[j])
            for a, b in zip(perm, perm[1:]):
                if abs(vals[b] - vals[a]) <= tiny * max(1, abs(vals[a])):
                    raise CertificationError(f"{measure}: two distinct formal keys have values equal to "
                                             f"{MP_DIGITS - 10} digits; cannot certify the table")
            order[lo:hi + 1] = members[perm]
    return order, bound, len(clusters)


def build_formal_table(measure: FormalValues, table_rb: tuple[int, ...] | None, progress: bool = False) -> FormalTable:
    """Table of a formal measure: every run of its space scored exactly (in chunks),
    distinct key rows ordered by value (certified)."""
    c = measure.table_rb(table_rb)
    parts, cnts = [], []
    total = 0
    for runs in scored_chunks(measure, c, progress):
        keys = measure.formal_many(runs, c)
        u, inv, cnt = np.unique(_rows(keys), return_inverse=True, return_counts=True)
        first = np.zeros(u.shape[0], np.int64)
        first[inv.reshape(-1)[::-1]] = np.arange(keys.shape[0])[::-1]
        parts.append(keys[first])
        cnts.append(cnt)
        total += runs.shape[0]
    allk = np.concatenate(parts)
    u, first, inv = np.unique(_rows(allk), return_index=True, return_inverse=True)
    ukeys = allk[first]
    cnt = np.bincount(inv.reshape(-1), weights=np.concatenate(cnts).astype(np.float64), minlength=len(u))
    order, bound, redecided = order_values(measure, c, ukeys)
    ukeys, cnt = np.ascontiguousarray(ukeys[order]), np.rint(cnt[order]).astype(np.uint64)
    if int(cnt.sum()) != total:
        raise RuntimeError(f"{measure}: {int(cnt.sum())} runs counted, {total} scored")
    return FormalTable(measure=measure, table_rb=c, keys=ukeys, counts=cnt, coords=measure.coords(c),
                       n_entries=int(cnt.shape[0]), n_runs=total,
                       certificate=_certificate(measure, c, ukeys, bound, redecided))


def _certificate(measure, rb, keys: np.ndarray, bound: float, redecided: int) -> Certificate:
    method = f"formal-log+mpmath{MP_DIGITS}"
    if keys.shape[0] < 2:
        return Certificate(method, bound, float("inf"), "inf", redecided)
    values = measure.formal_floats(keys, rb)
    i = int(np.argmin(np.diff(values)))
    with mpmath.workdps(MP_DIGITS):
        units = measure.units_mp(rb)
        gap = mpmath.fsum(int(a) * u for a, u in zip(keys[i + 1] - keys[i], units))
        if gap <= 0:
            raise CertificationError(f"{measure}: neighbouring distinct values out of order")
        return Certificate(method, bound, float(gap), mpmath.nstr(gap, 20), redecided)


class FormalScale(HeldScale):
    """The unq interval scale of a formal measure for one topic; arrays held in memory."""

    def __init__(self, table: FormalTable, rb=None):
        measure = table.measure
        rb = measure.check_rb(rb)
        if list(table.coords) != list(measure.coords(rb)):
            raise ValueError(f"{measure}: the table's units {table.coords} are not this measure's")
        self._keys = np.asarray(table.keys, dtype=np.int64)
        super().__init__(table, rb, measure.formal_floats(self._keys, rb))
        rows = _rows(self._keys)
        self._by_key = np.argsort(rows, kind="stable")
        self._sorted_rows = rows[self._by_key]

    def _match(self, runs: np.ndarray) -> np.ndarray:
        keys = self.measure.formal_many(runs, self.rb)
        q = _rows(keys)
        pos = np.clip(np.searchsorted(self._sorted_rows, q), 0, self.k - 1)
        hit = self._sorted_rows[pos] == q
        if not hit.all():
            raise corrupt_error(self.table, "a run's value is not in it")
        return self._by_key[pos] + 1


class FormalLayout:
    """How formal tables are built (one per table recall base), written and read."""

    name = "formal"
    #: Core-seconds a build spends per run of the space and per entry of the table, for
    #: estimates (:mod:`irscale.scales.tables.estimate`): numpy scoring, about 400k runs per second.
    seconds_per_run = 2.5e-6
    #: Largest run space its tables are built from (None: no limit but memory and disk).
    max_runs = MAX_RUNS
    seconds_per_entry = 0.0
    checksummed = ("keys", "counts")
    lazy = ()

    def build(self, measures: Iterable[FormalValues], rbs: dict[Measure, list[tuple[int, ...] | None]],
              options: BuildSettings) -> Iterator[FormalTable]:
        for m in measures:
            for c in rbs[m]:
                yield build_formal_table(m, c, options.progress)

    def write(self, table: FormalTable, sink: TableSink) -> None:
        cmax = int(table.counts.max()) if table.n_entries else 1
        keys = np.ascontiguousarray(table.keys, dtype=np.int64)
        sink.dataset("keys", np.int64, keys.shape, [keys])
        sink.dataset("counts", count_dtype(cmax), table.counts.shape, [table.counts])
        sink.attrs(implicit=False, n_distinct=int(table.n_entries), distinct_by_rb="[]",
                   run_space=table.measure.run_space, coords=json.dumps(list(table.coords)))

    def read(self, source: TableSource,
             **common: Measure | int | Certificate | tuple[int, ...] | dict[str, Any] | None) -> FormalTable:
        try:
            coords = json.loads(source.attrs["coords"])
        except (KeyError, TypeError, ValueError):
            raise CorruptStoreError(f"attr coords is not a JSON list: {source.attrs.get('coords')!r}") from None
        return FormalTable(keys=source.read("keys"), counts=source.read("counts"), coords=coords, **common)

    def validate(self, table: FormalTable, source: TableSource, deep: bool) -> None:
        """Raise :class:`~irscale.errors.CorruptStoreError` unless the table is sound: one
        int64 key per unit of the measure, distinct key rows in value order (up to twice
        the float error bound), counts of at least 1 adding up to the runs of the
        measure's table (the arrays are held in memory: always the deep check)."""
        m = table.measure
        E = check_held(table, source, ())
        keys = table.keys
        units = list(m.coords(table.table_rb))
        if list(table.coords) != units:
            raise CorruptStoreError(f"units {table.coords}, the measure's are {units}")
        if keys.dtype != np.int64 or keys.ndim != 2 or keys.shape != (E, len(units)):
            raise CorruptStoreError(f"keys: {keys.dtype} {keys.shape}, expected int64 ({E}, {len(units)})")
        if E > 1:
            if np.unique(_rows(keys)).shape[0] != E:
                raise CorruptStoreError("a key row twice")
            values = m.formal_floats(keys, table.table_rb)
            if not np.isfinite(values).all() or (np.diff(values) < -2 * table.certificate.error_bound).any():
                raise CorruptStoreError("values not in increasing order")
        if table.certificate.error_bound != m.formal_error_bound(keys, table.table_rb):   # the default tolerance
            raise CorruptStoreError(f"error_bound {table.certificate.error_bound!r} is not that of its values")


LAYOUT = FormalLayout()
