"""From qrels and runs to the leaderboard in one call: :func:`compare`.

Everything a user can get wrong is checked before a run is read (names, files, the
store: :mod:`irscale.scales.runs.preflight`). The scales the measures need are built into
the store when it lacks them, with every core: tables that take seconds are built at
once; bigger ones are estimated first (time, disk) and built only when the estimate is
within ``max_build_seconds`` or ``confirm`` says yes (the command line asks, or takes
``--yes``). The default
store is the user's (:func:`irscale.store.location.default_store`), so that a scale is
built once for every project. Measures that have no scale (N beyond the tables, or a
build beyond the limit) keep their raw columns, and the leaderboard says why and names
the command that builds the scale. Scores come from the one evaluation path,
:class:`~irscale.scales.runs.evaluator.Evaluator`, with trec_eval's conventions.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from irscale.enumerate.lazy import lazy_module
from irscale.errors import IrscaleError
from irscale.scales.measures.aliases import DEFAULT_NAMES
from irscale.scales.measures.measure import Measure
from irscale.scales.runs.conventions import Conventions
from irscale.scales.runs.evaluator import MAX_BUILD_SECONDS, Evaluator
from irscale.scales.runs.inputs import QrelsInput, RunsInput, file_run_name

if TYPE_CHECKING:
    from irscale.scales.analysis.leaderboard import Leaderboard

# the statistics (scipy): loaded once the inputs are checked
statistics = lazy_module("irscale.scales.analysis.leaderboard")

#: Measures of :func:`compare` when none are named: what TREC overviews report first.
DEFAULT_MEASURES = "nDCG@10,AP@10,P@10,RR@10"


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
    if run_names == "tag":
        tags = [_first_tag(f) for f in files]
        if None in tags:
            return
        repeated = {t for t in tags if tags.count(t) > 1}     # read_runs names these runs by file name
        names = {file_run_name(f) if t in repeated else t for f, t in zip(files, tags)}
    else:
        names = {file_run_name(f) for f in files}
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
            confirm: Callable[[str], bool] | None = None, n_jobs: int | None = None, empty_topics: str = "zero",
            missing_topics: str = "zero", rel_level: int | None = None, max_grade: int | None = None,
            run_names: str = "tag", midranks: bool = False, permutations: int = 1000, seed: int = 0,
            progress: bool = False, bounded: bool | None = None, error: float | None = None, depth: int | None = None,
            conventions: Conventions | None = None) -> Leaderboard:
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
        Build the scales the store lacks (default); False: a measure whose scale is
        missing shows its raw columns only, and the board names the ``irscale build``
        command that makes it.
    max_build_seconds : float or None
        Builds estimated to take longer ask ``confirm`` (given the estimate, it returns
        whether to build); without it, or told no, their measures show raw columns only,
        with the command; None: no limit.
    conventions : Conventions, optional
        trec_eval's conventions in one object (replaces ``rel_level``, ``empty_topics``,
        ``missing_topics``, ``max_grade``, ``depth``, ``rb_scale``); the board names the
        trec_eval command line its raw means equal (:attr:`Leaderboard.conventions`).
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
    if conventions is None:
        conventions = Conventions(rel_level=rel_level, empty_topics=empty_topics, missing_topics=missing_topics,
                                  max_grade=max_grade, depth=depth, rb_scale=rb_scale)
    evaluator = Evaluator(qrels, measures, conventions, store, names=names, build=build,
                          max_build_seconds=max_build_seconds, confirm=confirm, n_jobs=n_jobs, progress=progress,
                          bounded=bounded, error=error, midranks=midranks)
    scores = evaluator.evaluate(runs, run_names=run_names)
    ms = list(dict.fromkeys(scores["measure"])) if len(scores) else []
    by_name = {str(m): m for m in evaluator.typed} | {str(m): m for m in evaluator.reasons}
    labels = {name: evaluator.label(by_name[name]) if name in by_name else name for name in ms}
    reasons = {name: why for name in ms if name in by_name and (why := evaluator.scale_reason(by_name[name]))}
    commands = {str(m): c for m, c in evaluator.commands.items()}
    board = statistics.leaderboard(scores, ms, baseline, test=test, correction=correction, alpha=alpha,
                                   confidence=confidence, permutations=permutations, seed=seed, labels=labels,
                                   reasons={n: r + (f"; build it with: {commands[n]}" if n in commands else "")
                                            for n, r in reasons.items()}, kinds=evaluator.kinds())
    board.store = None if evaluator.path is None else str(evaluator.path)
    board.conventions = conventions.describe()
    board.scales = evaluator.explain()
    return board


__all__ = ["DEFAULT_MEASURES", "MAX_BUILD_SECONDS", "compare", "early_baseline_check"]
