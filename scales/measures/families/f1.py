"""F1@N: harmonic mean of P@N and R@N, 2 * (relevant retrieved) / (N + RB)."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.closed_forms import CountForm
from irscale.scales.measures.families.precision import count_grouping, count_key
from irscale.scales.measures.groups import Grouping
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey


@dataclass(frozen=True, repr=False)
class F1(KeyMeasure):
    name = "F1"
    rb_dependent = True
    summary = "F1: 2 * relevant retrieved / (N + RB)"

    def key_spec(self) -> AdditiveKey:
        return count_key(self.n, lambda rb: Fraction(2, self.n + rb))

    def rank_grouping(self) -> Grouping:
        return count_grouping(self)

    def closed_form(self) -> CountForm:
        """2 j / (N + RB) for j = 0..min(N, RB) relevant documents in the top N: C(N, j) runs each."""
        return CountForm(self.n, self.spec)
