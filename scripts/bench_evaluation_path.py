"""Issue 38's targets: the one evaluation path costs no time.

* ``cold`` / ``warm``: ``irscale compare`` of the 73 TREC-COVID round-5 runs for ``nDCG@10,
  P@5, RR, AP@10`` with a baseline, from nothing built (an empty store and an empty numba
  cache, a fresh process) and once tables and compiled kernels exist, for two installs A
  (``--a``: the python of a virtualenv of an earlier irscale) and B (``--b``, default this
  one), alternating A B B A ..., medians of ``--repeat`` runs and the ratio B/A of the
  medians (target: B/A <= 1.1);
* ``newcomer``: B's ``irscale compare`` of RAG 2024's run on its qrels (levels 0-3) with
  ``-m "nDCG@20,nDCG@10,RR,map"`` from nothing built (target <= 60 s, exit 0, every
  measure shown);
* ``errors``: B's time until a user error is answered (the first line on stderr) for a
  misspelled measure and a baseline that is not a run (target <= 1 s).

The load average is printed before and after.

    python scripts/bench_evaluation_path.py --a /tmp/old/.venv/bin/python --repeat 3
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

from bench_leaderboard import _first_answer, _summary  # scripts/: the same timings as issue 29's

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
COVID = DATA / "trec-covid5"
RAG = DATA / "rag24"
MEASURES = "nDCG@10,P@5,RR,AP@10"
BASELINE = "BRPHJ_BM25"


def _irscale(python: str) -> str:
    return str(Path(python).parent / "irscale")


def _compare(python: str, store: Path, *extra: str, measures: str = MEASURES, baseline: str | None = BASELINE,
             quiet: bool = True) -> list[str]:
    return [_irscale(python), "compare", "--qrels", str(COVID / "qrels" / "qrels.covid-round5.txt"), "--runs",
            str(COVID / "runs"), "-m", measures, *(["--baseline", baseline] if baseline else []),
            "--store", str(store), *(["-q"] if quiet else []), *extra]


def _timed(cmd: list[str], env: dict) -> tuple[float, str]:
    """Seconds and stdout of ``cmd`` (the run fails the benchmark when it fails)."""
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", required=True, help="python of the earlier install (its irscale beside it)")
    parser.add_argument("--b", default=sys.executable, help="python of the install measured (default: this one)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for where in (COVID, RAG):
        if not where.is_dir():
            sys.exit(f"data not found at {where}")
    work = Path(tempfile.mkdtemp(prefix="bench-path-"))
    print(f"load average before: {os.getloadavg()}; {os.cpu_count()} cores; A = {args.a}; B = {args.b}")
    base = dict(os.environ, TQDM_DISABLE="1")
    versions = {"A": args.a, "B": args.b}
    warm = {v: (work / f"warm-{v}", work / f"warm-numba-{v}") for v in versions}
    for v, python in versions.items():                     # the warm state of each
        _timed(_compare(python, warm[v][0]), dict(base, NUMBA_CACHE_DIR=str(warm[v][1])))
    cold: dict[str, list[float]] = {v: [] for v in versions}
    hot: dict[str, list[float]] = {v: [] for v in versions}
    for i in range(args.repeat):
        order = ("A", "B") if i % 2 == 0 else ("B", "A")
        for v in order:
            cache, store = work / f"cold-numba-{v}-{i}", work / f"cold-{v}-{i}"
            cold[v].append(_timed(_compare(versions[v], store), dict(base, NUMBA_CACHE_DIR=str(cache)))[0])
            shutil.rmtree(cache, ignore_errors=True)
            shutil.rmtree(store, ignore_errors=True)
        for v in reversed(order):
            hot[v].append(_timed(_compare(versions[v], warm[v][0]), dict(base, NUMBA_CACHE_DIR=str(warm[v][1])))[0])
    for what, figures in (("cold", cold), ("warm", hot)):
        a, b = statistics.median(figures["A"]), statistics.median(figures["B"])
        print(f"{what}: A {_summary(figures['A'])}  B {_summary(figures['B'])}  B/A {b / a:.2f} (target <= 1.1)")
    newcomer = []
    for i in range(args.repeat):
        store, cache = work / f"rag-{i}", work / f"rag-numba-{i}"
        cmd = [_irscale(args.b), "compare", "--qrels", str(RAG / "qrels.rag24.txt"), "--runs",
               str(RAG / "run.rag24.gz"), "-m", "nDCG@20,nDCG@10,RR,map", "--store", str(store), "-q"]
        seconds, out = _timed(cmd, dict(base, NUMBA_CACHE_DIR=str(cache)))
        shown = [m for m in ("nDCG@20 ", "nDCG@10 ", "RR ", "map ") if m in out]
        if len(shown) != 4:
            sys.exit(f"the newcomer's board lacks a measure: {shown}\n{out}")
        newcomer.append(seconds)
        shutil.rmtree(store, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    print(f"newcomer (RAG 2024, nothing built): B {_summary(newcomer)}  (target <= 60 s; every measure shown)")
    env = dict(base, NUMBA_CACHE_DIR=str(warm["B"][1]))
    errors = {"misspelled measure (nDGC@10)": _compare(args.b, warm["B"][0], measures="nDGC@10,P@5", quiet=False),
              "baseline that is no run (BM25)": _compare(args.b, warm["B"][0], baseline="BM25", quiet=False)}
    for what, cmd in errors.items():
        times = [_first_answer(cmd, env) for _ in range(args.repeat)]
        print(f"answer to a {what:32s} B {_summary(times)}  (target <= 1 s)")
    print(f"load average after: {os.getloadavg()}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
