"""Exact keys: integers that decide ties between runs exactly.

The enumerator scores a run by computing its *key*, a non-negative integer of one or
more 64-bit words (most significant word first), such that two runs of one measure have
equal keys exactly when their real-number values are equal. Keys never pass through
floating point, so ties are never made or broken by rounding (SPEC section 4).

Three kinds of key cover the binary measures:

:class:`LinearKey`
    value = key * c(RB) for a positive rational c: key order is value order and the
    key is an exact integer (P, R, F1, AP, RBP with rational p). The key is either a sum
    of per-rank integer weights (kernel ``"additive"``) or AP's cumulated-precision
    numerator (kernel ``"ap"``).
:class:`ReciprocalRankKey`
    RR: key = N + 1 - (rank of the first relevant document), 0 when there is none.
:class:`FormalLogKey`
    Measures with logarithmic discounts (DCG, nDCG, nDCG_trec). A discount
    ``log(B)/log(k)`` is written as ``(1/j) * X_m`` with ``k = m**j`` and m not a perfect
    power, ``X_m = ln B / ln m``; when ``m`` is the root of B the discount is the
    rational ``i/j``. The key packs, into fixed bit fields, the exact rational
    coefficient of every ``X_m`` (scaled to integers) and of the rational part. Equal
    values have equal coefficient vectors; distinct coefficient vectors are taken to be
    distinct values (the numbers ``1, X_3, X_5, ...`` are linearly independent over the
    rationals) and this is checked for every table by separating all neighbouring values
    in 60-digit arithmetic (:mod:`irscale.scales.tables.certificate`).

Every kind maps keys to float64 values monotonically (exactly in key order for the
first two; certified for the third).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import reduce
from typing import Callable

import mpmath
import numpy as np

#: Decimal digits used to re-decide close pairs of irrational values.
MP_DIGITS = 60
U = 2.0 ** -53  # unit roundoff of float64


def words_needed(max_key: int) -> int:
    """Number of 64-bit words needed to hold integers up to ``max_key``."""
    return max(1, (int(max_key).bit_length() + 63) // 64)


def ints_to_words(values: list[int], words: int) -> np.ndarray:
    """Python ints -> (len, words) uint64 array, most significant word first."""
    out = np.zeros((len(values), words), dtype=np.uint64)
    mask = (1 << 64) - 1
    for i, v in enumerate(values):
        for w in range(words):
            out[i, words - 1 - w] = (v >> (64 * w)) & mask
    return out


def words_to_ints(keys: np.ndarray) -> list[int]:
    """(K, W) uint64 keys -> Python ints (slow; for small selections only)."""
    keys = np.asarray(keys, dtype=np.uint64)
    if keys.ndim == 1:
        return [int(v) for v in keys]
    out = []
    for row in keys:
        v = 0
        for w in row:
            v = (v << 64) | int(w)
        out.append(v)
    return out


def words_to_float(keys: np.ndarray) -> np.ndarray:
    """(K, W) uint64 keys -> float64, monotone non-decreasing in the key."""
    keys = np.asarray(keys, dtype=np.uint64)
    if keys.ndim == 1:
        return keys.astype(np.float64)
    out = np.zeros(keys.shape[0], dtype=np.float64)
    for w in range(keys.shape[1]):
        out = out * 2.0 ** 64 + keys[:, w].astype(np.float64)
    return out


def limbs32(weights: list[list[int]], words: int) -> np.ndarray:
    """Per-rank, per-degree integer weights as little-endian 32-bit limbs:
    array of shape (n, levels, 2*words) of uint64, each entry < 2**32."""
    n, levels = len(weights), len(weights[0])
    out = np.zeros((n, levels, 2 * words), dtype=np.uint64)
    for k in range(n):
        for g in range(levels):
            v = weights[k][g]
            for limb in range(2 * words):
                out[k, g, limb] = (v >> (32 * limb)) & 0xFFFFFFFF
    return out


@dataclass
class KeySpec:
    """How the enumerator computes a measure's exact keys.

    ``kernel`` names a built-in numba kernel (``"additive"``, ``"ap"``, ``"rr"``) or is a
    numba function ``(runs, weights, out)`` of the measure's own (then override
    :meth:`key_python` with its plain-Python reference), and
    ``weights`` its integer weights per rank (0-based) and relevance degree, as Python
    ints; ``max_key`` bounds every key; ``ordered`` says whether key order is value
    order.
    """

    kernel: object
    weights: list[list[int]]
    max_key: int
    ordered: bool
    tie_method: str = "exact-integer"

    @property
    def words(self) -> int:
        return words_needed(self.max_key)

    def kernel_arrays(self) -> tuple[str, int, np.ndarray]:
        """(kernel name, words, weight array) in the layout the numba kernels take."""
        if self.kernel == "additive" and self.words > 1:
            return "additive_mw", self.words, limbs32(self.weights, self.words)
        arr = np.array(self.weights, dtype=np.uint64) if self.weights else np.zeros((0, 0), np.uint64)
        return self.kernel, self.words, arr

    def key_python(self, run) -> int:
        """The key of one run computed in plain Python (reference path)."""
        if self.kernel == "additive":
            return sum(self.weights[k][int(r)] for k, r in enumerate(run))
        if self.kernel == "ap":
            seen = total = 0
            for k, r in enumerate(run):
                if r > 0:
                    seen += 1
                    total += seen * self.weights[k][1]
            return total
        if self.kernel == "rr":
            threshold = self.weights[0][0] if self.weights else 1
            for k, r in enumerate(run):
                if r >= threshold:
                    return len(run) - k
            return 0
        raise AssertionError(self.kernel)

    # Value mapping, overridden by subclasses.
    def float_values(self, keys: np.ndarray, measure, rb) -> np.ndarray:
        raise NotImplementedError

    def exact_value(self, key: int, measure, rb):
        raise NotImplementedError

    def error_bound(self, measure, rb) -> float:
        """Absolute bound on |float value - true value| for this table's values."""
        raise NotImplementedError

    def value_factor(self, rb) -> float:
        """value = raw * factor, raw being the key (or the unnormalised float value);
        NaN when the value is not proportional to the key."""
        return float("nan")


@dataclass
class LinearKey(KeySpec):
    """value = key * scale(rb), scale a positive Fraction."""

    scale: Callable[[int | None], Fraction] = field(default=lambda rb: Fraction(1))

    def float_values(self, keys, measure, rb):
        c = self.scale(rb)
        if keys.ndim == 2 and keys.shape[1] == 1:
            keys = keys[:, 0]
        if keys.ndim == 1 and self.max_key * c.numerator < 2 ** 53 and c.denominator < 2 ** 53:
            # numerator and denominator exact in float64: one correctly rounded division
            return (keys.astype(np.float64) * float(c.numerator)) / float(c.denominator)
        return words_to_float(keys) * float(c)

    def exact_value(self, key, measure, rb):
        return key * self.scale(rb)

    def value_factor(self, rb) -> float:
        return float(self.scale(rb))

    def error_bound(self, measure, rb):
        return 4 * U * float(self.max_key * self.scale(rb))


@dataclass
class ReciprocalRankKey(KeySpec):
    """RR: key = N + 1 - first relevant rank (0 if none); value = 1/(N + 1 - key)."""

    def float_values(self, keys, measure, rb):
        keys = np.asarray(keys).reshape(-1).astype(np.int64)
        out = np.zeros(keys.shape[0], dtype=np.float64)
        nz = keys > 0
        out[nz] = 1.0 / (measure.n + 1 - keys[nz]).astype(np.float64)
        return out

    def exact_value(self, key, measure, rb):
        return Fraction(0) if key == 0 else Fraction(1, measure.n + 1 - key)

    def error_bound(self, measure, rb):
        return U


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


@dataclass
class FormalLogKey(KeySpec):
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
    normaliser: Callable[[int | None], int | None] = field(default=lambda rb: None)

    @classmethod
    def build(cls, discounts: list[tuple[Fraction, int | None]], gains: list[int], base: int,
              normaliser=None) -> "FormalLogKey":
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

    def _coord_values_mp(self) -> list:
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
        xs = self._coord_values_mp()
        with mpmath.workdps(MP_DIGITS + 10):
            factors = [float(x / d) for x, d in zip(xs, self.denoms)]
        total = np.zeros(np.asarray(keys).shape[0], dtype=np.float64)
        for f, fac in zip(self.fields(keys), factors):
            total += f.astype(np.float64) * fac
        return total

    def raw_mp(self, key: int):
        """Unnormalised value of one key with MP_DIGITS significant digits."""
        xs = self._coord_values_mp()
        with mpmath.workdps(MP_DIGITS + 10):
            return mpmath.fsum(f * x / d for f, x, d in zip(self.fields_python(key), xs, self.denoms))

    def raw_error_bound(self, max_value: float) -> float:
        return 2 * (len(self.coords) + 4) * U * max_value

    # -- KeySpec interface ------------------------------------------------------------
    def ideal_float(self, rb) -> float | None:
        """Unnormalised value of the ideal run for ``rb`` (None: not normalised)."""
        norm = self.normaliser(rb)
        return None if norm is None else float(self.raw_float(ints_to_words([norm], self.words))[0])

    def value_factor(self, rb) -> float:
        ideal = self.ideal_float(rb)
        return 1.0 if ideal is None else 1.0 / ideal

    def float_values(self, keys, measure, rb):
        raw = self.raw_float(keys)
        ideal = self.ideal_float(rb)
        return raw if ideal is None else raw / ideal

    def exact_value(self, key, measure, rb):
        norm = self.normaliser(rb)
        with mpmath.workdps(MP_DIGITS):
            v = self.raw_mp(key)
            return v if norm is None else v / self.raw_mp(norm)

    def error_bound(self, measure, rb):
        top = float(self.raw_float(ints_to_words([self.max_key], self.words))[0])
        ideal = self.ideal_float(rb)
        if ideal is None:
            return self.raw_error_bound(top)
        return 3 * self.raw_error_bound(top) / ideal


def lcm_upto(n: int) -> int:
    """lcm(1, ..., n)."""
    return reduce(lambda a, b: a * b // math.gcd(a, b), range(1, n + 1), 1)


def key_of_run(measure, run) -> int:
    """Exact key of one judged run (Python reference path)."""
    return measure.key_spec().key_python(list(run))
