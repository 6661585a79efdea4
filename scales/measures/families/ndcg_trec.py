"""nDCG_trec@N: trec_eval's ``ndcg_cut``: discount 1/log2(k + 1), gain = relevance
level, ideal run from the qrels (min(RB, N) relevant documents first for binary runs; for
graded runs, ``nDCG_trec(gains=(0,1,2,3))@10``, the judged documents by decreasing grade,
from the per-grade counts (c_1..c_G) given as the recall base)."""
from __future__ import annotations

from dataclasses import dataclass

from irscale.scales.measures.families.ndcg import normaliser
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import FormalLogKey, log_discount
from irscale.scales.measures.params import GAINS


@dataclass(frozen=True, repr=False)
class nDCG_trec(KeyMeasure):  # noqa: N801
    name = "nDCG_trec"
    rb_dependent = True
    summary = "trec_eval ndcg_cut: discount 1/log2(k+1), ideal from the qrels (graded with gains)"
    params = (GAINS,)
    gains: tuple = (0, 1)

    def key_spec(self) -> FormalLogKey:
        spec = FormalLogKey.build([log_discount(2, k + 1) for k in range(1, self.n + 1)], gains=list(self.gains),
                                  base=2)
        spec.normaliser = normaliser(spec, self.n)
        return spec

