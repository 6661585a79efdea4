"""The paper's analyses (SPEC section 6) on a scores table from :func:`irscale.transform`.

For every cutoff N and scaling mode (``rb_scale``) in the table, and every measure:

1. overall Kendall tau between the system ranking by raw means and by scaled means, with
   unq ranks and with mid-ranks (``midrank`` column, mapped to [0, 1] as
   (midrank - 1) / (n_runs - 1));
2. the topic-by-topic tau self-check (must be 1 on every topic; fails loudly);
3. Kendall tau between every pair of measures on raw means and on scaled means, with
   Delta% = (tau_scaled - tau_raw) / tau_raw * 100;
4. every significance test of :mod:`irscale.scales.analysis.significance` on every pair of systems,
   raw vs scaled: Sig (significant pairs under the raw scores), S2NS (significant raw, not
   scaled), NS2S (the reverse), Delta% = (S2NS + NS2S) / Sig * 100;
5. the transforms side by side (:mod:`irscale.scales.analysis.transforms_compared`): raw,
   unq, midrank and the per-topic standardisations of
   :mod:`irscale.scales.runs.standardize` (z-score, its normal CDF, Sakai's std-linear,
   the ECDF): which decisions of every test survive every transform (scale-free), the
   Kendall tau between the system orderings of every two transforms, what removing a run
   changes, and under each transform Holm and Benjamini-Hochberg corrections, the
   randomised Tukey HSD test, Cohen's d (and Glass's delta against a baseline) and paired
   bootstrap confidence intervals (:mod:`irscale.scales.analysis.inference`).

Systems are the table's runs, topics its topics; every run must have a score on every
topic (``irscale transform`` guarantees it).

Partly scaled scores
    A measure without a scale (no table at its N, e.g. ``map`` = AP@1000 beyond N = 32, or
    scores written with ``--raw-only`` and concatenated with scaled ones) has an empty
    ``scaled`` column. It is left out of analyses 1-4, which compare each measure with its
    scaled version (the measure pairs of 3 too: their scaled half would be empty), with an
    :class:`~irscale.errors.IrscaleWarning` naming it and why, recorded in
    ``meta["left_out"]`` (the report says it). It stays in the comparison of transforms
    (5) under the transforms that need no scale: raw and the standardisations, which are
    computed from the raw scores; a decision of such a measure is scale-free when those
    transforms agree on it (the report says so). Likewise a measure without mid-ranks
    (transformed without ``--midranks``) has an empty mid-rank tau and is compared without
    the midrank transform, with a warning. Only when no measure has scaled values does the
    analysis refuse (:class:`~irscale.errors.IrscaleError` naming the measures and how to
    get scales).
"""
from __future__ import annotations

import json
import numbers
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from irscale.enumerate.progress import progress_bar
from irscale.errors import IrscaleError, warn
from irscale.scales.analysis import agreement
from irscale.scales.analysis.matrices import choose_transforms, matrices, measure_transforms
from irscale.scales.analysis.significance import TESTS, pairwise_significance
from irscale.scales.analysis.significance_input import check_fraction
from irscale.scales.analysis.transforms_compared import Options, compact, compare_measure
from irscale.scales.measures.parse import parse_measure
from irscale.scales.runs.scores import COLUMNS, NEWER_COLUMNS, read_scores

#: Significance level of every test.
ALPHA = 0.05


@dataclass
class Analysis:
    """Results of :func:`analyze`, one DataFrame per kind of table.

    ``tau_scaled``: n, rb_scale, measure, systems, topics, tau_unq, tau_midrank,
    topic_tau_min, topics_checked, topics_constant.
    ``tau_measures``: n, rb_scale, measure_a, measure_b, tau_raw, tau_scaled, delta_pct.
    ``significance``: n, rb_scale, measure, test, pairs, sig, s2ns, ns2s, delta_pct.

    Transforms compared (empty when no comparison was asked for):
    ``conclusions``: per (n, rb_scale, measure, test): pairs, scale_free (decisions equal
    under every transform), scale_free_share, significant_everywhere, order_only (sign and
    Friedman), and per transform t: significant_t, changed_t (decisions that differ
    from the raw scores').
    ``transform_taus``: n, rb_scale, measure, transform_a, transform_b, tau (Kendall tau
    between the system orderings by mean).
    ``set_dependence``: n, rb_scale, measure, transform, depends_on_systems, removed_run,
    cells, cells_changed, runs_changed, max_abs_change, tau_means_after (the other runs'
    ordering before and after the removal).
    ``inference``: n, rb_scale, measure, transform, keeps_topic_order, pairs (the family),
    significant pairs per two-sample test uncorrected and with ``_holm`` / ``_bh``,
    tukey_randomised, ci_excludes_0, median_abs_d (median_abs_glass with a baseline).
    ``conclusion_pairs``: one row per (n, rb_scale, measure, test, pair): system_a,
    system_b, the signed decision under each transform (1: a above b, -1: below, 0: not
    significant), scale_free, flipped_by.
    ``inference_pairs``: one row per (n, rb_scale, measure, transform, pair): system_a,
    system_b, mean_diff (a - b), cohens_d, glass_delta (with a baseline), p_<test> with
    p_<test>_holm and p_<test>_bh, p_tukey_randomised, ci_low, ci_high.
    """

    tau_scaled: pd.DataFrame
    tau_measures: pd.DataFrame
    significance: pd.DataFrame
    seconds: float = 0.0
    meta: dict = field(default_factory=dict)
    conclusions: pd.DataFrame = field(default_factory=pd.DataFrame)
    transform_taus: pd.DataFrame = field(default_factory=pd.DataFrame)
    set_dependence: pd.DataFrame = field(default_factory=pd.DataFrame)
    inference: pd.DataFrame = field(default_factory=pd.DataFrame)
    conclusion_pairs: pd.DataFrame = field(default_factory=pd.DataFrame)
    inference_pairs: pd.DataFrame = field(default_factory=pd.DataFrame)

    #: Tables written as CSV and into analysis.json.
    TABLES = ("tau_scaled", "tau_measures", "significance", "conclusions", "transform_taus", "set_dependence",
              "inference")
    #: Per-pair tables, written as Parquet (too large for JSON).
    PAIR_TABLES = ("conclusion_pairs", "inference_pairs")

    def save(self, folder: str | Path) -> list[Path]:
        """Write the summary tables as CSV, everything but the per-pair tables as
        ``analysis.json``, and the per-pair tables as Parquet (``conclusion_pairs.parquet``,
        ``inference_pairs.parquet``). Tables that are empty are not written."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        tables = [name for name in self.TABLES if name in ("tau_scaled", "tau_measures", "significance")
                  or not getattr(self, name).empty]
        for name in tables:
            path = folder / f"{name}.csv"
            getattr(self, name).to_csv(path, index=False)
            paths.append(path)
        for name in self.PAIR_TABLES:
            frame = getattr(self, name)
            if not frame.empty:
                path = folder / f"{name}.parquet"
                frame.to_parquet(path, index=False)
                paths.append(path)
        doc = {"seconds": self.seconds, "meta": self.meta,
               **{name: json.loads(getattr(self, name).to_json(orient="records")) for name in tables}}
        path = folder / "analysis.json"
        path.write_text(json.dumps(doc, indent=1))
        return paths + [path]


def load_scores(paths: str | Path | Iterable[str | Path]) -> pd.DataFrame:
    """Read one or several scores files (:func:`~irscale.scales.runs.scores.read_scores`)
    and concatenate them; a file that is not a readable scores table (empty, binary,
    malformed) is an :class:`~irscale.errors.IrscaleError` naming it."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    frames = []
    for path in paths:
        try:
            frames.append(read_scores(path))
        except IrscaleError:
            raise
        except (ValueError, TypeError, KeyError, OSError, UnicodeDecodeError) as exc:
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise IrscaleError(f"{path}: not a readable scores file of 'irscale transform' ({detail})") from None
    if not frames:
        raise IrscaleError("no scores file given")
    return pd.concat(frames, ignore_index=True)


def _check_columns(scores: pd.DataFrame) -> None:
    missing = [c for c in COLUMNS if c not in scores.columns and c not in NEWER_COLUMNS]
    if missing:
        raise IrscaleError(f"not a scores table of 'irscale transform': no column {', '.join(missing)}")


def _check_scores(scores: pd.DataFrame, tests: tuple[str, ...]) -> None:
    if scores.empty:
        raise IrscaleError("the scores table is empty")
    for (mode, measure), rows in scores.groupby(["rb_scale", "measure"], sort=True):
        runs, topics = rows["run"].unique(), rows["topic"].nunique()
        if len(runs) < 2:
            raise IrscaleError(f"{measure} ({mode}): the scores hold a single run ({runs[0]}); the analyses "
                               "compare runs (systems), give the scores of at least 2")
        if tests and topics < 2:
            raise IrscaleError(f"{measure} ({mode}): the significance tests need at least 2 topics, the scores "
                               "hold 1; give more topics or skip the tests (--tests none, or tests=())")


#: Why a measure that has scales has no scaled values in the scores.
WITHOUT_STORE = "transformed without --store or with --raw-only"


def _no_scale_reason(measure: str, partly: bool) -> str:
    """Why a measure's scaled column is empty: it has no scale (the measure says why), or
    the scores were written without one."""
    if partly:
        return "scaled on some rows only (scores of several transforms mixed)"
    try:
        reason = parse_measure(measure).scales_reason()
    except IrscaleError:
        reason = None
    return f"no scale: {reason}" if reason else WITHOUT_STORE


def _coverage(scores: pd.DataFrame) -> list[dict]:
    """What each (rb_scale, measure) group lacks: ``lacks`` "scaled" (some row without a
    scaled value) or "midrank" (scaled, but some row without a mid-rank), with the reason;
    groups lacking nothing are not listed."""
    flags = scores.assign(_s=scores["scaled"].notna(), _m=scores["midrank"].notna())
    out = []
    for (mode, measure), g in flags.groupby(["rb_scale", "measure"], sort=False):
        if not g["_s"].all():
            out.append({"measure": str(measure), "rb_scale": str(mode), "lacks": "scaled",
                        "reason": _no_scale_reason(str(measure), bool(g["_s"].any()))})
        elif not g["_m"].all():
            out.append({"measure": str(measure), "rb_scale": str(mode), "lacks": "midrank",
                        "reason": "transformed without --midranks" if not g["_m"].any() else
                        "mid-ranks on some rows only (scores of several transforms mixed)"})
    return out


def _collapse(scores: pd.DataFrame, rows: list[dict]) -> list[dict]:
    """The rows of :func:`_coverage` merged per (measure, lacks, reason): ``rb_scale`` the
    list of modes, ``name`` the measure alone when every scaling mode it has in the scores
    is listed, else with its modes ("AP@10 (common)")."""
    modes = scores.groupby("measure", sort=False)["rb_scale"].agg(lambda v: set(map(str, v))).to_dict()
    by: dict = {}
    for r in rows:
        by.setdefault((r["measure"], r["lacks"], r["reason"]), []).append(r["rb_scale"])
    return [{"name": m if set(ms) >= modes.get(m, set()) else f"{m} ({', '.join(sorted(ms))})", "measure": m,
             "rb_scale": sorted(ms), "lacks": lacks, "reason": reason}
            for (m, lacks, reason), ms in by.items()]


def describe_left_out(rows: list[dict]) -> str:
    """"A, B (reason 1); C (reason 2)": the names of :func:`_collapse` rows grouped by reason."""
    by: dict = {}
    for r in rows:
        by.setdefault(r["reason"], []).append(r["name"])
    return "; ".join(f"{', '.join(names)} ({reason})" for reason, names in by.items())


def _split_scaled(scores: pd.DataFrame, left_out: list[dict], options: Options | None) -> pd.DataFrame:
    """The rows of the measures with scaled values; a warning names the others (and the
    measures without mid-ranks) and says what is done with them; an
    :class:`~irscale.errors.IrscaleError` when no measure has scaled values."""
    unscaled = [r for r in left_out if r["lacks"] == "scaled"]
    gone = {(mode, r["measure"]) for r in unscaled for mode in r["rb_scale"]}
    keep = ~pd.Series(list(zip(scores["rb_scale"].astype(str), scores["measure"].astype(str))),
                      index=scores.index).isin(gone)
    if not keep.any():
        beyond = any(r["reason"].startswith("no scale") for r in unscaled)
        raise IrscaleError("the scores have no scaled values for any measure, so none can be compared with its "
                           f"interval scale: {describe_left_out(unscaled)}; transform with 'irscale transform ... "
                           "--store STORE' (tables from 'irscale build')"
                           + (", at a cutoff that has scales" if beyond else ""))
    if unscaled:
        one = len(unscaled) == 1
        warn(f"{describe_left_out(unscaled)}: {'its' if one else 'their'} scaled column is empty, so "
                      f"{'it is' if one else 'they are'} left out of the analyses of each measure against its "
                      f"scaled version (tau, topic check, measure pairs, significance tests)"
                      + _fallback_text(options))
    no_mid = [r for r in left_out if r["lacks"] == "midrank"]
    if no_mid:
        midrank = options is not None and "midrank" in options.transforms
        warn(f"{describe_left_out(no_mid)}: no mid-ranks, so no mid-rank tau"
                      + (" and no midrank transform" if midrank else "")
                      + (" for it" if len(no_mid) == 1 else " for them") + " (transform with --midranks)")
    return scores[keep]


def raw_only_transforms(transforms: Iterable[str]) -> tuple[str, ...]:
    """The transforms a measure without scaled values is compared under: those of
    ``transforms`` that need no scale (raw and the standardisations), or none when that
    leaves raw alone while others were asked for."""
    kept = tuple(t for t in transforms if t not in ("unq", "midrank"))
    return kept if len(kept) > 1 or tuple(transforms) == kept else ()


def _fallback_text(options: Options | None) -> str:
    if options is None:
        return ""
    kept = raw_only_transforms(options.transforms)
    if not kept:
        return "; and of the comparison of transforms (none of those asked for but raw applies without a scale)"
    return f"; compared under {', '.join(kept)} only"


def _drop_undefined(scores: pd.DataFrame, dropped: list[dict] | None = None) -> pd.DataFrame:
    """Leave out the topics on which a measure is undefined (no raw score for any run,
    e.g. Twist with N < 2 RB), with a warning; a measure left with fewer than 2 topics is
    left out whole (and listed in ``dropped`` as :func:`_collapse` rows, ``lacks``
    "topics")."""
    if "raw" not in scores.columns or not scores["raw"].isna().any():
        return scores

    keys = ["n", "rb_scale", "measure", "topic"]
    undefined = scores.assign(_u=scores["raw"].isna()).groupby(keys)["_u"].transform("all")
    out = scores[~undefined]
    for measure, rows in scores[undefined].groupby("measure"):
        left = out.loc[out["measure"] == measure, "topic"].nunique()
        warn(f"{measure} is undefined on {rows['topic'].nunique()} topic(s) (no score for any run); "
                      f"analysed on the other {left}" + ("" if left >= 2 else ": too few, left out"))
        if left < 2:
            out = out[out["measure"] != measure]
            if dropped is not None:
                dropped.append({"name": str(measure), "measure": str(measure),
                                "rb_scale": sorted(map(str, rows["rb_scale"].unique())), "lacks": "topics",
                                "reason": f"undefined on {rows['topic'].nunique()} topic(s), {left} left"})
    return out


def _significance_rows(raw, scaled, tests, alpha):
    before = pairwise_significance(raw, tests=tests, alpha=alpha)
    after = pairwise_significance(scaled, tests=tests, alpha=alpha)
    rows = []
    for test in tests:
        b, a = before[test], after[test]
        sig, s2ns, ns2s = int(b.sum()), int((b & ~a).sum()), int((~b & a).sum())
        rows.append({"test": test, "pairs": int(b.size), "sig": sig, "s2ns": s2ns, "ns2s": ns2s,
                     "delta_pct": (s2ns + ns2s) / sig * 100 if sig else float("nan")})
    return rows


def _analyze_measure(group: pd.DataFrame, measure: str, tests, alpha):
    systems, topics, raw, scaled, mid = matrices(group, measure)
    label = f"{measure} ({group['rb_scale'].iat[0]})"
    check = agreement.check_topic_taus(raw, scaled, label)
    tau = {"measure": measure, "systems": len(systems), "topics": len(topics),
           "tau_unq": agreement.overall_tau(raw, scaled),
           "tau_midrank": agreement.overall_tau(raw, mid) if mid is not None else float("nan"),
           "topic_tau_min": check["min"], "topics_checked": check["topics"], "topics_constant": check["constant"]}
    sig = [{"measure": measure, **row} for row in _significance_rows(raw, scaled, tests, alpha)] if tests else []
    means = (agreement.system_means(raw), agreement.system_means(scaled))
    return tau, sig, means


def _load_reference(reference) -> pd.DataFrame | None:
    if reference is None or isinstance(reference, pd.DataFrame):
        return reference
    return load_scores(reference)


def _whole(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _compare_options(scores: pd.DataFrame, tests, alpha, transforms, baseline, permutations, resamples, confidence,
                     seed, leave_one_out, remove_run, pair_tables) -> Options | None:
    runs = set(scores["run"].astype(str))
    for what, name in (("baseline", baseline), ("remove_run", remove_run)):
        if name is not None and str(name) not in runs:
            raise IrscaleError(f"{what} {name} is not among the runs of the scores ({len(runs)} runs)")
    if transforms is not None and not isinstance(transforms, (str, Iterable)):
        raise IrscaleError(f"transforms must be names (a list or a comma-separated string), got {transforms!r}")
    if transforms is not None and not isinstance(transforms, str) and len(tuple(transforms)) == 0:
        return None
    if isinstance(transforms, str) and transforms.strip().lower() in ("none", ""):
        return None
    chosen = choose_transforms(scores, transforms)
    for what, value in (("permutations", permutations), ("resamples", resamples)):
        if not _whole(value) or value < 0:
            raise IrscaleError(f"{what} must be an integer >= 0 (0 skips it), got {value!r}")
    if resamples == 1:
        raise IrscaleError("resamples must be 0 (no bootstrap) or at least 2")
    if not _whole(seed) or seed < 0:
        raise IrscaleError(f"seed must be a non-negative integer, got {seed!r}")
    level = check_fraction("confidence", confidence)
    return Options(transforms=chosen, tests=tuple(tests), alpha=alpha,
                   baseline=None if baseline is None else str(baseline), permutations=int(permutations),
                   resamples=int(resamples), confidence=level, seed=int(seed), leave_one_out=bool(leave_one_out),
                   remove_run=None if remove_run is None else str(remove_run), pair_tables=bool(pair_tables))


def analyze(scores: pd.DataFrame | str | Path | Iterable[str | Path], tests: Iterable[str] | None = None,
            alpha: float = ALPHA, n_jobs: int = 1, progress: bool = False, sources: Iterable[str] | None = None,
            *, transforms: Iterable[str] | str | None = None,
            reference: pd.DataFrame | str | Path | Iterable[str | Path] | None = None, leave_one_out: bool = False,
            baseline: str | None = None, permutations: int = 1000, resamples: int = 1000,
            confidence: float = 0.95, seed: int = 0, remove_run: str | None = None,
            pair_tables: bool = True) -> Analysis:
    """Run the analyses of SPEC section 6 on a scores table, and compare transforms.

    Parameters
    ----------
    scores : DataFrame, path or paths
        Output of :func:`irscale.transform` (with ``store``; ``midranks=True`` for the
        mid-rank tau), possibly several cutoffs and both ``rb_scale`` modes concatenated;
        or scores files (:func:`load_scores`). Measures without scaled values or mid-ranks
        are analysed under what they allow, with a warning (see "Partly scaled scores" in
        the module docstring; ``meta["left_out"]`` lists them).
    tests : sequence of str, optional
        Significance tests (default: all of :data:`irscale.scales.analysis.significance.TESTS`;
        an empty sequence skips them).
    alpha : float
        Significance level.
    n_jobs : int
        Worker processes (joblib) over measures.
    sources : sequence of str, optional
        Names of the scores files, kept in ``meta["sources"]`` (the report's default
        title names them); default: the file name when ``scores`` is a path.
    transforms : sequence of str or comma-separated str, optional
        Transforms to compare (:data:`irscale.scales.runs.standardize.TRANSFORMS`: raw,
        unq, midrank, zscore, zscore-cdf, std-linear, ecdf); default every one the scores
        allow (unq needs scaled values, midrank mid-ranks); raw is always included; an
        empty sequence or ``"none"`` skips the comparison.
    reference : DataFrame, path or paths, optional
        Scores of other runs to standardise against (default: the runs themselves).
    leave_one_out : bool
        ECDF of each run without its own score (Urbano et al.).
    baseline : str, optional
        A run: corrections over the pairs that contain it only, and Glass's delta.
    permutations, resamples : int
        B of the randomised Tukey HSD test and of the bootstrap intervals (0 skips).
    confidence : float
        Level of the bootstrap intervals.
    seed : int
        Seed of the permutations and resamples.
    remove_run : str, optional
        The run removed to show set dependence (default: the best by raw mean, per measure).
    pair_tables : bool
        Keep the per-pair tables (``conclusion_pairs``, ``inference_pairs``; millions of
        rows for hundreds of runs); the summaries are computed either way.

    The standardisations are computed afresh from the raw scores (columns ``zscore``,
    ... of ``irscale transform --standardize`` are not read).

    Raises
    ------
    IrscaleError
        When the scores cannot be analysed (no measure with scaled values, a single run,
        a single topic with significance tests, an unknown test or transform, a baseline
        that is not a run).
    SelfCheckError
        When the topic-by-topic tau is not 1 somewhere, or the sign or Friedman test
        changes a decision under a transform that keeps every topic's order.
    """
    start = time.perf_counter()
    if not isinstance(scores, pd.DataFrame):
        paths = [scores] if isinstance(scores, (str, Path)) else list(scores)
        if sources is None:
            sources = [Path(p).name for p in paths]
        scores = load_scores(paths)
    sources = None if sources is None else [str(x) for x in sources]
    _check_columns(scores)
    dropped: list[dict] = []
    scores = _drop_undefined(scores, dropped)
    tests = TESTS if tests is None else tuple(tests)
    unknown = sorted(set(tests) - set(TESTS))
    if unknown:
        raise IrscaleError(f"unknown test(s) {', '.join(unknown)}; known: {', '.join(TESTS)}")
    check_fraction("alpha", alpha)
    _check_scores(scores, tests)
    options = _compare_options(scores, tests, alpha, transforms, baseline, permutations, resamples, confidence,
                               seed, leave_one_out, remove_run, pair_tables)
    if options is not None and scores.groupby(["n", "rb_scale", "measure"])["topic"].nunique().min() < 2:
        warn("the transforms are not compared: a measure has a single topic (standardisations, "
                      "effect sizes and intervals need at least 2)")
        options = None
    left_out = dropped + _collapse(scores, _coverage(scores))
    scaled_scores = _split_scaled(scores, left_out, options)
    reference = _load_reference(reference) if options is not None else None
    jobs = []
    for (n, mode), group in scaled_scores.groupby(["n", "rb_scale"], sort=True):
        for measure in group["measure"].unique():
            jobs.append((int(n), mode, measure, group[group["measure"] == measure]))
    compare_jobs = _compare_jobs(scores, options) if options is not None else []
    tasks = [delayed(_analyze_measure)(g, m, tests, alpha) for _, _, m, g in jobs]
    tasks += [delayed(compare_measure)(g, n, m, o, reference) for n, m, g, o in compare_jobs]
    results = Parallel(n_jobs=n_jobs)(progress_bar(iterable=tasks, desc="analysing", unit="job", disable=not progress))
    compared = results[len(jobs):]
    results = results[:len(jobs)]
    tau_rows, sig_rows, pair_rows = [], [], []
    by_group: dict = {}
    for (n, mode, measure, _), (tau, sig, means) in zip(jobs, results):
        tau_rows.append({"n": n, "rb_scale": mode, **tau})
        sig_rows += [{"n": n, "rb_scale": mode, **row} for row in sig]
        by_group.setdefault((n, mode), {})[measure] = means
    for (n, mode), means in by_group.items():
        raw = agreement.measure_taus({m: v[0] for m, v in means.items()})
        scaled = agreement.measure_taus({m: v[1] for m, v in means.items()})
        for (a, b, t_raw), (_, _, t_scaled) in zip(raw, scaled):
            pair_rows.append({"n": n, "rb_scale": mode, "measure_a": a, "measure_b": b, "tau_raw": t_raw,
                              "tau_scaled": t_scaled, "delta_pct": agreement.delta_percent(t_scaled, t_raw)})
    extra = {}
    for key in ("conclusions", "transform_taus", "set_dependence", "inference"):
        extra[key] = _sorted(pd.DataFrame([row for part in compared for row in part[key]]))
    for key in ("conclusion_pairs", "inference_pairs"):
        frames = [part[key] for part in compared if not part[key].empty]
        extra[key] = _categorical(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame()
    meta = {"alpha": alpha, "tests": list(tests), "runs": int(scores["run"].nunique()),
            "topics": int(scores["topic"].nunique()),
            "measures": [str(m) for m in dict.fromkeys(scores["measure"])], "left_out": left_out,
            **({"sources": sources} if sources is not None else {})}
    if options is not None:
        ref_runs = set() if reference is None else set(reference["run"].astype(str))
        meta.update({"transforms": list(options.transforms), "baseline": options.baseline,
                     "permutations": options.permutations, "resamples": options.resamples,
                     "confidence": options.confidence, "seed": options.seed,
                     "leave_one_out": options.leave_one_out,
                     "reference_runs": None if reference is None else len(ref_runs),
                     "reference_runs_analysed": None if reference is None else
                     len(ref_runs & set(scores["run"].astype(str)))})
    return Analysis(pd.DataFrame(tau_rows), pd.DataFrame(pair_rows), pd.DataFrame(sig_rows),
                    time.perf_counter() - start, meta, **extra)


def _compare_jobs(scores: pd.DataFrame, options: Options) -> list[tuple]:
    """(n, measure, rows, options) of every comparison of transforms: per cutoff and
    measure, the scaling modes that allow the same transforms together
    (:func:`~irscale.scales.analysis.matrices.measure_transforms`; a measure without
    scaled values under raw and the standardisations, :func:`raw_only_transforms`; a
    group left with raw alone is not compared)."""
    jobs = []
    for n, group in scores.groupby("n", sort=True):
        for measure in group["measure"].unique():
            rows = group[group["measure"] == measure]
            by: dict = {}
            for mode, part in rows.groupby("rb_scale", sort=True):
                allowed = measure_transforms(part, options.transforms)
                if len(allowed) > 1 or allowed == options.transforms:     # raw alone compares nothing
                    by.setdefault(allowed, []).append(mode)
            for allowed, modes in by.items():
                jobs.append((int(n), measure, rows[rows["rb_scale"].isin(modes)],
                             options if allowed == options.transforms else replace(options, transforms=allowed)))
    return jobs


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows in (n, rb_scale) order, measures in the order of the scores (stable)."""
    if frame.empty:
        return frame
    return frame.sort_values(["n", "rb_scale"], kind="stable", ignore_index=True)


def _categorical(frame: pd.DataFrame) -> pd.DataFrame:
    """Repeated strings as categories (the per-pair tables hold millions of rows)."""
    return _sorted(compact(frame))
