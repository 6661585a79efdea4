"""P@N: precision at the cutoff, (number of relevant documents in the top N) / N."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.aliases import OtherName, Request
from irscale.scales.measures.closed_forms import CountForm
from irscale.scales.measures.groups import Grouping, subset_group
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey
from irscale.scales.measures.measure import Measure, RecallBase

#: ir_measures' parameters of its binary measures P, R, AP, RR, Rprec and their defaults.
BINARY_PARAMS = {"rel": 1, "judged_only": False}
#: Why irscale has no judged_only.
JUDGED_ONLY = "irscale scores unjudged documents as non-relevant (trec_eval -J is not supported)"


def binary_reader(whole_ranking: bool) -> Callable[[type, Request], Measure]:
    """Reader of ir_measures' and trec_eval's names of a binary measure (rel = 1, no
    judged_only): the family at the name's cutoff (or, for names that rank the whole run
    when ``whole_ranking``, at the runs' depth)."""
    def read(cls: type, req: Request) -> Measure:
        if req.tool == "ir_measures":
            req.binary(cls.name)
            req.default("judged_only", JUDGED_ONLY)
        return cls(n=req.n(whole_ranking))
    return read


def count_grouping(measure: KeyMeasure) -> Grouping:
    """One group of all ranks, options 0..N relevant documents (shared by P, R and F1)."""
    n = measure.n
    return Grouping((subset_group(list(range(1, n + 1)), measure.spec.weights, 2, n),),
                    "one group: the value is a function of the number of relevant documents", True)


def count_key(n: int, scale: Callable[[RecallBase], Fraction]) -> AdditiveKey:
    """Key = number of relevant documents retrieved (shared by P, R and F1)."""
    return AdditiveKey(weights=[[0, 1]] * n, max_key=n, ordered=True, scale=scale)


@dataclass(frozen=True, repr=False)
class P(KeyMeasure):
    name = "P"
    summary = "precision: relevant retrieved / N"
    other_names = (
        OtherName("ir_measures", "P", binary_reader(False), "precision at k (pytrec_eval's P_k)", "P@10", "P@10",
                  BINARY_PARAMS, ("Precision",)),
        OtherName("trec_eval", "P", binary_reader(False), "precision at k", "P_10", "P@10"),
    )

    def key_spec(self) -> AdditiveKey:
        return count_key(self.n, lambda rb: Fraction(1, self.n))

    def rank_grouping(self) -> Grouping:
        return count_grouping(self)

    def closed_form(self) -> CountForm:
        """j / N for j relevant documents in the top N: C(N, j) runs each."""
        return CountForm(self.n, self.spec, bounded=False)
