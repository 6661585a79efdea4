"""RR@N: reciprocal rank of the first relevant document in the top N (0 if none).

Graded: ``RR(gains=(0,1,2),rel=2)@10`` counts a document as relevant when its grade is at
least ``rel`` (default 1); only the number of grades of ``gains`` matters.
"""
from dataclasses import dataclass

from irscale.scales.measures.keys import ReciprocalRankKey
from irscale.errors import MeasureError
from irscale.scales.measures.measure import GAINS, Measure, Param
from irscale.scales.measures.registry import register


@register
@dataclass(frozen=True, repr=False)
class RR(Measure):
    name = "RR"
    summary = "reciprocal rank of the first relevant document (graded: grade >= rel)"
    params = (GAINS, Param("rel", "grade", "lowest grade counted as relevant", default=1))
    gains: tuple = (0, 1)
    rel: int = 1

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rel > self.levels - 1:
            raise MeasureError(f"RR: rel = {self.rel} is above the top grade {self.levels - 1} of gains {self.gains}")

    def key_spec(self):
        weights = [] if self.rel == 1 else [[self.rel]]
        return ReciprocalRankKey(kernel="rr", weights=weights, max_key=self.n, ordered=True)
