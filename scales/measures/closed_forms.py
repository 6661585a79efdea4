"""Closed forms: measures whose unq map is a formula, exact at any cutoff N.

A measure whose value is a monotone function of one count of the run has one distinct
value per possible count, whatever N, and the number of runs of each is a binomial sum,
so its scale needs neither tables nor enumeration (SPEC section 2; issue 30):

* P@N: j relevant documents in the top N, values j / N, j = 0..N, C(N, j) runs each;
* R@N and F1@N at recall base RB: j = 0..min(N, RB) (the feasible runs have at most RB
  relevant documents), values j / RB and 2 j / (N + RB), C(N, j) runs each;
* Rprec@N at RB: j relevant documents in the top m = min(RB, N), values j / RB,
  C(m, j) * sum_{i <= min(N - m, RB - j)} C(N - m, i) feasible runs each;
* RR@N (graded: a document is relevant when its degree is at least ``rel``): key 0 when
  no document is relevant, else N + 1 - (the rank of the first relevant one); values 0,
  1/N, ..., 1/2, 1; with L levels, ``rel^N`` runs without a relevant document and
  ``rel^(k-1) (L - rel) L^(N-k)`` runs whose first relevant document is at rank k.

A :class:`ClosedForm` says, for a recall base, how many distinct values there are (K),
the *index* (0..K-1, in value order: the count, or RR's key) of judged runs, the indices
of raw values, and the runs of each index (Python integers: 2^1000 runs at N = 1000).
The index is the measure's exact key, so its key spec gives the values of indices (the
float and exact arithmetic of its tables, the very numbers they hold);
:mod:`irscale.scales.tables.closed` makes the scale of it. A
family offers its closed form with ``closed_form()`` (None when it has none).
"""
from __future__ import annotations

import abc
import dataclasses
from math import comb
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class ClosedForm(abc.ABC):
    """The unq map of a measure at cutoff ``n`` as a formula (see the module docstring)."""

    n: int
    spec: Any                      # the measure's KeySpec (keys.py, which imports measure.py): index = key

    @abc.abstractmethod
    def k(self, rb: int | None) -> int:
        """Number of distinct values for the recall base ``rb`` (None: no recall base)."""

    @abc.abstractmethod
    def runs(self, i: int, rb: int | None) -> int:
        """Feasible runs whose value has index ``i`` (0-based, value order)."""

    @abc.abstractmethod
    def smallest_id(self, i: int, rb: int | None) -> int:
        """The smallest run id (SPEC section 2 numbering) among them."""

    @abc.abstractmethod
    def index_of_runs(self, grades: np.ndarray, rb: int | None) -> np.ndarray:
        """Indices (int64) of judged runs: ``grades`` (m, N) holds degrees 0..G."""

    def infeasible(self, grades: np.ndarray, rb: int | None) -> np.ndarray:
        """Which runs cannot occur for ``rb`` (more relevant documents than it)."""
        if rb is None:
            return np.zeros(grades.shape[0], bool)
        return (grades > 0).sum(axis=1) > rb


@dataclasses.dataclass(frozen=True)
class CountForm(ClosedForm):
    """Values a function of j, the relevant documents among the top ``m(rb)`` ranks; the
    feasible runs have at most ``rb`` relevant documents (P: every run, m = N; R, F1:
    m = N; Rprec: m = min(RB, N))."""

    bounded: bool = True           # whether the recall base bounds the count (R, F1, Rprec; not P)
    top_rb: bool = False           # whether only the top min(RB, N) ranks count (Rprec)

    def m(self, rb: int | None) -> int:
        return min(rb, self.n) if self.top_rb and rb is not None else self.n

    def k(self, rb: int | None) -> int:
        m = self.m(rb)
        return (min(m, rb) if self.bounded and rb is not None else m) + 1

    def runs(self, i: int, rb: int | None) -> int:
        m, rest = self.m(rb), self.n - self.m(rb)
        if not self.bounded or rb is None:
            return comb(m, i) * 2 ** rest
        return comb(m, i) * sum(comb(rest, j) for j in range(min(rest, rb - i) + 1))

    def smallest_id(self, i: int, rb: int | None) -> int:
        """i relevant documents at the last ranks of the top m, none after them."""
        return ((1 << i) - 1) << (self.n - self.m(rb))

    def index_of_runs(self, grades: np.ndarray, rb: int | None) -> np.ndarray:
        return (grades[:, :self.m(rb)] > 0).sum(axis=1).astype(np.int64)


@dataclasses.dataclass(frozen=True)
class FirstRelevantForm(ClosedForm):
    """RR: index 0 without a relevant document, else N + 1 - the rank of the first
    document of degree >= ``rel`` (``levels`` degrees 0..levels-1)."""

    levels: int = 2
    rel: int = 1

    def k(self, rb: int | None) -> int:
        return self.n + 1

    def runs(self, i: int, rb: int | None) -> int:
        if i == 0:
            return self.rel ** self.n
        return self.rel ** (self.n - i) * (self.levels - self.rel) * self.levels ** (i - 1)

    def smallest_id(self, i: int, rb: int | None) -> int:
        return 0 if i == 0 else self.rel * self.levels ** (i - 1)

    def index_of_runs(self, grades: np.ndarray, rb: int | None) -> np.ndarray:
        hit = grades[:, :self.n] >= self.rel
        first = np.argmax(hit, axis=1)
        return np.where(hit.any(axis=1), self.n - first, 0).astype(np.int64)

    def infeasible(self, grades: np.ndarray, rb: int | None) -> np.ndarray:
        return np.zeros(grades.shape[0], bool)


__all__ = ["ClosedForm", "CountForm", "FirstRelevantForm"]
