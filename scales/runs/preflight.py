"""What a transform checks before it reads a run: measure names, run paths, the store and
the scales it needs, so that every mistake a user can make there is reported in under a
second, before minutes of reading runs (and the help that goes with it: the closest
names, the ``irscale build`` command); :class:`~irscale.scales.runs.evaluator.Evaluator`
decides with them what to build.

Measure names are read in the vocabulary of :func:`~irscale.scales.measures.aliases.parse_user_measures`
(by default ir_measures' and trec_eval's names mean what they mean there), completed by
the qrels' highest level. Names that rank the whole run (trec_eval's ``map``,
``recip_rank``; ir_measures' ``RR``, ``AP``) wait for the runs' depth: every other part of
them is checked first, and they are read again once the runs are read
(:func:`read_measures` with ``depth``).
"""
from __future__ import annotations

import os
import shlex
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from irscale.enumerate.jobs import available_cores
from irscale.enumerate.lazy import lazy_module
from irscale.errors import IrscaleWarning, warn
from irscale.scales.measures.aliases import MissingFactError
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.parse import split_measures
from irscale.scales.measures.user_names import parse_user_measures, user_name
from irscale.scales.runs.judging import qrels_table_rbs
from irscale.scales.runs.qrels import Qrels

if TYPE_CHECKING:
    from irscale.store.reader import Store

# the reader, the estimates and the builder load numba: imported when a store is opened
reader = lazy_module("irscale.store.reader")
estimates = lazy_module("irscale.scales.tables.estimate")
units = lazy_module("irscale.scales.tables.units")
fill = lazy_module("irscale.store.fill")

#: Tables of at most this many runs are built on the fly without an estimate (seconds each).
QUICK_RUNS = 1 << 22
#: What a run of such a table costs, at most (one entry per run, measured: 2^22 runs of AP@22
#: in about a second).
QUICK_SECONDS_PER_RUN = 5e-7


def read_measures(measures: str | Iterable[str | Measure], names: str, qrels: Qrels, max_grade: int | None,
                  depth: int | None = None) -> tuple[list[Measure], list[str], dict[Measure, str]]:
    """(measures read, names that wait for the runs' depth, the name each measure was
    given by). Without ``depth``, a name that ranks the whole run is checked with a
    placeholder depth (its other mistakes are reported now) and returned among the
    waiting ones; every warning a name gives is given once."""
    items = split_measures(measures) if isinstance(measures, str) else list(measures)
    if not items:
        parse_user_measures(items, names)                  # the error of an empty list
    top_level = qrels.names_top_level(max_grade)           # None beyond nine: the names that need it say so
    ready: list[Measure] = []
    later: list[str] = []
    typed: dict[Measure, str] = {}
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        for item in items:
            try:
                [m] = parse_user_measures([item], names, top_level=top_level, depth=depth)
            except MissingFactError as e:
                if e.fact != "depth" or depth is not None:
                    raise
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")            # said when read with the runs' depth
                    parse_user_measures([item], names, top_level=top_level, depth=1)
                later.append(item)
                continue
            if m not in ready:
                ready.append(m)
                typed[m] = item.strip() if isinstance(item, str) else str(item)
    for message in dict.fromkeys(str(w.message) for w in said):
        warn(message)
    return ready, later, typed


def label(measure: Measure, typed: dict[Measure, str]) -> str:
    """A measure as messages name it: the name given, with the canonical one when they
    differ (``map (AP@1000)``)."""
    given = typed.get(measure, str(measure))
    return str(measure) if given == str(measure) else f"{given} ({measure})"


def warn_unscalable(measures: Iterable[Measure], typed: dict[Measure, str], stacklevel: int = 3) -> list[Measure]:
    """Warn, once per reason, about the measures that have no scale (their rank and scaled
    values stay empty); returns them. ``stacklevel``: the user's frame, as warnings count."""
    without: dict[str, list[str]] = {}
    out = []
    for m in measures:
        reason = m.scales_reason()
        if reason is not None:
            without.setdefault(reason, []).append(label(m, typed))
            out.append(m)
    for reason, which in without.items():
        warn(f"no scale for {', '.join(which)}: {reason}; raw scores only (rank and scaled empty)")
    return out


def warn_folded_levels(measures: list[Measure], qrels: Qrels, max_grade: int | None,
                       typed: dict[Measure, str] | None = None) -> None:
    """Warn once when graded qrels meet measures with gains that were given fewer grades
    than the qrels have: levels above their top grade count as it (binary measures: every
    level >= 1 is relevant), where trec_eval's ``ndcg_cut`` and ``rbp`` use the levels as
    gains. Measures that trec_eval itself reads as binary (P, R, AP, RR: levels >= 1 are
    relevant) are read alike and not named."""
    top = qrels.top_level
    if max_grade is not None or top <= 1:
        return
    folded = [m for m in measures if any(p.name == "gains" for p in m.params) and not m.binary_elsewhere
              and m.levels - 1 < top]
    if not folded:
        return
    gains = ",".join(map(str, range(top + 1)))
    names = ", ".join(label(m, typed or {}) for m in folded)
    they = "it counts" if len(folded) == 1 else "they count"
    warnings.warn(f"the qrels have levels 0..{top}, but {names} {'has' if len(folded) == 1 else 'have'} fewer "
                  f"grades: {they} every level above the top grade as the top grade (binary: every level >= 1 as "
                  f"relevant), where trec_eval's ndcg_cut and rbp use the levels as gains. For the levels as gains, "
                  f"give them (e.g. nDCG_trec(gains=({gains}))@10) or use ir_measures' names (nDCG@10); to fold on "
                  f"purpose, set max_grade (--max-grade)", IrscaleWarning, stacklevel=3)


def table_needs(qrels: Qrels, measures: Iterable[Measure], rb_scale: str, max_grade: int | None,
                rel_level: int | None) -> dict[Measure, list]:
    """The tables (recall bases) each measure with a scale needs for these qrels (none
    for closed forms: :mod:`irscale.scales.tables.closed`)."""
    return {m: (qrels_table_rbs(qrels, m, max_grade, rel_level) if rb_scale == "feasible" else m.table_rbs("all"))
            for m in measures if m.has_scales and m.closed_form() is None}     # closed forms need no table


def open_or_none(store: str | os.PathLike | Store | None) -> Store | None:
    """The store opened (checked now, before any run is read), or None when there is none
    (no path, or no file yet: the Evaluator builds into it, or says what to build)."""
    if store is None or not isinstance(store, (str, os.PathLike)):
        return store
    if not Path(store).exists() and not Path(store).is_symlink():
        return None
    return reader.open_store(store)


def missing_tables(store: Store | None, needs: dict[Measure, list]) -> dict[Measure, list]:
    """The tables of ``needs`` that ``store`` lacks (all of them when there is no store)."""
    out = {}
    for m, rbs in needs.items():
        lack = [t for t in rbs if store is None or not store.has(m, t)]
        if lack:
            out[m] = lack
    return out


def build_command(path: str | os.PathLike, missing: dict[Measure, list], qrels_hint: str) -> str:
    """The ``irscale build`` command that makes the tables ``missing``."""
    command = f'irscale build --measures "{",".join(user_name(m) for m in missing)}" --out {shlex.quote(str(path))}'
    if any(not (m.has_common_scale() and rbs == m.table_rbs("all")) for m, rbs in missing.items()):
        command += f" --qrels {qrels_hint}"
    return command


def plan_build(missing: dict[Measure, list], n_jobs: int | None) -> tuple[float, int, list[str]]:
    """(seconds, bytes in the store, one line per estimated table) of building the tables
    ``missing`` with ``n_jobs`` workers (None or -1: every core); tables of at most
    :data:`QUICK_RUNS` runs are not estimated (they count :data:`QUICK_SECONDS_PER_RUN`
    per run: two seconds at most)."""
    workers = available_cores() if n_jobs in (None, -1) else n_jobs
    seconds, stored, lines = 0.0, 0, []
    for m, rbs in missing.items():
        for t in rbs:
            runs = estimates.runs_enumerated(m, t)
            if runs <= QUICK_RUNS:
                seconds += runs * QUICK_SECONDS_PER_RUN
                continue
            e = estimates.estimate(m, t, workers)
            seconds += e.seconds
            stored += e.stored
            lines.append(e.describe())
    return seconds, stored, lines


def build_tables(path: str | os.PathLike, missing: dict[Measure, list], n_jobs: int | None,
                 progress: bool) -> Store:
    """Build the tables ``missing`` into the store at ``path`` and open it (``n_jobs``:
    workers, None or -1 for every core the process may use)."""
    return fill.build_store(path, list(missing), n_jobs=n_jobs, progress=progress,
                       rbs={str(m): rbs for m, rbs in missing.items()})


__all__ = ["QUICK_RUNS", "build_command", "build_tables", "label",
           "missing_tables", "open_or_none", "plan_build", "read_measures", "table_needs", "warn_folded_levels",
           "warn_unscalable"]
