"""Two installs of irscale on the same work, side by side: builds, transforms and lookups,
each a fresh process, the two versions alternating (A B B A A B ...), medians of
``--repeat`` runs and the ratio A/B of the medians, with the machine's load printed
before and after.

    python scripts/bench_versions.py --a /path/venv-old/bin/python --b .venv/bin/python \\
        [--store paper30] [--build-n 24] [--big "AP@30,DCG(b=2)@30"] [--repeat 3]

Workloads (each skipped when its input is not given):

* ``build paper N``: the paper's 11 tables at N = ``--build-n`` into a fresh store
  (``irscale build --preset paper --jobs 2``);
* ``build M``: each table of ``--big`` alone into a fresh store (the N = 30 tables of
  ``scripts/bench_n30.py``);
* ``transform raw`` / ``transform ranked``: all 129 TREC-8 runs, the 11 paper measures at
  N = 30, raw only and with exact ranks from ``--store`` (``scripts/bench_transform.py``);
* ``lookups``: 10^6 random value lookups and 10^6 run-id lookups of DCG(b=2)@30,
  AP@30 (rb = 12) and RBP(p=0.8)@30 on ``--store`` opened lazily, timed inside the
  process: the median of three passes after a first pass that compiles and faults the
  table pages in (``scripts/bench_lookup.py``); the wall time includes start-up, opening
  and the first pass.

Only public API and the command line are used, so any two versions with them compare.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import gib, run_sampled  # noqa: E402

HERE = Path(__file__).resolve().parent
PAPER30 = "P@30,R@30,AP@30,RR@30,RBP(p=0.3)@30,RBP(p=0.5)@30,RBP(p=0.8)@30,DCG(b=2)@30,DCG(b=10)@30," \
          "nDCG(b=2)@30,nDCG(b=10)@30"

LOOKUPS = r'''
import json, sys, time
import numpy as np
import irscale
store = irscale.open_store(sys.argv[1])
out = {}
for name, rb in (("DCG(b=2)@30", None), ("AP@30", 12), ("RBP(p=0.8)@30", None)):
    m = irscale.parse_measure(name)
    s = store.scale(m, rb)
    rng = np.random.default_rng(1)
    ids = rng.integers(0, 2 ** 30, size=1_000_000, dtype=np.int64)
    if rb is not None:
        ids = ids[np.array([bin(i).count("1") for i in ids.tolist()]) <= rb]
    try:
        values = m.values_of_ids(ids, rb)                      # the measure interface
    except AttributeError:                                     # versions before it
        from irscale.scales.split import values_of_ids
        values = values_of_ids(m, ids, rb)
    rv, ri = s.rank(values, errors="zero"), s.rank_ids(ids)   # first pass: compile, fault the pages in
    assert np.all((rv == ri) | (rv == 0))
    tv, ti = [], []
    for _ in range(3):                                          # then the median of three passes
        t0 = time.perf_counter(); s.rank(values, errors="zero"); t1 = time.perf_counter()
        s.rank_ids(ids); t2 = time.perf_counter()
        tv.append(t1 - t0); ti.append(t2 - t1)
    out[name] = {"values_per_s": len(values) / sorted(tv)[1], "ids_per_s": len(ids) / sorted(ti)[1]}
print(json.dumps(out))
'''


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="python of install A (e.g. the old commit)")
    ap.add_argument("--b", required=True, help="python of install B (e.g. the new commit)")
    ap.add_argument("--store", type=Path, help="paper tables at N = 30 (transform ranked, lookups)")
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "trec8")
    ap.add_argument("--build-n", type=int, default=None)
    ap.add_argument("--big", default="", help="comma-separated tables built one by one (N = 30)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", type=Path, help="write every measurement here")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-versions-"))
    print(f"before: {load()}", flush=True)

    def irscale_cmd(py):
        return [py, "-m", "irscale"]

    workloads = {}
    if args.build_n:
        def build_paper(py, tag):
            out = work / f"paper-{tag}.h5"
            out.unlink(missing_ok=True)
            return irscale_cmd(py) + ["build", "--preset", "paper", "--depth", str(args.build_n), "-q", "-j",
                                      str(args.jobs), "--out", str(out)]
        workloads[f"build paper N={args.build_n}"] = build_paper
    for name in [m.strip() for m in args.big.split(",") if m.strip()]:
        def build_one(py, tag, name=name):
            out = work / f"big-{tag}.h5"
            out.unlink(missing_ok=True)
            return irscale_cmd(py) + ["build", "-m", name, "-q", "-j", str(args.jobs), "--out", str(out)]
        workloads[f"build {name}"] = build_one
    if (args.data / "qrels.trec8.adhoc.txt").is_file():
        common = ["transform", "--qrels", str(args.data / "qrels.trec8.adhoc.txt"), "--runs",
                  str(args.data / "runs"), "--measures", PAPER30, "-q"]
        workloads["transform raw, paper 11"] = lambda py, tag: irscale_cmd(py) + common + [
            "--out", str(work / f"raw-{tag}.csv")]
        if args.store:
            workloads["transform ranked, paper 11"] = lambda py, tag: irscale_cmd(py) + common + [
                "--store", str(args.store), "--out", str(work / f"ranked-{tag}.csv")]
    if args.store:
        script = work / "lookups.py"
        script.write_text(LOOKUPS)
        workloads["lookups (3 tables)"] = lambda py, tag: [py, str(script), str(args.store)]

    results = {w: {"A": [], "B": []} for w in workloads}
    for w, make in workloads.items():
        for rep in range(args.repeat):
            for tag in (("A", "B") if rep % 2 == 0 else ("B", "A")):
                py = args.a if tag == "A" else args.b
                cmd = make(py, tag)
                out = work / f"out-{tag}.txt"
                with open(out, "w") as fh:
                    r = run_sampled(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=work, env={**os.environ,
                                                                                          "TQDM_DISABLE": "1"})
                text = out.read_text()
                if r["rc"] != 0:
                    sys.exit(f"{w} ({tag}) failed, exit {r['rc']}:\n{text[-2000:]}")
                if w.startswith("lookups"):
                    r["inner"] = json.loads(text.strip().splitlines()[-1])
                results[w][tag].append(r)
                print(f"  {w} [{tag}] run {rep + 1}: {r['seconds']:.1f} s, peak {gib(r['peak_tree'])}", flush=True)
    print(f"after: {load()}\n")
    print(f"medians of {args.repeat} runs per version, versions alternating; A = {args.a}, B = {args.b}")
    print(f"{'workload':34s} {'A s':>8s} {'B s':>8s} {'A/B':>6s} {'A peak':>10s} {'B peak':>10s}")
    for w, by in results.items():
        a = statistics.median(r["seconds"] for r in by["A"])
        b = statistics.median(r["seconds"] for r in by["B"])
        pa = statistics.median(r["peak_tree"] for r in by["A"])
        pb = statistics.median(r["peak_tree"] for r in by["B"])
        print(f"{w:34s} {a:8.1f} {b:8.1f} {a / b:6.2f} {gib(pa):>10s} {gib(pb):>10s}")
        if w.startswith("lookups"):
            for name in by["A"][0]["inner"]:
                for key in ("values_per_s", "ids_per_s"):
                    va = statistics.median(r["inner"][name][key] for r in by["A"])
                    vb = statistics.median(r["inner"][name][key] for r in by["B"])
                    print(f"    {name:18s} {key:13s} A {va / 1e6:6.2f} M/s  B {vb / 1e6:6.2f} M/s  B/A {vb / va:5.2f}")
    if args.json:
        args.json.write_text(json.dumps({"when": time.strftime("%Y-%m-%d %H:%M"), "results": results}, indent=1))


if __name__ == "__main__":
    main()
