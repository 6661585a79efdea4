"""Transform real runs' per-topic scores into interval-scaled scores (SPEC sections 2 and 5).

Every (run, topic) pair is turned into its judged run of length N (trec_eval order, cut at
N, padded and unjudged documents non-relevant; :mod:`irscale.scales.runs.trec`). The raw score
is the measure's value of that judged run for the topic's recall base, and its unq rank
comes from the judged run itself (:meth:`Scale.rank_judged`: exact, no rounded floats).

Output rows, one per (run, topic, measure):

``run``       run name (the run file's tag)
``topic``     topic id
``measure``   canonical measure name (``AP@30``)
``n``         cutoff N
``rb``        the topic's recall base (number of relevant documents); the scale of a
              measure that does not depend on it ignores it
``raw``       the measure's value (float64; equals trec_eval's to its printed digits)
``rank``      1-based unq rank, 1..k (empty without tables)
``k``         number of distinct values of the scale used
``scaled``    (rank - 1) / (k - 1), in [0, 1]
``scaled_lo``, ``scaled_hi``  with ``bounded``: an interval that holds the exact scaled
              value (equal to ``scaled`` for exact scales; for bounded scales, past
              N = 40, ``scaled`` is the interval's midpoint, ``rank`` the midpoint of the
              rank interval rounded down, and ``rank`` and ``k`` are empty beyond 64 bits)
``midrank``   with ``midranks=True``: the mean 1-based position of the run's value in the
              sorted list of all runs of the scale (ties get the average of the positions
              they occupy); for comparison with unq ranks only
``n_runs``    number of runs of the scale used (feasible runs for the topic's recall base)
``rb_scale``  how RB-dependent measures were scaled: ``feasible`` (each topic on the
              scale of its own recall base, over the runs that can occur for it) or
              ``common`` (every topic on the one scale of RB >= N, as in the original
              paper); SPEC section 2

With ``standardize``, per-topic standardisations of ``raw`` over the runs transformed
(:mod:`irscale.scales.runs.standardize`) follow as columns ``zscore``, ``zscore_cdf``,
``std_linear``, ``ecdf``.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from irscale.enumerate.lazy import lazy_module
from irscale.errors import IrscaleError, IrscaleWarning
from irscale.scales.measures.aliases import DEFAULT_NAMES
from irscale.scales.measures.measure import Measure
from irscale.scales.runs.inputs import QrelsInput, RunsInput, check_run_paths, qrels_of, read_runs, runs_depth
from irscale.scales.runs.judging import JudgedRuns, grade_counts, judge, qrels_rbs, warn_coverage
from irscale.scales.runs.preflight import (
    build_tables,
    check_missing,
    missing_tables,
    open_or_none,
    read_measures,
    table_needs,
    warn_folded_levels,
    warn_unscalable,
)
from irscale.scales.runs.qrels import sort_topics
from irscale.scales.runs.scores import COLUMNS, bounded_columns
from irscale.scales.runs.standardize import STANDARDISATIONS, check_transforms
from irscale.scales.runs.standardize import standardize as standardize_scores
from irscale.scales.tables.closed import CLOSED_FORMS

if TYPE_CHECKING:
    from irscale.store.reader import Store

# certified rank intervals (mpmath, numba kernels): loaded when a transform opts in to them
bounded_scales = lazy_module("irscale.scales.tables.bounded")

RB_SCALES = ("feasible", "common")
#: What ``empty_topics`` takes: topics without relevant documents left out, or scored 0 (trec_eval).
EMPTY_TOPICS = ("skip", "zero")
#: What ``missing_topics`` takes: topics a run does not answer scored 0 (trec_eval -c), or left out.
MISSING_TOPICS = ("zero", "skip")

# -- scoring -------------------------------------------------------------------------------
def _topic_groups(measure, counts: np.ndarray) -> list[tuple[object, np.ndarray]]:
    """(recall base, rows) of the rows sharing a topic recall base: ``counts`` holds per
    row the judged documents of each grade 1..G of the measure."""
    groups: dict = {}
    for c in np.unique(counts, axis=0):
        rb = measure.recall_base_of(c)          # one group for measures without recall base
        groups[rb] = groups.get(rb, False) | (counts == c).all(axis=1)
    return list(groups.items())


def _rank_rows(scale, grades: np.ndarray, lengths: np.ndarray, midranks: bool) -> tuple:
    """(rank, k, scaled, scaled_lo, scaled_hi, mid-rank, n_runs) of judged runs on one
    scale: exact scales give the rank (lo = hi), bounded ones the midpoint of an interval
    that holds it; ranks, k and n_runs past 64 bits are 0 (shown empty); mid-ranks NaN
    unless asked and where the scale lists none (bounded scales)."""
    lo, hi = scale.rank_bounds_judged(grades, lengths)
    exact = lo is hi
    rank = lo if exact else (lo + hi) // 2            # bounded: the midpoint rank, rounded down
    if exact:
        s_lo = s_hi = scaled = scale.scaled(rank)
    else:                                             # within half the interval of the exact value
        s_lo, s_hi = scale.scaled(lo), scale.scaled(hi)
        scaled = s_lo + (s_hi - s_lo) / 2
    mid = scale.midranks_of_ranks(rank) if midranks and exact else np.full(grades.shape[0], np.nan)
    wide = scale.k >= 2 ** 63
    return (np.zeros(grades.shape[0], np.int64) if wide else np.asarray(rank).astype(np.int64),
            0 if wide else scale.k, scaled, s_lo, s_hi, mid, scale.n_runs if scale.n_runs < 2 ** 63 else 0)


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
                 rb_scale: str = "feasible", midranks: bool = False, empty_topics: str = "skip",
                 missing_topics: str = "zero", rel_level: int | None = None, bounds: bool = False) -> pd.DataFrame:
    """Rows of :data:`COLUMNS` for judged runs (ranks empty when ``tables`` is None and
    for measures without scales); with ``bounds`` also ``scaled_lo`` and ``scaled_hi``;
    conventions as in :func:`transform`."""
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
        ranked = _has_scale(tables, m)                  # measures without scales: warned of by transform
        raw = np.full(rows, np.nan)
        rank = np.zeros(rows, np.int64)
        k = np.zeros(rows, np.int64)
        scaled, s_lo, s_hi, mid = (np.full(rows, np.nan) for _ in range(4))
        n_runs = np.zeros(rows, np.int64)
        done = np.zeros(rows, bool)
        undefined: set = set()
        unscored = empty & m.recall_base.depends       # no relevant document: no recall base
        scored = keep & ~unscored
        factor = np.ones(rows)
        tops = _top_grades(counts)
        for top in np.unique(tops).tolist():
            factor[tops == top] = m.topic_value_factor(top)
        for topic_rb, sel in _topic_groups(m, counts):
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
                 n_runs[sel]) = _rank_rows(scale, grades[sel], lengths[sel], midranks)
                done |= sel
        zeroed = keep & unscored                    # empty_topics="zero": trec_eval scores them 0
        if zeroed.any():
            raw[zeroed] = 0.0
            if ranked and rb_scale == "common":
                scale = tables.scale(m, m.common_rb())
                (rank[zeroed], k[zeroed], scaled[zeroed], s_lo[zeroed], s_hi[zeroed], mid[zeroed],
                 n_runs[zeroed]) = _rank_rows(scale, grades[zeroed], lengths[zeroed], midranks)
            elif ranked:                            # the one feasible run: nothing relevant
                rank[zeroed], k[zeroed], mid[zeroed], n_runs[zeroed] = 1, 1, 1.0, 1
                scaled[zeroed] = s_lo[zeroed] = s_hi[zeroed] = 0.0
            done |= zeroed
        if ranked:                                  # empty: undefined topics (raw NaN), counts past 64 bits
            rank, k, n_runs = (pd.array(np.where(done & (a > 0), a, 0), dtype="Int64") for a in (rank, k, n_runs))
            for a in (rank, k, n_runs):
                a[a == 0] = pd.NA
        else:
            rank = k = n_runs = pd.array(np.full(rows, pd.NA), dtype="Int64")
        if undefined:
            warnings.warn(f"{m} is undefined for {len(undefined)} topic(s) at N = {m.n} (Twist and CRP need "
                          f"N >= 2 RB; gR and nDCG a judged document with a positive gain), e.g. "
                          f"{', '.join(sorted(undefined)[:3])}: their scores are empty",
                          IrscaleWarning, stacklevel=3)
        frame = pd.DataFrame({
            "run": runs, "topic": topics, "measure": str(m), "n": m.n, "rb": rb, "raw": raw,
            "rank": rank, "k": k, "scaled": scaled, "midrank": mid, "n_runs": n_runs, "rb_scale": rb_scale,
            "_row": np.arange(rows), "_m": mi})
        if bounds:
            frame.insert(frame.columns.get_loc("scaled") + 1, "scaled_lo", s_lo)
            frame.insert(frame.columns.get_loc("scaled") + 2, "scaled_hi", s_hi)
        frames.append(frame[keep])
    if skipped:
        every = set.union(*skipped.values())
        which = "" if all(v == every for v in skipped.values()) else f" (for {', '.join(skipped)})"
        warnings.warn(f"{len(every)} topic(s) without relevant documents{which} left out: "
                      f"{', '.join(sort_topics(every)[:5])}{'...' if len(every) > 5 else ''} "
                      f"(empty_topics='zero' scores them 0 and counts them, as trec_eval does)",
                      IrscaleWarning, stacklevel=3)
    if not frames:
        return pd.DataFrame(columns=bounded_columns() if bounds else COLUMNS)
    out = pd.concat(frames, ignore_index=True).sort_values(["_row", "_m"], kind="stable")
    return out.drop(columns=["_row", "_m"]).reset_index(drop=True)


def transform(qrels: QrelsInput, runs: RunsInput,
              measures: str | Iterable[str | Measure], store: str | os.PathLike | Store | None = None, *,
              rb_scale: str = "feasible", raw_only: bool = False, midranks: bool = False, build_missing: bool = False,
              max_grade: int | None = None, empty_topics: str = "skip", missing_topics: str = "zero",
              rel_level: int | None = None, run_names: str = "tag", names: str = DEFAULT_NAMES,
              n_jobs: int | None = None,
              progress: bool = False, standardize: str | Iterable[str] | None = None,
              reference: pd.DataFrame | None = None, leave_one_out: bool = False, bounded: bool = False,
              error: float | None = None) -> pd.DataFrame:
    """Raw and interval-scaled per-topic scores of TREC runs.

    Parameters
    ----------
    qrels : str, path, Qrels, DataFrame, dict, ranx Qrels or iterable of ir_measures Qrel
        Relevance judgments: a TREC file (``topic iteration docno rel``; gzip allowed)
        or any form of :mod:`irscale.scales.runs.inputs` (``query_id, doc_id,
        relevance`` frames, ``{qid: {docid: rel}}``, ...).
    runs : path, folder, Run, DataFrame, dict, ranx Run, ScoredDoc iterable, or a list of them
        Run files (``topic Q0 docno rank score tag``; a folder stands for its files) or
        any form of :mod:`irscale.scales.runs.inputs`.
    measures : str or list
        Measure names, e.g. ``"AP@30,nDCG(b=2)@30"`` or ``["P@30", "RR@30"]``, in the
        vocabulary ``names``; trec_eval's names (``map_cut_30``, ``ndcg_cut_30``) are
        read in any.
    names : {"irscale", "ir_measures", "trec_eval"}
        How to read names that mean different measures in irscale and ir_measures
        (``ERR@20``, ``nDCG@10``); a prefix ``irm:``, ``irscale:``, ``trec:`` chooses for
        one name. ir_measures' ``nDCG@k`` and ``ERR@k`` take their gains from the qrels'
        levels; names without a cutoff (``map``, ``recip_rank``) rank the whole runs.
    store : str, path or Store, optional
        Table file with a table for every measure. Without it (or with ``raw_only``)
        only raw scores are computed and ``rank``, ``k``, ``scaled`` are empty.
    rb_scale : {"feasible", "common"}
        Scale of RB-dependent measures: per topic recall base over its feasible runs
        (default), or the one scale of RB >= N for every topic (the original paper).
    midranks : bool
        Also fill the ``midrank`` column (one pass over each table's run counts).
    build_missing : bool
        Build tables missing from ``store`` when they take about 15 s at most
        (:data:`~irscale.scales.runs.preflight.BUILD_ON_THE_FLY_SECONDS`) instead of failing.
    max_grade : int, optional
        Fold qrels levels above this grade into it before anything else (each measure
        then folds levels above its own top grade G into G).
    empty_topics : {"skip", "zero"}
        Topics of the qrels without a relevant document (for a measure): left out with a
        warning (default), or scored 0 and counted, as trec_eval does (every measure that
        depends on the recall base is 0 there; on the ``feasible`` scale such a topic has
        one run, rank 1, scaled 0).
    missing_topics : {"zero", "skip"}
        Evaluated topics a run has no ranking for: scored as the all-non-relevant run
        with a warning (default, trec_eval's ``-c``), or left out (trec_eval without
        ``-c``: means over the topics the run answers).
    rel_level : int, optional
        trec_eval's ``-l``: binary measures count levels >= rel_level as relevant (their
        recall base too); graded measures read the levels as grades and ignore it.
    run_names : {"tag", "file"}
        Name runs by their run tag (default; runs whose tags repeat are named by file
        with a warning) or by file name.
    n_jobs : int
        Workers building missing tables.
    progress : bool
        Progress bar while reading runs.
    standardize : str or sequence of str, optional
        Also add per-topic standardisations of the raw scores over the runs given (or
        ``reference``): ``zscore``, ``zscore-cdf``, ``std-linear``, ``ecdf`` (comma-separated
        or a list; ``"all"`` for every one), as columns ``zscore``, ``zscore_cdf``,
        ``std_linear``, ``ecdf`` (:func:`irscale.scales.runs.standardize.standardize`).
        Unlike ``scaled``, they change when runs are added or removed.
    reference : DataFrame, optional
        Scores of other runs (a table of this function) to standardise against.
    leave_one_out : bool
        ECDF of each run without its own score.
    bounded : bool
        Scale RBP, DCG, nDCG and nDCG_trec past N = 40, where no exact scale exists, by
        bounded scales (docs/bounded.md): certified intervals of their scaled values,
        written as ``scaled_lo`` and ``scaled_hi`` (columns added for every measure;
        equal to ``scaled`` where the scale is exact), ``rank`` and ``scaled`` their
        midpoints. Measures with closed forms or bounded scales need no store.
    error : float, optional
        Widest interval of a bounded scale, in scaled units (default 1e-4; implies
        ``bounded``): smaller costs time (widths shrink as 1 / grid cells).

    Returns
    -------
    pandas.DataFrame
        One row per (run, topic, measure) with the columns :data:`COLUMNS` (see the
        module docstring), runs in the order given, topics in qrels order.

    Warns
    -----
    IrscaleWarning
        For a run without a ranking for an evaluated topic (scored as all
        non-relevant) and for run topics the qrels do not evaluate (ignored).
    """
    if rb_scale not in RB_SCALES:
        raise IrscaleError(f"rb_scale must be one of {', '.join(RB_SCALES)}, got {rb_scale!r}")
    for name, value, allowed in (("empty_topics", empty_topics, EMPTY_TOPICS),
                                 ("missing_topics", missing_topics, MISSING_TOPICS)):
        if value not in allowed:
            raise IrscaleError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    if rel_level is not None and (isinstance(rel_level, bool) or not isinstance(rel_level, int) or rel_level < 1):
        raise IrscaleError(f"rel_level must be an integer >= 1, got {rel_level!r}")
    if max_grade is not None and (isinstance(max_grade, bool) or not isinstance(max_grade, int) or max_grade < 1):
        raise IrscaleError(f"max_grade must be an integer >= 1, got {max_grade!r}")
    if error is not None:
        if isinstance(error, bool) or not isinstance(error, (int, float)) or not 0 < error < 1:
            raise IrscaleError(f"error must be a number between 0 and 1 (the widest scaled interval of a bounded "
                               f"scale), got {error!r}")
        bounded = True
    methods = None if standardize is None else (
        STANDARDISATIONS if isinstance(standardize, str) and standardize.strip().lower() == "all"
        else check_transforms(standardize, STANDARDISATIONS))
    q = qrels_of(qrels)
    if not q.topics and empty_topics == "skip":
        raise IrscaleError(f"{q.path or 'qrels'}: no topic has a relevant document; nothing to evaluate")
    ms, later, typed = read_measures(measures, names, q, max_grade)
    ranked = (store is not None or bounded) and not raw_only
    if ranked and rb_scale == "common":
        per_topic = [m for m in ms if not m.has_common_scale()]
        if per_topic:
            raise IrscaleError(f"{', '.join(map(str, per_topic))} have no common scale (one table per topic); "
                               f"use rb_scale feasible")
    check_run_paths(runs)
    hint = (q.path or "QRELS") + ("" if max_grade is None else f" --max-grade {max_grade}")
    opened = open_or_none(store) if ranked else None
    path = None if not ranked else opened.path if opened is not None else store
    missing = {}

    def check_scales(new: list[Measure]) -> dict:
        """Warn of the measures without a scale; the tables the store lacks (checked)."""
        warn_unscalable([m for m in new if not (bounded and m.bounded_only)], typed, stacklevel=4)
        lack = missing_tables(opened, table_needs(q, new, rb_scale, max_grade, rel_level))
        if lack and path is None:
            raise IrscaleError(f"{', '.join(map(str, lack))} need tables: give a store (store=..., --store) to "
                               f"read or build them in (bounded scales and closed forms need none)")
        check_missing(path, lack, build_missing, hint, exists=opened is not None, n_jobs=n_jobs)
        return lack

    if ranked:                                   # everything checked before any run is read
        missing = check_scales(ms)
    warn_folded_levels(ms, q, max_grade, typed)
    run_list = read_runs(runs, None if later else max(m.n for m in ms), progress=progress, run_names=run_names)
    if later:                                    # names that rank the whole run: at the runs' depth
        more, _, more_typed = read_measures(later, names, q, max_grade, depth=runs_depth(run_list))
        new = [m for m in more if m not in ms]
        ms, typed = ms + new, {**more_typed, **typed}
        if ranked:
            missing.update(check_scales(new))
        warn_folded_levels(new, q, max_grade, typed)
    tables = opened if opened is not None or not ranked else CLOSED_FORMS    # closed forms need no store
    if missing:
        tables = build_tables(path, missing, n_jobs, progress)
    if ranked and bounded:
        tables = bounded_scales.BoundedScales(tables, error)
        tables.prepare([(m, rb) for m in ms if tables.covers(m)
                        for rb in ([m.common_rb()] if rb_scale == "common" else qrels_rbs(q, m, max_grade, rel_level))],
                       progress)
    depth = max(m.n for m in ms)
    judged = []
    for run in run_list:
        j = judge(run, q, depth, all_topics=True)
        if max_grade is not None:
            j = j.folded(max_grade)
        if len(j.missing) == len(j.topics) and j.ignored:
            raise IrscaleError(f"run {run.name} ({run.path or 'in memory'}) has no topic in common with the qrels "
                               f"{q.path or ''} (its topics: {', '.join(j.ignored[:3])}...; the qrels': "
                               f"{', '.join(j.topics[:3])}...): are these the right qrels?")
        warn_coverage(j, missing_topics)
        judged.append(j)
    out = score_judged(judged, ms, tables, rb_scale, midranks, empty_topics, missing_topics, rel_level,
                       bounds=bounded and ranked)
    return out if methods is None else standardize_scores(out, methods, reference, leave_one_out)


__all__ = ["EMPTY_TOPICS", "MISSING_TOPICS", "RB_SCALES", "measure_grades", "score_judged", "transform"]
