"""Tables of distinct values and the unq interval scale built from them.

A :class:`Table` is what enumeration produces and the store keeps: the distinct exact
keys of a measure over the (feasible) run space, in increasing value order, with the
number of runs behind each. A :class:`Scale` is a table seen for one actual recall base:
float64 values, and the rank maps

* unq rank: ``phi(m) = |{x in M(space) : x <= m}|``, 1-based (the minimum has rank 1),
  tied runs share a rank and no rank is skipped, so ranks 1..K are equally spaced;
* mid-rank (for comparison only): the mean of the 1-based positions the runs with that
  value occupy in the sorted list of all (feasible) runs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from irscale.errors import RunError, ValueNotInScaleError
from irscale.scales.certify import Certificate

#: Default tolerances of :meth:`Scale.rank`: a value is accepted when it is within
#: ``atol + rtol * |value|`` of exactly one distinct value of the measure.
RTOL = 1e-9
ATOL = 1e-12


@dataclass
class Table:
    """Distinct values of one measure at one table recall base.

    ``keys``: (K, W) uint64 exact keys in increasing value order; ``counts``: runs per
    distinct value; ``n_runs``: runs in the (feasible) space; ``table_rb``: min(RB, N),
    None for measures that do not depend on RB.
    """

    measure: object
    table_rb: int | None
    keys: np.ndarray
    counts: np.ndarray
    n_runs: int
    certificate: Certificate
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.keys.shape[0])


class Scale:
    """The unq interval scale of a measure at cutoff N (and recall base RB).

    Attributes
    ----------
    measure : Measure
    n : int
        Run length N.
    rb : int or None
        The actual recall base (may exceed N; values then use it while the order is that
        of ``min(rb, N)``).
    values : ndarray of float64, shape (K,)
        Sorted distinct values; ``values[i]`` has unq rank ``i + 1``.
    counts : ndarray of int64, shape (K,)
        Number of (feasible) runs taking each value.
    certificate : Certificate
        How ties were decided, float error bound, smallest gap.
    """

    def __init__(self, table: Table, rb: int | None = None):
        self.table = table
        self.measure = table.measure
        self.rb = self.measure.check_rb(rb if rb is not None else table.table_rb)
        if self.measure.table_rb(self.rb) != table.table_rb:
            raise ValueError(f"table for rb={table.table_rb} cannot serve rb={self.rb}")
        self._spec = self.measure.key_spec()
        self.values = np.ascontiguousarray(self._spec.float_values(table.keys, self.measure, self.rb))
        self.counts = table.counts
        self.certificate = table.certificate
        self._key_index = None

    # -- basic facts -----------------------------------------------------------------
    @property
    def n(self) -> int:
        return self.measure.n

    @property
    def n_runs(self) -> int:
        return self.table.n_runs

    def __len__(self) -> int:
        return len(self.table)

    @property
    def k(self) -> int:
        """Number of distinct values K (the largest rank)."""
        return len(self.table)

    def __repr__(self) -> str:
        rb = "" if self.rb is None else f", rb={self.rb}"
        return f"<Scale {self.measure}{rb}: {self.k} distinct values over {self.n_runs} runs>"

    @property
    def midranks(self) -> np.ndarray:
        """Mid-rank of every distinct value (float64, 1-based positions among all runs)."""
        before = np.concatenate(([0], np.cumsum(self.counts)[:-1]))
        return before + (self.counts + 1) / 2.0

    # -- value -> rank ---------------------------------------------------------------
    def rank(self, values, rtol: float = RTOL, atol: float = ATOL) -> np.ndarray:
        """1-based unq ranks of raw measure values.

        A value must lie within ``atol + rtol * |value|`` of exactly one distinct value
        of the measure (an exact float match always counts as within). Raises
        :class:`~irscale.errors.ValueNotInScaleError` naming the first offending value:
        NaN or infinite, not a value of the measure, or ambiguous (two distinct values
        within tolerance; use :meth:`rank_runs`, which is exact).
        """
        x = np.asarray(values, dtype=np.float64)
        shape = x.shape
        x = x.reshape(-1)
        v = self.values
        if not np.all(np.isfinite(x)):
            bad = x[~np.isfinite(x)][0]
            raise ValueNotInScaleError(f"{float(bad)!r} is not a value of {self._label()}")
        idx = np.searchsorted(v, x)
        lo = np.clip(idx - 1, 0, len(v) - 1)
        hi = np.clip(idx, 0, len(v) - 1)
        dlo, dhi = np.abs(x - v[lo]), np.abs(v[hi] - x)
        best = np.where(dhi < dlo, hi, lo)
        tol = atol + rtol * np.abs(x)
        exact = v[best] == x
        ok = exact | (np.minimum(dlo, dhi) <= tol)
        if not ok.all():
            bad = x[~ok][0]
            j = int(np.searchsorted(v, bad))
            near = ", ".join(f"{v[i]:.12g}" for i in (j - 1, j) if 0 <= i < len(v))
            raise ValueNotInScaleError(f"{float(bad)!r} is not a value of {self._label()} (nearest values: {near})")
        # ambiguity: a second distinct value within tolerance (or with the same float)
        other = np.where(best == hi, lo, hi)
        amb = (other != best) & ((v[other] == v[best]) | (~exact & (np.abs(v[other] - x) <= tol)))
        if amb.any():
            bad = x[amb][0]
            raise ValueNotInScaleError(
                f"{float(bad)!r} is ambiguous for {self._label()}: two distinct values lie within tolerance; "
                f"rank the judged runs instead (rank_runs), which is exact")
        return (best + 1).astype(np.int64).reshape(shape)

    def midrank(self, values, rtol: float = RTOL, atol: float = ATOL) -> np.ndarray:
        """Mid-ranks of raw values (comparison only; see :attr:`midranks`)."""
        return self.midranks[self.rank(values, rtol, atol) - 1]

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
        from irscale.enumerate import kernels
        from irscale.enumerate.engine import make_job
        from irscale.enumerate.reduce import KeyCodec
        from irscale.enumerate.runspace import validate_runs

        arr = validate_runs(runs, self.measure.levels, self.n)
        if self.rb is not None and self.rb < self.n:
            rel = kernels.relevant_counts(arr)
            if (rel > self.rb).any():
                i = int(np.argmax(rel > self.rb))
                raise RunError(f"run {i} has {int(rel[i])} relevant documents, more than the recall base "
                               f"rb={self.rb}: it cannot occur for this topic")
        job = make_job(self.measure)
        keys = kernels.score(job.kernel, job.words, job.weights, arr)
        codec = KeyCodec(job.words, job.codec.key_bits, stratified=False)
        if self._key_index is None:
            packed = codec.encode(self.table.keys, None)
            order = np.argsort(packed, kind="stable")
            self._key_index = (packed[order], order)
        sorted_keys, order = self._key_index
        q = codec.encode(keys, None)
        pos = np.searchsorted(sorted_keys, q)
        pos_c = np.clip(pos, 0, len(sorted_keys) - 1)
        found = sorted_keys[pos_c] == q
        if not found.all():  # cannot happen for a complete table
            raise RuntimeError(f"{self._label()}: run key not in the table; the table is incomplete")
        return (order[pos_c] + 1).astype(np.int64)

    def _label(self) -> str:
        return f"{self.measure}" + ("" if self.rb is None else f" with rb={self.rb}")
