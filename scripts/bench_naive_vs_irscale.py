"""Naive enumeration (what a user would write from the paper: materialise all runs,
score them with numpy, np.unique per measure and recall base) against `irscale build`,
for the paper's 11 measures at one N (default 24), measured in the same run.

    python scripts/bench_naive_vs_irscale.py [--n 24] [--jobs 2]

Prints wall time and peak memory (whole process tree, sampled) of both and their
ratios. The naive distinct counts are float64 counts (SPEC section 4: they are not
exact); they are printed next to irscale's exact counts.
"""
from __future__ import annotations

import argparse
import json
import os
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
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        naive = run_sampled([sys.executable, "-c", NAIVE, str(args.n)], stdout=open(Path(tmp) / "naive.json", "w"))
        store = Path(tmp) / "t.h5"
        ours = run_sampled(["irscale", "build", "--preset", "paper", "--depth", str(args.n), "--out", str(store),
                            "-q", "--jobs", str(args.jobs)], stdout=open(os.devnull, "w"))
        assert naive["rc"] == 0 and ours["rc"] == 0, (naive, ours)
        naive_counts = json.loads((Path(tmp) / "naive.json").read_text())
        import irscale
        exact = {t["measure"].split("@")[0]: t["n_distinct"] for t in irscale.open_store(store).tables()}
    print(f"N = {args.n}, paper set (11 measures, every recall base), irscale --jobs {args.jobs}")
    print(f"{'':24s}{'wall s':>10s}{'peak (tree)':>14s}{'peak (1 proc)':>15s}")
    for name, r in (("naive numpy + np.unique", naive), ("irscale build", ours)):
        print(f"{name:24s}{r['seconds']:10.1f}{gib(r['peak_tree']):>14s}{gib(r['peak_single']):>15s}")
    print(f"speed-up (naive / irscale wall time): {naive['seconds'] / ours['seconds']:.2f}x")
    print(f"memory ratio (irscale / naive peak, process tree): {ours['peak_tree'] / naive['peak_tree']:.3f}")
    print("distinct values (rb = N where relevant): measure, naive float64, irscale exact")
    for name in sorted(exact):
        print(f"  {name:12s} {naive_counts.get(name, '-')!s:>12s} {exact[name]:>12d}")


if __name__ == "__main__":
    main()
