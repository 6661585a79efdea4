"""Kendall tau agreement between system rankings (SPEC section 6).

A *matrix* here is a topics x systems array of per-topic scores of one measure, raw (M)
or interval-scaled (M_R). Systems are ranked by their mean over topics; means are rounded
to 8 decimals first so that float noise does not create or break ties. Kendall's tau is
tau-b (ties in either ranking handled), as ``scipy.stats.kendalltau`` computes it.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from irscale.errors import IrscaleError

#: Decimals system means are rounded to before ranking (SPEC section 6).
MEAN_DECIMALS = 8


class SelfCheckError(IrscaleError):
    """An analysis invariant that holds by construction failed: the data or the tables are
    not what they claim to be (e.g. a scaled score that is not a monotone map of the raw
    score on some topic)."""


def system_means(matrix: np.ndarray) -> np.ndarray:
    """Mean over topics (axis 0) of each system, rounded to :data:`MEAN_DECIMALS`."""
    return np.round(np.asarray(matrix, dtype=np.float64).mean(axis=0), MEAN_DECIMALS)


def overall_tau(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall tau-b between the system rankings by mean score of two matrices."""
    tau = stats.kendalltau(system_means(a), system_means(b)).statistic
    return float(tau)


def topic_taus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall tau-b between the systems' scores on each topic (NaN for a topic where
    all systems score the same under ``a`` or ``b``: no ranking to compare)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    out = np.full(a.shape[0], np.nan)
    for t in range(a.shape[0]):
        if np.ptp(a[t]) > 0 and np.ptp(b[t]) > 0:
            out[t] = stats.kendalltau(a[t], b[t]).statistic
    return out


def check_topic_taus(raw: np.ndarray, scaled: np.ndarray, label: str) -> dict:
    """The topic-by-topic self-check: on every topic the scaled scores rank the systems
    exactly as the raw scores (tau = 1), since the scale is a strictly increasing map of
    the raw score on each topic. Raises :class:`SelfCheckError` otherwise.

    Returns ``{"topics": checked topics, "constant": topics where every system scores
    the same (tau undefined, both matrices constant), "min": smallest tau}``.
    """
    taus = topic_taus(raw, scaled)
    defined = ~np.isnan(taus)
    raw_const = np.ptp(np.asarray(raw, dtype=np.float64), axis=1) == 0
    scaled_const = np.ptp(np.asarray(scaled, dtype=np.float64), axis=1) == 0
    mismatch = np.flatnonzero(raw_const != scaled_const)
    if mismatch.size:
        raise SelfCheckError(f"{label}: on topic #{mismatch[0]} one of raw and scaled scores is constant "
                             f"over the systems and the other is not")
    bad = np.flatnonzero(defined & (np.abs(taus - 1.0) > 1e-12))
    if bad.size:
        raise SelfCheckError(f"{label}: topic-by-topic tau is {taus[bad[0]]:.6f} on topic #{bad[0]}, not 1: "
                             f"the scaled scores do not order the systems like the raw scores")
    return {"topics": int(defined.sum()), "constant": int((~defined).sum()),
            "min": float(np.nanmin(taus)) if defined.any() else float("nan")}


def measure_taus(means: dict[str, np.ndarray]) -> list[tuple[str, str, float]]:
    """Kendall tau-b between the system rankings of every pair of measures (in the
    order given), from their (rounded) system means."""
    names = list(means)
    out = []
    for i, m1 in enumerate(names):
        for m2 in names[i + 1:]:
            out.append((m1, m2, float(stats.kendalltau(means[m1], means[m2]).statistic)))
    return out


def delta_percent(new: float, old: float) -> float:
    """Relative change in percent, (new - old) / old * 100 (NaN when old is 0)."""
    return float("nan") if old == 0 else (new - old) / old * 100.0
