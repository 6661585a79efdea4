"""DCG(b)@N with the Jarvelin-Kekalainen discount: sum_k g(r_k) * d_b(k), where
d_b(k) = 1 for k < b and 1/log_b(k) otherwise (so ranks 1..b are not discounted) and g
the gains of the relevance degrees (default binary: g = (0, 1); graded e.g.
``DCG(b=2,gains=(0,1,3))@10``)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.groups import Grouping
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import FormalLogKey, log_discount
from irscale.scales.measures.params import GAINS, REQUIRED, Param

#: Why the rank groups of logarithmic discounts give distinct values (oracle certificates).
LOG_GROUPS = ("groups of ranks whose discounts are rational multiples of one ln(b)/ln(m): distinct tuples of group "
              "sums are distinct values when 1 and the ln(b)/ln(m) are linearly independent over the rationals "
              "(every close pair re-decided in 60 digits)")


def jk_discounts(b: int, n: int) -> list[tuple[Fraction, int | None]]:
    """Formal J-K discounts of ranks 1..n (see :func:`irscale.scales.measures.keys.log_discount`)."""
    return [(Fraction(1), None) if k < b else log_discount(b, k) for k in range(1, n + 1)]


@dataclass(frozen=True, repr=False)
class DCG(KeyMeasure):
    name = "DCG"
    bounded_scales = True        # certified rank intervals past N = 40 (tables/bounded.py)
    params = (Param("b", "log_base", "log base of the J-K discount, an integer >= 2"), GAINS)
    summary = "discounted cumulated gain, Jarvelin-Kekalainen discount with log base b (graded with gains)"
    b: int = REQUIRED
    gains: tuple = (0, 1)

    def key_spec(self) -> FormalLogKey:
        return FormalLogKey.build(jk_discounts(self.b, self.n), gains=list(self.gains), base=self.b)

    prefers_oracle = True

    def rank_grouping(self) -> Grouping:
        return Grouping(self.spec.coordinate_groups(self.levels, self.n), LOG_GROUPS, False)
