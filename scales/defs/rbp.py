"""RBP(p)@N: rank-biased precision, (1 - p) * sum_k p^(k-1) * r_k (Moffat and Zobel).

With p = a/c in lowest terms the exact key is ``sum_k r_k * a^(k-1) * c^(N-k)`` and
RBP = key * (c - a) / c^N.
"""
from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.keys import LinearKey
from irscale.scales.measure import REQUIRED, Measure, Param
from irscale.scales.registry import register


@register
@dataclass(frozen=True, repr=False)
class RBP(Measure):
    name = "RBP"
    params = (Param("p", "prob", "persistence, a number in (0, 1)"),)
    summary = "rank-biased precision with persistence p"
    p: Fraction = REQUIRED

    def key_spec(self):
        a, c, n = self.p.numerator, self.p.denominator, self.n
        weights = [[0, a ** k * c ** (n - 1 - k)] for k in range(n)]
        return LinearKey(kernel="additive", weights=weights, max_key=sum(w[1] for w in weights),
                         ordered=True, scale=lambda rb: Fraction(c - a, c ** n))
