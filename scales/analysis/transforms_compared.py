"""Transforms side by side: which conclusions survive the choice of transform, how the
transforms order the systems, what adding or removing a run does, and the inference of
:mod:`irscale.scales.analysis.inference` under each transform.

One call of :func:`compare_measure` handles one measure at one cutoff, for every
``rb_scale`` mode of the scores (the standardisations use the raw scores, which do not
depend on the mode, and are computed once).

Decisions
    For every pair of systems (i, j) and every test of
    :mod:`irscale.scales.analysis.significance`, the signed decision under each transform
    (:func:`~irscale.scales.analysis.significance.pairwise_decisions`: 1 when i is
    significantly above j, -1 below, 0 not significant). A decision is *scale-free* when
    every transform gives it; otherwise the transforms whose decision differs from the
    raw scores' are listed (``flipped_by``).
Scale-free by construction
    The sign test and Friedman's test read only the order of the scores within each
    topic. A transform that keeps that order on every topic (checked on the data:
    :func:`keeps_topic_order`) cannot change their decisions; the analysis stops with a
    :class:`~irscale.scales.analysis.agreement.SelfCheckError` if one does. Every
    transform here keeps it, except possibly ``ecdf`` (and, on topics where the
    reference has no spread, the z-scores) against a reference of other runs.
Set dependence
    The run with the highest raw mean (or the one named) is removed and every transform
    recomputed on the other runs; the table counts the other runs' (run, topic) scores
    that change and the pairs of other systems whose order by mean changes.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError
from irscale.scales.analysis import agreement, inference
from irscale.scales.analysis.agreement import SelfCheckError
from irscale.scales.analysis.matrices import matrices, standardised
from irscale.scales.analysis.significance import (
    MULTI_SYSTEM_TESTS,
    TWO_SAMPLE_TESTS,
    pairwise_directions,
    pairwise_pvalues,
    pairwise_significance,
)
from irscale.scales.analysis.significance_input import _midranks_rows, pairs
from irscale.scales.runs.standardize import DEPENDS_ON_SCALING, DEPENDS_ON_SYSTEMS, reference_matrix

#: Tests whose decisions depend only on the order of the scores within each topic.
ORDER_TESTS = ("sign", "friedman")


@dataclass(frozen=True)
class Options:
    """What :func:`compare_measure` computes (see :func:`irscale.scales.analysis.analyze.analyze`)."""

    transforms: tuple[str, ...]
    tests: tuple[str, ...]
    alpha: float = 0.05
    baseline: str | None = None
    permutations: int = 1000
    resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    leave_one_out: bool = False
    remove_run: str | None = None
    pair_tables: bool = True


def keeps_topic_order(raw: np.ndarray, other: np.ndarray) -> bool:
    """Whether ``other`` orders the systems exactly as ``raw`` on every topic (same
    mid-ranks within each row: ties kept, no new ties)."""
    return bool(np.array_equal(_midranks_rows(raw)[0], _midranks_rows(other)[0]))


def _decisions(x: np.ndarray, tests: tuple[str, ...], alpha: float) -> tuple[dict, dict]:
    """(signed decisions, two-sample p-values) of every test for every pair."""
    two = tuple(t for t in tests if t in TWO_SAMPLE_TESTS)
    multi = tuple(t for t in tests if t in MULTI_SYSTEM_TESTS)
    pv = pairwise_pvalues(x, two) if two else {}
    sig = {t: pv[t] <= alpha for t in two}
    if multi:
        sig.update(pairwise_significance(x, multi, alpha))
    direction = pairwise_directions(x, tests)
    return {t: np.where(sig[t], direction[t], 0).astype(np.int8) for t in tests}, pv


def _mode_matrices(rows: pd.DataFrame, measure: str, transforms, reference, options, cache):
    systems, topics, raw, scaled, mid = matrices(rows, measure)
    systems = [str(x) for x in systems]
    key = (tuple(systems), tuple(topics))
    if key not in cache:     # standardisations use raw scores only: the same in every mode
        ref, same = reference_matrix(reference, measure, topics, systems) if reference is not None else (None, None)
        cache[key] = (ref, same, standardised(raw, transforms, ref, same, options.leave_one_out))
    ref, same, std = cache[key]
    mats = {}
    for t in transforms:
        if t == "raw":
            mats[t] = raw
        elif t == "unq":
            mats[t] = scaled
        elif t == "midrank":
            if mid is None:
                raise IrscaleError(f"{measure}: no mid-ranks for transform midrank (transform with --midranks)")
            mats[t] = mid
        else:
            mats[t] = std[t]
    return systems, topics, mats, ref, same


def _set_dependence(systems, mats, ref, same, options, measure) -> list[dict]:
    raw = mats["raw"]
    if options.remove_run is not None:
        if options.remove_run not in systems:
            raise IrscaleError(f"remove_run {options.remove_run} is not among the runs of {measure}")
        gone = systems.index(options.remove_run)
    else:
        gone = int(np.argmax(raw.mean(axis=0)))
    if len(systems) < 3:
        return []
    keep = [c for c in range(len(systems)) if c != gone]
    sub_ref, sub_same = ref, None if same is None else same[keep]
    if ref is not None and same[gone] >= 0:        # the removed run leaves the reference too
        cols = [c for c in range(ref.shape[1]) if c != same[gone]]
        sub_ref = ref[:, cols]
        sub_same = np.array([cols.index(c) if c >= 0 else -1 for c in sub_same])
    again = standardised(raw[:, keep], options.transforms, sub_ref, sub_same, options.leave_one_out)
    rows = []
    for t in options.transforms:
        before = mats[t][:, keep]
        after = again.get(t, before)          # raw, unq and midrank: the run's own numbers
        changed = before != after
        tau = agreement.overall_tau(before, after)
        rows.append({"transform": t, "depends_on_systems": DEPENDS_ON_SYSTEMS[t], "removed_run": systems[gone],
                     "cells": int(changed.size), "cells_changed": int(changed.sum()),
                     "runs_changed": int(changed.any(axis=0).sum()),
                     "max_abs_change": float(np.abs(after - before).max(initial=0.0)),
                     "tau_means_after": tau})
    return rows


def _inference(systems, x, pv, options) -> tuple[dict, pd.DataFrame]:
    """Summary and per-pair inference of one transform."""
    k = len(systems)
    i, j = pairs(k)
    family = np.ones(i.size, dtype=bool)
    base = None
    if options.baseline is not None:
        base = systems.index(options.baseline)
        family = inference.baseline_pairs(k, base)
    means = x.mean(axis=0)
    out = {"mean_diff": means[i] - means[j], "cohens_d": inference.cohens_d(x)}
    if base is not None:
        delta = inference.glass_delta(x, base)      # (mean_s - mean_base) / sd_base
        # oriented as mean_diff: (mean_a - mean_b) / sd_base
        out["glass_delta"] = np.where(family, np.where(i == base, -delta[j], delta[i]), np.nan)
    for t, p in pv.items():
        out[f"p_{t}"] = p
        for c in inference.CORRECTIONS:
            out[f"p_{t}_{c}"] = np.where(family, inference.adjust_pvalues(np.where(family, p, np.nan), c), np.nan)
    if options.permutations:
        out["p_tukey_randomised"] = inference.randomised_tukey_hsd(x, options.permutations, options.seed)
    if options.resamples:
        out["ci_low"], out["ci_high"] = inference.bootstrap_ci(x, options.resamples, options.confidence,
                                                              options.seed)
    names = np.asarray(systems, dtype=object)
    frame = pd.DataFrame({"system_a": names[i], "system_b": names[j], **out})
    a = options.alpha
    summary = {"pairs": int(family.sum())}
    for t in pv:
        summary[f"{t}"] = int((pv[t][family] <= a).sum())
        for c in inference.CORRECTIONS:
            summary[f"{t}_{c}"] = int((out[f"p_{t}_{c}"][family] <= a).sum())
    if options.permutations:
        summary["tukey_randomised"] = int((out["p_tukey_randomised"][family] <= a).sum())
    if options.resamples:
        excl = (out["ci_low"] > 0) | (out["ci_high"] < 0)
        summary["ci_excludes_0"] = int(excl[family].sum())
    d = np.abs(out["cohens_d"][family])
    summary["median_abs_d"] = float(np.median(d)) if d.size else float("nan")
    if base is not None:
        g = np.abs(out["glass_delta"][family])
        summary["median_abs_glass"] = float(np.median(g)) if np.isfinite(g).all() and g.size else float("nan")
    return summary, frame


def compare_measure(rows: pd.DataFrame, n: int, measure: str, options: Options,
                    reference: pd.DataFrame | None = None) -> dict[str, list | pd.DataFrame]:
    """Every comparison of transforms for one measure at cutoff ``n`` (``rows``: its
    scores, every ``rb_scale`` mode). Returns lists of row dicts (``conclusions``,
    ``transform_taus``, ``set_dependence``, ``inference``) and per-pair DataFrames
    (``conclusion_pairs``, ``inference_pairs``)."""
    cache: dict = {}
    result: dict[str, list] = {k: [] for k in ("conclusions", "transform_taus", "set_dependence", "inference",
                                                "conclusion_pairs", "inference_pairs")}
    raw_done: dict = {}
    inferred: dict = {}
    for mode in sorted(rows["rb_scale"].unique()):
        group = rows[rows["rb_scale"] == mode]
        systems, topics, mats, ref, same = _mode_matrices(group, measure, options.transforms, reference, options,
                                                         cache)
        if options.baseline is not None and options.baseline not in systems:
            raise IrscaleError(f"baseline {options.baseline} is not among the runs of {measure}")
        head = {"n": n, "rb_scale": mode, "measure": measure}
        decisions, pvalues = {}, {}
        key = (tuple(systems), tuple(topics))
        for t in options.transforms:
            shared = t not in DEPENDS_ON_SCALING          # the same matrix in every mode
            if shared and (key, t) in raw_done:
                decisions[t], pvalues[t] = raw_done[(key, t)]
            else:
                decisions[t], pvalues[t] = _decisions(mats[t], options.tests, options.alpha)
                if shared:
                    raw_done[(key, t)] = (decisions[t], pvalues[t])
        keeps = {t: keeps_topic_order(mats["raw"], mats[t]) for t in options.transforms}
        i, j = pairs(len(systems))
        for test in options.tests:
            stack = np.stack([decisions[t][test] for t in options.transforms])   # (transforms, pairs)
            differs = stack != stack[0]
            free = ~differs.any(axis=0)
            if test in ORDER_TESTS:
                for row, t in enumerate(options.transforms):
                    if keeps[t] and differs[row].any():
                        raise SelfCheckError(f"{measure} ({mode}): the {test} test changes "
                                             f"{int(differs[row].sum())} decision(s) under {t}, which keeps the "
                                             "order of the scores within every topic")
            row = {**head, "test": test, "pairs": int(i.size), "scale_free": int(free.sum()),
                   "scale_free_share": float(free.mean()),
                   "significant_everywhere": int((free & (stack[0] != 0)).sum()),
                   "order_only": test in ORDER_TESTS}
            for r, t in enumerate(options.transforms):
                row[f"significant_{t}"] = int((stack[r] != 0).sum())
                row[f"changed_{t}"] = int(differs[r].sum())
            result["conclusions"].append(row)
            if not options.pair_tables:
                continue
            flipped = np.full(free.size, "", dtype=object)
            for p in np.flatnonzero(~free):
                flipped[p] = ",".join(t for r, t in enumerate(options.transforms) if differs[r, p])
            frame = pd.DataFrame({"system_a": np.asarray(systems, dtype=object)[i],
                                  "system_b": np.asarray(systems, dtype=object)[j]})
            for r, t in enumerate(options.transforms):
                frame[t] = stack[r]
            frame["scale_free"] = free
            frame["flipped_by"] = flipped
            result["conclusion_pairs"].append(frame.assign(**head, test=test))
        for a, b in itertools.combinations(options.transforms, 2):
            result["transform_taus"].append({**head, "transform_a": a, "transform_b": b,
                                             "tau": agreement.overall_tau(mats[a], mats[b])})
        for t in options.transforms:
            if t not in DEPENDS_ON_SCALING and (key, t) in inferred:
                summary, frame = inferred[(key, t)]
            else:
                summary, frame = _inference(systems, mats[t], pvalues[t], options)
                inferred[(key, t)] = (summary, frame)
            result["inference"].append({**head, "transform": t, "keeps_topic_order": keeps[t], **summary})
            if options.pair_tables:
                result["inference_pairs"].append(frame.assign(**head, transform=t))
        result["set_dependence"] += [{**head, **r} for r in _set_dependence(systems, mats, ref, same, options,
                                                                           measure)]
    for key in ("conclusion_pairs", "inference_pairs"):
        result[key] = compact(pd.concat(result[key], ignore_index=True)) if result[key] else pd.DataFrame()
    return result


def compact(frame: pd.DataFrame) -> pd.DataFrame:
    """Repeated strings of a per-pair table as categories (millions of rows for many runs)."""
    for col in ("system_a", "system_b", "measure", "rb_scale", "test", "transform", "flipped_by"):
        if col in frame.columns:
            frame[col] = frame[col].astype("category")
    return frame


__all__ = ["ORDER_TESTS", "Options", "compact", "compare_measure", "keeps_topic_order"]
