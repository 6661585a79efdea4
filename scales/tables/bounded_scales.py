"""The bounded scales of a transform (:class:`BoundedScales`): which measures and count
vectors a bounded scale stands in for, their scales made once, and the refusals said once.

A measure gets bounded scales where it has no exact one (RBP, DCG, nDCG, nDCG_trec past
N = 40: :attr:`~irscale.scales.measures.measure.Measure.bounded_only`), and for the count
vectors whose exact scale is not affordable (:meth:`BoundedScales.stand_in`: graded nDCG at
N = 30 over 4 levels, where a table holds 4^30 runs and no oracle counts the vectors that
bound several grades); every other scale is the exact one. See docs/bounded.md.
"""
from __future__ import annotations

from irscale.enumerate.progress import progress_bar
from irscale.errors import RecallBaseError, warn
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.bounded import BoundedTable, bounded_table
from irscale.scales.tables.bounded_grid import error_target
from irscale.scales.tables.bounded_problem import Problem, bounded_problem, bounds_several
from irscale.scales.tables.scale import Scale

#: A bounded scale whose K is bracketed and whose width is over this many times the error asked
#: gives its topics no scale (their midpoints would say next to nothing), said as a refusal.
TOO_WIDE = 10


def bracket_share(problem: Problem) -> float:
    """(K+ - K-) / (K+ - 1): a lower bound of a bounded scale's width in scaled units whatever
    its grid (the largest value's interval reaches from (K- - 1)/(K+ - 1) to 1)."""
    k_lo = problem.k if problem.k_lo is None else problem.k_lo
    return (problem.k - k_lo) / max(problem.k - 1, 1)


class BoundedScales:
    """The scales of a transform that opts in to bounded scales: the bounded scale (of at
    most ``error`` in scaled units) of every measure that has bounded scales and no exact
    one (RBP, DCG, nDCG, nDCG_trec past N = 40), and of the count vectors it stands in for
    (:meth:`stand_in`), one per recall base, computed once; every other scale from
    ``exact`` (a store, or the closed forms)."""

    def __init__(self, exact: object, error: float | None = None):
        self.exact, self.error, self.path = exact, error, getattr(exact, "path", None)
        self._tables: dict = {}
        self.refused: dict = {}                   # (measure, rb) -> why it has no bounded scale
        self.errors: dict = {}                    # measure -> its own error (a plan's), else ``error``
        self.stand_ins: dict = {}                 # measure -> the count vectors (table_rb) it stands in for

    @staticmethod
    def covers(measure: Measure) -> bool:
        """Whether ``measure`` is scaled by a bounded scale here."""
        return measure.bounded_only

    def stand_in(self, measure: Measure, rbs: list[RecallBase]) -> None:
        """Scale ``measure`` by bounded scales for the recall bases ``rbs`` although it has
        exact scales (theirs are not affordable here: tables too large, no oracle)."""
        self.stand_ins.setdefault(measure, set()).update(     # None: the table serving every recall base
            None if rb is None else measure.table_rb(self.key_rb(measure, rb)) for rb in rbs)

    def serves(self, measure: Measure, rb: RecallBase) -> bool:
        """Whether the scale of ``measure`` for ``rb`` is a bounded one here."""
        vectors = self.stand_ins.get(measure)
        return self.covers(measure) or (vectors is not None and measure.table_rb(self.key_rb(measure, rb)) in vectors)

    def prepare(self, needs: list[tuple[Measure, RecallBase]], progress: bool = False) -> None:
        """Compute the bounded scales of ``needs`` (measure, recall base) now, with a
        progress bar (each takes up to seconds); warn once per measure of the recall bases
        it has none for (their topics stay unscaled) and of those wider than asked."""
        todo = list(dict.fromkeys((m, self.key_rb(m, rb)) for m, rb in needs if self.serves(m, rb)))
        bar = progress_bar(total=len(todo), desc="bounded scales", unit="scale", disable=not progress)
        with bar:
            for m, rb in todo:
                bar.set_postfix_str(f"{m}" + ("" if rb is None else f" rb={rb}"), refresh=False)
                self.scale(m, rb)
                bar.update()
        wide: dict = {}                           # scales wider than asked: K bracketed (several bound grades)
        for m, rb in todo:
            got = None if (m, rb) in self.refused else self.scale(m, rb)
            if got is not None and not got.k_exact and got.error_bound > error_target(self.errors.get(m, self.error),
                                                                                         got.k):
                wide.setdefault(m, []).append((got.error_bound, rb))
        for m, scales in wide.items():
            width, rb = max(scales)
            warn(f"{m}: {len(scales)} bounded scale(s) wider than asked, up to {width:.2g} in scaled units (e.g. "
                 f"the per-grade counts {rb}): their counts bound several grades, whose count of distinct values "
                 f"is only bracketed (docs/bounded.md); their scaled_lo..scaled_hi hold the exact scaled values")
        by_measure: dict = {}
        for (m, rb), why in self.refused.items():
            by_measure.setdefault(m, []).append((rb, why))
        for m, refused in by_measure.items():
            what = f"({refused[0][1]})"
            warn(f"{m}: no bounded scale for the topics {what}: {len(refused)} count vector(s), e.g. "
                          f"{refused[0][0]}; the rank and scaled values of those topics stay empty")

    @staticmethod
    def key_rb(measure: Measure, rb: RecallBase) -> RecallBase:
        """The recall base naming the scale: every rb >= N of a binary measure is one scale
        (every run is feasible)."""
        rb = measure.check_rb(rb)
        return measure.n if isinstance(rb, int) and rb > measure.n else rb

    def scale(self, measure: Measure, rb: RecallBase = None) -> Scale | None:
        """The scale of ``measure`` for ``rb``: bounded where :meth:`serves` says so (None for
        a recall base it has none for, or whose scale is over :data:`TOO_WIDE` times wider than
        asked, see :meth:`prepare`), else ``exact``'s."""
        if not self.serves(measure, rb):
            return self.exact.scale(measure, rb)
        rb = self.key_rb(measure, rb)
        if (measure, rb) in self.refused:
            return None
        error = self.errors.get(measure, self.error)
        try:
            problem = bounded_problem(measure, rb) if bounds_several(measure, rb) else None
            share = 0.0 if problem is None else bracket_share(problem)     # the width's floor, before any grid
            too_wide = problem is not None and share > TOO_WIDE * error_target(error, problem.k)
            got = None if too_wide else self.table(measure, rb).scale(rb)
        except RecallBaseError as e:
            self.refused[(measure, rb)] = str(e)
            return None
        width = share if got is None else got.error_bound
        if got is None or (not got.k_exact and width > TOO_WIDE * error_target(error, got.k)):
            self.refused[(measure, rb)] = (            # a midpoint that would say next to nothing
                f"their counts bound several grades, whose K is only bracketed: scales {width:.2g} wide in scaled "
                f"units or more, over {TOO_WIDE} times the width asked (docs/bounded.md)")
            return None
        return got

    def set_error(self, measure: Measure, error: float) -> None:
        """Scale ``measure`` to ``error`` (a plan's choice; its grids counted so far kept)."""
        self.errors[measure] = error
        for key, table in self._tables.items():
            if key[0] == measure:
                self._tables[key] = table.with_settings(error=error)

    def table(self, measure: Measure, rb: RecallBase = None) -> BoundedTable:
        """The bounded table of ``measure`` serving ``rb`` (a store's grids when it has them),
        made once: its scales are computed when asked for."""
        key = (measure, measure.table_rb(self.key_rb(measure, rb)))
        if key not in self._tables:
            find = getattr(self.exact, "bounded_table", None)           # a store may hold its grids
            stored = find(measure, key[1]) if find is not None else None
            error = self.errors.get(measure, self.error)
            self._tables[key] = (bounded_table(measure, key[1], error=error) if stored is None
                                 else stored.with_settings(error=error))
        return self._tables[key]


__all__ = ["TOO_WIDE", "BoundedScales", "bracket_share"]
