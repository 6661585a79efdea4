"""P@N: precision at the cutoff, (number of relevant documents in the top N) / N."""
from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.keys import LinearKey
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.registry import register


def count_key(n: int, scale) -> LinearKey:
    """Key = number of relevant documents retrieved (shared by P, R and F1)."""
    return LinearKey(kernel="additive", weights=[[0, 1]] * n, max_key=n, ordered=True, scale=scale)


@register
@dataclass(frozen=True, repr=False)
class P(Measure):
    name = "P"
    summary = "precision: relevant retrieved / N"

    def key_spec(self):
        return count_key(self.n, lambda rb: Fraction(1, self.n))
