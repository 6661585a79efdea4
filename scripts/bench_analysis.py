"""Speed of the whole TREC-8 analysis with every transform (issue 16): 129 runs x 50 topics,
8,256 system pairs, the 11 paper measures in both ``rb_scale`` modes, the eight tests under
the seven transforms (raw, unq, midrank, zscore, zscore-cdf, std-linear, ecdf), Holm and
Benjamini-Hochberg corrections, randomised Tukey HSD (B = 1,000), Cohen's d and paired
bootstrap intervals (B = 1,000), the report and its figure.

Each contender is a fresh ``irscale analyze`` process (start-up, reading the scores,
writing every table and the report included), timed from outside with its peak memory;
the contenders alternate, ``--repeat`` times (medians and spread printed), and the
machine's load is printed before and after:

``paper``      the paper's analyses only (``--transforms none``), as before this issue;
``everything`` every transform, test, correction, randomised Tukey HSD and bootstrap.

    python scripts/bench_analysis.py --scores out/trec8/scores-30.parquet [--jobs 2] [--repeat 3]
    python scripts/bench_analysis.py --depth 10 --work /tmp/bench-analysis      # builds what it needs

With ``--depth N`` (and no --scores) the paper tables at N are built in WORK (N = 10: a
few seconds) and all 129 TREC-8 runs transformed with both scalings and mid-ranks; the
analysis' cost hardly depends on N (the matrices are 50 x 129 whatever N is).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import gib, run_sampled  # noqa: E402

TARGET_SECONDS = 120


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _scores(args) -> list[Path]:
    if args.scores:
        return [Path(p) for p in args.scores]
    data = args.data
    qrels, runs = data / "qrels.trec8.adhoc.txt", data / "runs"
    if not qrels.is_file() or not runs.is_dir():
        sys.exit(f"no TREC-8 data in {data} (qrels.trec8.adhoc.txt and runs/); give --scores or --data")
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-analysis-"))
    work.mkdir(parents=True, exist_ok=True)
    store = work / f"paper{args.depth}.h5"
    irscale = [sys.executable, "-m", "irscale"]
    if not store.exists():
        subprocess.run(irscale + ["build", "--preset", "paper", "--depth", str(args.depth), "--out", str(store),
                                  "--jobs", str(args.jobs), "-q"], check=True, cwd=work)
    out = []
    for mode in ("feasible", "common"):
        path = work / f"scores-{args.depth}-{mode}.parquet"
        if not path.exists():
            subprocess.run(irscale + ["transform", "--qrels", str(qrels), "--runs", str(runs), "--preset", "paper",
                                      "--depth", str(args.depth), "--store", str(store), "--rb-scale", mode,
                                      "--midranks", "-o", str(path), "-q"], check=True, cwd=work)
        out.append(path)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scores", nargs="+", help="scores files of 'irscale transform' (both modes, --midranks)")
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "trec8")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--work", help="folder for the tables and scores built with --depth (default: a temporary one)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    scores = _scores(args)
    print(f"scores: {', '.join(map(str, scores))}; jobs {args.jobs}; {os.cpu_count()} cores; load {_load()}")
    contenders = {
        "paper": ["--transforms", "none"],
        "everything": ["--permutations", "1000", "--resamples", "1000"],
    }
    times: dict[str, list[float]] = {name: [] for name in contenders}
    peaks: dict[str, list[int]] = {name: [] for name in contenders}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            order = list(contenders) if r % 2 == 0 else list(reversed(contenders))
            for name in order:
                out = Path(tmp) / f"{name}-{r}"
                cmd = [sys.executable, "-m", "irscale", "analyze", *map(str, scores), "-o", str(out), "-q",
                       "-j", str(args.jobs), *contenders[name]]
                got = run_sampled(cmd, cwd=tmp)
                if got["rc"] != 0:
                    sys.exit(f"{name}: irscale analyze failed (exit {got['rc']})")
                times[name].append(got["seconds"])
                peaks[name].append(got["peak_tree"])
                print(f"  round {r + 1} {name:>10}: {got['seconds']:6.1f} s, peak {gib(got['peak_tree'])} "
                      f"(load {_load()})", flush=True)
        sizes = sum(p.stat().st_size for p in (Path(tmp) / "everything-0").iterdir())
    print()
    print(f"{'contender':>10}  {'median':>8}  {'spread':>15}  {'peak memory':>12}")
    for name in contenders:
        t = times[name]
        print(f"{name:>10}  {statistics.median(t):7.1f}s  {min(t):6.1f}-{max(t):6.1f} s  {gib(max(peaks[name])):>12}")
    every = statistics.median(times["everything"])
    print(f"\neverything / paper: {every / statistics.median(times['paper']):.1f}x; output of 'everything' "
          f"{sizes / 2 ** 20:.0f} MiB; target <= {TARGET_SECONDS} s: {'met' if every <= TARGET_SECONDS else 'NOT met'}")
    print(f"load after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
