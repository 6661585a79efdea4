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
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, IrscaleWarning, MeasureError, TableNotFoundError
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.parse import parse_measures, split_measures
from irscale.scales.runs.inputs import QrelsInput, RunsInput, qrels_of, read_runs
from irscale.scales.runs.judging import JudgedRuns, grade_counts, judge, qrels_table_rbs, warn_coverage
from irscale.scales.runs.scores import COLUMNS
from irscale.store.fill import build_store
from irscale.store.reader import Store, open_store

RB_SCALES = ("feasible", "common")

#: Largest run space (runs scored per table) that ``build_missing`` builds on the fly:
#: 2**24 runs take seconds per measure (binary N <= 24).
BUILD_ON_THE_FLY_MAX_N = 24
BUILD_ON_THE_FLY_MAX_RUNS = 2 ** BUILD_ON_THE_FLY_MAX_N


# -- inputs ------------------------------------------------------------------------------
def _measures(measures):
    if isinstance(measures, str):
        measures = split_measures(measures)
    ms = parse_measures(list(measures))
    if not ms:
        raise MeasureError("no measure given")
    return list(dict.fromkeys(ms))


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
    big = [m for m in missing if max(m.table_runs(t) for t in need[m]) > BUILD_ON_THE_FLY_MAX_RUNS]
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


def score_judged(judged: list[JudgedRuns], measures: Iterable[Measure], tables: Store | None = None,
                 rb_scale: str = "feasible", midranks: bool = False) -> pd.DataFrame:
    """Rows of :data:`COLUMNS` for judged runs (ranks empty when ``tables`` is None)."""
    rel = np.concatenate([j.rel for j in judged]) if judged else np.zeros((0, 1), np.uint8)
    lengths = np.concatenate([j.lengths if j.lengths is not None else np.full(len(j.topics), j.rel.shape[1])
                              for j in judged]) if judged else np.zeros(0, np.int64)
    rb = np.concatenate([j.rb for j in judged]) if judged else np.zeros(0, np.int64)
    runs = np.repeat(np.array([j.run for j in judged], dtype=object), [len(j.topics) for j in judged])
    topics = np.array([t for j in judged for t in j.topics], dtype=object)
    rows = rel.shape[0]
    level_counts = {}
    frames = []
    for mi, m in enumerate(measures):
        if m.levels not in level_counts:       # judged documents per grade 1..G of each row's topic
            level_counts[m.levels] = (np.concatenate([grade_counts(j.level_counts, m.levels) for j in judged])
                                      if judged else np.zeros((0, m.levels - 1), np.int64))
        grades = np.minimum(rel[:, :m.n], m.levels - 1)       # levels above G fold into G
        ids = m.judged_ids(grades, lengths)                  # truncated measures: their own lengths
        raw = np.full(rows, np.nan)
        rank = np.zeros(rows, np.int64)
        k = np.zeros(rows, np.int64)
        mid = np.full(rows, np.nan)
        n_runs = np.zeros(rows, np.int64)
        undefined: set = set()
        for topic_rb, sel in _topic_groups(m, level_counts[m.levels]):
            if not m.defined(topic_rb):
                undefined.update(topics[sel].tolist())   # e.g. Twist with N < 2 RB: the topic has no score
                continue
            raw[sel] = m.values_of_ids(ids[sel], topic_rb)
            if tables is not None:
                scale = tables.scale(m, topic_rb if rb_scale == "feasible" else m.common_rb())
                rank[sel], k[sel], mid[sel], n_runs[sel] = _rank_rows(scale, ids[sel], midranks)
        if tables is not None:
            empty = rank == 0                                  # undefined topics (raw NaN)
            scaled = np.where(empty, np.nan, np.where(k > 1, (rank - 1) / np.maximum(k - 1, 1), 0.0))
            rank, k, n_runs = (pd.array(np.where(empty, 0, a), dtype="Int64") for a in (rank, k, n_runs))
            for a in (rank, k, n_runs):
                a[empty] = pd.NA
        else:
            rank = k = n_runs = pd.array(np.full(rows, pd.NA), dtype="Int64")
            scaled = mid = np.full(rows, np.nan)
        if undefined:
            warnings.warn(f"{m} is undefined for {len(undefined)} topic(s) at N = {m.n} (Twist and CRP need "
                          f"N >= 2 RB; gR and nDCG a judged document with a positive gain), e.g. "
                          f"{', '.join(sorted(undefined)[:3])}: their scores are empty",
                          IrscaleWarning, stacklevel=3)
        frames.append(pd.DataFrame({
            "run": runs, "topic": topics, "measure": str(m), "n": m.n, "rb": rb, "raw": raw,
            "rank": rank, "k": k, "scaled": scaled, "midrank": mid, "n_runs": n_runs, "rb_scale": rb_scale,
            "_row": np.arange(rows), "_m": mi}))
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.concat(frames, ignore_index=True).sort_values(["_row", "_m"], kind="stable")
    return out.drop(columns=["_row", "_m"]).reset_index(drop=True)


def transform(qrels: QrelsInput, runs: RunsInput,
              measures: str | Iterable[str | Measure], store: str | os.PathLike | Store | None = None, *,
              rb_scale: str = "feasible", raw_only: bool = False, midranks: bool = False, build_missing: bool = False,
              max_grade: int | None = None, n_jobs: int = 1, progress: bool = False) -> pd.DataFrame:
    """Raw and interval-scaled per-topic scores of TREC runs.

    Parameters
    ----------
    qrels : str, path or Qrels
        Relevance judgments (``topic iteration docno rel``; gzip allowed).
    runs : path, folder, Run, or a list of them
        Run files (``topic Q0 docno rank score tag``); a folder stands for its files.
    measures : str or list
        Measure names, e.g. ``"AP@30,nDCG(b=2)@30"`` or ``["P@30", "RR@30"]``.
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
    n_jobs : int
        Workers building missing tables.
    progress : bool
        Progress bar while reading runs.

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
    if max_grade is not None and (isinstance(max_grade, bool) or not isinstance(max_grade, int) or max_grade < 1):
        raise IrscaleError(f"max_grade must be an integer >= 1, got {max_grade!r}")
    ms = _measures(measures)
    if rb_scale == "common" and store is not None and not raw_only:
        per_topic = [m for m in ms if not m.has_common_scale()]
        if per_topic:
            raise IrscaleError(f"{', '.join(map(str, per_topic))} have no common scale (one table per topic); "
                               f"use rb_scale feasible")
    q = qrels_of(qrels)
    if not q.topics:
        raise IrscaleError(f"{q.path or 'qrels'}: no topic has a relevant document; nothing to evaluate")
    depth = max(m.n for m in ms)
    run_list = read_runs(runs, depth, progress=progress)     # input errors before any table is built
    tables = None
    if store is not None and not raw_only:
        table_rbs = {m: (qrels_table_rbs(q, m, max_grade) if rb_scale == "feasible" else m.table_rbs("all"))
                     for m in ms}
        hint = (q.path or "QRELS") + ("" if max_grade is None else f" --max-grade {max_grade}")
        tables = _open_tables(store, ms, build_missing, n_jobs, progress, table_rbs, hint)
    judged = []
    for run in run_list:
        j = judge(run, q, depth)
        if max_grade is not None:
            j = j.folded(max_grade)
        if len(j.missing) == len(j.topics) and j.ignored:
            raise IrscaleError(f"run {run.name} ({run.path or 'in memory'}) has no topic in common with the qrels "
                               f"{q.path or ''} (its topics: {', '.join(j.ignored[:3])}...; the qrels': "
                               f"{', '.join(j.topics[:3])}...): are these the right qrels?")
        warn_coverage(j)
        judged.append(j)
    return score_judged(judged, ms, tables, rb_scale, midranks)


__all__ = ["RB_SCALES", "score_judged", "transform"]
