"""gP@N: graded precision, sum_k g(r_k) / (N * g(G)) (binary by default, where it is P@N;
graded e.g. ``gP(gains=(0,1,2))@10``)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey
from irscale.scales.measures.params import GAINS


@dataclass(frozen=True, repr=False)
class gP(KeyMeasure):  # noqa: N801  (the measure's own name)
    name = "gP"
    params = (GAINS,)
    summary = "graded precision: total gain of the top N / (N * top gain)"
    gains: tuple = (0, 1)

    def key_spec(self) -> AdditiveKey:
        g, n = self.gains, self.n
        return AdditiveKey(weights=[list(g)] * n, max_key=n * g[-1], ordered=True,
                           scale=lambda rb: Fraction(1, n * g[-1]))
