"""First contact on a fresh install: the first scaled value from an empty numba cache.

Each contender runs in a fresh process whose ``NUMBA_CACHE_DIR`` is a new, empty
temporary folder. numba looks for a cache with its user-provided locator first (the
``NUMBA_CACHE_DIR`` folder) and only without it next to the sources (``__pycache__``), so
the package's own ``*.nbi`` files are not read; the child checks that for every numba
function it used (each dispatcher's cache path lies inside the new folder and it had no
cache hit) and fails otherwise.

Contenders:

* ``scale``: ``irscale.scale("AP@10", rb=5).rank([0.5])`` (a table built in memory);
* ``transform``: ``irscale.transform(qrels, runs, "AP@10,P@5", store=..., build_missing=True)``
  on small synthetic TREC files (5 topics, 3 runs of 20 documents): tables built on the
  fly into a new store, then the lookups;
* ``main`` (with ``--main``): the README's main command (``irscale build --preset paper
  --depth 10``, ``irscale info``, ``irscale lookup``) in one process;
* ``scale-warm`` (with ``--warm``): the ``scale`` contender again with a cache the first
  run filled (what every later session pays).

With ``--against DIR`` every contender also runs with irscale imported from the source
tree DIR (``python -c`` in DIR puts it first on ``sys.path``), alternating with the
installed package, and the ratios of the medians are printed.

Prints per contender the median, min and max wall time of ``--repeat`` fresh processes
(from ``python -c`` start to the answer printed), the first-value time measured inside the
process, the numba functions compiled and the machine's load before and after.

    python scripts/bench_first_contact.py --repeat 3 [--warm]
    # against an older commit (its source tree imported instead of the installed package):
    mkdir /tmp/base && git archive HEAD | tar -x -C /tmp/base
    python scripts/bench_first_contact.py --repeat 3 --against /tmp/base
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

CHILD = textwrap.dedent(r"""
    import json, os, sys, time
    t0 = time.perf_counter()
    import irscale
    what, work = sys.argv[1], sys.argv[2]
    if what == "scale":
        out = irscale.scale("AP@10", rb=5).rank([0.5]).tolist()
    elif what == "main":                 # the README's main command, in one process
        import contextlib, io
        from irscale.cli import main
        store = os.path.join(work, "paper-n10")
        with contextlib.redirect_stdout(io.StringIO()) as said:
            codes = [main(["build", "--preset", "paper", "--depth", "10", "--out", store, "-q"]), main(["info", store]),
                     main(["lookup", store, "AP@10", "--rb", "5", "0", "0.25", "1"])]
        assert codes == [0, 0, 0], codes
        out = said.getvalue().strip().splitlines()[-1].split()
    else:
        frame = irscale.transform(os.path.join(work, "qrels.txt"), os.path.join(work, "runs"), "AP@10,P@5",
                                  store=os.path.join(work, "t.h5"), build_missing=True)
        assert frame["scaled"].notna().all(), frame
        out = frame["rank"].astype(int).tolist()[:6]
    first = time.perf_counter() - t0
    cache = os.path.realpath(os.environ["NUMBA_CACHE_DIR"])
    compiled, outside, hits = [], [], 0
    from numba.core.registry import CPUDispatcher
    import gc
    for d in gc.get_objects():
        if isinstance(d, CPUDispatcher) and d.overloads:
            name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
            compiled.append((name, len(d.overloads)))
            hits += sum(d._cache_hits.values())
            path = getattr(getattr(d, "_cache", None), "_cache_path", "")
            if path and not os.path.realpath(path).startswith(cache):
                outside.append((name, path))
    print(json.dumps({"first": first, "answer": out, "compiled": sorted(compiled), "outside": outside,
                      "hits": hits, "where": os.path.dirname(os.path.dirname(irscale.__file__))}))
""")

QRELS_TOPICS = 5
RUNS = 3
DEPTH = 20


def write_trec(work: Path) -> None:
    """Small synthetic qrels and runs (deterministic)."""
    import random
    rnd = random.Random(29)
    (work / "runs").mkdir()
    lines = []
    for t in range(QRELS_TOPICS):
        for d in range(30):
            lines.append(f"{401 + t} 0 D{t}-{d} {int(rnd.random() < 0.3)}")
    (work / "qrels.txt").write_text("\n".join(lines) + "\n")
    for r in range(RUNS):
        rows = []
        for t in range(QRELS_TOPICS):
            docs = rnd.sample(range(40), DEPTH)
            for rank, d in enumerate(docs, 1):
                rows.append(f"{401 + t} Q0 D{t}-{d} {rank} {DEPTH - rank + 0.5} run{r}")
        (work / "runs" / f"run{r}.txt").write_text("\n".join(rows) + "\n")


def one(python: str, what: str, cache: Path | None, source: str | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="irscale-first-") as tmp:
        tmp = Path(tmp)
        work = tmp / "work"
        work.mkdir()
        if what != "scale":
            write_trec(work)
        env = dict(os.environ)
        env["NUMBA_CACHE_DIR"] = str(cache if cache is not None else tmp / "numba-cache")
        env.pop("NUMBA_DISABLE_JIT", None)
        t0 = time.perf_counter()
        # python -c puts its working folder first on sys.path: a source tree given is imported
        done = subprocess.run([python, "-c", CHILD, what, str(work)], env=env, capture_output=True, text=True,
                              cwd=source or tmp)
        wall = time.perf_counter() - t0
        if done.returncode:
            sys.exit(f"{what} failed:\n{done.stderr}")
        info = json.loads(done.stdout.strip().splitlines()[-1])
    if cache is None and (info["outside"] or info["hits"]):
        sys.exit(f"{what}: numba read a cache outside the fresh folder: {info['outside'][:3]} hits={info['hits']}")
    info["wall"] = wall
    return info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--warm", action="store_true", help="also time the scale contender with a filled cache")
    ap.add_argument("--only", choices=["scale", "transform", "main"], default=None)
    ap.add_argument("--main", action="store_true", help="also time the README's main command")
    ap.add_argument("--list", action="store_true", help="list the numba functions each contender compiled")
    ap.add_argument("--against", default=None, metavar="DIR",
                    help="also run every contender with irscale imported from this source tree (another version), "
                         "alternating with the installed package, and print the ratios")
    args = ap.parse_args()
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}  ({os.cpu_count()} cores)")
    versions = {"installed": None} | ({"against": args.against} if args.against else {})
    contenders = [c for c in ("scale", "transform", "main") if args.only == c or
                  (args.only is None and (c != "main" or args.main))]
    results: dict[tuple[str, str], list[dict]] = {(v, c): [] for v in versions for c in contenders}
    warm: dict[str, Path] = {}
    keep = []
    if args.warm:
        for v, source in versions.items():
            folder = tempfile.TemporaryDirectory(prefix="irscale-warm-")
            keep.append(folder)
            warm[v] = Path(folder.name)
            one(args.python, "scale", warm[v], source)          # fills it
            results[(v, "scale-warm")] = []
    for _ in range(args.repeat):                                 # alternating versions and contenders
        for c in contenders:
            for v, source in versions.items():
                results[(v, c)].append(one(args.python, c, None, source))
        for v, source in versions.items():
            if v in warm:
                results[(v, "scale-warm")].append(one(args.python, "scale", warm[v], source))
    medians = {}
    for (v, c), runs in results.items():
        walls = [r["wall"] for r in runs]
        firsts = [r["first"] for r in runs]
        compiled = runs[-1]["compiled"]
        medians[(v, c)] = statistics.median(walls)
        print(f"{v:9s} {c:11s} wall median {medians[(v, c)]:6.2f} s (min {min(walls):.2f}, max {max(walls):.2f}; "
              f"{len(walls)} fresh processes); first value in-process median {statistics.median(firsts):.2f} s; "
              f"{len(compiled)} numba functions, {sum(k for _, k in compiled)} signatures compiled (or loaded from "
              f"the cache); "
              f"answer {runs[-1]['answer']}; irscale from {runs[-1]['where']}")
        if args.list:
            for name, k in compiled:
                print(f"    {name} x{k}")
    if args.against:
        for (v, c), m in medians.items():
            if v == "installed":
                print(f"ratio installed / against, {c}: {m / medians[('against', c)]:.3f}")
        answers = {c: {v: results[(v, c)][-1]["answer"] for v in versions} for c in contenders}
        for c, a in answers.items():
            print(f"same answers, {c}: {a['installed'] == a['against']}")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
