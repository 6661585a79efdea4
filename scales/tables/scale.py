"""The one scale interface, and the table every layout returns.

A :class:`Table` is what building produces and the store keeps: the distinct values of a
measure over a run space, in increasing value order, in the form of its layout
(:mod:`irscale.scales.tables.layouts`). ``table.scale(rb)`` gives the :class:`Scale` of a
topic with recall base ``rb``; transforms, lookups, the service, the spacing statistics and
the CLI use only this interface, whatever the layout:

* unq rank: ``phi(m) = |{x in M(space) : x <= m}|``, 1-based (the minimum has rank 1),
  tied runs share a rank and no rank is skipped, so ranks 1..K are equally spaced;
* mid-rank (for comparison only): the mean of the 1-based positions the runs with that
  value occupy in the sorted list of all (feasible) runs.
"""
from __future__ import annotations

import abc
import dataclasses
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from irscale.enumerate.fanout import Fanout
from irscale.errors import ValueNotInScaleError
from irscale.scales.measures.measure import RecallBase
from irscale.scales.tables.certificate import Certificate

if TYPE_CHECKING:
    from pathlib import Path

    from numpy.typing import ArrayLike, DTypeLike

#: Default relative tolerance of :meth:`Scale.rank`: what float64 arithmetic may lose
#: when a caller sums up to 64 terms in another order than irscale (64 ulps). The default
#: absolute tolerance is the table's certified float error bound. Tables at N = 30 have
#: neighbouring values 1e-13 apart, so looser tolerances make lookups ambiguous.
RTOL = 64 * 2.0 ** -52
ATOL = None
#: Values handed out per block by :meth:`Scale.value_blocks`.
BLOCK_VALUES = 1 << 20
#: Status codes of :class:`Lookup`: ranked; no distinct value within tolerance (infinities
#: included); two or more within it; NaN.
FOUND, NOT_A_VALUE, AMBIGUOUS, NOT_A_NUMBER = 0, 1, 2, 3


@dataclasses.dataclass(frozen=True)
class Lookup:
    """What :meth:`Scale.lookup` found for each value (arrays of the shape of the values).

    ``values``: the values looked up (float64); ``ranks``: their 1-based unq ranks, 0 where
    a value was rejected; ``status``: :data:`FOUND`, :data:`NOT_A_VALUE`,
    :data:`AMBIGUOUS` or :data:`NOT_A_NUMBER` (int8); ``matched``: the distinct value each
    value was ranked as (NaN where rejected); ``messages``: flat index of each rejected
    value -> one line saying why (for ambiguous values naming the two nearest distinct
    values within tolerance)."""

    values: np.ndarray
    ranks: np.ndarray
    status: np.ndarray
    matched: np.ndarray
    messages: dict[int, str]

    @property
    def found(self) -> np.ndarray:
        """Whether each value was ranked (bool)."""
        return self.status == FOUND


@dataclasses.dataclass(kw_only=True)
class Table:
    """The distinct values of one measure over its run space, in increasing value order.

    ``table_rb``: the recall base the table is for (a per-grade count vector), None when
    it serves every recall base; ``n_entries``: stored entries; ``n_runs``: runs the table
    covers; ``certificate``: how ties and order were decided; ``meta``: the store's
    metadata when read from a store."""

    measure: object
    n_entries: int
    n_runs: int
    certificate: Certificate
    table_rb: tuple | None = None
    meta: dict = dataclasses.field(default_factory=dict)

    #: Name of the table's layout (:mod:`irscale.scales.tables.layouts`).
    layout: ClassVar[str] = ""

    def scale(self, rb: RecallBase = None) -> Scale:
        """The scale of a topic with recall base ``rb`` (checked against the measure and
        against the recall base this table serves)."""
        raise NotImplementedError

    def stored_bytes(self) -> int:
        """About how many bytes the table's datasets take in a store (for progress bars)."""
        return 4 * self.n_entries


class Scale(abc.ABC):
    """The unq interval scale of a measure at cutoff N for one recall base.

    Attributes
    ----------
    measure : Measure
    table : Table
    n : int
        Run length N.
    rb : int, tuple or None
        The actual recall base (may exceed N: values then use it while the order is that
        of the table).
    certificate : Certificate
        How ties were decided, float error bound, smallest gap.
    """

    def __init__(self, table: Table, rb=None):
        self.table = table
        self.measure = table.measure
        self.rb = self.measure.check_rb(rb)
        want = self.measure.table_rb(self.rb)
        if want != table.table_rb:
            raise ValueError(f"{self.measure}: the table is for the recall base {table.table_rb}, not {self.rb}")
        self.certificate = table.certificate

    # -- facts --------------------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.measure.n

    @property
    @abc.abstractmethod
    def k(self) -> int:
        """Number of distinct values K (the largest rank)."""

    @property
    @abc.abstractmethod
    def n_runs(self) -> int:
        """Runs in the (feasible) space of this scale."""

    def __len__(self) -> int:
        return self.k

    def __repr__(self) -> str:
        rb = "" if self.rb is None else f", rb={self.rb}"
        return f"<{type(self).__name__} {self.measure}{rb}: {self.k} distinct values>"

    @property
    @abc.abstractmethod
    def values(self) -> np.ndarray:
        """Sorted distinct values (float64, shape (K,)); ``values[i]`` has unq rank i + 1."""

    @property
    @abc.abstractmethod
    def counts(self) -> np.ndarray:
        """Number of (feasible) runs taking each value (int64, shape (K,))."""

    @property
    @abc.abstractmethod
    def representatives(self) -> np.ndarray:
        """Smallest run id taking each distinct value (int64, shape (K,); for stratified
        tables: among the feasible runs of the value's smallest stratum)."""

    @property
    def midranks(self) -> np.ndarray:
        """Mid-rank of every distinct value (float64, 1-based positions among all runs)."""
        c = self.counts
        before = np.concatenate(([0], np.cumsum(c)[:-1]))
        return before + (c + 1) / 2.0

    def value_blocks(self, chunk: int = BLOCK_VALUES) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Blocks ``(values, counts)`` of the distinct values in value order, each value
        with its complete run count (tables too big to hold stream them from the store)."""
        values, counts = self.values, self.counts
        for a in range(0, values.shape[0], chunk):
            yield values[a:a + chunk], counts[a:a + chunk]

    def value_range(self) -> tuple[float, float]:
        """(smallest, largest) value."""
        v = self.values
        return float(v[0]), float(v[-1])

    # -- ranks ----------------------------------------------------------------------------
    def rank(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL, errors: str = "raise",
             decimals: ArrayLike | None = None) -> np.ndarray:
        """1-based unq ranks of raw measure values.

        A value must lie within ``atol + rtol * |value|`` of exactly one distinct value
        of the measure (``atol`` defaults to twice the float error bound of the table's
        values, ``rtol`` to 64 ulps). Raises :class:`~irscale.errors.ValueNotInScaleError`
        naming the first offending value: NaN or infinite, not a value of the measure, or
        ambiguous (two distinct values within tolerance, both named; use :meth:`rank_runs`,
        which is exact). With ``errors="zero"`` such values get rank 0 instead (batch use).

        Rounded values (nearest mode): ``decimals`` says that the values were rounded to
        that many decimals (an integer, or one per value, broadcast against ``values``;
        NaN for a value that was not rounded), as trec_eval's 4 decimals: the absolute
        tolerance of each value becomes at least half a unit of its last decimal,
        ``max(atol, 0.5 * 10**-decimals)``, so that 0.3333 ranks 1/3 when 1/3 is the only
        distinct value within 0.00005 of it, and is ambiguous when two are (give more
        decimals, or rank the runs). ``0.5`` with ``decimals=1`` stands for [0.45, 0.55]:
        give trec_eval's ``0.5000`` as it is printed. :meth:`lookup` also says which
        distinct value each value was matched to."""
        if errors not in ("raise", "zero"):
            raise ValueError("errors must be 'raise' or 'zero'")
        x, shape = self._flat(values)
        atol_ = self._atol(x, shape, atol, decimals)
        ranks, status = self._rank_values(x, rtol, atol_)
        if errors == "zero":
            return np.where(status == FOUND, ranks, 0).reshape(shape)
        bad = np.flatnonzero(status != FOUND)
        if bad.size:
            i = int(bad[0])
            tol = float(np.broadcast_to(atol_, x.shape)[i]) + rtol * abs(float(x[i]))
            raise ValueNotInScaleError(self._rejection(float(x[i]), int(status[i]), int(ranks[i]), tol))
        return ranks.reshape(shape)

    def lookup(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL, *,
               decimals: ArrayLike | None = None) -> Lookup:
        """Like :meth:`rank` with ``errors="zero"``, but says per value what was found: the
        rank, a status code, the distinct value matched (which differs from the value
        given when it was rounded: see ``decimals`` in :meth:`rank`) and, for every value
        rejected, why (the message :meth:`rank` would raise). Slower than :meth:`rank`
        (the matched values are read from the table): meant for values typed or pasted by
        people, not for bulk transforms."""
        x, shape = self._flat(values)
        atol_ = self._atol(x, shape, atol, decimals)
        ranks, status = self._rank_values(x, rtol, atol_)
        status = status.astype(np.int8)
        status[np.isnan(x)] = NOT_A_NUMBER
        found = status == FOUND
        matched = np.full(x.shape, np.nan)
        if found.any():
            matched[found] = self.values_of_ranks(ranks[found])
        tol = np.broadcast_to(atol_, x.shape) + rtol * np.abs(np.where(np.isfinite(x), x, 0.0))
        messages = {int(i): self._rejection(float(x[i]), int(status[i]), int(ranks[i]), float(tol[i]))
                    for i in np.flatnonzero(~found)}
        return Lookup(values=x.reshape(shape), ranks=np.where(found, ranks, 0).reshape(shape),
                      status=status.reshape(shape), matched=matched.reshape(shape), messages=messages)

    @staticmethod
    def _flat(values) -> tuple[np.ndarray, tuple[int, ...]]:
        x = np.asarray(values, dtype=np.float64)
        return x.reshape(-1), x.shape

    def _atol(self, x: np.ndarray, shape: tuple[int, ...], atol: float | None, decimals) -> float | np.ndarray:
        """The absolute tolerance: ``atol`` (default: the table's), widened per value to half
        a unit of its last decimal when ``decimals`` is given."""
        base = self._default_atol() if atol is None else float(atol)
        if decimals is None:
            return base
        d = np.broadcast_to(np.asarray(decimals, dtype=np.float64), shape).reshape(-1)
        with np.errstate(over="ignore"):
            half = 0.5 * 10.0 ** -d * (1 + 1e-9)       # inclusive, whatever the float rounding of x
        return np.fmax(base, half)                      # NaN decimals: not rounded

    def _rejection(self, x: float, status: int, rank: int, tol: float) -> str:
        """Why ``x`` has no rank (one line naming the value; ``rank`` is the nearest distinct
        value's when ``x`` is ambiguous)."""
        if np.isnan(x):
            return f"{x!r} is not a value of {self._label()} (NaN)"
        if np.isinf(x):
            return f"{x!r} is not a value of {self._label()}"
        if status == AMBIGUOUS:
            q = np.array([rank - 1, rank, rank + 1])
            q = q[(q >= 1) & (q <= self.k)]
            near = self.values_of_ranks(q)
            order = np.argsort(np.abs(near - x), kind="stable")[:2]
            a, b = sorted(float(v) for v in near[order])
            return (f"{x!r} is ambiguous for {self._label()}: the distinct values {a!r} and {b!r} lie within its "
                    f"tolerance ({tol:.3g}); give more decimals, or rank the judged runs instead (rank_runs), "
                    f"which is exact")
        return f"{x!r} is not a value of {self._label()} (no distinct value within {tol:.3g})"

    @abc.abstractmethod
    def _default_atol(self) -> float:
        """The default absolute tolerance of value lookups: twice the float error of the
        table's values, in value units (0 when they are exact)."""

    @abc.abstractmethod
    def _rank_values(self, x: np.ndarray, rtol: float, atol: float | np.ndarray | None
                     ) -> tuple[np.ndarray, np.ndarray]:
        """(ranks, status) of the raw values ``x`` (float64 (m,)): status 0 found, 1 not a
        value (NaN and infinities included), 2 ambiguous within the tolerance ``atol +
        rtol * |x|`` (``atol``: a number or one per value; None: :meth:`_default_atol`),
        the rank then being the nearest distinct value's."""

    def values_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """The distinct values (float64) of unq ranks ``ranks`` (in 1..K)."""
        q = self._check_ranks(ranks)
        return self.values[q - 1].reshape(np.shape(ranks))

    def rank_runs(self, runs: ArrayLike) -> np.ndarray:
        """1-based unq ranks of judged runs, given as an (n_runs, N) array of relevance
        degrees (or one run; rankings of their own lengths for truncated run spaces).
        Exact: ranks come from the run's exact value, no tolerance. Raises
        :class:`~irscale.errors.RunError` for wrong lengths, degrees outside REL, or runs
        that cannot occur for the recall base (infeasible)."""
        arr = self.measure.check_runs(runs, self.rb)
        if arr.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self.rank_ids(self.measure.ids_of_runs(arr))

    @abc.abstractmethod
    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        """Exact ranks of runs given by run id (SPEC section 2 numbering)."""

    def midrank(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL) -> np.ndarray:
        """Mid-ranks of raw values (comparison only; see :attr:`midranks`)."""
        return self.midranks_of_ranks(self.rank(values, rtol, atol))

    def midranks_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """Mid-ranks (float64, 1-based positions among all feasible runs) of the values
        with unq ranks ``ranks``."""
        q = self._check_ranks(ranks)
        return self.midranks[q - 1]

    def _check_ranks(self, ranks) -> np.ndarray:
        q = np.asarray(ranks, dtype=np.int64).reshape(-1)
        if q.size and (q.min() < 1 or q.max() > self.k):
            raise ValueError(f"ranks must be in 1..{self.k}")
        return q

    def scaled(self, ranks: ArrayLike) -> np.ndarray:
        """Ranks mapped to [0, 1]: (rank - 1) / (K - 1) (0 when K = 1)."""
        r = np.asarray(ranks, dtype=np.float64)
        return (r - 1) / (self.k - 1) if self.k > 1 else np.zeros_like(r)

    def _label(self) -> str:
        return f"{self.measure}" + ("" if self.rb is None else f" with rb={self.rb}")


# -- what the layouts are given (:mod:`irscale.scales.tables.layouts`): structural types ------------
class TableSink(Protocol):
    """Where a layout's ``write`` puts a table (the store's writer implements it)."""

    def dataset(self, name: str, dtype: DTypeLike, shape: tuple[int, ...], pieces: Iterable[np.ndarray]) -> None:
        """A checksummed dataset of ``shape``, written piece by piece."""

    def array(self, name: str, data: np.ndarray) -> None:
        """A dataset outside the checksum."""

    def attrs(self, **attrs: str | int | bool) -> None:
        """Attributes of the table."""


class TableSource(Protocol):
    """Where a layout's ``read`` finds a stored table (the store's reader implements it):
    its attributes (HDF5 attributes decoded to Python values) and datasets."""

    attrs: dict[str, Any]

    def has(self, name: str) -> bool:
        """Whether the table has dataset ``name``."""

    def mapped(self, name: str) -> np.ndarray:
        """Dataset ``name`` memory-mapped (read whole when it cannot be mapped)."""

    def read(self, name: str) -> np.ndarray:
        """Dataset ``name`` read into memory."""


class BuildSettings(Protocol):
    """What a layout's ``build`` reads of its options
    (:class:`~irscale.scales.tables.build.BuildOptions`, which has these fields)."""

    @property
    def fanout(self) -> Fanout: ...

    @property
    def method(self) -> str: ...

    @property
    def progress(self) -> bool: ...

    @property
    def workdir(self) -> Path | None: ...

    @property
    def bucket_items(self) -> int | None: ...

    @property
    def chunk_size(self) -> int | None: ...

    @property
    def concatenate(self) -> bool: ...
