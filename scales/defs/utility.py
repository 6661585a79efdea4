"""The utility family with effort over truncated rankings (SPEC_MEASURES section 5):
``RBPU(p=0.8)@10``, ``FlatU@10``, ``ERRU@10``, ``RBU(p=0.8)@10`` (effort ``e``, default
1/20; ``grades=G`` for graded rankings). Each is a sum over the ranking's own ranks
k <= n of a discount times (gain_k - e): RBPU and FlatU with gain rel_k = g/G, ERRU and
RBU with ERR's cascade gain rel_k prod_{j<k}(1 - rel_j), rel = (2^g - 1)/2^G.

Exact keys: with p = a/c and e = e_n/e_d every term times a common denominator D is an
integer (numpy int64; measures whose keys could exceed 2^62 at this N are refused), so
every value is the exact fraction K/D (:mod:`irscale.scales.fraction_table`). The
scalar references are :mod:`irscale.scales.utility`.
"""
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import numpy as np

from irscale.errors import MeasureError
from irscale.scales import utility as ut
from irscale.scales.fraction_measure import GRADES
from irscale.scales.measure import REQUIRED, Param
from irscale.scales.registry import register
from irscale.scales.truncated_measure import TruncatedMeasure

EFFORT = Param("e", "prob", "effort per retrieved document, a number in (0, 1)", default=Fraction(1, 20))
PERSISTENCE = Param("p", "prob", "persistence, a number in (0, 1)")
LIMIT = 2 ** 62


class _Utility(TruncatedMeasure):
    """Shared exact scoring: ``value = sum_{k<=n} coef_k * (gain_k - e)``."""

    cascade = False

    def _coefs(self) -> tuple[list[int], int]:
        """Integer discount numerators per rank 1..N and their common denominator."""
        raise NotImplementedError

    def _plan(self):
        """(per-rank int multipliers M_k, per-grade gain numerators, per-grade stay
        numerators, gain denominator per rank, D) such that term_k * D =
        M_k * (gain numerator * e_d * scale_k - e_n * E_k) (see fractions_many)."""
        G, n = self.grades, self.n
        e = self.e
        coefs, cden = self._coefs()
        return coefs, cden, G, n, e.numerator, e.denominator

    def fractions_many(self, runs, counts):
        from irscale.enumerate.runspace import PAD
        arr = np.asarray(runs, dtype=np.int64)
        coefs, cden, G, n, en, ed = self._plan()
        valid = arr != PAD
        g = np.where(valid, arr, 0)
        if not self.cascade:             # gain g/G: term_k * (cden * G * ed) = coef_k * (g * ed - G * en)
            den = cden * G * ed
            weights = [[c * (x * ed - G * en) for x in range(G + 1)] for c in coefs]
        else:                            # gain (2^g - 1) prod (2^G - 2^h + 1) / 2^(G k)
            den = cden * 2 ** (G * n) * ed
            weights = None
        bound = (sum(abs(c) for c in coefs) * (2 ** (G * n) if self.cascade else G) * ed * 2
                 + sum(abs(c) for c in coefs) * en * (2 ** (G * n) if self.cascade else G))
        if bound >= LIMIT or den >= LIMIT:
            raise MeasureError(f"{self}: exact keys exceed 62 bits at N = {self.n}; use a smaller N")
        total = np.zeros(arr.shape[0], dtype=np.int64)
        if not self.cascade:
            w = np.array(weights, dtype=np.int64)                # (N, G + 1)
            for k in range(n):
                total += np.where(valid[:, k], w[k][g[:, k]], 0)
        else:
            stay = np.ones(arr.shape[0], dtype=np.int64)         # prod_{j<k} (2^G - 2^g_j + 1)
            gain = np.array([2 ** x - 1 for x in range(G + 1)], dtype=np.int64)
            keep = np.array([2 ** G - 2 ** x + 1 for x in range(G + 1)], dtype=np.int64)
            for k in range(n):
                scale = 2 ** (G * (n - 1 - k))                   # 2^(G N) / 2^(G (k + 1))
                term = coefs[k] * (gain[g[:, k]] * stay * scale * ed - en * 2 ** (G * n))
                total += np.where(valid[:, k], term, 0)
                stay = stay * keep[g[:, k]]
        d = np.full(arr.shape[0], den, dtype=np.int64)
        common = np.gcd(total, d)
        return total // common, d // common


@register
@dataclass(frozen=True, repr=False)
class RBPU(_Utility):
    name = "RBPU"
    params = (PERSISTENCE, EFFORT, GRADES)
    summary = "rank-biased precision with effort e per document, over truncated rankings"
    p: Fraction = REQUIRED
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _coefs(self):        # (1 - p) p^(k-1) = (c - a) a^(k-1) c^(N-k) / c^N
        a, c, n = self.p.numerator, self.p.denominator, self.n
        return [(c - a) * a ** k * c ** (n - 1 - k) for k in range(n)], c ** n

    def exact_value(self, run, rb=None):
        return ut.rbpu(_ranking(run), self.p, self.e, self.levels)


@register
@dataclass(frozen=True, repr=False)
class FlatU(_Utility):
    name = "FlatU"
    params = (EFFORT, GRADES)
    summary = "total gain minus effort e per document, over truncated rankings"
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _coefs(self):
        return [1] * self.n, 1

    def exact_value(self, run, rb=None):
        return ut.flatu(_ranking(run), self.e, self.levels)


@register
@dataclass(frozen=True, repr=False)
class ERRU(_Utility):
    name = "ERRU"
    params = (EFFORT, GRADES)
    summary = "expected reciprocal rank with effort e per document, over truncated rankings"
    cascade = True
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _coefs(self):        # 1/k = (L/k) / L
        big = lcm(*range(1, self.n + 1))
        return [big // k for k in range(1, self.n + 1)], big

    def exact_value(self, run, rb=None):
        return ut.erru(_ranking(run), self.e, self.levels)


@register
@dataclass(frozen=True, repr=False)
class RBU(_Utility):
    name = "RBU"
    params = (PERSISTENCE, EFFORT, GRADES)
    summary = "rank-biased utility: cascade RBP with effort e per document, over truncated rankings"
    cascade = True
    p: Fraction = REQUIRED
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _coefs(self):
        a, c, n = self.p.numerator, self.p.denominator, self.n
        return [(c - a) * a ** k * c ** (n - 1 - k) for k in range(n)], c ** n

    def exact_value(self, run, rb=None):
        return ut.rbu(_ranking(run), self.p, self.e, self.levels)


def _ranking(run) -> tuple:
    """A ranking as a tuple of grades (padding cells -1 dropped)."""
    return tuple(int(x) for x in run if int(x) >= 0)
