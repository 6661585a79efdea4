"""Rprec@N: R-precision (trec_eval's ``Rprec``) of the ranking cut at N, later documents
non-relevant: the relevant documents in the top min(RB, N), divided by RB.

Its order depends on the recall base (the top RB ranks count, the others do not), so no
single key serves every topic: like Twist it has one table per recall base, over the
runs feasible for it (at most RB relevant documents), holding the exact fractions
j / RB, j = 0..min(RB, N) (layout ``fraction``, up to N = 32), and a closed form at
any N (:mod:`irscale.scales.measures.closed_forms`), which transforms use without a
table. The recall base is an integer (or ``(RB,)``). Its common scale (every run
feasible, RB >= N) orders runs by the relevant documents in the top N, like P@N.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from irscale.scales.measures.aliases import OtherName
from irscale.scales.measures.closed_forms import CountForm
from irscale.scales.measures.families.precision import BINARY_PARAMS, binary_reader, count_key
from irscale.scales.measures.fractional import FractionMeasure
from irscale.scales.measures.measure import MAX_N, RecallBase
from irscale.scales.measures.recall_base import PerGradeCounts


@dataclass(frozen=True, repr=False)
class Rprec(FractionMeasure):
    name = "Rprec"
    raw_any_cutoff = True          # raw values from the runs themselves: any cutoff (trec_eval's Rprec at N = depth)
    summary = "R-precision: relevant documents in the top min(RB, N) / RB (trec_eval Rprec, cut at N)"
    other_names = (
        OtherName("ir_measures", "Rprec", binary_reader(True), "R-precision of the whole ranking (pytrec_eval's "
                  "Rprec)", "Rprec", "Rprec@depth", BINARY_PARAMS, ("RPrec",), cutoff="none"),
        OtherName("trec_eval", "Rprec", binary_reader(True), "R-precision of the whole ranking", "Rprec",
                  "Rprec@depth", cutoff="none"),
    )

    def fractions_many(self, runs: np.ndarray, rb: tuple) -> tuple[np.ndarray, np.ndarray]:
        total = int(rb[0])
        num = (np.asarray(runs)[:, :min(total, self.n)] > 0).sum(axis=1).astype(np.int64)
        den = np.full(num.shape[0], total, dtype=np.int64)
        g = np.gcd(num, den)
        return num // g, den // g

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        rb = self.check_rb(rb)[0]
        return Fraction(sum(1 for r in list(run)[:min(rb, self.n)] if int(r) > 0), rb)

    @functools.cached_property
    def recall_base(self) -> PerGradeCounts:
        """Per-topic tables as every fraction measure's, and a common scale: RB = N."""
        return PerGradeCounts(str(self), self.n, self.grades, capped=False, common_counts=(self.n,))

    @property
    def layouts(self) -> tuple[str, ...]:
        return (("fraction",) if self.n <= MAX_N else ()) + ("closed",)

    @property
    def layout(self) -> str:
        return self.layouts[0]

    def closed_form(self) -> CountForm:
        """j / RB for j relevant documents in the top min(RB, N) (module docstring)."""
        return CountForm(self.n, count_key(self.n, lambda rb: Fraction(1, rb)), top_rb=True)
