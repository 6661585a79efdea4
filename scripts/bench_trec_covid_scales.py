"""Graded nDCG@20 scales for TREC-COVID round 5 (issue 17): build time, peak memory and disk
of every per-grade count vector the qrels need, and an independent check of the ranks of
judged (run, topic) pairs.

    python scripts/bench_trec_covid_scales.py [--data ../shared/data/trec-covid5] [--repeat 3]
                                              [--check-vectors "(7,2) (2,20) (3,20)"]

1. ``irscale build --measures "nDCG_trec(gains=(0,1,2))@20" --qrels ...`` into a new store,
   in a fresh process, ``--repeat`` times: wall time (median and spread), the process's
   peak resident memory, the store's size; the machine's load before and after.
2. The ranks of the scores written by ``irscale transform`` (``--rb-scale feasible``) on
   the topics whose vectors are listed, against plain numpy: every feasible run of
   {0,1,2}^20 by meet in the middle (ranks 1..10 and 11..20, pairs within the counts),
   its DCG in float64 (error below 1e-13: 20 terms of at most 2), sorted, neighbours closer
   than :data:`SAME` merged (the check stops if any gap lies between :data:`SAME` and
   :data:`APART`, where merging would be a guess; the (7, 2) table's certified smallest gap
   is 2.5e-12 in nDCG, about 1.3e-11 in DCG), and the rank of a judged run = the distinct
   values at most its DCG (its nDCG times the ideal DCG, computed here) + :data:`SAME`.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
MEASURE = "nDCG_trec(gains=(0,1,2))@20"
#: DCG values closer than this are one value; gaps of at least APART are two.
SAME, APART = 2e-13, 2e-12
N = 20
GAINS = (0, 1, 2)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def build_once(qrels: Path, folder: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS bytes of the child, store bytes) of one build in a fresh process."""
    out = folder / "covid.h5"
    if out.exists():
        out.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "irscale", "build", "--measures", MEASURE, "--qrels", str(qrels),
                    "--out", str(out), "-j", "2"], check=True, cwd=folder, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) * 1024, out.stat().st_size


def half_runs(levels: int, h: int, first_rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every run of {0..levels-1}^h at ranks first_rank..first_rank+h-1: its DCG part
    (gain / log2(k + 1)) and its numbers of grade-1 and grade-2 documents."""
    grid = np.array(np.meshgrid(*[np.arange(levels)] * h, indexing="ij")).reshape(h, -1).T
    disc = 1.0 / np.log2(np.arange(first_rank, first_rank + h) + 1.0)
    dcg = (np.asarray(GAINS, np.float64)[grid] * disc).sum(axis=1)
    return dcg, (grid == 1).sum(axis=1), (grid == 2).sum(axis=1)


def distinct_dcgs(c1: int, c2: int) -> tuple[np.ndarray, int, float]:
    """Sorted distinct DCG values of the runs with at most c1 grade-1 and c2 grade-2
    documents, their number of runs, and the smallest gap kept (see the module docstring)."""
    a, a1, a2 = half_runs(3, N // 2, 1)
    b, b1, b2 = half_runs(3, N // 2, N // 2 + 1)
    parts = []
    n_runs = 0
    for i in np.argsort(a1 * 100 + a2):
        keep = (b1 <= c1 - a1[i]) & (b2 <= c2 - a2[i])
        if keep.any():
            parts.append(a[i] + b[keep])
            n_runs += int(keep.sum())
    v = np.sort(np.concatenate(parts))
    gaps = np.diff(v)
    unsure = (gaps >= SAME) & (gaps < APART)
    if unsure.any():
        raise SystemExit(f"({c1},{c2}): {int(unsure.sum())} gaps between {SAME} and {APART}: cannot merge by "
                         f"tolerance")
    first = np.concatenate(([True], gaps >= SAME))
    kept = v[first]
    return kept, n_runs, float(np.diff(kept).min()) if kept.size > 1 else float("inf")


def ideal_dcg(c1: int, c2: int) -> float:
    grades = ([2] * c2 + [1] * c1)[:N]
    return float(sum(g / np.log2(k + 2.0) for k, g in enumerate(grades)))


def check_ranks(qrels: Path, runs: Path, vectors: list[tuple[int, int]], folder: Path) -> None:
    import irscale
    store = folder / "check.h5"
    scores = irscale.transform(qrels, runs, MEASURE, store, build_missing=True, rb_scale="feasible")
    counts = _topic_counts(qrels)
    for vec in vectors:
        topics = [t for t, c in counts.items() if tuple(min(x, N) for x in c) == vec]
        if not topics:
            print(f"  {vec}: no topic of the qrels has these counts")
            continue
        t0 = time.perf_counter()
        values, n_runs, gap = distinct_dcgs(*vec)
        rows = scores[scores.topic.isin(topics)]
        exact = counts[topics[0]]
        x = rows.raw.to_numpy() * ideal_dcg(*(min(c, N) for c in exact))
        ranks = np.searchsorted(values, x + SAME, side="right")
        agree = int((ranks == rows["rank"].to_numpy()).sum())
        k = int(rows.k.iloc[0])
        print(f"  {vec} topic(s) {','.join(topics)}: numpy K = {values.size:,} (irscale {k:,}), feasible runs "
              f"{n_runs:,} (irscale {int(rows.n_runs.iloc[0]):,}), smallest gap {gap:.2e}; ranks of "
              f"{agree}/{len(rows)} judged runs agree ({time.perf_counter() - t0:.0f} s)", flush=True)
        if agree != len(rows) or values.size != k or n_runs != int(rows.n_runs.iloc[0]):
            raise SystemExit(f"{vec}: irscale and the brute force disagree")


def _topic_counts(qrels: Path) -> dict[str, tuple[int, int]]:
    """Per topic, its numbers of documents judged 1 and 2 (levels above 2 read as 2)."""
    out: dict[str, list[int]] = {}
    for line in qrels.read_text().splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        level = int(parts[3])
        c = out.setdefault(parts[0], [0, 0])
        if level >= 1:
            c[min(level, 2) - 1] += 1
    return {t: tuple(c) for t, c in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "trec-covid5")
    ap.add_argument("--repeat", type=int, default=3, help="builds timed (0: only the check of ranks)")
    ap.add_argument("--check-vectors", default="(7,2) (2,20) (3,20)")
    args = ap.parse_args()
    qrels = args.data / "qrels" / "qrels.covid-round5.txt"
    if not qrels.is_file():
        sys.exit(f"no TREC-COVID qrels at {qrels}")
    vectors = [tuple(int(x) for x in v.strip("()").split(",")) for v in args.check_vectors.split()]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"load before: {_load()} ({os.cpu_count()} cores)")
        times, peaks, sizes = [], [], []
        for i in range(args.repeat):
            seconds, peak, size = build_once(qrels, folder)
            times.append(seconds)
            peaks.append(peak)
            sizes.append(size)
            print(f"  build {i + 1}: {seconds:.1f} s, peak {peak / 2 ** 30:.2f} GiB, store {size / 2 ** 20:.2f} MiB",
                  flush=True)
        if times:
            print(f"all count vectors of {MEASURE}: median {statistics.median(times):.1f} s "
                  f"({min(times):.1f}-{max(times):.1f}), peak memory {max(peaks) / 2 ** 30:.2f} GiB, "
                  f"disk {max(sizes) / 2 ** 20:.2f} MiB")
            print(f"load after builds: {_load()}")
        print("ranks of judged runs against numpy brute force:")
        check_ranks(qrels, args.data / "runs", vectors, folder)
        print(f"load after: {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
