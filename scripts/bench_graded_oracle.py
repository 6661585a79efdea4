"""The targets of the graded oracles (issue 40), on 2 cores:

``compare``  ``irscale compare -m "nDCG@20,nDCG@10,RR"`` on the shared RAG 2024 qrels and run,
             from nothing built (a fresh store each time: cold) and again on that store
             (warm); targets 60 s cold, 15 s warm, every scale exact (read off ``--explain``).
``lookups``  10,000 rank lookups (``Scale.rank_runs`` of random feasible runs) of nDCG@20 over
             4 levels for count vectors that bound several grades (graded oracles) and one
             grade (one-grade oracles), each in a fresh process: the seconds to open the
             scale (its K counted) and to rank the 10,000 runs; target 5 s for the lookups.

Contenders alternate, ``--repeat`` times (medians and spread printed, peak memory of the
process tree), and the machine's load is printed before and after.

    python scripts/bench_graded_oracle.py --part compare lookups --repeat 3
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _measure import gib, run_sampled  # noqa: E402

DATA = HERE.parent.parent / "shared" / "data" / "rag24"
MEASURE = "nDCG_trec(gains=(0,1,2,3))@20"
#: Count vectors (c_1, c_2, c_3) at N = 20: several grades bounded (RAG 2024-like), one bounded.
VECTORS = ["(3,5,2)", "(8,4,6)", "(12,3,1)", "(20,20,5)", "(20,7,20)"]
TARGETS = {"cold": 60.0, "warm": 15.0, "lookups": 5.0}


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _compare(store: Path) -> tuple[dict, bool]:
    qrels, run = DATA / "qrels.rag24.txt", DATA / "run.rag24.gz"
    cmd = [sys.executable, "-m", "irscale", "compare", "--qrels", str(qrels), "--runs", str(run),
           "-m", "nDCG@20,nDCG@10,RR", "--explain", "-y", "--store", str(store)]
    with tempfile.TemporaryFile() as err:
        got = run_sampled(cmd, stdout=subprocess.DEVNULL, stderr=err)
        err.seek(0)
        lines = [x for x in err.read().decode().splitlines() if x.startswith("irscale: scale of ")]
    exact = len(lines) == 3 and all(": exact: " in x for x in lines)
    return got, exact


def _part_compare(repeat: int) -> bool:
    if not (DATA / "qrels.rag24.txt").is_file():
        print(f"compare: skipped: no RAG 2024 data in {DATA}")
        return True
    times: dict[str, list] = {"cold": [], "warm": []}
    peaks: dict[str, list] = {"cold": [], "warm": []}
    exact = True
    with tempfile.TemporaryDirectory(prefix="bench-graded-oracle-") as work:
        for i in range(repeat):
            store = Path(work) / f"store{i}.h5"
            for kind in ("cold", "warm"):
                got, ok = _compare(store)
                if got["rc"] != 0:
                    print(f"compare {kind}: exit code {got['rc']}")
                    return False
                exact &= ok
                times[kind].append(got["seconds"])
                peaks[kind].append(got["peak_tree"])
    ok = exact
    for kind in ("cold", "warm"):
        med = statistics.median(times[kind])
        met = med <= TARGETS[kind]
        ok &= met
        print(f"compare {kind:5} median {med:6.1f} s  (runs {', '.join(f'{t:.1f}' for t in times[kind])})  "
              f"peak {gib(max(peaks[kind]))}  target {TARGETS[kind]:.0f} s: {'met' if met else 'NOT met'}")
    print(f"compare: every scale exact: {exact}")
    return ok


def _one_lookup(vector: str, store: str, count: int) -> None:
    """Child: open the scale of MEASURE for ``vector`` and rank ``count`` random runs."""
    import numpy as np

    import irscale
    caps = json.loads(vector.replace("(", "[").replace(")", "]"))
    m = irscale.parse_measure(MEASURE)
    rng = np.random.default_rng(7)
    runs = rng.integers(0, m.levels, (count, m.n))
    for g, cap in enumerate(caps, start=1):       # keep each grade within its count
        over = np.cumsum(runs == g, axis=1) > cap
        runs[(runs == g) & over] = 0
    s = irscale.open_store(store) if Path(store).exists() else None
    t0 = time.perf_counter()
    scale = s.scale(m, rb=tuple(caps)) if s is not None else irscale.scale(m, rb=tuple(caps))
    k = scale.k
    t1 = time.perf_counter()
    ranks = scale.rank_runs(runs)
    t2 = time.perf_counter()
    assert ranks.min() >= 1 and ranks.max() <= k
    print(json.dumps({"open": t1 - t0, "ranks": t2 - t1, "k": int(k), "layout": type(scale).__name__}))


def _part_lookups(repeat: int, count: int) -> bool:
    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-graded-lookups-") as work:
        store = Path(work) / "store.h5"
        vecs = ",".join(VECTORS)
        subprocess.run([sys.executable, "-m", "irscale", "build", "--measures", MEASURE, "--rb", vecs, "--out",
                        str(store), "-q"], check=True)
        rows: dict[str, list] = {v: [] for v in VECTORS}
        for _ in range(repeat):
            for v in VECTORS:                        # alternating
                out = subprocess.run([sys.executable, __file__, "--child", v, str(store), str(count)], check=True,
                                     capture_output=True, text=True).stdout
                rows[v].append(json.loads(out.strip().splitlines()[-1]))
        print(f"{'counts':12} {'scale':20} {'K':>16} {'open s':>8} {f'{count} ranks s':>14}  "
              f"target {TARGETS['lookups']} s")
        for v, got in rows.items():
            op = statistics.median(r["open"] for r in got)
            rk = statistics.median(r["ranks"] for r in got)
            spread = f"{min(r['ranks'] for r in got):.2f}-{max(r['ranks'] for r in got):.2f}"
            met = rk <= TARGETS["lookups"]
            ok &= met
            print(f"{v:12} {got[0]['layout']:20} {got[0]['k']:16,} {op:8.2f} {rk:8.2f} ({spread})  "
                  f"{'met' if met else 'NOT met'}")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", nargs="+", choices=["compare", "lookups"], default=["compare", "lookups"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--count", type=int, default=10_000, help="rank lookups per count vector")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        _one_lookup(args.child[0], args.child[1], int(args.child[2]))
        return 0
    print(f"load before: {_load()}  ({os.cpu_count()} cores)")
    ok = True
    if "compare" in args.part:
        ok &= _part_compare(args.repeat)
    if "lookups" in args.part:
        ok &= _part_lookups(args.repeat, args.count)
    print(f"load after: {_load()}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
