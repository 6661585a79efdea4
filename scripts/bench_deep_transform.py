"""Issue 30's target for closed-form scales: trec_eval's deep measures with exact scales
cost at most 1.5x the raw scores alone.

``irscale transform`` of the 129 TREC-8 runs (1000 documents per topic, 50 topics) for
``map,recip_rank,P_1000,recall_1000,Rprec`` (trec_eval's names: AP@1000, RR@1000, P@1000,
R@1000, Rprec@1000), each in a fresh process:

* ``raw``: ``--raw-only``;
* ``scaled``: with ``--store`` (a file that does not exist: closed forms need none), exact
  scaled columns for all but ``map``.

Contenders alternate; each figure is the median (min-max) of ``--repeat`` runs; the load
average is printed before and after. Target: scaled / raw <= 1.5.

    python scripts/bench_deep_transform.py --repeat 3
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREC8 = ROOT.parent / "shared" / "data" / "trec8"
MEASURES = "map,recip_rank,P_1000,recall_1000,Rprec"


def _command(out: Path, store: Path | None) -> list[str]:
    irscale = shutil.which("irscale") or str(Path(sys.executable).parent / "irscale")
    cmd = [irscale, "transform", "--qrels", str(TREC8 / "qrels.trec8.adhoc.txt"), "--runs", str(TREC8 / "runs"),
           "-m", MEASURES, "--names", "trec_eval", "--out", str(out), "-q"]
    return cmd + (["--raw-only"] if store is None else ["--store", str(store)])


def _timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per contender (median of them; >= 3)")
    args = parser.parse_args()
    if not TREC8.is_dir():
        sys.exit(f"TREC-8 data not found at {TREC8}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()}")
    times: dict[str, list[float]] = {"raw": [], "scaled": []}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _timed(_command(folder / "warm.csv", None))          # compiled kernels cached for both contenders
        for _ in range(max(3, args.repeat)):
            times["raw"].append(_timed(_command(folder / "raw.csv", None)))
            times["scaled"].append(_timed(_command(folder / "scaled.csv", folder / "none.h5")))
        assert not (folder / "none.h5").exists(), "closed forms built something"
    for name, got in times.items():
        print(f"{name:7s} median {statistics.median(got):6.2f} s (min {min(got):.2f}, max {max(got):.2f})")
    ratio = statistics.median(times["scaled"]) / statistics.median(times["raw"])
    print(f"scaled / raw: {ratio:.2f}x (target <= 1.5x)")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
