"""AP@N: average precision cut at N, as trec_eval's ``map_cut``.

AP = (1/RB) * sum_k r_k * (sum_{j<=k} r_j) / k. The exact key is the integer
``L * sum_k r_k * (relevant in top k) / k`` with L = lcm(1..N), so AP = key / (L * RB).
"""
from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.keys import LinearKey, lcm_upto
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.registry import register


@register
@dataclass(frozen=True, repr=False)
class AP(Measure):
    name = "AP"
    rb_dependent = True
    summary = "average precision (trec_eval map_cut)"

    def key_spec(self):
        lcm = lcm_upto(self.n)
        weights = [[0, lcm // k] for k in range(1, self.n + 1)]
        return LinearKey(kernel="ap", weights=weights, max_key=lcm * self.n, ordered=True,
                         scale=lambda rb: Fraction(1, lcm * rb))
