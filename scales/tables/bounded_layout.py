"""Bounded scales in a store: the layout ``bounded``.

A bounded scale (:mod:`irscale.scales.tables.bounded`) is computed from its measure and
recall base in seconds; what it costs is its grid, the cumulative masses bounding its ranks
from above and below. A stored bounded table keeps the grids of the recall bases it was built for (a
binary measure's table holds one per recall base asked for, every rb >= N sharing one; a
measure with per-grade counts has a table per count vector, as its exact tables do), with
the certificate of each: datasets ``down_<i>`` and ``up_<i>`` (float64, non-decreasing),
and the attribute ``grids``, a JSON list whose item i says of grid i

    rb          the recall base (null, an integer, or a list of per-grade counts)
    scale       cells per raw unit
    weight      the exact mass of one tuple (a fraction "p/q")
    gamma       the relative float error bound of the masses (a fraction "p/q")
    eta         their absolute error bound (float, as float.hex)
    error_bound the widest scaled interval (the certificate users read)
    cells       cells over the range of raw values
    seconds     how long the grid took
    counted     "states" where the count vector's dimensions were counted over antichain
                states (absent: counts, with kappa and mu's brackets); a grid answers with
                the problem it was counted for where it reaches the width asked, else the
                vector is counted again

and the attribute ``error`` (the error asked for, or null). Everything else (the groups,
K, the feasible runs) follows from the measure and is computed again on reading; the
store's checksums cover the datasets and every attribute (:mod:`irscale.store.format`).
Bounded tables are stored only for measures without an exact scale (never in place of
one), and used only where bounded scales are asked for (``--bounded``).
"""
from __future__ import annotations

import json
from fractions import Fraction
from typing import Any

import numpy as np

from irscale.errors import CorruptStoreError, IrscaleError
from irscale.scales.measures.measure import Measure, RecallBase
from irscale.scales.tables.bounded import BoundedTable
from irscale.scales.tables.bounded_grid import LAYOUT as NAME
from irscale.scales.tables.bounded_grid import Grid
from irscale.scales.tables.bounded_problem import MAX_BYTES, bounded_problem
from irscale.scales.tables.certificate import Certificate
from irscale.scales.tables.scale import TableSink, TableSource

#: Format of the ``grids`` items, so that a reader can tell one it does not know.
_FIELDS = {"rb", "scale", "weight", "gamma", "eta", "error_bound", "cells", "seconds"}
#: How a grid's problem was counted (the optional field "counted"; absent: "").
COUNTED = ("", "states")


def _fraction(text: object) -> Fraction:
    if not isinstance(text, str) or len(text) > 20000:
        raise ValueError(f"not a fraction: {str(text)[:40]!r}")
    value = Fraction(text)
    if value < 0:
        raise ValueError(f"negative: {text[:40]!r}")
    return value


def _rb_json(rb: RecallBase) -> object:
    return list(rb) if isinstance(rb, tuple) else rb


def _rb_of(value: object) -> RecallBase:
    return tuple(value) if isinstance(value, list) else value


def _monotone(name: str, arr: np.ndarray) -> None:
    if arr.ndim != 1 or arr.dtype != np.float64 or arr.shape[0] == 0:
        raise CorruptStoreError(f"dataset {name} is {arr.dtype} {list(arr.shape)}, expected a non-empty float64 "
                                f"vector")
    if not (np.isfinite(arr).all() and arr[0] >= 0 and (np.diff(arr) >= 0).all()):
        raise CorruptStoreError(f"dataset {name} is not a non-decreasing vector of finite masses >= 0")


class BoundedLayout:
    """How bounded tables are written and read (they are built by
    :func:`irscale.store.fill_bounded.build_bounded`, not by enumeration)."""

    name = NAME
    seconds_per_run = 0.0
    seconds_per_entry = 0.0
    max_runs = None
    checksummed = ()
    lazy = ()

    def build(self, measures: list[Measure], rbs: dict, options: Any) -> None:
        raise IrscaleError("bounded tables are built with irscale build --layout bounded")

    def write(self, table: BoundedTable, sink: TableSink) -> None:
        grids = []
        for i, (rb, scale) in enumerate(sorted(table.scales.items(), key=lambda item: (item[0] is None, item[0] or 0))):
            g = scale.grid
            sink.array(f"down_{i}", np.ascontiguousarray(g.down, dtype=np.float64))
            sink.array(f"up_{i}", np.ascontiguousarray(g.up, dtype=np.float64))
            grids.append({"rb": _rb_json(table.grid_key(rb)), "scale": int(g.scale), "weight": str(g.weight),
                          "gamma": str(g.gamma), "eta": float(g.eta).hex(), "error_bound": scale.error_bound,
                          "cells": scale.cells, "seconds": round(float(g.seconds), 3),
                          **({"counted": g.counted} if g.counted else {})})
        ks = [scale.k for scale in table.scales.values()]          # K+ where a grid only brackets K
        error = table.settings[1]
        sink.attrs(implicit=False, n_distinct=str(max(ks, default=0)), distinct_by_rb="[]",
                   k_exact=all(scale.k_exact for scale in table.scales.values()),
                   grids=json.dumps(grids, separators=(",", ":")),
                   error=json.dumps(None if error is None else float(error)))

    def read(self, source: TableSource, **common: Measure | int | Certificate | tuple[int, ...] | dict[str, Any]
             | None) -> BoundedTable:
        try:
            grids = json.loads(source.attrs["grids"])
            error = json.loads(source.attrs.get("error", "null"))
            if not isinstance(grids, list) or not (error is None or isinstance(error, float)):
                raise ValueError("grids is not a list")
            stored, recorded = {}, {}
            for i, g in enumerate(grids):
                if not isinstance(g, dict) or set(g) - {"counted"} != _FIELDS or g.get("counted", "") not in COUNTED \
                        or not isinstance(g["scale"], int) or g["scale"] < 1:
                    raise ValueError(f"grid {i} is {str(g)[:80]}")
                down, up = source.mapped(f"down_{i}"), source.mapped(f"up_{i}")
                recorded[_rb_of(g["rb"])] = float(g["error_bound"])
                stored[_rb_of(g["rb"])] = Grid(g["scale"], down, up, _fraction(g["weight"]), _fraction(g["gamma"]),
                                               float.fromhex(g["eta"]), float(g["seconds"]), g.get("counted", ""))
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise CorruptStoreError(f"attr grids or error: {str(e)[:120]}") from None
        table = BoundedTable(settings=(None, error, 2, MAX_BYTES), stored=stored, recorded=recorded, **common)
        table.grids_listed = grids
        return table

    def validate(self, table: BoundedTable, source: TableSource, deep: bool) -> None:
        """Raise :class:`~irscale.errors.CorruptStoreError` unless every grid is sound: its
        recall base one of the measure's (and of the table's count vector), its masses
        non-decreasing finite vectors, its certificate the one its grid gives."""
        m = table.measure
        names = {f"{d}_{i}" for i in range(len(table.stored)) for d in ("down", "up")}
        if len(table.stored) != len(table.grids_listed) or not all(source.has(n) for n in names):
            raise CorruptStoreError("grids and datasets do not match (two grids of one recall base, or a dataset "
                                    "missing)")
        for i, (rb, grid) in enumerate(table.stored.items()):
            try:
                if table.grid_key(rb) != rb or m.table_rb(m.check_rb(rb)) != table.table_rb:
                    raise CorruptStoreError(f"grid {i} is for rb = {rb!r}")
            except IrscaleError as e:
                raise CorruptStoreError(f"grid {i} is for rb = {rb!r}: {str(e)[:120]}") from None
            if not 0 <= table.recorded[rb] <= 1:
                raise CorruptStoreError(f"grid {i}: error bound {table.recorded[rb]!r}")
            if deep:
                _monotone(f"down_{i}", grid.down)
                _monotone(f"up_{i}", grid.up)
            if deep and not getattr(source, "random_access", True):     # a verification: the bound again
                if grid.counted != bounded_problem(m, rb, counted=grid.counted).method:
                    continue                    # counted by states no longer affordable: not used (counted again)
                if table.bound_of_grid(rb) != table.recorded[rb]:
                    raise CorruptStoreError(f"grid {i}: its error bound is not the one recorded")


LAYOUT = BoundedLayout()
