"""Exact keys: integers that decide ties between runs exactly, and the kinds of keys.

A :class:`~irscale.scales.measures.keyed.KeyMeasure` scores a run by its *key*, a
non-negative integer of one or more 64-bit words (most significant word first), such
that two runs of one measure have equal keys exactly when their real-number values are
equal. Keys never pass through floating point, so ties are never made or broken by
rounding (SPEC section 4).

A kind of key (:class:`KeySpec` and its subclasses) knows everything about its keys that
the rest of the pipeline needs, so that no other module asks which kind it holds:

* how runs are scored (``kernel`` and its weights, a plain-Python reference
  :meth:`KeySpec.key_python`);
* the map from keys to values (float64 and exact), its float error bound, and the exact
  gap between two keys' values (for certificates);
* its split form (:meth:`KeySpec.split_form`, the contract of
  :mod:`irscale.enumerate.splitform`) and which enumerator suits it.

The kinds defined here:

:class:`LinearKey`
    value = key * c(RB) for a positive rational c: key order is value order and the key
    is an exact integer. Scored by any kernel; its split form scores whole runs (small
    spaces only). :class:`AdditiveKey` is the linear key that is a sum of per-rank
    integer weights (P, R, F1, RBP with rational p, gP, gR), with a prefix/suffix split.
:class:`FormalLogKey`
    Measures with logarithmic discounts (DCG, nDCG, nDCG_trec). A discount
    ``log(B)/log(k)`` is written as ``(1/j) * X_m`` with ``k = m**j`` and m not a perfect
    power, ``X_m = ln B / ln m``; when ``m`` is the root of B the discount is the
    rational ``i/j``. The key packs, into fixed bit fields, the exact rational
    coefficient of every ``X_m`` (scaled to integers) and of the rational part. Equal
    values have equal coefficient vectors; distinct coefficient vectors are taken to be
    distinct values (the numbers ``1, X_3, X_5, ...`` are linearly independent over the
    rationals) and this is checked for every table by separating all neighbouring values
    in :data:`MP_DIGITS`-digit arithmetic (:mod:`irscale.scales.tables.certificate`).

Families with keys of their own structure define their kind in their module (AP's
cumulated precision, RR's rank key, ERR's cascade).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce
from typing import ClassVar

import mpmath
import numpy as np

from irscale.enumerate.jobs import score
from irscale.enumerate.splitform import EMPTY_KEYS, EXACT_LIMIT, SplitForm, padded_parts
from irscale.enumerate.words import ints_to_words, limbs32, words_needed, words_to_float, words_to_ints
from irscale.errors import MeasureError
from irscale.scales.measures.groups import subset_group
from irscale.scales.measures.measure import RecallBase

#: Decimal digits used to re-decide close pairs of irrational values.
MP_DIGITS = 60
U = 2.0 ** -53  # unit roundoff of float64
#: Largest run space a split form of whole runs (no structure) is built for.
WHOLE_RUN_SPLIT_LIMIT = 2 ** 26
#: Enumeration methods of key tables.
METHODS = ("auto", "split", "generic")


@dataclass(kw_only=True)
class KeySpec:
    """How a measure's exact keys are computed and what they mean.

    ``kernel`` names a generic scoring kernel (:data:`irscale.enumerate.jobs.KERNELS`) or
    the family's own, ``"module:function"`` of its ``families/<family>_kernels.py`` (numba
    functions ``(runs, weights, out)``, loaded lazily; then override :meth:`key_python`
    with its plain-Python reference); ``weights`` are its integer
    weights per rank (0-based) and relevance degree, as Python ints; ``max_key`` bounds
    every key; ``ordered`` says whether key order is value order; ``tie_method`` is how
    the certificate of a table names the way its ties were decided.
    """

    kernel: object
    weights: list[list[int]]
    max_key: int
    ordered: bool
    tie_method: str = "exact-integer"

    #: Whether the split enumerator suits this kind (a split form with structure).
    split_enumeration: ClassVar[bool] = False

    @property
    def words(self) -> int:
        return words_needed(self.max_key)

    # -- scoring ------------------------------------------------------------------------
    def kernel_arrays(self) -> tuple[object, int, np.ndarray]:
        """(kernel, words, weight array) in the layout the numba kernels take."""
        arr = np.array(self.weights, dtype=np.uint64) if self.weights else np.zeros((0, 0), np.uint64)
        return self.kernel, self.words, arr

    def key_python(self, run: Sequence[int]) -> int:
        """The key of one run computed in plain Python (the reference path)."""
        raise NotImplementedError(f"{type(self).__name__} has no plain-Python key")

    def keys_of_runs(self, runs: np.ndarray) -> np.ndarray:
        """Keys (uint64 (m, words)) of runs (uint8 (m, N)), by the enumerator's kernel."""
        return score(*self.kernel_arrays(), np.ascontiguousarray(runs, dtype=np.uint8))

    # -- values ---------------------------------------------------------------------------
    def float_values(self, keys: np.ndarray, rb: RecallBase) -> np.ndarray:
        """Float64 values of keys (uint64 (m, words)) for the recall base ``rb``."""
        raise NotImplementedError

    def exact_value(self, key: int, rb: RecallBase) -> Fraction | mpmath.mpf:
        """Exact value of one key (Fraction, or an mpmath number of MP_DIGITS digits)."""
        raise NotImplementedError

    def values_of_python_keys(self, keys: list[int], rb: RecallBase) -> np.ndarray:
        """Float64 values of keys given as Python integers (any size: keys of runs beyond
        the enumerator's cutoffs), as :meth:`float_values` computes them."""
        return self.float_values(ints_to_words(keys, max(self.words, words_needed(max(keys, default=1)))), rb)

    def error_bound(self, rb: RecallBase) -> float:
        """Absolute bound on |float value - true value| for this measure's values."""
        raise NotImplementedError

    # -- raw values (the unit of split forms and rank oracles) -----------------------------
    def raw_exact(self, key: int) -> int | mpmath.mpf:
        """The exact raw value of a key: the key itself for keys in value order (the
        value is a fixed increasing function of it)."""
        if not self.ordered:
            raise NotImplementedError(f"{type(self).__name__} keys are not in value order")
        return key

    def raw_floats(self, keys: np.ndarray) -> np.ndarray:
        """Float64 raw values of keys (uint64 (m, words)), within :meth:`raw_float_bound`."""
        return words_to_float(keys)

    def raw_float_bound(self, max_raw: float) -> float:
        """Absolute error bound of :meth:`raw_floats` for raw values up to ``max_raw``."""
        return 4 * U * max_raw

    def value_factor(self, rb: RecallBase) -> float:
        """value = raw * factor, raw being the key (or the unnormalised float value)."""
        return float("nan")

    def values_of_raw(self, raw: np.ndarray, exact: bool, rb: RecallBase) -> np.ndarray:
        """Values of split-form raw values (exact integer keys when ``exact``)."""
        if exact:
            return self.float_values(raw.astype(np.uint64), rb)
        return raw * self.value_factor(rb)

    def raw_of_values(self, x: np.ndarray, rb: RecallBase) -> tuple[np.ndarray, float]:
        """Raw values of the split form for query values, and the factor d(raw)/d(value)
        that turns tolerances on values into tolerances on raws."""
        f = self.value_factor(rb)
        return x / f, 1.0 / f

    def certified_gap(self, key_lo: int, key_hi: int, rb: RecallBase) -> tuple[float, str]:
        """The exact gap between the values of two keys (float and exact text)."""
        gap = self.exact_value(key_hi, rb) - self.exact_value(key_lo, rb)
        return float(gap), str(gap)

    def tie_method_of(self, split: SplitForm) -> str:
        """How ties and order were decided for a table built through ``split``."""
        return self.tie_method

    def gap_values(self, keys: np.ndarray, rb: RecallBase) -> tuple[list, str]:
        """The distinct gaps between neighbouring values of keys in value order
        (uint64 (K, words)), computed exactly, and the name of the arithmetic used (for
        the exact equal-spacing test of :mod:`irscale.scales.analysis.axioms`)."""
        ints = words_to_ints(keys)
        vals = [self.exact_value(k, rb) for k in ints]
        return sorted({b - a for a, b in zip(vals, vals[1:])}), "exact-rational"

    # -- enumeration ----------------------------------------------------------------------
    def enumeration(self, levels: int, n: int, requested: str = "auto") -> str:
        """The enumerator for a table of this key over REL^N: ``"split"`` or ``"generic"``
        (``requested``: ``"auto"`` or one of them; a kind refuses what it cannot do)."""
        if requested not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")
        if requested != "auto":
            return requested
        return "split" if self.split_enumeration else "generic"

    def split_form(self, levels: int, n: int, h: int | None = None, stratified: bool = False,
                   label: str = "") -> SplitForm:
        """The split form of this key over REL^N (see :mod:`irscale.enumerate.splitform`).
        Without structure the whole run is the suffix (h = 0; spaces of at most
        :data:`WHOLE_RUN_SPLIT_LIMIT` runs and ordered keys below 2^53)."""
        if not (self.ordered and self.max_key < EXACT_LIMIT) or levels ** n > WHOLE_RUN_SPLIT_LIMIT:
            raise MeasureError(f"{label}: no split form (keys without structure are scored run by run only up "
                               f"to {WHOLE_RUN_SPLIT_LIMIT} runs)")
        _, runs = padded_parts(levels, n, 0)
        keys = self.keys_of_runs(runs)[:, -1].astype(np.float64)
        return SplitForm(n, levels, 0, np.zeros(1), np.zeros(1, np.int64), keys[None, :], True, 0.0,
                         EMPTY_KEYS, EMPTY_KEYS, True, stratified, label)


@dataclass(kw_only=True)
class LinearKey(KeySpec):
    """value = key * scale(rb), scale a positive Fraction."""

    scale: Callable[[RecallBase], Fraction] = field(default=lambda rb: Fraction(1))

    def float_values(self, keys: np.ndarray, rb: RecallBase) -> np.ndarray:
        c = self.scale(rb)
        keys = np.asarray(keys)
        if keys.ndim == 2 and keys.shape[1] == 1:
            keys = keys[:, 0]
        if keys.ndim == 1 and self.max_key * c.numerator < 2 ** 53 and c.denominator < 2 ** 53:
            # numerator and denominator exact in float64: one correctly rounded division
            return (keys.astype(np.float64) * float(c.numerator)) / float(c.denominator)
        return words_to_float(keys) * float(c)

    def exact_value(self, key: int, rb: RecallBase) -> Fraction:
        return key * self.scale(rb)

    def values_of_python_keys(self, keys: list[int], rb: RecallBase) -> np.ndarray:
        """Correctly rounded float64 values (exact fractions, then one rounding)."""
        c = self.scale(rb)
        return np.array([float(key * c) for key in keys], dtype=np.float64)

    def value_factor(self, rb: RecallBase) -> float:
        return float(self.scale(rb))

    def error_bound(self, rb: RecallBase) -> float:
        return 4 * U * float(self.max_key * self.scale(rb))

    def tie_method_of(self, split: SplitForm) -> str:
        return self.tie_method if split.exact else "exact-integer+float-order"

    def gap_values(self, keys: np.ndarray, rb: RecallBase) -> tuple[list, str]:
        ints = words_to_ints(keys)
        c = self.scale(rb)
        return sorted({(b - a) * c for a, b in zip(ints, ints[1:])}), "exact-rational"


def additive_split_form(spec: KeySpec, float_weights: np.ndarray, levels: int, n: int, h: int | None,
                        stratified: bool, label: str, exact_raw: Callable[[int], mpmath.mpf] | None = None
                        ) -> SplitForm:
    """Split form of a key that is a sum of per-rank weights: A = key of the prefix,
    B = key of the suffix. Exact integers while keys stay below 2^53; beyond, float raws
    summed in rank order from ``float_weights[k, g]`` (error bound 2 (N + 4) u max) with
    the exact multi-word keys KA, KB deciding ties (and ``exact_raw`` the order when key
    order is not value order)."""
    h = n // 2 if h is None else h
    pre, suf = padded_parts(levels, n, h)
    KA, KB = spec.keys_of_runs(pre), spec.keys_of_runs(suf)
    state = np.zeros(KA.shape[0], dtype=np.int64)
    if spec.ordered and spec.max_key < EXACT_LIMIT:
        return SplitForm(n, levels, h, KA[:, -1].astype(np.float64), state, KB[:, -1].astype(np.float64)[None, :],
                         True, 0.0, EMPTY_KEYS, EMPTY_KEYS, True, stratified, label)
    A = np.zeros(pre.shape[0])
    for k in range(h):
        A = A + float_weights[k][pre[:, k]]
    B = np.zeros(suf.shape[0])
    for k in range(h, n):
        B = B + float_weights[k][suf[:, k]]
    bound = 2 * (n + 4) * U * float(A.max() + B.max())
    return SplitForm(n, levels, h, A, state, B[None, :], False, bound, KA, KB[None, :, :], spec.ordered, stratified,
                     label, exact_raw, MP_DIGITS)


class AdditiveScoring:
    """Scoring of keys that are sums of per-rank integer weights, key = sum_k
    weights[k][r_k] (kernel ``additive``; ``additive_mw`` when the key needs several words);
    shared by :class:`AdditiveKey` and :class:`FormalLogKey`."""

    def kernel_arrays(self) -> tuple[str | Callable[[np.ndarray, np.ndarray, np.ndarray], None], int, np.ndarray]:
        if self.words > 1:
            return "additive_mw", self.words, limbs32(self.weights, self.words)
        return super().kernel_arrays()

    def key_python(self, run: Sequence[int]) -> int:
        return sum(self.weights[k][int(r)] for k, r in enumerate(run))


@dataclass(kw_only=True)
class AdditiveKey(AdditiveScoring, LinearKey):
    """A linear key that is the sum of per-rank integer weights: key = sum_k
    weights[k][r_k] (kernel ``additive``, on several words when needed)."""

    kernel: object = "additive"
    split_enumeration: ClassVar[bool] = True

    def split_form(self, levels: int, n: int, h: int | None = None, stratified: bool = False,
                   label: str = "") -> SplitForm:
        wf = np.array([[float(w) for w in row] for row in self.weights])
        return additive_split_form(self, wf, levels, n, h, stratified, label)


def primitive_root(k: int) -> tuple[int, int]:
    """Write k >= 2 as m**j with j maximal; returns (m, j)."""
    best = (k, 1)
    for j in range(2, k.bit_length() + 1):
        m = round(k ** (1.0 / j))
        for cand in (m - 1, m, m + 1):
            if cand >= 2 and cand ** j == k:
                best = (cand, j)
    return best


def log_discount(base: int, arg: int) -> tuple[Fraction, int | None]:
    """``log(base)/log(arg)`` (= 1/log_base(arg)) in formal form.

    Returns ``(coef, m)``: the discount equals ``coef`` when ``m`` is None and
    ``coef * ln(base)/ln(m)`` otherwise, with m not a perfect power.
    """
    mb, ib = primitive_root(base)
    m, j = primitive_root(arg)
    if m == mb:
        return Fraction(ib, j), None
    return Fraction(1, j), m


@dataclass(kw_only=True)
class FormalLogKey(AdditiveScoring, KeySpec):
    """Key of a gain-weighted sum of logarithmic discounts, packed into bit fields.

    ``coords`` lists the coordinates: None for the rational part, else the m of
    ``X_m = ln(base)/ln(m)``; ``denoms[c]`` is the integer that scales coordinate c's
    coefficients to integers; ``offsets[c]``/``bits[c]`` place its field (fields never
    straddle a 64-bit word). ``normaliser(rb)`` gives the key of the ideal run for
    normalised measures (value = DCG / ideal DCG) or None.
    """

    base: int = 2
    coords: list = field(default_factory=list)
    denoms: list = field(default_factory=list)
    offsets: list = field(default_factory=list)
    bits: list = field(default_factory=list)
    normaliser: Callable[[RecallBase], int | None] = field(default=lambda rb: None)

    split_enumeration: ClassVar[bool] = True

    @classmethod
    def build(cls, discounts: list[tuple[Fraction, int | None]], gains: list[int], base: int,
              normaliser: Callable[[RecallBase], int | None] | None = None) -> FormalLogKey:
        """Build from per-rank formal discounts (see :func:`log_discount`) and integer
        gains per relevance degree (``gains[0]`` must be 0)."""
        coords: list = [None]
        for _, m in discounts:
            if m is not None and m not in coords:
                coords.append(m)
        coords = [None] + sorted(c for c in coords if c is not None)
        index = {c: i for i, c in enumerate(coords)}
        denoms = [1] * len(coords)
        for coef, m in discounts:
            c = index[m]
            denoms[c] = denoms[c] * coef.denominator // math.gcd(denoms[c], coef.denominator)
        gmax = max(gains)
        fmax = [0] * len(coords)
        for coef, m in discounts:
            c = index[m]
            fmax[c] += int(coef * denoms[c]) * gmax
        bits = [max(1, v.bit_length()) for v in fmax]
        offsets, pos = [0] * len(coords), 0
        # place fields from the least significant end; never straddle a 64-bit word
        for c in range(len(coords)):
            if pos // 64 != (pos + bits[c] - 1) // 64:
                pos = (pos // 64 + 1) * 64
            offsets[c], pos = pos, pos + bits[c]
        weights = []
        for coef, m in discounts:
            c = index[m]
            unit = int(coef * denoms[c]) << offsets[c]
            weights.append([g * unit for g in gains])
        max_key = sum(max(w) for w in weights)
        spec = cls(kernel="additive", weights=weights, max_key=max(max_key, 1), ordered=False,
                   tie_method=f"formal-log+mpmath{MP_DIGITS}", base=base, coords=coords, denoms=denoms,
                   offsets=offsets, bits=bits)
        if normaliser is not None:
            spec.normaliser = normaliser
        return spec

    # -- decoding -----------------------------------------------------------------
    def fields(self, keys: np.ndarray) -> list[np.ndarray]:
        """Integer coefficient of every coordinate, as int64 arrays."""
        keys = np.asarray(keys, dtype=np.uint64)
        if keys.ndim == 1:
            keys = keys[:, None]
        words = keys.shape[1]
        out = []
        for off, nbits in zip(self.offsets, self.bits):
            word = keys[:, words - 1 - off // 64]
            out.append(((word >> np.uint64(off % 64)) & np.uint64((1 << nbits) - 1)).astype(np.int64))
        return out

    def fields_python(self, key: int) -> list[int]:
        return [(key >> off) & ((1 << nbits) - 1) for off, nbits in zip(self.offsets, self.bits)]

    def coord_values_mp(self) -> list:
        """The coordinates' values 1 and ln(base)/ln(m), with MP_DIGITS + 10 digits (cached)."""
        cached = self.__dict__.get("_coord_cache")
        if cached is not None:
            return cached
        with mpmath.workdps(MP_DIGITS + 10):
            lb = mpmath.log(self.base)
            xs = [mpmath.mpf(1) if m is None else lb / mpmath.log(m) for m in self.coords]
        self.__dict__["_coord_cache"] = xs
        return xs

    def raw_float(self, keys: np.ndarray) -> np.ndarray:
        """Unnormalised value (e.g. DCG) of each key in float64, fixed summation order."""
        xs = self.coord_values_mp()
        with mpmath.workdps(MP_DIGITS + 10):
            factors = [float(x / d) for x, d in zip(xs, self.denoms)]
        total = np.zeros(np.asarray(keys).shape[0], dtype=np.float64)
        for f, fac in zip(self.fields(keys), factors):
            total += f.astype(np.float64) * fac
        return total

    def raw_mp(self, key: int) -> mpmath.mpf:
        """Unnormalised value of one key with MP_DIGITS significant digits."""
        xs = self.coord_values_mp()
        with mpmath.workdps(MP_DIGITS + 10):
            return mpmath.fsum(f * x / d for f, x, d in zip(self.fields_python(key), xs, self.denoms))

    def raw_error_bound(self, max_value: float) -> float:
        return 2 * (len(self.coords) + 4) * U * max_value

    def raw_exact(self, key: int) -> mpmath.mpf:
        return self.raw_mp(key)

    def raw_floats(self, keys: np.ndarray) -> np.ndarray:
        return self.raw_float(keys)

    def raw_float_bound(self, max_raw: float) -> float:
        return self.raw_error_bound(max_raw)

    def coordinate_of_rank(self, k: int) -> int:
        """The coordinate (field) rank ``k`` (1-based) writes into: the field of its
        nonzero weights (every rank's weights lie in one field)."""
        w = next((x for x in self.weights[k - 1] if x), 0)
        for c, (off, nbits) in enumerate(zip(self.offsets, self.bits)):
            if w >> off and not w >> (off + nbits):
                return c
        return 0

    def coordinate_groups(self, levels: int, n: int, counted: int | None = None) -> tuple:
        """One group of ranks per coordinate (:mod:`irscale.scales.measures.groups`): the
        ranks whose discounts are rational multiples of one ln(base)/ln(m), or rational;
        counts of relevant documents, or of grade ``counted``
        (:func:`~irscale.scales.measures.groups.subset_group`)."""
        by: dict[int, list[int]] = {}
        for k in range(1, n + 1):
            by.setdefault(self.coordinate_of_rank(k), []).append(k)
        return tuple(subset_group(ranks, self.weights, levels, n, counted) for _, ranks in sorted(by.items()))

    # -- values -------------------------------------------------------------------------
    def ideal_float(self, rb: RecallBase) -> float | None:
        """Unnormalised value of the ideal run for ``rb`` (None: not normalised)."""
        norm = self.normaliser(rb)
        return None if norm is None else float(self.raw_float(ints_to_words([norm], self.words))[0])

    def value_factor(self, rb: RecallBase) -> float:
        ideal = self.ideal_float(rb)
        return 1.0 if ideal is None else 1.0 / ideal

    def float_values(self, keys: np.ndarray, rb: RecallBase) -> np.ndarray:
        raw = self.raw_float(keys)
        ideal = self.ideal_float(rb)
        return raw if ideal is None else raw / ideal

    def values_of_raw(self, raw: np.ndarray, exact: bool, rb: RecallBase) -> np.ndarray:
        return raw * self.value_factor(rb)

    def exact_value(self, key: int, rb: RecallBase) -> mpmath.mpf:
        norm = self.normaliser(rb)
        with mpmath.workdps(MP_DIGITS):
            v = self.raw_mp(key)
            return v if norm is None else v / self.raw_mp(norm)

    def error_bound(self, rb: RecallBase) -> float:
        top = float(self.raw_float(ints_to_words([self.max_key], self.words))[0])
        ideal = self.ideal_float(rb)
        if ideal is None:
            return self.raw_error_bound(top)
        return 3 * self.raw_error_bound(top) / ideal

    def certified_gap(self, key_lo: int, key_hi: int, rb: RecallBase) -> tuple[float, str]:
        with mpmath.workdps(MP_DIGITS):
            gap = self.exact_value(key_hi, rb) - self.exact_value(key_lo, rb)
            return float(gap), mpmath.nstr(gap, 20)

    def gap_values(self, keys: np.ndarray, rb: RecallBase) -> tuple[list, str]:
        """Gaps with equal coefficient differences are exactly equal; each distinct
        coefficient difference is evaluated once in MP_DIGITS digits."""
        if keys.shape[0] < 2:
            return [], f"mpmath{MP_DIGITS}"
        coef = np.stack(self.fields(keys), axis=1)
        formal = np.unique(np.diff(coef, axis=0), axis=0)
        norm = self.normaliser(rb)
        with mpmath.workdps(MP_DIGITS):
            xs = [x / d for x, d in zip(self.coord_values_mp(), self.denoms)]
            factor = mpmath.mpf(1) if norm is None else 1 / self.raw_mp(norm)
            gaps = [mpmath.fsum(int(f) * x for f, x in zip(row, xs)) * factor for row in formal]
        return sorted(gaps), f"mpmath{MP_DIGITS}"

    def split_form(self, levels: int, n: int, h: int | None = None, stratified: bool = False,
                   label: str = "") -> SplitForm:
        wf = np.zeros((n, levels))
        for k in range(n):
            for g in range(levels):
                if self.weights[k][g]:
                    wf[k, g] = self.raw_float(ints_to_words([self.weights[k][g]], self.words))[0]
        return additive_split_form(self, wf, levels, n, h, stratified, label, exact_raw=self.raw_mp)


def lcm_upto(n: int) -> int:
    """lcm(1, ..., n)."""
    return reduce(lambda a, b: a * b // math.gcd(a, b), range(1, n + 1), 1)
