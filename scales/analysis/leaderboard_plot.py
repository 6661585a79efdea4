"""The leaderboard drawn (:meth:`~irscale.scales.analysis.leaderboard_output.Leaderboard.plot`):
one panel per measure, the systems on the vertical axis in leaderboard order (best at the
top), the scaled mean of each with its confidence interval (the board's, Student's t, cut
to [0, 1]) and, just below it, the raw mean with the Student's t interval of the raw scores
at the same level (a second, hollow marker). A measure without scale shows its raw means
only. With a baseline, its row is written in bold and a dotted line marks its scaled (or
raw) mean.

The figure is made with matplotlib's object-oriented API on the Agg canvas (no pyplot, no
change of the user's backend), imported when a plot is asked for; the format is the
path's suffix (:data:`PLOT_FORMATS`), checked with the path's folder before anything is
drawn, and the file is written atomically.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from irscale.errors import OutputError
from irscale.scales.analysis.inference import t_interval
from irscale.scales.runs.scores import check_writable, write_atomically

#: Figure formats by file suffix.
PLOT_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
#: Panels side by side before a new row of panels.
PANELS_PER_ROW = 3
SCALED_COLOUR, RAW_COLOUR = "#1f5fa8", "#c0562b"


def check_plot_path(path: str | os.PathLike) -> str:
    """The figure format of ``path`` (by suffix), failing (:class:`OutputError`) before
    any work when it is another suffix or the path cannot be written."""
    fmt = PLOT_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise OutputError(f"{path}: unknown figure format; use a name ending in {', '.join(PLOT_FORMATS)}")
    check_writable(path)
    return fmt


def _raw_interval(board: Any, measure: str, runs: list[str]) -> tuple[np.ndarray, np.ndarray]:
    frame = board.matrices.get(measure, {}).get("raw")
    if frame is None or frame.shape[0] < 2:
        return np.full(len(runs), np.nan), np.full(len(runs), np.nan)
    return t_interval(frame[runs].to_numpy(), board.confidence)


def _errors(mean: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Error bar lengths below and above each mean (0 where there is no interval)."""
    return np.nan_to_num(np.vstack([mean - low, high - mean]), nan=0.0).clip(min=0.0)


def _panel(ax: Any, board: Any, summary: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    rows = board.table[board.table["measure"] == summary.measure]
    runs = rows["run"].tolist()
    y = np.arange(len(runs), dtype=float)
    raw = rows["raw_mean"].to_numpy(float)
    raw_low, raw_high = _raw_interval(board, summary.measure, runs)
    level = f"{board.confidence:.0%} CI"
    offset = 0.18 if summary.scaled else 0.0
    if summary.scaled:
        scaled = rows["scaled_mean"].to_numpy(float)
        ax.errorbar(scaled, y - offset, xerr=_errors(scaled, rows["ci_low"].to_numpy(float),
                                                     rows["ci_high"].to_numpy(float)),
                    fmt="o", color=SCALED_COLOUR, markersize=4, elinewidth=1.2, capsize=2,
                    label=f"scaled mean, {level}")
    # raw scores beyond [0, 1] (DCG): on an axis of their own, at the top
    unit = bool(np.nanmin(raw_low, initial=0.0) >= -0.5 and np.nanmax(raw_high, initial=0.0) <= 1.5
                and np.nanmin(raw) >= 0 and np.nanmax(raw) <= 1)
    raw_ax = ax if unit or not summary.scaled else ax.twiny()
    raw_ax.errorbar(raw, y + offset, xerr=_errors(raw, raw_low, raw_high), fmt="D", markerfacecolor="white",
                    color=RAW_COLOUR, markersize=3.5, elinewidth=0.8, capsize=1.5, label=f"raw mean, {level}")
    if raw_ax is not ax:
        raw_ax.set_xlabel("raw", color=RAW_COLOUR, fontsize=8)
        raw_ax.tick_params(axis="x", colors=RAW_COLOUR, labelsize=7)
    if board.baseline is not None and board.baseline in runs:
        at = runs.index(board.baseline)
        ax.axvline(scaled[at] if summary.scaled else raw[at], color="grey", linestyle=":", linewidth=1)
    ax.set_yticks(y)
    ax.set_yticklabels(runs, fontsize=7 if len(runs) > 30 else 8)
    for tick, run in zip(ax.get_yticklabels(), runs):
        if run == board.baseline:
            tick.set_fontweight("bold")
    ax.set_ylim(len(runs) - 0.5, -0.5)                       # best at the top
    title = summary.label + ("" if summary.scaled else " (NO SCALE: raw only)")
    ax.set_title(f"{title}\n{summary.topics} topics"
                 + (f", {summary.left_out} left out ({summary.left_out_why})" if summary.left_out else ""),
                 fontsize=9, loc="left")
    ax.grid(axis="x", linewidth=0.4, alpha=0.5)
    ax.tick_params(axis="x", labelsize=7)
    ax.xaxis.set_major_locator(MaxNLocator(6))
    ax.set_xlabel("mean over topics" if raw_ax is ax else "scaled", fontsize=8,
                  color="black" if raw_ax is ax else SCALED_COLOUR)


def plot(board: Any, path: str | os.PathLike) -> None:
    """Draw ``board`` (a :class:`~irscale.scales.analysis.leaderboard_output.Leaderboard`)
    to ``path``: ``.png``, ``.pdf`` or ``.svg`` (module docstring); an unknown suffix or a
    path that cannot be written is an :class:`OutputError` before anything is drawn."""
    fmt = check_plot_path(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = list(board.measures)
    if not panels:
        raise OutputError(f"{path}: the leaderboard has no measure to draw")
    columns = min(PANELS_PER_ROW, len(panels))
    lines = -(-len(panels) // columns)
    n_runs = max(1, len(board.runs))
    longest = max((len(r) for r in board.runs), default=4)
    width = columns * (3.2 + 0.055 * min(longest, 40))
    height = 0.6 + lines * (1.2 + 0.2 * n_runs)
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(lines, columns, squeeze=False)
    for ax, summary in zip(axes.ravel(), panels):
        _panel(ax, board, summary)
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    handles: dict[str, Any] = {}
    for ax in fig.axes:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(name, handle)
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncols=len(handles), fontsize=8,
               frameon=False)
    against = f", against {board.baseline} (bold, dotted line)" if board.baseline is not None else ""
    fig.suptitle(f"Leaderboard of {len(board.runs)} runs{against}", fontsize=10)
    write_atomically(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=150))


__all__ = ["PLOT_FORMATS", "check_plot_path", "plot"]
