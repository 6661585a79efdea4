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
from pathlib import Path

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, MeasureError, OutputError, TableNotFoundError
from irscale.scales.runs.trec import (JudgedRuns, Qrels, Run, judge, qrels_count_vectors, read_qrels, read_run,
                                 warn_coverage)

RB_SCALES = ("feasible", "common")
COLUMNS = ["run", "topic", "measure", "n", "rb", "raw", "rank", "k", "scaled", "midrank", "n_runs", "rb_scale"]
OUTPUT_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".csv.gz": "csv", ".tsv.gz": "tsv"}

#: Largest N that ``build_missing`` builds on the fly for binary measures (2**24 runs:
#: seconds per measure); graded measures: run spaces of up to BUILD_ON_THE_FLY_MAX_RUNS runs.
BUILD_ON_THE_FLY_MAX_N = 24
BUILD_ON_THE_FLY_MAX_RUNS = 2 ** BUILD_ON_THE_FLY_MAX_N


# -- inputs ------------------------------------------------------------------------------
def _measures(measures):
    from irscale.scales import parse_measures
    from irscale.scales.measures.parse import split_measures
    if isinstance(measures, str):
        measures = split_measures(measures)
    ms = parse_measures(list(measures))
    if not ms:
        raise MeasureError("no measure given")
    return list(dict.fromkeys(ms))


def _run_files(runs) -> list:
    """Run paths (folders expand to their files, sorted) or Run objects."""
    if isinstance(runs, (str, os.PathLike, Run)):
        runs = [runs]
    out = []
    for r in runs:
        if isinstance(r, Run):
            out.append(r)
            continue
        p = Path(r)
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise IrscaleError(f"{p}: folder holds no run files")
            out.extend(files)
        else:
            out.append(p)
    if not out:
        raise IrscaleError("no run given")
    return out


def read_runs(runs, depth: int | None = None, progress: bool = False) -> list[Run]:
    """Read run files (paths, folders of run files, or :class:`Run` objects as they are),
    keeping each topic's top ``depth`` documents (all when None). Two runs with the same
    name are an error: rows would be ambiguous."""
    from tqdm.auto import tqdm
    items = _run_files(runs)
    out = [x if isinstance(x, Run) else read_run(x, depth)
           for x in tqdm(items, desc="reading runs", unit="run", disable=not progress or len(items) < 2)]
    seen: dict[str, str] = {}
    for run in out:
        if run.name in seen:
            raise IrscaleError(f"run name {run.name} appears twice ({seen[run.name] or 'in memory'} and "
                               f"{run.path or 'in memory'}); give each run once")
        seen[run.name] = run.path
    return out


# -- outputs -----------------------------------------------------------------------------
def output_format(path: str | os.PathLike) -> str:
    """Format of a scores file from its name (.csv, .tsv, .parquet, .csv.gz, .tsv.gz)."""
    name = Path(path).name.lower()
    for suffix, fmt in sorted(OUTPUT_FORMATS.items(), key=lambda kv: -len(kv[0])):
        if name.endswith(suffix):
            return fmt
    raise OutputError(f"{path}: unknown output format; use a name ending in "
                      f"{', '.join(OUTPUT_FORMATS)}")


def check_output(path: str | os.PathLike) -> None:
    """Fail early (before any work) when ``path`` cannot be written."""
    path = Path(path)
    output_format(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"{path} is a folder")
    if not folder.is_dir():
        raise OutputError(f"{path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"{path}: folder {folder} is not writable")


def write_scores(scores: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a scores table atomically (temporary file in the same folder, then rename):
    a failed or interrupted write leaves no partial file and keeps an older one."""
    path = Path(path)
    fmt = output_format(path)
    check_output(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    compression = "gzip" if path.name.lower().endswith(".gz") else None
    try:
        if fmt == "parquet":
            scores.to_parquet(tmp, index=False)
        else:
            scores.to_csv(tmp, index=False, sep="\t" if fmt == "tsv" else ",", compression=compression)
        os.replace(tmp, path)
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror or e})") from None
    finally:
        if tmp.exists():
            tmp.unlink()


def read_scores(path: str | os.PathLike) -> pd.DataFrame:
    """Read a scores file written by :func:`write_scores` (any of its formats)."""
    fmt = output_format(path)
    if not Path(path).is_file():
        raise IrscaleError(f"{path}: no such file")
    if fmt == "parquet":
        df = pd.read_parquet(path)
    else:
        df = pd.read_csv(path, sep="\t" if fmt == "tsv" else ",", dtype={"run": str, "topic": str},
                         keep_default_na=False,
                         na_values={c: [""] for c in ("raw", "rank", "k", "scaled", "midrank", "n_runs")})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise IrscaleError(f"{path}: not a scores file of 'irscale transform' (no column {', '.join(missing)})")
    for c in ("rank", "k", "n_runs"):
        df[c] = df[c].astype("Int64")
    return df


# -- tables --------------------------------------------------------------------------------
def _open_tables(store, measures, build_missing: bool, n_jobs: int, progress: bool, vectors: dict | None = None,
                 qrels_hint: str = "QRELS"):
    """The store holding a table for every measure (building small missing ones if asked).
    ``vectors[str(m)]``: the capped per-grade count vectors a graded RB-dependent measure
    needs (one table each); ``qrels_hint`` completes the suggested build command."""
    from irscale.store import Store, build_store, open_store
    if isinstance(store, Store):
        opened = store
    elif build_missing and not Path(store).exists():
        opened = None
    else:
        opened = open_store(store)
    vectors = vectors or {}
    need = {str(m): [c for c in vectors.get(str(m), [m.common_rb()])
                     if opened is None or not opened.has(m, c)] for m in measures if m.counts_keyed}
    missing = [m for m in measures if (need[str(m)] if m.counts_keyed else opened is None or not opened.has(m))]
    if not missing:
        return opened
    path = opened.path if opened is not None else Path(store)
    command = f'irscale build --measures "{",".join(map(str, missing))}" --out {path}'
    graded = [m for m in missing if m.counts_keyed]
    if any(need[str(m)] != [m.common_rb()] for m in graded):
        command += f" --qrels {qrels_hint}"
    what = ", ".join(f"{m} ({len(need[str(m)])} per-grade count vector(s))" if m.counts_keyed else str(m)
                     for m in missing)
    if not build_missing:
        raise TableNotFoundError(f"{path} has no table {what}; create "
                                 f"{'it' if len(missing) == 1 and not graded else 'them'} with: {command} "
                                 f"(or pass --build-missing for run spaces of up to 2^24 runs)")
    def runs_to_score(m):             # tables held in memory cover their own (feasible/truncated) space
        if m.value_kind == "key":
            return m.levels ** m.n
        return max(m.space_size(c) for c in (need.get(str(m)) or [None]))
    big = [m for m in missing if runs_to_score(m) > BUILD_ON_THE_FLY_MAX_RUNS]
    if big:
        raise TableNotFoundError(f"{path} has no table {', '.join(map(str, big))}, too large to build on the "
                                 f"fly (more than 2^24 runs); build it first with: {command}")
    return build_store(path, missing, n_jobs=n_jobs, progress=progress,
                       rb_counts={name: vs for name, vs in need.items() if vs})


# -- scoring -------------------------------------------------------------------------------
def _rank_measure(measure, ids: np.ndarray, rb: np.ndarray, tables, rb_scale: str, midranks: bool):
    """Ranks, k, mid-ranks (NaN unless asked) and n_runs of the judged runs ``ids`` (one per
    row, recall bases ``rb``)."""
    rank = np.zeros(ids.shape[0], np.int64)
    k = np.zeros(ids.shape[0], np.int64)
    mid = np.full(ids.shape[0], np.nan)
    n_runs = np.zeros(ids.shape[0], np.int64)
    if not measure.rb_dependent:
        groups = [(None, np.ones(ids.shape[0], bool))]
    elif rb_scale == "common":
        groups = [(measure.common_rb(), np.ones(ids.shape[0], bool))]
    elif measure.counts_keyed:       # rb: the per-grade counts (rows x G)
        groups = [(tuple(int(x) for x in c), (rb == c).all(axis=1)) for c in np.unique(rb, axis=0)]
    else:
        groups = [(int(r), rb == r) for r in np.unique(rb)]
    for scale_rb, rows in groups:
        if measure.counts_keyed and not measure.defined(scale_rb):
            continue                 # undefined for this topic (e.g. Twist with N < 2 RB): rank 0 -> empty
        s = tables.scale(measure, scale_rb)
        rank[rows] = s.rank_ids(ids[rows])
        k[rows] = s.k
        n_runs[rows] = s.n_runs
        if midranks:
            mid[rows] = s.midranks_of_ranks(rank[rows])
    return rank, k, mid, n_runs


def score_judged(judged: list[JudgedRuns], measures, tables=None, rb_scale: str = "feasible",
                 midranks: bool = False) -> pd.DataFrame:
    """Rows of :data:`COLUMNS` for judged runs (ranks empty when ``tables`` is None)."""
    from irscale.scales.measures.split_forms import values_of_ids
    rel = np.concatenate([j.rel for j in judged]) if judged else np.zeros((0, 1), np.uint8)
    lengths = np.concatenate([j.lengths if j.lengths is not None else np.full(len(j.topics), j.rel.shape[1])
                              for j in judged]) if judged else np.zeros(0, np.int64)
    rb = np.concatenate([j.rb for j in judged]) if judged else np.zeros(0, np.int64)
    grade_counts = {}
    runs = np.repeat(np.array([j.run for j in judged], dtype=object), [len(j.topics) for j in judged])
    topics = np.array([t for j in judged for t in j.topics], dtype=object)
    rows = rel.shape[0]
    frames = []
    for mi, m in enumerate(measures):
        undefined: set = set()
        grades = np.minimum(rel[:, :m.n], m.levels - 1)       # levels above G fold into G
        ids = m.judged_ids(grades, lengths)                  # truncated measures: their own lengths
        raw = np.empty(rows)
        if m.counts_keyed:                                    # per-grade recall bases (c_1..c_G)
            if m.levels not in grade_counts:
                grade_counts[m.levels] = np.concatenate([j.grade_counts(m.levels) for j in judged])
            counts = grade_counts[m.levels]
            for c in np.unique(counts, axis=0):
                sel = (counts == c).all(axis=1)
                c = tuple(int(x) for x in c)
                if not m.defined(c):
                    raw[sel] = np.nan      # e.g. Twist with N < 2 RB: undefined, the topic has no score
                    undefined.update(topics[sel].tolist())
                    continue
                raw[sel] = values_of_ids(m, ids[sel], c)
        elif m.rb_dependent:
            for r in np.unique(rb):
                sel = rb == r
                raw[sel] = values_of_ids(m, ids[sel], int(r))
        else:
            raw[:] = values_of_ids(m, ids, None)
        if tables is not None:
            rank, k, mid, n_runs = _rank_measure(m, ids, grade_counts[m.levels] if m.counts_keyed else rb, tables,
                                                 rb_scale, midranks)
            scaled = np.where(k > 1, (rank - 1) / np.maximum(k - 1, 1), 0.0)
            empty = rank == 0                                  # undefined topics (raw NaN)
            scaled = np.where(empty, np.nan, scaled)
            rank, k, n_runs = (pd.array(np.where(empty, 0, a), dtype="Int64") for a in (rank, k, n_runs))
            for a in (rank, k, n_runs):
                a[empty] = pd.NA
        else:
            rank = k = n_runs = pd.array(np.full(rows, pd.NA), dtype="Int64")
            scaled = mid = np.full(rows, np.nan)
        if undefined:
            import warnings

            from irscale.errors import IrscaleWarning
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


def transform(qrels, runs, measures, store=None, *, rb_scale: str = "feasible", raw_only: bool = False,
              midranks: bool = False, build_missing: bool = False, max_grade: int | None = None,
              n_jobs: int = 1, progress: bool = False) -> pd.DataFrame:
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
        per_topic = [m for m in ms if m.value_kind != "key" and m.counts_keyed]
        if per_topic:
            raise IrscaleError(f"{', '.join(map(str, per_topic))} have no common scale (one table per topic); "
                               f"use rb_scale feasible")
    q = qrels if isinstance(qrels, Qrels) else read_qrels(qrels)
    if not q.topics:
        raise IrscaleError(f"{q.path or 'qrels'}: no topic has a relevant document; nothing to evaluate")
    tables = None
    if store is not None and not raw_only:
        vectors = {str(m): (qrels_count_vectors(q, m, max_grade) if rb_scale == "feasible" else [m.common_rb()])
                   for m in ms if m.counts_keyed}
        hint = (q.path or "QRELS") + ("" if max_grade is None else f" --max-grade {max_grade}")
        tables = _open_tables(store, ms, build_missing, n_jobs, progress, vectors, hint)
    depth = max(m.n for m in ms)
    run_list = read_runs(runs, depth, progress=progress)
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


__all__ = ["COLUMNS", "RB_SCALES", "check_output", "read_runs", "read_scores", "score_judged", "transform",
           "write_scores"]
