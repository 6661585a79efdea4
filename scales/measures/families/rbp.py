"""RBP(p)@N: rank-biased precision, (1 - p) * sum_k p^(k-1) * g(r_k) / g(G) (Moffat and
Zobel; binary by default, g = (0, 1); graded e.g. ``RBP(gains=(0,1,2),p=0.8)@10``).

With p = a/c in lowest terms the exact key is ``sum_k g(r_k) * a^(k-1) * c^(N-k)`` and
RBP = key * (c - a) / (c^N * g(G)).
"""
from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.keys import LinearKey
from irscale.scales.measures.measure import GAINS, REQUIRED, Measure, Param
from irscale.scales.measures.registry import register


@register
@dataclass(frozen=True, repr=False)
class RBP(Measure):
    name = "RBP"
    params = (Param("p", "prob", "persistence, a number in (0, 1)"), GAINS)
    summary = "rank-biased precision with persistence p (graded with gains)"
    p: Fraction = REQUIRED
    gains: tuple = (0, 1)

    def key_spec(self):
        a, c, n, g = self.p.numerator, self.p.denominator, self.n, self.gains
        weights = [[gain * a ** k * c ** (n - 1 - k) for gain in g] for k in range(n)]
        return LinearKey(kernel="additive", weights=weights, max_key=sum(w[-1] for w in weights),
                         ordered=True, scale=lambda rb: Fraction(c - a, c ** n * g[-1]))
