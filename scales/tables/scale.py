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
import decimal
import functools
import numbers
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from irscale.enumerate.fanout import Fanout
from irscale.enumerate.runspace import short_repr
from irscale.errors import OracleListError, RecallBaseError, RunError, ValueNotInScaleError
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

    #: Name of the table's layout (:mod:`irscale.scales.tables.layouts`) and what kind of
    #: scale its scales are, as outputs say it (the ``scale`` column of scores).
    layout: ClassVar[str] = ""
    kind: ClassVar[str] = "exact: table"

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
            raise RecallBaseError(f"{self.measure}: the table is for the recall base {table.table_rb}, not {self.rb}")
        self.certificate = table.certificate
        self._bounds: tuple[float, float] | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        """Every layout's :meth:`rank_ids` is given checked run ids (int64 (m,)): the
        check is made here, once, for all layouts."""
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("rank_ids")
        if own is not None and not getattr(own, "_checks_ids", False) and not getattr(own, "__isabstractmethod__",
                                                                                       False):
            cls.rank_ids = _checking_ids(own)

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
        distinct value each value was matched to.

        ``values`` must be real numbers: a number, or a (nested) list or array of numbers
        of one shape. Anything else (strings, even ``'0.5'``; booleans; None; complex
        numbers; nested lists of different lengths) raises
        :class:`~irscale.errors.ValueNotInScaleError` naming the first such item, whatever
        ``errors`` says. A value below the smallest distinct value, or above the largest,
        by more than its tolerance is not a value of the measure."""
        if errors not in ("raise", "zero"):
            raise ValueError(f"errors must be 'raise' or 'zero', got {errors!r}")
        x, shape = self._flat(values)
        atol_ = self._atol(x, shape, atol, decimals)
        ranks, status = self._ranked(x, rtol, atol_)
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
        ranks, status = self._ranked(x, rtol, atol_)
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
        """Values given by a user as a flat float64 array and their shape; raises
        :class:`~irscale.errors.ValueNotInScaleError` naming the first item that is not a
        real number."""
        x = _user_array(values, "values", ValueNotInScaleError)
        if x.dtype.kind not in "iuf":
            for index, v in np.ndenumerate(x):
                if not _is_real(v):
                    raise ValueNotInScaleError(
                        f"values{_index(index)} is {short_repr(v)}, not a number: give real numbers (a number, or "
                        f"a list or array of numbers of one shape)")
        try:
            x = x.astype(np.float64, copy=False)
        except (ValueError, TypeError, OverflowError) as e:      # e.g. an object too large for a float
            raise ValueNotInScaleError(f"values cannot be read as float64 numbers ({e})") from None
        return x.reshape(-1), x.shape

    def _ranked(self, x: np.ndarray, rtol: float, atol: float | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_rank_values`, with every finite value below the smallest distinct value,
        or above the largest, by more than its tolerance rejected as not a value (whatever
        the layout's mapping of values outside the range does)."""
        ranks, status = self._rank_values(x, rtol, atol)
        if x.size:
            if getattr(self, "_bounds", None) is None:
                self._bounds = self.value_range()
            lo, hi = self._bounds
            if not (np.fmin.reduce(x) < lo or np.fmax.reduce(x) > hi):     # NaN ignored
                return ranks, status
            finite = np.isfinite(x)
            tol = atol + rtol * np.abs(np.where(finite, x, 0.0))
            with np.errstate(invalid="ignore"):
                outside = finite & ((x < lo - tol) | (x > hi + tol))
            if outside.any():
                ranks = np.where(outside, 0, ranks)
                status = np.where(outside, NOT_A_VALUE, status).astype(status.dtype)
        return ranks, status

    def _atol(self, x: np.ndarray, shape: tuple[int, ...], atol: float | None, decimals) -> float | np.ndarray:
        """The absolute tolerance: ``atol`` (default: the table's), widened per value to half
        a unit of its last decimal when ``decimals`` is given."""
        base = self._default_atol() if atol is None else float(atol)
        if decimals is None:
            return base
        try:
            d = np.broadcast_to(np.asarray(decimals, dtype=np.float64), shape).reshape(-1)
        except (ValueError, TypeError):
            raise ValueNotInScaleError(f"decimals must be a number of decimals, or one per value (shape {shape}), "
                                       f"got {short_repr(decimals)}") from None
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
        lo, hi = getattr(self, "_bounds", None) or (-np.inf, np.inf)
        if x < lo - tol or x > hi + tol:
            side, end = ("below its smallest", lo) if x < lo else ("above its largest", hi)
            return f"{x!r} is not a value of {self._label()} ({side} value {end!r})"
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
        """The distinct values (float64) of unq ranks ``ranks`` (integers 1..K, else
        :class:`~irscale.errors.ValueNotInScaleError` naming the first that is not)."""
        q = self._check_ranks(ranks)
        return self.values[q - 1].reshape(np.shape(ranks))

    def rank_runs(self, runs: ArrayLike) -> np.ndarray:
        """1-based unq ranks of judged runs, given as an (n_runs, N) array of relevance
        degrees (or one run; rankings of their own lengths for truncated run spaces).
        Exact: ranks come from the run's exact value, no tolerance. Raises
        :class:`~irscale.errors.RunError` naming the first bad run or item: wrong lengths
        or nesting, items that are not integers (booleans, strings, None, non-integral
        floats; arrays of floats holding integers are accepted), degrees outside REL (-1
        included; only arrays of truncated rankings are padded with -1), or runs that
        cannot occur for the recall base (infeasible)."""
        arr = self.measure.check_runs(runs, self.rb)
        if arr.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self.rank_ids(self.measure.ids_of_runs(arr))

    def rank_judged(self, grades: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """Exact ranks of judged rankings (what transforms rank): ``grades`` (m, N) already
        folded to 0..G, ``lengths`` their lengths (truncated run spaces read them)."""
        return self.rank_ids(self.measure.judged_ids(grades, lengths))

    def rank_bounds_judged(self, grades: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi] holding the unq rank of each judged ranking: an exact scale's rank twice
        (the same array); a bounded scale's certified interval (:mod:`irscale.scales.tables.bounded`)."""
        rank = self.rank_judged(grades, lengths)
        return rank, rank

    def scaled_bounds_judged(self, grades: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[lo, hi] holding the scaled value (rank - 1)/(K - 1) of each judged ranking: an
        exact scale's twice; a bounded scale's certified interval, K's bracket included."""
        lo, hi = self.rank_bounds_judged(grades, lengths)
        return self.scaled(lo), self.scaled(hi)

    @property
    def k_exact(self) -> bool:
        """Whether :attr:`k` is the exact K (bounded scales of count vectors bounding several
        grades bracket it)."""
        return True

    @abc.abstractmethod
    def rank_ids(self, ids: ArrayLike) -> np.ndarray:
        """Exact ranks (int64 (m,)) of runs given by run id (SPEC section 2 numbering).
        Ids must be integers in ``0 .. measure.id_count() - 1`` (floats holding integers
        are accepted); anything else (booleans, strings, 1.5, -1, 2**64) raises
        :class:`~irscale.errors.RunError` naming the first such id. Layouts implement it
        for ids already checked (:meth:`_check_ids` runs first, whatever the layout)."""

    def _check_ids(self, ids: ArrayLike) -> np.ndarray:
        """Run ids given by a user as a flat int64 array (see :meth:`rank_ids`)."""
        count = self.measure.id_count()
        return _integers(ids, "ids", 0, count, RunError, f"not a run id of {self.measure} (ids are 0..{count - 1})")

    def midrank(self, values: ArrayLike, rtol: float = RTOL, atol: float | None = ATOL) -> np.ndarray:
        """Mid-ranks of raw values (comparison only; see :attr:`midranks`)."""
        return self.midranks_of_ranks(self.rank(values, rtol, atol))

    def midranks_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        """Mid-ranks (float64, 1-based positions among all feasible runs) of the values
        with unq ranks ``ranks`` (integers 1..K, else
        :class:`~irscale.errors.ValueNotInScaleError` naming the first that is not)."""
        q = self._check_ranks(ranks)
        return self.midranks[q - 1]

    def _check_ranks(self, ranks: ArrayLike, lowest: int = 1) -> np.ndarray:
        """Unq ranks given by a user as a flat int64 array: integers in ``lowest..K``
        (floats holding integers accepted), else
        :class:`~irscale.errors.ValueNotInScaleError` naming the first that is not."""
        return _integers(ranks, "ranks", lowest, self.k + 1, ValueNotInScaleError,
                         f"not a rank of {self._label()} (ranks are 1..{self.k})")

    def scaled(self, ranks: ArrayLike) -> np.ndarray:
        """Ranks mapped to [0, 1]: (rank - 1) / (K - 1) (0 when K = 1), in the shape of
        ``ranks``. Ranks are integers 1..K; rank 0, which :meth:`rank` with
        ``errors="zero"`` gives a rejected value, maps to NaN. Anything else (negative
        ranks, ranks above K, 1.5, booleans, strings) raises
        :class:`~irscale.errors.ValueNotInScaleError` naming the first such rank."""
        arr = _user_array(ranks, "ranks", ValueNotInScaleError)
        q = self._check_ranks(arr, lowest=0).astype(np.float64)
        r = (q - 1) / (self.k - 1) if self.k > 1 else np.zeros_like(q)
        return np.where(q == 0, np.nan, r).reshape(arr.shape)

    def _label(self) -> str:
        return f"{self.measure}" + ("" if self.rb is None else f" with rb={self.rb}")


class Unlisted:
    """What a :class:`Scale` that ranks without listing its values answers when asked for a
    list: :class:`~irscale.errors.OracleListError` from ``_unlisted(what)``, saying why."""

    def _unlisted(self, what: str) -> OracleListError:
        raise NotImplementedError

    @property
    def values(self) -> np.ndarray:
        raise self._unlisted("values")

    @property
    def counts(self) -> np.ndarray:
        raise self._unlisted("run counts")

    @property
    def representatives(self) -> np.ndarray:
        raise self._unlisted("representatives")

    def midranks_of_ranks(self, ranks: ArrayLike) -> np.ndarray:
        raise self._unlisted("mid-ranks")


# -- checking what users give --------------------------------------------------------------------
def _checking_ids(rank_ids: Callable) -> Callable:
    """A layout's ``rank_ids`` called with ids checked by :meth:`Scale._check_ids`."""
    @functools.wraps(rank_ids)
    def checked(self: Scale, ids: ArrayLike) -> np.ndarray:
        return rank_ids(self, self._check_ids(ids))
    checked._checks_ids = True
    return checked


def _user_array(items, name: str, error: type[Exception]) -> np.ndarray:
    """``items`` as an array: numpy arrays (and pandas objects) as they are; Python lists
    and tuples as numbers when they are a flat list of numbers without booleans (the fast
    common case), else item by item (dtype object, so that booleans and huge integers are
    seen as they were given). Nested lists of different lengths raise ``error``."""
    if not isinstance(items, (list, tuple)):
        try:
            return np.asarray(items)
        except (ValueError, TypeError, OverflowError):
            raise error(f"{name} must be a number, or a list or array of numbers of one shape; got "
                        f"{short_repr(items)}") from None
    try:
        arr = np.asarray(items)
    except (ValueError, TypeError, OverflowError):
        arr = None
    if arr is not None and arr.ndim == 1 and arr.dtype.kind in "iuf" and not _BOOLS & set(map(type, items)):
        return arr
    try:
        arr = np.empty(np.shape(items), dtype=object)
        arr[...] = items
    except (ValueError, TypeError):
        raise error(f"{name} must be a (nested) list of one shape; these lists have different lengths: "
                    f"{short_repr(items)}") from None
    return arr


_BOOLS = {bool, np.bool_}


def _first(mask: np.ndarray) -> tuple[int, ...]:
    """Index of the first True of a boolean array (() for a 0-d one)."""
    return tuple(int(i) for i in np.argwhere(mask)[0]) if mask.ndim else ()


def _index(index: tuple[int, ...]) -> str:
    return "".join(f"[{i}]" for i in index)


def _is_real(v: object) -> bool:
    return isinstance(v, (numbers.Real, decimal.Decimal)) and not isinstance(v, (bool, np.bool_))


def _is_whole(v: object) -> bool:
    """Whether an item is an integer: an integer type (not a boolean) or a float holding one."""
    if isinstance(v, (bool, np.bool_)):
        return False
    if isinstance(v, numbers.Integral):
        return True
    return isinstance(v, (float, np.floating)) and bool(np.isfinite(v)) and float(v).is_integer()


def _integers(items: ArrayLike, name: str, lo: int, hi: int, error: type[Exception], outside: str) -> np.ndarray:
    """Integers given by a user in ``lo .. hi - 1`` as a flat int64 array; raises ``error``
    naming the first item that is not an integer (booleans, strings, 1.5, NaN; floats
    holding integers are integers) or lies outside the range (``outside`` says why)."""
    arr = _user_array(items, name, error)
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            index = _first(bad)
            raise error(f"{name}{_index(index)} is {short_repr(arr[index])}, not an integer")
    elif arr.dtype.kind not in "iu":
        for index, v in np.ndenumerate(arr):
            if not _is_whole(v):
                raise error(f"{name}{_index(index)} is {short_repr(v)}, not an integer")
        arr = np.vectorize(int, otypes=[object])(arr) if arr.size else arr.astype(np.int64)
    with np.errstate(invalid="ignore"):
        wrong = np.asarray((arr < lo) | (arr >= hi), dtype=bool)
    if wrong.any():
        index = _first(wrong)
        raise error(f"{name}{_index(index)} is {short_repr(arr[index])}: {outside}")
    return arr.astype(np.int64, copy=False).reshape(-1)


# -- what the layouts are given (:mod:`irscale.scales.tables.layouts`): structural types ------------
class TableSink(Protocol):
    """Where a layout's ``write`` puts a table (the store's writer implements it)."""

    def dataset(self, name: str, dtype: DTypeLike, shape: tuple[int, ...], pieces: Iterable[np.ndarray]) -> None:
        """A checksummed dataset of ``shape``, written piece by piece."""

    def array(self, name: str, data: np.ndarray) -> None:
        """A dataset written whole (covered by its digest)."""

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
