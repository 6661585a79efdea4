"""GET /v1/table: its parameters checked (:func:`check_view_names`, :func:`view_rb`; FastAPI
checks the others) and the bounded view of one scale (:func:`table_view`)."""
from __future__ import annotations

import numpy as np
import pydantic_core

from irscale.scales.tables.scale import Scale
from irscale.service.errors import RequestError
from irscale.service.errors import short as _short
from irscale.service.limits import MAX_QUOTED, MAX_RB_ITEMS, VIEW_PARAMETERS

#: Every gap is counted for scales of at most GAP_WINDOWS * GAP_WINDOW values, or tables of
#: at most VIEW_EXACT_VALUES stored entries (streamed once); else (rank oracles and closed
#: forms included: nothing is enumerated) those within GAP_WINDOWS evenly spaced windows.
VIEW_EXACT_VALUES = 1 << 22
GAP_WINDOWS = 64
GAP_WINDOW = 4096


def gap_plan(scale: Scale, windows: int | None = None) -> tuple[str, int]:
    """How the gaps of ``scale`` are read, and how many values that reads: ``"all"`` (every
    rank located), ``"stream"`` (the stored entries streamed once) or ``"sampled"`` (in
    ``windows`` windows, default :data:`GAP_WINDOWS`)."""
    k, layout = int(scale.k), getattr(scale.table, "layout", "")
    stored = k if layout == "implicit" else int(scale.table.n_entries)     # oracles and closed forms store none
    if k <= GAP_WINDOWS * GAP_WINDOW:
        return "all", k
    return ("stream", stored) if 0 < stored <= VIEW_EXACT_VALUES else ("sampled", (windows or GAP_WINDOWS) * GAP_WINDOW)


def table_view(scale: Scale, points: int, bins: int, gaps: str, windows: int | None = None) -> bytes:
    """The JSON of a :class:`~irscale.service.models.TableViewResponse` of ``scale``: the
    values at the first and last rank of ``min(points, K)`` bins of consecutive ranks, and
    the histogram of the gaps (:func:`gap_histogram`)."""
    k = int(scale.k)
    m = min(points, k)
    cuts = (np.arange(m + 1, dtype=np.int64) * k) // m      # bin i: ranks cuts[i] + 1 .. cuts[i + 1]
    lo, hi = cuts[:-1] + 1, cuts[1:]
    values = scale.values_of_ranks(np.concatenate([lo, hi]))
    rb = list(scale.rb) if isinstance(scale.rb, tuple) else scale.rb
    return pydantic_core.to_json({
        "measure": str(scale.measure), "rb": rb, "k": k, "n_runs": int(scale.n_runs), "points": m,
        "exact": m == k, "rank_lo": lo.tolist(), "rank_hi": hi.tolist(), "value_lo": values[:m].tolist(),
        "value_hi": values[m:].tolist(), "gaps": gap_histogram(scale, bins, gaps, windows)})


def gap_histogram(scale: Scale, bins: int, kind: str, windows: int | None = None) -> dict:
    """The histogram of the gaps between consecutive distinct values of ``scale`` (see
    :class:`~irscale.service.models.GapHistogram`), read as :func:`gap_plan` says."""
    k, windows = int(scale.k), windows or GAP_WINDOWS
    plan, _ = gap_plan(scale, windows)
    if plan == "all":
        gaps = np.diff(scale.values_of_ranks(np.arange(1, k + 1, dtype=np.int64)))
    elif plan == "sampled":
        starts = np.linspace(1, k - GAP_WINDOW + 1, windows).astype(np.int64)
        ranks = (starts[:, None] + np.arange(GAP_WINDOW, dtype=np.int64)[None, :]).reshape(-1)
        gaps = np.diff(scale.values_of_ranks(ranks).reshape(windows, GAP_WINDOW), axis=1).reshape(-1)
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
            "zero": int(gaps.size - positive.size), "used": int(gaps.size), "total": k - 1,
            "sampled": plan == "sampled",
            **dict(zip(("min", "max", "mean", "median"), stats))}


def check_view_names(items: list[tuple[str, str]]) -> None:
    """Raise :class:`RequestError` (422) for a query item ``(name, value)`` of GET /v1/table
    whose name is unknown or given twice (FastAPI checks the values)."""
    seen: set[str] = set()
    for name, _ in items:
        if name not in VIEW_PARAMETERS:
            raise RequestError(f"unknown parameter {_short(name)} (the parameters are {', '.join(VIEW_PARAMETERS)})",
                               [{"loc": name[:MAX_QUOTED], "message": "unknown parameter"}])
        if name in seen:
            raise RequestError(f"parameter {name!r} given twice", [{"loc": name, "message": "given twice"}])
        seen.add(name)


def view_rb(text: str | None) -> int | list[int] | None:
    """The ``rb`` of GET /v1/table: ``5``, or per-grade counts ``3,2`` (brackets or
    parentheses allowed, which make a list of counts even of one: ``(3)``)."""
    text = (text or "").strip()
    if not text:
        return None
    inner = text[1:-1] if text[:1] + text[-1:] in ("()", "[]") else text
    parts = [part.strip() for part in inner.split(",")]
    if parts[-1] == "" and len(parts) > 1:      # "(3,)"
        parts.pop()
    if len(parts) > MAX_RB_ITEMS or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
        raise RequestError(f"rb must be an integer (the topic's recall base) or per-grade counts like 3,2; "
                           f"got {_short(text)}", [{"loc": "rb", "message": "an integer or counts like 3,2"}])
    counts = [int(p) for p in parts]
    return counts if len(counts) > 1 or inner != text else counts[0]
