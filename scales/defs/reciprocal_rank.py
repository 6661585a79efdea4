"""RR@N: reciprocal rank of the first relevant document in the top N (0 if none)."""
from dataclasses import dataclass

from irscale.scales.keys import ReciprocalRankKey
from irscale.scales.measure import Measure
from irscale.scales.registry import register


@register
@dataclass(frozen=True, repr=False)
class RR(Measure):
    name = "RR"
    summary = "reciprocal rank of the first relevant document"

    def key_spec(self):
        return ReciprocalRankKey(kernel="rr", weights=[], max_key=self.n, ordered=True)
