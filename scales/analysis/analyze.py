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
   scaled), NS2S (the reverse), Delta% = (S2NS + NS2S) / Sig * 100.

Systems are the table's runs, topics its topics; every run must have a score on every
topic (``irscale transform`` guarantees it).
"""
from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
from joblib import Parallel, delayed
from tqdm.auto import tqdm

from irscale.errors import IrscaleError, IrscaleWarning
from irscale.scales.analysis import agreement
from irscale.scales.analysis.significance import TESTS, pairwise_significance
from irscale.scales.runs.scores import COLUMNS, read_scores

if TYPE_CHECKING:
    import numpy as np

#: Significance level of every test.
ALPHA = 0.05


@dataclass
class Analysis:
    """Results of :func:`analyze`, one DataFrame per kind of table.

    ``tau_scaled``: n, rb_scale, measure, systems, topics, tau_unq, tau_midrank,
    topic_tau_min, topics_checked, topics_constant.
    ``tau_measures``: n, rb_scale, measure_a, measure_b, tau_raw, tau_scaled, delta_pct.
    ``significance``: n, rb_scale, measure, test, pairs, sig, s2ns, ns2s, delta_pct.
    """

    tau_scaled: pd.DataFrame
    tau_measures: pd.DataFrame
    significance: pd.DataFrame
    seconds: float = 0.0
    meta: dict = field(default_factory=dict)

    def save(self, folder: str | Path) -> list[Path]:
        """Write the three tables as CSV and everything as ``analysis.json``."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in ("tau_scaled", "tau_measures", "significance"):
            path = folder / f"{name}.csv"
            getattr(self, name).to_csv(path, index=False)
            paths.append(path)
        doc = {"seconds": self.seconds, "meta": self.meta,
               **{name: json.loads(getattr(self, name).to_json(orient="records"))
                  for name in ("tau_scaled", "tau_measures", "significance")}}
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
    missing = [c for c in COLUMNS if c not in scores.columns]
    if missing:
        raise IrscaleError(f"not a scores table of 'irscale transform': no column {', '.join(missing)}")


def _check_scores(scores: pd.DataFrame, tests: tuple[str, ...]) -> None:
    if scores.empty:
        raise IrscaleError("the scores table is empty")
    if scores["scaled"].isna().any():
        raise IrscaleError("the scores have no scaled values (written without --store or with --raw-only): "
                           "run 'irscale transform' with --store")
    for (mode, measure), rows in scores.groupby(["rb_scale", "measure"], sort=True):
        runs, topics = rows["run"].unique(), rows["topic"].nunique()
        if len(runs) < 2:
            raise IrscaleError(f"{measure} ({mode}): the scores hold a single run ({runs[0]}); the analyses "
                               "compare runs (systems), give the scores of at least 2")
        if tests and topics < 2:
            raise IrscaleError(f"{measure} ({mode}): the significance tests need at least 2 topics, the scores "
                               "hold 1; give more topics or skip the tests (--tests none, or tests=())")


def _drop_undefined(scores: pd.DataFrame) -> pd.DataFrame:
    """Leave out the topics on which a measure is undefined (no raw score for any run,
    e.g. Twist with N < 2 RB), with a warning; a measure left with fewer than 2 topics is
    left out whole."""
    if "raw" not in scores.columns or not scores["raw"].isna().any():
        return scores

    keys = ["n", "rb_scale", "measure", "topic"]
    undefined = scores.assign(_u=scores["raw"].isna()).groupby(keys)["_u"].transform("all")
    out = scores[~undefined]
    for measure, rows in scores[undefined].groupby("measure"):
        left = out.loc[out["measure"] == measure, "topic"].nunique()
        warnings.warn(f"{measure} is undefined on {rows['topic'].nunique()} topic(s) (no score for any run); "
                      f"analysed on the other {left}" + ("" if left >= 2 else ": too few, left out"),
                      IrscaleWarning, stacklevel=3)
        if left < 2:
            out = out[out["measure"] != measure]
    return out


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


def analyze(scores: pd.DataFrame | str | Path | Iterable[str | Path], tests: Iterable[str] | None = None,
            alpha: float = ALPHA, n_jobs: int = 1, progress: bool = False, sources: Iterable[str] | None = None
            ) -> Analysis:
    """Run the analyses of SPEC section 6 on a scores table.

    Parameters
    ----------
    scores : DataFrame, path or paths
        Output of :func:`irscale.transform` (with ``store``; ``midranks=True`` for the
        mid-rank tau), possibly several cutoffs and both ``rb_scale`` modes concatenated;
        or scores files (:func:`load_scores`).
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

    Raises
    ------
    IrscaleError
        When the scores cannot be analysed (no scaled values, a single run, a single
        topic with significance tests, an unknown test).
    SelfCheckError
        When the topic-by-topic tau is not 1 somewhere.
    """
    start = time.perf_counter()
    if not isinstance(scores, pd.DataFrame):
        paths = [scores] if isinstance(scores, (str, Path)) else list(scores)
        if sources is None:
            sources = [Path(p).name for p in paths]
        scores = load_scores(paths)
    sources = None if sources is None else [str(x) for x in sources]
    _check_columns(scores)
    scores = _drop_undefined(scores)
    tests = TESTS if tests is None else tuple(tests)
    unknown = sorted(set(tests) - set(TESTS))
    if unknown:
        raise IrscaleError(f"unknown test(s) {', '.join(unknown)}; known: {', '.join(TESTS)}")
    _check_scores(scores, tests)
    jobs = []
    for (n, mode), group in scores.groupby(["n", "rb_scale"], sort=True):
        for measure in group["measure"].unique():
            jobs.append((int(n), mode, measure, group[group["measure"] == measure]))
    results = Parallel(n_jobs=n_jobs)(
        delayed(_analyze_measure)(g, m, tests, alpha)
        for _, _, m, g in tqdm(jobs, desc="analysing", unit="measure", disable=not progress))
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
    return Analysis(pd.DataFrame(tau_rows), pd.DataFrame(pair_rows), pd.DataFrame(sig_rows),
                    time.perf_counter() - start,
                    {"alpha": alpha, "tests": list(tests), "runs": int(scores["run"].nunique()),
                     "topics": int(scores["topic"].nunique()),
                     **({"sources": sources} if sources is not None else {})})
