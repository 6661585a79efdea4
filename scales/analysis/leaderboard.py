"""The leaderboard: which systems are best, by how much, and which beat a baseline, under
raw and interval-scaled scores (the researcher's everyday job in one table).

:func:`leaderboard` takes per-topic scores (a table of :func:`irscale.transform`) and
gives, per measure and system:

``raw_mean``, ``raw_rank``
    the mean of the raw scores over the topics and the system's rank by it (1 = best;
    means rounded to 8 decimals, as SPEC section 6 does for Kendall's tau, so that equal
    means share the smaller rank);
``scaled_mean``, ``scaled_rank``, ``ci_low``, ``ci_high``
    the same for the interval-scaled scores (``scaled``: (rank - 1)/(k - 1) on the unq
    scale) and Student's t confidence interval of the scaled mean
    (``mean -/+ t((1 + confidence)/2, n - 1) sd / sqrt(n)``, ``sd`` with ddof = 1, as
    ``statsmodels``' ``DescrStatsW.tconfint_mean`` computes it), cut to [0, 1], the range
    the mean of scaled values lies in (a t interval of few topics may reach beyond it);
significance
    a paired test (``test``: ``ttest`` paired Student's t, default; ``signrank``
    Wilcoxon signed-rank; ``sign``; ``ranksum`` Wilcoxon rank-sum; ``randomisation``
    Fisher's paired randomisation test, sign flips of the per-topic differences;
    ``tukey-hsd`` the randomised Tukey HSD, which controls the family-wise error itself;
    ``permutations`` and ``seed`` are the last two's) of every system
    against the ``baseline`` (the family: the pairs with the baseline) or, without one,
    of every pair of systems (the family: all pairs), p-values adjusted over the family
    (``correction``: ``holm``, default, ``bh`` or ``none``; :mod:`irscale.scales.analysis.inference`).
    A decision is +1 (the system is significantly better), -1 (worse) or 0. With a
    baseline: ``p_value`` and ``decision`` under the scaled scores, ``raw_p_value``
    and ``raw_decision`` under the raw ones; without: ``wins`` and ``losses`` (systems
    it is significantly better / worse than) and ``raw_wins``, ``raw_losses``;
marks
    ``differs``: the decision under the scaled scores is not the one under the raw scores
    (without a baseline: how many of the system's pairs differ); ``scale_free``: the
    decision is the same under every transform of :mod:`irscale.scales.runs.standardize`
    that the scores allow (raw, unq, midrank when every row of the measure with a scaled
    value has a mid-rank, z-score, its
    normal CDF, Sakai's linear standardisation, ECDF; the standardisations over the
    systems compared), the project's notion of a conclusion that does not depend on how
    the measure is scaled (without a baseline: ``not_scale_free``, how many of its pairs
    are not).

Measures without scaled values (no scale exists: N beyond the tables, ``map`` on runs of
1000 documents) keep their raw columns and significance under raw scores; their scaled
columns and marks are empty, and :attr:`Leaderboard.measures` says why. Topics where a
measure has no value for some system (undefined measures, topics left out), or no scaled
value, are left out of that measure's means and tests, raw and scaled alike, for every
system, and counted with the reason (:attr:`MeasureSummary.left_out_why`, in every
title). Mid-ranks never leave a topic out: when some row with a scaled value has none
(bounded scales list none; ``empty_topics="zero"`` gives the topics without relevant
documents mid-rank 1 even when mid-ranks were not asked for), the midrank transform is
left out of that measure's scale-freeness decision (:attr:`MeasureSummary.midranks`
says so, and the notes when the scores hold mid-ranks of other measures).

:func:`compare` goes from qrels and runs to the leaderboard: it reads names as ir_measures
and trec_eval spell them, builds the scales it needs into a store (estimating first), and
calls :func:`irscale.transform`.
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, IrscaleWarning
from irscale.scales.analysis.inference import (
    CORRECTIONS,
    adjust_pvalues,
    randomisation_pvalues,
    randomised_tukey_hsd,
    t_interval,
)
from irscale.scales.analysis.leaderboard_output import Leaderboard, MeasureSummary
from irscale.scales.analysis.significance_input import pairs
from irscale.scales.analysis.two_sample import ranksum_pvalues, sign_pvalues, signrank_pvalues, ttest_pvalues
from irscale.scales.measures.parse import parse_measure
from irscale.scales.runs.scores import scale_kinds
from irscale.scales.runs.standardize import STANDARDISATIONS, standardize_matrix
from irscale.scales.tables.layouts import scale_kind, with_width

#: Paired tests of the leaderboard (``test``), each giving a p-value per pair of systems.
LEADERBOARD_TESTS = ("ttest", "signrank", "sign", "ranksum", "randomisation", "tukey-hsd")
#: Corrections over the family of comparisons (``tukey-hsd`` needs none).
LEADERBOARD_CORRECTIONS = (*CORRECTIONS, "none")
#: Decimals of the means that ranks compare (SPEC section 6).
RANK_DECIMALS = 8

_PVALUES = {"ttest": ttest_pvalues, "signrank": signrank_pvalues, "sign": sign_pvalues, "ranksum": ranksum_pvalues}


def _check_choice(name: str, value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise IrscaleError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def _check_level(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise IrscaleError(f"{name} must be a number between 0 and 1, got {value!r}")
    return float(value)


def _matrix(rows: pd.DataFrame, column: str, runs: list[str]) -> pd.DataFrame:
    """Topics x runs matrix of one column (NaN where a run has no value)."""
    m = rows.pivot_table(index="topic", columns="run", values=column, aggfunc="first", dropna=False, sort=False)
    return m.reindex(columns=runs).astype(np.float64)


def _ranks(means: np.ndarray) -> pd.array:
    """1 = highest mean; equal means (to :data:`RANK_DECIMALS`) share the smaller rank."""
    rounded = pd.Series(np.round(means, RANK_DECIMALS))
    return pd.array(rounded.rank(ascending=False, method="min"), dtype="Int64")


def _interval(x: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Student's t interval of each column's mean, within [0, 1] (the range of scaled
    values, where the mean lies); NaN with one topic."""
    low, high = t_interval(x, confidence)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def _pvalues(x: np.ndarray, test: str, permutations: int, seed: int) -> np.ndarray:
    if test == "tukey-hsd":
        return randomised_tukey_hsd(x, permutations=permutations, seed=seed)
    if test == "randomisation":
        return randomisation_pvalues(x, permutations=permutations, seed=seed)
    return _PVALUES[test](x)


def _decisions(x: np.ndarray, family: np.ndarray, test: str, correction: str, alpha: float, permutations: int,
               seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(adjusted p-values, decisions) of the pairs in ``family`` (a mask over
    :func:`pairs`): +1 when the first system of the pair is significantly better."""
    i, j = pairs(x.shape[1])
    p = _pvalues(x, test, permutations, seed)[family]
    if correction != "none" and test != "tukey-hsd":
        p = adjust_pvalues(p, correction)
    means = x.mean(axis=0)
    diff = means[i[family]] - means[j[family]]
    # equal means computed in different orders may differ in the last bits: no direction then
    tol = 64 * np.finfo(np.float64).eps * max(1.0, float(np.abs(x).max(initial=0.0)))
    direction = np.where(diff > tol, 1, np.where(diff < -tol, -1, 0))
    return p, np.where(p <= alpha, direction, 0)


def _transforms(raw: np.ndarray, scaled: np.ndarray | None, midrank: np.ndarray | None
                ) -> dict[str, np.ndarray]:
    """The matrices of every transform the scores allow (module docstring)."""
    out = {"raw": raw}
    if scaled is None:
        return out
    out["unq"] = scaled
    if midrank is not None:
        out["midrank"] = midrank
    if raw.shape[1] >= 2:
        for method in STANDARDISATIONS:
            out[method] = standardize_matrix(raw, method)
    return out


def _reason_of(measure: str) -> str:
    """Why scores of ``measure`` have no scaled values: no scale exists for it, or the scores
    were written without one."""
    try:
        why = parse_measure(measure).scales_reason()
    except IrscaleError:
        why = None
    return why or "no scaled values in the scores (transform without a store, or with raw_only)"


def _kind_of(measure: str, rows: pd.DataFrame) -> str | None:
    """What the scale of ``measure`` is (exact: closed form, rank oracle or table; bounded,
    with the widest scaled interval of its ``rows``)."""
    width = float((rows["scaled_hi"] - rows["scaled_lo"]).max()) if "scaled_hi" in rows else None
    if "_kind" in rows:                 # bounded scales standing in for exact ones: with their width
        return with_width(str(rows["_kind"].iloc[0]), width)
    try:
        return scale_kind(parse_measure(measure), width)
    except IrscaleError:
        return None


def _midranks(rows: pd.DataFrame, runs: list[str], complete: pd.Series) -> tuple[np.ndarray | None, str | None]:
    """The mid-rank matrix over the ``complete`` topics, (midrank - 1)/(n_runs - 1), and
    whether it decides scale-freeness: ``"used"`` when every row with a scaled value has
    one, else ``"left out: ..."`` (and no matrix); None when no row has one. Mid-ranks
    never leave a topic out of the means and tests."""
    if "midrank" not in rows or "n_runs" not in rows:
        return None, None
    value = (rows["midrank"].astype(float) - 1) / (rows["n_runs"].astype(float) - 1).clip(lower=1)
    if not value.notna().any():
        return None, None
    scaled = rows["scaled"].notna()
    lacking = int((scaled & value.isna()).sum())
    if lacking:
        return None, f"left out: {lacking} of its {int(scaled.sum())} rows with a scaled value have no mid-rank"
    return _matrix(rows.assign(_mid=value), "_mid", runs)[complete].to_numpy(), "used"


def _left_out_why(no_value: int, no_scaled: int) -> str | None:
    """Why topics were left out of a measure's means and tests, as titles say it."""
    if no_value and no_scaled:
        return f"{no_value} no value, {no_scaled} no scaled value"
    return "no value" if no_value else "no scaled value" if no_scaled else None


def _midranks_asked(scores: pd.DataFrame) -> bool:
    """Whether the scores hold mid-ranks that tell something (on a scale of more than one
    run): transform was asked for them (``empty_topics="zero"`` gives topics without
    relevant documents mid-rank 1 of 1 run even when they were not)."""
    if "midrank" not in scores or "n_runs" not in scores:
        return False
    return bool((scores["midrank"].notna() & (scores["n_runs"].astype(float) > 1)).any())


def _one_measure(rows: pd.DataFrame, measure: str, label: str, runs: list[str], baseline: str | None, test: str,
                 correction: str, alpha: float, confidence: float, permutations: int, seed: int):
    raw_m = _matrix(rows, "raw", runs)
    scaled_m = _matrix(rows, "scaled", runs) if "scaled" in rows else None
    has_scale = scaled_m is not None and bool(scaled_m.notna().to_numpy().any())
    complete = raw_m.notna().all(axis=1)
    no_value = int((~complete).sum())
    if has_scale:       # raw and scaled means over the same topics
        complete &= scaled_m.notna().all(axis=1)
    mid, midranks = _midranks(rows, runs, complete) if has_scale else (None, None)
    raw = raw_m[complete].to_numpy()
    scaled = scaled_m[complete].to_numpy() if has_scale else None
    n_topics = raw.shape[0]
    reason = None
    if not has_scale:
        reason = str(rows["_reason"].iloc[0]) if "_reason" in rows and rows["_reason"].notna().any() else \
            _reason_of(measure)
    left_out = int((~complete).sum())
    summary = MeasureSummary(measure, label, has_scale, reason, n_topics, left_out,
                             _kind_of(measure, rows) if has_scale else None,
                             _left_out_why(no_value, left_out - no_value), midranks)
    frames = {"raw": raw_m[complete]}
    if has_scale:
        frames["scaled"] = scaled_m[complete]
    if n_topics == 0:
        raise IrscaleError(f"{label}: no topic where every system has a value; nothing to compare")
    k = len(runs)
    table = pd.DataFrame({"measure": measure, "label": label, "run": runs, "topics": n_topics,
                          "raw_mean": raw.mean(axis=0)})
    table["raw_rank"] = _ranks(table["raw_mean"].to_numpy())
    if has_scale:
        table["scaled_mean"] = scaled.mean(axis=0)
        table["scaled_rank"] = _ranks(table["scaled_mean"].to_numpy())
        table["ci_low"], table["ci_high"] = _interval(scaled, confidence)
    else:
        table["scaled_mean"] = table["ci_low"] = table["ci_high"] = np.nan
        table["scaled_rank"] = pd.array([pd.NA] * k, dtype="Int64")
    mats = _transforms(raw, scaled, mid)
    if k < 2 or n_topics < 2:            # nothing to test: one system, or one topic (no variance)
        if baseline is not None:
            table["p_value"] = table["raw_p_value"] = np.nan
            table["decision"] = table["raw_decision"] = pd.array([pd.NA] * k, dtype="Int64")
            table["differs"] = table["scale_free"] = pd.array([pd.NA] * k, dtype="boolean")
        else:
            for col in ("wins", "losses", "raw_wins", "raw_losses", "differs", "not_scale_free"):
                table[col] = pd.array([pd.NA] * k, dtype="Int64")
        return summary, table, pd.DataFrame(), tuple(mats), frames
    i, j = pairs(k)
    if baseline is not None:
        b = runs.index(baseline)
        family = (i == b) | (j == b)
    else:
        family = np.ones(i.size, bool)
    decided = {name: _decisions(x, family, test, correction, alpha, permutations, seed) for name, x in mats.items()}
    fi, fj = i[family], j[family]
    main = "unq" if has_scale else "raw"
    pair_rows = pd.DataFrame({"measure": measure, "label": label, "a": np.array(runs, dtype=object)[fi],
                              "b": np.array(runs, dtype=object)[fj],
                              "mean_difference": mats[main].mean(axis=0)[fi] - mats[main].mean(axis=0)[fj],
                              "p_value": decided[main][0], "decision": decided[main][1],
                              "raw_p_value": decided["raw"][0], "raw_decision": decided["raw"][1]})
    for name, (_, d) in decided.items():
        pair_rows[f"decision_{name.replace('-', '_')}"] = d
    if has_scale:
        pair_rows["differs"] = pair_rows["decision"] != pair_rows["raw_decision"]
        every = np.stack([d for _, d in decided.values()])
        pair_rows["scale_free"] = (every == every[0]).all(axis=0)
    else:
        pair_rows["differs"] = pd.NA
        pair_rows["scale_free"] = pd.NA
    if baseline is not None:
        # every pair holds the baseline: orient it as (system, baseline)
        flip = (pair_rows["a"] == baseline).to_numpy()
        pair_rows.loc[flip, ["a", "b"]] = pair_rows.loc[flip, ["b", "a"]].to_numpy()
        for c in ["mean_difference", "decision", "raw_decision", *[c for c in pair_rows if c.startswith("decision_")]]:
            pair_rows.loc[flip, c] = -pair_rows.loc[flip, c]
        by_run = pair_rows.set_index("a")
        table["p_value"] = table["run"].map(by_run["p_value"])
        table["decision"] = table["run"].map(by_run["decision"]).astype("Int64")
        table["raw_p_value"] = table["run"].map(by_run["raw_p_value"])
        table["raw_decision"] = table["run"].map(by_run["raw_decision"]).astype("Int64")
        table["differs"] = table["run"].map(by_run["differs"]).astype("boolean")
        table["scale_free"] = table["run"].map(by_run["scale_free"]).astype("boolean")
    else:
        for col, key in (("wins", "decision"), ("raw_wins", "raw_decision")):
            d = pair_rows[key].to_numpy()
            table[col] = np.bincount(fi[d > 0], minlength=k) + np.bincount(fj[d < 0], minlength=k)
            table[col.replace("wins", "losses")] = (np.bincount(fi[d < 0], minlength=k)
                                                    + np.bincount(fj[d > 0], minlength=k))
        if has_scale:
            bad = pair_rows["differs"].to_numpy(bool)
            table["differs"] = np.bincount(fi[bad], minlength=k) + np.bincount(fj[bad], minlength=k)
            free = pair_rows["scale_free"].to_numpy(bool)
            table["not_scale_free"] = np.bincount(fi[~free], minlength=k) + np.bincount(fj[~free], minlength=k)
        else:
            table["differs"] = table["not_scale_free"] = pd.NA
    return summary, table, pair_rows, tuple(mats), frames


def leaderboard(scores: pd.DataFrame, measures: Iterable[str] | None = None, baseline: str | None = None, *,
                test: str = "ttest", correction: str = "holm", alpha: float = 0.05, confidence: float = 0.95,
                permutations: int = 1000, seed: int = 0, labels: dict[str, str] | None = None,
                reasons: dict[str, str] | None = None, kinds: dict[str, str] | None = None) -> Leaderboard:
    """The leaderboard of per-topic ``scores`` (a table of :func:`irscale.transform`; see
    the module docstring for every column).

    Parameters
    ----------
    scores : DataFrame
        Columns ``run, topic, measure, raw`` and, for scaled measures, ``scaled`` (and
        optionally ``midrank, n_runs``), one row per (run, topic, measure); one
        ``rb_scale`` mode.
    measures : names, optional
        Canonical names of the measures to show, in order (default: all, in the order of
        the scores).
    baseline : str, optional
        The run every other is tested against; without it every pair is tested.
    test, correction, alpha, confidence
        See the module docstring. ``permutations`` and ``seed``: of ``randomisation`` and
        ``tukey-hsd``.
    labels, reasons : dict, optional
        The name each measure was asked for by, and why a measure has no scale.
    kinds : dict, optional
        What answered a measure when it is not one kind of scale (rank oracles for some
        count vectors, tables for the others); default ``scores.attrs["scale_kinds"]``,
        which :func:`irscale.transform` sets, else what the ``scale`` column says.
    """
    _check_choice("test", test, LEADERBOARD_TESTS)
    _check_choice("correction", correction, LEADERBOARD_CORRECTIONS)
    alpha, confidence = _check_level("alpha", alpha), _check_level("confidence", confidence)
    if not isinstance(scores, pd.DataFrame):
        raise IrscaleError(f"scores must be the DataFrame irscale.transform returns, got {type(scores).__name__}")
    missing = [c for c in ("run", "topic", "measure", "raw") if c not in scores.columns]
    if missing:
        raise IrscaleError(f"scores have no column {', '.join(missing)}; give the DataFrame irscale.transform returns")
    if "rb_scale" in scores.columns and scores["rb_scale"].nunique() > 1:
        raise IrscaleError("scores mix rb_scale modes; select one, e.g. scores[scores.rb_scale == 'feasible']")
    original = scores
    scores = scores.assign(run=scores["run"].astype(str), topic=scores["topic"].astype(str),
                           measure=scores["measure"].astype(str))
    original_measures = scores["measure"]
    runs = list(dict.fromkeys(scores["run"]))
    present = list(dict.fromkeys(scores["measure"]))
    chosen = present if measures is None else [str(m) for m in measures]
    absent = [m for m in chosen if m not in present]
    if absent:
        raise IrscaleError(f"scores have no measure {', '.join(absent)} (they hold {', '.join(present)})")
    if baseline is not None:
        baseline = str(baseline)
        if baseline not in runs:
            from difflib import get_close_matches

            close = get_close_matches(baseline, runs, n=1)
            raise IrscaleError(f"baseline {baseline!r} is not one of the {len(runs)} runs"
                               + (f" (did you mean {close[0]}?)" if close else "")
                               + f"; runs: {', '.join(runs[:8])}{'...' if len(runs) > 8 else ''}")
    labels, reasons = labels or {}, reasons or {}
    kinds = (original.attrs.get("scale_kinds") or scale_kinds(original)) if kinds is None else kinds
    summaries, tables, pair_tables, used, matrices = [], [], [], set(), {}
    for m in chosen:
        rows = scores[scores["measure"] == m]
        if m in reasons:
            rows = rows.assign(_reason=reasons[m])
        if m in kinds:
            rows = rows.assign(_kind=kinds[m])
        summary, table, pair_rows, transforms, frames = _one_measure(
            rows, m, labels.get(m, m), runs, baseline, test, correction, alpha, confidence, permutations, seed)
        key = "scaled_mean" if summary.scaled else "raw_mean"
        tables.append(table.sort_values([key, "run"], ascending=[False, True], kind="stable"))
        pair_tables.append(pair_rows)
        summaries.append(summary)
        used.update(transforms)
        matrices[m] = frames
    notes = [f"{s.label}: {s.left_out} topic(s) left out of its means and tests, raw and scaled alike "
             f"({s.left_out_why})" for s in summaries if s.left_out]
    if _midranks_asked(scores):
        notes += [f"{s.label}: mid-ranks left out of its scale-freeness decision "
                  f"({(s.midranks or 'none of its rows has one').removeprefix('left out: ')})"
                  for s in summaries if s.scaled and s.midranks != "used"]
    notes += [f"{s.label}: one topic, so no confidence interval and no test" for s in summaries if s.topics < 2]
    if len(runs) < 2:
        notes.append("one run: nothing to compare it with")
    for note in notes:
        warnings.warn(note, IrscaleWarning, stacklevel=2)
    order = ("raw", "unq", "midrank", *STANDARDISATIONS)
    random = test in ("tukey-hsd", "randomisation")
    return Leaderboard(pd.concat(tables, ignore_index=True), pd.concat(pair_tables, ignore_index=True), summaries,
                       baseline, test, "none" if test == "tukey-hsd" else correction, alpha, confidence,
                       tuple(t for t in order if t in used),
                       str(scores["rb_scale"].iloc[0]) if "rb_scale" in scores.columns and len(scores) else None,
                       notes=notes, scores=original[original_measures.isin(chosen).to_numpy()],
                       matrices=matrices, permutations=permutations if random else None,
                       seed=seed if random else None)


__all__ = ["LEADERBOARD_CORRECTIONS", "LEADERBOARD_TESTS", "Leaderboard", "MeasureSummary", "leaderboard"]
