"""Reading TREC qrels and run files, and judging runs the way trec_eval does (SPEC section 5).

* Qrels: ``topic iteration docno rel`` per line, whitespace separated. ``rel`` is an
  integer; in the binary (lenient) mapping ``rel > 0`` is relevant and negative levels
  count as non-relevant. The recall base RB of a topic is its number of relevant
  documents; only topics with RB >= 1 are evaluated.
* Runs: ``topic Q0 docno rank score tag`` per line. Documents are ordered as trec_eval
  orders them: score descending, ties broken by docno descending (byte-wise string
  comparison); the rank column is ignored. A docno repeated within a topic is an error.
* A ranking is cut at N and padded with non-relevant documents; unjudged documents are
  non-relevant. A run without a ranking for an evaluated topic gets the all-non-relevant
  run (with a warning); topics of the run that the qrels do not evaluate are ignored (with
  a warning).
* Gzipped files are recognised by their magic bytes, whatever their name.

Lines are parsed with pandas' C reader. When anything is wrong with a file, it is read
again line by line to report the first problem as ``FILE:LINE: what is wrong`` in a
:class:`~irscale.errors.TrecFormatError`.
"""
from __future__ import annotations

import dataclasses
import functools
import gzip
import io
import math
import os
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from irscale.errors import IrscaleWarning, TrecFormatError

RUN_COLUMNS = ("topic", "q0", "docno", "rank", "score", "tag")
QRELS_COLUMNS = ("topic", "iteration", "docno", "rel")
RUN_FORMAT = "topic Q0 docno rank score tag"
QRELS_FORMAT = "topic iteration docno rel"


# -- raw bytes -----------------------------------------------------------------------------
def read_bytes(path: str | os.PathLike, kind: str) -> bytes:
    """Content of a (possibly gzipped) text file, with user errors as TrecFormatError."""
    path = Path(path)
    if not path.exists():
        raise TrecFormatError(f"{path}: no such file")
    if path.is_dir():
        raise TrecFormatError(f"{path} is a folder, not a {kind} file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise TrecFormatError(f"{path}: cannot read ({e.strerror or e})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            inflate = zlib.decompressobj(wbits=31)
            text = inflate.decompress(data)
            # several gzip members (concatenated files): let gzip read them all
            data = gzip.decompress(data) if inflate.unused_data or not inflate.eof else text
        except (OSError, EOFError, zlib.error) as e:
            raise TrecFormatError(f"{path}: corrupt gzip file ({e})") from None
    return data


def _text_lines(path, data: bytes, kind: str):
    """(line number, fields) of the non-blank lines; binary content is an error."""
    for no, raw in enumerate(data.split(b"\n"), start=1):
        if b"\x00" in raw:
            raise TrecFormatError(f"{path}:{no}: binary content; not a {kind} file")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise TrecFormatError(f"{path}:{no}: not UTF-8 text; not a {kind} file") from None
        fields = line.split()
        if fields:
            yield no, fields


def _check_text(path, data: bytes, kind: str) -> None:
    if b"\x00" in data:
        no = data[: data.index(b"\x00")].count(b"\n") + 1
        raise TrecFormatError(f"{path}:{no}: binary content; not a {kind} file")
    if not data.strip():
        raise TrecFormatError(f"{path}: empty {kind} file")


def _frame(data: bytes, columns, dtypes) -> pd.DataFrame:
    """Whitespace-separated fields (any run of spaces and tabs), with pandas' C reader."""
    return pd.read_csv(io.BytesIO(data), sep=r"\s+", header=None, names=list(columns), dtype=dtypes,
                       na_filter=False, engine="c", skip_blank_lines=True, encoding="utf-8")


def _delimited_table(data: bytes, columns, float_columns=()):
    """Fast path for the usual layout, one tab (or one space) between fields: a pyarrow
    table (multi-threaded reader, 5x faster than pandas on TREC runs), or None when the
    file is laid out otherwise and must be read by :func:`_frame`. Any field that is empty
    or holds whitespace (runs of separators, trailing blanks, CR line ends) sends the file
    to the general reader, so both paths always read the same fields."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv

    head = data[:data.find(b"\n")] if b"\n" in data else data
    delimiter = "\t" if b"\t" in head else " "
    if (b" " if delimiter == "\t" else b"\t") in data or b"\r" in data:
        return None   # mixed separators or CR line ends: a field would hold whitespace
    types = {c: (pa.float64() if c in float_columns else pa.string()) for c in columns}
    try:
        table = csv.read_csv(io.BytesIO(data),
                             read_options=csv.ReadOptions(column_names=list(columns)),
                             parse_options=csv.ParseOptions(delimiter=delimiter, quote_char=False,
                                                            double_quote=False, ignore_empty_lines=True),
                             convert_options=csv.ConvertOptions(column_types=types, strings_can_be_null=False,
                                                                quoted_strings_can_be_null=False, null_values=[]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, UnicodeDecodeError):
        return None
    strings = [c for c in columns if c not in float_columns]
    if any(pc.min(pc.binary_length(table[c])).as_py() == 0 for c in strings if table.num_rows):
        return None
    return table


# -- qrels -----------------------------------------------------------------------------
@dataclass
class Qrels:
    """Relevance judgments of a test collection.

    Attributes
    ----------
    path : str
        Where they were read from ("" when built in memory).
    judgments : dict
        ``topic -> {docno: rel}`` with the integer levels of the file.
    """

    judgments: dict[str, dict[str, int]]
    path: str = ""

    def recall_base(self, topic: str) -> int:
        """Number of relevant documents (rel > 0) of ``topic`` (0 for unknown topics)."""
        return sum(1 for r in self.judgments.get(topic, {}).values() if r > 0)

    @functools.cached_property
    def topics(self) -> list[str]:
        """Topics with at least one relevant document (the evaluated ones), in topic order
        (computed once: judgments are not to be changed after construction)."""
        return sort_topics(t for t in self.judgments if self.recall_base(t) >= 1)

    @functools.cached_property
    def evaluated(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(topics, recall bases, level counts) of the evaluated topics, computed once and
        shared by every judged run."""
        return self.topics, self.recall_bases(self.topics), self.level_counts(self.topics)

    def recall_bases(self, topics) -> np.ndarray:
        return np.array([self.recall_base(t) for t in topics], dtype=np.int64)

    def level_counts(self, topics) -> np.ndarray:
        """Judged documents per level 0..max (negative levels as 0), one row per topic."""
        levels = [[min(max(r, 0), 255) for r in self.judgments.get(t, {}).values()] for t in topics]
        width = max((max(ls) for ls in levels if ls), default=0) + 1
        out = np.zeros((len(topics), width), np.int64)
        for i, ls in enumerate(levels):
            np.add.at(out[i], ls, 1)
        return out


def sort_topics(topics) -> list[str]:
    """Topics in numeric order when they are all integers, else in string order."""
    topics = list(topics)
    if all(t.isdigit() for t in topics):
        return sorted(topics, key=lambda t: (int(t), t))
    return sorted(topics)


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a qrels file (``topic iteration docno rel``; gzip allowed).

    Raises :class:`~irscale.errors.TrecFormatError` naming the file and line of the first
    malformed line, non-integer level, or document judged twice for a topic.
    """
    data = read_bytes(path, "qrels")
    _check_text(path, data, "qrels")
    try:
        df = _frame(data, QRELS_COLUMNS, {"topic": object, "iteration": object, "docno": object, "rel": np.int64})
        ok = not (df["rel"].isna().any() or df["docno"].isna().any() or (df["docno"] == "").any()
                  or df.duplicated(["topic", "docno"]).any())
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError, OverflowError):
        ok = False
    if not ok:
        _diagnose_qrels(path, data)
        raise TrecFormatError(f"{path}: cannot parse as qrels ({QRELS_FORMAT})")
    judgments: dict[str, dict[str, int]] = {}
    for topic, docno, rel in zip(df["topic"].tolist(), df["docno"].tolist(), df["rel"].tolist()):
        judgments.setdefault(topic, {})[docno] = rel
    return Qrels(judgments, str(path))


def _diagnose_qrels(path, data: bytes) -> None:
    seen: dict[tuple[str, str], int] = {}
    for no, f in _text_lines(path, data, "qrels"):
        if len(f) != 4:
            hint = "; this looks like a run file" if len(f) == 6 else ""
            raise TrecFormatError(f"{path}:{no}: expected 4 columns ({QRELS_FORMAT}), found {len(f)}{hint}")
        try:
            int(f[3])
        except ValueError:
            raise TrecFormatError(f"{path}:{no}: relevance level {f[3]!r} is not an integer") from None
        key = (f[0], f[2])
        if key in seen:
            raise TrecFormatError(f"{path}:{no}: document {f[2]} is judged twice for topic {f[0]} "
                                  f"(also at line {seen[key]})")
        seen[key] = no


# -- runs ------------------------------------------------------------------------------
@dataclass
class Run:
    """A system's ranked lists, in trec_eval order.

    Attributes
    ----------
    name : str
        The run tag (column 6 of the first line), as trec_eval reports it.
    topics, docnos : ndarray of object (str)
        One entry per kept document, grouped by topic, each topic's documents in
        trec_eval order (score descending, docno descending).
    scores : ndarray of float64
    depth : int or None
        Only the top ``depth`` documents of each topic are kept (None: all).
    path : str
    """

    name: str
    topics: np.ndarray
    docnos: np.ndarray
    scores: np.ndarray
    depth: int | None = None
    path: str = ""

    def rankings(self, depth: int | None = None) -> dict[str, list[str]]:
        """``topic -> docnos`` of the top ``depth`` documents (all kept ones when None)."""
        if depth is not None and self.depth is not None and depth > self.depth:
            raise ValueError(f"run {self.name} was read to depth {self.depth}, not {depth}")
        out: dict[str, list[str]] = {}
        if len(self.topics) == 0:
            return out
        starts = np.flatnonzero(np.r_[True, self.topics[1:] != self.topics[:-1]])
        ends = np.r_[starts[1:], len(self.topics)]
        for s, e in zip(starts.tolist(), ends.tolist()):
            stop = e if depth is None else min(e, s + depth)
            out[self.topics[s]] = self.docnos[s:stop].tolist()
        return out


def trec_order(topic_code: np.ndarray, docnos, scores: np.ndarray, depth: int | None = None) -> np.ndarray:
    """Indices of the documents in trec_eval order: grouped by topic, score descending,
    docno descending (code-point order, which is byte order for UTF-8).

    ``topic_code`` numbers the topics (any numbering), ``docnos(indices)`` returns the
    docnos of the given rows. With ``depth``, only documents that can be among a topic's
    top ``depth`` are returned (those scoring at least the depth-th best score of their
    topic); sorting by docno, the costly part, is then done for those few only.
    """
    by_score = np.lexsort((-scores, topic_code))
    if depth is not None and len(by_score):
        code = topic_code[by_score]
        start = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
        size = np.diff(np.r_[start, len(code)])
        cut = start + np.minimum(size, depth) - 1          # position of each topic's depth-th document
        threshold = np.repeat(scores[by_score][cut], size)
        by_score = by_score[scores[by_score] >= threshold]
    _, doc_code = np.unique(docnos(by_score).astype(str), return_inverse=True)
    order = np.lexsort((-doc_code, -scores[by_score], topic_code[by_score]))
    return by_score[order]


def _run_columns(data: bytes):
    """(topic codes, topics(rows), docnos(rows), scores, tags) of a run file's lines, or
    None when something is wrong (then :func:`_diagnose_run` finds the line)."""
    table = _delimited_table(data, RUN_COLUMNS, float_columns=("score",))
    if table is not None:
        import pyarrow.compute as pc
        topic = table["topic"].combine_chunks()
        codes = pc.dictionary_encode(topic).indices.to_numpy(zero_copy_only=False)
        doc = pc.dictionary_encode(table["docno"].combine_chunks())
        pairs = np.sort(codes.astype(np.int64) * len(doc.dictionary) + doc.indices.to_numpy(zero_copy_only=False))
        if (pairs[1:] == pairs[:-1]).any():
            return None                                     # a docno repeated within a topic
        docno = table["docno"]
        tags = table["tag"]
        first_tag = tags[0].as_py()
        other_tags = [] if pc.all(pc.equal(tags, first_tag)).as_py() else pc.unique(tags).to_pylist()
        scores = table["score"].to_numpy()
        return (codes, lambda rows: topic.take(rows).to_numpy(zero_copy_only=False),
                lambda rows: docno.take(rows).to_numpy(zero_copy_only=False), scores, first_tag, other_tags)
    try:
        df = _frame(data, RUN_COLUMNS, {"topic": object, "q0": object, "docno": object, "rank": object,
                                         "score": np.float64, "tag": object})
        tags = df["tag"]
        if tags.isna().any() or (tags == "").any() or df.duplicated(["topic", "docno"]).any():
            return None
    except (ValueError, TypeError, pd.errors.ParserError, UnicodeDecodeError, OverflowError):
        return None
    topics, docnos = df["topic"].to_numpy(), df["docno"].to_numpy()
    first_tag = tags.iat[0]
    other_tags = [] if (tags == first_tag).all() else list(tags.unique())
    return (pd.factorize(topics)[0], topics.__getitem__, docnos.__getitem__,
            df["score"].to_numpy(dtype=np.float64), first_tag, other_tags)


def read_run(path: str | os.PathLike, depth: int | None = None) -> Run:
    """Read a run file (``topic Q0 docno rank score tag``; gzip allowed) and order its
    documents as trec_eval does; with ``depth``, keep each topic's top ``depth`` only.

    Raises :class:`~irscale.errors.TrecFormatError` naming the file and line of the first
    malformed line, wrong column count, non-numeric or NaN score, or docno repeated within
    a topic; empty and binary files are errors too.
    """
    data = read_bytes(path, "run")
    _check_text(path, data, "run")
    columns = _run_columns(data)
    if columns is None or np.isnan(columns[3]).any():
        _diagnose_run(path, data)
        raise TrecFormatError(f"{path}: cannot parse as a run ({RUN_FORMAT})")
    codes, topics, docnos, scores, name, other_tags = columns
    keep = trec_order(codes, docnos, scores, depth)
    if other_tags:
        others = sorted(set(other_tags) - {name})
        warnings.warn(f"{path}: several run tags ({name}, {_few(others, 3)}); using the first, {name}",
                      IrscaleWarning, stacklevel=2)
    return Run(str(name), topics(keep), docnos(keep), scores[keep], depth, str(path))


def _diagnose_run(path, data: bytes) -> None:
    seen: dict[tuple[str, str], int] = {}
    for no, f in _text_lines(path, data, "run"):
        if len(f) != 6:
            hint = "; this looks like a qrels file" if len(f) == 4 else ""
            raise TrecFormatError(f"{path}:{no}: expected 6 columns ({RUN_FORMAT}), found {len(f)}{hint}")
        try:
            score = float(f[4])
        except ValueError:
            raise TrecFormatError(f"{path}:{no}: score {f[4]!r} is not a number") from None
        if math.isnan(score):
            raise TrecFormatError(f"{path}:{no}: score is NaN")
        key = (f[0], f[2])
        if key in seen:
            raise TrecFormatError(f"{path}:{no}: document {f[2]} appears twice for topic {f[0]} "
                                  f"(also at line {seen[key]}); trec_eval refuses such runs")
        seen[key] = no


# -- judging -----------------------------------------------------------------------------
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

    def folded(self, max_grade: int) -> "JudgedRuns":
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


def qrels_count_vectors(qrels: "Qrels", measure, max_grade: int | None = None) -> list[tuple]:
    """The table keys of the evaluated topics of ``qrels`` for a measure keyed by per-grade
    counts (c_1..c_G): capped at N for graded RB-dependent measures, as they are for
    per-topic tables (Twist, CRP, OIE: not capped); only the topics where the measure is
    defined; sorted and deduplicated: the tables a transform of runs against these qrels
    needs (``feasible`` scales)."""
    lc = qrels.evaluated[2]
    if max_grade is not None:
        lc = fold_level_counts(lc, max_grade)
    counts = grade_counts(lc, measure.levels)
    vectors = {measure.table_rb(tuple(int(c) for c in row)) for row in counts if row.sum() >= 1}
    return sorted(v for v in vectors if measure.defined(v))


def judge(run: Run, qrels: Qrels, depth: int) -> JudgedRuns:
    """Cut each ranking of ``run`` at ``depth``, pad with non-relevant documents and read
    the relevance level of every document from ``qrels`` (negative levels and unjudged
    documents 0)."""
    topics, rb, level_counts = qrels.evaluated
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


def warn_coverage(judged: JudgedRuns) -> None:
    """Warn about missing and ignored topics of a judged run."""
    if judged.missing:
        warnings.warn(f"run {judged.run}: no ranking for topic(s) {_few(judged.missing)}; "
                      f"scored as all non-relevant", IrscaleWarning, stacklevel=3)
    if judged.ignored:
        warnings.warn(f"run {judged.run}: topic(s) {_few(judged.ignored)} not in the qrels (or without "
                      f"relevant documents); ignored", IrscaleWarning, stacklevel=3)


def _few(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
