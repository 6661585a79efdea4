"""Issue 29's targets for the leaderboard, measured as a new user meets them.

* ``cold``: ``irscale compare`` of the 73 TREC-COVID round-5 runs for ``nDCG@10, P@5, RR,
  AP@10`` with a baseline, from nothing built: an empty store and an empty numba cache
  (``NUMBA_CACHE_DIR`` a new empty folder, so every kernel compiles), a fresh process;
* ``warm``: the same command once the tables and the compiled kernels exist;
* ``errors``: the time until a user error is answered (the first line on stderr) for a
  misspelled measure, a missing store (``--no-build``), a measure without a scale
  (``AP@100``: the warning comes before any run is read) and a baseline that is not a run.

Each figure is the median (min-max) of ``--repeat`` fresh processes, cold and warm runs
alternating; the load average is printed before and after. Targets: cold <= 60 s, warm <=
15 s, errors <= 1 s.

    python scripts/bench_leaderboard.py --repeat 3
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
COVID = ROOT.parent / "shared" / "data" / "trec-covid5"
MEASURES = "nDCG@10,P@5,RR,AP@10"
BASELINE = "BRPHJ_BM25"


def _irscale() -> str:
    found = shutil.which("irscale") or str(Path(sys.executable).parent / "irscale")
    return found


def _compare(store: Path, *extra: str, measures: str = MEASURES, baseline: str = BASELINE,
             quiet: bool = True) -> list[str]:
    return [_irscale(), "compare", "--qrels", str(COVID / "qrels" / "qrels.covid-round5.txt"), "--runs",
            str(COVID / "runs"), "-m", measures, "--baseline", baseline, "--store", str(store),
            *(["-q"] if quiet else []), *extra]


def _timed(cmd: list[str], env: dict) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds, done.returncode


def _first_answer(cmd: list[str], env: dict) -> float:
    """Seconds until the first line on stderr (the error or the warning)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    seconds = time.perf_counter() - start
    proc.kill()
    proc.wait()
    if not line:
        sys.exit(f"no answer on stderr: {' '.join(cmd)}")
    return seconds


def _summary(xs: list[float]) -> str:
    return f"{statistics.median(xs):6.2f} s  ({min(xs):.2f}-{max(xs):.2f}, {len(xs)} runs)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="Fresh processes per figure (median of them).")
    parser.add_argument("--work", type=Path, default=None, help="Folder for stores and caches (default: a temp one).")
    args = parser.parse_args()
    if not COVID.is_dir():
        sys.exit(f"TREC-COVID data not found at {COVID}")
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"load average before: {os.getloadavg()}; {os.cpu_count()} cores; irscale at {_irscale()}")
    cold, warm = [], []
    warm_store, warm_cache = work / "warm.h5", work / "warm-numba"
    base = dict(os.environ, TQDM_DISABLE="1")
    _timed(_compare(warm_store), dict(base, NUMBA_CACHE_DIR=str(warm_cache)))      # builds the warm state
    for i in range(args.repeat):
        cache, store = work / f"cold-numba-{i}", work / f"cold-{i}.h5"
        cold.append(_timed(_compare(store), dict(base, NUMBA_CACHE_DIR=str(cache)))[0])
        warm.append(_timed(_compare(warm_store), dict(base, NUMBA_CACHE_DIR=str(warm_cache)))[0])
        shutil.rmtree(cache, ignore_errors=True)
        store.unlink(missing_ok=True)
    print(f"cold (nothing built, empty numba cache): {_summary(cold)}   target <= 60 s")
    print(f"warm (tables and kernels exist):         {_summary(warm)}   target <= 15 s")
    env = dict(base, NUMBA_CACHE_DIR=str(warm_cache))
    errors = {
        "misspelled measure (nDGC@10)": _compare(warm_store, measures="nDGC@10,P@5", quiet=False),
        "missing store (--no-build)": _compare(work / "none.h5", "--no-build", quiet=False),
        "measure without a scale (AP@100)": _compare(warm_store, measures="AP@100,P@5", quiet=False),
        "baseline that is no run (BM25)": _compare(warm_store, baseline="BM25", quiet=False),
    }
    for what, cmd in errors.items():
        times = [_first_answer(cmd, env) for _ in range(args.repeat)]
        print(f"answer to a {what:34s} {_summary(times)}   target <= 1 s")
    print(f"load average after: {os.getloadavg()}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
