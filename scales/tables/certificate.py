"""Certified ordering of distinct keys by value, and the smallest gap of a table.

For keys whose integer order is the value order (rational measures) nothing is left to
decide. For formal logarithmic keys the float64 values are sorted; every pair of
neighbours closer than twice the proven float error bound is re-decided with
:data:`~irscale.scales.measures.keys.MP_DIGITS`-digit arithmetic, and a pair of distinct keys
that even this cannot separate raises :class:`~irscale.errors.CertificationError`
(the table is refused rather than written with a possibly wrong tie).
"""
from __future__ import annotations

from dataclasses import dataclass

import mpmath
import numpy as np

from irscale.enumerate.words import words_to_ints
from irscale.errors import CertificationError
from irscale.scales.measures.keys import MP_DIGITS, KeySpec


@dataclass
class Certificate:
    """How a table's ties and order were decided.

    ``method``: ``exact-integer`` (integer keys proportional to the value, or RR's rank
    key) or ``formal-log+mpmathD`` (formal coefficient keys; float order with close
    pairs re-decided at D digits). ``error_bound``: absolute bound on the error of the
    stored float64 values. ``min_gap``: smallest difference between neighbouring
    distinct values (exact for rational measures; ``min_gap_exact`` then gives it as a
    fraction). ``redecided``: number of neighbour clusters re-decided in high precision.
    """

    method: str
    error_bound: float
    min_gap: float
    min_gap_exact: str
    redecided: int = 0


def close_clusters(close: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of neighbours connected by close gaps: ``close[i]`` says sorted values
    i and i + 1 are too close to order in float64; returns (first, last) positions."""
    idx = np.flatnonzero(close)
    if idx.size == 0:
        return []
    clusters, start, prev = [], idx[0], idx[0]
    for i in idx[1:]:
        if i != prev + 1:
            clusters.append((start, prev + 1))
            start = i
        prev = i
    clusters.append((start, prev + 1))
    return clusters


def value_order(spec: KeySpec, keys: np.ndarray) -> tuple[np.ndarray, int]:
    """Permutation sorting distinct keys (sorted by key) into increasing value order,
    and the number of clusters that needed high precision. Keys whose order is not the
    value order provide ``raw_float``, ``raw_error_bound`` and ``raw_mp``
    (:class:`~irscale.scales.measures.keys.FormalLogKey`)."""
    k = keys.shape[0]
    if spec.ordered or k <= 1:
        return np.arange(k), 0
    raw = spec.raw_float(keys)
    order = np.argsort(raw, kind="stable")
    srt = raw[order]
    bound = spec.raw_error_bound(float(srt[-1]) if k else 0.0)
    close = np.diff(srt) <= 2 * bound
    clusters = close_clusters(close)
    if not clusters:
        return order, 0
    tiny = mpmath.mpf(10) ** (-(MP_DIGITS - 10))
    with mpmath.workdps(MP_DIGITS):
        for lo, hi in clusters:
            members = order[lo:hi + 1]
            ints = words_to_ints(keys[members])
            vals = [spec.raw_mp(v) for v in ints]
            perm = sorted(range(len(members)), key=lambda j: vals[j])
            for a, b in zip(perm, perm[1:]):
                if abs(vals[b] - vals[a]) <= tiny * max(1, abs(vals[a])):
                    raise CertificationError(
                        f"keys {ints[a]} and {ints[b]} have values equal to {MP_DIGITS - 10} digits but "
                        f"different formal forms; cannot certify the table")
            order[lo:hi + 1] = members[perm]
    return order, len(clusters)
