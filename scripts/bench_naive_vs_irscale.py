"""Naive enumeration (what a user would write from the paper: materialise all runs,
score them with numpy, np.unique per measure and recall base) against `irscale build`,
for the paper's 11 measures at one N (default 24), measured in the same run.

    python scripts/bench_naive_vs_irscale.py [--n 24] [--jobs 2] [--repeat 3] [--layout table]

Each contender runs ``--repeat`` times in fresh processes, alternating (naive, irscale,
naive, ...), so that a change of load hits both; prints every run, the medians and spreads
of wall time and peak memory (whole process tree, sampled), their ratios, and the
machine's load average before and after, and the build seconds of each table inside the
last irscale build (what the 25-value tables P, R and RR cost in a build, start-up
excluded). ``--layout table`` makes irscale build every
table, as the naive code does (by default RBP with p > 1/2, DCG and nDCG are rank oracles,
which enumerate nothing). The naive distinct counts are float64 counts
(SPEC section 4: they are not exact); they are printed next to irscale's exact counts.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import gib, run_sampled  # noqa: E402

NAIVE = r'''
import json, sys
import numpy as np
n = int(sys.argv[1])
ids = np.arange(2 ** n, dtype=np.uint32)
runs = ((ids[:, None] >> np.arange(n - 1, -1, -1, dtype=np.uint32)) & 1).astype(np.uint8)   # (2^n, n)
k = np.arange(1, n + 1, dtype=np.float64)
rel = runs.sum(axis=1)
out = {}
def per_rb(name, score, rb_scale):
    counts = []
    for rb in range(1, n + 1):
        counts.append(len(np.unique(score[rel <= rb] * rb_scale(rb))))
    out[name] = counts[-1]
out["P"] = len(np.unique(rel / n))
per_rb("R", rel.astype(np.float64), lambda rb: 1.0 / rb)
prec = np.cumsum(runs, axis=1) / k
ap_sum = (prec * runs).sum(axis=1)
del prec
per_rb("AP", ap_sum, lambda rb: 1.0 / rb)
first = np.where(rel > 0, np.argmax(runs, axis=1) + 1, 0)
out["RR"] = len(np.unique(np.where(first > 0, 1.0 / np.maximum(first, 1), 0.0)))
for p in (0.3, 0.5, 0.8):
    out[f"RBP(p={p})"] = len(np.unique((1 - p) * (runs @ p ** (k - 1))))
for b in (2, 10):
    disc = np.where(k < b, 1.0, np.log(b) / np.log(k))
    dcg = runs @ disc
    out[f"DCG(b={b})"] = len(np.unique(dcg))
    ideal = np.cumsum(disc)
    per_rb(f"nDCG(b={b})", dcg, lambda rb: 1.0 / ideal[min(rb, n) - 1])
print(json.dumps(out))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=24)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each contender, alternating")
    ap.add_argument("--layout", default="auto", choices=("auto", "table"), help="irscale build --layout")
    args = ap.parse_args()
    load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {"naive numpy + np.unique": [], "irscale build": []}
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "t.h5"
        for i in range(args.repeat):
            naive = run_sampled([sys.executable, "-c", NAIVE, str(args.n)], stdout=open(Path(tmp) / "naive.json", "w"))
            if store.exists():
                store.unlink()
            ours = run_sampled(["irscale", "build", "--preset", "paper", "--depth", str(args.n), "--out", str(store),
                                "-q", "--jobs", str(args.jobs), "--layout", args.layout], stdout=open(os.devnull, "w"))
            assert naive["rc"] == 0 and ours["rc"] == 0, (naive, ours)
            runs["naive numpy + np.unique"].append(naive)
            runs["irscale build"].append(ours)
            print(f"run {i + 1}: naive {naive['seconds']:.1f} s, irscale {ours['seconds']:.1f} s "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
        naive_counts = json.loads((Path(tmp) / "naive.json").read_text())
        import irscale
        listed = irscale.open_store(store).tables()
        exact = {t["measure"].split("@")[0]: t["n_distinct"] for t in listed}
        inside = {t.measure: -1.0 if t.build_seconds is None else t.build_seconds for t in listed}
    load_after = os.getloadavg()
    print(f"N = {args.n}, paper set (11 measures, every recall base), irscale --jobs {args.jobs} "
          f"--layout {args.layout}, "
          f"{args.repeat} runs each, alternating; load average before {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} "
          f"({os.cpu_count()} cores)")
    print(f"{'':24s}{'median wall s':>14s}{'spread':>16s}{'peak (tree)':>14s}{'peak (1 proc)':>15s}")
    med = {}
    for name, rs in runs.items():
        t = [r["seconds"] for r in rs]
        med[name] = (statistics.median(t), statistics.median(r["peak_tree"] for r in rs))
        print(f"{name:24s}{med[name][0]:14.1f}{f'{min(t):.1f}-{max(t):.1f}':>16s}"
              f"{gib(max(r['peak_tree'] for r in rs)):>14s}{gib(max(r['peak_single'] for r in rs)):>15s}")
    (tn, mn), (ti, mi) = med["naive numpy + np.unique"], med["irscale build"]
    print(f"speed-up (median naive / median irscale wall time): {tn / ti:.2f}x")
    print(f"memory ratio (median irscale / median naive peak, process tree): {mi / mn:.3f}")
    print("build seconds of each table inside the last irscale build (as the store records them: from the "
          "end of the previous table to the end of this one, commits excluded):")
    print("  " + ", ".join(f"{name} {sec:.3f}" for name, sec in sorted(inside.items())))
    print("distinct values (rb = N where relevant): measure, naive float64, irscale exact")
    for name in sorted(exact):
        print(f"  {name:12s} {naive_counts.get(name, '-')!s:>12s} {exact[name]:>12d}")


if __name__ == "__main__":
    main()
