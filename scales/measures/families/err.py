"""ERR@N: expected reciprocal rank (Chapelle et al.), sum_k (1/k) R_k prod_{j<k} (1 - R_j)
with R_k = (2^g(r_k) - 1) / 2^m, g the gains (default binary, R = 1/2 for a relevant
document; graded e.g. ``ERR(gains=(0,1,2,3))@10``) and m = ``max_grade``, by default the
top gain g(G) (the top grade stops the user for certain, R = 1 - 2^-g(G)).

``max_grade`` fixes the normalisation instead: gdeval (the TREC Web track's script, which
ir_measures runs for ``ERR@k``) has ``MAX_JUDGMENT = 4``, R = (2^g - 1)/16 whatever the
qrels' levels, and refuses levels above 4; ir_measures' ``ERR@20`` on qrels with levels
0..T is ``ERR(gains=(0,1,..,T),max_grade=4)@20`` (T <= 4). A ``max_grade`` below g(G)
would make R exceed 1 and is refused; ``max_grade = g(G)`` is the default and is dropped
from the name.

Exact key: with L = lcm(1..N) and m = max_grade (default g(G)),
key = ERR * L * 2^(m N) = sum_k (L/k) (2^g(r_k) - 1) 2^(m (N - k)) prod_{j<k} (2^m + 1 - 2^g(r_j)),
an integer computed by its own numba kernel (``err``, one 64-bit word) when every run is
scored, and through a prefix/suffix split otherwise: key(p, s) = KA[p] + prod(p) * KS[s],
the state of a prefix being its product of (2^m + 1 - 2^g), so the split enumerator builds
ERR tables like those of the additive measures, with multi-word keys where they exceed
64 bits.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from irscale.enumerate.runspace import all_runs
from irscale.enumerate.splitform import EMPTY_KEYS, EXACT_LIMIT, SplitForm
from irscale.enumerate.words import ints_to_words, mul_small, words_to_float
from irscale.errors import MeasureError
from irscale.scales.measures.aliases import OtherName, Request
from irscale.scales.measures.families.ndcg_trec import GDEVAL_MAX_LEVEL
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import METHODS, LinearKey, U, lcm_upto
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.params import GAINS, Param, format_value

#: Largest key of an ERR table, in 64-bit words.
MAX_WORDS = 4
#: Largest run space scored run by run when the method is chosen automatically.
GENERIC_LIMIT = 2 ** 16


@dataclass(kw_only=True)
class ERRKey(LinearKey):
    """ERR's cascade key: sum_k weights[k][r_k] * prod_{j<k} factors[r_j]."""

    kernel: object = f"{__name__}_kernels:err_keys"
    factors: list
    split_enumeration: ClassVar[bool] = True

    def kernel_arrays(self) -> tuple[str | Callable[[np.ndarray, np.ndarray, np.ndarray], None], int, np.ndarray]:
        if self.words > 1:
            raise MeasureError("ERR keys beyond 64 bits are scored through the prefix/suffix split only "
                               "(tables: --method split or auto); this path needs one 64-bit word")
        return self.kernel, 1, np.array(self.weights + [self.factors], dtype=np.uint64)

    def key_python(self, run: Sequence[int]) -> int:
        key, prod = 0, 1
        for k, r in enumerate(run):
            key += self.weights[k][int(r)] * prod
            prod *= self.factors[int(r)]
        return key

    def keys_of_runs(self, runs: np.ndarray) -> np.ndarray:
        if self.words > 1:                 # beyond 64 bits: exact keys in Python
            return ints_to_words([self.key_python(r) for r in np.asarray(runs).tolist()], self.words)
        return super().keys_of_runs(runs)

    def enumeration(self, levels: int, n: int, requested: str = "auto") -> str:
        if requested not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")
        if requested == "generic" and self.words > 1:
            raise MeasureError(f"ERR@{n}: its exact keys need {self.words} words; the generic method scores ERR "
                               f"on one 64-bit word: use --method split or auto")
        if requested != "auto":
            return requested
        # small spaces: score every run; else the prefix/suffix split
        return "generic" if levels ** n <= GENERIC_LIMIT and self.words == 1 else "split"

    def split_form(self, levels: int, n: int, h: int | None = None, stratified: bool = False,
                   label: str = "") -> SplitForm:
        """key(p, s) = KA[p] + prod(p) * KS[s], with KA the prefix's own key,
        prod(p) = prod_{j<=h} (2^m + 1 - 2^g(r_j)) and KS the suffix's key computed from
        rank h + 1 on; the state of a prefix is the index of its product, and
        KB[state, s] = product * KS[s]. Raw values are exact integers while keys stay below
        2^53, float64 (error bound 4 u max_key) with multi-word exact keys beyond."""
        h = n // 2 if h is None else h
        W, f, words = self.weights, self.factors, self.words
        ka, prods, factors = [], [], {}
        for run in all_runs(levels, h).tolist():
            key, prod = 0, 1
            for k, r in enumerate(run):
                key += W[k][r] * prod
                prod *= f[r]
            ka.append(key)
            prods.append(prod)
            factors.setdefault(prod, [f[r] for r in run if f[r] != 1])   # each factor < 2^32
        ks = []
        for run in all_runs(levels, n - h).tolist():
            key, prod = 0, 1
            for k, r in enumerate(run, start=h):
                key += W[k][r] * prod
                prod *= f[r]
            ks.append(key)
        uniq = sorted(set(prods))
        index = {v: i for i, v in enumerate(uniq)}
        state = np.array([index[v] for v in prods], dtype=np.int64)
        if self.max_key < EXACT_LIMIT:
            A = np.array(ka, dtype=np.float64)
            B = np.stack([np.array([v * x for x in ks], dtype=np.float64) for v in uniq])
            return SplitForm(n, levels, h, A, state, B, True, 0.0, EMPTY_KEYS, EMPTY_KEYS, True, stratified, label)
        KA = ints_to_words(ka, words)
        KS = ints_to_words(ks, words)
        KB = np.stack([functools.reduce(mul_small, factors[v], KS) for v in uniq])
        A = np.array([float(v) for v in ka])
        B = np.stack([words_to_float(KB[i]) for i in range(len(uniq))])
        return SplitForm(n, levels, h, A, state, B, False, 4 * U * float(self.max_key), KA, KB, True, stratified,
                         label)


def _read_other(cls: type, req: Request) -> Measure:
    """ir_measures' ERR@k is gdeval's: grades are the qrels' levels 0..T (negative levels
    count as 0), R = (2^level - 1)/2^4, and gdeval refuses levels above 4."""
    levels = req.levels()
    if levels[-1] > GDEVAL_MAX_LEVEL:
        req.fail(f"ir_measures computes ERR with gdeval, which refuses relevance levels above {GDEVAL_MAX_LEVEL} "
                 f"(the qrels' top level is {levels[-1]}); irscale's ERR(gains=(0,1,..,{levels[-1]}))@k normalises "
                 f"by the top level instead")
    return cls(n=req.n(whole_ranking=False), gains=levels, max_grade=GDEVAL_MAX_LEVEL)


#: ERR's normalisation exponent: R = (2^g - 1)/2^max_grade.
MAX_GRADE = Param("max_grade", "exponent", "normalisation R = (2^g - 1)/2^max_grade, at least the top gain g(G) "
                  "(default g(G); gdeval and ir_measures: 4)", default=None)


@dataclass(frozen=True, repr=False)
class ERR(KeyMeasure):
    name = "ERR"
    params = (GAINS, MAX_GRADE)
    summary = "expected reciprocal rank, R = (2^g - 1)/2^max_grade, max_grade = g(G) by default (graded with gains)"
    gains: tuple = (0, 1)
    max_grade: int | None = None
    other_names = (
        OtherName("ir_measures", "ERR", _read_other, "gdeval's ERR@k: R = (2^level - 1)/2^4 for levels 0..T, T <= 4 "
                  "(values printed to 5 decimals)", "ERR@20", "ERR(gains=(0,1,..,T),max_grade=4)@20"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        top = self.gains[-1]
        if self.max_grade is not None:
            if self.max_grade < top:
                raise MeasureError(f"ERR: max_grade = {self.max_grade} is below the top gain {top} of gains "
                                   f"{format_value(self.gains)}: R = (2^g - 1)/2^max_grade would exceed 1 "
                                   f"(max_grade must be at least {top})")
            if self.max_grade == top:         # the default: one name per measure
                object.__setattr__(self, "max_grade", None)

    @property
    def exponent(self) -> int:
        """m of R = (2^g - 1)/2^m: ``max_grade``, or the top gain g(G) by default."""
        return self.gains[-1] if self.max_grade is None else self.max_grade

    def key_spec(self) -> ERRKey:
        n, g = self.n, self.gains
        m = self.exponent
        lcm = lcm_upto(n)
        weights = [[(lcm // k) * (2 ** gain - 1) * 2 ** (m * (n - k)) for gain in g] for k in range(1, n + 1)]
        factors = [2 ** m + 1 - 2 ** gain for gain in g]
        max_key = lcm * 2 ** (m * n)
        if self.has_scales and (max(factors) >= 2 ** 32 or max_key.bit_length() > 64 * MAX_WORDS):
            # tables and kernels only: raw values beyond scales come from exact keys in Python integers
            raise MeasureError(f"{self}: exact ERR keys are limited to top gains below 32 and {64 * MAX_WORDS}-bit "
                               f"keys")
        return ERRKey(weights=weights, max_key=max_key, ordered=True, scale=lambda rb: Fraction(1, max_key),
                      factors=factors)
