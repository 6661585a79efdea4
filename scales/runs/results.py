"""Scores of :func:`irscale.transform` in the shapes other tools take.

* :func:`wide`: one measure's values as a topics x systems DataFrame (index ``topic``,
  one column per run), the matrix of any statistics package (``scipy.stats.ttest_rel``,
  ``friedmanchisquare``, statsmodels, scikit-posthocs, R through a CSV).
* :func:`to_ranx_runs`: ``{run: {topic: value}}``, one measure's per-query values in the
  shape ranx keeps its own per-query results (``Run.scores[metric]``).
* :func:`ranx_compare`: ranx's comparison report (``ranx.compare``) over irscale's
  per-query values. ``ranx.compare`` takes qrels and runs and computes its metrics
  itself, so scaled values cannot be handed to it; :func:`ranx_compare` does what it does
  after its metrics step, with ranx's own code: the per-query values of each run go to
  ``ranx.statistical_tests.compute_statistical_significance`` (paired Student's t,
  Fisher's randomization or Tukey's HSD test) and the win/tie/loss counts and means into
  a ``ranx`` ``Report`` (printed, ``to_latex()``, ``to_dict()``), whose metric labels are
  irscale's measure names. Given ``column="raw"`` and a measure that ranx computes the
  same way, the report equals ``ranx.compare``'s (the tests check it for P@10).

Values are taken from ``column`` (``scaled`` by default; ``raw``, ``rank``, ``midrank``
or any numeric column). One measure is selected by name (``"AP@10"``; any spelling
irscale parses, e.g. ``"RBP(p=0.80)@10"``); it may be left out when the scores hold one
measure only. Scores holding several rows for a (run, topic) of the measure (frames of
both ``rb_scale`` modes concatenated) are refused: select one mode first. Topics without
a value (NaN: undefined or left out) stay NaN in :func:`wide`, are left out of
:func:`to_ranx_runs`, and leave the paired tests of :func:`ranx_compare`, which use the
topics every run has a value for (with a warning naming how many were dropped).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, MeasureError, warn
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.params import MAX_LEVELS
from irscale.scales.measures.parse import parse_measure
from irscale.scales.measures.user_names import parse_user_measures

#: Statistical tests of ranx (``stat_test`` of :func:`ranx_compare`).
RANX_TESTS = ("student", "fisher", "tukey")


def _check(scores: pd.DataFrame, column: str) -> None:
    if not isinstance(scores, pd.DataFrame):
        raise IrscaleError(f"scores must be the DataFrame irscale.transform returns, got {type(scores).__name__}")
    missing = [c for c in ("run", "topic", "measure", column) if c not in scores.columns]
    if missing:
        raise IrscaleError(f"scores have no column {', '.join(missing)} (columns: {', '.join(map(str, scores.columns))}"
                           f"); give the DataFrame irscale.transform returns")
    if not (pd.api.types.is_numeric_dtype(scores[column].dtype) or scores[column].isna().all()):
        raise IrscaleError(f"column {column} holds no numbers")


def _measure_name(scores: pd.DataFrame, measure: str | Measure | None) -> str:
    """The name, as in the ``measure`` column, of the measure asked for."""
    names = list(dict.fromkeys(scores["measure"].astype(str).tolist()))
    if measure is None:
        if len(names) != 1:
            raise MeasureError(f"scores hold {len(names)} measures ({', '.join(names) or 'none'}); say which one")
        return names[0]
    name = str(measure)
    if name in names:
        return name
    try:
        name = str(parse_measure(measure))
    except MeasureError:
        pass
    if name in names:
        return name
    found = _user_name(scores, measure, names) if isinstance(measure, str) else set()
    if len(found) == 1:
        return found.pop()
    raise MeasureError(f"scores have no measure {measure} (they hold {', '.join(names) or 'none'})"
                       + (f"; {measure} may be any of {', '.join(sorted(found))}" if found else ""))


def _user_name(scores: pd.DataFrame, text: str, names: list[str]) -> set[str]:
    """The measures of ``names`` that ``text`` reads as in a transform (ir_measures' and
    trec_eval's names, whose meaning may depend on the qrels' top level and the runs'
    depth: every level and every cutoff of the scores is tried)."""
    found: set[str] = set()
    depths = sorted({int(n) for n in scores["n"].dropna().unique()}) if "n" in scores.columns else [None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for depth in depths:
            for top in range(1, MAX_LEVELS):
                try:
                    got = str(parse_user_measures([text], top_level=top, depth=depth)[0])
                except MeasureError:
                    continue
                if got in names:
                    found.add(got)
    return found


def _rows(scores: pd.DataFrame, measure: str | Measure | None, column: str) -> tuple[str, pd.DataFrame]:
    """(measure name, rows run, topic, value of that measure), one per (run, topic)."""
    _check(scores, column)
    name = _measure_name(scores, measure)
    rows = scores.loc[scores["measure"].astype(str) == name, ["run", "topic", column]]
    rows = rows.rename(columns={column: "value"})
    rows["run"] = rows["run"].astype(str)
    rows["topic"] = rows["topic"].astype(str)
    dup = rows.duplicated(["run", "topic"])
    if dup.any():
        first = rows[dup].iloc[0]
        modes = ""
        if "rb_scale" in scores.columns and scores["rb_scale"].nunique() > 1:
            modes = (f" (the scores mix rb_scale {', '.join(map(str, scores['rb_scale'].unique()))}: select one, "
                     f"e.g. scores[scores.rb_scale == 'feasible'])")
        raise IrscaleError(f"scores hold several rows of {name} for run {first['run']}, topic {first['topic']}"
                           f"{modes}")
    rows["value"] = pd.to_numeric(rows["value"]).to_numpy(dtype=np.float64, na_value=np.nan)
    if len(rows) and rows["value"].isna().all() and column != "raw":
        why = ("transform(..., midranks=True) fills it" if column == "midrank" else
               "the scores are raw only: transform without a store, with raw_only, or a measure without a scale")
        raise IrscaleError(f"scores have no {column} values of {name} ({why}); column='raw' takes the raw scores")
    return name, rows


def wide(scores: pd.DataFrame, measure: str | Measure | None = None, column: str = "scaled") -> pd.DataFrame:
    """One measure's values as a topics x systems DataFrame: index ``topic`` (in the
    order of the scores, which is qrels order), one column per run (in the order of the
    scores), NaN where a run has no value for a topic.

    >>> w = wide(scores, "AP@10")                 # doctest: +SKIP
    >>> scipy.stats.ttest_rel(w["sysA"], w["sysB"])   # doctest: +SKIP
    """
    _, rows = _rows(scores, measure, column)
    runs = list(dict.fromkeys(rows["run"].tolist()))
    topics = list(dict.fromkeys(rows["topic"].tolist()))
    out = rows.pivot(index="topic", columns="run", values="value").reindex(index=topics, columns=runs)
    out.columns.name = "run"
    out.index.name = "topic"
    return out


def to_ranx_runs(scores: pd.DataFrame, measure: str | Measure | None = None,
                 column: str = "scaled") -> dict[str, dict[str, float]]:
    """``{run: {topic: value}}`` of one measure (topics without a value left out): the
    shape of ranx's per-query results (``ranx.Run.scores[metric]``), for ranx's
    statistical tests (:func:`ranx_compare` runs them) or any code that takes
    pytrec_eval-style per-query dicts."""
    _, rows = _rows(scores, measure, column)
    out: dict[str, dict[str, float]] = {}
    for run, topic, value in zip(rows["run"].tolist(), rows["topic"].tolist(), rows["value"].tolist()):
        d = out.setdefault(run, {})
        if not np.isnan(value):
            d[topic] = value
    return out


def _report_class() -> type:
    """ranx's Report with irscale's measure names as metric labels (ranx's own labels
    know only its metrics)."""
    from ranx.data_structures import Report  # optional dependency

    class ScaledReport(Report):
        def get_metric_label(self, m: str) -> str:
            return m
    return ScaledReport


def ranx_compare(scores: pd.DataFrame, measures: str | Measure | Iterable[str | Measure] | None = None,
                 column: str = "scaled", *, stat_test: str = "student", max_p: float = 0.01,
                 n_permutations: int = 1000, random_seed: int = 42, rounding_digits: int = 3,
                 show_percentages: bool = False) -> Any:
    """ranx's comparison report (a ``ranx.data_structures.Report``, as ``ranx.compare``
    returns) of the runs of ``scores`` on irscale's per-query values of ``measures``
    (all measures of the scores when None), with ranx's statistical tests
    (``stat_test``: ``"student"``, ``"fisher"`` or ``"tukey"``; ``max_p``,
    ``n_permutations``, ``random_seed`` as in ``ranx.compare``). Needs ranx installed.

    Each test pairs the runs' values topic by topic, on the topics where every run has
    a value for the measure; means in the report are over those topics too.
    """
    if stat_test not in RANX_TESTS:
        raise IrscaleError(f"stat_test must be one of {', '.join(RANX_TESTS)}, got {stat_test!r}")
    try:
        from ranx.statistical_tests import compute_statistical_significance  # optional dependency
    except ImportError:
        raise IrscaleError("ranx_compare needs ranx: pip install ranx") from None
    _check(scores, column)
    if measures is None:
        names = list(dict.fromkeys(scores["measure"].astype(str).tolist()))
    else:
        given = [measures] if isinstance(measures, (str, Measure)) else list(measures)
        names = [_measure_name(scores, m) for m in given]
    if not names:
        raise MeasureError("no measure to compare")
    metric_scores: dict[str, dict[str, np.ndarray]] = {}
    runs: list[str] = []
    for name in names:
        table = wide(scores, name, column)
        complete = table.dropna(axis=0, how="any")
        if len(complete) < len(table):
            warn(f"{name}: {len(table) - len(complete)} of {len(table)} topics left out of the comparison "
                          f"(some run has no {column} value for them)")
        if not runs:
            runs = list(table.columns)
        elif list(table.columns) != runs:
            raise IrscaleError(f"{name}: the runs differ from those of {names[0]}")
        for run in runs:
            metric_scores.setdefault(run, {})[name] = complete[run].to_numpy(dtype=np.float64)
    if len(runs) < 2:
        raise IrscaleError(f"ranx_compare needs two runs or more, the scores hold {len(runs)}")
    comparisons = compute_statistical_significance(model_names=runs, metric_scores=metric_scores,
                                                   stat_test=stat_test, n_permutations=n_permutations,
                                                   max_p=max_p, random_seed=random_seed)
    results = {run: {name: float(np.mean(metric_scores[run][name])) for name in names} for run in runs}
    win_tie_loss: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
    for control in runs:
        for treatment in runs:
            if control != treatment:
                win_tie_loss[(control, treatment)] = {
                    name: {"W": int(np.sum(metric_scores[control][name] > metric_scores[treatment][name])),
                           "T": int(np.sum(metric_scores[control][name] == metric_scores[treatment][name])),
                           "L": int(np.sum(metric_scores[control][name] < metric_scores[treatment][name]))}
                    for name in names}
    return _report_class()(model_names=runs, results=results, comparisons=comparisons, metrics=names, max_p=max_p,
                           win_tie_loss=win_tie_loss, rounding_digits=rounding_digits,
                           show_percentages=show_percentages, stat_test=stat_test)


__all__ = ["RANX_TESTS", "ranx_compare", "to_ranx_runs", "wide"]
