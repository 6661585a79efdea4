"""The leaderboard written out: a terminal table (rich, at most 100 columns wide), plain
text, Markdown, LaTeX, CSV and JSON (:class:`~irscale.scales.analysis.leaderboard.Leaderboard`).

Every format shows, per measure, the systems best first with their scaled mean, its
confidence interval, the raw mean, both ranks and the comparison with the baseline (or
how many systems each is significantly better and worse than), and two marks: ``†`` where
the conclusion under the scaled scores differs from the one under the raw scores, ``~``
where it is not scale-free (another transform decides otherwise).
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
              "ranksum": "Wilcoxon rank-sum test", "tukey-hsd": "randomised Tukey HSD"}
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
    ``reason``), the ``topics`` its means and tests use, the ``left_out`` topics (a
    system had no value there) and what its scale is (``scale``: ``exact: closed form``,
    ``exact: rank oracle``, ``exact: table``; None without scaled values)."""

    measure: str
    label: str
    scaled: bool
    reason: str | None
    topics: int
    left_out: int
    scale: str | None = None


@dataclasses.dataclass
class Leaderboard:
    """Systems in rows, per measure their raw and interval-scaled means, ranks, confidence
    interval and significance (module docstring). ``table``: one row per (measure, run),
    in measure order and, within a measure, by scaled mean (raw mean for measures without
    scale); ``pairs``: one row per (measure, comparison) with both decisions and the
    decision under every transform. Print it, or write it with :meth:`save` (``.csv``,
    ``.md``, ``.tex``, ``.json``)."""

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


def _marks(row: pd.Series, board: Leaderboard) -> str:
    marks = ""
    if board.baseline is not None:
        if row.get("differs") is True:
            marks += DIFFERS
        if row.get("scale_free") is False:
            marks += NOT_FREE
    else:
        differs, free = row.get("differs"), row.get("not_scale_free")
        if differs is not None and differs is not pd.NA and differs > 0:
            marks += f"{DIFFERS}{int(differs)}"
        if free is not None and free is not pd.NA and free > 0:
            marks += f"{' ' if marks else ''}{NOT_FREE}{int(free)}"
    return marks


def _title(s: MeasureSummary) -> str:
    name = s.label if s.label == s.measure else f"{s.label} = {s.measure}"
    return f"{name} · {s.topics} topics" + (f" ({s.left_out} left out)" if s.left_out else "")


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


def _cells(board: Leaderboard, s: MeasureSummary, row: pd.Series) -> list[str]:
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
        cells.append(_marks(row, board))
    return cells


def _rows(board: Leaderboard, s: MeasureSummary) -> pd.DataFrame:
    return board.table[board.table["measure"] == s.measure]


def _legend(board: Leaderboard) -> str:
    head = (f"{BETTER}/{WORSE}: significantly better/worse than the baseline, · not significant; "
            if board.baseline is not None else "better/worse than: systems it is significantly better/worse than; ")
    return (head + f"{DIFFERS}: the conclusion differs between raw and scaled scores; {NOT_FREE}: not scale-free "
            f"(the {', '.join(board.transforms)} transforms do not all agree)"
            + ("; counts: of its pairs" if board.baseline is None else ""))


def _header(board: Leaderboard) -> list[str]:
    lines = [f"Leaderboard of {len(board.runs)} run{'s' * (len(board.runs) != 1)}: {_how(board)}"]
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
        table = Table(title=_title(s), title_justify="left", width=None, show_edge=False, pad_edge=False,
                      header_style="bold", box=None)
        for c in _columns(board, s):
            table.add_column(c, justify="left" if c in ("run", "marks", "vs baseline") else "right",
                             overflow="fold", max_width=28 if c == "run" else None, no_wrap=c != "run")
        for _, row in _rows(board, s).iterrows():
            table.add_row(*_cells(board, s, row))
        console.print()
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
        rows = [[c.replace("|", "\\|") for c in _cells(board, s, row)] for _, row in _rows(board, s).iterrows()]
        parts += ["", f"## {_title(s)}", "", "| " + " | ".join(cols) + " |",
                  "|" + "|".join("---:" if c not in ("run", "marks") else "---" for c in cols) + "|",
                  *("| " + " | ".join(r) + " |" for r in rows)]
    return "\n".join([*parts, "", _legend(board), ""])


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


def latex(board: Leaderboard) -> str:
    """A booktabs table: systems in rows; per measure the raw mean (rank) and the scaled
    mean (rank) with the significance arrow and the marks."""
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
                if board.baseline is not None and run != board.baseline and r.get("decision") in (1, -1):
                    cell += arrows[int(r["decision"])]
                marks = _marks(r.rename({"run": run}), board)
                cells.append(cell + (r"\textsuperscript{" + _tex(marks.replace(DIFFERS, "+")
                                                                   .replace(NOT_FREE, "~")) + "}" if marks else ""))
            data[(_tex(s.label), "scaled")] = cells
    frame = pd.DataFrame(data, index=[_tex(r) for r in board.runs])
    frame.index.name = "run"
    caption = _tex(_how(board)) + (r"; $^{\blacktriangle/\blacktriangledown}$: significantly better/worse than "
                                   r"the baseline" if board.baseline is not None else "")
    caption += "; + : raw and scaled conclusions differ; ~ : not scale-free"
    return frame.to_latex(escape=False, multicolumn=True, multicolumn_format="c", caption=caption,
                          label="tab:leaderboard", column_format="l" + "r" * frame.shape[1])


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
    """JSON-ready: the settings, the measures (with why one has no scale), one record per
    (measure, system) and per comparison."""
    return {"baseline": board.baseline, "test": board.test, "correction": board.correction, "alpha": board.alpha,
            "confidence": board.confidence, "rb_scale": board.rb_scale, "store": board.store,
            "transforms": list(board.transforms),
            "measures": [{"measure": s.measure, "label": s.label, "scaled": s.scaled, "scale": s.scale,
                          "reason": s.reason, "topics": s.topics, "left_out": s.left_out} for s in board.measures],
            "systems": _records(board.table), "pairs": _records(board.pairs), "notes": list(board.notes)}


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


__all__ = ["FORMATS", "WIDTH", "Leaderboard", "MeasureSummary", "as_dict", "check_path", "latex", "markdown", "render",
           "save", "text", "wide"]
