"""One evaluation path for every entry point: :class:`Evaluator`, made once from qrels,
measures, conventions and a store, applied to runs (the pattern of
``ir_measures.evaluator(measures, qrels)`` and ``pytrec_eval.RelevanceEvaluator``).

Made, it has resolved everything a run does not change, once: the measure names (in the
vocabulary of :func:`~irscale.scales.measures.user_names.parse_user_measures`, completed
by the qrels' highest level), the :class:`~irscale.scales.runs.conventions.Conventions`,
the store (the default store, :func:`~irscale.store.location.default_store`, when none
is named; closed forms, rank oracles and bounded scales need none) and the scale of each
measure, building the tables it lacks. Names that rank the whole run (``map``, ``RR``)
are resolved at the runs' depth when runs come, every other part of them checked first.

Every measure shows: one whose scale is missing and would take longer than
``max_build_seconds`` to build (or ``build=False``) is scored raw only, with a one-line
warning that says why and the ``irscale build`` command that makes its scale
(:attr:`Evaluator.reasons`, :attr:`Evaluator.commands`); the others are scaled.
``transform``, ``compare``, ``Scaled`` and the PyTerrier measure are thin wrappers of it.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from irscale.enumerate.lazy import lazy_module
from irscale.errors import BuildTooLargeError, IrscaleError, warn
from irscale.scales.measures.aliases import DEFAULT_NAMES
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.parse import split_measures
from irscale.scales.runs.conventions import Conventions
from irscale.scales.runs.inputs import QrelsInput, RunsInput, check_run_paths, qrels_of, read_runs, runs_depth
from irscale.scales.runs.judging import judge, qrels_rbs, warn_coverage
from irscale.scales.runs.preflight import (
    build_command,
    build_tables,
    label,
    missing_tables,
    open_or_none,
    plan_build,
    read_measures,
    table_needs,
    warn_folded_levels,
    warn_unscalable,
)
from irscale.scales.runs.scoring import score_judged
from irscale.scales.tables.build_options import MAX_BUILD_SECONDS
from irscale.scales.tables.closed import CLOSED_FORMS
from irscale.scales.tables.units import duration, size
from irscale.store.location import default_store

if TYPE_CHECKING:
    from irscale.store.reader import Store

# certified rank intervals (mpmath, numba kernels): loaded when bounded scales are asked for
bounded_scales = lazy_module("irscale.scales.tables.bounded_scales")
bounded_plan = lazy_module("irscale.scales.tables.bounded_plan")
layouts = lazy_module("irscale.scales.tables.layouts")          # what a scale is, as outputs say it: --explain


def _no_oracle(m: Measure) -> str:
    """Why no rank oracle stands in for a table too large to build (empty when one would)."""
    return "" if "oracle" in m.layouts else f"; no rank oracle counts its ranks without one: {m.oracle_reason()}"


def _and_disk(stored: float) -> str:
    """`` and 19 GB of disk`` (nothing where the estimate has no size)."""
    return f" and {size(stored)} of disk" if stored else ""


def _no_exact(measure: Measure) -> str:
    """Why ``measure`` has no exact scale (it has bounded ones), short."""
    return f"no exact scale exists for {measure.name} at N = {measure.n}"



class Evaluator:
    """Scores runs on qrels: raw values (trec_eval's) and scaled ones, per topic.

    Parameters
    ----------
    qrels
        Any qrels input of :mod:`irscale.scales.runs.inputs` (a TREC file, a frame, a dict, ...).
    measures : str or list
        Names as ir_measures and trec_eval spell them (``nDCG@10``, ``map``, ``P_5``,
        ``RR``) or irscale's (``nDCG(b=2)@10``), or Measure objects; kept in this order.
    conventions : Conventions, optional
        trec_eval's conventions (default: trec_eval's defaults with ``-c``).
    store : path or Store, optional
        The table store (default :func:`~irscale.store.location.default_store`).
    names : {"ir_measures", "irscale", "trec_eval"}
        Whose meaning a name has where two read it differently.
    raw_only : bool
        No scales at all (no store is opened or built into).
    build : bool
        Build the tables the store lacks (default), within ``max_build_seconds``;
        False: a missing table leaves its measure raw only, with the build command.
    max_build_seconds : float or None
        Builds estimated to take longer ask ``confirm`` (given the estimate, it returns
        whether to build) and are left out without it; None: no limit.
    n_jobs, progress
        Workers building tables (default every core the process may use); progress bars.
    bounded, error
        Bounded scales (docs/bounded.md) of RBP, DCG, nDCG and nDCG_trec past N = 40, where
        no exact scale exists, and below it for the count vectors whose tables are over the
        limit and which no oracle serves (:attr:`stand_ins`). None (default): taken where they fit ``max_build_seconds``
        (together with the builds), to the narrowest scaled interval of 1e-4, 1e-3, 1e-2
        that fits, planned before any is computed (:mod:`~irscale.scales.tables.bounded_plan`),
        else the measure is raw only, saying why; True: always, to ``error`` (default 1e-4;
        ``error`` implies True) whatever it takes; False: never.
    midranks : bool
        Also fill the ``midrank`` column.
    """

    def __init__(self, qrels: QrelsInput, measures: str | Iterable[str | Measure],
                 conventions: Conventions | None = None, store: str | os.PathLike | Store | None = None, *,
                 names: str = DEFAULT_NAMES, raw_only: bool = False, build: bool = True,
                 max_build_seconds: float | None = MAX_BUILD_SECONDS, confirm: Callable[[str], bool] | None = None,
                 n_jobs: int | None = None, progress: bool = False, bounded: bool | None = None,
                 error: float | None = None, midranks: bool = False) -> None:
        if conventions is None:
            conventions = Conventions()
        elif not isinstance(conventions, Conventions):
            raise IrscaleError(f"conventions must be an irscale Conventions, got {type(conventions).__name__}")
        if error is not None:
            if isinstance(error, bool) or not isinstance(error, (int, float)) or not 0 < error < 1:
                raise IrscaleError(f"error must be a number between 0 and 1 (the widest scaled interval of a "
                                   f"bounded scale), got {error!r}")
            bounded = True
        self.conventions = c = conventions
        self.names, self.raw_only, self.build, self.max_build_seconds = names, raw_only, build, max_build_seconds
        self.confirm, self.n_jobs, self.progress = confirm, n_jobs, progress
        self.bounded, self.error, self.midranks = bounded, error, midranks
        self.qrels = q = qrels_of(qrels)
        if not q.judged_topics:
            raise IrscaleError(f"{q.path or 'qrels'}: no judgment; nothing to evaluate")
        if not q.topics and c.empty_topics == "skip":
            raise IrscaleError(f"{q.path or 'qrels'}: no topic has a relevant document; nothing to evaluate")
        if not q.topics:                                  # trec_eval scores them 0: so do we, loudly
            warn(f"{q.path or 'qrels'}: no topic has a relevant document: every score is 0 (are these the right "
                 f"qrels?)")
        if c.rel_level is not None and q.top_level < c.rel_level:
            warn(f"{q.path or 'qrels'}: no judgment reaches level {c.rel_level} (the highest is {q.top_level}): "
                 f"with rel_level={c.rel_level} (-l {c.rel_level}) every binary measure scores 0")
        items = split_measures(measures) if isinstance(measures, str) else list(measures)
        ready, later, self.typed = read_measures(items, names, q, c.max_grade)
        by_name = {t: m for m, t in self.typed.items()}
        self._slots: list[Measure | str] = []             # the measures as typed: read, or waiting for a depth
        for item in items:
            key = item.strip() if isinstance(item, str) else str(item)
            slot = key if key in later else by_name.get(key)
            if slot is not None and slot not in self._slots:
                self._slots.append(slot)
        self._later = later
        self._resolved: dict[int, list[Measure]] = {}     # depth -> the measures of the waiting names
        self.reasons: dict[Measure, str] = {}             # measures without a scale: why
        self.commands: dict[Measure, str] = {}            # ... and the command that builds it, where one does
        self.ranked = not raw_only
        if self.ranked and c.rb_scale == "common":
            per_topic = [m for m in ready if not m.has_common_scale()]
            if per_topic:
                raise IrscaleError(f"{', '.join(map(str, per_topic))} have no common scale (one table per topic); "
                                   f"use rb_scale feasible")
        if not self.ranked:
            self.store, self.path = None, None
        elif store is not None and not isinstance(store, (str, os.PathLike)):
            self.store, self.path = store, Path(store.path)
        else:
            self.path = Path(store) if store is not None else default_store()
            self.store = open_or_none(self.path)
        self._hint = (q.path or "QRELS") + ("" if c.max_grade is None else f" --max-grade {c.max_grade}")
        self._bounded_tables = None
        self.bounded_plans: dict = {}                     # measure -> BoundedPlan (bounded=None)
        self.stand_ins: dict[Measure, tuple[list, str]] = {}  # measure -> (count vectors scaled by bounds, why)
        self.built: set[Measure] = set()                  # measures whose tables were built here
        self._depth: int | None = None                    # the depth of the runs evaluated last
        self._provide(ready)
        warn_folded_levels(ready, q, c.max_grade, self.typed)

    # -- what it resolved ----------------------------------------------------------------
    def measures(self, depth: int | None = None) -> list[Measure]:
        """The measures in the order typed; names that rank the whole run at ``depth``
        (left out without it)."""
        extra = self._at_depth(depth) if depth is not None and self._later else {}
        out: list[Measure] = []
        for slot in self._slots:
            m = extra.get(slot) if isinstance(slot, str) else slot
            if m is not None and m not in out:
                out.append(m)
        return out

    def label(self, measure: Measure) -> str:
        """The name ``measure`` was asked for by (its canonical name when not typed)."""
        return self.typed.get(measure, str(measure))

    def scale_reason(self, measure: Measure) -> str | None:
        """Why ``measure`` has no scaled values here (None: it has them)."""
        if not self.ranked:
            return "raw scores only were asked for"
        if measure in self.reasons:
            return self.reasons[measure]
        if self._by_bounds(measure):
            return None
        return measure.scales_reason()

    def explain(self, depth: int | None = None) -> dict[str, str]:
        """Per measure (by the name it was asked for, in the order typed; ``depth``: the
        runs' depth, for names that rank the whole run), what its scale is and why, at
        length: the details the one-line warnings leave out (``--explain``)."""
        out = {}
        for m in self.measures(self._depth if depth is None else depth):
            out[self.label(m)] = self._explain(m)
        return out

    def _explain(self, m: Measure) -> str:
        why = self.scale_reason(m)
        if why is not None:
            command = self.commands.get(m)
            return f"raw only: {why}" + (f"; build it with: {command}" if command else "")
        plan = self.bounded_plans.get(m)
        if plan is not None and plan.error is not None:
            first = bounded_plan.ERRORS[0]
            wider = (f"; within {first:g} it would take about {duration(plan.narrowest_seconds)} (--error {first:g})"
                     if plan.error > first else "")
            return (f"bounded: certified intervals at most {plan.error:g} wide in scaled units (or a few ranks where K "
                    f"is small), the narrowest of "
                    f"{', '.join(f'{e:g}' for e in bounded_plan.ERRORS)} that fits the build limit (planned before "
                    f"any was computed: about {duration(plan.seconds)}, grids of {size(plan.bytes)} at most){wider}; "
                    f"{self._no_exact(m)}{self._others(m)} (docs/bounded.md)")
        if self._by_bounds(m) or m in self.stand_ins:
            why = f"; {self._no_exact(m)}" if m in self.stand_ins else ""
            return (f"bounded: certified intervals at most {self.error or bounded_plan.ERRORS[0]:g} wide in scaled "
                    f"units (or a few ranks where K is small), asked for (--bounded){why}{self._others(m)} "
                    f"(docs/bounded.md)")
        kind = layouts.scale_kind(m) or "exact"
        if kind == "exact: closed form":
            return f"{kind}: ranks counted by formula, no table (docs/exactness.md)"
        if kind == "exact: rank oracle":
            mixed = self._tables_among_oracles(m)
            if mixed is None:
                return f"{kind}: ranks counted from the measure's structure, no table (docs/exactness.md)"
            oracles, total = mixed
            return (f"{kind} for {oracles} of its {total} count vectors (ranks counted from the measure's structure, "
                    f"docs/exactness.md), exact: table for the other {total - oracles} in {self.path}"
                    + (" (built now)" if m in self.built else ""))
        return f"{kind} in {self.path}" + (" (built now)" if m in self.built else "")

    def _others(self, m: Measure) -> str:
        """What scales the count vectors of ``m`` that bounded scales do not stand in for."""
        if m not in self.stand_ins:
            return ""
        total = len(self._vectors(m))
        exact = total - len(self.stand_ins[m][0])
        return f"; exact: {self._exact_kind(m)} for the other {exact} of its {total} count vectors" if exact else ""

    def _vectors(self, m: Measure) -> list:
        c = self.conventions
        return table_needs(self.qrels, [m], c.rb_scale, c.max_grade, c.rel_level).get(m, [])

    def _exact_kind(self, m: Measure) -> str:
        """The exact scales of ``m``'s vectors that bounded scales do not stand in for: tables, oracles or both."""
        rest = [t for t in self._vectors(m) if t not in self.stand_ins.get(m, ([], ""))[0]]
        found = {"rank oracle" if self.store is not None and self.store.layout_of(m, t) == "oracle" else "table"
                 for t in rest}
        return " and ".join(sorted(found)) or "table"

    def kinds(self) -> dict[str, str]:
        """What answered each scaled measure, by canonical name, where it is not the one kind
        :func:`~irscale.scales.tables.layouts.scale_kind` says: a measure with rank oracles
        whose store holds tables for some of the topics' count vectors, a measure whose
        bounded scales stand in for the vectors whose exact ones are not affordable."""
        out = {}
        for m in self.stand_ins:
            if self.scale_reason(m) is None:
                total, bounded = len(self._vectors(m)), len(self.stand_ins[m][0])
                out[str(m)] = ("bounded" if bounded == total else
                               f"bounded ({bounded} of {total} count vectors) and exact: {self._exact_kind(m)} "
                               f"({total - bounded})")
        for m in self.typed:
            if str(m) in out:
                continue
            mixed = self._tables_among_oracles(m) if layouts.scale_kind(m) == "exact: rank oracle" else None
            if mixed is not None and self.scale_reason(m) is None:
                oracles, total = mixed
                out[str(m)] = f"exact: rank oracle ({oracles} of {total} count vectors) and table ({total - oracles})"
        return out

    def _tables_among_oracles(self, m: Measure) -> tuple[int, int] | None:
        """(count vectors served by an oracle, count vectors) of a measure with oracles
        whose store holds tables for some of the topics' count vectors (None: none)."""
        if self.store is None or not m.recall_base.per_grade:
            return None
        c = self.conventions
        rbs = table_needs(self.qrels, [m], c.rb_scale, c.max_grade, c.rel_level).get(m, [])
        layouts_used = [self.store.layout_of(m, t) for t in rbs]
        tables = sum(layout not in (None, "oracle") for layout in layouts_used)
        return None if not tables else (len(layouts_used) - tables, len(layouts_used))

    def _uses_bounds(self) -> bool:
        """Whether some measure is scaled by a bounded scale (scores gain their intervals)."""
        return self._bounded_tables is not None and (self.bounded is True or any(
            p.error is not None for p in self.bounded_plans.values()))

    # -- resolving -----------------------------------------------------------------------
    def _at_depth(self, depth: int) -> dict[str, Measure]:
        """The waiting names read at ``depth`` (name -> measure), their scales provided."""
        if depth not in self._resolved:
            c = self.conventions
            more, _, typed = read_measures(self._later, self.names, self.qrels, c.max_grade, depth=depth)
            new = [m for m in more if m not in self.typed]
            for m, t in typed.items():
                self.typed.setdefault(m, t)
            self._provide(new)
            warn_folded_levels(new, self.qrels, c.max_grade, self.typed)
            self._resolved[depth] = more
        names = {t: m for m, t in self.typed.items()}
        return {n: names[n] for n in self._later if n in names}

    def _no_exact(self, m: Measure) -> str:
        """Why ``m`` has bounded scales (none exact, or not affordable for some vectors), short."""
        if m not in self.stand_ins:
            return _no_exact(m)
        rbs, why = self.stand_ins[m]
        return f"the exact scales of {len(rbs)} of its count vectors are not affordable ({why})"

    def _by_bounds(self, measure: Measure) -> bool:
        """Whether ``measure`` is scaled by a bounded scale here (or, unplanned, may be)."""
        if self.bounded is False or measure in self.reasons:
            return False
        if self.bounded is True:
            return bounded_scales.BoundedScales.covers(measure)
        plan = self.bounded_plans.get(measure)
        return measure.bounded_only and (plan is None or plan.error is not None)

    def _no_scale(self, measure: Measure, reason: str, command: str | None = None) -> None:
        self.reasons[measure] = reason
        if command is not None:
            self.commands[measure] = command
        tail = f"; build it with: {command}" if command else ""
        warn(f"no scale for {label(measure, self.typed)}: {reason}; raw scores only{tail}")

    def _provide(self, measures: list[Measure]) -> None:
        """Decide the scale of each of ``measures``: none (said, with why), a closed form,
        an oracle or a bounded scale, or the store's tables, built now when they are
        missing and within the limits."""
        if not self.ranked or not measures:
            return
        covered = [m for m in measures if self._by_bounds(m)]
        unscalable = [m for m in measures if m not in covered]
        for m in warn_unscalable(unscalable, self.typed):    # no scale exists: said once per reason
            self.reasons[m] = m.scales_reason()
        scalable = [m for m in unscalable if m not in self.reasons]
        known = set(self.stand_ins)
        spent = self._provide_tables(scalable)
        covered += [m for m in self.stand_ins if m not in known]
        if covered:
            self._provide_bounded(covered, spent)

    def _provide_bounded(self, covered: list[Measure], spent: float) -> None:
        """The bounded scales of ``covered``: planned within what ``spent`` (seconds of
        builds) leaves of the limit unless asked for (``bounded=True``), then computed."""
        c = self.conventions
        if self._bounded_tables is None:
            self._bounded_tables = bounded_scales.BoundedScales(self.store if self.store is not None
                                                                 else CLOSED_FORMS, self.error)
        needs = {m: ([m.common_rb()] if c.rb_scale == "common" else qrels_rbs(self.qrels, m, c.max_grade, c.rel_level))
                 for m in covered}
        for m in covered:
            if m in self.stand_ins:               # the topics' own recall bases, of the vectors stood in for
                self._bounded_tables.stand_in(m, self.stand_ins[m][0])
                needs[m] = [rb for rb in needs[m] if self._bounded_tables.serves(m, rb)]
        if self.bounded is None:
            if not self.build:
                for m in covered:
                    self._no_scale(m, f"{self._no_exact(m)}; its bounded scale is not computed with building turned "
                                      f"off (--bounded computes it)")
                return
            limit = None if self.max_build_seconds is None else max(0.0, self.max_build_seconds - spent)
            plans = bounded_plan.plan_bounded(self._bounded_tables, needs, limit)
            self.bounded_plans.update(plans)
            for m, p in plans.items():
                if p.error is None:
                    tail = "" if limit is None else f" (limit {duration(limit)})"
                    self._no_scale(m, f"{self._no_exact(m)}, and {p.reason}{tail}; --bounded --error E computes "
                                      f"it whatever it takes")
                elif p.wider(label(m, self.typed)) is not None:
                    warn(p.wider(label(m, self.typed)))
            needs = {m: rbs for m, rbs in needs.items() if plans[m].error is not None}
        self._bounded_tables.prepare([(m, rb) for m, rbs in needs.items() for rb in rbs], self.progress)

    def _stand_in(self, m: Measure, rbs: list, now: dict, left: float | None, limit: float | None,
                  why: str | None = None) -> float | None:
        """Bounded scales for the count vectors ``rbs`` of ``m`` whose tables are missing and
        too costly, where ``m`` has bounded scales (not with ``bounded=False``): the vectors
        whose tables fit in ``left`` seconds (the cheapest first) are put in ``now`` (built),
        the others scaled by bounds; the seconds added to ``now`` (None: no stand-in)."""
        if self.bounded is False or not m.bounded_scales:
            return None
        cost = {rb: plan_build({m: [rb]}, self.n_jobs) for rb in rbs}
        cheap, spent = [], 0.0
        for rb in sorted(rbs, key=lambda rb: cost[rb][0]):
            if left is None or spent + cost[rb][0] > left:
                break
            cheap.append(rb)
            spent += cost[rb][0]
        rest = [rb for rb in rbs if rb not in cheap]
        if cheap:
            now[m] = cheap
        if rest:
            seconds, stored = sum(cost[rb][0] for rb in rest), sum(cost[rb][1] for rb in rest)
            before = self.stand_ins.get(m, ([], None))
            self.stand_ins[m] = (list(dict.fromkeys(before[0] + rest)), before[1] or why or (
                f"their tables would take about {duration(seconds)}{_and_disk(stored)}, limit {duration(limit)}"
                f"{_no_oracle(m)}"))
        return spent

    def _provide_tables(self, scalable: list[Measure]) -> float:
        """The store's tables of ``scalable``, built now where missing and within the
        limit; the estimated seconds of what was built."""
        c = self.conventions
        missing = missing_tables(self.store, table_needs(self.qrels, scalable, c.rb_scale, c.max_grade,
                                                         c.rel_level))
        if not missing:
            return 0.0
        if not self.build:
            for m, rbs in missing.items():            # --bounded: bounded scales stand in for what is missing
                if self.bounded is not True or self._stand_in(m, rbs, {}, None, None, f"not in the store {self.path}, "
                                                              f"building turned off") is None:
                    self._no_scale(m, f"not in the store {self.path} (building was turned off)",
                                   build_command(self.path, {m: rbs}, self._hint))
            return 0.0
        plans = {m: plan_build({m: rbs}, self.n_jobs) for m, rbs in missing.items()}
        limit = self.max_build_seconds
        now, total, large, spent = {}, 0.0, [], {}
        for m in sorted(missing, key=lambda m: plans[m][0]):     # the quickest first, within the limit together
            seconds = plans[m][0]
            if limit is None or total + seconds <= limit:
                now[m], total = missing[m], total + seconds
            else:
                large.append(m)
        if large and self.confirm is not None:
            seconds = sum(plans[m][0] for m in large)
            stored = sum(plans[m][1] for m in large)
            what = (f"building the scales of {', '.join(label(m, self.typed) for m in large)} takes about "
                    f"{duration(seconds)}{_and_disk(stored)} in {self.path}")
            if self.bounded is not False and any(m.bounded_scales for m in large):
                what += " (if not, bounded scales stand in for those that have them: docs/bounded.md)"
            if self.confirm(what):
                now.update({m: missing[m] for m in large})
                large = []
        for m in large:
            seconds, stored, _ = plans[m]
            added = self._stand_in(m, missing[m], now, None if limit is None else limit - total, limit)
            if added is not None:
                total += added
                spent[m] = added
                continue
            self._no_scale(m, f"building its scale would take about {duration(seconds)}{_and_disk(stored)} "
                              f"(limit {duration(limit)}){_no_oracle(m)}",
                           build_command(self.path, {m: missing[m]}, self._hint))
        if not now:
            return 0.0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for m in now:           # one build per measure: one that cannot fit costs the others nothing
            try:
                self.store = build_tables(self.path, {m: now[m]}, self.n_jobs, self.progress)
                self.built.add(m)
            except BuildTooLargeError as e:           # the disk or the memory: this measure shows raw
                self.store = open_or_none(self.path)
                still = missing_tables(self.store, {m: now[m]}).get(m, [])      # (all of them without a store)
                if still:
                    if self._stand_in(m, still, {}, None, None, f"its tables do not fit here ({e})") is None:
                        self._no_scale(m, f"its tables do not fit here ({e}){_no_oracle(m)}",
                                       build_command(self.path, {m: now[m]}, self._hint))
        return sum(spent.get(m, plans[m][0]) for m in now)

    # -- scoring -------------------------------------------------------------------------
    def evaluate(self, runs: RunsInput, run_names: str = "tag") -> pd.DataFrame:
        """Per-topic scores of ``runs``: one row per (run, topic, measure), the columns of
        :data:`irscale.scales.runs.scores.COLUMNS`, runs in the order given, topics in
        qrels order, measures in the order typed."""
        c = self.conventions
        check_run_paths(runs)
        ready = self.measures()
        depth = c.depth if c.depth is not None else None if self._later else max(m.n for m in ready)
        run_list = read_runs(runs, depth, progress=self.progress, run_names=run_names)
        self._depth = runs_depth(run_list) if c.depth is None else c.depth
        return self.score(run_list, self.measures(self._depth))

    def score(self, run_list: list, measures: list[Measure]) -> pd.DataFrame:
        """Per-topic scores of runs already read (:func:`~irscale.scales.runs.inputs.read_runs`)."""
        c = self.conventions
        q = self.qrels
        judged = []
        depth = max(m.n for m in measures)
        for run in run_list:
            j = judge(run, q, depth, all_topics=True)
            if c.max_grade is not None:
                j = j.folded(c.max_grade)
            if len(j.missing) == len(j.topics) and j.ignored:
                raise IrscaleError(f"run {run.name} ({run.path or 'in memory'}) has no topic in common with the "
                                   f"qrels {q.path or ''} (its topics: {', '.join(j.ignored[:3])}...; the qrels': "
                                   f"{', '.join(j.topics[:3])}...): are these the right qrels?")
            warn_coverage(j, c.missing_topics)
            judged.append(j)
        tables = None
        if self.ranked:
            tables = self.store if self.store is not None else CLOSED_FORMS
            if self._bounded_tables is not None:          # exact scales: the store as it is now (built since)
                self._bounded_tables.exact, self._bounded_tables.path = tables, getattr(tables, "path", None)
                tables = self._bounded_tables
        return score_judged(judged, measures, tables, c.rb_scale, self.midranks, c.empty_topics, c.missing_topics,
                            c.rel_level, bounds=self.ranked and self._uses_bounds(), unscaled=self.reasons,
                            progress=self.progress)


__all__ = ["MAX_BUILD_SECONDS", "Evaluator"]
