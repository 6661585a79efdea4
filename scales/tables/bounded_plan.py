"""Bounded scales planned before they are computed: what each costs, and the widest
scaled interval that fits a time limit.

A bounded scale refines grids until its intervals are narrow enough
(:class:`~irscale.scales.tables.bounded.BoundedScale`); the last grid is predicted well
from an earlier one (widths shrink as 1 / cells), so its cost can be told before it is
counted. A plan counts one small grid per recall base (the *probe*, :data:`PROBE_CELLS`
cells: tens of milliseconds at N = 100, under a second at N = 1000), keeps it (the scale
is refined from it, nothing is counted twice) and predicts from it the grid of each error
in :data:`ERRORS`: its memory exactly (:func:`~irscale.scales.tables.bounded_grid.grid_bytes`),
its time as the probe's scaled by the cells, times :data:`MARGIN` (measured by
``scripts/bench_bounded_plan.py``, 2 cores, load 1.5-2.6: the time taken is 0.4-0.6 of the
prediction, N = 50 and 100: a plan errs towards leaving a scale out). The
narrowest error whose scales fit the limit together is chosen; probing stops once the
probes alone take a quarter of the limit.
"""
from __future__ import annotations

import dataclasses
import math
import time

from irscale.errors import RecallBaseError
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.bounded import bounded_table, error_target, predicted_scale
from irscale.scales.tables.bounded_grid import FIRST_CELLS, grid_bytes
from irscale.scales.tables.bounded_problem import DEFAULT_ERROR, MAX_BYTES, bounded_problem
from irscale.scales.tables.bounded_scales import TOO_WIDE, BoundedScales, bracket_share
from irscale.scales.tables.units import duration

#: Cells of the probe grid of a plan (8 first grids).
PROBE_CELLS = 8 * FIRST_CELLS
#: The errors a plan may choose (scaled units), narrowest first.
ERRORS = (DEFAULT_ERROR, 1e-3, 1e-2)
#: Margin on the predicted time of a grid.
MARGIN = 2.0


@dataclasses.dataclass
class BoundedPlan:
    """The bounded scales of one measure: the ``error`` chosen (None: none fits, ``reason``
    says why), their predicted ``seconds`` and largest grid (``bytes``), and what the
    narrowest error (:data:`DEFAULT_ERROR`) would take when it was not chosen."""

    measure: Measure
    error: float | None
    seconds: float
    bytes: int
    narrowest_seconds: float
    reason: str | None = None

    def wider(self, label: str) -> str | None:
        """The line that says a wider error than the narrowest was chosen (None: it was not)."""
        first = ERRORS[0]
        if self.error is None or self.error <= first:
            return None
        return (f"{label}: bounded scale within {self.error:g} in scaled units (within {first:g} would take about "
                f"{duration(self.narrowest_seconds)}: --error {first:g})")


def _probe(tables: BoundedScales, measure: Measure, rb: RecallBase, max_bytes: int
           ) -> tuple[float, list[tuple[float, int]]] | None:
    """Probe the scale of (``measure``, ``rb``): the probe's seconds and, per error of
    :data:`ERRORS`, the predicted (seconds, bytes) of its last grid; None when the probe
    itself does not fit in ``max_bytes``. The probe grid is kept in the table, which the
    scale is then refined from."""
    table = tables.table(measure, rb)
    key = table.grid_key(rb)
    t0 = time.perf_counter()
    if key in table.stored:                                  # a store's grid: the probe
        scale_of = table.with_settings(error=1.0).scale(rb)
    else:
        problem = bounded_problem(measure, measure.check_rb(rb))
        if bracket_share(problem) > TOO_WIDE * ERRORS[-1]:      # refused whatever its grid: not probed
            raise RecallBaseError(f"{measure}: K's bracket alone is wider than any error planned")
        if grid_bytes(problem, max(1, math.ceil(PROBE_CELLS / problem.top))) > max_bytes:
            return None
        scale_of = bounded_table(measure, table.table_rb, cells=PROBE_CELLS).scale(rb)
        table.stored[key] = scale_of.grid
    seconds = max(time.perf_counter() - t0, 1e-3)
    costs = []
    for error in ERRORS:
        target = max(error_target(error, scale_of.k), scale_of.bracket_floor)    # no grid narrows K's bracket
        if scale_of.error_bound <= target:
            costs.append((0.0, 0))
            continue
        cells = predicted_scale(scale_of.grid.scale, scale_of.error_bound, target)
        costs.append((MARGIN * scale_of.grid.seconds * cells / scale_of.grid.scale,
                      grid_bytes(scale_of.problem, cells)))
    return seconds, costs


def choose_error(costs: list[tuple[float, float, int]], limit: float, max_bytes: int = MAX_BYTES
                 ) -> tuple[float | None, str | None]:
    """The narrowest error of ``costs`` ((error, seconds, bytes), narrowest first) whose
    seconds fit ``limit`` and bytes ``max_bytes``, and None; or None and why none does."""
    for error, seconds, need in costs:
        if need <= max_bytes and seconds <= limit:
            return error, None
    error, seconds, need = costs[-1]
    if need > max_bytes:
        return None, f"its grids would need {need / 2 ** 30:.1f} GiB even to {error:g}"
    return None, f"its bounded scales would take about {seconds:.0f} s even to {error:g}"


def plan_bounded(tables: BoundedScales, needs: dict[Measure, list[RecallBase]], limit: float | None,
                 max_bytes: int = MAX_BYTES) -> dict[Measure, BoundedPlan]:
    """Plan the bounded scales ``needs`` (measure -> recall bases) within ``limit`` seconds
    together (None: no limit, the narrowest error): per measure, the narrowest error of
    :data:`ERRORS` that fits what is left of the limit (measures planned in the order
    given), its predicted cost, or no error and why; ``tables`` then scales each to its error."""
    plans: dict[Measure, BoundedPlan] = {}
    left = math.inf if limit is None else float(limit)
    probing = 0.0
    for m, rbs in needs.items():
        keys = list(dict.fromkeys(tables.key_rb(m, rb) for rb in rbs))
        totals = [[0.0, 0] for _ in ERRORS]
        error, reason = None, None
        for rb in keys:
            if limit is not None and probing > limit / 4:
                reason = f"estimating its {len(keys)} bounded scales alone takes over {limit / 4:.0f} s"
                break
            try:
                got = _probe(tables, m, rb, max_bytes)
            except RecallBaseError:                          # a recall base without one: said when scaled
                continue
            if got is None:
                reason = "even its coarsest grid does not fit in memory"
                break
            seconds, costs = got
            probing += seconds
            for total, (s, b) in zip(totals, costs):
                total[0] += s
                total[1] = max(total[1], b)
        if reason is None:
            error, reason = choose_error([(e, t, b) for e, (t, b) in zip(ERRORS, totals)], left, max_bytes)
        seconds, bytes_ = next(((t, b) for e, (t, b) in zip(ERRORS, totals) if e == error), totals[-1])
        plans[m] = BoundedPlan(m, error, seconds, bytes_, totals[0][0], reason)
        if error is not None:
            tables.set_error(m, error)
            left -= seconds
    return plans


__all__ = ["ERRORS", "BoundedPlan", "choose_error", "plan_bounded"]
