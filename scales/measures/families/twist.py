"""Twist@N (tau) of "The Twist Measure for IR Evaluation" and the CRP summary indicators
of "Cumulated Relative Position" (SPEC_MEASURES sections 3 and 4) as measures with
tables: ``Twist@20``, ``Twist(grades=3)@15``, ``Twist(crossing=literal,grades=3)@15``,
``CRP(ind=rho,grades=3)@20`` (``ind``: rho, b_ratio, min, n). Both need N >= 2 RB; the
raw formulas live in :mod:`irscale.scales.measures.formulas.relative_position`. ``CRP(ind=min)`` divides by the worst
run's minimum CRP as the formula is printed; the section's test value 33/52 follows the
other reading (the worst run's CRP at the rank of the run's minimum), available as
``crp_indicators(..., crp_min_ref="at_argmin")``."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from irscale.scales.measures.formulas import relative_position as tw
from irscale.scales.measures.fractional import FractionMeasure
from irscale.scales.measures.measure import RecallBase
from irscale.scales.measures.params import GRADES, REQUIRED, Param


@dataclass(frozen=True, repr=False)
class Twist(FractionMeasure):
    name = "Twist"
    params = (Param("crossing", "choice", "crossing rule of the recovery ratio: impl (the authors' code) or "
                    "literal (as printed)", default="impl", choices=tw.CROSSINGS), GRADES)
    summary = "Twist tau = (recovery ratio + space ratio) / 2; needs N >= 2 RB; per-topic tables"
    crossing: str = "impl"
    grades: int = 1

    def fractions_many(self, runs: np.ndarray, rb: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        out = tw.twist_many(np.asarray(runs, dtype=np.int64), rb, self.crossing)
        return out["tau_num"], out["tau_den"]

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        return tw.twist(tuple(int(r) for r in run), self.check_rb(rb), self.crossing)


INDICATORS = ("rho", "b_ratio", "min", "n")


@dataclass(frozen=True, repr=False)
class CRP(FractionMeasure):
    name = "CRP"
    params = (Param("ind", "choice", "CRP indicator: rho (RB / balance rank), b_ratio (1 - b_r / b_w), min "
                    "(1 - min CRP / worst min), n (1 - CRP(N) / worst CRP(N))", choices=INDICATORS), GRADES)
    summary = "cumulated relative position indicators (not bounded to [0, 1]); needs N >= 2 RB"
    ind: str = REQUIRED
    grades: int = 1

    def fractions_many(self, runs: np.ndarray, rb: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        out = tw.crp_many(np.asarray(runs, dtype=np.int64), rb)
        total = sum(rb)
        b_r, b_w = out["b_r"], int(out["b_w"])
        if self.ind == "rho":        # RB / b_r, 0 when the CRP never balances
            num, den = np.where(b_r > 0, total, 0), np.where(b_r > 0, b_r, 1)
        elif self.ind == "b_ratio":  # 1 - b_r / b_w; minus infinity when b_r is infinite
            num, den = np.where(b_r > 0, b_w - b_r, -1), np.where(b_r > 0, b_w, 0)
        elif self.ind == "min":      # 1 - min CRP_r / min CRP_w (min CRP_w < 0: rank 1 of w is too early)
            ref = out["min_ref"]
            num, den = ref - out["min_crp"], ref
        else:                         # 1 - CRP_r(N) / CRP_w(N)
            w_n = int(out["crp_w_n"])
            if w_n == 0:
                raise tw.TwistUndefinedError(f"{self}: the worst run ends with CRP(N) = 0 for c = {rb}; "
                                             f"the indicator is undefined for this topic")
            num, den = w_n - out["crp_at_n"], np.full(len(b_r), w_n)
        num, den = np.asarray(num, np.int64), np.asarray(den, np.int64)
        sign = np.where(den < 0, -1, 1)
        num, den = num * sign, den * sign
        g = np.gcd(num, den)
        g[g == 0] = 1
        return num // g, den // g

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction | float | None:
        out = tw.crp_indicators(tuple(int(r) for r in run), self.check_rb(rb))
        return out[{"rho": "rho_crp", "b_ratio": "b_ratio", "min": "crp_min", "n": "crp_n"}[self.ind]]
