"""Topics x systems matrices of one measure, under each transform, from a scores table.

Rows are topics (in the order of the scores), columns systems (sorted by name). The
transforms are those of :mod:`irscale.scales.runs.standardize`: ``raw``, ``unq`` (the
``scaled`` column), ``midrank`` (mapped to [0, 1] as ``(midrank - 1) / (n_runs - 1)``)
and the standardisations computed from the raw scores (``zscore``, ``zscore-cdf``,
``std-linear``, ``ecdf``), against the systems themselves or a reference table of other
runs.
"""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError
from irscale.scales.runs.standardize import STANDARDISATIONS, check_transforms, standardize_matrix


def matrices(scores: pd.DataFrame, measure: str
             ) -> tuple[list[str], list[str], np.ndarray, np.ndarray, np.ndarray | None]:
    """(systems, topics, raw, scaled, midrank-scaled or None) of one measure of one
    (n, rb_scale) group: topics x systems arrays, systems sorted by name."""
    rows = scores[scores["measure"] == measure]
    if rows.duplicated(["run", "topic"]).any():
        raise IrscaleError(f"{measure}: a (run, topic) pair has several scores; give each run once")
    raw = rows.pivot(index="topic", columns="run", values="raw")
    if raw.isna().any().any():
        run = raw.columns[raw.isna().any(axis=0)][0]
        raise IrscaleError(f"{measure}: run {run} has no score on some topic; every run needs every topic")
    scaled = rows.pivot(index="topic", columns="run", values="scaled").loc[raw.index, raw.columns]
    mid = None
    if rows["midrank"].notna().all():
        m = rows.assign(mid=(rows["midrank"] - 1) / (rows["n_runs"].astype(float) - 1))
        mid = m.pivot(index="topic", columns="run", values="mid").loc[raw.index, raw.columns].to_numpy()
    return list(raw.columns), list(raw.index), raw.to_numpy(), scaled.to_numpy(), mid


def _complete(scores: pd.DataFrame, column: str) -> pd.Series:
    """Per (rb_scale, measure) group: whether every row has a value in ``column``."""
    if column not in scores.columns or scores.empty:
        return pd.Series(dtype=bool)
    keys = [k for k in ("rb_scale", "measure") if k in scores.columns]
    return scores[column].notna().groupby([scores[k] for k in keys], sort=False).all()


def available_transforms(scores: pd.DataFrame) -> tuple[str, ...]:
    """The transforms a scores table allows: raw, unq (when some measure has scaled
    values on every row), midrank (when some measure has mid-ranks on every row) and every
    standardisation. Which measure allows which: :func:`measure_transforms`."""
    out = ["raw"]
    if _complete(scores, "scaled").any():
        out.append("unq")
    if _complete(scores, "midrank").any():
        out.append("midrank")
    return tuple(out) + STANDARDISATIONS


def measure_transforms(rows: pd.DataFrame, transforms: Iterable[str]) -> tuple[str, ...]:
    """Those of ``transforms`` that the scores of one measure in one scaling mode allow:
    unq needs a scaled value on every row, midrank a mid-rank on every row; raw and the
    standardisations (computed from the raw scores) always apply."""
    need = {"unq": "scaled", "midrank": "midrank"}
    return tuple(t for t in transforms
                 if t not in need or (need[t] in rows.columns and rows[need[t]].notna().all() and not rows.empty))


def choose_transforms(scores: pd.DataFrame, transforms: Iterable[str] | str | None) -> tuple[str, ...]:
    """The transforms to compare: all available ones by default, raw first; a transform
    asked for that no measure of the scores allows is an
    :class:`~irscale.errors.IrscaleError` (one that some measures allow is compared on
    those: :func:`measure_transforms`)."""
    have = available_transforms(scores)
    if transforms is None:
        return have
    chosen = check_transforms(transforms)
    lacking = [t for t in chosen if t not in have]
    if lacking:
        why = {"unq": "no measure of the scores has scaled values (transform with --store)",
               "midrank": "no measure of the scores has mid-ranks (transform with --midranks)"}
        raise IrscaleError("; ".join(f"transform {t} is not available: {why[t]}" for t in lacking))
    return tuple(dict.fromkeys(("raw",) + chosen))


def standardised(raw: np.ndarray, transforms: Iterable[str], reference: np.ndarray | None = None,
                 same: np.ndarray | None = None, leave_one_out: bool = False) -> dict[str, np.ndarray]:
    """The standardisations among ``transforms`` of a raw topics x systems matrix."""
    return {t: standardize_matrix(raw, t, reference, leave_one_out and t == "ecdf", same)
            for t in transforms if t in STANDARDISATIONS}
