"""Scores files: what :func:`irscale.scales.runs.transform.transform` returns, written
and read as ``.csv``, ``.tsv``, ``.parquet`` (``.csv.gz``, ``.tsv.gz``), one row per
(run, topic, measure) with the columns :data:`COLUMNS` (described in
:mod:`irscale.scales.runs.transform`). Files are written to a temporary file in the same
folder and renamed, so a failure leaves no partial file and keeps an older one.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from irscale.errors import IrscaleError, OutputError

COLUMNS = ["run", "topic", "measure", "n", "rb", "raw", "rank", "k", "scaled", "midrank", "n_runs", "rb_scale",
           "scale"]
#: Columns older scores files lack (read as empty).
NEWER_COLUMNS = ["scale"]
#: The columns a transform with bounded scales adds after ``scaled``: an interval holding it.
BOUND_COLUMNS = ["scaled_lo", "scaled_hi"]
OUTPUT_FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".csv.gz": "csv", ".tsv.gz": "tsv"}


def bounded_columns() -> list[str]:
    """:data:`COLUMNS` with :data:`BOUND_COLUMNS` after ``scaled`` (a transform with bounded scales)."""
    at = COLUMNS.index("scaled") + 1
    return [*COLUMNS[:at], *BOUND_COLUMNS, *COLUMNS[at:]]


def output_format(path: str | os.PathLike) -> str:
    """Format of a scores file from its name (.csv, .tsv, .parquet, .csv.gz, .tsv.gz)."""
    name = Path(path).name.lower()
    for suffix, fmt in sorted(OUTPUT_FORMATS.items(), key=lambda kv: -len(kv[0])):
        if name.endswith(suffix):
            return fmt
    raise OutputError(f"{path}: unknown output format; use a name ending in "
                      f"{', '.join(OUTPUT_FORMATS)}")


def check_writable(path: str | os.PathLike) -> None:
    """Fail early (before any work) when a file cannot be written at ``path``: a folder
    there, a missing or read-only folder."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"{path} is a folder")
    if not folder.is_dir():
        raise OutputError(f"{path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"{path}: folder {folder} is not writable")


def check_output(path: str | os.PathLike) -> None:
    """Fail early (before any work) when ``path`` cannot be written."""
    output_format(path)
    check_writable(path)


def write_atomically(path: str | os.PathLike, write: Callable[[Path], None]) -> None:
    """Call ``write`` with a temporary path in the same folder, then rename it to ``path``:
    a failed or interrupted write leaves no partial file and keeps an older one."""
    path = Path(path)
    check_writable(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as e:
        raise OutputError(f"{path}: cannot write ({e.strerror or e})") from None
    finally:
        if tmp.exists():
            tmp.unlink()


def write_scores(scores: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a scores table atomically (temporary file in the same folder, then rename):
    a failed or interrupted write leaves no partial file and keeps an older one."""
    fmt = output_format(path)
    compression = "gzip" if Path(path).name.lower().endswith(".gz") else None

    def write(tmp: Path) -> None:
        if fmt == "parquet":
            scores.to_parquet(tmp, index=False)
        else:
            scores.to_csv(tmp, index=False, sep="\t" if fmt == "tsv" else ",", compression=compression)

    write_atomically(path, write)


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
                         na_values={c: [""] for c in ("raw", "rank", "k", "scaled", "midrank", "n_runs",
                                                      "scale", *BOUND_COLUMNS)})
    missing = [c for c in COLUMNS if c not in df.columns and c not in NEWER_COLUMNS]
    if missing:
        raise IrscaleError(f"{path}: not a scores file of 'irscale transform' (no column {', '.join(missing)})")
    for c in ("rank", "k", "n_runs"):
        df[c] = df[c].astype("Int64")
    for c in NEWER_COLUMNS:
        if c not in df.columns:
            df[c] = pd.Series(pd.NA, index=df.index, dtype=object)
    kinds = scale_kinds(df)
    if kinds and "scale_kinds" not in df.attrs:
        df.attrs["scale_kinds"] = kinds
    return df


def scale_kinds(scores: pd.DataFrame) -> dict[str, str]:
    """What scaled each measure whose rows were scaled by more than one kind of scale
    (rank oracles for some topics, tables for the others), from the ``scale`` column: as
    ``attrs["scale_kinds"]`` of :func:`irscale.transform`'s scores, by topics."""
    if "scale" not in scores.columns or not len(scores):
        return {}
    out = {}
    for m, rows in scores.dropna(subset=["scale"]).groupby("measure", sort=False):
        topics = rows.drop_duplicates("topic")["scale"].value_counts()
        if len(topics) > 1:                       # bounded first, as transform says it (its width is added to it)
            topics = topics.sort_index(key=lambda k: k != "bounded", kind="stable")   # (counts stay decreasing)
            (first, n), rest = (topics.index[0], topics.iloc[0]), topics.iloc[1:]
            others = " and ".join(f"{k.removeprefix('exact: ')} ({c})" for k, c in rest.items())
            exact = "exact: " if first == "bounded" else ""
            out[str(m)] = f"{first} ({n} of {topics.sum()} topics) and {exact}{others}"
    return out
