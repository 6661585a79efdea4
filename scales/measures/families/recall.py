"""R@N: recall at the cutoff, (relevant documents in the top N) / RB."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.aliases import OtherName
from irscale.scales.measures.closed_forms import CountForm
from irscale.scales.measures.families.precision import BINARY_PARAMS, binary_reader, count_grouping, count_key
from irscale.scales.measures.groups import Grouping
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey


@dataclass(frozen=True, repr=False)
class R(KeyMeasure):
    name = "R"
    rb_dependent = True
    summary = "recall: relevant retrieved / RB"
    other_names = (
        OtherName("ir_measures", "R", binary_reader(False), "recall at k (pytrec_eval's recall_k)", "R@10", "R@10",
                  BINARY_PARAMS, ("Recall",)),
        OtherName("trec_eval", "recall", binary_reader(False), "recall at k", "recall_10", "R@10"),
    )

    def key_spec(self) -> AdditiveKey:
        return count_key(self.n, lambda rb: Fraction(1, rb))

    def rank_grouping(self) -> Grouping:
        return count_grouping(self)

    def closed_form(self) -> CountForm:
        """j / RB for j = 0..min(N, RB) relevant documents in the top N: C(N, j) runs each."""
        return CountForm(self.n, self.spec)
