"""Reproduce the paper's analyses (SPEC section 6) on TREC-8, from the shared data to
``report.md``, in one command:

    python scripts/reproduce_trec8.py [--data ../shared/data/trec8] [--work out/trec8] [--depths 5 10 20 30]
                                      [--jobs 2]

Steps (each skipped when its output exists, so an interrupted run continues):

1. tables: ``WORK/paper{N}.h5`` with the 11 paper measures for each N (``irscale build
   --preset paper --depth N``; N = 30 takes about 11 minutes and 19 GB);
2. scores: ``WORK/scores-{N}.parquet``, ``irscale transform`` of all 129 runs with both
   ``--rb-scale common`` and ``feasible`` and ``--midranks``;
3. analysis (``irscale.scales.analysis.analyze``: the paper's analyses and every transform
   compared, with corrections, randomised Tukey HSD, effect sizes and bootstrap intervals),
   spacing of every table and the figures;
4. ``WORK/report/report.md`` with the CSV/JSON tables and figures beside it.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "trec8")
    ap.add_argument("--work", type=Path, default=Path("out/trec8"))
    ap.add_argument("--depths", type=int, nargs="+", default=[5, 10, 20, 30])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tests", help="comma-separated subset of the significance tests (default: all)")
    args = ap.parse_args()

    import pandas as pd

    import irscale
    from irscale.presets import preset_measures
    from irscale.scales.analysis.analyze import analyze
    from irscale.scales.analysis.axioms import add_axioms
    from irscale.scales.analysis.figures import (
        length4_figures,
        plot_transforms,
        plot_value_distributions,
    )
    from irscale.scales.analysis.report import write_report
    from irscale.scales.analysis.spacing import store_spacing

    qrels = args.data / "qrels.trec8.adhoc.txt"
    runs = args.data / "runs"
    if not qrels.is_file() or not runs.is_dir():
        sys.exit(f"no TREC-8 data in {args.data} (qrels.trec8.adhoc.txt and runs/)")
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    report_dir = work / "report"
    timings = {}

    stores = {}
    for n in args.depths:
        path = work / f"paper{n}.h5"
        t0 = time.perf_counter()
        names = preset_measures("paper", n)
        existing = {t["measure"] for t in irscale.open_store(path).tables()} if path.exists() else set()
        if not set(names) <= existing:
            print(f"building the paper tables at N = {n} into {path}", flush=True)
            irscale.build_store(path, names, n_jobs=args.jobs, progress=True)
            timings[f"tables N={n}"] = time.perf_counter() - t0
        stores[n] = irscale.open_store(path)

    frames = []
    for n in args.depths:
        path = work / f"scores-{n}.parquet"
        t0 = time.perf_counter()
        if not path.exists():
            print(f"transforming the runs at N = {n}", flush=True)
            parts = [irscale.transform(qrels, runs, preset_measures("paper", n), stores[n], rb_scale=mode,
                                       midranks=True, progress=True) for mode in ("common", "feasible")]
            irscale.write_scores(pd.concat(parts, ignore_index=True), path)
            timings[f"transform N={n}"] = time.perf_counter() - t0
        frames.append(irscale.read_scores(path))
    scores = pd.concat(frames, ignore_index=True)

    t0 = time.perf_counter()
    tests = args.tests.split(",") if args.tests else None
    analysis = analyze(scores, tests=tests, n_jobs=args.jobs, progress=True)
    analysis.save(report_dir)
    timings["analysis"] = time.perf_counter() - t0
    print(f"analysis: {analysis.seconds:.0f} s", flush=True)

    t0 = time.perf_counter()
    spacing = add_axioms([row for n in args.depths for row in store_spacing(stores[n])])
    pd.DataFrame(spacing).drop(columns=[c for c in ("gap_hist_edges", "gap_hist_counts") if c in spacing[0]]) \
        .to_csv(report_dir / "spacing.csv", index=False)
    timings["spacing"] = time.perf_counter() - t0

    t0 = time.perf_counter()

    def get_scale(name):
        m = irscale.parse_measure(name)
        return stores[m.n].scale(m, m.common_rb())

    figures = []
    ns = tuple(n for n in args.depths)
    paths = plot_value_distributions(get_scale, ns=ns, out_prefix=report_dir / "value-distributions")
    figures.append((f"Values against the fraction of runs (N = {', '.join(map(str, ns))})",
                    Path([p for p in paths if str(p).endswith(".png")][0]).name))
    figures += length4_figures(dict.fromkeys(scores["measure"].astype(str)), report_dir)   # the measures analysed
    top = max(args.depths)
    name, paths = plot_transforms(scores[scores.n == top], f"AP@{top}", analysis.meta["transforms"],
                                  report_dir / "transforms")
    figures.insert(0, (f"{name}: per-topic scores under every transform against the raw scores, for four topics",
                       Path([p for p in paths if str(p).endswith(".png")][0]).name))
    timings["figures"] = time.perf_counter() - t0

    preamble = ("TREC-8 ad hoc: all 129 submitted runs, the 50 topics of the official qrels (binary). "
                "Scores from `irscale transform` (trec_eval conventions); ranks are exact unq ranks from the "
                "tables. Timings of this run (steps whose output existed were reused and are not listed): "
                + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()) + ".")
    path = write_report(analysis, report_dir, spacing=spacing, figures=figures, preamble=preamble,
                        title="Interval scales on TREC-8")
    print(f"report: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
