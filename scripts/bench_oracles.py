"""Rank oracles against tables (issue 15): store size and build time, value lookups from a
freshly opened store at N = 30 and N = 40, transforms of TREC-8 from an oracle store and a
full store side by side, and the exactness of oracle ranks against stored tables.

    python scripts/bench_oracles.py --full ../bench/paper30 [--work DIR] [--repeat 3]
        [--skip-build] [--exact-runs 1000000] [--data ../shared/data/trec8]

Parts (each prints the machine's load before and after):

1. ``irscale build --preset paper --depth 30 --jobs 2`` into a fresh oracle store: wall
   time and size on disk (``--skip-build`` reuses WORK/paper30-oracles.h5).
2. 10,000 value lookups of RBP(p=0.8), DCG(b=2) and nDCG(b=2) at RB = 12: each set in a
   fresh process that opens the store, takes the scale and ranks the values (the values
   of random judged runs); seconds of that phase and the process's peak memory. At N = 30
   from the oracle store and from ``--full`` (alternating, ``--repeat`` times, medians);
   at N = 40 from a store of the three oracles.
3. ``irscale transform`` of all TREC-8 runs for the 11 paper measures at N = 30 from the
   oracle store and from ``--full``, alternating, ``--repeat`` times, medians; the two
   outputs compared cell by cell.
4. ``--exact-runs`` random runs at N = 30 (relevance probability drawn per run) ranked by
   every oracle of the store and by the table of ``--full`` (nDCG(b=2) at RB = 5, 12, 30):
   the number of runs whose ranks differ (must be 0).
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
LOOKUPS = [("RBP(p=0.8)@{n}", None), ("DCG(b=2)@{n}", None), ("nDCG(b=2)@{n}", 12)]


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def _lookup_child(store: str, name: str, rb: str, values: str) -> None:
    """The child of part 2: open, scale, rank; prints JSON (seconds, peak memory)."""
    import resource

    import numpy as np
    x = np.load(values)
    import irscale
    t0 = time.perf_counter()
    irscale.scale("P@4").rank_runs([[1, 0, 0, 0]])       # numba's first call in a process (0.3 s), no store
    t1 = time.perf_counter()
    s = irscale.open_store(store).scale(name, rb=None if rb == "-" else int(rb))
    ranks = s.rank(x, errors="zero")
    seconds = time.perf_counter() - t1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": seconds, "with_start": time.perf_counter() - t0, "peak": peak,
                      "found": int((ranks > 0).sum()), "n": int(x.size)}))


def _values(name: str, rb: int | None, path: Path, count: int = 10_000) -> None:
    import numpy as np

    import irscale
    m = irscale.parse_measure(name)
    rng = np.random.default_rng(15)
    runs = (rng.random((count, m.n)) < rng.random((count, 1))).astype(np.uint8)
    if rb is not None:
        runs = np.where(np.cumsum(runs, axis=1) > rb, 0, runs).astype(np.uint8)
    np.save(path, m.values_of_judged(runs, np.full(count, m.n), rb))


def _child(store: Path, name: str, rb, values: Path) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(store), name, "-" if rb is None else str(rb),
                          str(values)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def part_build(work: Path, skip: bool) -> Path:
    store = work / "paper30-oracles.h5"
    print(f"\n1. build --preset paper --depth 30 --jobs 2 ({load()})")
    if not skip:
        store.unlink(missing_ok=True)
        t0 = time.perf_counter()
        subprocess.run(["irscale", "build", "--preset", "paper", "--depth", "30", "--jobs", "2", "-q", "--out",
                        str(store)], check=True, cwd=work)
        print(f"   {time.perf_counter() - t0:.0f} s")
    print(f"   {store.stat().st_size / 1e9:.2f} GB on disk ({load()})")
    return store


def part_lookups(work: Path, oracle: Path, full: Path | None, repeat: int) -> None:
    print(f"\n2. 10,000 value lookups per set, fresh process: open store + scale + rank ({load()})")
    print("   seconds: open the store, take the scale, rank 10,000 values (after numba's first call in the "
          "process, a fixed 0.3 s, which 'with start' includes)")
    print(f"   {'set':28s} {'store':8s} {'median s':>9s} {'spread s':>17s} {'with start':>10s} {'peak memory':>12s} "
          f"{'ranked':>7s}")
    for n in (30, 40):
        store = oracle
        if n == 40:
            store = work / "oracles40.h5"
            if not store.exists():
                subprocess.run(["irscale", "build", "-q", "-m", ",".join(x.format(n=40) for x, _ in LOOKUPS),
                                "--out", str(store)], check=True, cwd=work)
        for pattern, rb in LOOKUPS:
            name = pattern.format(n=n)
            values = work / f"values-{n}-{pattern.split('(')[0]}.npy"
            _values(name, rb, values)
            contenders = {"oracle": store}
            if n == 30 and full is not None:
                contenders["table"] = full
            got: dict = {k: [] for k in contenders}
            for _ in range(repeat):
                for label, path in contenders.items():
                    got[label].append(_child(path, name, rb, values))
            for label, rows in got.items():
                secs = [r["seconds"] for r in rows]
                start = statistics.median(r["with_start"] for r in rows)
                print(f"   {name + ('' if rb is None else f' rb={rb}'):28s} {label:8s} {statistics.median(secs):9.3f} "
                      f"{min(secs):8.3f}-{max(secs):<8.3f} {start:10.3f} {max(r['peak'] for r in rows) / 2 ** 30:9.2f} "
                      f"GiB {rows[0]['found']:>7d}")
    print(f"   ({load()})")


def part_transform(work: Path, oracle: Path, full: Path, data: Path, repeat: int) -> None:
    print(f"\n3. transform of {len(list((data / 'runs').iterdir()))} TREC-8 runs, paper measures at N = 30 ({load()})")
    from _measure import run_sampled
    outs = {"oracle": work / "t-oracle.csv", "table": work / "t-table.csv"}
    stores = {"oracle": oracle, "table": full}
    got: dict = {k: [] for k in stores}
    for _ in range(repeat):
        for label, path in stores.items():
            r = run_sampled(["irscale", "transform", "--qrels", str(data / "qrels.trec8.adhoc.txt"), "--runs",
                             str(data / "runs"), "--preset", "paper", "--depth", "30", "--store", str(path),
                             "--midranks", "-o", str(outs[label])], cwd=work, stdout=subprocess.DEVNULL)
            assert r["rc"] == 0
            got[label].append(r)
    for label, rows in got.items():
        secs = [r["seconds"] for r in rows]
        print(f"   {label:8s} median {statistics.median(secs):6.1f} s (spread {min(secs):.1f}-{max(secs):.1f}), "
              f"peak {max(r['peak_tree'] for r in rows) / 2 ** 30:.2f} GiB")
    ratio = statistics.median(r["seconds"] for r in got["oracle"]) / statistics.median(
        r["seconds"] for r in got["table"])
    print(f"   oracle / table time: {ratio:.2f}")
    import pandas as pd
    a, b = pd.read_csv(outs["oracle"]), pd.read_csv(outs["table"])
    same = all(a[c].equals(b[c]) for c in a.columns)
    print(f"   outputs identical cell by cell: {same} ({len(a)} rows) ({load()})")


def part_exact(oracle: Path, full: Path, runs: int) -> None:
    import numpy as np

    import irscale
    print(f"\n4. {runs:,} random runs at N = 30: oracle ranks against stored tables ({load()})")
    a, b = irscale.open_store(oracle), irscale.open_store(full)
    rng = np.random.default_rng(30)
    for name, rbs in [("RBP(p=0.8)@30", [None]), ("DCG(b=2)@30", [None]), ("DCG(b=10)@30", [None]),
                      ("nDCG(b=2)@30", [5, 12, 30]), ("nDCG(b=10)@30", [12])]:
        for rb in rbs:
            x = (rng.random((runs, 30)) < rng.random((runs, 1))).astype(np.uint8)
            if rb is not None:
                x = np.where(np.cumsum(x, axis=1) > rb, 0, x).astype(np.uint8)
            t0 = time.perf_counter()
            ra = a.scale(name, rb=rb).rank_runs(x)
            t1 = time.perf_counter()
            rt = b.scale(name, rb=rb).rank_runs(x)
            t2 = time.perf_counter()
            print(f"   {name + ('' if rb is None else f' rb={rb}'):22s} differing ranks: {int((ra != rt).sum())} "
                  f"(oracle {t1 - t0:.1f} s, table {t2 - t1:.1f} s)")
    print(f"   ({load()})")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _lookup_child(*sys.argv[2:6])
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", type=Path, help="the N = 30 paper store with every table (11 min to build: irscale "
                    "build --preset paper --depth 30 --layout table --jobs 2)")
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--exact-runs", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=HERE.parent.parent / "shared" / "data" / "trec8")
    ap.add_argument("--parts", default="1,2,3,4", help="which parts to run (1 build, 2 lookups, 3 transform, "
                    "4 exactness); without 1 the store of an earlier run in --work is used")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-oracles-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"irscale rank oracles; work folder {work}; {load()}")
    parts = set(args.parts.split(","))
    oracle = part_build(work, args.skip_build or "1" not in parts)
    if "2" in parts:
        part_lookups(work, oracle, args.full, args.repeat)
    if "3" in parts and args.full is not None and args.data.is_dir():
        part_transform(work, oracle, args.full, args.data, args.repeat)
    if "4" in parts and args.full is not None:
        part_exact(oracle, args.full, args.exact_runs)


if __name__ == "__main__":
    main()
