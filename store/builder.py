"""build_store: enumerate measures and commit their tables to a store file."""
from __future__ import annotations

import os
from pathlib import Path

from irscale.store.reader import Store
from irscale.store.writer import commit


def build_store(path: str | os.PathLike, measures, rbs="all", n_jobs: int = 1, progress: bool = False,
                rebuild: bool = False) -> Store:
    """Build the tables of ``measures`` (names or Measure objects; a comma-separated
    string works too) into the store at ``path``.

    ``rbs``: ``"all"`` (every recall base 1..N) or a list of recall bases, for the
    RB-dependent measures. Tables already complete in the store are kept and not rebuilt
    unless ``rebuild``. Each measure's tables are committed atomically as soon as they
    are built, so an interrupted build keeps the finished measures.
    """
    from irscale.scales import parse_measures
    from irscale.scales.build import build_tables, table_rbs

    path = Path(path)
    ms = parse_measures(measures)
    todo = []
    existing = Store(path) if path.exists() else None
    for m in ms:
        wanted = table_rbs(m, rbs)
        if rebuild or existing is None or not all(existing.has(m, rb) for rb in wanted):
            todo.append(m)
    for tables in build_tables(todo, rbs=rbs, n_jobs=n_jobs, progress=progress):
        commit(path, tables)
    return Store(path)
