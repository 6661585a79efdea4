"""TREC qrels: ``topic iteration docno rel`` per line, whitespace separated (SPEC section 5).

``rel`` is an integer; in the binary (lenient) mapping ``rel > 0`` is relevant and
negative levels count as non-relevant. The recall base RB of a topic is its number of
relevant documents; only topics with RB >= 1 are evaluated. Graded measures read the
levels as grades (SPEC_MEASURES section 1).

Lines are read as trec_eval reads them (``get_qrels.c``): fields are separated by ASCII
white space only (a non-breaking space is part of a field) and a line has exactly 4
fields (trec_eval refuses lines with more). Errors name the file and the line: a wrong
number of fields, a level that is not an integer or does not fit 64 bits, a document
judged twice for a topic, binary content, text that is not UTF-8. A file that starts with
a UTF-8 byte order mark is read as trec_eval reads it, the BOM being part of the first
topic id (``'\ufeff401'``), with a warning naming the file and line 1.
"""
from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from irscale.errors import IrscaleWarning, TrecFormatError
from irscale.scales.measures.params import MAX_LEVELS
from irscale.scales.runs.text_files import (
    BOM,
    bom_warning,
    check_text,
    input_limits,
    out_of_memory,
    read_bytes,
    read_fields,
    read_line_by_line,
    text_lines,
)

QRELS_COLUMNS = ("topic", "iteration", "docno", "rel")
QRELS_FORMAT = "topic iteration docno rel"


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
    def top_level(self) -> int:
        """The highest relevance level of the judgments (0 when none is positive)."""
        return max((level for judged in self.judgments.values() for level in judged.values()), default=0)

    def names_top_level(self, max_grade: int | None = None) -> int | None:
        """The qrels' highest level as measure names read it (ir_measures' ``nDCG@k``:
        gains = the levels 0..T): at least 1, at most ``max_grade``; None beyond the
        levels a gains vector can have."""
        top = max(self.top_level, 1) if max_grade is None else max(min(self.top_level, max_grade), 1)
        return top if top < MAX_LEVELS else None

    @functools.cached_property
    def judged_topics(self) -> list[str]:
        """Every topic of the qrels, with or without relevant documents, in topic order
        (trec_eval evaluates them all: a topic without relevant documents scores 0)."""
        return sort_topics(self.judgments)

    @functools.cached_property
    def evaluated(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(topics, recall bases, level counts) of the evaluated topics, computed once and
        shared by every judged run."""
        return self.topics, self.recall_bases(self.topics), self.level_counts(self.topics)

    @functools.cached_property
    def evaluated_all(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(topics, recall bases, level counts) of every judged topic (:attr:`judged_topics`)."""
        topics = self.judged_topics
        return topics, self.recall_bases(topics), self.level_counts(topics)

    def recall_bases(self, topics: Iterable[str]) -> np.ndarray:
        return np.array([self.recall_base(t) for t in topics], dtype=np.int64)

    def level_counts(self, topics: Sequence[str]) -> np.ndarray:
        """Judged documents per level 0..max (negative levels as 0), one row per topic."""
        levels = [[min(max(r, 0), 255) for r in self.judgments.get(t, {}).values()] for t in topics]
        width = max((max(ls) for ls in levels if ls), default=0) + 1
        out = np.zeros((len(topics), width), np.int64)
        for i, ls in enumerate(levels):
            np.add.at(out[i], ls, 1)
        return out


def sort_topics(topics: Iterable[str]) -> list[str]:
    """Topics in numeric order when they are all integers, else in string order."""
    topics = list(topics)
    if all(t.isdigit() for t in topics):
        return sorted(topics, key=lambda t: (int(t), t))
    return sorted(topics)


def read_qrels(path: str | os.PathLike, *, max_size: int | str | None = None,
               max_line_length: int | str | None = None, max_gzip_ratio: float | str | None = None) -> Qrels:
    """Read a qrels file (``topic iteration docno rel``; gzip allowed).

    Raises :class:`~irscale.errors.TrecFormatError` naming the file and line of the first
    malformed line (not 4 fields), level that is not a 64-bit integer, or document judged
    twice for a topic. A file starting with a byte order mark is read as trec_eval reads
    it (see the module docstring), with a warning.

    Anything but a regular file is refused unread, and the file is read within limits,
    as :func:`~irscale.scales.runs.run_files.read_run` reads runs (same keywords).
    """
    data = read_bytes(path, "qrels", input_limits(max_size, max_line_length, max_gzip_ratio))
    check_text(path, data, "qrels")
    try:
        return _read_qrels(path, data)
    except MemoryError:
        raise out_of_memory(path, len(data)) from None


def _read_qrels(path: str | os.PathLike, data: bytes) -> Qrels:
    judgments = None if read_line_by_line(data) else _qrels_fields(data)
    if judgments is None:
        judgments = _qrels_lines(path, data)
    if data.startswith(BOM):
        warnings.warn(bom_warning(path, next(iter(judgments)), "topic id"), IrscaleWarning, stacklevel=3)
    return Qrels(judgments, str(path))


#: The first line that is not blank, as pandas' C reader splits lines (at LF or CR) and
#: fields (at runs of spaces and tabs).
_FIRST_LINE = re.compile(rb"^[ \t]*([^ \t\r\n][^\r\n]*)", re.MULTILINE)
_FIELD_SEPARATOR = re.compile(rb"[ \t]+")


def _qrels_fields(data: bytes) -> dict[str, dict[str, int]] | None:
    """The judgments read by pandas' C reader, or None when anything is wrong. A first line
    without 4 fields (a run file given as qrels) is left to the line reader, which says
    where and what is wrong: pandas would take its width for the file's and warn that
    fields are lost ("Length of header or names does not match length of data")."""
    first = _FIRST_LINE.search(data)
    if first is not None and len(_FIELD_SEPARATOR.split(first.group(1).rstrip(b" \t"))) != len(QRELS_COLUMNS):
        return None
    try:
        df = read_fields(data, QRELS_COLUMNS, {"topic": object, "iteration": object, "docno": object, "rel": np.int64})
        if (df["rel"].isna().any() or df["docno"].isna().any() or (df["docno"] == "").any()
                or df.duplicated(["topic", "docno"]).any()):
            return None
    except (ValueError, TypeError, pd.errors.ParserError, UnicodeDecodeError, OverflowError):
        return None
    judgments: dict[str, dict[str, int]] = {}
    for topic, docno, rel in zip(df["topic"].tolist(), df["docno"].tolist(), df["rel"].tolist()):
        judgments.setdefault(topic, {})[docno] = rel
    return judgments


_LEVEL = re.compile(r"[+-]?[0-9]+")


def _qrels_lines(path, data: bytes) -> dict[str, dict[str, int]]:
    """The judgments read line by line (fields as trec_eval splits them); raises
    TrecFormatError naming the file and line of the first problem."""
    judgments: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for no, f in text_lines(path, data, "qrels"):
        if len(f) != 4:
            hint = "; this looks like a run file" if len(f) == 6 else ""
            raise TrecFormatError(f"{path}:{no}: expected 4 columns ({QRELS_FORMAT}), found {len(f)}{hint}")
        if not _LEVEL.fullmatch(f[3]):
            raise TrecFormatError(f"{path}:{no}: relevance level {f[3]!r} is not an integer")
        rel = int(f[3])
        if not -2 ** 63 <= rel < 2 ** 63:
            raise TrecFormatError(f"{path}:{no}: relevance level {f[3]} is out of range (levels are 64-bit "
                                  f"integers)")
        key = (f[0], f[2])
        if key in seen:
            raise TrecFormatError(f"{path}:{no}: document {f[2]} is judged twice for topic {f[0]} "
                                  f"(also at line {seen[key]})")
        seen[key] = no
        judgments.setdefault(f[0], {})[f[2]] = rel
    return judgments
