"""What :func:`irscale.transform` accepts as qrels and runs, turned into
:class:`~irscale.scales.runs.qrels.Qrels` and :class:`~irscale.scales.runs.run_files.Run`.

Qrels (:func:`qrels_of`), any of:

* a path to a TREC qrels file (``topic iteration docno rel``; gzip allowed), or a :class:`Qrels`;
* a pandas DataFrame with the columns ``query_id, doc_id, relevance`` (ir_measures and
  ir_datasets; ``qid`` or ``q_id`` and ``docno``, ``topic``, ``rel`` and ``label`` are taken
  too: ``qid, docno, label`` is PyTerrier's, ``topic, docno, rel`` irscale's), other columns
  (``iteration``) ignored;
* a dict ``{qid: {docid: level}}`` (pytrec_eval, ranx);
* a ranx ``Qrels``;
* an iterable of named tuples with the fields ``query_id, doc_id, relevance``
  (ir_measures' ``Qrel``, what ir_datasets' ``qrels_iter()`` yields), a generator too
  (consumed once).

Runs (:func:`read_runs`): one run input or a list of them, each:

* a path to a run file, or a folder (it stands for its files, sorted), or a :class:`Run`;
* a DataFrame with the columns ``query_id, doc_id, score`` (the same aliases as qrels:
  ``qid``/``q_id``/``topic``, ``docno``) and optionally a run column, ``run`` (irscale's
  name in its scores) or ``tag`` (a TREC run's sixth column), which splits the frame into
  one run per value, in order of first appearance;
* a dict ``{qid: {docid: score}}`` (one run, pytrec_eval/ranx), or ``{name: {qid: {docid:
  score}}}`` (several runs, named by the keys), or ``{name: run}`` with any run input
  below as values. The two are told apart by what the inner dicts hold: numbers (one run)
  or dicts (several); a dict holding both, or nothing at all, is refused as ambiguous;
* a ranx ``Run`` (named by its ``.name``);
* an iterable of named tuples with the fields ``query_id, doc_id, score`` (ir_measures'
  ``ScoredDoc``), a generator too (consumed once).

Topic and document ids are strings; integers (of a DataFrame column or dict keys) are
turned into their decimal strings, as trec_eval reads them from a file, so ``401`` and
``"401"`` are the same topic. Other ids (floats, None, NaN, booleans, empty strings) are
refused. Scores must be real numbers (``inf`` allowed; NaN, booleans and strings refused)
and relevance levels 64-bit integers (integral floats such as ``1.0`` and decimal strings
such as ``"1"``, as a qrels file holds them, allowed); a document given
twice for a topic is refused, as in files. In-memory runs are ordered exactly as run files
are (score descending, ties by docno descending: :func:`~irscale.scales.runs.run_files.trec_order`).
Every such problem raises :class:`~irscale.errors.TrecFormatError` (qrels) or
:class:`~irscale.errors.RunError` (runs) naming the input and the row, topic or document.

Run names: a run file's run tag (column 6), or with ``run_names="file"`` its file name
without the folder and a ``.gz`` suffix; in-memory runs are named by their run column,
their dict key, their ``.name`` (ranx), or else ``run_I`` for the I-th run input given
(1-based, ranx's default names). With ``run_names="tag"`` (the default), runs read from
files whose tags repeat are named by their file names instead, with an
:class:`~irscale.errors.IrscaleWarning` listing them; names that are still not unique
(the same file name in two folders, two in-memory runs of one name) are an
:class:`~irscale.errors.IrscaleError`.
"""
from __future__ import annotations

import itertools
import numbers
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from irscale.enumerate.progress import progress_bar
from irscale.errors import IrscaleError, RunError, TrecFormatError, warn
from irscale.scales.runs.qrels import Qrels, read_qrels
from irscale.scales.runs.run_files import Run, few, read_run, trec_order
from irscale.scales.runs.text_files import check_regular, input_limits

#: What :func:`qrels_of` accepts (see the module docstring).
QrelsInput = str | os.PathLike | Qrels | pd.DataFrame | Mapping | Iterable
#: What :func:`read_runs` accepts (see the module docstring).
RunsInput = str | os.PathLike | Run | pd.DataFrame | Mapping | Iterable

#: How runs are named (:func:`read_runs`).
RUN_NAMES = ("tag", "file")

#: Column names taken for each field of a DataFrame (one of each group may be present).
TOPIC_COLUMNS = ("query_id", "qid", "q_id", "topic")
DOC_COLUMNS = ("doc_id", "docno")
SCORE_COLUMNS = ("score",)
LEVEL_COLUMNS = ("relevance", "rel", "label")
RUN_COLUMNS = ("run", "tag")

_QREL_FIELDS = ("query_id", "doc_id", "relevance")
_RUN_FIELDS = ("query_id", "doc_id", "score")
_LEVEL = re.compile(r"[+-]?[0-9]+")


# -- values ------------------------------------------------------------------------------
class _Rows:
    """Flat columns of an in-memory qrels or run, with a way to name a row in messages."""

    def __init__(self, topics, docs, values, where: Callable[[int], str]):
        self.topics, self.docs, self.values, self.where = topics, docs, values, where


def _series(values) -> pd.Series:
    return values.reset_index(drop=True) if isinstance(values, pd.Series) else pd.Series(values, dtype=object)


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def _ids(values, what: str, source: str, where: Callable[[int], str], error: type) -> np.ndarray:
    """Ids as an object array of str: strings kept, integers as their decimal strings;
    anything else (floats, None, NaN, booleans, empty strings) refused."""
    s = _series(values)
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise error(f"{source}: {what} ids are booleans ({where(0)}); give strings or integers")
    if pd.api.types.is_integer_dtype(dtype) and not s.isna().any():
        return s.astype(str).to_numpy(dtype=object)
    if pd.api.types.is_float_dtype(dtype) and len(s):
        raise error(f"{source}: {what} id {float(s.iloc[0])!r} ({where(0)}) is a float; give ids as strings or "
                    f"integers (a float id is ambiguous: 401.0 or 401?)")
    arr = s.to_numpy(dtype=object, na_value=None)
    is_str = np.fromiter((isinstance(x, str) for x in arr), bool, len(arr))
    if not is_str.all():
        out = arr.copy()
        for i in np.flatnonzero(~is_str).tolist():
            x = arr[i]
            if not _is_int(x):
                raise error(f"{source}: {what} id {x!r} ({where(i)}) is not a string or an integer")
            out[i] = str(int(x))
        arr = out
    empty = np.flatnonzero(arr == "")
    if len(empty):
        raise error(f"{source}: empty {what} id ({where(int(empty[0]))})")
    return arr


def _scores(values, source: str, where: Callable[[int], str]) -> np.ndarray:
    """Scores as float64: real numbers (inf allowed); NaN, booleans, strings refused."""
    s = _series(values)
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise RunError(f"{source}: scores are booleans ({where(0)}); give numbers")
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        out = s.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        arr = s.to_numpy(dtype=object)
        out = np.empty(len(arr), np.float64)
        for i, x in enumerate(arr.tolist()):
            if not isinstance(x, numbers.Real) or isinstance(x, (bool, np.bool_)):
                raise RunError(f"{source}: score {x!r} of {where(i)} is not a number")
            out[i] = float(x)
    nan = np.flatnonzero(np.isnan(out))
    if len(nan):
        raise RunError(f"{source}: score of {where(int(nan[0]))} is NaN")
    return out


def _levels(values, source: str, where: Callable[[int], str]) -> list[int]:
    """Relevance levels as Python ints: integers of 64 bits, floats with integral values or
    decimal strings of integers."""
    s = _series(values)
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        raise TrecFormatError(f"{source}: relevance levels are booleans ({where(0)}); give integers")
    if pd.api.types.is_integer_dtype(dtype) and not s.isna().any():
        return s.tolist()
    if pd.api.types.is_float_dtype(dtype):
        values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) >= 2.0 ** 63))
        if len(bad):
            i = int(bad[0])
            raise TrecFormatError(f"{source}: relevance level {float(values[i])!r} of {where(i)} is not a 64-bit "
                                  f"integer")
        return values.astype(np.int64).tolist()
    arr = s.to_numpy(dtype=object, na_value=None).tolist()
    out = []
    for i, x in enumerate(arr):
        if isinstance(x, str) and _LEVEL.fullmatch(x.strip()):
            x = int(x)
        if isinstance(x, numbers.Real) and not _is_int(x) and not isinstance(x, (bool, np.bool_)):
            if not np.isfinite(x) or x != int(x):
                raise TrecFormatError(f"{source}: relevance level {x!r} of {where(i)} is not an integer")
            x = int(x)
        if not _is_int(x):
            raise TrecFormatError(f"{source}: relevance level {x!r} of {where(i)} is not an integer")
        x = int(x)
        if not -2 ** 63 <= x < 2 ** 63:
            raise TrecFormatError(f"{source}: relevance level {x} of {where(i)} is out of range (levels are "
                                  f"64-bit integers)")
        out.append(x)
    return out


def _first_repeat(topics: np.ndarray, docs: np.ndarray) -> int | None:
    """Index of the first (topic, doc) pair seen before, or None."""
    if len(topics) < 2:
        return None
    repeated = pd.DataFrame({"t": topics, "d": docs}).duplicated().to_numpy()
    return int(np.flatnonzero(repeated)[0]) if repeated.any() else None


# -- shapes --------------------------------------------------------------------------------
def _is_ranx(obj, cls: str) -> bool:
    t = type(obj)
    return t.__module__.split(".")[0] == "ranx" and t.__name__ == cls


def _ranx_dict(obj, attr: str) -> dict:
    """``{qid: {docid: value}}`` of a ranx Qrels (``attr="qrels"``) or Run (``"run"``):
    read from its numba dict item by item, ten times faster than its ``to_dict()``."""
    inner = getattr(obj, attr, None)
    if inner is None or not hasattr(inner, "items"):
        return obj.to_dict()
    return {q: dict(docs.items()) for q, docs in inner.items()}


def _is_record(item, fields: tuple[str, ...]) -> bool:
    return isinstance(item, tuple) and all(hasattr(item, f) for f in fields)


def _column(df: pd.DataFrame, names: tuple[str, ...], what: str, source: str, error: type) -> str | None:
    """The one column of ``df`` among ``names`` (None when there is none)."""
    found = [c for c in names if c in df.columns]
    if len(found) > 1:
        raise error(f"{source}: columns {', '.join(found)} all name the {what}; keep one")
    return found[0] if found else None


def _need(df: pd.DataFrame, groups: dict[str, tuple[str, ...]], source: str, error: type, hint: str) -> dict:
    cols = {what: _column(df, names, what, source, error) for what, names in groups.items()}
    missing = [what for what, c in cols.items() if c is None]
    if missing:
        want = ", ".join(" or ".join(groups[w]) for w in missing)
        raise error(f"{source}: DataFrame has no column {want} (its columns: "
                    f"{', '.join(map(str, df.columns)) or 'none'}){hint}")
    return cols


# -- qrels ---------------------------------------------------------------------------------
def _qrels_from_rows(rows: _Rows, source: str) -> Qrels:
    topics = _ids(rows.topics, "topic", source, rows.where, TrecFormatError)
    docs = _ids(rows.docs, "document", source, rows.where, TrecFormatError)
    levels = _levels(rows.values, source, rows.where)
    i = _first_repeat(topics, docs)
    if i is not None:
        raise TrecFormatError(f"{source}: document {docs[i]} is judged twice for topic {topics[i]} ({rows.where(i)})")
    judgments: dict[str, dict[str, int]] = {}
    for t, d, r in zip(topics.tolist(), docs.tolist(), levels):
        judgments.setdefault(t, {})[d] = r
    return Qrels(judgments)


def _qrels_frame(df: pd.DataFrame) -> Qrels:
    source = "qrels DataFrame"
    hint = "; this looks like a run" if _column(df, SCORE_COLUMNS, "score", source, TrecFormatError) else ""
    cols = _need(df, {"topic": TOPIC_COLUMNS, "document": DOC_COLUMNS, "relevance level": LEVEL_COLUMNS},
                 source, TrecFormatError, hint)
    return _qrels_from_rows(_Rows(df[cols["topic"]], df[cols["document"]], df[cols["relevance level"]],
                                  lambda i: f"row {i}"), source)


def _nested(d: Mapping, source: str, error: type, leaf: str) -> _Rows:
    """Rows of ``{qid: {docid: value}}``."""
    topics, docs, values = [], [], []
    for t, inner in d.items():
        if not isinstance(inner, Mapping):
            raise error(f"{source}: the value of topic {t!r} is a {type(inner).__name__}, not a dict "
                        f"{{docid: {leaf}}}")
        for doc, v in inner.items():
            topics.append(t)
            docs.append(doc)
            values.append(v)
    return _Rows(topics, docs, values, lambda i: f"topic {topics[i]!r}, document {docs[i]!r}")


def _record_rows(items: Iterable, fields: tuple[str, ...], error: type, kind: str, source: str) -> _Rows:
    """The rows of an iterable of named tuples with ``fields`` (query id, doc id, value),
    raising ``error`` naming the first item that is not one (``kind``: its class)."""
    topics, docs, values = [], [], []
    for i, item in enumerate(items):
        if not _is_record(item, fields):
            raise error(f"{source}: item {i} ({item!r:.80}) is not a named tuple with the fields "
                        f"{', '.join(fields)} ({kind})")
        topics.append(getattr(item, fields[0]))
        docs.append(getattr(item, fields[1]))
        values.append(getattr(item, fields[2]))
    return _Rows(topics, docs, values, lambda i: f"item {i}")


def _qrels_records(items: Iterable, source: str) -> Qrels:
    return _qrels_from_rows(_record_rows(items, _QREL_FIELDS, TrecFormatError, "ir_measures.Qrel", source), source)


def qrels_of(qrels: QrelsInput, *, max_size: int | str | None = None, max_line_length: int | str | None = None,
             max_gzip_ratio: float | str | None = None) -> Qrels:
    """The :class:`Qrels` of any accepted qrels input (see the module docstring); a file
    is read within the limits of :func:`~irscale.scales.runs.qrels.read_qrels`."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        return read_qrels(qrels, max_size=max_size, max_line_length=max_line_length, max_gzip_ratio=max_gzip_ratio)
    if isinstance(qrels, pd.DataFrame):
        return _qrels_frame(qrels)
    if _is_ranx(qrels, "Qrels"):
        qrels = _ranx_dict(qrels, "qrels")
    if isinstance(qrels, Mapping):
        return _qrels_from_rows(_nested(qrels, "qrels dict", TrecFormatError, "level"), "qrels dict")
    if isinstance(qrels, Iterable) and not isinstance(qrels, (bytes, bytearray)):
        return _qrels_records(qrels, "qrels")
    raise TrecFormatError(f"qrels: cannot read a {type(qrels).__name__}; give a qrels file, a DataFrame "
                          f"(query_id, doc_id, relevance), a dict {{qid: {{docid: level}}}}, a ranx Qrels or "
                          f"ir_measures Qrel tuples")


# -- runs ----------------------------------------------------------------------------------
def _run_from_rows(rows: _Rows, name: str, depth: int | None, source: str) -> Run:
    topics = _ids(rows.topics, "topic", source, rows.where, RunError)
    docs = _ids(rows.docs, "document", source, rows.where, RunError)
    scores = _scores(rows.values, source, rows.where)
    i = _first_repeat(topics, docs)
    if i is not None:
        raise RunError(f"{source}: document {docs[i]} appears twice for topic {topics[i]} ({rows.where(i)}); "
                       f"trec_eval refuses such runs")
    codes = pd.factorize(topics)[0] if len(topics) else np.zeros(0, np.int64)
    keep = trec_order(codes, docs.__getitem__, scores, depth)
    return Run.ordered(name, topics[keep], docs[keep], scores[keep], depth, "")


def _name_of(value, source: str) -> str:
    if isinstance(value, str) and value:
        return value
    if _is_int(value):
        return str(int(value))
    raise RunError(f"{source}: run name {value!r} is not a non-empty string")


def _runs_frame(df: pd.DataFrame, name: str, depth: int | None, source: str) -> list[Run]:
    hint = ("; this looks like qrels" if _column(df, LEVEL_COLUMNS, "relevance level", source, RunError)
            else "")
    cols = _need(df, {"topic": TOPIC_COLUMNS, "document": DOC_COLUMNS, "score": SCORE_COLUMNS}, source,
                 RunError, hint)
    run_col = _column(df, RUN_COLUMNS, "run", source, RunError)
    if run_col is None:
        return [_run_from_rows(_Rows(df[cols["topic"]], df[cols["document"]], df[cols["score"]],
                                     lambda i: f"row {i}"), name, depth, f"{source} ({name})")]
    names = df[run_col].reset_index(drop=True)
    bad = names.isna().to_numpy()
    if bad.any():
        raise RunError(f"{source}: no run name in column {run_col} (row {int(np.flatnonzero(bad)[0])})")
    codes, uniques = pd.factorize(names, sort=False)
    positions = np.arange(len(df))
    out = []
    for c, value in enumerate(uniques.tolist()):
        run_name = _name_of(value, source)
        rows = positions[codes == c]
        part = df.iloc[rows]
        out.append(_run_from_rows(_Rows(part[cols["topic"]], part[cols["document"]], part[cols["score"]],
                                        lambda i, rows=rows: f"row {int(rows[i])}"),
                                  run_name, depth, f"{source} (run {run_name})"))
    return out


def _dict_kind(d: Mapping, source: str) -> str:
    """``"run"`` for ``{qid: {docid: score}}``, ``"runs"`` for ``{name: {qid: {docid:
    score}}}``, ``"named"`` for ``{name: run input}``; refuses mixtures and empty dicts."""
    if not d:
        raise RunError(f"{source}: empty dict, no run")
    mappings = [isinstance(v, Mapping) for v in d.values()]
    if not any(mappings):
        return "named"
    if not all(mappings):
        raise RunError(f"{source}: ambiguous dict: some values are dicts and some are not; give "
                       f"{{qid: {{docid: score}}}} for one run or {{run name: {{qid: {{docid: score}}}}}} for several")
    kinds = set()
    for v in d.values():
        for x in v.values():
            kinds.add("dict" if isinstance(x, Mapping) else "number")
            if len(kinds) > 1:
                raise RunError(f"{source}: ambiguous dict: it holds both scores and dicts at the same depth; give "
                               f"{{qid: {{docid: score}}}} for one run or {{run name: {{qid: {{docid: score}}}}}} "
                               f"for several")
    if not kinds:
        raise RunError(f"{source}: ambiguous dict: no score in it (every inner dict is empty), so it is neither "
                       f"{{qid: {{docid: score}}}} nor {{run name: {{qid: {{docid: score}}}}}}")
    return "runs" if kinds == {"dict"} else "run"


def _run_records(items: Iterable, name: str, depth: int | None, source: str) -> Run:
    rows = _record_rows(items, _RUN_FIELDS, RunError, "ir_measures.ScoredDoc", source)
    return _run_from_rows(rows, name, depth, f"{source} ({name})")


def _is_one_input(obj) -> bool:
    """Whether ``obj`` is one run input (not a list of them)."""
    return isinstance(obj, (str, os.PathLike, Run, pd.DataFrame, Mapping)) or _is_ranx(obj, "Run")


def _in_memory(obj, name: str, depth: int | None, source: str, named: bool = False) -> list[Run]:
    """The runs of one in-memory run input (``name``: its default or given name)."""
    if isinstance(obj, Run):
        return [obj]
    if isinstance(obj, pd.DataFrame):
        return _runs_frame(obj, name, depth, source)
    if _is_ranx(obj, "Run"):
        if obj.name is not None and not named:
            name = _name_of(obj.name, source)
        return [_run_from_rows(_nested(_ranx_dict(obj, "run"), source, RunError, "score"), name, depth,
                               f"{source} ({name})")]
    if isinstance(obj, Mapping):
        kind = _dict_kind(obj, source)
        if kind == "run":
            return [_run_from_rows(_nested(obj, source, RunError, "score"), name, depth, f"{source} ({name})")]
        out = []
        for key, value in obj.items():
            run_name = _name_of(key, source)
            if kind == "runs":
                out.append(_run_from_rows(_nested(value, f"{source}[{key!r}]", RunError, "score"), run_name,
                                          depth, f"{source} ({run_name})"))
            elif isinstance(value, (str, os.PathLike)):
                raise RunError(f"{source}: run {run_name} is a path; give paths in a list (files are named by "
                               f"their tags or file names)")
            else:
                runs = _in_memory(value, run_name, depth, f"{source}[{key!r}]", named=True)
                if len(runs) != 1:
                    raise RunError(f"{source}: {key!r} holds {len(runs)} runs, not one")
                out.append(runs[0] if runs[0].name == run_name else
                           Run.ordered(run_name, runs[0].topics, runs[0].docnos, runs[0].scores, runs[0].depth,
                                       runs[0].path))
        return out
    if isinstance(obj, Iterable) and not isinstance(obj, (bytes, bytearray)):
        return [_run_records(obj, name, depth, source)]
    raise RunError(f"{source}: cannot read a {type(obj).__name__} as a run; give a run file, a folder, a DataFrame "
                   f"(query_id, doc_id, score[, run]), a dict {{qid: {{docid: score}}}}, a ranx Run or "
                   f"ir_measures ScoredDoc tuples")


def _inputs(runs) -> list:
    """The run inputs given: one, or the items of a list (a list of ScoredDoc tuples is
    one run)."""
    if _is_one_input(runs):
        return [runs]
    if not isinstance(runs, Iterable) or isinstance(runs, (bytes, bytearray)):
        raise RunError(f"runs: cannot read a {type(runs).__name__}; give run files, folders, DataFrames, dicts, "
                       f"ranx Runs or ir_measures ScoredDoc tuples")
    it = iter(runs)
    end = object()
    first = next(it, end)
    if first is end:
        raise IrscaleError("no run given")
    if _is_record(first, _QREL_FIELDS) and not _is_record(first, _RUN_FIELDS):
        raise RunError("runs: ir_measures Qrel tuples (query_id, doc_id, relevance) are qrels, not a run")
    if _is_record(first, _RUN_FIELDS):
        return [itertools.chain([first], it)]
    return [first, *it]


def _collect(runs, depth: int | None) -> list:
    """Paths (folders expanded, sorted) and in-memory Runs, in the order given."""
    items = _inputs(runs)
    out: list = []
    for pos, item in enumerate(items, start=1):
        if isinstance(item, (str, os.PathLike)):
            p = Path(item)
            if p.is_dir():
                files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
                if not files:
                    raise IrscaleError(f"{p}: folder holds no run files")
                out.extend(files)
            else:
                out.append(p)
        else:
            source = "run" if len(items) == 1 else f"run input {pos}"
            out.extend(_in_memory(item, f"run_{pos}", depth, source))
    if not out:
        raise IrscaleError("no run given")
    return out


def check_run_paths(runs: RunsInput) -> None:
    """Raise the error a run path given would give when read (missing, unreadable, an
    empty folder), before any run is read; in-memory runs are checked when read."""
    items = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs) if isinstance(runs, (list, tuple)) else []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            continue
        p = Path(item)
        if p.is_dir():
            if not any(f.is_file() and not f.name.startswith(".") for f in p.iterdir()):
                raise IrscaleError(f"{p}: folder holds no run files")
        else:
            check_regular(p, "run")             # missing, or a device, a pipe: refused unread
            if not os.access(p, os.R_OK):
                raise TrecFormatError(f"{p}: cannot read (permission denied)")


def file_run_name(path: str | os.PathLike) -> str:
    """A run's name by file: the file name without its folder and a ``.gz`` suffix."""
    name = Path(path).name
    return name[:-3] if name.lower().endswith(".gz") and len(name) > 3 else name


def _renamed(run: Run, name: str) -> Run:
    return Run.ordered(name, run.topics, run.docnos, run.scores, run.depth, run.path)


def _name_runs(runs: list[Run], run_names: str) -> list[Run]:
    """Runs named as ``run_names`` says (see the module docstring); names unique."""
    if run_names == "file":
        runs = [_renamed(r, file_run_name(r.path)) if r.path else r for r in runs]
    else:
        counts: dict[str, int] = {}
        for r in runs:
            counts[r.name] = counts.get(r.name, 0) + 1
        renamed = []
        out = []
        for r in runs:
            if counts[r.name] > 1 and r.path:
                renamed.append(f"{file_run_name(r.path)} (tag {r.name})")
                r = _renamed(r, file_run_name(r.path))
            out.append(r)
        if renamed:
            warn(f"run tags repeat; {len(renamed)} run(s) named by file name instead: {few(renamed)}")
        runs = out
    seen: dict[str, Run] = {}
    for run in runs:
        if run.name in seen:
            other = seen[run.name]
            by = " (their file names repeat too)" if run.path and other.path and run_names == "tag" else ""
            raise IrscaleError(f"run name {run.name} appears twice ({other.path or 'in memory'} and "
                               f"{run.path or 'in memory'}){by}; give each run once")
        seen[run.name] = run
    return runs


def runs_depth(runs: list[Run]) -> int:
    """The length of the longest ranking of any topic of ``runs`` (1 when they are empty):
    the cutoff at which names that rank the whole run (``map``) read."""
    return max((int(np.unique(run.topics, return_counts=True)[1].max()) for run in runs if len(run.topics)),
               default=1)


def read_runs(runs: RunsInput, depth: int | None = None, progress: bool = False,
              run_names: str = "tag", *, max_size: int | str | None = None, max_line_length: int | str | None = None,
              max_gzip_ratio: float | str | None = None) -> list[Run]:
    """Read runs (any run input of the module docstring, or a list of them), keeping each
    topic's top ``depth`` documents (all when None; :class:`Run` objects are kept as they
    are). ``run_names``: ``"tag"`` (run files named by their run tag; files whose tags
    repeat by file name, with a warning) or ``"file"`` (run files named by file name).
    Two runs with the same name are an error: rows would be ambiguous. Files are read
    within the limits of :func:`~irscale.scales.runs.run_files.read_run` (``max_size``,
    ``max_line_length``, ``max_gzip_ratio``: each file's)."""
    if run_names not in RUN_NAMES:
        raise IrscaleError(f"run_names must be one of {', '.join(RUN_NAMES)}, got {run_names!r}")
    limits = {"max_size": max_size, "max_line_length": max_line_length, "max_gzip_ratio": max_gzip_ratio}
    input_limits(**limits)                      # a bad limit is an error before any file is read
    items = _collect(runs, depth)
    files = sum(1 for x in items if not isinstance(x, Run))
    out = [x if isinstance(x, Run) else read_run(x, depth, **limits)
           for x in progress_bar(iterable=items, desc="reading runs", unit="run", disable=not progress or files < 2)]
    return _name_runs(out, run_names)


__all__ = ["DOC_COLUMNS", "LEVEL_COLUMNS", "QrelsInput", "RUN_COLUMNS", "RUN_NAMES", "RunsInput", "SCORE_COLUMNS",
           "TOPIC_COLUMNS", "check_run_paths", "file_run_name", "qrels_of", "read_runs", "runs_depth"]
