"""Formatting shared by the sections of the analysis report (:mod:`.report`,
:mod:`.report_transforms`): markdown tables, numbers, counts, measure names."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

TEST_NAMES = {
    "sign": "sign test", "ranksum": "Wilcoxon rank-sum", "signrank": "Wilcoxon signed-rank",
    "ttest": "paired t-test", "anova1": "one-way ANOVA + Tukey HSD", "anova2": "two-way ANOVA + Tukey HSD",
    "kruskal": "Kruskal-Wallis + Tukey-type", "friedman": "Friedman + Tukey-type",
}


def short(measure: str) -> str:
    """Measure name without its cutoff (tables are per N)."""
    return measure.rsplit("@", 1)[0]


def fmt(x: object, digits: int = 4) -> str:
    """A number for a table: integers as they are, floats to ``digits`` decimals, "–" for
    a missing one."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return f"{x:.{digits}f}"


def count(k: int, word: str) -> str:
    """"1 run", "3 runs"."""
    return f"{k} {word}{'' if k == 1 else 's'}"


def yes_no(v: object) -> str:
    """A flag for a table: yes/no for booleans, "–" when missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return str(int(v)) if isinstance(v, (int, float, np.integer, np.floating)) else str(v)


def markdown_table(header: list[str], rows: list[list]) -> str:
    """A markdown table; cells that are not strings go through :func:`fmt`."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(fmt(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(lines)


def measures_of(df: pd.DataFrame) -> list[str]:
    """The measures of a table, in their order of appearance."""
    return list(dict.fromkeys(df["measure"]))


def rows_of(frame: pd.DataFrame, n: int, mode: str) -> pd.DataFrame:
    """The rows of one cutoff and scaling mode (an empty frame has no columns to select on)."""
    return frame if frame.empty else frame[(frame.n == n) & (frame.rb_scale == mode)]


def pct(x: float | None) -> str:
    """A share as a percentage with one decimal, "–" when missing."""
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}%"


def int_or_dash(x: float | None) -> str | int:
    """A count for a table, "–" when missing (a measure without that transform)."""
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else int(x)
