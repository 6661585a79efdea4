"""ERR@N: expected reciprocal rank (Chapelle et al.), sum_k (1/k) R_k prod_{j<k} (1 - R_j)
with R_k = (2^g(r_k) - 1) / 2^g(G), g the gains (default binary, R = 1/2 for a relevant
document; graded e.g. ``ERR(gains=(0,1,2,3))@10``).

Exact key: with L = lcm(1..N) and m = g(G),
key = ERR * L * 2^(m N) = sum_k (L/k) (2^g(r_k) - 1) 2^(m (N - k)) prod_{j<k} (2^m + 1 - 2^g(r_j)),
an integer computed by its own numba kernel (one 64-bit word) when every run is scored,
and through a prefix/suffix split otherwise: key(p, s) = KA[p] + prod(p) * KS[s], the
state of a prefix being its product of (2^m + 1 - 2^g) (:func:`irscale.scales.measures.split_forms.err_split_form`),
so the split enumerator builds ERR tables like those of the additive measures, with
multi-word keys where they exceed 64 bits.
"""
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from irscale.errors import MeasureError
from irscale.scales.measures.keys import LinearKey, lcm_upto
from irscale.scales.measures.measure import GAINS, Measure
from irscale.scales.measures.registry import register

#: Largest key of an ERR table, in 64-bit words.
MAX_WORDS = 4


@dataclass
class ERRKey(LinearKey):
    """LinearKey computed by :func:`irscale.enumerate.kernels.err_keys`."""

    factors: list = None     # 2^m + 1 - 2^g per degree

    def kernel_arrays(self):
        if self.words > 1:
            raise MeasureError("ERR keys beyond 64 bits are scored through the prefix/suffix split only "
                               "(tables: --method split or auto); this path needs one 64-bit word")
        arr = np.array(self.weights + [self.factors], dtype=np.uint64)
        return self.kernel, 1, arr

    def key_python(self, run) -> int:
        key, prod = 0, 1
        for k, r in enumerate(run):
            key += self.weights[k][int(r)] * prod
            prod *= self.factors[int(r)]
        return key


@register
@dataclass(frozen=True, repr=False)
class ERR(Measure):
    name = "ERR"
    params = (GAINS,)
    summary = "expected reciprocal rank, R = (2^g - 1)/2^g(G) (graded with gains)"
    gains: tuple = (0, 1)

    def key_spec(self):
        from irscale.enumerate.kernels import err_keys
        n, g = self.n, self.gains
        m = g[-1]
        lcm = lcm_upto(n)
        weights = [[(lcm // k) * (2 ** gain - 1) * 2 ** (m * (n - k)) for gain in g] for k in range(1, n + 1)]
        factors = [2 ** m + 1 - 2 ** gain for gain in g]
        max_key = lcm * 2 ** (m * n)
        if max(factors) >= 2 ** 32 or max_key.bit_length() > 64 * MAX_WORDS:
            raise MeasureError(f"{self}: exact ERR keys are limited to top gains below 32 and {64 * MAX_WORDS}-bit "
                               f"keys")
        return ERRKey(kernel=err_keys, weights=weights, max_key=max_key, ordered=True,
                      scale=lambda rb: Fraction(1, max_key), factors=factors)
