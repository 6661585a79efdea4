"""Building tables: every measure's tables through its layout, and :func:`scale`, the
in-memory scale of one measure.

A request names the table recall bases wanted per measure (:func:`table_requests`):
measures with one table for every recall base get that table; measures with a table per
recall-base vector (graded RB-dependent measures, per-topic measures) get one table per
vector asked for (default: the common scale's vector, where there is one).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from irscale.enumerate.fanout import Fanout
from irscale.enumerate.memory import available_memory
from irscale.errors import BuildTooLargeError, warn
from irscale.scales.measures.measure import Measure, RecallBase, RecallBaseRequest
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.bounded import bounded_scale
from irscale.scales.tables.build_options import BuildOptions
from irscale.scales.tables.closed import closed_scale
from irscale.scales.tables.estimate import QUIET_RUNS, building_layout, estimate, size
from irscale.scales.tables.layouts import layout_of
from irscale.scales.tables.scale import Scale, Table

#: In-memory builds estimated to take longer than this (seconds) show progress bars.
SLOW_SECONDS = 5.0


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
    for m in ms:
        m.check_scales()       # tables exist up to N = MAX_N (raw scores beyond)
    requests = table_requests(ms, rb_counts if rbs is None else rbs)
    by_layout: dict = {}
    for m in ms:
        by_layout.setdefault(layout_of(m, options.layout, options.method), []).append(m)
    for layout, group in by_layout.items():
        yield from layout.build(group, requests, options)


#: Tables built in memory by :func:`scale`, most recent last (at most :data:`CACHED_TABLES`).
_TABLES: dict[tuple[Measure, tuple | None, str], Table] = {}
CACHED_TABLES = 32


def _table(measure: Measure, table_rb: tuple | None, layout: str = "auto") -> Table:
    """The table of ``measure`` for ``table_rb``, built in memory once (cached). Builds of
    millions of runs are estimated first: refused when they cannot fit in the memory
    available, announced (a warning with the estimate) and shown with progress bars when
    they take more than a few seconds."""
    key = (measure, table_rb, layout)
    if key in _TABLES:
        return _TABLES[key]
    progress = False
    builds = building_layout(measure, table_rb, layout)       # vectors no oracle serves: tables
    chosen = layout_of(measure, builds)
    runs, limit = measure.table_runs(table_rb), chosen.max_runs
    enumerates = bool(chosen.seconds_per_run or chosen.seconds_per_entry)     # oracles build nothing
    if enumerates and runs >= QUIET_RUNS and (limit is None or runs <= limit):    # beyond its limit it refuses
        guess = estimate(measure, table_rb, layout=builds)
        free = available_memory()
        if free is not None and guess.memory > free:
            raise BuildTooLargeError(
                f"{guess.label}: {guess.runs:.3g} runs; building it in memory needs about {size(guess.memory)}, "
                f"{size(free)} are available. Build it into a store once (irscale build --measures "
                f"\"{measure}\" --out tables, or irscale.build_store) and use open_store(...).scale(...)")
        if guess.seconds > SLOW_SECONDS:
            progress = True
            warn(f"building in memory: {guess.describe(in_memory=True)}; irscale build stores it once "
                          f"for every later use")
    [t] = build_tables([measure], {str(measure): [table_rb]}, progress=progress, layout=layout)
    if len(_TABLES) >= CACHED_TABLES:
        del _TABLES[next(iter(_TABLES))]
    _TABLES[key] = t
    return t


def scale(measure: str | Measure, rb: RecallBase = None, layout: str = "auto") -> Scale:
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
    layout : {"auto", "table", "oracle"}
        ``"auto"``: the measure's default, a rank oracle for RBP (p > 1/2), DCG and nDCG
        (:mod:`irscale.scales.tables.oracles`: nothing enumerated, N up to 40), else a
        table; ``"table"`` builds the table (what spacing statistics of big scales read);
        ``"oracle"`` the rank oracle; ``"closed"`` the closed form of P, R, F1, RR and
        Rprec (:mod:`irscale.scales.tables.closed`: exact at any N, their default past
        the tables and oracles, N > 40); ``"bounded"`` (opt-in, never a default) the
        certified rank intervals of RBP (rational p), DCG, nDCG and nDCG_trec at any N
        (:mod:`irscale.scales.tables.bounded`: ranks are midpoints, ``rank_bounds`` and
        ``scaled_bounds`` the intervals, ``error_bound`` their width; other error targets
        with :func:`irscale.scales.tables.bounded.bounded_scale`).

    Returns
    -------
    Scale
        ``scale.values``, ``scale.counts``, ``scale.rank(values)``,
        ``scale.rank_runs(runs)``. Tables are cached per measure and recall base.

    Tables of millions of runs are estimated first (:mod:`irscale.scales.tables.estimate`):
    a build that cannot fit in the memory available raises
    :class:`~irscale.errors.BuildTooLargeError` (build it into a store instead), one that
    takes more than a few seconds warns with its estimate and shows progress bars.
    """
    m = parse_measure(measure)
    if layout == "bounded":                # opt-in: certified intervals where no exact scale exists
        return bounded_scale(m, rb)
    m.check_scales()
    rb = m.check_rb(rb)
    if layout == "closed" or (layout == "auto" and m.layout == "closed"):
        return closed_scale(m, rb)
    return _table(m, m.table_rb(rb), layout).scale(rb)
