"""Scoring judged runs: raw values, unq ranks and scaled values, one row per (run, topic,
measure) (the columns of :data:`irscale.scales.runs.scores.COLUMNS`; SPEC sections 2 and 5).

The raw score is the measure's value of the judged run for the topic's recall base, and
its unq rank comes from the judged run itself (:meth:`Scale.rank_judged`: exact, no
rounded floats). :class:`~irscale.scales.runs.evaluator.Evaluator` calls it for every
entry point; the conventions are :mod:`irscale.scales.runs.conventions`'.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from irscale.enumerate.progress import progress_bar
from irscale.errors import OracleListError, warn
from irscale.scales.measures.measure import Measure
from irscale.scales.runs.judging import JudgedRuns, grade_counts
from irscale.scales.runs.qrels import sort_topics
from irscale.scales.runs.scores import COLUMNS, bounded_columns

if TYPE_CHECKING:
    from irscale.store.reader import Store


def _topic_groups(measure, counts: np.ndarray) -> list[tuple[object, np.ndarray]]:
    """(recall base, rows) of the rows sharing a topic recall base: ``counts`` holds per
    row the judged documents of each grade 1..G of the measure."""
    groups: dict = {}
    for c in np.unique(counts, axis=0):
        rb = measure.recall_base_of(c)          # one group for measures without recall base
        groups[rb] = groups.get(rb, False) | (counts == c).all(axis=1)
    return list(groups.items())


def _rank_rows(scale, grades: np.ndarray, lengths: np.ndarray, midranks: bool, lacking: dict | None = None
               ) -> tuple:
    """(rank, k, scaled, scaled_lo, scaled_hi, mid-rank, n_runs) of judged runs on one
    scale: exact scales give the rank (lo = hi), bounded ones the midpoint of an interval
    that holds it; ranks, k and n_runs past 64 bits, and a K the scale only brackets (several
    bound grades), are 0 (shown empty); mid-ranks NaN unless asked and where the scale counts
    none (bounded scales, graded rank oracles: ``lacking`` gets the scale's label and why)."""
    lo, hi = scale.rank_bounds_judged(grades, lengths)
    exact = lo is hi
    rank = lo if exact else (lo + hi) // 2            # bounded: the midpoint rank, rounded down
    if exact:
        s_lo = s_hi = scaled = scale.scaled(rank)
    else:                                             # within half the interval of the exact value
        s_lo, s_hi = scale.scaled_bounds_judged(grades, lengths)
        scaled = s_lo + (s_hi - s_lo) / 2
    mid = np.full(grades.shape[0], np.nan)
    if midranks and not exact and lacking is not None:
        lacking[scale._label()] = "a bounded scale brackets ranks and counts no runs of a value"
    elif midranks:
        try:
            mid = scale.midranks_of_ranks(rank)
        except OracleListError as e:                  # a scale that ranks without counting runs
            if lacking is None:
                raise
            lacking[scale._label()] = str(e)
    wide = scale.k >= 2 ** 63
    return (np.zeros(grades.shape[0], np.int64) if wide else np.asarray(rank).astype(np.int64),
            0 if wide or not scale.k_exact else scale.k, scaled, s_lo, s_hi, mid,
            scale.n_runs if scale.n_runs < 2 ** 63 else 0)


def measure_grades(measure: Measure, rel: np.ndarray, level_counts: np.ndarray,
                   rel_level: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The judged grades (rows x N, 0..G) a measure reads and each row's per-grade counts
    (rows x G): levels above G fold into G; with ``rel_level`` (trec_eval's ``-l``) a
    binary measure counts levels >= rel_level as relevant (graded measures read levels as
    grades and ignore it)."""
    if rel_level is not None and rel_level > 1 and measure.levels == 2:
        grades = (rel[:, :measure.n] >= rel_level).astype(np.uint8)
        counts = level_counts[:, rel_level:].sum(axis=1, keepdims=True)
        return grades, counts
    return np.minimum(rel[:, :measure.n], measure.levels - 1), grade_counts(level_counts, measure.levels)


def _top_grades(counts: np.ndarray) -> np.ndarray:
    """Per row, the highest grade with a judged document (0 when none)."""
    present = counts > 0
    return np.where(present.any(axis=1), counts.shape[1] - np.argmax(present[:, ::-1], axis=1), 0)


def _has_scale(tables: object, measure: Measure) -> bool:
    """Whether ``tables`` scales ``measure`` (bounded scales cover measures without exact ones)."""
    covers = getattr(tables, "covers", None)
    return tables is not None and (measure.has_scales or covers is not None and covers(measure))


def score_judged(judged: list[JudgedRuns], measures: Iterable[Measure], tables: Store | None = None,
                 rb_scale: str = "feasible", midranks: bool = False, empty_topics: str = "zero",
                 missing_topics: str = "zero", rel_level: int | None = None, bounds: bool = False,
                 unscaled: Iterable[Measure] = (), progress: bool = False) -> pd.DataFrame:
    """Rows of :data:`COLUMNS` for judged runs (ranks empty when ``tables`` is None, for
    measures without scales and for those of ``unscaled``: no scale was to be had); with
    ``bounds`` also ``scaled_lo`` and ``scaled_hi``; conventions as
    :class:`~irscale.scales.runs.conventions.Conventions` says."""
    unscaled = set(unscaled)
    rel = np.concatenate([j.rel for j in judged]) if judged else np.zeros((0, 1), np.uint8)
    lengths = np.concatenate([j.lengths if j.lengths is not None else np.full(len(j.topics), j.rel.shape[1])
                              for j in judged]) if judged else np.zeros(0, np.int64)
    width = max((j.level_counts.shape[1] for j in judged), default=1)
    levels_all = (np.concatenate([np.pad(j.level_counts, ((0, 0), (0, width - j.level_counts.shape[1])))
                                  for j in judged]) if judged else np.zeros((0, 1), np.int64))
    runs = np.repeat(np.array([j.run for j in judged], dtype=object), [len(j.topics) for j in judged])
    topics = np.array([t for j in judged for t in j.topics], dtype=object)
    missing = np.concatenate([np.isin(np.array(j.topics, dtype=object), np.array(j.missing, dtype=object))
                              for j in judged]) if judged else np.zeros(0, bool)
    rows = rel.shape[0]
    frames = []
    skipped: dict[str, set] = {}
    for mi, m in enumerate(measures):
        grades, counts = measure_grades(m, rel, levels_all, rel_level)
        rb = counts.sum(axis=1)
        empty = rb == 0
        keep = ~(missing & (missing_topics == "skip"))
        if empty_topics == "skip":
            keep &= ~empty
            if empty.any():
                skipped.setdefault(str(m), set()).update(topics[empty].tolist())
        ranked = _has_scale(tables, m) and m not in unscaled    # measures without scales: warned of
        raw = np.full(rows, np.nan)
        rank = np.zeros(rows, np.int64)
        k = np.zeros(rows, np.int64)
        scaled, s_lo, s_hi, mid = (np.full(rows, np.nan) for _ in range(4))
        n_runs = np.zeros(rows, np.int64)
        kind = np.full(rows, None, dtype=object)        # what scaled each row (empty: nothing did)
        done = np.zeros(rows, bool)
        undefined: set = set()
        lacking: dict[str, str] = {}                   # scales that count no mid-ranks: why
        unscored = empty & m.recall_base.depends       # no relevant document: no recall base
        scored = keep & ~unscored
        factor = np.ones(rows)
        tops = _top_grades(counts)
        for top in np.unique(tops).tolist():
            factor[tops == top] = m.topic_value_factor(top)
        groups = _topic_groups(m, counts)
        bar = progress_bar(total=len(groups), desc=f"scaling {m}", unit="scale", leave=False,
                           disable=not (progress and ranked))      # shown past a few seconds (rank oracles at N = 30)
        for topic_rb, sel in groups:
            bar.update()
            sel = sel & scored
            if not sel.any():
                continue
            if not m.defined(topic_rb):
                undefined.update(topics[sel].tolist())   # e.g. Twist with N < 2 RB: the topic has no score
                continue
            raw[sel] = m.values_of_judged(grades[sel], lengths[sel], topic_rb) * factor[sel]
            if ranked:
                scale = tables.scale(m, topic_rb if rb_scale == "feasible" else m.common_rb())
                if scale is None:                   # no bounded scale for this recall base: warned of
                    continue
                (rank[sel], k[sel], scaled[sel], s_lo[sel], s_hi[sel], mid[sel],
                 n_runs[sel]) = _rank_rows(scale, grades[sel], lengths[sel], midranks, lacking)
                kind[sel] = scale.table.kind
                done |= sel
        bar.close()
        zeroed = keep & unscored                    # empty_topics="zero": trec_eval scores them 0
        if zeroed.any():
            raw[zeroed] = 0.0
            if ranked and rb_scale == "common":
                scale = tables.scale(m, m.common_rb())
                (rank[zeroed], k[zeroed], scaled[zeroed], s_lo[zeroed], s_hi[zeroed], mid[zeroed],
                 n_runs[zeroed]) = _rank_rows(scale, grades[zeroed], lengths[zeroed], midranks, lacking)
                kind[zeroed] = scale.table.kind
            elif ranked:                            # the one feasible run: nothing relevant
                rank[zeroed], k[zeroed], n_runs[zeroed] = 1, 1, 1
                if midranks:
                    mid[zeroed] = 1.0
                scaled[zeroed] = s_lo[zeroed] = s_hi[zeroed] = 0.0
                kinds = pd.Series(kind[done]).value_counts()   # a scale of one run: as the measure's others
                kind[zeroed] = kinds.index[0] if len(kinds) else "exact: closed form"
            done |= zeroed
        if ranked:                                  # empty: undefined topics (raw NaN), counts past 64 bits
            rank, k, n_runs = (pd.array(np.where(done & (a > 0), a, 0), dtype="Int64") for a in (rank, k, n_runs))
            for a in (rank, k, n_runs):
                a[a == 0] = pd.NA
        else:
            rank = k = n_runs = pd.array(np.full(rows, pd.NA), dtype="Int64")
        if undefined:
            warn(f"{m} is undefined for {len(undefined)} topic(s) at N = {m.n} (Twist and CRP need "
                          f"N >= 2 RB; gR and nDCG a judged document with a positive gain), e.g. "
                          f"{', '.join(sorted(undefined)[:3])}: their scores are empty")
        if lacking:
            label, why = next(iter(lacking.items()))
            why = why if why.startswith(label) else f"{label}: {why}"
            warn(f"no mid-ranks for {m} on {len(lacking)} of its count vectors (e.g. {why}): their midrank cells "
                 f"are empty, the other columns are not")
        frame = pd.DataFrame({
            "run": runs, "topic": topics, "measure": str(m), "n": m.n, "rb": rb, "raw": raw,
            "rank": rank, "k": k, "scaled": scaled, "midrank": mid, "n_runs": n_runs, "rb_scale": rb_scale,
            "scale": kind,
            "_row": np.arange(rows), "_m": mi})
        if bounds:
            frame.insert(frame.columns.get_loc("scaled") + 1, "scaled_lo", s_lo)
            frame.insert(frame.columns.get_loc("scaled") + 2, "scaled_hi", s_hi)
        frames.append(frame[keep])
    if skipped:
        every = set.union(*skipped.values())
        which = "" if all(v == every for v in skipped.values()) else f" (for {', '.join(skipped)})"
        warn(f"{len(every)} topic(s) without relevant documents{which} left out: "
                      f"{', '.join(sort_topics(every)[:5])}{'...' if len(every) > 5 else ''} "
                      f"(empty_topics='zero', the default, scores them 0 and counts them, as trec_eval does)")
    if not frames:
        return pd.DataFrame(columns=bounded_columns() if bounds else COLUMNS)
    out = pd.concat(frames, ignore_index=True).sort_values(["_row", "_m"], kind="stable")
    return out.drop(columns=["_row", "_m"]).reset_index(drop=True)


__all__ = ["measure_grades", "score_judged"]
