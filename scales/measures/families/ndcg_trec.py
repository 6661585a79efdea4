"""nDCG_trec@N: trec_eval's ``ndcg_cut``: discount 1/log2(k + 1), gain = relevance
level, ideal run from the qrels (min(RB, N) relevant documents first for binary runs; for
graded runs, ``nDCG_trec(gains=(0,1,2,3))@10``, the judged documents by decreasing grade,
from the per-grade counts (c_1..c_G) given as the recall base)."""
from __future__ import annotations

from dataclasses import dataclass

from irscale.scales.measures.aliases import OtherName, Request
from irscale.scales.measures.families.ndcg import log_grouping, normaliser
from irscale.scales.measures.families.precision import JUDGED_ONLY
from irscale.scales.measures.groups import Grouping
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import FormalLogKey, log_discount
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.params import GAINS

#: gdeval's largest relevance level (it refuses qrels with higher levels).
GDEVAL_MAX_LEVEL = 4


def _read_other(cls: type, req: Request) -> Measure:
    """ir_measures' nDCG@k is trec_eval's ndcg_cut.k (pytrec_eval): the gains are the qrels'
    levels 0..T (or ir_measures' ``gains`` map of levels to gains, unmapped levels keeping
    their own), so it is nDCG_trec(gains=(0,1,..,T))@k; ``dcg='exp-log2'`` is gdeval's
    nDCG: gains 2^level - 1, levels up to 4."""
    if req.cutoff is None:
        req.fail("without a cutoff nDCG (trec_eval's ndcg) divides by the DCG of the ideal ranking of all the "
                 "topic's relevant documents, irscale's nDCG_trec@N by the ideal ranking cut at N: they agree only "
                 "on topics with at most N relevant documents; write the cutoff (nDCG@N, ndcg_cut.N)")
    levels = req.levels()
    if req.tool == "trec_eval":
        return cls(n=req.n(), gains=levels)
    req.default("judged_only", JUDGED_ONLY)
    gains = req.params.get("gains")
    if req.params.get("dcg") == "exp-log2":
        if gains is not None:
            req.fail("dcg='exp-log2' (gdeval) takes no gains")
        if levels[-1] > GDEVAL_MAX_LEVEL:
            req.fail(f"dcg='exp-log2' is computed by gdeval, which refuses relevance levels above {GDEVAL_MAX_LEVEL} "
                     f"(the qrels' top level is {levels[-1]})")
        return cls(n=req.n(whole_ranking=False), gains=tuple(2 ** level - 1 for level in levels))
    if req.params.get("dcg") != "log2":
        req.fail(f"dcg must be 'log2' or 'exp-log2', got {req.params.get('dcg')!r}")
    if gains is not None and (not isinstance(gains, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for kv in gains.items() for v in kv)):
        req.fail(f"gains must map integer levels to integer gains, got {gains!r}")
    return cls(n=req.n(), gains=tuple((gains or {}).get(level, level) for level in levels))


@dataclass(frozen=True, repr=False)
class nDCG_trec(KeyMeasure):  # noqa: N801
    name = "nDCG_trec"
    bounded_scales = True        # certified rank intervals past N = 40 (tables/bounded.py)
    rb_dependent = True
    summary = "trec_eval ndcg_cut: discount 1/log2(k+1), ideal from the qrels (graded with gains)"
    params = (GAINS,)
    gains: tuple = (0, 1)
    other_names = (
        OtherName("ir_measures", "nDCG", _read_other, "trec_eval's ndcg_cut.k (pytrec_eval), gains = "
                  "the qrels' levels 0..T or ir_measures' gains map; dcg='exp-log2': gdeval's, gains 2^level - 1",
                  "nDCG@10", "nDCG_trec(gains=(0,1,..,T))@10; nDCG(dcg='exp-log2')@10: "
                  "nDCG_trec(gains=(0,1,3,..,2^T-1))@10", {"dcg": "log2", "gains": None, "judged_only": False},
                  ("NDCG",), cutoff="optional"),
        OtherName("trec_eval", "ndcg_cut", _read_other, "nDCG of the top k, gains = the qrels' levels",
                  "ndcg_cut_10", "nDCG_trec(gains=(0,1,..,T))@10"),
        OtherName("trec_eval", "ndcg", _read_other, "nDCG of the whole ranking, gains = the qrels' levels", "ndcg",
                  "none: its ideal ranking is not cut (nDCG_trec@N agrees on topics with at most N relevant "
                  "documents)", cutoff="none"),
    )

    def key_spec(self) -> FormalLogKey:
        spec = FormalLogKey.build([log_discount(2, k + 1) for k in range(1, self.n + 1)], gains=list(self.gains),
                                  base=2)
        spec.normaliser = normaliser(spec, self.n)
        return spec

    prefers_oracle = True

    def rank_grouping(self, counted: int | None = None) -> Grouping:
        return log_grouping(self, counted)

