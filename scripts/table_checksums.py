"""Build a fixed set of tables and print what identifies them: per table its checksum,
entries, distinct values, runs and certificate (JSON, one object keyed by table name).

    python scripts/table_checksums.py --work /tmp/sums > sums.json

Run it with two installs of irscale (say, before and after a refactoring) and compare
the outputs: equal checksums mean bit-identical datasets. Only the public API is used
(``irscale.build_store``, ``irscale.open_store``), so any version with that API runs it.
The set: the paper preset at N = 20 (every recall base), graded tables (per-grade count
vectors), Twist/CRP per topic, the utilities over truncated rankings (fraction and
multi-limb formal keys) and OIE, at small N. ``--quick`` uses N = 12 for the paper set.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

PAPER = ["P", "R", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(b=2)", "DCG(b=10)", "nDCG(b=2)",
         "nDCG(b=10)"]
GRADED = {
    "nDCG(b=2,gains=(0,1,2))@8": [(2, 3), (8, 8), (0, 4)],
    "gR(gains=(0,1,2))@8": [(1, 1), (8, 8)],
    "nDCG_trec(gains=(0,1,2,3))@6": [(1, 1, 1), (6, 6, 6)],
    "ERR(gains=(0,1,2))@10": None,
    "ERR(gains=(0,1,5))@9": None,
    "ERR@20": None,
    "DCG(b=2,gains=(0,1,2))@10": None,
    "RBP(gains=(0,1,2),p=0.8)@10": None,
    "gP(gains=(0,1,2))@10": None,
    "RR(gains=(0,1,2),rel=2)@10": None,
    "F1@16": None,
    "nDCG_trec@16": None,
}
PER_TOPIC = {
    "Twist@12": [(3,), (4,)],
    "Twist(crossing=literal,grades=3)@10": [(2, 1, 1)],
    "CRP(ind=rho)@12": [(3,)],
    "CRP(ind=b_ratio,grades=2)@10": [(2, 2)],
    "CRP(grades=2,ind=min)@10": [(1, 3)],
    "CRP(ind=n)@10": [(4,)],
    "OIE@8": [(2,)],
    "OIE(grades=2)@6": [(1, 2)],
}
TRUNCATED = ["RBPU(p=0.8)@8", "FlatU@8", "ERRU@8", "RBU(p=0.8)@8", "DCGU@8", "RBPU(p=0.99)@12",
             "FlatU(grades=2)@6"]
SKIP = {"created", "generator_version", "build_seconds", "path"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, help="Folder for the store (created).")
    ap.add_argument("--quick", action="store_true", help="Paper set at N = 12 instead of 20.")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    import irscale

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    path = work / "sums.h5"
    if path.exists():
        path.unlink()
    n = 12 if args.quick else 20
    t0 = time.perf_counter()
    irscale.build_store(path, [f"{m}@{n}" for m in PAPER], n_jobs=args.jobs)
    canonical = lambda d: {str(irscale.parse_measure(k)): v for k, v in d.items() if v is not None}  # noqa: E731
    irscale.build_store(path, list(GRADED), n_jobs=args.jobs, rb_counts=canonical(GRADED))
    irscale.build_store(path, list(PER_TOPIC), n_jobs=args.jobs, rb_counts=canonical(PER_TOPIC))
    irscale.build_store(path, TRUNCATED, n_jobs=args.jobs)
    out = {}
    for t in irscale.open_store(path).tables():
        out[t["name"]] = {k: v for k, v in sorted(t.to_json().items()) if k not in SKIP}
    json.dump(out, sys.stdout, indent=1, sort_keys=True, default=str)
    print()
    print(f"{len(out)} tables in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
