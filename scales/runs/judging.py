"""Judging runs the way trec_eval does (SPEC section 5): each ranking cut at N and padded
with non-relevant documents, unjudged documents non-relevant; a run without a ranking for
an evaluated topic gets the all-non-relevant run (with a warning); topics of the run that
the qrels do not evaluate are ignored (with a warning).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from irscale.errors import warn
from irscale.scales.measures.measure import Measure
from irscale.scales.runs.qrels import Qrels, sort_topics
from irscale.scales.runs.run_files import Run, few


@dataclass
class JudgedRuns:
    """The judged rankings of one run on the evaluated topics.

    Attributes
    ----------
    run : str
        Run name.
    topics : list of str
        Evaluated topics (qrels topics with RB >= 1), in topic order.
    rb : ndarray of int64
        Recall base per topic (judged documents with level >= 1).
    rel : ndarray of uint8, shape (len(topics), depth)
        Relevance level of the document at rank k (column k - 1), negative levels, padding
        and unjudged documents 0, levels above 255 as 255. A measure with grades 0..G
        reads min(level, G) (binary: level > 0 is relevant).
    level_counts : ndarray of int64, shape (len(topics), max level + 1)
        Judged documents per level (0 counting negative levels) of each topic.
    missing : list of str
        Evaluated topics the run has no ranking for (scored as all non-relevant).
    ignored : list of str
        Topics of the run that the qrels do not evaluate.
    lengths : ndarray of int64
        Documents the run retrieved for each topic (at most the depth; 0 for missing
        topics): the rankings' own lengths, used by measures over truncated rankings.
    """

    run: str
    topics: list[str]
    rb: np.ndarray
    rel: np.ndarray
    missing: list[str]
    ignored: list[str]
    level_counts: np.ndarray | None = None
    lengths: np.ndarray | None = None

    def folded(self, max_grade: int) -> JudgedRuns:
        """The same judged runs with levels above ``max_grade`` folded into it."""
        return dataclasses.replace(self, rel=np.minimum(self.rel, max_grade).astype(np.uint8),
                                   level_counts=fold_level_counts(self.level_counts, max_grade))

    def grade_counts(self, levels: int) -> np.ndarray:
        """Per topic, the judged documents of each grade 1..levels-1 when levels above
        levels - 1 fold into the top grade: shape (topics, levels - 1)."""
        return grade_counts(self.level_counts, levels)


def fold_level_counts(level_counts: np.ndarray | None, max_grade: int) -> np.ndarray | None:
    """Level counts (topics x levels 0..max) with the levels above ``max_grade`` added to it."""
    lc = level_counts
    if lc is not None and lc.shape[1] > max_grade + 1:
        lc = np.concatenate([lc[:, :max_grade], lc[:, max_grade:].sum(axis=1, keepdims=True)], axis=1)
    return lc


def grade_counts(level_counts: np.ndarray, levels: int) -> np.ndarray:
    """Per topic, the judged documents of each grade 1..levels-1 when levels above
    levels - 1 fold into the top grade: shape (topics, levels - 1) (the recall base of a
    graded measure with ``levels`` relevance degrees, SPEC_MEASURES section 1)."""
    lc = level_counts
    top = levels - 1
    out = np.zeros((lc.shape[0], top), np.int64)
    width = lc.shape[1]
    for g in range(1, top):
        if g < width:
            out[:, g - 1] = lc[:, g]
    if top < width:
        out[:, top - 1] = lc[:, top:].sum(axis=1)
    return out


def qrels_rbs(qrels: Qrels, measure: Measure, max_grade: int | None = None, rel_level: int | None = None) -> list:
    """The distinct recall bases of the evaluated topics where ``measure`` is defined (an
    int, or per-grade counts; None for measures without recall base), as a transform
    reads them (``rel_level``: trec_eval's ``-l``, binary measures count levels >=
    rel_level as relevant)."""
    lc = qrels.evaluated[2]
    if max_grade is not None:
        lc = fold_level_counts(lc, max_grade)
    if rel_level is not None and rel_level > 1 and measure.levels == 2:
        counts = lc[:, rel_level:].sum(axis=1, keepdims=True)
    else:
        counts = grade_counts(lc, measure.levels)
    out = []
    for row in np.unique(counts, axis=0):
        if row.sum() == 0:
            continue                     # no relevant document at this threshold: no scale
        rb = measure.recall_base_of(row)
        if measure.defined(rb) and rb not in out:
            out.append(rb)
    return out


def qrels_table_rbs(qrels: Qrels, measure: Measure, max_grade: int | None = None,
                    rel_level: int | None = None) -> list:
    """The table recall bases that a transform of runs against ``qrels`` needs for a
    measure (``feasible`` scales): the :meth:`~irscale.scales.measures.measure.Measure.table_rb`
    of every evaluated topic where the measure is defined, deduplicated and sorted
    (``[None]`` for measures with one table for every recall base)."""
    out = {measure.table_rb(rb) for rb in qrels_rbs(qrels, measure, max_grade, rel_level)}
    return sorted(out, key=lambda t: () if t is None else t)


def judge(run: Run, qrels: Qrels, depth: int, all_topics: bool = False) -> JudgedRuns:
    """Cut each ranking of ``run`` at ``depth``, pad with non-relevant documents and read
    the relevance level of every document from ``qrels`` (negative levels and unjudged
    documents 0). The topics are the qrels' topics with a relevant document, or with
    ``all_topics`` every judged topic (those without relevant documents included, as
    trec_eval evaluates them)."""
    topics, rb, level_counts = qrels.evaluated_all if all_topics else qrels.evaluated
    rankings = run.rankings(depth)
    rel = np.zeros((len(topics), depth), dtype=np.uint8)
    lengths = np.zeros(len(topics), dtype=np.int64)
    missing = []
    for i, topic in enumerate(topics):
        docs = rankings.get(topic)
        if docs is None:
            missing.append(topic)
            continue
        judged = qrels.judgments[topic]
        rel[i, :len(docs)] = [min(max(judged.get(d, 0), 0), 255) for d in docs]
        lengths[i] = len(docs)
    evaluated = set(topics)
    ignored = sort_topics(t for t in rankings if t not in evaluated)
    return JudgedRuns(run.name, topics, rb, rel, missing, ignored, level_counts, lengths)


def warn_coverage(judged: JudgedRuns, missing_topics: str = "zero") -> None:
    """Warn about missing and ignored topics of a judged run (missing ones are scored as
    all non-relevant, or with ``missing_topics="skip"`` left out)."""
    if judged.missing:
        what = "left out" if missing_topics == "skip" else "scored as all non-relevant"
        warn(f"run {judged.run}: no ranking for topic(s) {few(judged.missing)}; {what}")
    if judged.ignored:
        warn(f"run {judged.run}: topic(s) {few(judged.ignored)} not in the qrels (or without "
                      f"relevant documents); ignored")
