"""TREC qrels: ``topic iteration docno rel`` per line, whitespace separated (SPEC section 5).

``rel`` is an integer; in the binary (lenient) mapping ``rel > 0`` is relevant and
negative levels count as non-relevant. The recall base RB of a topic is its number of
relevant documents; only topics with RB >= 1 are evaluated. Graded measures read the
levels as grades (SPEC_MEASURES section 1).
"""
from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from irscale.errors import TrecFormatError
from irscale.scales.runs.text_files import check_text, read_bytes, read_fields, text_lines

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
    def evaluated(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """(topics, recall bases, level counts) of the evaluated topics, computed once and
        shared by every judged run."""
        return self.topics, self.recall_bases(self.topics), self.level_counts(self.topics)

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


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a qrels file (``topic iteration docno rel``; gzip allowed).

    Raises :class:`~irscale.errors.TrecFormatError` naming the file and line of the first
    malformed line, non-integer level, or document judged twice for a topic.
    """
    data = read_bytes(path, "qrels")
    check_text(path, data, "qrels")
    try:
        df = read_fields(data, QRELS_COLUMNS, {"topic": object, "iteration": object, "docno": object, "rel": np.int64})
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
    for no, f in text_lines(path, data, "qrels"):
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
