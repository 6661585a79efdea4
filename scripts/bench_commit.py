"""Adding a small table to a big store folder against adding it to an empty one (a commit
is a rename per table: its cost should not depend on what the store holds), measured in
the same run.

    python scripts/bench_commit.py --store paper30 [--repeat 3] [--measure AP]
    python scripts/bench_commit.py --fake 30 [--repeat 3]

``--fake N`` makes the big store first: N small tables (AP, R, DCG(b=2) at small cutoffs)
in a temporary folder, standing in for the N = 30 paper tables where they cannot be built
in time. What a commit costs besides writing its own table is per table file (listing and
checking each one's metadata), not per byte, so N small files measure it.

Each run is a fresh ``irscale build`` process adding one new small table (``MEASURE@n``
for a new n each time), to ``--store`` and to an empty store in a temporary folder on the
same file system, alternating. Prints every run, the medians and spreads, their ratio,
the store's size and the machine's load before and after.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import run_sampled  # noqa: E402


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", help="an existing store folder (it gains REPEAT small tables)")
    ap.add_argument("--fake", type=int, help="make a store of this many small tables in a temporary folder instead")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--measure", default="AP", help="family of the small tables added (default AP)")
    args = ap.parse_args()
    if (args.store is None) == (args.fake is None):
        sys.exit("give --store or --fake")
    if args.fake is not None:
        with tempfile.TemporaryDirectory() as td:
            import irscale
            store = Path(td) / "fake"
            names = [f"{family}@{n}" for n in range(2, 40) for family in ("AP", "R", "DCG(b=2)")][:args.fake]
            irscale.build_store(store, names, layout="table", n_jobs=1)
            print(f"fake store: {len(names)} tables ({', '.join(names[:3])}, ...)", flush=True)
            _bench(store, args)
        return
    _bench(Path(args.store).resolve(), args)


def _bench(store: Path, args: argparse.Namespace) -> None:
    if not store.is_dir():
        sys.exit(f"{store} is not a store folder (a packed file: irscale unpack it first)")
    import irscale
    have = {t["measure"] for t in irscale.open_store(store).tables()}
    depths = (n for n in range(2, 10_000) if f"{args.measure}@{n}" not in have)
    load0 = os.getloadavg()
    size0 = _size(store)
    times: dict[str, list[float]] = {"big store": [], "empty store": []}
    with tempfile.TemporaryDirectory(dir=store.parent) as td:
        for i in range(args.repeat):
            name = f"{args.measure}@{next(depths)}"
            for kind in ("big store", "empty store") if i % 2 == 0 else ("empty store", "big store"):
                target = store if kind == "big store" else Path(td) / f"empty{i}"
                r = run_sampled([sys.executable, "-m", "irscale", "build", "-q", "-m", name, "--out", str(target)],
                                cwd=td)
                if r["rc"] != 0:
                    sys.exit(f"adding {name} to the {kind} failed")
                times[kind].append(r["seconds"])
                print(f"run {i + 1}: {kind:11s} {name:8s} {r['seconds']:7.2f} s (load {os.getloadavg()[0]:.2f})",
                      flush=True)
                if kind == "empty store":
                    shutil.rmtree(target)
    load1 = os.getloadavg()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"store {size0 / 1e9:.2f} GB in {len(have)} tables; {args.repeat} runs each, alternating; load average "
          f"before {' '.join(f'{x:.2f}' for x in load0)}, after {' '.join(f'{x:.2f}' for x in load1)} "
          f"({os.cpu_count()} cores)")
    for k, v in times.items():
        print(f"  {k:11s} median {med[k]:7.2f} s  spread {min(v):.2f}-{max(v):.2f} s")
    print(f"big / empty: {med['big store'] / med['empty store']:.2f}x")


if __name__ == "__main__":
    main()
