"""P@N: precision at the cutoff, (number of relevant documents in the top N) / N."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey
from irscale.scales.measures.measure import RecallBase


def count_key(n: int, scale: Callable[[RecallBase], Fraction]) -> AdditiveKey:
    """Key = number of relevant documents retrieved (shared by P, R and F1)."""
    return AdditiveKey(weights=[[0, 1]] * n, max_key=n, ordered=True, scale=scale)


@dataclass(frozen=True, repr=False)
class P(KeyMeasure):
    name = "P"
    summary = "precision: relevant retrieved / N"

    def key_spec(self) -> AdditiveKey:
        return count_key(self.n, lambda rb: Fraction(1, self.n))
