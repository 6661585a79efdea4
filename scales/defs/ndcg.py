"""nDCG(b)@N: DCG(b)@N divided by the DCG(b)@N of the ideal run, which has
min(RB, N) relevant documents at the top."""
from dataclasses import dataclass

from irscale.scales.defs.dcg import jk_discounts
from irscale.scales.keys import FormalLogKey
from irscale.scales.measure import REQUIRED, Measure, Param
from irscale.scales.registry import register


def ideal_normaliser(spec: FormalLogKey, n: int):
    """rb -> key of the ideal binary run (min(rb, n) relevant documents first)."""
    return lambda rb: sum(spec.weights[k][1] for k in range(min(rb, n)))


@register
@dataclass(frozen=True, repr=False)
class nDCG(Measure):  # noqa: N801  (the measure's own name)
    name = "nDCG"
    rb_dependent = True
    params = (Param("b", "log_base", "log base of the J-K discount, an integer >= 2"),)
    summary = "normalised DCG with the Jarvelin-Kekalainen discount"
    b: int = REQUIRED

    def key_spec(self):
        spec = FormalLogKey.build(jk_discounts(self.b, self.n), gains=[0, 1], base=self.b)
        spec.normaliser = ideal_normaliser(spec, self.n)
        return spec
