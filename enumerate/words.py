"""Multi-word unsigned integers: exact keys of more than 64 bits.

A key of W words is a row of W ``uint64`` values, most significant word first, so that
numpy's lexicographic comparison of rows (or of the big-endian bytes) is the integer
order. Conversions to and from Python integers are exact; :func:`words_to_float` is
monotone (non-decreasing in the key). Sums of many weights are accumulated in 32-bit
limbs (:func:`limbs32`, used by :func:`irscale.enumerate.kernels.additive_keys_mw`).
"""
from __future__ import annotations

import numpy as np


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


def mul_small(words: np.ndarray, factor: int) -> np.ndarray:
    """Multi-word unsigned integers (rows of uint64 words, most significant first) times a
    factor below 2^32, exactly (32-bit limbs, carries propagated). Raises OverflowError
    when a product does not fit the words."""
    if not 0 < factor < 2 ** 32:
        raise ValueError(f"factor must be in [1, 2^32), got {factor}")
    w = words.shape[1]
    limbs = np.empty((words.shape[0], 2 * w), dtype=np.uint64)     # least significant limb first
    for i in range(w):
        word = words[:, w - 1 - i]
        limbs[:, 2 * i] = word & np.uint64(0xFFFFFFFF)
        limbs[:, 2 * i + 1] = word >> np.uint64(32)
    carry = np.zeros(words.shape[0], dtype=np.uint64)
    f = np.uint64(factor)
    for j in range(2 * w):
        v = limbs[:, j] * f + carry          # < 2^32 * 2^32: no overflow
        limbs[:, j] = v & np.uint64(0xFFFFFFFF)
        carry = v >> np.uint64(32)
    if carry.any():
        raise OverflowError("product does not fit the key words")
    out = np.empty_like(words)
    for i in range(w):
        out[:, w - 1 - i] = limbs[:, 2 * i] | (limbs[:, 2 * i + 1] << np.uint64(32))
    return out
