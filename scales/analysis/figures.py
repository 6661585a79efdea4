"""Figures of the spacing analysis (SPEC section 6): value distributions (values against
the fraction of runs), the 16 binary runs of length 4 on each measure's scale, and the
Hasse diagram of the run order.

Every function draws with matplotlib's Agg backend (no display needed), saves the figure
as ``<out_prefix>.png`` and ``<out_prefix>.svg`` and returns the two paths.

>>> from irscale.scales.analysis import figures                       # doctest: +SKIP
>>> figures.plot_hasse("/tmp/figs/hasse4")                   # doctest: +SKIP
['/tmp/figs/hasse4.png', '/tmp/figs/hasse4.svg']
"""
from __future__ import annotations

import dataclasses
import itertools
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError
from irscale.scales.analysis.matrices import matrices, standardised
from irscale.scales.analysis.spacing import value_distribution
from irscale.scales.measures.parse import parse_measure
from irscale.scales.runs.standardize import reference_matrix
from irscale.scales.tables.build import scale
from irscale.scales.tables.scale import Scale

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

PAPER_MEASURES = ("P", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "RR", "DCG(b=2)", "DCG(b=10)")
RUN4_MEASURES = ("P", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(b=2)")
#: Largest run space :func:`plot_runs_length4` draws (5 grades at length 4: 625 runs).
MAX_RUNS_DRAWN = 1024
#: Largest run space whose runs are labelled (binary runs, truncated binary rankings);
#: larger ones (graded runs) are drawn as markers and lines only.
MAX_RUNS_LABELLED = 32
_LABEL_PT, _PANEL_W_IN, _XLO, _XHI = 7.0, 11.6, -0.03, 1.03      # label font, panel width (in), x range

_RC = {"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 9,
       "xtick.labelsize": 9, "ytick.labelsize": 9, "svg.fonttype": "none"}


def _plt():
    import matplotlib
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def _save(fig, out_prefix) -> list[str]:
    out_prefix = os.fspath(out_prefix)
    folder = os.path.dirname(out_prefix)
    if folder:
        os.makedirs(folder, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        path = f"{out_prefix}.{ext}"
        fig.savefig(path, dpi=150 if ext == "png" else None)
        paths.append(path)
    _plt().close(fig)
    return paths


def memory_scale(name: str) -> Scale:
    """In-memory :class:`~irscale.scales.tables.scale.Scale` of ``name`` ("M@N");
    RB-dependent measures on their common scale (rb = N). The default ``get_scale``."""
    m = parse_measure(name)
    return scale(m, rb=m.common_rb())


def _run_label(run) -> str:
    return "".join(str(int(x)) for x in run)


# -- value distributions ---------------------------------------------------------------------
def value_distribution_lines(get_scale: Callable[[str], Scale | None] | None = None,
                             measures: Iterable[str] = PAPER_MEASURES, ns: Sequence[int] = (5, 10, 20, 30),
                             points: int = 2000) -> dict[str, list[dict]]:
    """The data of :func:`plot_value_distributions`: for each measure (family name without
    the cutoff) a list of lines, one per N whose scale ``get_scale("M@N")`` returns (None:
    no table, no line), each a dict of ``n``, ``k`` (distinct values), ``fraction`` (x: the
    cumulative fraction of runs, count of runs with value <= y over all runs, increasing
    to 1) and ``value`` (y: the measure's distinct values, increasing), from
    :func:`~irscale.scales.analysis.spacing.value_distribution` (about ``points`` values,
    chosen evenly over the run count). Measures without any line are left out."""
    get_scale = memory_scale if get_scale is None else get_scale
    out = {}
    for m in measures:
        lines = []
        for n in ns:
            s = get_scale(f"{m}@{n}")
            if s is None:
                continue
            v, f = value_distribution(s, points)
            lines.append({"n": int(n), "k": int(s.k), "fraction": f, "value": v})
        if lines:
            out[m] = lines
    return out


def plot_value_distributions(get_scale: Callable[[str], Scale | None] | None = None,
                             measures: Iterable[str] = PAPER_MEASURES, ns: Sequence[int] = (5, 10, 20, 30), *,
                             out_prefix: str | os.PathLike, points: int = 2000) -> list[str]:
    """Values against the fraction of runs: one panel per measure, one line per N, the
    measure's distinct values (y) against the cumulative fraction of all runs whose value
    is <= y (x: cumulative run count / number of runs), as a step function (data of
    :func:`value_distribution_lines`). ``get_scale("M@N")`` returns the Scale to use (store
    or in memory; default :func:`memory_scale`), or None when there is no table for it
    (that line, and a measure without any line, is left out). Measures whose values exceed
    1 (DCG: values grow with N) are shown as value / (max value at that N), which the axis
    label says. Raises ValueError when no measure has a line."""
    data = value_distribution_lines(get_scale, measures, ns, points)
    if not data:
        raise ValueError("no scale to draw: get_scale gave None for every measure and N")
    plt = _plt()
    measures = list(data)
    all_ns = sorted({line["n"] for lines in data.values() for line in lines})
    colors = dict(zip(all_ns, plt.get_cmap("viridis")(np.linspace(0.85, 0.0, len(all_ns)))))
    ncols = min(4, len(measures) + 1)
    nrows = -(-(len(measures) + 1) // ncols)
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 3.5 * nrows), squeeze=False)
        flat = axes.ravel()
        for ax, m in zip(flat, measures):
            lines = data[m]
            norm = any(line["value"][-1] > 1 for line in lines)     # values growing with N: compare shapes
            for line in lines:
                v, f = line["value"], line["fraction"]
                y = v / v[-1] if norm and v[-1] > 0 else v
                # the value held over (previous fraction, fraction]: a quantile function
                ax.plot(np.concatenate(([0.0], f)), np.concatenate(([y[0]], y)), drawstyle="steps-pre",
                        color=colors[line["n"]], lw=1.4, label=f"N = {line['n']}  (K = {line['k']:,})")
            ax.set_title(f"{m}@N")
            ax.set_xlabel("fraction of runs (cumulative)")
            ax.set_ylabel(f"{m}@N / max {m}@N" if norm else f"value of {m}@N")
            ax.set_xlim(0, 1.0)
            ax.grid(alpha=0.3)
            ax.legend(loc="best", fontsize=7.5, frameon=True, framealpha=0.85)
        note = flat[len(measures)]
        note.axis("off")
        note.text(0.02, 0.95,
                  "Values against the fraction of runs:\neach measure's values over all runs\n"
                  "of length N (RB-dependent measures\nat RB = N).\n\n"
                  "x: fraction of runs (with multiplicity)\nwhose value is ≤ y.\n"
                  "y: a distinct value of the measure\n(values that grow with N, as DCG's,\n"
                  "divided by their maximum at that N).\n\n"
                  f"Step function through ~{points} values\nper line, evenly spaced in the run count.\n"
                  "K: number of distinct values.",
                  va="top", ha="left", fontsize=9, transform=note.transAxes)
        for ax in flat[len(measures) + 1:]:
            ax.axis("off")
        fig.suptitle("Value distributions: where the values of each measure lie", fontsize=13)
        fig.tight_layout()
        return _save(fig, out_prefix)


# -- the 16 runs of length 4 --------------------------------------------------------------------
def _spread(xs, w, lo, hi):
    """Positions close to sorted targets ``xs`` with neighbours at least ``w`` apart
    (clusters of overlapping items are centred on their targets' mean), kept in [lo, hi]."""
    clusters = []  # [first index, size, sum of targets]
    for i, x in enumerate(xs):
        clusters.append([i, 1, float(x)])
        while len(clusters) > 1:
            a, b = clusters[-2], clusters[-1]
            end_a = a[2] / a[1] + w * (a[1] - 1) / 2
            start_b = b[2] / b[1] - w * (b[1] - 1) / 2
            if start_b - end_a >= w:
                break
            a[1] += b[1]
            a[2] += b[2]
            clusters.pop()
    out = np.empty(len(xs))
    for first, size, total in clusters:
        start = total / size - w * (size - 1) / 2
        start = min(max(start, lo), hi - w * (size - 1))
        out[first:first + size] = start + w * np.arange(size)
    return out


def _at_length(name: str, n: int):
    """The measure ``name`` (a full name, "nDCG(b=2)@10", or a family, "RBP(p=0.5)") with
    cutoff ``n``, its parameters kept."""
    if "@" in name:
        return dataclasses.replace(parse_measure(name), n=n)
    return parse_measure(f"{name}@{n}")


def length4_measures(measures: Iterable[str], n: int = 4, max_runs: int = MAX_RUNS_DRAWN
                     ) -> tuple[list[str], list[tuple[str, str]]]:
    """The measures of :func:`plot_runs_length4` for ``measures`` (full names such as those
    of a scores table, or families): each at length ``n`` with its parameters
    (nDCG(b=2)@10 -> nDCG(b=2)@4; names that meet there are drawn once), and the ones
    left out with the reason: measures without a common scale (per-topic tables, e.g.
    Twist), run spaces of more than ``max_runs`` runs, or no scale at length ``n``."""
    kept, left = [], []
    for name in dict.fromkeys(str(x) for x in measures):
        try:
            m = _at_length(name, n)
            if not m.has_common_scale():
                raise IrscaleError("per-topic tables: no scale without a topic's recall base")
            if m.id_count() > max_runs:
                raise IrscaleError(f"{m.id_count():,} runs of length {n}, too many to draw")
            scale(m, rb=m.common_rb())
        except IrscaleError as exc:
            left.append((name, str(exc).split(": ", 1)[-1] if str(exc).startswith(name) else str(exc)))
            continue
        if str(m) not in kept:
            kept.append(str(m))
    return kept, left


def _run_labels(runs: np.ndarray) -> list[str]:
    """Relevance strings, rank 1 first; a truncated ranking stops at its last document
    (the empty ranking is "∅")."""
    return ["".join(str(int(x)) for x in r if x >= 0) or "∅" for r in runs]


def runs_length4_data(measures: Iterable[str] = RUN4_MEASURES, n: int = 4) -> list[dict]:
    """For each measure (family names or full names, at length ``n`` by
    :func:`length4_measures`' rule): every run of its run space at length ``n`` (binary
    runs, graded runs with grades 0..G, or truncated rankings of length 0..n; r_1 first,
    in run id order), their values (RB-dependent measures at their common recall base), unq
    ranks, K, the values normalised to [0, 1] by (v - min)/(max - min) and the unq
    positions (rank - 1)/(K - 1); ``levels`` and ``run_space`` say which runs these are."""
    out = []
    for m in measures:
        mm = _at_length(str(m), n)
        rb = mm.common_rb()
        s = scale(mm, rb=rb)
        ids = np.arange(mm.id_count(), dtype=np.int64)
        runs = np.asarray(mm.runs_of_ids(ids)).astype(np.int64)
        ranks = s.rank_ids(ids)
        vals = s.values[ranks - 1]
        span = vals.max() - vals.min()
        name = str(mm).rsplit("@", 1)[0] if "@" in str(m) else str(m)      # the family as given
        out.append(dict(measure=str(mm), name=name, rb=rb, k=s.k, runs=runs, ids=ids,
                        labels=_run_labels(runs), levels=mm.levels, run_space=mm.run_space,
                        values=vals, ranks=ranks, x_value=(vals - vals.min()) / span if span > 0 else 0 * vals,
                        x_unq=(ranks - 1) / (s.k - 1) if s.k > 1 else 0.0 * ranks))
    return out


def runs_description(d: dict, brief: bool = False) -> str:
    """What the runs of one :func:`runs_length4_data` entry are, in words (``brief``:
    without the length, for a panel title)."""
    n, count = d["runs"].shape[1], len(d["runs"])
    length = "" if brief else f" of length {n}"
    if d["run_space"] == "truncated":
        return f"{count} {'binary ' if d['levels'] == 2 else ''}rankings of length 0 to {n}"
    if d["levels"] > 2:
        return f"{count} graded runs{length} with grades 0–{d['levels'] - 1}"
    return f"{count} binary runs{length}"


def _label_width(n: int) -> float:
    """Width of a run's label in x units of a :func:`plot_runs_length4` panel."""
    return (n * 0.62 * _LABEL_PT + 3) / (_PANEL_W_IN * 72.0) * (_XHI - _XLO)


def _labelled(d: dict) -> bool:
    """Whether a panel's runs are labelled: few runs, and the groups of tied runs fit side
    by side."""
    return (len(d["runs"]) <= MAX_RUNS_LABELLED
            and np.unique(d["ranks"]).size * _label_width(d["runs"].shape[1]) <= _XHI - _XLO)


def plot_runs_length4(out_prefix: str | os.PathLike, measures: Iterable[str] = RUN4_MEASURES) -> list[str]:
    """The runs of length 4 on each measure's scale (:func:`runs_length4_data`; binary runs
    by default): one row per measure; the upper line places each run at its value on a
    [min, max]-normalised axis, the lower line at its unq position (rank - 1)/(K - 1)
    (equally spaced ranks), and a line joins each run's two positions (coloured by its
    number of relevant documents). Tied runs are stacked, labelled by their relevance
    strings (rank 1 first), when the panel has at most :data:`MAX_RUNS_LABELLED` runs whose
    groups fit side by side; larger run spaces (graded runs: 81 with grades 0-2) are drawn
    as markers and lines only, which the panel's title says. RB-dependent measures at
    their common recall base (AP with RB = 4)."""
    plt = _plt()
    from matplotlib.lines import Line2D
    data = runs_length4_data(measures)
    if not data:
        raise ValueError("no measure to draw")
    n = max(d["runs"].shape[1] for d in data)
    cmap = plt.get_cmap("plasma")
    colors = [cmap(0.85 * c / n) for c in range(n + 1)]
    fs = _LABEL_PT
    line_pts = fs * 1.15                       # stacked label pitch, points
    half = 11.0                                # distance of each line from the panel middle, points
    top, bottom, left, right = 1.0, 0.75, 0.95, 0.45
    ax_w_in, fig_w = _PANEL_W_IN, _PANEL_W_IN + left + right
    xlo, xhi = _XLO, _XHI
    wlab = _label_width(n)
    labelled = [_labelled(d) for d in data]
    heights = [(2 * (half + 7 + (max(np.unique(d["ranks"], return_counts=True)[1]) if lab else 0.5) * line_pts)
                + 8) / 72.0 for d, lab in zip(data, labelled)]
    fig_h = top + bottom + sum(h + 0.42 for h in heights)
    with plt.rc_context(_RC):
        fig = plt.figure(figsize=(fig_w, fig_h))
        b = fig_h - top
        for i, (d, lab, ax_h_in) in enumerate(zip(data, labelled, heights)):
            b -= ax_h_in + 0.42
            ax = fig.add_axes([left / fig_w, b / fig_h, ax_w_in / fig_w, ax_h_in / fig_h])
            H = ax_h_in * 72.0                       # y data units = points
            ax.set_xlim(xlo, xhi)
            ax.set_ylim(0, H)
            y_val, y_unq = H / 2 + half, H / 2 - half
            for y in (y_val, y_unq):
                ax.plot([0, 1], [y, y], color="0.55", lw=0.8, zorder=1)
            pop = (d["runs"] > 0).sum(axis=1)
            many = len(pop) > MAX_RUNS_LABELLED
            for j in range(len(pop)):
                ax.plot([d["x_value"][j], d["x_unq"][j]], [y_val, y_unq], color=colors[pop[j]],
                        lw=0.6 if many else 0.9, alpha=0.5 if many else 0.75, zorder=2)
            for xs, y in ((d["x_value"], y_val), (d["x_unq"], y_unq)):
                ax.scatter(xs, np.full(len(pop), y), s=9 if many else 14, c=[colors[p] for p in pop], zorder=3,
                           edgecolors="k", linewidths=0.4)
            groups = defaultdict(list)             # tied runs share a rank; listed by run id, descending
            for j in np.argsort(-d["ids"], kind="stable"):
                groups[int(d["ranks"][j])].append(j)
            keys = sorted(groups)
            for xs, y0, sign in ((d["x_value"], y_val, 1), (d["x_unq"], y_unq, -1)) if lab else ():
                gx = np.array([xs[groups[k][0]] for k in keys])
                lx = _spread(gx, wlab, xlo + wlab / 2, xhi - wlab / 2)
                for k, x_marker, x_lab in zip(keys, gx, lx):
                    base = y0 + sign * 7
                    if abs(x_lab - x_marker) > 1e-9:
                        ax.plot([x_marker, x_lab], [y0 + sign * 2, base], color="0.6", lw=0.5, zorder=1)
                    for q, j in enumerate(groups[k]):
                        ax.text(x_lab, base + sign * (q + 0.5) * line_pts, d["labels"][j], ha="center",
                                va="center", fontsize=fs, family="monospace", color="0.1")
            ax.text(1.035, y_val, "value", fontsize=8, color="0.35", va="center", ha="left", clip_on=False)
            ax.text(1.035, y_unq, "unq", fontsize=8, color="0.35", va="center", ha="left", clip_on=False)
            rb = f", RB = {d['rb']}" if d["rb"] is not None else ""
            tied = sum(len(g) for g in groups.values() if len(g) > 1)
            ax.set_title(f"{d['measure']}{rb}: {runs_description(d, brief=True)}, K = {d['k']} distinct values"
                         + (f"  ({tied} of {len(pop)} runs share their value with another run)" if tied else
                            "  (no ties)") + ("" if lab else ";  not labelled"), loc="left", fontsize=10)
            for sp in ("left", "right", "top"):
                ax.spines[sp].set_visible(False)
            ax.set_yticks([])
            ax.set_xticks(np.linspace(0, 1, 5))
            ax.grid(axis="x", alpha=0.25)
            if i == len(data) - 1:
                ax.set_xlabel("upper line (value): (value − min)/(max − min);    "
                              "lower line (unq): (rank − 1)/(K − 1), equally spaced")
            else:
                ax.tick_params(labelbottom=False)
        handles = [Line2D([], [], color=colors[c], marker="o", mec="k", mew=0.4, lw=1.2, label=f"{c}")
                   for c in range(n + 1)]
        fig.text(left / fig_w, 1 - 0.3 / fig_h, f"The runs of length {n} on each measure's raw scale and on its "
                 f"unq interval scale (labels: relevance of ranks 1..{n}, left to right)",
                 fontsize=12, ha="left", va="center")
        fig.legend(handles=handles, title=None, ncol=n + 1, loc="center left",
                   bbox_to_anchor=(left / fig_w + 0.26, 1 - 0.66 / fig_h), fontsize=8, frameon=False,
                   handlelength=1.8, columnspacing=1.2)
        fig.text(left / fig_w, 1 - 0.66 / fig_h, "colour: relevant documents (grade ≥ 1) in the run", fontsize=9,
                 ha="left", va="center")
        return _save(fig, out_prefix)


def length4_figures(measures: Iterable[str], folder: str | os.PathLike, n: int = 4) -> list[tuple]:
    """The figures of runs of length ``n`` for the measures analysed (full names): the
    runs on each measure's scale (:func:`plot_runs_length4`, ``runs-length4``) and the
    Hasse diagram of binary runs (:func:`plot_hasse`, ``hasse4``), drawn into ``folder``.
    Returns (caption, PNG file name or None, note) per figure: the note says what is
    shown and which measures are left out and why (None: the figure is left out)."""
    folder = os.fspath(folder)
    names = [str(m) for m in dict.fromkeys(measures)]
    shown, left = length4_measures(names, n)
    left_text = ("" if not left else " Left out: " + "; ".join(f"{m} ({why})" for m, why in left) + ".")
    if not shown:
        return [(f"Runs of length {n}", None, f"No figure of runs of length {n}: no measure analysed can be "
                 f"evaluated there.{left_text}")]
    data = runs_length4_data(shown, n)
    kinds: dict = {}
    for d in data:
        kinds.setdefault((runs_description(d), _labelled(d)), []).append(d["measure"])
    parts = [f"{', '.join(ms)} over the {what}" + ("" if lab else ", as markers and lines only (too many runs "
                                                          "to label)") for (what, lab), ms in kinds.items()]
    rbs = ", ".join(str(r) for r in dict.fromkeys(d["rb"] for d in data if d["rb"] is not None))
    rb = f" (RB-dependent ones at their common recall base, RB = {rbs})" if rbs else ""
    path = plot_runs_length4(os.path.join(folder, f"runs-length{n}"), shown)
    out = [(f"Runs of length {n} under {', '.join(shown)}: each run placed by its value (upper line) and by its "
            "unq rank (lower line)", os.path.basename(path[0]),
            f"The measures analysed, at length {n} with their parameters{rb}: " + "; ".join(parts) + "."
            + left_text)]
    binary = [d["measure"] for d in data if d["levels"] == 2 and d["run_space"] == "fixed"]
    other = [d["measure"] for d in data if d["measure"] not in binary]
    if not binary:
        return out + [("Hasse diagram", None, f"No Hasse diagram: it orders binary runs of length {n}, and the "
                       f"measures drawn ({', '.join(other)}) have other runs (graded runs or rankings of length 0 "
                       f"to {n}), whose order has too many elements to draw readably.")]
    path = plot_hasse(os.path.join(folder, f"hasse{n}"), n)
    note = (f"The partial order of the {2 ** n} binary runs of length {n}, the runs of {', '.join(binary)}: "
            "a ≤ b when, for every k, the top k of a hold at most as many relevant documents as the top k of b.")
    if other:
        note += (" " + ", ".join(f"{d['measure']} ({runs_description(d)})" for d in data if d["measure"] in other)
                 + f" {'has' if len(other) == 1 else 'have'} other runs, not in it.")
    return out + [(f"Hasse diagram of the partial order of binary runs of length {n}", os.path.basename(path[0]),
                   note)]


# -- Hasse diagram -----------------------------------------------------------------------------
def run_height(run: Sequence[int]) -> int:
    """h(r) = sum_k r_k (n + 1 - k): grows by exactly 1 along every cover of the run order."""
    n = len(run)
    return int(sum(int(x) * (n + 1 - k) for k, x in enumerate(run, start=1)))


def run_leq(a: ArrayLike, b: ArrayLike) -> bool:
    """a <= b in the run order: every top-k prefix of a has at most as many relevant
    documents as that of b."""
    return bool(np.all(np.cumsum(a) <= np.cumsum(b)))


def hasse_covers(n: int) -> list[tuple[tuple, tuple, str]]:
    """Cover relations ``(a, b, kind)`` of the order of binary runs of length n (a is
    covered by b): b comes from a by one elementary move, ``kind`` ``"up"`` (a relevant
    document moves up one rank, swapping with the non-relevant one above it) or ``"add"``
    (the non-relevant document at rank n becomes relevant). Any other improvement is a
    sequence of these, so these are exactly the covers."""
    out = []
    for a in itertools.product((0, 1), repeat=n):
        for k in range(n - 1):
            if a[k] == 0 and a[k + 1] == 1:
                b = list(a)
                b[k], b[k + 1] = 1, 0
                out.append((a, tuple(b), "up"))
        if a[n - 1] == 0:
            out.append((a, a[:-1] + (1,), "add"))
    return out


def hasse_layout(n: int) -> dict:
    """Nodes (runs), heights, covers and drawing positions of the Hasse diagram: y = h(r),
    nodes of one level ordered by the mean position of their lower covers (fewer edge
    crossings) and spread one unit apart around 0."""
    nodes = list(itertools.product((0, 1), repeat=n))
    height = {r: run_height(r) for r in nodes}
    covers = hasse_covers(n)
    below = defaultdict(list)
    for a, b, _ in covers:
        below[b].append(a)
    levels = defaultdict(list)
    for r in nodes:
        levels[height[r]].append(r)
    pos = {}
    for h in sorted(levels):
        lv = levels[h]
        key = {r: (np.mean([pos[a][0] for a in below[r]]) if below[r] else 0.0, -sum(r), r) for r in lv}
        lv.sort(key=lambda r: key[r])
        for i, r in enumerate(lv):
            pos[r] = (i - (len(lv) - 1) / 2, float(h))
    return dict(nodes=nodes, height=height, covers=covers, pos=pos, levels=dict(levels))


def plot_hasse(out_prefix: str | os.PathLike, n: int = 4) -> list[str]:
    """Hasse diagram of the partial order of binary runs of length ``n``: a <= b when a
    can be obtained from b by moving relevant documents down or turning relevant documents
    into non-relevant ones (equivalently every top-k prefix of a has at most as many
    relevant documents as b's). Edges are the cover relations (:func:`hasse_covers`);
    nodes sit at height h(r) = sum_k r_k (n + 1 - k), labelled by relevance strings."""
    plt = _plt()
    from matplotlib.lines import Line2D
    lay = hasse_layout(n)
    pos, height = lay["pos"], lay["height"]
    width = max(len(v) for v in lay["levels"].values())
    top = max(height.values())
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(max(5.5, 1.25 * width + 3.5), max(4.5, 0.52 * (top + 1) + 1.6)))
        styles = {"up": dict(color="tab:blue", lw=1.3), "add": dict(color="tab:orange", lw=1.3, ls="--")}
        for a, b, kind in lay["covers"]:
            (xa, ya), (xb, yb) = pos[a], pos[b]
            ax.plot([xa, xb], [ya, yb], zorder=1, **styles[kind])
        fs = 10 if n <= 5 else 8
        for r in lay["nodes"]:
            x, y = pos[r]
            ax.text(x, y, _run_label(r), ha="center", va="center", fontsize=fs, family="monospace", zorder=3,
                    bbox=dict(boxstyle="round,pad=0.25", fc="white", ec="0.3", lw=0.8))
        ax.set_yticks(range(top + 1))
        ax.set_ylim(-0.7, top + 0.7)
        ax.set_xlim(-(width - 1) / 2 - 0.9, (width - 1) / 2 + 0.9)
        ax.set_xticks([])
        ax.set_ylabel(rf"height $h(r) = \sum_{{k=1}}^{{{n}}} r_k\,({n} + 1 - k)$")
        for s in ("top", "right", "bottom"):
            ax.spines[s].set_visible(False)
        ax.grid(axis="y", alpha=0.2)
        handles = [Line2D([], [], **styles["up"], label="a relevant document moves up one rank"),
                   Line2D([], [], **styles["add"], label=f"the document at rank {n} becomes relevant")]
        ax.legend(handles=handles, loc="upper left", fontsize=8, frameon=False, bbox_to_anchor=(0, -0.01),
                  ncol=1)
        ax.set_title(f"Hasse diagram of the {2 ** n} binary runs of length {n}\n"
                     "a ≤ b iff, for every k, the top k of a hold at most\n"
                     "as many relevant documents as the top k of b", fontsize=10)
        fig.tight_layout()
        return _save(fig, out_prefix)


# -- transforms side by side -----------------------------------------------------------------
def measure_in_scores(scores: pd.DataFrame, measure: str | None) -> str:
    """The name, as in the scores, of ``measure`` (any spelling irscale parses; None: the
    first measure); an :class:`~irscale.errors.IrscaleError` naming the measures held
    when the scores do not have it."""
    names = list(dict.fromkeys(scores["measure"].astype(str)))
    if measure is None:
        return names[0]
    if str(measure) in names:
        return str(measure)
    try:
        name = str(parse_measure(measure))
    except IrscaleError:
        name = str(measure)
    if name not in names:
        raise IrscaleError(f"no measure {measure} in the scores (they hold {', '.join(names)})")
    return name


def transform_figure_data(scores: pd.DataFrame, measure: str | None, transforms: Sequence[str],
                          topics: int = 4, reference: pd.DataFrame | None = None, leave_one_out: bool = False
                          ) -> dict:
    """The data of :func:`plot_transforms`: ``measure`` (the name in the scores; default
    the first), ``rb_scale`` (the first mode of the scores), ``topics`` (up to ``topics``
    topics with several distinct raw scores, evenly spread over the topics' mean raw
    score, hard to easy) and for each of them and each transform the systems' scores,
    ordered by raw score: ``{"raw": array, transform: array, ...}``."""
    name = measure_in_scores(scores, measure)
    rows = scores[scores["measure"].astype(str) == name]
    mode = sorted(rows["rb_scale"].unique())[0]
    rows = rows[rows["rb_scale"] == mode]
    rows = rows[rows.groupby("topic")["raw"].transform(lambda v: v.notna().any())]   # undefined topics out
    systems, topic_ids, raw, scaled, mid = matrices(rows, name)
    ref, same = reference_matrix(reference, name, topic_ids, systems) if reference is not None else (None, None)
    mats = {"raw": raw, "unq": None if np.isnan(scaled).any() else scaled, "midrank": mid,     # None: no scale
            **standardised(raw, transforms, ref, same, leave_one_out)}
    distinct = np.array([np.unique(raw[t]).size for t in range(raw.shape[0])])
    candidates = np.flatnonzero(distinct >= min(3, distinct.max()))
    candidates = candidates[np.argsort(raw[candidates].mean(axis=1), kind="stable")]
    chosen = candidates[np.unique(np.linspace(0, candidates.size - 1, min(topics, candidates.size)).round()
                                  .astype(int))]
    out = {"measure": name, "rb_scale": mode, "topics": {}}
    for t in chosen:
        order = np.argsort(raw[t], kind="stable")
        out["topics"][str(topic_ids[t])] = {tr: mats[tr][t][order] for tr in ["raw", *transforms]
                                            if mats.get(tr) is not None}
    return out


def plot_transforms(scores: pd.DataFrame, measure: str | None, transforms: Sequence[str],
                    out_prefix: str | os.PathLike, topics: int = 4, reference: pd.DataFrame | None = None,
                    leave_one_out: bool = False) -> tuple[str, list[str]]:
    """One measure's per-topic scores under every transform: one panel per transform (other
    than raw), the systems' transformed score (y) against their raw score (x), one line
    per topic (:func:`transform_figure_data`). unq and midrank depend on the run alone
    (through the topic's recall base for RB-dependent measures): topics with the same
    scale draw the same curve; the standardisations draw a curve per topic, set by the
    other systems' scores. Topics where the measure is undefined are left out. Returns
    (measure, paths)."""
    data = transform_figure_data(scores, measure, transforms, topics, reference, leave_one_out)
    shown = [t for t in transforms if t != "raw" and all(t in v for v in data["topics"].values())]
    plt = _plt()
    ncols = min(3, max(1, len(shown)))
    nrows = max(1, -(-len(shown) // ncols))
    colors = plt.get_cmap("tab10")(np.arange(len(data["topics"])) % 10)
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 3.4 * nrows), squeeze=False)
        flat = axes.ravel()
        for ax, tr in zip(flat, shown):
            for color, (topic, series) in zip(colors, data["topics"].items()):
                ax.plot(series["raw"], series[tr], "-o", ms=2.5, lw=1.0, color=color, label=f"topic {topic}")
            ax.set_title(tr)
            ax.set_xlabel(f"raw {data['measure']}")
            ax.set_ylabel(tr)
            ax.grid(alpha=0.3)
        for ax in flat[len(shown):]:
            ax.axis("off")
        if shown:
            flat[0].legend(loc="best", fontsize=7.5)
        fig.suptitle(f"{data['measure']} ({data['rb_scale']}): per-topic scores under each transform", fontsize=11)
        fig.tight_layout()
    return data["measure"], _save(fig, out_prefix)
