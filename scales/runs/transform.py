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
``scale``     what scaled the row (``Table.kind``): ``exact: table``, ``exact: rank
              oracle``, ``exact: closed form`` or ``bounded``; empty where nothing did

With ``standardize``, per-topic standardisations of ``raw`` over the runs transformed
(:mod:`irscale.scales.runs.standardize`) follow as columns ``zscore``, ``zscore_cdf``,
``std_linear``, ``ecdf``.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pandas as pd

from irscale.scales.measures.aliases import DEFAULT_NAMES
from irscale.scales.measures.measure import Measure
from irscale.scales.runs.conventions import EMPTY_TOPICS, MISSING_TOPICS, RB_SCALES, Conventions
from irscale.scales.runs.evaluator import MAX_BUILD_SECONDS, Evaluator
from irscale.scales.runs.inputs import QrelsInput, RunsInput
from irscale.scales.runs.scoring import measure_grades, score_judged
from irscale.scales.runs.standardize import STANDARDISATIONS, check_transforms
from irscale.scales.runs.standardize import standardize as standardize_scores

if TYPE_CHECKING:
    from irscale.store.reader import Store

def transform(qrels: QrelsInput, runs: RunsInput,
              measures: str | Iterable[str | Measure], store: str | os.PathLike | Store | None = None, *,
              rb_scale: str = "feasible", raw_only: bool = False, midranks: bool = False, build_missing: bool = True,
              max_grade: int | None = None, empty_topics: str = "zero", missing_topics: str = "zero",
              rel_level: int | None = None, depth: int | None = None, run_names: str = "tag",
              names: str = DEFAULT_NAMES, n_jobs: int | None = None,
              progress: bool = False, standardize: str | Iterable[str] | None = None,
              reference: pd.DataFrame | None = None, leave_one_out: bool = False, bounded: bool | None = None,
              error: float | None = None, conventions: Conventions | None = None, build: bool = True,
              max_build_seconds: float | None = MAX_BUILD_SECONDS) -> pd.DataFrame:
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
        The table store (default :func:`~irscale.store.location.default_store`, the one
        every entry point shares); tables it lacks are built into it (``build``).
        Closed forms, rank oracles and bounded scales need no table. With ``raw_only``
        no store is used and ``rank``, ``k``, ``scaled`` are empty.
    rb_scale : {"feasible", "common"}
        Scale of RB-dependent measures: per topic recall base over its feasible runs
        (default), or the one scale of RB >= N for every topic (the original paper).
    midranks : bool
        Also fill the ``midrank`` column (one pass over each table's run counts).
    build : bool
        Build the tables the store lacks when that is estimated to take at most
        ``max_build_seconds`` (default 60 s, all of them together); a measure whose
        tables would take longer, or any with ``build=False``, is scored raw only with a
        warning naming the ``irscale build`` command that makes its scale.
    build_missing : bool
        Kept for older callers: False is ``build=False``.
    max_grade : int, optional
        Fold qrels levels above this grade into it before anything else (each measure
        then folds levels above its own top grade G into G).
    empty_topics : {"zero", "skip"}
        Topics of the qrels without a relevant document (for a measure): scored 0 and
        counted, as trec_eval does (default; every measure that depends on the recall
        base is 0 there, and so is its scaled value: on the ``feasible`` scale such a
        topic has one run, rank 1), or left out with a warning.
    missing_topics : {"zero", "skip"}
        Evaluated topics a run has no ranking for: scored as the all-non-relevant run
        with a warning (default, trec_eval's ``-c``), or left out (trec_eval without
        ``-c``: means over the topics the run answers).
    rel_level : int, optional
        trec_eval's ``-l``: binary measures count levels >= rel_level as relevant (their
        recall base too); graded measures read the levels as grades and ignore it.
    depth : int, optional
        trec_eval's ``-M``: documents read per topic (default: all).
    conventions : Conventions, optional
        All of ``rel_level``, ``empty_topics``, ``missing_topics``, ``max_grade``,
        ``depth`` and ``rb_scale`` in one object (:mod:`irscale.scales.runs.conventions`);
        given, it replaces them.
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
        Scale RBP, DCG, nDCG and nDCG_trec past N = 40, where no exact scale exists (and
        below, where tables are too costly and no oracle counts), by
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
        module docstring), runs in the order given, topics in qrels order, measures in
        the order given; ``attrs["conventions"]`` names the trec_eval command line the
        raw scores equal (:meth:`Conventions.describe`).

    Warns
    -----
    IrscaleWarning
        For a run without a ranking for an evaluated topic (scored as all
        non-relevant) and for run topics the qrels do not evaluate (ignored).
    """
    methods = None if standardize is None else (
        STANDARDISATIONS if isinstance(standardize, str) and standardize.strip().lower() == "all"
        else check_transforms(standardize, STANDARDISATIONS))
    if conventions is None:
        conventions = Conventions(rel_level=rel_level, empty_topics=empty_topics, missing_topics=missing_topics,
                                  max_grade=max_grade, depth=depth, rb_scale=rb_scale)
    evaluator = Evaluator(qrels, measures, conventions, store, names=names, raw_only=raw_only,
                          build=build and build_missing,
                          max_build_seconds=max_build_seconds, n_jobs=n_jobs, progress=progress, bounded=bounded,
                          error=error, midranks=midranks)
    out = evaluator.evaluate(runs, run_names=run_names)
    out = out if methods is None else standardize_scores(out, methods, reference, leave_one_out)
    out.attrs["conventions"] = conventions.describe()         # the trec_eval command line the raw scores equal
    out.attrs["scales"] = evaluator.explain()                 # what each measure's scale is, and why
    out.attrs["scale_kinds"] = evaluator.kinds()              # measures answered by oracles and tables alike
    return out


__all__ = ["EMPTY_TOPICS", "MISSING_TOPICS", "RB_SCALES", "Conventions", "measure_grades", "score_judged", "transform"]
