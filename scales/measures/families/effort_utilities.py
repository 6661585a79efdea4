"""The utility family with effort over truncated rankings (SPEC_MEASURES section 5):
``RBPU(p=0.8)@10``, ``FlatU@10``, ``ERRU@10``, ``RBU(p=0.8)@10`` (effort ``e``, default
1/20; ``grades=G`` for graded rankings). Each is a sum over the ranking's own ranks
k <= n of a discount times (gain_k - e): RBPU and FlatU with gain rel_k = g/G, ERRU and
RBU with ERR's cascade gain rel_k prod_{j<k}(1 - rel_j), rel = (2^g - 1)/2^G.

Exact keys: with p = a/c and e = e_n/e_d every term times a common denominator D is an
integer K, accumulated in 30-bit limbs: values are exact fractions K/D
(:mod:`irscale.scales.tables.fraction`) while K and D fit 62 bits, and formal multi-limb
keys with units 2^(30 j)/D beyond (:mod:`irscale.scales.tables.formal`). DCGU and OIE are
formal (coefficients of 1/log2 m, ln q); parameters whose keys would exceed 62 bits are
refused. The scalar references are :mod:`irscale.scales.measures.formulas.utilities`;
OIE is :mod:`irscale.scales.measures.families.oie`.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from math import lcm

import mpmath
import numpy as np

from irscale.enumerate.truncated import PAD
from irscale.errors import MeasureError
from irscale.scales.measures.formulas import utilities as ut
from irscale.scales.measures.fractional import FormalValues, FractionMeasure
from irscale.scales.measures.keys import U
from irscale.scales.measures.measure import RecallBase
from irscale.scales.measures.params import GRADES, PERSISTENCE, REQUIRED, Param
from irscale.scales.measures.truncated import TruncatedMeasure

EFFORT = Param("e", "prob", "effort per retrieved document, a number in (0, 1)", default=Fraction(1, 20))
#: Exact keys and denominators are kept below this bound (int64 arithmetic).
LIMIT = 2 ** 62


def geometric(p: Fraction, n: int) -> tuple[list[int], int]:
    """(1 - p) p^(k-1) for k = 1..n as integers over one denominator: with p = a/c,
    ((c - a) a^(k-1) c^(n-k), c^n)."""
    a, c = p.numerator, p.denominator
    return [(c - a) * a ** k * c ** (n - 1 - k) for k in range(n)], c ** n


#: Bits per limb of the exact multi-limb keys (products of two limbs stay below 2^60).
LIMB = 30


def _limbs(x: int, count: int) -> list[int]:
    """A non-negative integer as ``count`` little-endian LIMB-bit limbs."""
    return [(x >> (LIMB * j)) & ((1 << LIMB) - 1) for j in range(count)]


def _normalise(acc: np.ndarray) -> np.ndarray:
    """Carry propagation: limbs 0..L-2 back to [0, 2^LIMB), the top limb signed."""
    for j in range(acc.shape[1] - 1):
        carry = acc[:, j] >> LIMB               # floor division: negative sums borrow
        acc[:, j] -= carry << LIMB
        acc[:, j + 1] += carry
    return acc


@functools.lru_cache(maxsize=256)
def _cached_plan(measure) -> tuple:
    return measure._compute_plan()


class _Utility(FormalValues, TruncatedMeasure):
    """Shared exact scoring: ``value = sum_{k<=n} coef_k * (gain_k - e)``.

    Every term times the common denominator D is an integer; the per-run sum K is
    accumulated exactly in LIMB-bit limbs (numpy int64). Values are the fractions K / D
    (tables of layout ``fraction``) while K and D fit 62 bits, and beyond that the limbs
    themselves are formal keys with units 2^(LIMB j) / D (layout ``formal``), ordered and
    certified like the other formal tables."""

    cascade = False

    def _coefs(self) -> tuple[list[int], int]:
        """Integer discount numerators per rank 1..N and their common denominator."""
        raise NotImplementedError

    def _plan(self):
        """(den D, per rank and grade the constant added (non-cascade) or multiplied by the
        run's stay product (cascade), per rank the constant subtracted (cascade), bound on
        |K|, number of limbs); computed once per measure."""
        return _cached_plan(self)

    def _compute_plan(self):
        G, n, en, ed = self.grades, self.n, self.e.numerator, self.e.denominator
        coefs, cden = self._coefs()
        if not self.cascade:             # gain g/G: term_k * (cden * G * ed) = coef_k * (g * ed - G * en)
            den = cden * G * ed
            add = [[c * (x * ed - G * en) for x in range(G + 1)] for c in coefs]
            mul, sub = None, None
            bound = sum(max(abs(v) for v in row) for row in add)
        else:                            # gain (2^g - 1) prod_{j<k} (2^G - 2^h_j + 1) / 2^(G k)
            den = cden * 2 ** (G * n) * ed
            add = None
            mul = [[c * (2 ** x - 1) * 2 ** (G * (n - 1 - k)) * ed for x in range(G + 1)]
                   for k, c in enumerate(coefs)]
            sub = [c * en * 2 ** (G * n) for c in coefs]
            bound = sum(max(row) * 2 ** (G * k) + s for k, (row, s) in enumerate(zip(mul, sub)))
        return den, add, mul, sub, bound, bound.bit_length() // LIMB + 2

    @property
    def layout(self) -> str:
        den, _, _, _, bound, _ = self._plan()
        return "fraction" if bound < LIMIT and den < LIMIT else "formal"

    def values_many(self, runs, rb):
        if self.layout == "fraction":
            return FractionMeasure.values_many(self, runs, rb)
        return FormalValues.values_many(self, runs, rb)

    def _limb_keys(self, runs) -> np.ndarray:
        """K of every ranking as limbs (int64 (m, L), little-endian, normalised)."""
        arr = np.asarray(runs, dtype=np.int64)
        den, add, mul, sub, bound, L = self._plan()
        G, n = self.grades, self.n
        if self.cascade and G * (n - 1) > 60:
            raise MeasureError(f"{self}: the cascade products exceed 60 bits at N = {n}; use a smaller N")
        valid = arr != PAD
        g = np.where(valid, arr, 0)
        acc = np.zeros((arr.shape[0], L), dtype=np.int64)
        stay = np.ones(arr.shape[0], dtype=np.int64)         # prod_{j<k} (2^G - 2^g_j + 1)
        keep = np.array([2 ** G - 2 ** x + 1 for x in range(G + 1)], dtype=np.int64)
        mask = (1 << LIMB) - 1
        for k in range(n):
            inside = valid[:, k]
            if not self.cascade:
                for x in range(G + 1):
                    sel = inside & (g[:, k] == x)
                    v = add[k][x]
                    sign = 1 if v >= 0 else -1
                    acc[sel] += sign * np.array(_limbs(abs(v), L), dtype=np.int64)
            else:
                low, high = stay & mask, stay >> LIMB           # stay < 2^60: two limbs
                for x in range(G + 1):
                    sel = inside & (g[:, k] == x)
                    if not sel.any():
                        continue
                    c = _limbs(mul[k][x], L)
                    for j in range(L - 1):
                        if c[j]:
                            acc[sel, j] += low[sel] * c[j]
                            acc[sel, j + 1] += high[sel] * c[j]
                acc[inside] -= np.array(_limbs(sub[k], L), dtype=np.int64)
                stay = np.where(inside, stay * keep[g[:, k]], stay)
            _normalise(acc)
        return acc

    def fractions_many(self, runs, rb):
        den = self._plan()[0]
        if self.layout != "fraction":
            raise MeasureError(f"{self}: exact keys exceed 62 bits; its values are formal multi-limb keys")
        acc = self._limb_keys(runs)
        total = np.zeros(acc.shape[0], dtype=np.int64)
        for j in range(acc.shape[1] - 1, -1, -1):
            total = (total << LIMB) + acc[:, j]
        d = np.full(acc.shape[0], den, dtype=np.int64)
        common = np.gcd(total, d)
        return total // common, d // common

    # formal keys beyond 62 bits: K = sum_j limb_j 2^(LIMB j), value = K / D
    def formal_many(self, runs, rb):
        return self._limb_keys(runs)

    def coords(self, rb):
        den, *_, L = self._plan()
        return [f"2^{LIMB * j}/{den}" for j in range(L)]

    def units_mp(self, rb):
        den, *_, L = self._plan()
        return [mpmath.mpf(2) ** (LIMB * j) / den for j in range(L)]

    def formal_floats(self, keys, rb):
        """K / D with K summed from the top limb down (exact while below 2^53, then
        rounded once per limb: no cancellation between limbs)."""
        den = self._plan()[0]
        total = np.zeros(keys.shape[0], dtype=np.float64)
        for j in range(keys.shape[1] - 1, -1, -1):
            total = total * float(1 << LIMB) + keys[:, j]
        return total / float(den)

    def formal_error_bound(self, keys, rb):
        if keys.size == 0:
            return 0.0
        return float(2 * (keys.shape[1] + 3) * U * np.abs(self.formal_floats(keys, rb)).max())


@dataclass(frozen=True, repr=False)
class RBPU(_Utility):
    name = "RBPU"
    params = (PERSISTENCE, EFFORT, GRADES)
    summary = "rank-biased precision with effort e per document, over truncated rankings"
    p: Fraction = REQUIRED
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _coefs(self):
        return geometric(self.p, self.n)

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        return ut.rbpu(_ranking(run), self.p, self.e, self.levels)


@dataclass(frozen=True, repr=False)
class FlatU(_Utility):
    name = "FlatU"
    params = (EFFORT, GRADES)
    summary = "total gain minus effort e per document, over truncated rankings"
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _coefs(self):
        return [1] * self.n, 1

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        return ut.flatu(_ranking(run), self.e, self.levels)


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

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        return ut.erru(_ranking(run), self.e, self.levels)


@dataclass(frozen=True, repr=False)
class RBU(RBPU):
    """RBPU with ERR's cascade gain in place of rel_k (same discount and parameters)."""

    name = "RBU"
    summary = "rank-biased utility: cascade RBP with effort e per document, over truncated rankings"
    cascade = True

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> Fraction:
        return ut.rbu(_ranking(run), self.p, self.e, self.levels)


def _ranking(run) -> tuple:
    """A ranking as a tuple of grades (padding cells -1 dropped)."""
    return tuple(int(x) for x in run if int(x) >= 0)


@dataclass(frozen=True, repr=False)
class DCGU(FormalValues, TruncatedMeasure):
    """DCGU(e) = sum_{k<=n} (g_k/G - e) / log2(k + 1), exact as integer coefficients of the
    units 1 / (den_m log2 m) over the m (not perfect powers) with k + 1 = m^j."""

    name = "DCGU"
    params = (EFFORT, GRADES)
    summary = "discounted cumulated gain (1/log2(k+1)) with effort e per document, over truncated rankings"
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _layout(self):
        """Per rank (index of its m, j) and per m the lcm L_m of its j's."""
        ranks = [ut._perfect_power_root(k + 1) for k in range(1, self.n + 1)]
        ms = sorted({m for m, _ in ranks})
        big = {m: lcm(*[j for mm, j in ranks if mm == m]) for m in ms}
        return [(ms.index(m), j) for m, j in ranks], ms, big

    def coords(self, rb: tuple[int, ...] | None) -> list[str]:
        _, ms, big = self._layout()
        den = self.grades * self.e.denominator
        return [f"1/({den * big[m]}*log2({m}))" for m in ms]

    def units_mp(self, rb: tuple[int, ...] | None) -> list[mpmath.mpf]:
        _, ms, big = self._layout()
        den = self.grades * self.e.denominator
        return [mpmath.mpf(1) / (den * big[m]) * (1 if m == 2 else mpmath.log(2) / mpmath.log(m)) for m in ms]

    def formal_many(self, runs: np.ndarray, rb: tuple[int, ...] | None) -> np.ndarray:
        arr = np.asarray(runs, dtype=np.int64)
        ranks, ms, big = self._layout()
        G, en, ed = self.grades, self.e.numerator, self.e.denominator
        if self.n * G * max(ed, en) * max(big.values()) >= LIMIT:
            raise MeasureError(f"{self}: exact keys exceed 62 bits (e = {self.e}); use a simpler e")
        keys = np.zeros((arr.shape[0], len(ms)), dtype=np.int64)
        for k, (col, j) in enumerate(ranks):
            inside = arr[:, k] != PAD
            keys[:, col] += np.where(inside, (np.where(inside, arr[:, k], 0) * ed - G * en) * (big[ms[col]] // j), 0)
        return keys

    def exact_value(self, run: Sequence[int] | np.ndarray, rb: RecallBase = None) -> mpmath.mpf:
        return ut.dcgu(_ranking(run), self.e, self.levels)
