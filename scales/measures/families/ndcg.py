"""nDCG(b)@N: DCG(b)@N divided by the DCG(b)@N of the ideal run, which has
min(RB, N) relevant documents at the top (binary), or for graded gains, e.g.
``nDCG(b=2,gains=(0,1,3))@10``, the judged documents by decreasing grade cut at N, from
the per-grade counts (c_1..c_G) given as the recall base."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from irscale.errors import RecallBaseError
from irscale.scales.measures.families.dcg import LOG_GROUPS, jk_discounts
from irscale.scales.measures.groups import Grouping
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import FormalLogKey
from irscale.scales.measures.params import GAINS, REQUIRED, Param


def ideal_normaliser(spec: FormalLogKey, n: int) -> Callable[[int], int]:
    """rb -> key of the ideal binary run (min(rb, n) relevant documents first)."""
    return lambda rb: sum(spec.weights[k][1] for k in range(min(rb, n)))


@dataclass(frozen=True, repr=False)
class nDCG(KeyMeasure):  # noqa: N801  (the measure's own name)
    name = "nDCG"
    bounded_scales = True        # certified rank intervals past N = 40 (tables/bounded.py)
    rb_dependent = True
    params = (Param("b", "log_base", "log base of the J-K discount, an integer >= 2"), GAINS)
    summary = "normalised DCG with the Jarvelin-Kekalainen discount (graded with gains)"
    b: int = REQUIRED
    gains: tuple = (0, 1)

    def key_spec(self) -> FormalLogKey:
        spec = FormalLogKey.build(jk_discounts(self.b, self.n), gains=list(self.gains), base=self.b)
        spec.normaliser = normaliser(spec, self.n)
        return spec

    prefers_oracle = True

    def rank_grouping(self, counted: int | None = None) -> Grouping:
        return log_grouping(self, counted)


def log_grouping(measure: KeyMeasure, counted: int | None = None) -> Grouping:
    """The rank groups of a normalised DCG (nDCG, nDCG_trec): those of its logarithmic
    discounts. Binary: a tuple is feasible for RB when its fewest relevant documents are at
    most RB. Graded, the recall base is a per-grade count vector (c_1..c_G): the oracles
    serve the vectors that bound at most one grade (c_g < N for one g), with the counts of
    the grouping counting grade g (``counted``); the other vectors get tables of their
    feasible runs (:mod:`irscale.scales.tables.oracles`)."""
    return Grouping(measure.spec.coordinate_groups(measure.levels, measure.n, counted), LOG_GROUPS, False)


def normaliser(spec: FormalLogKey, n: int) -> Callable[[int | tuple[int, ...]], int]:
    """rb -> key of the ideal run: binary ``rb`` (min(rb, n) relevant documents first) or
    per-grade counts ``(c_1..c_G)`` (:func:`graded_ideal_key`)."""
    binary = ideal_normaliser(spec, n)

    def key(rb):
        ideal = graded_ideal_key(spec, n, rb) if isinstance(rb, tuple) else binary(rb)
        if ideal == 0:
            raise RecallBaseError(f"the ideal run of a topic with per-grade counts {rb} has DCG 0 (no judged "
                                  f"document with a positive gain): normalised DCG is undefined")
        return ideal
    return key


def graded_ideal_key(spec: FormalLogKey, n: int, counts: tuple) -> int:
    """Key of the ideal graded run: c_G documents of grade G first, then c_(G-1) of grade
    G - 1, ..., cut at n."""
    grades = [g for g in range(len(counts), 0, -1) for _ in range(min(counts[g - 1], n))][:n]
    return sum(spec.weights[k][g] for k, g in enumerate(grades))
