"""The leaderboard written out: a terminal table (rich, at most 100 columns wide), plain
text, Markdown, LaTeX, CSV and JSON (:class:`~irscale.scales.analysis.leaderboard.Leaderboard`).

Every format shows, per measure, the systems best first with their scaled mean, its
confidence interval, the raw mean, both ranks and the comparison with the baseline (or
how many systems each is significantly better and worse than), and two marks: ``†`` where
the conclusion under the scaled scores differs from the one under the raw scores, ``~``
where it is not scale-free (another transform decides otherwise). The Markdown, LaTeX and
JSON files also name the pairs a mark is about (without a baseline: ``†2 vs runB, runC``;
with one, the pair with the baseline); the terminal table counts them.
"""
from __future__ import annotations

import dataclasses
import io
import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from irscale.errors import OutputError
from irscale.scales.analysis import leaderboard_plot
from irscale.scales.analysis.inference import paired_differences
from irscale.scales.runs.scores import check_writable, write_atomically

if TYPE_CHECKING:
    from rich.console import Console

#: Output formats by file suffix.
FORMATS = {".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".tex": "latex", ".json": "json",
           ".txt": "text"}
#: Widest terminal table.
WIDTH = 100
#: Names of the tests and corrections, as printed.
TEST_NAMES = {"ttest": "paired t-test", "signrank": "Wilcoxon signed-rank test", "sign": "sign test",
              "ranksum": "Wilcoxon rank-sum test", "randomisation": "Fisher's randomisation test",
              "tukey-hsd": "randomised Tukey HSD"}
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}
DIFFERS, NOT_FREE, BETTER, WORSE = "†", "~", "▲", "▼"
#: Quantities of the wide table, in order (those the leaderboard has).
QUANTITIES = ("raw_mean", "raw_rank", "scaled_mean", "scaled_rank", "ci_low", "ci_high", "p_value", "decision",
              "raw_p_value", "raw_decision", "wins", "losses", "raw_wins", "raw_losses", "differs", "scale_free",
              "not_scale_free", "topics")


@dataclasses.dataclass(frozen=True)
class MeasureSummary:
    """What the leaderboard knows of one measure: its canonical ``measure`` name, the
    ``label`` it was asked for by, whether it has scaled values (``scaled``; else
    ``reason``), the ``topics`` its means and tests use (raw and scaled alike), the
    ``left_out`` topics and why (``left_out_why``: ``no value``, a system had no raw
    value there; ``no scaled value``, raw values only; or both counted), what its scale
    is (``scale``: ``exact: closed form``, ``exact: rank oracle``, ``exact: table``; None
    without scaled values) and whether mid-ranks decide its scale-freeness
    (``midranks``: ``used``, ``left out: ...`` when some row with a scaled value has
    none, None when no row has one)."""

    measure: str
    label: str
    scaled: bool
    reason: str | None
    topics: int
    left_out: int
    scale: str | None = None
    left_out_why: str | None = None
    midranks: str | None = None


@dataclasses.dataclass
class Leaderboard:
    """Systems in rows, per measure their raw and interval-scaled means, ranks, confidence
    interval and significance (module docstring). ``table``: one row per (measure, run),
    in measure order and, within a measure, by scaled mean (raw mean for measures without
    scale); ``pairs``: one row per (measure, comparison) with both decisions and the
    decision under every transform; ``scores``: the per-topic frame it was computed from
    (the measures shown); ``matrices``: per measure, ``{"raw": ..., "scaled": ...}``
    topics x runs frames of the topics its means and tests use. Print it, write it with
    :meth:`save` (``.csv``, ``.md``, ``.tex``, ``.json``), draw it with :meth:`plot`;
    :meth:`differences` gives the mean difference of every tested pair with its
    confidence interval and effect size."""

    table: pd.DataFrame
    pairs: pd.DataFrame
    measures: list[MeasureSummary]
    baseline: str | None
    test: str
    correction: str
    alpha: float
    confidence: float
    transforms: tuple[str, ...]
    rb_scale: str | None = None
    store: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)
    scores: pd.DataFrame | None = dataclasses.field(default=None, repr=False)
    matrices: dict[str, dict[str, pd.DataFrame]] = dataclasses.field(default_factory=dict, repr=False)
    permutations: int | None = None
    seed: int | None = None
    conventions: str | None = None
    #: per measure (as asked for), what its scale is and why, at length (``--explain``)
    scales: dict[str, str] = dataclasses.field(default_factory=dict, repr=False)

    @property
    def runs(self) -> list[str]:
        """The systems, best first by the first measure."""
        first = self.table["measure"].iloc[0] if len(self.table) else None
        return self.table.loc[self.table["measure"] == first, "run"].tolist()

    def to_dataframe(self) -> pd.DataFrame:
        """Systems in rows (index ``run``, best first by the first measure), a column per
        (measure, quantity): the table of ranx's ``Report.to_dataframe`` with irscale's
        quantities."""
        return wide(self)

    def to_latex(self) -> str:
        """A LaTeX table (booktabs): per measure the raw and scaled means with their ranks
        and significance marks."""
        return latex(self)

    def to_markdown(self) -> str:
        """Markdown: one table per measure, as printed."""
        return markdown(self)

    def to_dict(self) -> dict:
        """Everything as JSON-ready lists and dicts (what ``.json`` files hold)."""
        return as_dict(self)

    def differences(self) -> pd.DataFrame:
        """One row per tested pair per measure (with a baseline: (system, baseline)), in
        the order of :attr:`pairs`: ``measure, a, b``, per kind of score (``raw_``,
        ``scaled_``) the mean difference a - b over the topics used (``diff``), its paired
        Student's t interval at the board's confidence level (``ci_low``, ``ci_high``) and
        Cohen's d_z (``effect``: mean difference / sd of the differences, ddof = 1), NaN
        where undefined (no scale, one topic, differences without spread); then
        ``p_value, raw_p_value, decision, raw_decision`` as in :attr:`pairs`."""
        return differences(self)

    def plot(self, path: str | os.PathLike) -> None:
        """Draw the leaderboard to ``path`` (``.png``, ``.pdf``, ``.svg``): one panel per
        measure, systems in leaderboard order, scaled means with their confidence
        intervals beside the raw means with theirs (:mod:`leaderboard_plot`)."""
        leaderboard_plot.plot(self, path)

    def save(self, path: str | os.PathLike) -> None:
        """Write the leaderboard, in the format of the path's suffix: ``.csv`` (the wide
        table), ``.md``, ``.tex``, ``.json``; written atomically."""
        save(self, path)

    def __str__(self) -> str:
        return text(self)


def _num(x, digits: int = 4) -> str:
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return ""
    return f"{x:.{digits}f}"


def _rank(x) -> str:
    return "" if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)) else str(int(x))


def _p(p) -> str:
    if p is None or p is pd.NA or (isinstance(p, float) and math.isnan(p)):
        return ""
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _arrow(decision) -> str:
    if decision is None or decision is pd.NA:
        return ""
    return BETTER if decision > 0 else WORSE if decision < 0 else "·"


def _marks(row: pd.Series, board: Leaderboard, named: dict[str, tuple[list[str], list[str]]] | None = None) -> str:
    """The marks of a row; without a baseline with the count of its pairs and, given
    ``named`` (:func:`marked_pairs`), the other systems of those pairs."""
    marks = ""
    if board.baseline is not None:
        if row.get("differs") is True:
            marks += DIFFERS
        if row.get("scale_free") is False:
            marks += NOT_FREE
        return marks
    differs, free = row.get("differs"), row.get("not_scale_free")
    others = named.get(row["run"], ([], [])) if named is not None else None
    parts = []
    for mark, count, names in ((DIFFERS, differs, others and others[0]), (NOT_FREE, free, others and others[1])):
        if count is not None and count is not pd.NA and count > 0:
            parts.append(f"{mark}{int(count)}" + (f" vs {', '.join(names)}" if names else ""))
    return ("; " if named is not None else " ").join(parts)


def marked_pairs(board: Leaderboard, measure: str) -> dict[str, tuple[list[str], list[str]]]:
    """Per system of ``measure``: the other systems of its pairs that are marked ``†``
    (raw and scaled decisions differ) and ``~`` (not scale-free), in leaderboard order;
    with a baseline, the baseline when the system's pair with it is marked."""
    order = board.table.loc[board.table["measure"] == measure, "run"].tolist()
    out: dict[str, tuple[list[str], list[str]]] = {run: ([], []) for run in order}
    if board.pairs.empty:
        return out
    rows = board.pairs[board.pairs["measure"] == measure]
    for which, column, bad in ((0, "differs", True), (1, "scale_free", False)):
        marked = rows[rows[column].map(lambda v, bad=bad: v is not pd.NA and v is not None and bool(v) is bad)]
        for a, b in zip(marked["a"], marked["b"]):
            out[a][which].append(b)
            if board.baseline is None:
                out[b][which].append(a)
    rank = {run: r for r, run in enumerate(order)}
    for lists in out.values():
        for names in lists:
            names.sort(key=rank.__getitem__)
    return out


def _topics(s: MeasureSummary) -> str:
    return f"{s.topics} topics" + (f" ({s.left_out} left out: {s.left_out_why})" if s.left_out else "")


def _title(s: MeasureSummary) -> str:
    """The name asked for (and irscale's when it differs), the topics the means and tests
    use and how many were left out, and why."""
    name = s.label if s.label == s.measure else f"{s.label} = {s.measure}"
    return f"{name} · {_topics(s)}"


def _how(board: Leaderboard) -> str:
    test = TEST_NAMES[board.test]
    corr = "" if board.test == "tukey-hsd" else f", {CORRECTION_NAMES[board.correction]}"
    against = f"against {board.baseline}" if board.baseline is not None else "between every pair of systems"
    return f"{test} {against}{corr}, alpha = {board.alpha:g}"


def _columns(board: Leaderboard, s: MeasureSummary) -> list[str]:
    cols = ["#", "run"]
    if s.scaled:
        cols += ["scaled", f"{board.confidence:.0%} CI", "raw", "raw #"]
    else:
        cols += ["raw"]
    cols += (["vs baseline", "p"] if board.baseline is not None else ["better than", "worse than"])
    return cols + (["marks"] if s.scaled else [])


def _cells(board: Leaderboard, s: MeasureSummary, row: pd.Series,
           named: dict[str, tuple[list[str], list[str]]] | None = None) -> list[str]:
    rank = row["scaled_rank"] if s.scaled else row["raw_rank"]
    cells = [_rank(rank), str(row["run"])]
    if s.scaled:
        cells += [_num(row["scaled_mean"]), f"{_num(row['ci_low'], 3)}–{_num(row['ci_high'], 3)}"
                  if not math.isnan(row["ci_low"]) else "", _num(row["raw_mean"]), _rank(row["raw_rank"])]
    else:
        cells += [_num(row["raw_mean"])]
    if board.baseline is not None:
        if row["run"] == board.baseline:
            cells += ["baseline", ""]
        else:
            cells += [_arrow(row["decision"]), _p(row["p_value"])]
    else:
        cells += [_rank(row.get("wins")), _rank(row.get("losses"))]
    if s.scaled:
        cells.append(_marks(row, board, named))
    return cells


def _rows(board: Leaderboard, s: MeasureSummary) -> pd.DataFrame:
    return board.table[board.table["measure"] == s.measure]


def _legend(board: Leaderboard, named: bool = False) -> str:
    head = (f"{BETTER}/{WORSE}: significantly better/worse than the baseline, · not significant; "
            if board.baseline is not None else "better/worse than: systems it is significantly better/worse than; ")
    return (head + f"{DIFFERS}: the conclusion differs between raw and scaled scores; {NOT_FREE}: not scale-free "
            f"(the {', '.join(board.transforms)} transforms do not all agree)"
            + (f"; counts: of its pairs{', vs: the other systems of those pairs' if named else ''}"
               if board.baseline is None else ""))


def _header(board: Leaderboard) -> list[str]:
    lines = [f"Leaderboard of {len(board.runs)} run{'s' * (len(board.runs) != 1)}: {_how(board)}"]
    if board.conventions:
        lines.append(board.conventions)
    scaled = [s for s in board.measures if s.scaled]
    if scaled:
        kinds: dict[str, list[str]] = {}
        for s in scaled:
            kinds.setdefault(s.scale or "exact", []).append(s.label)
        lines.append(f"scaled: interval-scaled scores (unq ranks), {board.rb_scale or 'feasible'} scales"
                     + (f", from {board.store}" if board.store else "") + " ("
                     + "; ".join(f"{kind} for {', '.join(names)}" for kind, names in kinds.items()) + ")")
    for s in board.measures:
        if not s.scaled:
            lines.append(f"NO SCALE for {s.label}: {s.reason}; its raw scores are shown, unscaled")
    return lines + list(board.notes)


def render(board: Leaderboard, console: Console | None = None) -> None:
    """Print the leaderboard on a rich console (the terminal by default), at most
    :data:`WIDTH` columns wide."""
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:          # a file or a pipe: the full width, no colours
            console = Console(width=WIDTH, color_system=None)
    width = min(console.width, WIDTH)
    for line in _header(board):
        console.print(line, style="bold red" if line.startswith("NO SCALE") else None, width=width,
                      highlight=False, markup=False)
    for s in board.measures:
        # the title on a line of its own: a table's title wraps at the table's width
        table = Table(width=None, show_edge=False, pad_edge=False, header_style="bold", box=None)
        for c in _columns(board, s):
            table.add_column(c, justify="left" if c in ("run", "marks", "vs baseline") else "right",
                             overflow="fold", max_width=28 if c == "run" else None, no_wrap=c != "run")
        for _, row in _rows(board, s).iterrows():
            table.add_row(*_cells(board, s, row))
        console.print()
        console.print(_title(s), style="italic", width=width, highlight=False, markup=False)
        console.print(table, width=width)
    console.print()
    console.print(_legend(board), width=width, highlight=False, markup=False)


def text(board: Leaderboard) -> str:
    """The terminal table as plain text."""
    from rich.console import Console

    out = io.StringIO()
    render(board, Console(file=out, width=WIDTH, force_terminal=False, color_system=None, soft_wrap=False))
    return out.getvalue()


def markdown(board: Leaderboard) -> str:
    """One Markdown table per measure, with the header lines and the legend."""
    parts = ["# Leaderboard", "", *(f"{line}  " for line in _header(board))]
    for s in board.measures:
        cols = _columns(board, s)
        named = marked_pairs(board, s.measure) if s.scaled else None
        rows = [[c.replace("|", "\\|") for c in _cells(board, s, row, named)]
                for _, row in _rows(board, s).iterrows()]
        parts += ["", f"## {_title(s)}", "", "| " + " | ".join(cols) + " |",
                  "|" + "|".join("---:" if c not in ("run", "marks") else "---" for c in cols) + "|",
                  *("| " + " | ".join(r) + " |" for r in rows)]
    return "\n".join([*parts, "", _legend(board, named=True), ""])


def wide(board: Leaderboard) -> pd.DataFrame:
    """Systems in rows (best first by the first measure), columns (measure, quantity)."""
    frames = {}
    for s in board.measures:
        rows = _rows(board, s).set_index("run")
        frames[s.measure] = rows[[q for q in QUANTITIES if q in rows.columns]]
    out = pd.concat(frames, axis=1)
    out.columns.names = ["measure", "quantity"]
    out.index.name = "run"
    return out.reindex(board.runs)


_LATEX = str.maketrans({"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                        "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"})


def _tex(text: str) -> str:
    return text.translate(_LATEX)


#: The first lines of every LaTeX table: the packages it needs.
LATEX_PREAMBLE = ("% irscale leaderboard: needs \\usepackage{booktabs} (\\toprule, \\midrule, \\bottomrule)\n"
                  "% and \\usepackage{amssymb} (\\blacktriangle, \\blacktriangledown) in the preamble\n")


def _tex_notes(board: Leaderboard) -> str:
    """Without a baseline: per measure, the pairs each mark of a system is about."""
    if board.baseline is not None:
        return ""
    lines = []
    for s in board.measures:
        if not s.scaled:
            continue
        named = marked_pairs(board, s.measure)
        said = [f"{_tex(run)}: " + "; ".join(f"{mark} vs {', '.join(_tex(n) for n in names)}"
                                             for mark, names in (("+", plus), (r"\textasciitilde{}", tilde)) if names)
                for run, (plus, tilde) in named.items() if plus or tilde]
        if said:
            lines.append(rf"\textbf{{{_tex(s.label)}}}: " + ". ".join(said) + ".")
    if not lines:
        return ""
    return "\\par\\smallskip\n{\\footnotesize\n" + " \\\\\n".join(lines) + "\n}\n"


def latex(board: Leaderboard) -> str:
    """A booktabs table: systems in rows; per measure the raw mean (rank) and the scaled
    mean (rank) with the significance arrow and the marks (without a baseline, counts of
    the system's marked pairs, named below the table). It begins with a comment naming
    the packages it needs (:data:`LATEX_PREAMBLE`)."""
    arrows = {1: r"$^{\blacktriangle}$", -1: r"$^{\blacktriangledown}$"}
    data = {}
    for s in board.measures:
        rows = _rows(board, s).set_index("run").reindex(board.runs)
        raw = [f"{_num(r['raw_mean'])} ({_rank(r['raw_rank'])})" for _, r in rows.iterrows()]
        data[(_tex(s.label), "raw")] = raw
        if s.scaled:
            cells = []
            for run, r in rows.iterrows():
                cell = f"{_num(r['scaled_mean'])} ({_rank(r['scaled_rank'])})"
                decision = r.get("decision")
                if board.baseline is not None and run != board.baseline and not pd.isna(decision) \
                        and decision in (1, -1):      # no test (one topic): NA
                    cell += arrows[int(decision)]
                marks = _marks(r.rename({"run": run}), board)
                cells.append(cell + (r"\textsuperscript{" + _tex(marks.replace(DIFFERS, "+")
                                                                   .replace(NOT_FREE, "~")) + "}" if marks else ""))
            data[(_tex(s.label), "scaled")] = cells
    frame = pd.DataFrame(data, index=[_tex(r) for r in board.runs])
    frame.index.name = "run"
    caption = _tex(_how(board)) + (r"; $^{\blacktriangle/\blacktriangledown}$: significantly better/worse than "
                                   r"the baseline" if board.baseline is not None else "")
    caption += r"; + : raw and scaled conclusions differ; \textasciitilde{} : not scale-free"
    if board.baseline is None:
        caption += " (counts: of the system's pairs, named below)"
    caption += "; " + "; ".join(_tex(s.label) + ": " + _tex(_topics(s)) for s in board.measures)
    if board.conventions:
        caption += "; " + _tex(board.conventions)
    table = frame.to_latex(escape=False, multicolumn=True, multicolumn_format="c", caption=caption,
                           label="tab:leaderboard", column_format="l" + "r" * frame.shape[1])
    notes = _tex_notes(board)
    if notes:
        end = table.rindex("\\end{table}")
        table = table[:end] + notes + table[end:]
    return LATEX_PREAMBLE + table


def _json_value(x):
    if x is None or x is pd.NA:
        return None
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(x) else float(x)
    if isinstance(x, (np.bool_,)):
        return bool(x)
    return x


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _json_value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def as_dict(board: Leaderboard) -> dict:
    """JSON-ready: the settings, the measures (with why one has no scale and the title),
    one record per (measure, system), with the other systems of its pairs marked ``†``
    (``differs_vs``) and ``~`` (``not_scale_free_vs``; with a baseline, the baseline or
    nobody; None for a measure without scale), and one per comparison."""
    systems = _records(board.table)
    named = {s.measure: marked_pairs(board, s.measure) for s in board.measures if s.scaled}
    for record in systems:
        marks = named.get(record["measure"])
        record["differs_vs"] = None if marks is None else marks[record["run"]][0]
        record["not_scale_free_vs"] = None if marks is None else marks[record["run"]][1]
    return {"baseline": board.baseline, "test": board.test, "correction": board.correction, "alpha": board.alpha,
            "confidence": board.confidence, "permutations": board.permutations, "seed": board.seed,
            "rb_scale": board.rb_scale, "store": board.store, "conventions": board.conventions,
            "transforms": list(board.transforms),
            "measures": [{"measure": s.measure, "label": s.label, "title": _title(s), "scaled": s.scaled,
                          "scale": s.scale, "reason": s.reason, "topics": s.topics, "left_out": s.left_out,
                          "left_out_why": s.left_out_why, "midranks": s.midranks} for s in board.measures],
            "systems": systems, "pairs": _records(board.pairs), "notes": list(board.notes)}


DIFFERENCE_COLUMNS = ("measure", "a", "b", "raw_diff", "raw_ci_low", "raw_ci_high", "raw_effect", "scaled_diff",
                      "scaled_ci_low", "scaled_ci_high", "scaled_effect", "p_value", "raw_p_value", "decision",
                      "raw_decision")


def differences(board: Leaderboard) -> pd.DataFrame:
    """The table of :meth:`Leaderboard.differences`: columns :data:`DIFFERENCE_COLUMNS`."""
    parts = []
    for s in board.measures:
        rows = board.pairs[board.pairs["measure"] == s.measure] if not board.pairs.empty else board.pairs
        if rows.empty:
            continue
        out = rows[["measure", "a", "b"]].copy()
        for kind in ("raw", "scaled"):
            frame = board.matrices.get(s.measure, {}).get(kind)
            if frame is None:
                for q in ("diff", "ci_low", "ci_high", "effect"):
                    out[f"{kind}_{q}"] = np.nan
                continue
            col = {run: c for c, run in enumerate(frame.columns)}
            (out[f"{kind}_diff"], out[f"{kind}_ci_low"], out[f"{kind}_ci_high"],
             out[f"{kind}_effect"]) = paired_differences(frame.to_numpy(), rows["a"].map(col).to_numpy(),
                                                         rows["b"].map(col).to_numpy(), board.confidence)
        for c in ("p_value", "raw_p_value", "decision", "raw_decision"):
            out[c] = rows[c].to_numpy()
        parts.append(out)
    if not parts:
        return pd.DataFrame(columns=list(DIFFERENCE_COLUMNS))
    return pd.concat(parts, ignore_index=True)[list(DIFFERENCE_COLUMNS)]


def check_path(path: str | os.PathLike) -> str:
    """The format of an output path (by suffix), failing before any work when the path
    cannot be written."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise OutputError(f"{path}: unknown leaderboard format; use a name ending in {', '.join(FORMATS)}")
    check_writable(path)
    return fmt


def save(board: Leaderboard, path: str | os.PathLike) -> None:
    """Write ``board`` to ``path`` in the format of its suffix (:data:`FORMATS`),
    atomically (a temporary file renamed into place)."""
    fmt = check_path(path)
    if fmt == "csv":
        flat = wide(board)
        flat.columns = [f"{m} {q}" for m, q in flat.columns]
        content = flat.to_csv()
    elif fmt == "markdown":
        content = markdown(board)
    elif fmt == "latex":
        content = latex(board)
    elif fmt == "json":
        content = json.dumps(as_dict(board), indent=1, ensure_ascii=False) + "\n"
    else:
        content = text(board)
    write_atomically(path, lambda tmp: tmp.write_text(content, encoding="utf-8"))


__all__ = ["DIFFERENCE_COLUMNS", "FORMATS", "LATEX_PREAMBLE", "WIDTH", "Leaderboard", "MeasureSummary", "as_dict",
           "check_path", "differences", "latex", "marked_pairs", "markdown", "render", "save", "text", "wide"]
