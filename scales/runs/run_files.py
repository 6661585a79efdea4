"""TREC runs: ``topic Q0 docno rank score tag`` per line (SPEC section 5).

Documents are ordered as trec_eval orders them: score descending, ties broken by docno
descending (byte-wise string comparison); the rank column is ignored. A docno repeated
within a topic is an error.

Lines are read as trec_eval reads them (``get_trec_results.c``): fields are separated by
ASCII white space only (a non-breaking space is part of a field), and everything after
the sixth field, the run tag, is ignored (trec_eval's own test file ``results.trunc`` has
7 to 9 columns). A line with fewer than 6 fields, a score that is not a number or is
NaN, and a docno repeated within a topic are errors naming the file and the line, as are
binary content and text that is not UTF-8.

Byte order mark: a file that starts with a UTF-8 byte order mark (BOM, ``EF BB BF``) is
read as trec_eval reads it, the BOM being part of the first field: the first line's
topic id is ``'\ufeff401'``, not ``'401'``, so that line does not count for topic 401
(nor, when the topic is not in the qrels, for any topic), and every score equals
trec_eval's on the same file. An :class:`~irscale.errors.IrscaleWarning` says so, naming
the file and line 1; remove the BOM to have the line read as the others.
"""
from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from irscale.errors import IrscaleWarning, RunError, TrecFormatError, warn
from irscale.scales.runs.text_files import (
    BOM,
    bom_warning,
    check_text,
    delimited_table,
    input_limits,
    out_of_memory,
    read_bytes,
    read_fields,
    read_line_by_line,
    text_lines,
)

RUN_COLUMNS = ("topic", "q0", "docno", "rank", "score", "tag")
RUN_FORMAT = "topic Q0 docno rank score tag"


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

    def __post_init__(self) -> None:
        """Check the arrays and put them in trec_eval order when built by hand: a Run made
        from unsorted arrays is sorted (score descending, docno descending within each
        topic), never scored in the order given. Raises :class:`~irscale.errors.RunError`
        for arrays of different lengths, NaN scores or a docno repeated within a topic."""
        topics = np.asarray(self.topics, dtype=object).reshape(-1)
        docnos = np.asarray(self.docnos, dtype=object).reshape(-1)
        try:
            scores = np.asarray(self.scores, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            raise RunError(f"run {self.name}: scores must be numbers") from None
        if not (len(topics) == len(docnos) == len(scores)):
            raise RunError(f"run {self.name}: topics, docnos and scores must have the same length, got "
                           f"{len(topics)}, {len(docnos)} and {len(scores)}")
        if np.isnan(scores).any():
            raise RunError(f"run {self.name}: score of document {docnos[np.isnan(scores)][0]} is NaN")
        if not _in_trec_order(topics, docnos, scores):
            codes = pd.factorize(topics)[0]
            order = trec_order(codes, docnos.__getitem__, scores)
            topics, docnos, scores = topics[order], docnos[order], scores[order]
        repeated = pd.DataFrame({"topic": topics, "docno": docnos}).duplicated().to_numpy()
        if repeated.any():
            i = int(np.flatnonzero(repeated)[0])
            raise RunError(f"run {self.name}: document {docnos[i]} appears twice for topic {topics[i]}; "
                           f"trec_eval refuses such runs")
        self.topics, self.docnos, self.scores = topics, docnos, scores

    @classmethod
    def ordered(cls, name: str, topics: np.ndarray, docnos: np.ndarray, scores: np.ndarray,
                depth: int | None = None, path: str = "") -> Run:
        """A Run from arrays already checked and in trec_eval order (as :func:`read_run`
        makes them): skips the checks and the sort of the constructor."""
        run = object.__new__(cls)
        run.name, run.topics, run.docnos, run.scores, run.depth, run.path = name, topics, docnos, scores, depth, path
        return run

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


def _in_trec_order(topics: np.ndarray, docnos: np.ndarray, scores: np.ndarray) -> bool:
    """Whether rows are grouped by topic, each topic in trec_eval order (score descending,
    docno descending); a run read by :func:`read_run` is, so this costs one pass."""
    if len(topics) < 2:
        return True
    same_topic = topics[1:] == topics[:-1]
    if len(pd.unique(topics)) != int((~same_topic).sum()) + 1:
        return False                                        # a topic in several blocks
    a, b = scores[:-1][same_topic], scores[1:][same_topic]
    if (a < b).any():
        return False
    tie = a == b
    if not tie.any():
        return True
    da = docnos[:-1][same_topic][tie].astype(str)
    db = docnos[1:][same_topic][tie].astype(str)
    return bool((da > db).all())


def trec_order(topic_code: np.ndarray, docnos: Callable[[np.ndarray], np.ndarray], scores: np.ndarray,
               depth: int | None = None) -> np.ndarray:
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


def _run_columns(path, data: bytes):
    """(topic codes, topics(rows), docnos(rows), scores, first tag, other tags) of a run
    file's lines, read by the fast readers when they read the file as trec_eval does, else
    (and when they find anything wrong) line by line by :func:`_run_lines`, which names
    the file and line of the first problem."""
    if read_line_by_line(data):
        return _run_lines(path, data)
    table = delimited_table(data, RUN_COLUMNS, float_columns=("score",), extra=True)
    if table is not None:
        topic = table["topic"].combine_chunks()
        codes = pc.dictionary_encode(topic).indices.to_numpy(zero_copy_only=False)
        doc = pc.dictionary_encode(table["docno"].combine_chunks())
        pairs = np.sort(codes.astype(np.int64) * len(doc.dictionary) + doc.indices.to_numpy(zero_copy_only=False))
        scores = table["score"].to_numpy()
        if (pairs[1:] == pairs[:-1]).any() or np.isnan(scores).any():
            return _run_lines(path, data)                   # a docno repeated within a topic, a NaN score
        docno = table["docno"]
        tags = table["tag"]
        first_tag = tags[0].as_py()
        other_tags = [] if pc.all(pc.equal(tags, first_tag)).as_py() else pc.unique(tags).to_pylist()
        return (codes, lambda rows: topic.take(rows).to_numpy(zero_copy_only=False),
                lambda rows: docno.take(rows).to_numpy(zero_copy_only=False), scores, first_tag, other_tags)
    try:
        df = read_fields(data, RUN_COLUMNS, {"topic": object, "q0": object, "docno": object, "rank": object,
                                             "score": np.float64, "tag": object}, extra="ignore")
        tags = df["tag"]
        if (tags.isna().any() or (tags == "").any() or df.duplicated(["topic", "docno"]).any()
                or df["score"].isna().any()):
            return _run_lines(path, data)
    except (ValueError, TypeError, pd.errors.ParserError, UnicodeDecodeError, OverflowError):
        return _run_lines(path, data)
    topics, docnos = df["topic"].to_numpy(), df["docno"].to_numpy()
    first_tag = tags.iat[0]
    other_tags = [] if (tags == first_tag).all() else list(tags.unique())
    return (pd.factorize(topics)[0], topics.__getitem__, docnos.__getitem__,
            df["score"].to_numpy(dtype=np.float64), first_tag, other_tags)


def read_run(path: str | os.PathLike, depth: int | None = None, *, max_size: int | str | None = None,
             max_line_length: int | str | None = None, max_gzip_ratio: float | str | None = None) -> Run:
    """Read a run file (``topic Q0 docno rank score tag``, anything after the tag ignored;
    gzip allowed) and order its documents as trec_eval does; with ``depth``, keep each
    topic's top ``depth`` only.

    Raises :class:`~irscale.errors.TrecFormatError` naming the file and line of the first
    malformed line: fewer than 6 columns, a non-numeric or NaN score, a docno repeated
    within a topic; empty and binary files are errors too. A file starting with a byte
    order mark is read as trec_eval reads it (see the module docstring), with a warning.

    Anything but a regular file (a device, a pipe) is refused unread; the file is read in
    pieces, within limits (see :func:`~irscale.scales.runs.text_files.input_limits`):
    ``max_size`` bytes of text (default 4 GiB; ``"8G"`` allowed), lines of ``max_line_length``
    bytes (1 MiB) and, for gzip, ``max_gzip_ratio`` times its compressed size (100), each
    by default that of its environment variable (``IRSCALE_MAX_INPUT_SIZE``,
    ``IRSCALE_MAX_LINE_LENGTH``, ``IRSCALE_MAX_GZIP_RATIO``) when set.
    """
    data = read_bytes(path, "run", input_limits(max_size, max_line_length, max_gzip_ratio))
    check_text(path, data, "run")
    try:
        return _read_run(path, data, depth)
    except MemoryError:
        raise out_of_memory(path, len(data)) from None


def _read_run(path: str | os.PathLike, data: bytes, depth: int | None) -> Run:
    codes, topics, docnos, scores, name, other_tags = _run_columns(path, data)
    if data.startswith(BOM):
        warnings.warn(bom_warning(path, str(topics(np.zeros(1, np.int64))[0]), "topic id"), IrscaleWarning,
                      stacklevel=3)
    keep = trec_order(codes, docnos, scores, depth)
    if other_tags:
        others = sorted(set(other_tags) - {name})
        warn(f"{path}: several run tags ({name}, {few(others, 3)}); using the first, {name}")
    return Run.ordered(str(name), topics(keep), docnos(keep), scores[keep], depth, str(path))


def _score(text: str) -> float:
    """A score as trec_eval's ``atof`` reads a number (Python's extras refused: digit
    separators, non-ASCII digits); ValueError when it is not one."""
    if not text.isascii() or "_" in text:
        raise ValueError(text)
    return float(text)


def _run_lines(path, data: bytes):
    """The columns of :func:`_run_columns`, read line by line (fields as trec_eval splits
    them); raises TrecFormatError naming the file and line of the first problem."""
    topics, docnos, scores, tags = [], [], [], []
    seen: dict[tuple[str, str], int] = {}
    for no, f in text_lines(path, data, "run"):
        if len(f) < 6:
            hint = "; this looks like a qrels file" if len(f) == 4 else ""
            raise TrecFormatError(f"{path}:{no}: expected 6 columns ({RUN_FORMAT}), found {len(f)}{hint}")
        try:
            score = _score(f[4])
        except ValueError:
            raise TrecFormatError(f"{path}:{no}: score {f[4]!r} is not a number") from None
        if math.isnan(score):
            raise TrecFormatError(f"{path}:{no}: score is NaN")
        key = (f[0], f[2])
        if key in seen:
            raise TrecFormatError(f"{path}:{no}: document {f[2]} appears twice for topic {f[0]} "
                                  f"(also at line {seen[key]}); trec_eval refuses such runs")
        seen[key] = no
        topics.append(f[0])
        docnos.append(f[2])
        scores.append(score)
        tags.append(f[5])
    topic_array, docno_array = np.array(topics, dtype=object), np.array(docnos, dtype=object)
    other_tags = sorted(set(tags)) if len(set(tags)) > 1 else []
    return (pd.factorize(topic_array)[0], topic_array.__getitem__, docno_array.__getitem__,
            np.array(scores, dtype=np.float64), tags[0], other_tags)


def few(items: list[str], limit: int = 8) -> str:
    """The first ``limit`` items, comma-separated, and how many more."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")
