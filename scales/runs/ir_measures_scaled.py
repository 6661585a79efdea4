"""``Scaled``: irscale's interval-scaled values as a measure of ir_measures.

>>> import ir_measures, irscale                                   # doctest: +SKIP
>>> measure = irscale.Scaled(ir_measures.AP@10)                   # doctest: +SKIP
>>> ir_measures.calc_aggregate([measure, ir_measures.AP@10], qrels, run)   # doctest: +SKIP
{Scaled(AP@10): ..., AP@10: ...}

How it plugs in: ir_measures has no plugin entry point. Its default pipeline asks its
providers in turn whether they support a measure, and the first, the *runtime* provider
(the one behind ``ir_measures.define``), takes every measure object that has a
``runtime_impl`` method. ``Scaled`` is such a measure (a subclass of
``ir_measures.measures.Measure``), so no registration is needed: importing it
(``irscale.Scaled``, or ``from irscale.scales.runs.ir_measures_scaled import Scaled``) is
all, and ``ir_measures.calc_aggregate``, ``iter_calc``, ``calc`` and ``evaluator`` use it
beside any other measure.

Values. The wrapped measure (an ir_measures measure object such as ``AP@10`` or its name
``"AP@10"``) is read as ir_measures means it, mapped to irscale's measure by
:func:`irscale.scales.measures.aliases.from_ir_measures` (graded measures such as
``nDCG@10`` take the qrels' highest relevance level as their top grade; a measure without
a cutoff, ``AP``, is cut at the run's longest ranking, and has a scale only when that is
at most 32). ir_measures' ``rel`` of a binary measure (``AP(rel=2)@10``) is trec_eval's
``-l``: it is passed to transform as ``rel_level``. The runtime provider hands the qrels
and each run over as pandas DataFrames (``query_id, doc_id, relevance`` and ``query_id,
doc_id, score``); they are read by :mod:`irscale.scales.runs.inputs` (documents ordered as
trec_eval orders them, ties by docno descending) and scored by the one evaluation path,
:class:`~irscale.scales.runs.evaluator.Evaluator`, so the per-query value of a topic is
exactly the ``scaled`` column of ``irscale.transform(qrels, run, measure, store,
rb_scale=..., empty_topics=...)`` for it:

* ``scale="unq"`` (default): (rank - 1)/(k - 1), the unq interval scale;
* ``scale="midrank"``: (midrank - 1)/(n_runs - 1), the mid-rank map normalised to [0, 1]
  from transform's ``midrank`` and ``n_runs`` columns (0 on a scale of one run), for
  comparison only (mid-ranks are not an interval scale).

``rb_scale`` is transform's (``"feasible"``, default, or ``"common"``). ``empty_topics``
defaults to ``"zero"``, the convention of trec_eval, ir_measures and every irscale entry
point: every topic of the qrels gets a value (a topic without relevant documents is
scored 0), so ``Scaled(AP@10)`` and ``AP@10`` are averaged over the same topics;
``"skip"`` leaves such topics out. Topics a run has no ranking for are
scored as the all-non-relevant run (0), as ir_measures scores them; transform's
:class:`~irscale.errors.IrscaleWarning` says so, naming the run ``run_1``.

Aggregate: the mean over topics, as ir_measures aggregates. A topic without a value (one
left out by ``empty_topics="skip"``, or where the measure is undefined, e.g. Twist with
N < 2 RB) gets NaN per query and is left out of the mean, so the aggregate equals
``transform(...).groupby("run")["scaled"].mean()``.

Store: a path or an open :class:`~irscale.store.reader.Store` holding the tables (default:
the default store every entry point uses, :func:`~irscale.store.location.default_store`);
tables missing from it are built when that is estimated to take a minute at most, as
``transform`` and ``compare`` build them (``build_missing=False``: never); a measure whose
scale is not to be had gets NaN values, with a warning naming the ``irscale build``
command that makes it. The name (``repr``, the column ``pt.Experiment`` shows) does not
name the store: an exact scale is the same in every store. Bad parameters raise
:class:`~irscale.errors.IrscaleError` when the measure is made. ir_measures is not a
dependency of irscale: without it this module still imports, and ``Scaled(...)`` raises
an IrscaleError saying to ``pip install ir_measures``.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, MeasureError
from irscale.scales.measures.aliases import from_ir_measures
from irscale.scales.measures.measure import Measure as IrscaleMeasure
from irscale.scales.measures.user_names import parse_user_measures
from irscale.scales.runs.conventions import EMPTY_TOPICS, RB_SCALES, Conventions
from irscale.scales.runs.evaluator import Evaluator
from irscale.scales.runs.inputs import qrels_of
from irscale.scales.runs.qrels import Qrels
from irscale.store.reader import Store

try:
    import ir_measures
    from ir_measures.measures.base import Agg, ParamInfo
    from ir_measures.measures.base import Measure as IrMeasure
except ImportError:  # ir_measures is optional: Scaled(...) then says how to install it
    from types import SimpleNamespace as ParamInfo
    ir_measures = None
    Agg = IrMeasure = object

#: What ``scale`` takes.
SCALES = ("unq", "midrank")

_NOT_GIVEN: Any = object()


class NanMeanAgg(Agg):
    """The mean of the values that are not NaN (NaN when there is none)."""

    def __init__(self) -> None:
        self.sum = 0.0
        self.count = 0

    def add(self, value: float) -> None:
        if not math.isnan(value):
            self.sum += value
            self.count += 1

    def result(self) -> float:
        return self.sum / self.count if self.count else math.nan


def _ir_measures_case(name: str) -> str:
    """``name`` with its measure's name in ir_measures' spelling when only the case differs
    and one registered name matches (``p(rel=2)@5``: ``P(rel=2)@5``), as irscale reads names
    whatever their case."""
    head = re.match(r"\s*([A-Za-z_]+)(?=[(@])", name)      # ir_measures' syntax: a name, then (...) or @k
    registry = ir_measures.measures.registry
    if head is None or head.group(1) in registry:
        return name
    same = [n for n in registry if n.casefold() == head.group(1).casefold()]
    if not same or any(registry[n] is not registry[same[0]] for n in same):      # none, or two measures
        return name
    return name[:head.start(1)] + same[0] + name[head.end(1):]


def _wrapped(measure: Any, cutoff: Any) -> Any:
    """The wrapped measure as an ir_measures measure object when it is one or names one
    (a name ir_measures does not parse is kept for :func:`from_ir_measures` to judge)."""
    if isinstance(measure, str):
        try:
            parsed = ir_measures.parse_measure(_ir_measures_case(measure))
            if not set(parsed.params) <= set(parsed.SUPPORTED_PARAMS):
                raise ValueError("parameters ir_measures does not have")      # irscale's nDCG(b=2)@10
            measure = parsed
        except (ValueError, NameError, SyntaxError, TypeError, AssertionError, KeyError, AttributeError):
            if cutoff is not _NOT_GIVEN:
                raise MeasureError(f"Scaled: cannot apply @{cutoff} to {measure!r}, which ir_measures does not "
                                   f"parse") from None
            return measure          # trec_eval's name or irscale's own: read by parse_user_measures
    elif not isinstance(measure, IrMeasure):
        raise MeasureError(f"Scaled wraps an ir_measures measure (ir_measures.AP@10) or its name ('AP@10'), "
                           f"got {measure!r}")
    if cutoff is not _NOT_GIVEN:
        measure = measure(cutoff=cutoff)
    return measure


class Scaled(IrMeasure):
    """An ir_measures measure whose per-query value is irscale's interval-scaled value of
    the wrapped measure (see the module docstring).

    Parameters
    ----------
    measure : ir_measures measure or str
        ``ir_measures.AP@10``, ``"nDCG@10"``, ...; ``Scaled(ir_measures.AP, ...)@10`` sets
        the cutoff of the wrapped measure.
    store : str, path or Store, optional
        The table store (default: the default store).
    scale : {"unq", "midrank"}
    rb_scale : {"feasible", "common"}
    empty_topics : {"zero", "skip"}
        Topics without relevant documents: scored 0 (ir_measures' convention, default)
        or left out (NaN per query, not in the mean).
    build_missing : bool
        Build tables missing from the store when estimated to take a minute at most
        (default); False: never build.
    bounded : bool, optional
        RBP, DCG and nDCG past N = 40, where no exact scale exists, by bounded scales (the
        midpoint of a certified interval; docs/bounded.md): None (default) where they fit
        the build limit (:class:`~irscale.scales.runs.evaluator.Evaluator`), True always,
        False never; ``error``: the widest interval (default 1e-4; implies True).
    """

    __name__ = "Scaled"
    NAME = "Scaled"
    PRETTY_NAME = "irscale interval-scaled measure"
    SHORT_DESC = "The wrapped measure's value mapped to its rank among the measure's distinct values, in [0, 1]."
    SUPPORTED_PARAMS = {
        "measure": ParamInfo(required=True, desc="the wrapped ir_measures measure (object or name)"),
        "store": ParamInfo(default=None, desc="irscale table store (path or open Store; default: the default store)"),
        "scale": ParamInfo(dtype=str, choices=SCALES, default="unq", desc="unq ranks or normalised mid-ranks"),
        "rb_scale": ParamInfo(dtype=str, choices=RB_SCALES, default="feasible",
                              desc="scale of recall-base dependent measures"),
        "empty_topics": ParamInfo(dtype=str, choices=EMPTY_TOPICS, default="zero",
                                  desc="topics without relevant documents: scored 0 or left out"),
        "build_missing": ParamInfo(dtype=bool, default=True,
                                   desc="build missing tables (estimated within a minute); False: never build"),
        "bounded": ParamInfo(dtype=bool, default=None,
                             desc="bounded scales past N = 40 (midpoints of intervals): None where they fit the "
                                  "build limit, True always, False never"),
        "error": ParamInfo(dtype=float, default=None, desc="widest scaled interval of a bounded scale"),
    }
    DEFAULT = math.nan      # a topic without a value (see the module docstring)

    def __init__(self, measure: Any = _NOT_GIVEN, /, **params: Any) -> None:
        if ir_measures is None:
            raise IrscaleError("irscale.Scaled is a measure of ir_measures, which is not installed: "
                               "pip install ir_measures")
        if measure is _NOT_GIVEN:
            measure = params.pop("measure", _NOT_GIVEN)
        elif "measure" in params:
            raise IrscaleError("Scaled: the measure is given twice")
        if measure is _NOT_GIVEN:
            raise IrscaleError("Scaled needs the measure to scale: Scaled(ir_measures.AP@10)")
        cutoff = params.pop("cutoff", _NOT_GIVEN)
        unknown = sorted(set(params) - set(self.SUPPORTED_PARAMS))
        if unknown:
            raise IrscaleError(f"Scaled: unknown parameter(s) {', '.join(unknown)}; it takes "
                               f"{', '.join(self.SUPPORTED_PARAMS)}")
        store = params.get("store")
        if isinstance(store, os.PathLike):
            params["store"] = store = os.fspath(store)
        if store is not None and not isinstance(store, (str, Store)):
            raise IrscaleError(f"Scaled: store must be a path or an open Store, got {store!r}")
        for name in ("scale", "rb_scale", "empty_topics"):
            info = self.SUPPORTED_PARAMS[name]
            if name in params and params[name] not in info.choices:
                raise IrscaleError(f"Scaled: {name} must be one of {', '.join(info.choices)}, got {params[name]!r}")
        for name in ("build_missing", "bounded"):
            unset = name == "bounded" and params.get(name, False) is None           # bounded: None is auto
            if name in params and not isinstance(params[name], bool) and not unset:
                raise IrscaleError(f"Scaled: {name} must be True or False, got {params[name]!r}")
        error = params.get("error")
        if error is not None and (isinstance(error, bool) or not isinstance(error, (int, float)) or not 0 < error < 1):
            raise IrscaleError(f"Scaled: error must be a number between 0 and 1, got {error!r}")
        super().__init__(measure=_wrapped(measure, cutoff), **params)
        self._qrels: tuple[Any, Qrels, int, dict] | None = None
        self._evaluators: dict[tuple, Evaluator] = {}

    # -- identity ------------------------------------------------------------------------
    def __repr__(self) -> str:
        """``Scaled(AP@10)`` plus the parameters not at their defaults that change values
        (not the store: an exact scale is the same in every store, so result columns, as
        ``pt.Experiment`` names them, do not depend on where the tables are)."""
        parts = [str(self.params["measure"])]
        parts += [f"{k}={self.params[k]!r}" for k in ("scale", "rb_scale", "empty_topics", "bounded", "error")
                  if k in self.params and self.params[k] != self.SUPPORTED_PARAMS[k].default]
        return f"Scaled({','.join(parts)})"

    def aggregator(self) -> NanMeanAgg:
        """Mean over the topics with a value (NaN ones left out)."""
        return NanMeanAgg()

    # -- evaluation ----------------------------------------------------------------------
    def irscale_measure(self, top_level: int | None = None, depth: int | None = None) -> IrscaleMeasure:
        """The irscale measure of the wrapped one, for qrels whose highest level is
        ``top_level`` and runs of rankings of at most ``depth`` documents (for wrapped
        measures without a cutoff)."""
        return self._reading(top_level, depth)[0]

    def _scaled(self, measure: IrscaleMeasure) -> bool:
        """Whether ``measure`` has a scale here: an exact one, or a bounded one unless refused."""
        refused = self["bounded"] is False and self["error"] is None
        return measure.has_scales or measure.bounded_only and not refused

    def _reading(self, top_level: int | None, depth: int | None) -> tuple[IrscaleMeasure, int | None]:
        """(irscale measure, relevance threshold for transform's ``rel_level``): ir_measures'
        ``rel`` of a binary measure (``AP(rel=2)@10``) is trec_eval's ``-l``, which
        transform applies to the qrels."""
        wrapped = self.params["measure"]
        if isinstance(wrapped, str):        # not ir_measures' syntax: trec_eval's name or irscale's own
            [measure] = parse_user_measures([wrapped], top_level=top_level, depth=depth)
            if not self._scaled(measure):
                raise MeasureError(f"{self}: {measure} has no scale ({measure.scales_reason()})")
            return measure, None
        try:
            measure, rel_level = from_ir_measures(wrapped, top_level=top_level, depth=depth), None
        except MeasureError:
            rel = wrapped.params.get("rel") if isinstance(wrapped, IrMeasure) else None
            if not (isinstance(rel, int) and not isinstance(rel, bool) and rel > 1):
                raise
            measure, rel_level = from_ir_measures(wrapped(rel=1), top_level=top_level, depth=depth), rel
            if measure.levels != 2:
                raise
        if not self._scaled(measure):
            raise MeasureError(f"{self}: {measure} has no scale ({measure.scales_reason()})")
        return measure, rel_level

    def _qrels_of(self, qrels: pd.DataFrame) -> tuple[Qrels, int, dict]:
        """(Qrels, highest level, str id -> the id as ir_measures has it), computed once
        per qrels frame (an evaluator passes the same one for every run)."""
        if self._qrels is None or self._qrels[0] is not qrels:
            self._evaluators = {}
            cols = [c for c in ("query_id", "doc_id", "relevance") if c in qrels.columns]
            q = qrels_of(qrels[cols])
            top = max((max(levels.values()) for levels in q.judgments.values() if levels), default=0)
            ids = {str(x): x for x in pd.unique(qrels["query_id"])} if "query_id" in qrels.columns else {}
            self._qrels = (qrels, q, top, ids)
        return self._qrels[1:]

    def _evaluator(self, q: Qrels, measure: IrscaleMeasure, rel_level: int | None) -> Evaluator:
        """The evaluation path of one reading of the wrapped measure (made once per qrels)."""
        key = (id(q), measure, rel_level)
        if key not in self._evaluators:
            conventions = Conventions(rel_level=rel_level, empty_topics=self["empty_topics"],
                                      rb_scale=self["rb_scale"])
            self._evaluators[key] = Evaluator(
                q, [measure], conventions, self.params.get("store"), build=self["build_missing"],
                bounded=self["bounded"], error=self["error"], midranks=self.params.get("scale", "unq") == "midrank")
        return self._evaluators[key]

    def runtime_impl(self, qrels: pd.DataFrame, run: pd.DataFrame) -> Iterator[Any]:
        """Per-query values (``ir_measures.Metric``) of one run, called by ir_measures'
        runtime provider with the qrels and the run as DataFrames."""
        q, top, ids = self._qrels_of(qrels)
        depth = int(run.groupby("query_id").size().max()) if len(run) else 1
        measure, rel_level = self._reading(max(top, 1), depth)
        cols = [c for c in ("query_id", "doc_id", "score") if c in run.columns]
        midrank = self.params.get("scale", "unq") == "midrank"
        scores = self._evaluator(q, measure, rel_level).evaluate(run[cols])
        if midrank:
            n_runs = scores["n_runs"].to_numpy(dtype=np.float64, na_value=np.nan)
            mid = scores["midrank"].to_numpy(dtype=np.float64)
            values = np.where(n_runs > 1, (mid - 1) / np.maximum(n_runs - 1, 1), np.where(n_runs == 1, 0.0, np.nan))
        else:
            values = scores["scaled"].to_numpy(dtype=np.float64)
        for topic, value in zip(scores["topic"].tolist(), values.tolist()):
            yield ir_measures.Metric(ids.get(topic, topic), self, value)


__all__ = ["SCALES", "NanMeanAgg", "Scaled"]
