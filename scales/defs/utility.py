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
from irscale.scales.fraction_measure import GRADES, FractionMeasure
from irscale.scales.measure import REQUIRED, Param
from irscale.scales.registry import register
from irscale.scales.truncated_measure import TruncatedMeasure

EFFORT = Param("e", "prob", "effort per retrieved document, a number in (0, 1)", default=Fraction(1, 20))
PERSISTENCE = Param("p", "prob", "persistence, a number in (0, 1)")
LIMIT = 2 ** 62


def geometric(p: Fraction, n: int) -> tuple[list[int], int]:
    """(1 - p) p^(k-1) for k = 1..n as integers over one denominator: with p = a/c,
    ((c - a) a^(k-1) c^(n-k), c^n)."""
    a, c = p.numerator, p.denominator
    return [(c - a) * a ** k * c ** (n - 1 - k) for k in range(n)], c ** n


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

    def _coefs(self):
        return geometric(self.p, self.n)

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
class RBU(RBPU):
    """RBPU with ERR's cascade gain in place of rel_k (same discount and parameters)."""

    name = "RBU"
    summary = "rank-biased utility: cascade RBP with effort e per document, over truncated rankings"
    cascade = True

    def exact_value(self, run, rb=None):
        return ut.rbu(_ranking(run), self.p, self.e, self.levels)


def _ranking(run) -> tuple:
    """A ranking as a tuple of grades (padding cells -1 dropped)."""
    return tuple(int(x) for x in run if int(x) >= 0)


@register
@dataclass(frozen=True, repr=False)
class DCGU(TruncatedMeasure):
    """DCGU(e) = sum_{k<=n} (g_k/G - e) / log2(k + 1), exact as integer coefficients of the
    units 1 / (den_m log2 m) over the m (not perfect powers) with k + 1 = m^j."""

    name = "DCGU"
    params = (EFFORT, GRADES)
    summary = "discounted cumulated gain (1/log2(k+1)) with effort e per document, over truncated rankings"
    value_kind = "formal"
    e: Fraction = Fraction(1, 20)
    grades: int = 1

    def _layout(self):
        """Per rank (index of its m, j) and per m the lcm L_m of its j's."""
        ranks = [ut._perfect_power_root(k + 1) for k in range(1, self.n + 1)]
        ms = sorted({m for m, _ in ranks})
        big = {m: lcm(*[j for mm, j in ranks if mm == m]) for m in ms}
        return [(ms.index(m), j) for m, j in ranks], ms, big

    def coords(self, counts):
        _, ms, big = self._layout()
        den = self.grades * self.e.denominator
        return [f"1/({den * big[m]}*log2({m}))" for m in ms]

    def units_mp(self, counts):
        import mpmath
        _, ms, big = self._layout()
        den = self.grades * self.e.denominator
        return [mpmath.mpf(1) / (den * big[m]) * (1 if m == 2 else mpmath.log(2) / mpmath.log(m)) for m in ms]

    def formal_many(self, runs, counts):
        from irscale.enumerate.runspace import PAD
        arr = np.asarray(runs, dtype=np.int64)
        ranks, ms, big = self._layout()
        G, en, ed = self.grades, self.e.numerator, self.e.denominator
        keys = np.zeros((arr.shape[0], len(ms)), dtype=np.int64)
        for k, (col, j) in enumerate(ranks):
            inside = arr[:, k] != PAD
            keys[:, col] += np.where(inside, (np.where(inside, arr[:, k], 0) * ed - G * en) * (big[ms[col]] // j), 0)
        return keys

    def exact_value(self, run, rb=None):
        return ut.dcgu(_ranking(run), self.e, self.levels)


@register
@dataclass(frozen=True, repr=False)
class OIE(TruncatedMeasure):
    """OIE = H(S) + H(G) - beta H(S,G) (SPEC_MEASURES section 5) for a topic with per-grade
    counts (c_1..c_G) over its feasible truncated rankings; exact as integer coefficients
    of the units ln q / (beta's denominator * D) over primes q."""

    name = "OIE"
    params = (Param("D", "count", "collection size (documents), a positive integer", default=ut.OIE_D),
              Param("beta", "positive", "weight of the joint entropy, a positive number", default=ut.OIE_BETA),
              GRADES)
    summary = "observational information effectiveness over truncated rankings (per-topic tables)"
    value_kind = "formal"
    rb_dependent = True
    D: int = ut.OIE_D
    beta: Fraction = ut.OIE_BETA
    grades: int = 1

    # per-topic over truncated rankings: the recall base is the per-grade counts, not capped
    check_rb = FractionMeasure.check_rb
    table_rb = FractionMeasure.table_rb
    common_rb = FractionMeasure.common_rb

    def defined(self, counts) -> bool:
        return True

    def space_size(self, rb) -> int:
        from irscale.enumerate.runspace import feasible_space_size
        return sum(feasible_space_size(length, rb) if length else 1 for length in range(self.n + 1))

    def space_chunks(self, rb, chunk: int):
        from irscale.enumerate.runspace import PAD, feasible_run_chunks
        yield np.full((1, self.n), PAD, dtype=np.int8)
        for length in range(1, self.n + 1):
            for runs in feasible_run_chunks(length, rb, chunk):
                out = np.full((runs.shape[0], self.n), PAD, dtype=np.int8)
                out[:, :length] = runs
                yield out

    def check_runs(self, runs, rb) -> np.ndarray:
        from irscale.errors import RunError
        arr = TruncatedMeasure.check_runs(self, runs, None)
        for g in range(1, self.grades + 1):
            have = (arr == g).sum(axis=1)
            if (have > rb[g - 1]).any():
                i = int(np.argmax(have > rb[g - 1]))
                raise RunError(f"ranking {i} has {int(have[i])} documents of grade {g}, more than the topic's "
                               f"{rb[g - 1]} (per-grade counts {rb}): it cannot occur for this topic")
        return arr

    def _primes(self, counts):
        m = [sum(counts[v - 1:]) for v in range(1, self.grades + 1)]
        xs = [self.D, *range(2, self.n + 1), *[x for x in m if x > 0]]
        return sorted({q for x in xs for q in ut._factor(x)})

    def coords(self, counts):
        den = self.beta.denominator * self.D
        return [f"ln({q})/{den}" for q in self._primes(counts)]

    def units_mp(self, counts):
        import mpmath
        den = self.beta.denominator * self.D
        return [mpmath.log(q) / den for q in self._primes(counts)]

    def formal_many(self, runs, counts):
        from irscale.enumerate.runspace import PAD
        arr = np.asarray(runs, dtype=np.int64)
        primes = self._primes(counts)
        G, n = self.grades, self.n
        bn, bd = self.beta.numerator, self.beta.denominator
        m = [sum(counts[v - 1:]) for v in range(1, G + 1)]
        top = max([n, *m, 1])

        def exps(x):
            f = ut._factor(x)
            return np.array([f.get(q, 0) for q in primes], dtype=np.int64)
        e_d = exps(self.D)
        table = np.zeros((top + 1, len(primes)), dtype=np.int64)   # exponents of 1..top
        for x in range(1, top + 1):
            table[x] = exps(x)
        valid = arr != PAD
        g = np.where(valid, arr, 0)
        keys = np.zeros((arr.shape[0], len(primes)), dtype=np.int64)
        for i in range(n):                  # rank i + 1: bd log(D/i) - bn log(D/c_i)
            c_i = ((g[:, :i + 1] >= g[:, i:i + 1]) & valid[:, :i + 1]).sum(axis=1)
            term = bd * (e_d - table[i + 1])[None, :] - bn * (e_d[None, :] - table[np.maximum(c_i, 1)])
            keys += np.where(valid[:, i:i + 1], term, 0)
        for v in range(1, G + 1):           # (bd c_v - bn u_v) log(D/m_v), u_v unretrieved of grade v
            if counts[v - 1] == 0:
                continue
            u = counts[v - 1] - ((g == v) & valid).sum(axis=1)
            keys += (bd * counts[v - 1] - bn * u)[:, None] * (e_d - table[m[v - 1]])[None, :]
        return keys

    def exact_value(self, run, rb=None):
        import mpmath
        with mpmath.workdps(ut.DIGITS):
            return ut.oie_d(_ranking(run), self.check_rb(rb), self.D, self.beta) / self.D
