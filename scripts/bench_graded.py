"""How far exact tables of graded measures go on this machine: build each measure at
each N with ``irscale build`` in a fresh process and print wall time, the peak resident
memory of the process tree and the number of distinct values (from the store).

    python scripts/bench_graded.py --work /tmp/graded \
        --measure "DCG(b=2,gains=(0,1,2))" 14 15 16 --measure "nDCG_trec(gains=(0,1,2,3))" 12 13

Graded RB-dependent measures (gR, nDCG with gains) are built for the all-runs count
vector (N, ..., N) plus ``--rb`` vectors if given; measures with per-topic tables (Twist,
CRP, OIE) for the ``--rb`` vectors. The distinct column is the largest table's. A measure
stops at the first N that fails or exceeds ``--max-seconds`` / ``--max-gib``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _measure import gib, run_sampled  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, type=Path, help="folder for the stores (one per build)")
    ap.add_argument("--measure", nargs="+", action="append", required=True, metavar=("NAME", "N"),
                    help="a measure name without cutoff followed by the cutoffs to try")
    ap.add_argument("--rb", default=None, help="extra per-grade count vectors, e.g. '(3,2),(1,0)'")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-seconds", type=float, default=1800)
    ap.add_argument("--max-gib", type=float, default=12)
    ap.add_argument("--json", type=Path, help="also write the rows here")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    import irscale
    rows = []
    print(f"{'measure':42} {'runs':>14} {'tables':>6} {'distinct':>14} {'seconds':>9} {'peak':>10}")
    print("(runs: of the largest table; distinct: its distinct values)")
    for name, *ns in args.measure:
        for n in map(int, ns):
            m = irscale.parse_measure(f"{name}@{n}")
            store = args.work / f"{irscale.scales.tables.entry_build.safe_name(str(m))}.h5"
            store.unlink(missing_ok=True)
            cmd = [sys.executable, "-m", "irscale", "build", "-m", str(m), "--out", str(store), "-j", str(args.jobs),
                   "-q"]
            if m.per_grade_rb:
                common = m.common_rb() if m.has_common_scale() else None
                vectors = [v for v in ([args.rb] if args.rb else []) +
                           ([f"({','.join(map(str, common))})"] if common is not None else [])]
                if not vectors:
                    raise SystemExit(f"{m} has per-topic tables: give --rb")
                cmd += ["--rb", ",".join(vectors)]
            r = run_sampled(cmd, stdout=subprocess.DEVNULL)
            ok = r["rc"] == 0
            tables = irscale.open_store(store).tables() if ok else []
            distinct = max((t["n_distinct"] for t in tables), default=-1)
            runs = max((t["n_runs"] for t in tables), default=m.levels ** n)   # feasible / truncated space
            row = {"measure": str(m), "runs": runs, "tables": len(tables), "distinct": distinct,
                   "seconds": round(r["seconds"], 1), "peak_gib": round(r["peak_tree"] / 2 ** 30, 2), "rc": r["rc"]}
            rows.append(row)
            print(f"{str(m):42} {row['runs']:>14,} {row['tables']:>6} {distinct:>14,} {r['seconds']:>9.1f} "
                  f"{gib(r['peak_tree']):>10}" + ("" if ok else f"  FAILED rc={r['rc']}"), flush=True)
            store.unlink(missing_ok=True)
            if not ok or r["seconds"] > args.max_seconds or r["peak_tree"] > args.max_gib * 2 ** 30:
                break
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
