"""AP@N: average precision cut at N, as trec_eval's ``map_cut``.

AP = (1/RB) * sum_k r_k * (sum_{j<=k} r_j) / k. The exact key is the integer
``L * sum_k r_k * (relevant in top k) / k`` with L = lcm(1..N), so AP = key / (L * RB),
scored by the family's kernel (``average_precision_kernels.ap_keys``).

Split form: the prefix contributes its own key A and its number of relevant documents
c (the state); a suffix with relevant ranks k > h contributes
sum_k (c + relevant in the suffix up to k) * L/k = c * W + T (W = sum of L/k over its
relevant ranks, T = its own cumulated key), so B[c] = c * W + T.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from irscale.enumerate.splitform import EMPTY_KEYS, EXACT_LIMIT, SplitForm, padded_parts
from irscale.errors import MeasureError
from irscale.scales.measures.aliases import OtherName
from irscale.scales.measures.families.precision import BINARY_PARAMS, binary_reader
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import LinearKey, lcm_upto


@dataclass(kw_only=True)
class APKey(LinearKey):
    """AP's cumulated-precision key (weights[k][1] = L/(k+1))."""

    kernel: object = f"{__name__}_kernels:ap_keys"
    split_enumeration: ClassVar[bool] = True

    def key_python(self, run: Sequence[int]) -> int:
        seen = total = 0
        for k, r in enumerate(run):
            if r > 0:
                seen += 1
                total += seen * self.weights[k][1]
        return total

    def split_form(self, levels: int, n: int, h: int | None = None, stratified: bool = False,
                   label: str = "") -> SplitForm:
        if self.max_key >= EXACT_LIMIT:
            raise MeasureError(f"{label}: AP key too large for the split form")
        h = n // 2 if h is None else h
        pre, suf = padded_parts(levels, n, h)
        w = np.array([row[1] for row in self.weights], dtype=np.int64)   # L / k
        pr = (pre[:, :h] > 0).astype(np.int64)
        A = (pr * np.cumsum(pr, axis=1) * w[:h]).sum(axis=1).astype(np.float64)
        state = pr.sum(axis=1)
        sr = (suf[:, h:] > 0).astype(np.int64)
        W = (sr * w[h:]).sum(axis=1)
        T = (sr * np.cumsum(sr, axis=1) * w[h:]).sum(axis=1)
        B = np.stack([(c * W + T).astype(np.float64) for c in range(h + 1)])
        return SplitForm(n, levels, h, A, state, B, True, 0.0, EMPTY_KEYS, EMPTY_KEYS, True, stratified, label)


@dataclass(frozen=True, repr=False)
class AP(KeyMeasure):
    name = "AP"
    rb_dependent = True
    summary = "average precision (trec_eval map_cut)"
    other_names = (
        OtherName("ir_measures", "AP", binary_reader(True), "average precision of the top k, without k of the whole "
                  "ranking (pytrec_eval's map_cut_k, map)", "AP@10", "AP@10 (AP: AP@depth)", BINARY_PARAMS, ("MAP",),
                  cutoff="optional"),
        OtherName("trec_eval", "map_cut", binary_reader(False), "average precision of the top k", "map_cut_10",
                  "AP@10"),
        OtherName("trec_eval", "map", binary_reader(True), "average precision of the whole ranking", "map",
                  "AP@depth", cutoff="none"),
    )

    def key_spec(self) -> APKey:
        lcm = lcm_upto(self.n)
        weights = [[0, lcm // k] for k in range(1, self.n + 1)]
        return APKey(weights=weights, max_key=lcm * self.n, ordered=True, scale=lambda rb: Fraction(1, lcm * rb))
