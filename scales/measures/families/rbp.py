"""RBP(p)@N: rank-biased precision, (1 - p) * sum_k p^(k-1) * g(r_k) / g(G) (Moffat and
Zobel; binary by default, g = (0, 1); graded e.g. ``RBP(gains=(0,1,2),p=0.8)@10``).

With p = a/c in lowest terms the exact key is ``sum_k g(r_k) * a^(k-1) * c^(N-k)`` and
RBP = key * (c - a) / (c^N * g(G)).

Binary RBP with p <= 1/2 orders runs lexicographically with all values distinct
(p^(k-1) > sum_{j>k} p^(j-1)), so its table is the identity, rank = run id + 1, and is
stored as nothing (layout ``implicit``). Not graded RBP: with gains (0,1,2) and p = 1/2,
(0,2,2,...) beats (1,0,0,...).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey
from irscale.scales.measures.params import GAINS, PERSISTENCE, REQUIRED


@dataclass(frozen=True, repr=False)
class RBP(KeyMeasure):
    name = "RBP"
    params = (PERSISTENCE, GAINS)
    summary = "rank-biased precision with persistence p (graded with gains)"
    p: Fraction = REQUIRED
    gains: tuple = (0, 1)

    def key_spec(self) -> AdditiveKey:
        a, c, n, g = self.p.numerator, self.p.denominator, self.n, self.gains
        weights = [[gain * a ** k * c ** (n - 1 - k) for gain in g] for k in range(n)]
        return AdditiveKey(weights=weights, max_key=sum(w[-1] for w in weights), ordered=True,
                           scale=lambda rb: Fraction(c - a, c ** n * g[-1]))

    @property
    def layout(self) -> str:
        return "implicit" if self.levels == 2 and self.p <= Fraction(1, 2) else "entries"

    def lexicographic_gap(self) -> Fraction:
        """Smallest gap between lexicographic neighbours x, x+1 of the implicit table:
        min over j of (1 - p)(p^j - sum_{k=j+1}^{N-1} p^k)."""
        p, n = self.p, self.n
        return min((1 - p) * (p ** j - sum(p ** k for k in range(j + 1, n))) for j in range(n))
