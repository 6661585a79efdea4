"""Build the paper's measure set at N (default 30) table by table and report, per table:
build time, peak memory (largest single process and whole process tree), size on disk,
distinct values, runs, certificate, and the ratio of build time to the physical floor
(the time this machine needs to write the table's output bytes once, to memory and to
disk, medians of 3 measured in the same run, after the table is built).

    python scripts/bench_n30.py --out /path/paper30 [--n 30] [--jobs 2] [--measures ...] [--layout table]

Tables already in the store are reported from their stored build time (no peak memory).
"build s" is the wall time of the fresh ``irscale build`` process; "in build" the seconds
the store records (the table's own work, start-up and commit excluded): the difference is
start-up and the commit, which on file systems without reflinks (ext4) copies the store
the table goes into.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import h5py
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import gib, run_sampled  # noqa: E402

PAPER = ["P", "R", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(b=2)", "DCG(b=10)", "nDCG(b=2)",
         "nDCG(b=10)"]


def floor_seconds(nbytes: int, folder: Path, repeat: int = 3) -> tuple[float, float, str]:
    """(memory, disk) seconds to write nbytes once: fill a fresh array; write a file and
    fsync. Medians of ``repeat`` measurements (a virtual disk's speed varies by 2x from one
    write to the next), and the disk spread as text."""
    if nbytes == 0:
        return 0.0, 0.0, "-"
    mems, disks = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        a = np.empty(nbytes, np.uint8)
        a.fill(1)
        mems.append(time.perf_counter() - t0)
        path = folder / ".floor.bin"
        t0 = time.perf_counter()
        with open(path, "wb") as fh:
            for i in range(0, nbytes, 1 << 28):
                fh.write(memoryview(a[i:i + (1 << 28)]))
            fh.flush()
            os.fsync(fh.fileno())
        disks.append(time.perf_counter() - t0)
        path.unlink()
        del a
    return statistics.median(mems), statistics.median(disks), f"{min(disks):.2f}-{max(disks):.2f}"


def table_bytes(store: Path, measure: str) -> int:
    with h5py.File(store, "r") as f:
        g = f[f"/tables/{measure}"]
        return sum(g[name].id.get_storage_size() for name in g)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--measures", default=",".join(PAPER), help="families, without @N")
    ap.add_argument("--layout", default=None, help="irscale build --layout (default: each measure's own)")
    args = ap.parse_args()
    store = Path(args.out)
    import irscale
    rows = []
    total0 = time.perf_counter()
    from irscale.scales.measures.parse import split_measures
    for fam in split_measures(args.measures):
        name = str(irscale.parse_measure(f"{fam}@{args.n}"))
        have = store.exists() and irscale.open_store(store).has(name)
        r = None
        before = store.stat().st_size if store.exists() else 0     # a commit on ext4 copies it
        if not have:
            layout = ["--layout", args.layout] if args.layout else []
            r = run_sampled(["irscale", "build", "-m", name, "--out", str(store), "-q", "--jobs", str(args.jobs)]
                            + layout, stdout=open(os.devnull, "w"))
            if r["rc"] != 0:
                sys.exit(f"build of {name} failed")
        meta = next(t for t in irscale.open_store(store).tables() if t["measure"] == name)
        size = table_bytes(store, name)
        mem_s, disk_s, disk_spread = floor_seconds(size, store.parent)
        secs = r["seconds"] if r else meta["build_seconds"]
        inside = meta["build_seconds"]
        rows.append((name, meta, r, secs, inside, size, mem_s, disk_s))
        print(f"{name:16s} {secs:8.1f} s (in build {inside:6.1f} s, into {before / 1e9:5.1f} GB)  "
              f"peak {gib(r['peak_single']) if r else '-':>10s} (tree "
              f"{gib(r['peak_tree']) if r else '-':>10s})  {size / 1e9:7.3f} GB  K={meta['n_distinct']:>11d}  "
              f"runs={meta['n_runs']}  floor mem {mem_s:6.2f} s disk {disk_s:6.2f} s ({disk_spread})  "
              f"build/floor(disk) {(f'{secs / disk_s:8.1f}' if size else '       -')}", flush=True)
    total = time.perf_counter() - total0
    print()
    print(f"whole set: {total / 60:.1f} min wall for the tables built now; store {store.stat().st_size / 1e9:.2f} GB")
    print("| table | distinct values | runs | entries | build s | in build s | peak single | peak tree | size GB | "
          "build/floor (mem) | build/floor (disk) | ties | error bound | smallest gap |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, meta, r, secs, inside, size, mem_s, disk_s in rows:
        print(f"| {name} | {meta['n_distinct']} | {meta['n_runs']} | {meta['n_entries']}"
              f"{' (implicit)' if meta['implicit'] else ''} | {secs:.1f} | {inside:.1f} | "
              f"{gib(r['peak_single']) if r else '-'} | "
              f"{gib(r['peak_tree']) if r else '-'} | {size / 1e9:.3f} | "
              f"{(f'{secs / mem_s:.0f}' if size else '-')} | {(f'{secs / disk_s:.1f}' if size else '-')} | "
              f"{meta['tie_method']} | "
              f"{meta['error_bound']:.2g} | {meta['min_gap_exact']} |")


if __name__ == "__main__":
    main()
