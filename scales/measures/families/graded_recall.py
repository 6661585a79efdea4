"""gR@N: graded recall, sum_k g(r_k) / (total gain of the topic's judged documents) =
sum_k g(r_k) / sum_g c_g * g(g), the recall base being the per-grade counts
(c_1..c_G) (SPEC_MEASURES section 2; binary by default, where it is R@N)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.errors import RecallBaseError
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey
from irscale.scales.measures.params import GAINS


def total_gain(gains: tuple, rb: int | tuple[int, ...]) -> int:
    """Total gain of a topic's judged documents: sum_g c_g * g(g) for the per-grade counts
    ``rb = (c_1..c_G)``, or ``rb * g(1)`` for a binary recall base."""
    if isinstance(rb, tuple):
        return sum(c * g for c, g in zip(rb, gains[1:]))
    return rb * gains[-1]


@dataclass(frozen=True, repr=False)
class gR(KeyMeasure):  # noqa: N801  (the measure's own name)
    name = "gR"
    params = (GAINS,)
    rb_dependent = True
    summary = "graded recall: total gain of the top N / total gain of the judged documents"
    gains: tuple = (0, 1)

    def key_spec(self) -> AdditiveKey:
        g, n = self.gains, self.n

        def scale(rb):
            total = total_gain(g, rb)
            if total <= 0:  # every judged document has gain 0: recall is undefined
                raise RecallBaseError(f"{self}: the judged documents {rb!r} have total gain 0")
            return Fraction(1, total)
        return AdditiveKey(weights=[list(g)] * n, max_key=n * g[-1], ordered=True, scale=scale)
