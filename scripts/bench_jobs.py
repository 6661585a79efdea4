"""Speed-up of `irscale build` from 1 to 2 (or more) workers, measured in the same run,
alternating the runs so that drift of the machine affects both alike.

    python scripts/bench_jobs.py [--measures "DCG(b=2)@26,AP@26"] [--jobs 1,2] [--repeat 2]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import gib, run_sampled  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measures", default="DCG(b=2)@26,AP@26")
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    jobs = [int(j) for j in args.jobs.split(",")]
    times: dict[int, list[float]] = {j: [] for j in jobs}
    peaks: dict[int, int] = {j: 0 for j in jobs}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            for j in jobs:
                out = Path(tmp) / f"j{j}-{rep}.h5"
                r = run_sampled(["irscale", "build", "-m", args.measures, "--out", str(out), "-q", "--jobs", str(j)],
                                stdout=open(os.devnull, "w"))
                assert r["rc"] == 0
                times[j].append(r["seconds"])
                peaks[j] = max(peaks[j], r["peak_tree"])
                out.unlink()
    base = min(times[jobs[0]])
    print(f"irscale build -m {args.measures!r}: best of {args.repeat}")
    for j in jobs:
        print(f"  --jobs {j}: {min(times[j]):7.1f} s (runs: {', '.join(f'{t:.1f}' for t in times[j])}), "
              f"peak {gib(peaks[j])}, speed-up vs --jobs {jobs[0]}: {base / min(times[j]):.2f}x")


if __name__ == "__main__":
    main()
