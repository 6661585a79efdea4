"""R@N: recall at the cutoff, (relevant documents in the top N) / RB."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.families.precision import count_key
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey


@dataclass(frozen=True, repr=False)
class R(KeyMeasure):
    name = "R"
    rb_dependent = True
    summary = "recall: relevant retrieved / RB"

    def key_spec(self) -> AdditiveKey:
        return count_key(self.n, lambda rb: Fraction(1, rb))
