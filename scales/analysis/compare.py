"""From qrels and runs to the leaderboard in one call: :func:`compare`.

Everything a user can get wrong is checked before a run is read (names, files, the
store: :mod:`irscale.scales.runs.preflight`). The scales the measures need are built into
the store when it lacks them, with every core: tables that take seconds are built at
once; bigger ones are estimated first (time, disk) and built only when the estimate is
within ``max_build_seconds`` or ``confirm`` says yes (the command line asks, or takes
``--yes``); otherwise the error names the ``irscale build`` command to run. The default
store is the user's (:func:`irscale.store.location.default_store`), so that a scale is
built once for every project. Measures that have no scale (N beyond the tables) keep
their raw columns, and the leaderboard says why.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from irscale.enumerate.lazy import lazy_module
from irscale.errors import BuildTooLargeError, IrscaleError, IrscaleWarning, TableNotFoundError
from irscale.scales.measures.aliases import DEFAULT_NAMES
from irscale.scales.measures.measure import Measure
from irscale.scales.runs.inputs import (
    QrelsInput,
    RunsInput,
    check_run_paths,
    file_run_name,
    qrels_of,
    read_runs,
    runs_depth,
)
from irscale.scales.runs.preflight import (
    build_command,
    build_tables,
    label,
    missing_tables,
    open_or_none,
    plan_build,
    read_measures,
    table_needs,
    warn_unscalable,
)
from irscale.scales.tables.units import duration, size
from irscale.store.location import adopt_older_default, default_store

if TYPE_CHECKING:
    from irscale.scales.analysis.leaderboard import Leaderboard

# the statistics (scipy) and the transform (numba): loaded once the inputs are checked
statistics = lazy_module("irscale.scales.analysis.leaderboard")
transforms = lazy_module("irscale.scales.runs.transform")

#: Measures of :func:`compare` when none are named: what TREC overviews report first.
DEFAULT_MEASURES = "nDCG@10,AP@10,P@10,RR@10"
#: Builds estimated to take longer than this ask first (``confirm``) or are refused.
MAX_BUILD_SECONDS = 60.0


def _first_tag(path: Path) -> str | None:
    """The run tag (sixth column) of the first line of a run file, or None when it cannot
    be read cheaply (reading the run will say what is wrong)."""
    import gzip

    try:
        with path.open("rb") as raw:
            head = raw.read(2)
        opener = gzip.open if head == b"\x1f\x8b" else open
        with opener(path, "rb") as f:
            for _ in range(16):
                fields = f.readline(1 << 16).split()
                if len(fields) >= 6:
                    return fields[5].decode("utf-8", "replace")
    except (OSError, EOFError):
        return None
    return None


def early_baseline_check(runs: RunsInput, baseline: str, run_names: str = "tag") -> None:
    """Fail before any run is read when ``baseline`` names none of the run files given (by
    the tag of their first line, or by file name); in-memory runs are checked later."""
    import difflib

    items = [runs] if isinstance(runs, (str, os.PathLike)) else list(runs) if isinstance(runs, (list, tuple)) else []
    files: list[Path] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            return
        p = Path(item)
        files += sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")) if p.is_dir() else [p]
    names = {file_run_name(f) for f in files}
    if run_names == "tag":
        tags = [_first_tag(f) for f in files]
        if None in tags:
            return
        names |= set(tags)
    if baseline in names:
        return
    close = difflib.get_close_matches(baseline, sorted(names), n=1)
    raise IrscaleError(f"baseline {baseline!r} is not one of the {len(files)} runs"
                       + (f" (did you mean {close[0]}?)" if close else "")
                       + f"; runs: {', '.join(sorted(names)[:8])}{'...' if len(names) > 8 else ''}")


def compare(qrels: QrelsInput, runs: RunsInput, measures: str | Iterable[str | Measure] = DEFAULT_MEASURES,
            baseline: str | None = None, store: str | os.PathLike | None = None, *, test: str = "ttest",
            correction: str = "holm", alpha: float = 0.05, confidence: float = 0.95, rb_scale: str = "feasible",
            names: str = DEFAULT_NAMES, build: bool = True, max_build_seconds: float | None = MAX_BUILD_SECONDS,
            confirm: Callable[[str], bool] | None = None, n_jobs: int | None = None, empty_topics: str = "skip",
            missing_topics: str = "zero", rel_level: int | None = None, max_grade: int | None = None,
            run_names: str = "tag", midranks: bool = False, permutations: int = 1000, seed: int = 0,
            progress: bool = False, bounded: bool = False, error: float | None = None) -> Leaderboard:
    """The leaderboard of ``runs`` on ``qrels`` (:mod:`irscale.scales.analysis.leaderboard`):
    per measure and system the raw and interval-scaled means, ranks, a confidence interval,
    significance against ``baseline`` (or between every pair) with a correction, and marks
    where the conclusion depends on the scale.

    Parameters
    ----------
    qrels, runs
        Any input :func:`irscale.transform` takes (TREC files, folders, DataFrames, dicts,
        ranx and ir_measures objects).
    measures : str or list
        Names as ir_measures and trec_eval spell them (``nDCG@10``, ``map``, ``P_5``,
        ``RR``) or irscale's (``nDCG(b=2)@10``); default :data:`DEFAULT_MEASURES`.
    baseline : str, optional
        The run (by name) every other is compared with.
    store : path, optional
        The table store (default :func:`~irscale.store.location.default_store`); built
        into when it lacks a scale (``build``).
    test, correction, alpha, confidence, permutations, seed
        See :func:`~irscale.scales.analysis.leaderboard.leaderboard`.
    build : bool
        Build the scales the store lacks (default); False: a missing scale is an error
        naming the ``irscale build`` command.
    max_build_seconds : float or None
        Builds estimated to take longer ask ``confirm`` (given the estimate, it returns
        whether to build) and are refused without it; None: no limit.
    n_jobs : int, optional
        Workers building tables (default: every core the process may use).
    midranks : bool
        Also decide on mid-ranks (one transform more for scale-freeness).
    bounded, error
        Scale RBP, DCG, nDCG and nDCG_trec past N = 40 by bounded scales
        (:func:`irscale.transform`); the leaderboard says how far their scaled values
        (and so their means) may be from the exact ones.
    Other parameters are :func:`irscale.transform`'s.
    """
    q = qrels_of(qrels)
    bounded = bounded or error is not None
    ms, later, typed = read_measures(measures, names, q, max_grade)
    warn_unscalable([m for m in ms if not (bounded and m.bounded_only)], typed)   # before anything is read or built
    check_run_paths(runs)
    path = Path(store) if store is not None else default_store()
    if store is None and (moved := adopt_older_default(path)) is not None:
        warnings.warn(moved, IrscaleWarning, stacklevel=2)
    opened = open_or_none(path)
    hint = (q.path or "QRELS") + ("" if max_grade is None else f" --max-grade {max_grade}")

    def provide(measures: list[Measure]) -> None:
        """Build the tables of ``measures`` the store lacks, as the docstring says."""
        nonlocal opened
        missing = missing_tables(opened, table_needs(q, measures, rb_scale, max_grade, rel_level))
        if not missing:
            return
        command = build_command(path, missing, hint)
        if not build:
            raise TableNotFoundError(f"{path} lacks the scales of {', '.join(label(m, typed) for m in missing)}; "
                                     f"build them with: {command}")
        seconds, stored, lines = plan_build(missing, n_jobs)
        if max_build_seconds is not None and seconds > max_build_seconds:
            what = (f"building the scales of {', '.join(label(m, typed) for m in missing)} takes about "
                    f"{duration(seconds)} and {size(stored)} of disk in {path}: " + "; ".join(lines))
            if confirm is None or not confirm(what):
                raise BuildTooLargeError(f"{what}. Build them once with: {command} (every core; it can be "
                                         f"interrupted and resumed), or allow it here (--yes, "
                                         f"max_build_seconds=None)")
        path.parent.mkdir(parents=True, exist_ok=True)
        opened = build_tables(path, missing, n_jobs, progress)

    provide(ms)
    run_list = read_runs(runs, None if later else max(m.n for m in ms), progress=progress, run_names=run_names)
    if later:                                          # names of the whole run: at the runs' depth
        more, _, more_typed = read_measures(later, names, q, max_grade, depth=runs_depth(run_list))
        new = [m for m in more if m not in ms]
        typed.update({m: t for m, t in more_typed.items() if m not in typed})
        warn_unscalable([m for m in new if not (bounded and m.bounded_only)], typed)
        ms += new
        provide(new)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="no scale for ", category=IrscaleWarning)   # said above
        scores = transforms.transform(q, run_list, ms, opened if opened is not None else path, rb_scale=rb_scale,
                                      max_grade=max_grade, empty_topics=empty_topics,
                                      missing_topics=missing_topics, rel_level=rel_level, names=names,
                                      n_jobs=n_jobs, midranks=midranks, bounded=bounded, error=error,
                                      progress=progress)
    present = [str(m) for m in ms]
    labels = {str(m): typed.get(m, str(m)) for m in ms}
    reasons = {str(m): m.scales_reason() for m in ms
               if m.scales_reason() is not None and not (bounded and m.bounded_only)}
    board = statistics.leaderboard(scores, present, baseline, test=test, correction=correction, alpha=alpha,
                                   confidence=confidence, permutations=permutations, seed=seed, labels=labels,
                                   reasons=reasons)
    board.store = str(path)
    return board


__all__ = ["DEFAULT_MEASURES", "MAX_BUILD_SECONDS", "compare", "early_baseline_check"]
