"""RR@N: reciprocal rank of the first relevant document in the top N (0 if none).

Graded: ``RR(gains=(0,1,2),rel=2)@10`` counts a document as relevant when its grade is at
least ``rel`` (default 1); only the number of grades of ``gains`` matters.

The key is N + 1 - (rank of the first relevant document), 0 when there is none (kernel
``rr``); value = 1 / (N + 1 - key). Keys are in value order but not proportional to the
values, so the key kind maps values to keys itself and knows its smallest gap,
1/(N-1) - 1/N (values 0, 1/N, 1/(N-1), ..., 1/2, 1).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from irscale.enumerate.splitform import EMPTY_KEYS, SplitForm, padded_parts
from irscale.errors import MeasureError
from irscale.scales.measures.aliases import OtherName, Request
from irscale.scales.measures.closed_forms import FirstRelevantForm
from irscale.scales.measures.families.precision import BINARY_PARAMS, JUDGED_ONLY
from irscale.scales.measures.groups import Grouping, first_relevant_group
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import KeySpec, U
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.measures.params import GAINS, Param


@dataclass(kw_only=True)
class ReciprocalRankKey(KeySpec):
    """RR: key = N + 1 - first relevant rank (0 if none); ``max_key`` is N. A document is
    relevant when its degree is at least ``weights[0][0]`` (1 when ``weights`` is empty)."""

    kernel: object = f"{__name__}_kernels:rr_keys"
    split_enumeration: ClassVar[bool] = True

    @property
    def threshold(self) -> int:
        return self.weights[0][0] if self.weights else 1

    def key_python(self, run: Sequence[int]) -> int:
        for k, r in enumerate(run):
            if r >= self.threshold:
                return len(run) - k
        return 0

    def float_values(self, keys: np.ndarray, rb: RecallBase) -> np.ndarray:
        n = self.max_key
        keys = np.asarray(keys).reshape(-1).astype(np.int64)
        out = np.zeros(keys.shape[0], dtype=np.float64)
        nz = keys > 0
        out[nz] = 1.0 / (n + 1 - keys[nz]).astype(np.float64)
        return out

    def exact_value(self, key: int, rb: RecallBase) -> Fraction:
        return Fraction(0) if key == 0 else Fraction(1, self.max_key + 1 - key)

    def error_bound(self, rb: RecallBase) -> float:
        return U

    def raw_of_values(self, x: np.ndarray, rb: RecallBase) -> tuple[np.ndarray, float]:
        n = self.max_key
        with np.errstate(divide="ignore"):
            raw = np.where(x > 0, n + 1 - 1.0 / np.where(x > 0, x, 1.0), 0.0)
        return raw, float(n * n)  # d raw / d x = 1/x^2 <= N^2 on (1/N, 1]

    def certified_gap(self, key_lo: int, key_hi: int, rb: RecallBase) -> tuple[float, str]:
        n = self.max_key
        gap = Fraction(1) if n == 1 else Fraction(1, n - 1) - Fraction(1, n)
        return float(gap), str(gap)

    def split_form(self, levels: int, n: int, h: int | None = None, stratified: bool = False,
                   label: str = "") -> SplitForm:
        """A = key of the prefix; B[0] = key of the suffix (no relevant document in the
        prefix), B[1] = 0 (the prefix's first relevant document decides)."""
        h = n // 2 if h is None else h
        pre, suf = padded_parts(levels, n, h)
        ka = self.keys_of_runs(pre)[:, 0].astype(np.float64)
        kb = self.keys_of_runs(suf)[:, 0].astype(np.float64)
        state = (ka > 0).astype(np.int64)
        B = np.stack([kb, np.zeros_like(kb)])
        return SplitForm(n, levels, h, ka, state, B, True, 0.0, EMPTY_KEYS, EMPTY_KEYS, True, stratified, label)


def _read_other(cls: type, req: Request) -> Measure:
    """ir_measures' RR(rel=r)@k: the first document of level >= r, i.e. grades 0..r with
    rel = r (levels above r fold into r); trec_eval's recip_rank: the whole ranking."""
    n = req.n()
    if req.tool == "trec_eval":
        return cls(n=n)
    req.default("judged_only", JUDGED_ONLY)
    rel = req.threshold()
    return cls(n=n) if rel == 1 else cls(n=n, gains=tuple(range(rel + 1)), rel=rel)


@dataclass(frozen=True, repr=False)
class RR(KeyMeasure):
    name = "RR"
    summary = "reciprocal rank of the first relevant document (graded: grade >= rel)"
    params = (GAINS, Param("rel", "grade", "lowest grade counted as relevant", default=1))
    gains: tuple = (0, 1)
    rel: int = 1
    binary_elsewhere = True          # trec_eval's recip_rank, ir_measures' RR: levels >= rel relevant
    other_names = (
        OtherName("ir_measures", "RR", _read_other, "reciprocal rank of the first document of level >= rel in the top "
                  "k, without k in the whole ranking (RR@k: MS MARCO's script, which breaks score ties by ascending "
                  "docno where trec_eval and irscale take descending docno; RR: pytrec_eval's recip_rank)", "RR@10",
                  "RR@10; RR(rel=2)@10: RR(gains=(0,1,2),rel=2)@10", BINARY_PARAMS, ("MRR",), cutoff="optional"),
        OtherName("trec_eval", "recip_rank", _read_other, "reciprocal rank in the whole ranking", "recip_rank",
                  "RR@depth", cutoff="none"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.rel > self.levels - 1:
            raise MeasureError(f"RR: rel = {self.rel} is above the top grade {self.levels - 1} of gains {self.gains}")

    def key_spec(self) -> ReciprocalRankKey:
        weights = [] if self.rel == 1 else [[self.rel]]
        return ReciprocalRankKey(weights=weights, max_key=self.n, ordered=True)

    def closed_form(self) -> FirstRelevantForm:
        """0 and 1/k for the first relevant document at rank k (module docstring)."""
        return FirstRelevantForm(self.n, self.spec, levels=self.levels, rel=self.rel)

    def rank_grouping(self) -> Grouping | str:
        """Binary RR: one group, the rank of the first relevant document (its key)."""
        if self.levels != 2:
            return "graded RR is not counted by rank oracles (its table has N + 1 values: build it)"
        return Grouping((first_relevant_group(self.n),), "one group: the key, N + 1 minus the rank of the first "
                        "relevant document", True)
