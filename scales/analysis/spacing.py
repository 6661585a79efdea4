"""Spacing of a scale: how far a measure's distinct values are from equally spaced
(SPEC section 6, "Spacing").

Everything here is computed by *streaming* over a scale's values in value order, block by
block (:meth:`~irscale.scales.tables.scale.Scale.value_blocks`), so it works on the
N = 30 tables of a store (up to 2^30 entries) without ever holding all values, and on
every layout alike; the blocks are folded into running statistics by numba kernels
(:mod:`irscale.scales.analysis.spacing_kernels`).

Definitions (v_1 < ... < v_K the distinct values of the scale, as float64; for an
RB-dependent measure those of the feasible runs of its recall base; each with the number
of runs taking it):

* ``n_distinct`` K, ``n_runs`` (feasible runs, with multiplicity), ``min`` v_1, ``max`` v_K;
* gaps ``g_i = v_{i+1} - v_i`` (K - 1 of them), differences of the float64 values:
  ``gap_mean`` (= (max - min)/(K - 1) up to rounding), ``gap_std`` (population standard
  deviation), ``gap_cv`` = std/mean (0 for equal spacing), ``gap_min``, ``gap_max``.
  Where neighbouring values are closer than float64 resolves (RBP(p=0.3)@30: true gaps of
  5e-16 next to values near 1), the float gaps are rounding noise and may even be <= 0:
  ``n_nonpositive_gaps`` counts them; ``error_bound`` and ``certified_min_gap`` (the
  table's certificate) say how much to trust small gaps;
* ``gap_hist_edges``/``gap_hist_counts``: histogram of the gaps on fixed log10-spaced
  edges 10^-18 .. 10^0 (:data:`GAP_BINS_PER_DECADE` bins per decade; bins half-open
  [a, b), the last one closed, as :func:`numpy.histogram`); ``gap_hist_below`` counts
  gaps < 10^-18 (including float gaps <= 0), ``gap_hist_above`` gaps > 1 (DCG);
* ``uncovered``: the share of the range not covered by any value. Put the K points of an
  equally spaced scale on the range, ``x_j = min + j (max - min)/(K - 1)``, j = 0..K-1,
  and give each a bin of width (max - min)/(K - 1) centred on it (K equal-width bins
  tiling [min - w/2, max + w/2]); a value falls in the bin of its nearest point,
  ``j = floor((v - min)/(max - min) (K - 1) + 1/2)``. ``uncovered`` = share of the K bins
  holding no value (0 for equally spaced values; values crowding into few bins leave
  others empty). Centring the bins on the equally spaced points, rather than cutting
  [min, max] itself into K bins of width (max - min)/K, keeps equally spaced values at
  bin centres, so float rounding cannot move them across bin edges (with the uncentred
  bins the j-th equally spaced value lies only j/(K - 1) bins widths past an edge, below
  float resolution for RBP(p=0.5)@30 with K = 2^30);
* ``max_deviation`` = max_i |(v_i - min)/(max - min) - (i - 1)/(K - 1)| and
  ``mean_abs_deviation`` (the mean of the same over i = 1..K): the distance between the
  [0, 1]-normalised value of the i-th distinct value and its unq position (i - 1)/(K - 1)
  (0 for equal spacing; the largest horizontal distance between the normalised values'
  rank curve and the diagonal).

With K = 1 the gap statistics are None and the rest 0. :func:`spacing_of_values` is the
plain numpy computation of the same quantities from an array of values (the reference of
the tests); :func:`value_distribution` gives the CDF of values over runs.
"""
from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from irscale.errors import MeasureError, OracleListError, warn
from irscale.scales.analysis import spacing_kernels as sk
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.oracle_form import LIST_LIMIT
from irscale.scales.tables.oracles import STREAM_RATE, OracleScale
from irscale.scales.tables.scale import Scale
from irscale.scales.tables.units import duration
from irscale.store.format import table_name
from irscale.store.reader import Store, open_store

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: Values per streaming block (small enough to stay in the allocator's heap and caches).
CHUNK = 1 << 20
#: Gap histogram: fixed log10 edges from 10^GAP_LOG_MIN to 10^0.
GAP_LOG_MIN = -18
GAP_BINS_PER_DECADE = 4
#: The gaps of a view (:func:`gap_histogram`: GET /v1/table, the page): every gap of scales
#: of at most GAP_WINDOWS * GAP_WINDOW values, or of tables of at most VIEW_EXACT_VALUES
#: stored entries (streamed once); else those within GAP_WINDOWS evenly spaced windows of
#: GAP_WINDOW ranks (rank oracles and closed forms: nothing is enumerated).
VIEW_EXACT_VALUES = 1 << 22
GAP_WINDOWS = 64
GAP_WINDOW = 4096


def gap_edges() -> np.ndarray:
    """The fixed log10-spaced edges of the gap histogram, 1e-18 .. 1."""
    nb = -GAP_LOG_MIN * GAP_BINS_PER_DECADE
    return 10.0 ** np.linspace(GAP_LOG_MIN, 0, nb + 1)


def _edge_lut(edges: np.ndarray) -> tuple[np.ndarray, int]:
    """Start of the bin search of a gap in [edges[0], edges[-1]) from its leading bits
    (``bits >> LUT_SHIFT``: exponent and 4 mantissa bits): per key, the last edge <= the
    smallest float64 with that key. Returns (lut, smallest key)."""
    sh = sk.LUT_SHIFT
    key_min = int(np.array([edges[0]]).view(np.uint64)[0]) >> sh
    key_max = int(np.array([edges[-1]]).view(np.uint64)[0]) >> sh
    keys = np.arange(key_min, key_max + 1, dtype=np.uint64)
    lows = (keys << np.uint64(sh)).view(np.float64)
    lut = np.maximum(np.searchsorted(edges, lows, side="right") - 1, 0).astype(np.int64)
    return lut, key_min


# -- the plain reference --------------------------------------------------------------------
def spacing_of_values(values: ArrayLike, counts: ArrayLike | None = None) -> dict:
    """Spacing statistics of sorted distinct ``values`` computed directly with numpy (all
    values in memory; the definitions are in the module docstring). ``counts`` (runs per
    value) only gives ``n_runs``. Used as the reference of :func:`spacing_stats`."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    k = int(v.size)
    if k == 0:
        raise ValueError("no values")
    edges = gap_edges()
    out = {"n_distinct": k, "n_runs": int(np.sum(counts)) if counts is not None else None,
           "min": float(v[0]), "max": float(v[-1])}
    if k == 1:
        out.update(_empty_gap_stats(edges))
        out.update(uncovered=0.0, max_deviation=0.0, mean_abs_deviation=0.0)
        return out
    g = np.diff(v)
    mean = float(g.mean())
    std = float(g.std())
    hist, _ = np.histogram(g, bins=edges)
    out.update(
        gap_mean=mean, gap_std=std, gap_cv=std / mean if mean > 0 else None,
        gap_min=float(g.min()), gap_max=float(g.max()), n_nonpositive_gaps=int((g <= 0).sum()),
        gap_hist_edges=edges.tolist(), gap_hist_counts=hist.astype(int).tolist(),
        gap_hist_below=int((g < edges[0]).sum()), gap_hist_above=int((g > edges[-1]).sum()),
    )
    span = v[-1] - v[0]
    t = (v - v[0]) / span
    dev = np.abs(t - np.arange(k) / float(k - 1))
    bins = np.clip(np.floor(t * float(k - 1) + 0.5).astype(np.int64), 0, k - 1)
    out.update(uncovered=1.0 - np.unique(bins).size / k, max_deviation=float(dev.max()),
               mean_abs_deviation=float(dev.mean()))
    return out


def _empty_gap_stats(edges) -> dict:
    return dict(gap_mean=None, gap_std=None, gap_cv=None, gap_min=None, gap_max=None, n_nonpositive_gaps=0,
                gap_hist_edges=edges.tolist(), gap_hist_counts=[0] * (edges.size - 1), gap_hist_below=0,
                gap_hist_above=0)


def _label(scale) -> dict:
    m = scale.measure
    return {"measure": str(m), "n": int(m.n), "rb": scale.rb}


def spacing_stats(scale: Scale, chunk: int = CHUNK) -> dict:
    """Spacing statistics of a :class:`~irscale.scales.tables.scale.Scale` (definitions in
    the module docstring), streamed over its values in blocks of ``chunk``. Returns a
    JSON-serialisable dict: ``measure``, ``n``, ``rb``, ``n_distinct``, ``n_runs``,
    ``min``, ``max``, ``gap_mean``, ``gap_std``, ``gap_cv``, ``gap_min``, ``gap_max``,
    ``n_nonpositive_gaps``, ``gap_hist_edges``, ``gap_hist_counts``, ``gap_hist_below``,
    ``gap_hist_above``, ``uncovered``, ``max_deviation``, ``mean_abs_deviation``,
    ``error_bound``, ``certified_min_gap``, ``seconds``."""
    t0 = time.perf_counter()
    K = int(scale.k)
    if K == 0:
        raise ValueError(f"{scale}: no values")
    vmin, vmax = scale.value_range()
    edges = gap_edges()
    lut, key_min = _edge_lut(edges)
    ist = np.zeros(sk.N_ISTATE, np.int64)
    ist[sk.I_LASTBIN] = -1
    fst = np.zeros(sk.N_FSTATE, np.float64)
    fst[sk.F_GMIN], fst[sk.F_GMAX] = np.inf, -np.inf
    hist = np.zeros(edges.size + 1, np.int64)
    span = vmax - vmin
    mu0 = span / (K - 1) if K > 1 else 0.0
    total = 0
    for vals, cnts in scale.value_blocks(chunk):
        sk.stats_block(vals, vmin, span if span > 0 else 1.0, K, mu0, edges, lut, key_min, ist, fst, hist)
        total += int(cnts.sum())
    seen = int(ist[sk.I_SEEN])
    if seen != K or total != scale.n_runs:
        raise RuntimeError(f"{scale}: streamed {seen} values and {total} runs, expected {K} and {scale.n_runs}")
    out = _label(scale)
    out.update(n_distinct=K, n_runs=total, min=vmin, max=vmax)
    if K == 1:
        out.update(_empty_gap_stats(edges))
        out.update(uncovered=0.0, max_deviation=0.0, mean_abs_deviation=0.0)
    else:
        ng = K - 1
        d1 = fst[sk.F_S1] / ng
        mean = mu0 + d1
        std = math.sqrt(max(fst[sk.F_S2] / ng - d1 * d1, 0.0))
        nbins = edges.size - 1
        out.update(
            gap_mean=mean, gap_std=std, gap_cv=std / mean if mean > 0 else None,
            gap_min=float(fst[sk.F_GMIN]), gap_max=float(fst[sk.F_GMAX]),
            n_nonpositive_gaps=int(ist[sk.I_NONPOS]),
            gap_hist_edges=edges.tolist(), gap_hist_counts=hist[:nbins].tolist(),
            gap_hist_below=int(hist[nbins]), gap_hist_above=int(hist[nbins + 1]),
            uncovered=1.0 - int(ist[sk.I_COVERED]) / K,
            max_deviation=float(fst[sk.F_DEVMAX]), mean_abs_deviation=float(fst[sk.F_DEVSUM] / K),
        )
    cert = scale.certificate
    out.update(error_bound=float(cert.error_bound), certified_min_gap=float(cert.min_gap),
               seconds=round(time.perf_counter() - t0, 3))
    return out


def value_distribution(scale: Scale, points: int = 2000, chunk: int = CHUNK) -> tuple[np.ndarray, np.ndarray]:
    """The distribution of the scale's values over its (feasible) runs, for plots.

    Returns ``(values, fraction_below)``: about ``points`` distinct values, increasing,
    and for each the fraction of runs (with multiplicity) whose value is <= it (the CDF
    at the value). The values are chosen evenly over the cumulative run count: for
    j = 1..points, the smallest value whose CDF reaches j/points; plus the minimum. The
    last pair is (max, 1.0). Streamed like :func:`spacing_stats`; rank oracles too big to
    list find the same points by counting (:meth:`OracleScale.cdf_points`)."""
    if points < 1:
        raise ValueError("points must be >= 1")
    n_runs = int(scale.n_runs)
    if isinstance(scale, OracleScale) and scale.k > LIST_LIMIT:      # counted, not listed
        j = np.arange(1, points + 1, dtype=np.int64)
        ranks, cum = scale.cdf_points(np.concatenate(([1], -(-j * n_runs // points))))
        ranks, first = np.unique(ranks, return_index=True)
        return scale.values_of_ranks(ranks), cum[first] / float(n_runs)
    st = np.zeros(4, np.int64)
    st[2] = 1
    out_v, out_c = [], []
    for vals, cnts in scale.value_blocks(chunk):
        idx = np.empty(min(vals.size, points + 1), np.int64)
        cum = np.empty_like(idx)
        k = sk.dist_block(cnts, points, n_runs, st, idx, cum)
        if k:
            out_v.append(vals[idx[:k]])
            out_c.append(cum[:k].copy())
    if int(st[1]) != n_runs:
        raise RuntimeError(f"{scale}: streamed {int(st[1])} runs, expected {n_runs}")
    v = np.concatenate(out_v)
    c = np.concatenate(out_c)
    return v, c / float(n_runs)


def value_distribution_of(values: ArrayLike, counts: ArrayLike, points: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """:func:`value_distribution` computed directly from sorted ``values`` and their run
    ``counts`` held in memory (reference for tests and small scales)."""
    v = np.asarray(values, dtype=np.float64)
    c = np.cumsum(np.asarray(counts, dtype=np.int64))
    n = int(c[-1])
    j = np.arange(1, points + 1, dtype=np.int64)
    targets = -(-j * n // points)                       # ceil(j * n / points)
    idx = np.unique(np.concatenate(([0], np.searchsorted(c, targets, side="left"))))
    return v[idx], c[idx] / float(n)


def store_spacing(store: Store | str | os.PathLike, measures: Iterable[str] | None = None, chunk: int = CHUNK,
                  progress: Callable[[dict], None] | None = None) -> list[dict]:
    """:func:`spacing_stats` of every table of a store (or of ``measures``), one dict per
    table; measures with one table for every recall base on their common scale (rb = N),
    the others on each stored recall-base vector. ``store`` is a
    :class:`~irscale.store.reader.Store` or a path. ``progress(dict)`` is called after each
    table."""
    if not hasattr(store, "scale"):
        store = open_store(store)
    every = measures is None
    if every:
        items = [(parse_measure(t["measure"]), t.get("rb_counts")) for t in store.tables()]
    else:
        items = [(parse_measure(name), None) for name in measures]
    out = []
    for m, table_rb in items:
        s = store.scale(m, rb=m.common_rb() if table_rb is None else table_rb)
        lo, hi = s.value_range()
        if not (math.isfinite(lo) and math.isfinite(hi)):
            what = table_name(str(m), table_rb)
            if not every:
                raise MeasureError(f"{what}: its values include {lo if not math.isfinite(lo) else hi} (runs that "
                                   f"never balance); spacing statistics need finite values")
            warn(f"{what} left out of the spacing statistics: its values are not all finite")
            continue
        if every and isinstance(s, OracleScale) and s.k > LIST_LIMIT:
            how = (f'irscale spacing --measures "{m}"' if table_rb is None or table_rb == m.table_rb(m.common_rb())
                   else f'spacing_stats(open_store(...).scale("{m}", rb={tuple(table_rb)}))')
            warn(f"{table_name(str(m), table_rb)} left out of the spacing statistics: a rank oracle of "
                          f"{s.k:,} distinct values (more than {LIST_LIMIT:,}), which stream band by band in about "
                          f"{duration(s.k / STREAM_RATE)}; ask for it by name: {how}")
            continue
        try:
            d = spacing_stats(s, chunk)
        except OracleListError as e:
            if not every:
                raise
            warn(f"{table_name(str(m), table_rb)} left out of the spacing statistics: {e}")
            continue
        if table_rb is not None:
            d["table"] = table_name(str(m), table_rb)
        out.append(d)
        if progress is not None:
            progress(d)
    return out


def gap_plan(scale: Scale, windows: int | None = None) -> tuple[str, int]:
    """How the gaps of ``scale`` are read, ``"all"``, ``"stream"`` (the stored entries) or ``"sampled"``, and
    how many values that reads."""
    k, layout = int(scale.k), getattr(scale.table, "layout", "")
    stored = k if layout == "implicit" else int(scale.table.n_entries)     # oracles and closed forms: 0
    if k <= GAP_WINDOWS * GAP_WINDOW:
        return "all", k
    return ("stream", stored) if 0 < stored <= VIEW_EXACT_VALUES else ("sampled", (windows or GAP_WINDOWS) * GAP_WINDOW)


def gap_histogram(scale: Scale, bins: int, kind: str, windows: int | None = None) -> dict:
    """The histogram of the gaps between consecutive distinct values of ``scale`` (a
    GapHistogram), read as :func:`gap_plan` says."""
    k, windows = int(scale.k), windows or GAP_WINDOWS
    plan, _ = gap_plan(scale, windows)
    if plan == "stream":
        gaps = np.diff(np.concatenate([np.zeros(0)] + [block for block, _ in scale.value_blocks()]))
    else:       # every rank, or windows of GAP_WINDOW consecutive ranks evenly spaced
        n, size = (1, k) if plan == "all" else (windows, GAP_WINDOW)
        ranks = np.linspace(1, k - size + 1, n).astype(np.int64)[:, None] + np.arange(size, dtype=np.int64)
        gaps = np.diff(scale.values_of_ranks(ranks.reshape(-1)).reshape(n, size), axis=1).reshape(-1)
    positive = gaps[gaps > 0]
    edges, counts = np.zeros(0), np.zeros(0, np.int64)
    if positive.size and kind == "log":
        a, b = float(np.log10(positive.min())), float(np.log10(positive.max()))
        if b - a < 1e-3:        # (nearly) equal gaps: one decade-tenth around them
            a, b = (a + b) / 2 - 0.05, (a + b) / 2 + 0.05
        counts, log_edges = np.histogram(np.log10(positive), bins=bins, range=(a, b))
        edges = 10.0 ** log_edges
    elif positive.size:
        counts, edges = np.histogram(positive, bins=bins, range=(0.0, float(positive.max())))
    stats = (gaps.min(), gaps.max(), gaps.mean(), np.median(gaps)) if gaps.size else (None,) * 4
    return {"scale": kind, "edges": edges.tolist(), "counts": counts.tolist(), "zero": int(gaps.size - positive.size),
            "used": int(gaps.size), "total": k - 1, "sampled": plan == "sampled",
            **{name: None if s is None else float(s) for name, s in zip(("min", "max", "mean", "median"), stats)}}
