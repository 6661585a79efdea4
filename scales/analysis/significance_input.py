"""What every significance test takes and gives (:mod:`irscale.scales.analysis.significance`).

The input of every test is a *scores matrix* ``X`` of shape ``(n_topics, n_systems)``:
one row per topic, one column per system, the per-topic score of a measure (raw or
interval-scaled; any real unit, only comparisons and differences matter), finite, at least
2 x 2 (:class:`SignificanceInputError` otherwise); a significance level is in (0, 1)
(default :data:`ALPHA`). The output is one value per *pair* of systems ``(i, j)``,
``i < j``, in the order of ``np.triu_indices(n_systems, k=1)`` (see :func:`pairs`): 50
topics x 129 systems give 8,256 pairs. Pairs are processed in chunks of bounded memory;
mid-ranks serve the rank tests and the directions.
"""
from __future__ import annotations

import numpy as np

from irscale.errors import IrscaleError

__all__ = ["ALPHA", "SignificanceInputError", "check_fraction", "pairs"]

#: Default significance level.
ALPHA = 0.05

# Largest number of pair x topic cells handled at once (memory bound for many systems).
_CHUNK_CELLS = 1 << 21


class SignificanceInputError(IrscaleError, ValueError):
    """The scores matrix or a parameter of a significance test is invalid."""


# --------------------------------------------------------------------------- input


def _check_scores(scores) -> np.ndarray:
    try:
        x = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise SignificanceInputError(f"scores must be a numeric matrix: {exc}") from None
    if x.ndim != 2:
        raise SignificanceInputError(
            f"scores must be a 2-D (topics x systems) matrix, got {x.ndim} dimension(s)")
    n, k = x.shape
    if n < 2 or k < 2:
        raise SignificanceInputError(
            f"scores need at least 2 topics and 2 systems, got {n} x {k}")
    if not np.isfinite(x).all():
        bad = "NaN" if np.isnan(x).any() else "infinite values"
        raise SignificanceInputError(f"scores contain {bad}")
    return x


def check_fraction(name: str, value: object) -> float:
    """``value`` as a float strictly between 0 and 1 (a significance or confidence level),
    else a :class:`SignificanceInputError` naming ``name``."""
    try:
        a = float(value)
    except (TypeError, ValueError):
        raise SignificanceInputError(f"{name} must be a number in (0, 1), got {value!r}") from None
    if not 0.0 < a < 1.0:
        raise SignificanceInputError(f"{name} must be in (0, 1), got {value!r}")
    return a


def _check_alpha(alpha) -> float:
    return check_fraction("alpha", alpha)


def pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(i, j)``, ``i < j``, of every pair of systems.

    Parameters
    ----------
    n_systems : int
        Number of systems (columns of the scores matrix), at least 2.

    Returns
    -------
    (i, j) : tuple of numpy.ndarray of int
        ``np.triu_indices(n_systems, k=1)``: row-major order (0, 1), (0, 2), ...,
        (0, k-1), (1, 2), ...; ``n_systems * (n_systems - 1) / 2`` pairs. Every per-pair
        output of this module is in this order.
    """
    if isinstance(n_systems, (bool, np.bool_)) or not isinstance(n_systems, (int, np.integer)):
        raise SignificanceInputError(f"n_systems must be an integer, got {n_systems!r}")
    if n_systems < 2:
        raise SignificanceInputError(f"n_systems must be at least 2, got {n_systems}")
    return np.triu_indices(int(n_systems), k=1)


def _pair_chunks(n_topics: int, n_systems: int):
    i, j = pairs(n_systems)
    step = max(1, _CHUNK_CELLS // n_topics)
    for lo in range(0, i.size, step):
        yield slice(lo, lo + step), i[lo:lo + step], j[lo:lo + step]


# ----------------------------------------------------------------- rank helpers


def _sorted_tie_groups(s: np.ndarray, tol: float = 0.0):
    """For ``s`` sorted along the last axis: 0-based first and last position of the tie
    group of each element (same shape as ``s``); neighbours at most ``tol`` apart tie."""
    m = s.shape[-1]
    pos = np.arange(m)
    neq = (s[..., 1:] - s[..., :-1]) > tol
    edge = np.ones(s.shape[:-1] + (1,), dtype=bool)
    start = np.concatenate([edge, neq], axis=-1)
    end = np.concatenate([neq, edge], axis=-1)
    first = np.maximum.accumulate(np.where(start, pos, 0), axis=-1)
    last = np.minimum.accumulate(np.where(end, pos, m - 1)[..., ::-1], axis=-1)[..., ::-1]
    return first, last


def _midranks_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mid-ranks (1-based) along the last axis and ``sum(t^3 - t)`` over the tie groups of
    each row."""
    order = np.argsort(x, axis=-1, kind="stable")
    s = np.take_along_axis(x, order, axis=-1)
    first, last = _sorted_tie_groups(s)
    t = (last - first + 1).astype(np.float64)
    ranks = np.empty_like(s)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=-1)
    # each member of a group of size t contributes t^2 - 1: the group gives t^3 - t
    return ranks, (t * t - 1.0).sum(axis=-1)
