"""Building tables: every measure's tables through its layout, and :func:`scale`, the
in-memory scale of one measure.

A request names the table recall bases wanted per measure (:func:`table_requests`):
measures with one table for every recall base get that table; measures with a table per
recall-base vector (graded RB-dependent measures, per-topic measures) get one table per
vector asked for (default: the common scale's vector, where there is one).
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

from irscale.enumerate.fanout import Fanout
from irscale.scales.measures.keys import METHODS
from irscale.scales.measures.measure import Measure, RecallBase, RecallBaseRequest
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.layouts import layout_of
from irscale.scales.tables.scale import Scale, Table


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    """How tables are built: where the work runs (``fanout``), the enumeration method of
    key tables (``"auto"``, ``"split"``, ``"generic"``: every run scored, the reference),
    progress bars, a ``workdir`` for resumable checkpoints (one subfolder per measure),
    the split enumerator's work-unit size (``bucket_items`` pairs per bucket), the generic
    enumerator's ``chunk_size``, and whether split tables are ``concatenate``-d in memory
    (else kept as parts that the store writes slice by slice)."""

    fanout: Fanout = Fanout()
    method: str = "auto"
    progress: bool = False
    workdir: Path | None = None
    bucket_items: int | None = None
    chunk_size: int | None = None
    concatenate: bool = True

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")


def table_requests(measures: Iterable[Measure], rbs: RecallBaseRequest | dict[str, RecallBaseRequest] | None = None
                   ) -> dict[Measure, list]:
    """Per measure, the table recall bases meant by ``rbs``: ``"all"`` or None, a list of
    recall bases (or one), or a dict from measure name to such a request
    (:meth:`~irscale.scales.measures.measure.Measure.table_rbs`)."""
    out = {}
    for m in measures:
        given = rbs.get(str(m)) if isinstance(rbs, dict) else rbs
        out[m] = m.table_rbs("all" if given is None else given)
    return out


def build_tables(measures: Iterable[str | Measure], rbs: RecallBaseRequest | dict[str, RecallBaseRequest] | None = None,
                 *, options: BuildOptions | None = None,
                 rb_counts: RecallBaseRequest | dict[str, RecallBaseRequest] | None = None,
                 **option_values: Fanout | str | bool | int | Path | None) -> Iterator[Table]:
    """Build and yield the tables of ``measures`` (names or :class:`Measure` objects) for the
    recall bases ``rbs`` (see :func:`table_requests`; ``rb_counts`` is the same, kept for
    callers written before). ``options`` (or its fields as keywords, with ``n_jobs`` and
    ``backend`` for the fan-out) say how (:class:`BuildOptions`). Measures are grouped by
    layout; within a layout, tables come in the layout's order."""
    if options is None:
        fanout = Fanout(option_values.pop("n_jobs", 1), option_values.pop("backend", None))
        options = BuildOptions(fanout=fanout, **option_values)
    elif option_values:
        raise TypeError("give options or option keywords, not both")
    ms = list(dict.fromkeys(parse_measure(m) for m in measures))
    requests = table_requests(ms, rb_counts if rbs is None else rbs)
    by_layout: dict = {}
    for m in ms:
        by_layout.setdefault(layout_of(m), []).append(m)
    for layout, group in by_layout.items():
        yield from layout.build(group, requests, options)


@functools.lru_cache(maxsize=32)
def _table(measure: Measure, table_rb: tuple | None) -> Table:
    [t] = build_tables([measure], {str(measure): [table_rb]})
    return t


def scale(measure: str | Measure, rb: RecallBase = None) -> Scale:
    """Build the unq interval scale of ``measure`` in memory.

    Parameters
    ----------
    measure : str or Measure
        Measure name, e.g. ``"AP@10"``, ``"RBP(p=0.8)@20"``, ``"nDCG(b=2)@10"``.
    rb : int or tuple of int, optional
        Recall base (number of relevant documents of the topic). Required for
        RB-dependent measures (R, F1, AP, nDCG, nDCG_trec, gR, ...), rejected for the
        others. For rb > N the order of rb = N is used with values for the actual rb.
        Graded measures take the per-grade counts (c_1..c_G) of the topic's judged
        documents.

    Returns
    -------
    Scale
        ``scale.values``, ``scale.counts``, ``scale.rank(values)``,
        ``scale.rank_runs(runs)``. Tables are cached per measure and recall base.
    """
    m = parse_measure(measure)
    rb = m.check_rb(rb)
    return _table(m, m.table_rb(rb)).scale(rb)
