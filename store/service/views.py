"""GET /v1/table: its parameters checked (:func:`view_params`) and the bounded view of one
scale they ask for (:func:`table_view`), whatever the size of its table."""
from __future__ import annotations

import numpy as np
import pydantic_core

from irscale.scales.tables.scale import Scale
from irscale.store.service.errors import RequestError
from irscale.store.service.limits import (
    DEFAULT_GAP_BINS,
    DEFAULT_VIEW_POINTS,
    MAX_GAP_BINS,
    MAX_RB_ITEMS,
    MAX_VIEW_POINTS,
    VIEW_PARAMETERS,
)
from irscale.store.service.validation import _short

#: Scales of at most GAP_WINDOWS * GAP_WINDOW values (each located in the table), or of
#: tables of at most VIEW_EXACT_VALUES entries (streamed once), have every gap counted;
#: the others, the gaps within :data:`GAP_WINDOWS` windows of :data:`GAP_WINDOW`
#: consecutive ranks, evenly spaced over the ranks.
VIEW_EXACT_VALUES = 1 << 22
GAP_WINDOWS = 64
GAP_WINDOW = 4096


def table_view(scale: Scale, points: int, bins: int, gaps: str) -> bytes:
    """The JSON of a :class:`~irscale.store.service.models.TableViewResponse` of ``scale``:
    the values at the first and last rank of ``min(points, K)`` bins of consecutive ranks,
    read with :meth:`~irscale.scales.tables.scale.Scale.values_of_ranks` (a few pages of the
    table per rank), and the histogram of the gaps (:func:`gap_histogram`)."""
    k = int(scale.k)
    m = min(points, k)
    cuts = (np.arange(m + 1, dtype=np.int64) * k) // m      # bin i: ranks cuts[i] + 1 .. cuts[i + 1]
    lo, hi = cuts[:-1] + 1, cuts[1:]
    values = scale.values_of_ranks(np.concatenate([lo, hi]))
    rb = list(scale.rb) if isinstance(scale.rb, tuple) else scale.rb
    return pydantic_core.to_json({
        "measure": str(scale.measure), "rb": rb, "k": k, "n_runs": int(scale.n_runs), "points": m,
        "exact": m == k, "rank_lo": lo.tolist(), "rank_hi": hi.tolist(), "value_lo": values[:m].tolist(),
        "value_hi": values[m:].tolist(), "gaps": gap_histogram(scale, bins, gaps)})


def gap_histogram(scale: Scale, bins: int, kind: str) -> dict:
    """The histogram of the gaps between consecutive distinct values of ``scale`` (see
    :class:`~irscale.store.service.models.GapHistogram`). Every gap when K <= :data:`GAP_WINDOWS` *
    :data:`GAP_WINDOW` (each value located with
    :meth:`~irscale.scales.tables.scale.Scale.values_of_ranks`) or when the table has
    at most :data:`VIEW_EXACT_VALUES` entries (streamed once with
    :meth:`~irscale.scales.tables.scale.Scale.value_blocks`; the table of a small
    recall base may hold few values among many entries), else the gaps within
    :data:`GAP_WINDOWS` evenly spaced windows of :data:`GAP_WINDOW` consecutive ranks."""
    k = int(scale.k)
    sampled = False
    if k <= GAP_WINDOWS * GAP_WINDOW:
        gaps = np.diff(scale.values_of_ranks(np.arange(1, k + 1, dtype=np.int64)))
    elif int(scale.table.n_entries) > VIEW_EXACT_VALUES:
        sampled = True
        starts = np.linspace(1, k - GAP_WINDOW + 1, GAP_WINDOWS).astype(np.int64)
        ranks = (starts[:, None] + np.arange(GAP_WINDOW, dtype=np.int64)[None, :]).reshape(-1)
        gaps = np.diff(scale.values_of_ranks(ranks).reshape(GAP_WINDOWS, GAP_WINDOW), axis=1).reshape(-1)
    else:
        parts, last = [], None
        for block, _ in scale.value_blocks():
            if block.size:
                parts.append(np.diff(block) if last is None else np.diff(block, prepend=last))
                last = block[-1]
        gaps = np.concatenate(parts) if parts else np.zeros(0)
    positive = gaps[gaps > 0]
    edges: np.ndarray = np.zeros(0)
    counts: np.ndarray = np.zeros(0, np.int64)
    if positive.size:
        if kind == "log":
            a, b = float(np.log10(positive.min())), float(np.log10(positive.max()))
            if b - a < 1e-3:        # (nearly) equal gaps: one decade-tenth around them
                a, b = (a + b) / 2 - 0.05, (a + b) / 2 + 0.05
            counts, log_edges = np.histogram(np.log10(positive), bins=bins, range=(a, b))
            edges = 10.0 ** log_edges
        else:
            counts, edges = np.histogram(positive, bins=bins, range=(0.0, float(positive.max())))
    stats = ((float(gaps.min()), float(gaps.max()), float(gaps.mean()), float(np.median(gaps)))
             if gaps.size else (None, None, None, None))
    return {"scale": kind, "edges": edges.tolist(), "counts": counts.tolist(),
            "zero": int(gaps.size - positive.size), "used": int(gaps.size), "total": k - 1, "sampled": sampled,
            **dict(zip(("min", "max", "mean", "median"), stats))}


def _view_integer(name: str, text: str, lo: int, hi: int) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or not lo <= int(text) <= hi:
        raise RequestError(f"{name} must be an integer {lo}..{hi}, got {_short(text)}",
                           [{"loc": name, "message": f"an integer {lo}..{hi}"}])
    return int(text)


def view_params(items: list[tuple[str, str]]) -> dict:
    """The parameters of GET /v1/table (query items ``(name, value)``) checked and typed:
    ``measure`` (required), ``rb`` (``5``, or per-grade counts ``3,2``; brackets or
    parentheses allowed), ``points`` (2..:data:`MAX_VIEW_POINTS`), ``bins``
    (1..:data:`MAX_GAP_BINS`), ``gaps`` (``log`` or ``linear``). Raises
    :class:`RequestError` (422) naming the first bad parameter: unknown or repeated,
    missing measure, a value of the wrong kind or range."""
    given: dict[str, str] = {}
    for name, value in items:
        if name not in VIEW_PARAMETERS:
            raise RequestError(f"unknown parameter {_short(name)} (the parameters are {', '.join(VIEW_PARAMETERS)})",
                               [{"loc": name[:40], "message": "unknown parameter"}])
        if name in given:
            raise RequestError(f"parameter {name!r} given twice", [{"loc": name, "message": "given twice"}])
        given[name] = value
    measure = given.get("measure", "").strip()
    if not measure:
        raise RequestError("measure: parameter required, e.g. /v1/table?measure=AP@10&rb=5",
                           [{"loc": "measure", "message": "parameter required"}])
    if len(measure) > 200:
        raise RequestError("measure: at most 200 characters", [{"loc": "measure", "message": "too long"}])
    rb: int | list[int] | None = None
    text = given.get("rb", "").strip()
    if text:
        inner = text[1:-1] if text[:1] + text[-1:] in ("()", "[]") else text
        parts = [part.strip() for part in inner.split(",")]
        if parts[-1] == "" and len(parts) > 1:      # "(3,)"
            parts.pop()
        if len(parts) > MAX_RB_ITEMS or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
            raise RequestError(f"rb must be an integer (the topic's recall base) or per-grade counts like 3,2; "
                               f"got {_short(text)}", [{"loc": "rb", "message": "an integer or counts like 3,2"}])
        counts = [int(p) for p in parts]
        rb = counts if len(counts) > 1 or inner != text else counts[0]
    gaps = given.get("gaps", "log")
    if gaps not in ("log", "linear"):
        raise RequestError(f"gaps must be 'log' or 'linear', got {_short(gaps)}",
                           [{"loc": "gaps", "message": "'log' or 'linear'"}])
    return {"measure": measure, "rb": rb,
            "points": _view_integer("points", given.get("points", str(DEFAULT_VIEW_POINTS)), 2, MAX_VIEW_POINTS),
            "bins": _view_integer("bins", given.get("bins", str(DEFAULT_GAP_BINS)), 1, MAX_GAP_BINS),
            "gaps": gaps}
