"""Adding a table to a big store: an append commit (the table goes past the store's end,
the changed metadata through a redo journal) against a commit that writes a new copy of
the store (what every commit did before, and what a commit replacing a table still does),
measured in the same run.

    python scripts/bench_commit.py --store paper30.h5 [--repeat 3] [--measure RR]

Each run is a fresh ``irscale build`` process adding one new small table (``MEASURE@n``
for a new n each time, so the store grows by a few kilobytes per run), the two kinds
alternating; the copying kind is forced by making the journal refuse the store. Prints
every run, the medians and spreads, their ratio, the store's size and the machine's load
before and after. Needs free disk for one copy of the store.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import run_sampled  # noqa: E402

CHILD = r'''
import sys
from irscale.store import journal
if sys.argv[1] == "copy":
    journal.end_of_data = lambda path: None        # the journal refuses: the commit copies the store
import irscale
irscale.build_store(sys.argv[2], sys.argv[3])
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="an existing store (it gains 2 x REPEAT small tables)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--measure", default="RR", help="family of the small tables added (default RR)")
    args = ap.parse_args()
    store = Path(args.store).resolve()
    import irscale
    have = {t["measure"] for t in irscale.open_store(store).tables()}
    depths = (n for n in range(2, 10_000) if f"{args.measure}@{n}" not in have)
    load0 = os.getloadavg()
    size0 = store.stat().st_size
    times: dict[str, list[float]] = {"append": [], "copy": []}
    with tempfile.TemporaryDirectory() as td:
        child = Path(td) / "child.py"
        child.write_text(CHILD)
        for i in range(args.repeat):
            for kind in ("append", "copy") if i % 2 == 0 else ("copy", "append"):
                name = f"{args.measure}@{next(depths)}"
                ino = store.stat().st_ino
                r = run_sampled([sys.executable, str(child), kind, str(store), name], cwd=td)
                if r["rc"] != 0:
                    sys.exit(f"{kind} commit of {name} failed")
                replaced = store.stat().st_ino != ino
                if replaced != (kind == "copy"):
                    sys.exit(f"{kind} commit of {name}: the store was {'' if replaced else 'not '}replaced")
                times[kind].append(r["seconds"])
                print(f"run {i + 1}: {kind:6s} {name:8s} {r['seconds']:7.2f} s (load {os.getloadavg()[0]:.2f})",
                      flush=True)
    load1 = os.getloadavg()
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"store {size0 / 1e9:.2f} GB; {args.repeat} runs each, alternating; load average before "
          f"{' '.join(f'{x:.2f}' for x in load0)}, after {' '.join(f'{x:.2f}' for x in load1)} "
          f"({os.cpu_count()} cores)")
    for k, v in times.items():
        print(f"  {k:6s} median {med[k]:7.2f} s  spread {min(v):.2f}-{max(v):.2f} s")
    print(f"copy / append: {med['copy'] / med['append']:.1f}x")


if __name__ == "__main__":
    main()
