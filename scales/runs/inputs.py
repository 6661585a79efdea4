"""What :func:`irscale.transform` accepts as qrels and runs, turned into
:class:`~irscale.scales.runs.qrels.Qrels` and :class:`~irscale.scales.runs.run_files.Run`.

Qrels: a path to a TREC qrels file or a :class:`Qrels`. Runs: paths, folders of run files
(a folder stands for its files, sorted), :class:`Run` objects, or a list of them.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from tqdm.auto import tqdm

from irscale.errors import IrscaleError
from irscale.scales.runs.qrels import Qrels, read_qrels
from irscale.scales.runs.run_files import Run, read_run

#: What :func:`qrels_of` accepts.
QrelsInput = str | os.PathLike | Qrels
#: What :func:`read_runs` accepts.
RunsInput = str | os.PathLike | Run | Iterable[str | os.PathLike | Run]


def qrels_of(qrels: QrelsInput) -> Qrels:
    """The :class:`Qrels` of any accepted qrels input."""
    return qrels if isinstance(qrels, Qrels) else read_qrels(qrels)


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


def read_runs(runs: RunsInput, depth: int | None = None,
              progress: bool = False) -> list[Run]:
    """Read run files (paths, folders of run files, or :class:`Run` objects as they are),
    keeping each topic's top ``depth`` documents (all when None). Two runs with the same
    name are an error: rows would be ambiguous."""
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


__all__ = ["QrelsInput", "RunsInput", "qrels_of", "read_runs"]
