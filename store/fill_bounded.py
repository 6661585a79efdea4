"""Building bounded scales into a store (``irscale build --layout bounded``).

A bounded table (:mod:`irscale.scales.tables.bounded_layout`) holds the grids of the
recall bases asked for; a later build adds the recall bases it lacks (and computes again
those whose stored grid is coarser than the error asked for) and replaces the table file
with one holding them all, as every commit does (:mod:`irscale.store.folder`).
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path

from irscale.enumerate.progress import progress_bar
from irscale.errors import MeasureError
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.parse import parse_measures
from irscale.scales.tables.bounded import bounded_table
from irscale.store import folder
from irscale.store.fill import BuildReport, commit_checked
from irscale.store.format import table_name
from irscale.store.reader import Store


def bounded_needs(ms: list[Measure], rbs: object, rb_counts: object) -> dict[tuple[Measure, tuple | None], list]:
    """The grids a build is asked for, by table ((measure, table recall base)): ``rbs``
    (``"all"``, a list of integers, or a dict from measure name to either) for binary
    measures that depend on the recall base (``"all"``: 1..N), ``rb_counts`` (a vector, a
    list of them, or a dict from measure name to a list) for measures with per-grade
    counts (default: the all-runs vector), the one scale of the others."""
    for m in ms:
        if not m.bounded_only:
            raise MeasureError(f"{m}: bounded tables are stored only for measures without an exact scale (RBP, "
                               f"DCG, nDCG, nDCG_trec past N = 40); {m} has an exact one: build it without "
                               f"--layout bounded")
    needs: dict = {}
    for m in ms:
        if m.per_grade_rb:
            given = rb_counts.get(str(m)) if isinstance(rb_counts, dict) else rb_counts
            given = [given] if isinstance(given, tuple) else given
            wanted = [m.check_rb(tuple(v)) for v in given] if given else [m.common_rb()]
        elif m.rb_dependent:
            asked = rbs.get(str(m), "all") if isinstance(rbs, dict) else rbs
            wanted = list(range(1, m.n + 1)) if asked in ("all", None) else [min(m.check_rb(r), m.n) for r in asked]
        else:
            wanted = [None]
        for rb in dict.fromkeys(wanted):
            needs.setdefault((m, m.table_rb(rb)), []).append(rb)
    return needs


def build_bounded(path: str | os.PathLike, measures: str | Iterable[str | Measure], rbs: object = "all",
                  rb_counts: object = None, error: float | None = None, rebuild: bool = False,
                  wait: float | None = None, progress: bool = False, report: BuildReport | None = None) -> Store:
    """Compute the bounded scales of ``measures`` (for the recall bases of
    :func:`bounded_needs`), each of at most ``error`` in scaled units (default
    :data:`~irscale.scales.tables.bounded_grid.DEFAULT_ERROR`), and store them in the store
    folder at ``path`` (``report``: filled with the tables written and those found
    complete). Only measures without an exact scale have bounded tables."""
    path = Path(path)
    needs = bounded_needs(parse_measures(measures), rbs, rb_counts)
    names = {key: table_name(str(key[0]), key[1]) for key in needs}
    built, found = [], []
    with folder.writing(path, list(names.values()), wait):
        store = Store(path)
        for (m, trb), rbs in needs.items():
            old = None if rebuild else store.bounded_table(m, trb)
            table = (bounded_table(m, trb, error=error) if old is None else old.with_settings(error=error))
            t0, computed = time.perf_counter(), 0
            with progress_bar(total=len(rbs), desc=f"bounded {names[(m, trb)]}", unit="scale",
                              disable=not progress) as bar:
                for rb in rbs:               # a stored grid fine enough for error is taken as it is
                    grid = table.scale(rb).grid
                    computed += old is None or grid is not old.stored.get(table.grid_key(rb))
                    bar.update()
            if not computed:
                found.append(names[(m, trb)])
                continue
            for rb in (old.stored if old is not None else ()):
                table.scale(rb)                        # the grids kept
            commit_checked(path, [table], {names[(m, trb)]: time.perf_counter() - t0})
            built.append(names[(m, trb)])
    if report is not None:
        report.built, report.found = built, found
    return Store(path)
