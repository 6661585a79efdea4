"""Transform real runs' per-topic scores into interval-scaled scores (SPEC sections 2 and 5).

Every (run, topic) pair is turned into its judged run of length N (trec_eval order, cut at
N, padded and unjudged documents non-relevant; :mod:`irscale.scales.runs.trec`). The raw score
is the measure's value of that judged run for the topic's recall base, and its unq rank
comes from the judged run itself (:meth:`Scale.rank_ids`: exact, no rounded floats).

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
from pathlib import Path

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, IrscaleWarning, MeasureError, TableNotFoundError
from irscale.scales.measures.aliases import NAMES, parse_user_measures
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.parse import split_measures
from irscale.scales.runs.inputs import QrelsInput, RunsInput, qrels_of, read_runs
from irscale.scales.runs.judging import JudgedRuns, grade_counts, judge, qrels_table_rbs, warn_coverage
from irscale.scales.runs.qrels import Qrels, sort_topics
from irscale.scales.runs.run_files import Run
from irscale.scales.runs.scores import COLUMNS
from irscale.scales.runs.standardize import STANDARDISATIONS, check_transforms
from irscale.scales.runs.standardize import standardize as standardize_scores
from irscale.scales.tables.estimate import runs_enumerated
from irscale.store.fill import build_store
from irscale.store.reader import Store, open_store

RB_SCALES = ("feasible", "common")
#: What ``empty_topics`` takes: topics without relevant documents left out, or scored 0 (trec_eval).
EMPTY_TOPICS = ("skip", "zero")
#: What ``missing_topics`` takes: topics a run does not answer scored 0 (trec_eval -c), or left out.
MISSING_TOPICS = ("zero", "skip")

#: Largest run space (runs scored per table) that ``build_missing`` builds on the fly:
#: 2**24 runs take seconds per measure (binary N <= 24).
BUILD_ON_THE_FLY_MAX_N = 24
BUILD_ON_THE_FLY_MAX_RUNS = 2 ** BUILD_ON_THE_FLY_MAX_N


# -- inputs ------------------------------------------------------------------------------
def _measures(measures, names: str, qrels: Qrels, runs, run_names: str, progress: bool,
              max_grade: int | None) -> tuple[list[Measure], list[Run] | None]:
    """The irscale measures a user named (in the vocabulary ``names``; see
    :func:`~irscale.scales.measures.aliases.parse_user_measures`), completed by the qrels'
    highest level; names without a cutoff (trec_eval's ``map``) read at the runs' depth,
    for which the runs are read whole first (and returned, so they are read once)."""
    if isinstance(measures, str):
        measures = split_measures(measures)
    measures = list(measures)
    top_level = qrels.names_top_level(max_grade)          # None beyond nine: the names that need it say so
    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            ms = parse_user_measures(measures, names, top_level=top_level)
        for w in said:                             # said once, whichever attempt succeeds
            warnings.warn(w.message, w.category, stacklevel=3)
        return ms, None
    except MeasureError:
        if names not in NAMES:
            raise
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")        # warned once, below
            parse_user_measures(measures, names, top_level=top_level, depth=1)   # other mistakes: before reading
    whole = read_runs(runs, None, progress=progress, run_names=run_names)
    depth = max((int(np.unique(run.topics, return_counts=True)[1].max()) for run in whole if len(run.topics)),
                default=1)
    return parse_user_measures(measures, names, top_level=top_level, depth=depth), whole


def _warn_folded_levels(measures: list[Measure], qrels: Qrels, max_grade: int | None) -> None:
    """Warn once when graded qrels meet measures that take gains but were given fewer
    grades than the qrels have (levels above their top grade fold into it): trec_eval's
    ``ndcg_cut`` and ``rbp`` use the levels as gains."""
    top = qrels.top_level
    if max_grade is not None or top <= 1:
        return
    folded = [m for m in measures if any(p.name == "gains" for p in m.params) and m.levels - 1 < top]
    if folded:
        gains = ",".join(map(str, range(top + 1)))
        warnings.warn(f"the qrels have levels 0..{top}; {', '.join(map(str, folded))} read levels above their top "
                      f"grade as it (binary: level >= 1 relevant), unlike trec_eval's ndcg_cut and rbp, which use the "
                      f"levels as gains: give the gains (e.g. nDCG_trec(gains=({gains}))@20) or "
                      f"ir_measures' names (irm:nDCG@20), or max_grade to fold on purpose", IrscaleWarning,
                      stacklevel=3)


# -- tables --------------------------------------------------------------------------------
def _open_tables(store, measures, build_missing: bool, n_jobs: int, progress: bool, table_rbs: dict,
                 qrels_hint: str = "QRELS"):
    """The store holding every table the measures need (``table_rbs[measure]``; building
    small missing ones if asked); ``qrels_hint`` completes the suggested build command."""
    if isinstance(store, Store):
        opened = store
    elif build_missing and not Path(store).exists():
        opened = None
    else:
        opened = open_store(store)
    need = {m: [t for t in table_rbs[m] if opened is None or not opened.has(m, t)] for m in measures}
    missing = [m for m in measures if need[m]]
    if not missing:
        return opened
    path = opened.path if opened is not None else Path(store)
    command = f'irscale build --measures "{",".join(map(str, missing))}" --out {path}'
    if any(not (m.has_common_scale() and need[m] == m.table_rbs("all")) for m in missing):
        command += f" --qrels {qrels_hint}"
    what = ", ".join(str(m) if need[m] == [None] else f"{m} ({len(need[m])} recall-base vector(s))"
                     for m in missing)
    if not build_missing:
        several = len(missing) > 1 or any(need[m] != [None] for m in missing)
        raise TableNotFoundError(f"{path} has no table {what}; create {'them' if several else 'it'} with: {command} "
                                 f"(or pass --build-missing for run spaces of up to 2^24 runs)")
    big = [m for m in missing if max(runs_enumerated(m, t) for t in need[m]) > BUILD_ON_THE_FLY_MAX_RUNS]
    if big:
        raise TableNotFoundError(f"{path} has no table {', '.join(map(str, big))}, too large to build on the "
                                 f"fly (more than 2^24 runs); build it first with: {command}")
    return build_store(path, missing, n_jobs=n_jobs, progress=progress, rbs={str(m): need[m] for m in missing})


# -- scoring -------------------------------------------------------------------------------
def _topic_groups(measure, counts: np.ndarray) -> list[tuple[object, np.ndarray]]:
    """(recall base, rows) of the rows sharing a topic recall base: ``counts`` holds per
    row the judged documents of each grade 1..G of the measure."""
    if not measure.rb_dependent:
        return [(None, np.ones(counts.shape[0], bool))]
    return [(measure.recall_base_of(c), (counts == c).all(axis=1)) for c in np.unique(counts, axis=0)]


def _rank_rows(scale, ids: np.ndarray, midranks: bool):
    """Ranks, k, mid-ranks (NaN unless asked) and n_runs of judged runs on one scale."""
    rank = scale.rank_ids(ids)
    mid = scale.midranks_of_ranks(rank) if midranks else np.full(ids.shape[0], np.nan)
    return rank, scale.k, mid, scale.n_runs


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


def score_judged(judged: list[JudgedRuns], measures: Iterable[Measure], tables: Store | None = None,
                 rb_scale: str = "feasible", midranks: bool = False, empty_topics: str = "skip",
                 missing_topics: str = "zero", rel_level: int | None = None) -> pd.DataFrame:
    """Rows of :data:`COLUMNS` for judged runs (ranks empty when ``tables`` is None and
    for measures without scales); conventions as in :func:`transform`."""
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
    no_scale: dict[str, list[str]] = {}
    for mi, m in enumerate(measures):
        grades, counts = measure_grades(m, rel, levels_all, rel_level)
        rb = counts.sum(axis=1)
        empty = rb == 0
        keep = ~(missing & (missing_topics == "skip"))
        if empty_topics == "skip":
            keep &= ~empty
            if empty.any():
                skipped.setdefault(str(m), set()).update(topics[empty].tolist())
        ranked = tables is not None and m.has_scales
        if tables is not None and not ranked:
            no_scale.setdefault(m.scales_reason(), []).append(str(m))
        raw = np.full(rows, np.nan)
        rank = np.zeros(rows, np.int64)
        k = np.zeros(rows, np.int64)
        mid = np.full(rows, np.nan)
        n_runs = np.zeros(rows, np.int64)
        undefined: set = set()
        scored = keep & ~(empty & m.rb_dependent)
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
                ids = m.judged_ids(grades[sel], lengths[sel])     # truncated measures: their own lengths
                scale = tables.scale(m, topic_rb if rb_scale == "feasible" else m.common_rb())
                rank[sel], k[sel], mid[sel], n_runs[sel] = _rank_rows(scale, ids, midranks)
        zeroed = keep & empty & m.rb_dependent      # empty_topics="zero": trec_eval scores them 0
        if zeroed.any():
            raw[zeroed] = 0.0
            if ranked and rb_scale == "common":
                scale = tables.scale(m, m.common_rb())
                ids = m.judged_ids(grades[zeroed], lengths[zeroed])
                rank[zeroed], k[zeroed], mid[zeroed], n_runs[zeroed] = _rank_rows(scale, ids, midranks)
            elif ranked:                            # the one feasible run: nothing relevant
                rank[zeroed], k[zeroed], mid[zeroed], n_runs[zeroed] = 1, 1, 1.0, 1
        if ranked:
            unranked = rank == 0                               # undefined topics (raw NaN)
            scaled = np.where(unranked, np.nan, np.where(k > 1, (rank - 1) / np.maximum(k - 1, 1), 0.0))
            rank, k, n_runs = (pd.array(np.where(unranked, 0, a), dtype="Int64") for a in (rank, k, n_runs))
            for a in (rank, k, n_runs):
                a[unranked] = pd.NA
        else:
            rank = k = n_runs = pd.array(np.full(rows, pd.NA), dtype="Int64")
            scaled = mid = np.full(rows, np.nan)
        if undefined:
            warnings.warn(f"{m} is undefined for {len(undefined)} topic(s) at N = {m.n} (Twist and CRP need "
                          f"N >= 2 RB; gR and nDCG a judged document with a positive gain), e.g. "
                          f"{', '.join(sorted(undefined)[:3])}: their scores are empty",
                          IrscaleWarning, stacklevel=3)
        frame = pd.DataFrame({
            "run": runs, "topic": topics, "measure": str(m), "n": m.n, "rb": rb, "raw": raw,
            "rank": rank, "k": k, "scaled": scaled, "midrank": mid, "n_runs": n_runs, "rb_scale": rb_scale,
            "_row": np.arange(rows), "_m": mi})
        frames.append(frame[keep])
    if skipped:
        every = set.union(*skipped.values())
        which = "" if all(v == every for v in skipped.values()) else f" (for {', '.join(skipped)})"
        warnings.warn(f"{len(every)} topic(s) without relevant documents{which} left out: "
                      f"{', '.join(sort_topics(every)[:5])}{'...' if len(every) > 5 else ''} "
                      f"(empty_topics='zero' scores them 0 and counts them, as trec_eval does)",
                      IrscaleWarning, stacklevel=3)
    for reason, names in no_scale.items():
        warnings.warn(f"no scale for {', '.join(names)}: {reason}; their rank and scaled columns are empty",
                      IrscaleWarning, stacklevel=3)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True).sort_values(["_row", "_m"], kind="stable")
    return out.drop(columns=["_row", "_m"]).reset_index(drop=True)


def transform(qrels: QrelsInput, runs: RunsInput,
              measures: str | Iterable[str | Measure], store: str | os.PathLike | Store | None = None, *,
              rb_scale: str = "feasible", raw_only: bool = False, midranks: bool = False, build_missing: bool = False,
              max_grade: int | None = None, empty_topics: str = "skip", missing_topics: str = "zero",
              rel_level: int | None = None, run_names: str = "tag", names: str = "irscale", n_jobs: int = 1,
              progress: bool = False, standardize: str | Iterable[str] | None = None,
              reference: pd.DataFrame | None = None, leave_one_out: bool = False) -> pd.DataFrame:
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
        Build tables missing from ``store`` (N <= 24) instead of failing.
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
    methods = None if standardize is None else (
        STANDARDISATIONS if isinstance(standardize, str) and standardize.strip().lower() == "all"
        else check_transforms(standardize, STANDARDISATIONS))
    q = qrels_of(qrels)
    ms, whole = _measures(measures, names, q, runs, run_names, progress, max_grade)
    if rb_scale == "common" and store is not None and not raw_only:
        per_topic = [m for m in ms if not m.has_common_scale()]
        if per_topic:
            raise IrscaleError(f"{', '.join(map(str, per_topic))} have no common scale (one table per topic); "
                               f"use rb_scale feasible")
    if not q.topics and empty_topics == "skip":
        raise IrscaleError(f"{q.path or 'qrels'}: no topic has a relevant document; nothing to evaluate")
    _warn_folded_levels(ms, q, max_grade)
    depth = max(m.n for m in ms)
    run_list = whole or read_runs(runs, depth, progress=progress, run_names=run_names)   # before any build
    tables = None
    scaled = [m for m in ms if m.has_scales]
    if store is not None and not raw_only and scaled:
        table_rbs = {m: (qrels_table_rbs(q, m, max_grade, rel_level) if rb_scale == "feasible" else m.table_rbs("all"))
                     for m in ms}
        hint = (q.path or "QRELS") + ("" if max_grade is None else f" --max-grade {max_grade}")
        tables = _open_tables(store, scaled, build_missing, n_jobs, progress, table_rbs, hint)
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
    out = score_judged(judged, ms, tables, rb_scale, midranks, empty_topics, missing_topics, rel_level)
    return out if methods is None else standardize_scores(out, methods, reference, leave_one_out)


__all__ = ["EMPTY_TOPICS", "MISSING_TOPICS", "RB_SCALES", "measure_grades", "score_judged", "transform"]
