"""The paper's analyses (SPEC section 6) on graded data: TREC-COVID round 5 at the depth
TREC used, from the shared data to ``report.md``, in one command:

    python scripts/reproduce_trec_covid.py [--data ../shared/data/trec-covid5] [--work out/trec-covid]
                                           [--depth 20] [--jobs 2]

Measures: TREC-COVID's official ``nDCG_trec(gains=(0,1,2))@20`` (trec_eval ``ndcg_cut.20``,
gains = the levels 0/1/2), with ``P@20`` and ``RR@20`` on the qrels binarised at level 1
(trec_eval's default, as TREC-COVID's P@20). Steps (each skipped when its output exists, so
an interrupted run continues):

1. scales and scores: ``WORK/scores.parquet``, ``irscale transform`` of the 73 runs against
   ``qrels.covid-round5.txt`` with ``--rb-scale common`` and ``feasible``, ``--midranks``,
   building the missing scales into ``WORK/covid{N}.h5`` (graded nDCG: one rank oracle per
   per-grade count vector that bounds one grade, the table of the feasible runs of
   (7, 2), which bounds both; P and RR: tables of N + 1 values);
2. the official nDCG@20 of every run (``runs_included.tsv``) against the raw means
   (the README of the data: within 1e-4, the leaderboard's rounding);
3. the analysis (``irscale analyze``'s: tau raw vs scaled, measure vs measure, the eight
   tests with S2NS/NS2S, every transform compared, corrections, randomised Tukey HSD,
   effect sizes, bootstrap intervals), spacing of the stored tables and of the graded
   measure's common scale (1.5e9 values streamed from its rank oracle: about 6 minutes;
   also at N = 5, 10, 14) and the figures (values against runs: counted for the oracles);
4. ``WORK/report/report.md`` with the CSV/JSON tables and figures beside it.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: Cutoffs below N at which the spacing of the graded measure's common scale is added, for
#: comparison across depths.
SMALLER_DEPTHS = (5, 10, 14)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "trec-covid5")
    ap.add_argument("--work", type=Path, default=Path("out/trec-covid"))
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    import pandas as pd

    import irscale
    from irscale.errors import IrscaleWarning
    from irscale.scales.analysis.analyze import analyze
    from irscale.scales.analysis.axioms import add_axioms
    from irscale.scales.analysis.figures import (
        length4_figures,
        plot_transforms,
        plot_value_distributions,
    )
    from irscale.scales.analysis.report import write_report
    from irscale.scales.analysis.spacing import spacing_stats, store_spacing
    from irscale.store.format import table_name

    qrels = args.data / "qrels" / "qrels.covid-round5.txt"
    runs = args.data / "runs"
    official = args.data / "runs_included.tsv"
    if not qrels.is_file() or not runs.is_dir():
        sys.exit(f"no TREC-COVID round 5 data in {args.data} (qrels/qrels.covid-round5.txt and runs/)")
    n = args.depth
    graded = f"nDCG_trec(gains=(0,1,2))@{n}"
    measures = [graded, f"P@{n}", f"RR@{n}"]
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    report_dir = work / "report"
    store_path = work / f"covid{n}.h5"
    timings = {}

    scores_path = work / "scores.parquet"
    if not scores_path.exists():
        parts = []
        for mode in ("feasible", "common"):
            t0 = time.perf_counter()
            print(f"transforming the runs at N = {n} ({mode} scales)", flush=True)
            with warnings.catch_warnings():      # P and RR read levels >= 1 as relevant: on purpose
                warnings.filterwarnings("ignore", "the qrels have levels", IrscaleWarning)
                parts.append(irscale.transform(qrels, runs, measures, store_path, rb_scale=mode, midranks=True,
                                               build_missing=True, n_jobs=args.jobs, progress=True))
            timings[f"scales and transform ({mode})"] = time.perf_counter() - t0
        irscale.write_scores(pd.concat(parts, ignore_index=True), scores_path)
    scores = irscale.read_scores(scores_path)
    store = irscale.open_store(store_path)

    agreement = ""
    if official.is_file() and n == 20:
        board = pd.read_csv(official, sep="\t").set_index("tag")["ndcg@20"]
        means = scores[(scores.measure == graded) & (scores.rb_scale == "feasible")].groupby("run").raw.mean()
        diff = (means - board.reindex(means.index)).abs()
        agreement = (f" The raw nDCG@20 means of the {len(means)} runs equal the official leaderboard's (4 "
                     f"decimals) within {diff.max():.2e}.")
        print(agreement.strip(), flush=True)

    t0 = time.perf_counter()
    analysis = analyze(scores, n_jobs=args.jobs, progress=True)
    analysis.save(report_dir)
    timings["analysis"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as left_out:
        warnings.simplefilter("always", IrscaleWarning)
        rows = store_spacing(store)
    common = table_name(graded, irscale.parse_measure(graded).common_rb())
    skipped = [name for w in left_out if "left out" in str(w.message)
               and (name := str(w.message).split(" left out", 1)[0]) != common]
    print(f"spacing of {graded} on its common scale: streamed band by band", flush=True)
    rows += store_spacing(store, [graded])       # the common scale (N, N), asked by name: streamed
    graded_family = graded.rsplit("@", 1)[0]
    for depth in SMALLER_DEPTHS:                 # the graded measure where its oracles list their values
        if depth < n:
            m = irscale.parse_measure(f"{graded_family}@{depth}")
            rows.append(spacing_stats(irscale.scale(m, rb=m.common_rb())))
    spacing = add_axioms(rows)
    pd.DataFrame(spacing).drop(columns=["gap_hist_edges", "gap_hist_counts"], errors="ignore") \
        .to_csv(report_dir / "spacing.csv", index=False)
    timings["spacing"] = time.perf_counter() - t0

    t0 = time.perf_counter()

    def get_scale(name):
        m = irscale.parse_measure(name)
        return store.scale(m, m.common_rb()) if str(m) in measures else None

    figures = []
    paths = plot_value_distributions(get_scale, measures=[m.rsplit("@", 1)[0] for m in measures], ns=(n,),
                                     out_prefix=report_dir / "value-distributions")
    figures.append((f"Values against the fraction of runs (common scales, N = {n})",
                    Path([p for p in paths if str(p).endswith(".png")][0]).name))
    figures += length4_figures(measures, report_dir)               # the measures analysed, at length 4
    name, paths = plot_transforms(scores, graded, analysis.meta["transforms"], report_dir / "transforms")
    figures.insert(0, (f"{name}: per-topic scores under every transform against the raw scores, for four topics",
                       Path([p for p in paths if str(p).endswith(".png")][0]).name))
    timings["figures"] = time.perf_counter() - t0

    vectors = sorted({tuple(t["rb_counts"]) for t in store.tables() if t["measure"] == graded and t.get("rb_counts")})
    tables = [v for v in vectors if store.layout_of(graded, v) != "oracle"]
    both = (f"the table of the feasible runs for {' and '.join(map(str, tables))}, which bound"
            f"{'s' if len(tables) == 1 else ''} several grades" if tables else "no table")
    preamble = (f"TREC-COVID round 5: the 73 official runs of all 28 teams in `../shared/data/trec-covid5`, the "
                f"50 topics of `qrels.covid-round5.txt` (levels 0/1/2). {graded} is trec_eval's `ndcg_cut.{n}` "
                f"(gains = levels); P@{n} and RR@{n} read the qrels binarised at level 1. The topics need "
                f"{len(vectors)} per-grade count vectors (c_1, c_2) capped at {n}: "
                f"{', '.join(str(v) for v in vectors)}; each is an exact scale (rank oracles for the vectors "
                f"that bound at most one grade, {both})."
                + agreement
                + (f" The spacing of {graded_family} is given on its common scale (streamed band by band from "
                   f"its rank oracle), on the table{'s' if len(tables) > 1 else ''} of "
                   f"{', '.join(map(str, tables)) or 'no vector'} and, for comparison, on the common scales at N = "
                   f"{', '.join(str(d) for d in SMALLER_DEPTHS if d < n)}; the oracles of the other count vectors "
                   f"(left out: {'; '.join(skipped)}) would stream the same way, one at a time "
                   f"(spacing_stats(store.scale(measure, rb=...)))." if skipped else "")
                + " Timings of this run (steps whose output existed were reused and are not listed): "
                + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()) + ".")
    path = write_report(analysis, report_dir, spacing=spacing, figures=figures, preamble=preamble,
                        title=f"Interval scales on graded data: TREC-COVID round 5 at N = {n}")
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
