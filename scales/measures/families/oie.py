"""OIE@N: observational information effectiveness over truncated rankings
(SPEC_MEASURES section 5): OIE = H(S) + H(G) - beta H(S,G) for a topic with per-grade
counts (c_1..c_G), collection size ``D`` (default 20000) and ``beta`` (default 1.05),
natural logarithms. One table per topic, over its feasible truncated rankings; values are
exact as integer coefficients of the units ln q / (beta's denominator * D) over primes q
(formal keys, layout ``formal``). The scalar reference is
:func:`irscale.scales.measures.formulas.utilities.oie_d`.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from irscale.enumerate.truncated import PAD
from irscale.errors import MeasureError
from irscale.scales.measures.formulas import utilities as ut
from irscale.scales.measures.fractional import FormalValues
from irscale.scales.measures.measure import RecallBase
from irscale.scales.measures.params import GRADES, Param
from irscale.scales.measures.truncated import TruncatedMeasure

#: Exact keys are kept below this bound (int64 arithmetic).
LIMIT = 2 ** 62


def _ranking(run) -> tuple:
    """A ranking as a tuple of grades (padding cells -1 dropped)."""
    return tuple(int(x) for x in run if int(x) >= 0)


@dataclass(frozen=True, repr=False)
class OIE(FormalValues, TruncatedMeasure):
    """OIE = H(S) + H(G) - beta H(S,G) (SPEC_MEASURES section 5) for a topic with per-grade
    counts (c_1..c_G) over its feasible truncated rankings; exact as integer coefficients
    of the units ln q / (beta's denominator * D) over primes q."""

    name = "OIE"
    params = (Param("D", "count", "collection size (documents), a positive integer", default=ut.OIE_D),
              Param("beta", "positive", "weight of the joint entropy, a positive number", default=ut.OIE_BETA),
              GRADES)
    summary = "observational information effectiveness over truncated rankings (per-topic tables)"
    rb_dependent = True
    D: int = ut.OIE_D
    beta: Fraction = ut.OIE_BETA
    grades: int = 1

    def _primes(self, rb):
        m = [sum(rb[v - 1:]) for v in range(1, self.grades + 1)]
        xs = [self.D, *range(2, self.n + 1), *[x for x in m if x > 0]]
        return sorted({q for x in xs for q in ut._factor(x)})

    def coords(self, rb: tuple[int, ...] | None) -> list[str]:
        den = self.beta.denominator * self.D
        return [f"ln({q})/{den}" for q in self._primes(rb)]

    def units_mp(self, rb: tuple[int, ...] | None) -> list[mpmath.mpf]:
        den = self.beta.denominator * self.D
        return [mpmath.log(q) / den for q in self._primes(rb)]

    def formal_many(self, runs: np.ndarray, rb: tuple[int, ...] | None) -> np.ndarray:
        arr = np.asarray(runs, dtype=np.int64)
        primes = self._primes(rb)
        G, n = self.grades, self.n
        bn, bd = self.beta.numerator, self.beta.denominator
        m = [sum(rb[v - 1:]) for v in range(1, G + 1)]

        def exps(x):
            f = ut._factor(x)
            return np.array([f.get(q, 0) for q in primes], dtype=np.int64)
        e_d = exps(self.D)
        table = np.zeros((n + 1, len(primes)), dtype=np.int64)     # exponents of 1..N (ranks, c_i)
        for x in range(1, n + 1):
            table[x] = exps(x)
        e_m = {x: exps(x) for x in m if x > 0}
        top = max(int(np.abs(e_d[None, :] - table[1:]).max(initial=0)),
                  max((int(np.abs(e_d - e).max(initial=0)) for e in e_m.values()), default=0))
        if (bd + bn) * (n + 2 * sum(rb)) * max(top, 1) >= LIMIT:
            raise MeasureError(f"{self}: exact keys exceed 62 bits (beta = {self.beta}); use a simpler beta")
        valid = arr != PAD
        g = np.where(valid, arr, 0)
        keys = np.zeros((arr.shape[0], len(primes)), dtype=np.int64)
        for i in range(n):                  # rank i + 1: bd log(D/i) - bn log(D/c_i)
            c_i = ((g[:, :i + 1] >= g[:, i:i + 1]) & valid[:, :i + 1]).sum(axis=1)
            term = bd * (e_d - table[i + 1])[None, :] - bn * (e_d[None, :] - table[np.maximum(c_i, 1)])
            keys += np.where(valid[:, i:i + 1], term, 0)
        for v in range(1, G + 1):           # (bd c_v - bn u_v) log(D/m_v), u_v unretrieved of grade v
            if rb[v - 1] == 0:
                continue
            u = rb[v - 1] - ((g == v) & valid).sum(axis=1)
            keys += (bd * rb[v - 1] - bn * u)[:, None] * (e_d - e_m[m[v - 1]])[None, :]
        return keys

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> mpmath.mpf:
        with mpmath.workdps(ut.DIGITS):
            return ut.oie_d(_ranking(run), self.check_rb(rb), self.D, self.beta) / self.D
