"""Transform speed on TREC-8 (129 runs x 50 topics, about 6.3 million run lines): irscale
against pytrec_eval and ir_measures computing the same raw measures, in one benchmark run.

Every contender is a separate process that reads the qrels and all run files, scores every
(run, topic) and writes a per-topic table; wall time and peak memory are measured from
outside (python start-up included). Contenders run in alternating order, ``--repeat`` times.

    python scripts/bench_transform.py [--store paper30] [--repeat 2] [--data ../shared/data/trec8]

Without --store the ranked rows are skipped (the N = 30 tables take 11 min to build:
``irscale build --preset paper --depth 30 --out paper30 --jobs 2``).
"""
from __future__ import annotations

import argparse
import gzip
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SAME = "P@30,R@30,AP@30,nDCG_trec@30,RR@30"   # what pytrec_eval / ir_measures compute too
PYTREC = {"P.30", "recall.30", "map_cut.30", "ndcg_cut.30", "recip_rank"}
PAPER = "P@30,R@30,AP@30,RR@30,RBP(p=0.3)@30,RBP(p=0.5)@30,RBP(p=0.8)@30,DCG(b=2)@30,DCG(b=10)@30," \
        "nDCG(b=2)@30,nDCG(b=10)@30"


def _runs(data: Path) -> list[Path]:
    return sorted((data / "runs").glob("input.*.gz"))


def baseline_pytrec_eval(data: Path, out: Path) -> None:
    """pytrec_eval (trec_eval's C code): parse with its own readers, evaluate, write CSV."""
    import pytrec_eval
    with open(data / "qrels.trec8.adhoc.txt") as f:
        qrels = pytrec_eval.parse_qrel(f)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    with open(out, "w") as o:
        o.write("run,topic,measure,raw\n")
        for path in _runs(data):
            with gzip.open(path, "rt") as f:
                run = pytrec_eval.parse_run(f)
            for topic, values in evaluator.evaluate(run).items():
                for measure, value in values.items():
                    o.write(f"{path.name},{topic},{measure},{value!r}\n")


def baseline_ir_measures(data: Path, out: Path) -> None:
    """ir_measures (pytrec_eval and msmarco providers): read, iter_calc, write CSV."""
    import ir_measures
    from ir_measures import AP, RR, P, R, nDCG
    measures = [P @ 30, R @ 30, AP @ 30, nDCG @ 30, RR @ 30]
    qrels = list(ir_measures.read_trec_qrels(str(data / "qrels.trec8.adhoc.txt")))
    with open(out, "w") as o:
        o.write("run,topic,measure,raw\n")
        for path in _runs(data):
            run = list(ir_measures.read_trec_run(str(path)))
            for m in ir_measures.iter_calc(measures, qrels, run):
                o.write(f"{path.name},{m.query_id},{m.measure},{m.value!r}\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=HERE.parents[1] / "shared" / "data" / "trec8")
    ap.add_argument("--store", type=Path, help="N = 30 paper tables (for the ranked rows)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--baseline", choices=["pytrec_eval", "ir_measures"], help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline:
        {"pytrec_eval": baseline_pytrec_eval, "ir_measures": baseline_ir_measures}[args.baseline](args.data, args.out)
        return

    from _measure import gib, run_sampled
    data = args.data
    if not (data / "qrels.trec8.adhoc.txt").is_file():
        sys.exit(f"no TREC-8 data in {data}")
    tmp = Path(tempfile.mkdtemp(prefix="bench-transform-"))
    common = ["--qrels", str(data / "qrels.trec8.adhoc.txt"), "--runs", str(data / "runs"), "-q"]
    irscale = [sys.executable, "-m", "irscale", "transform"]
    contenders = {
        "pytrec_eval, 5 measures": [sys.executable, __file__, "--baseline", "pytrec_eval", "--data", str(data),
                                    "--out", str(tmp / "pytrec.csv")],
        "ir_measures, 5 measures": [sys.executable, __file__, "--baseline", "ir_measures", "--data", str(data),
                                    "--out", str(tmp / "irm.csv")],
        "irscale raw, same 5": irscale + common + ["--measures", SAME, "--out", str(tmp / "same.csv")],
        "irscale raw, paper 11": irscale + common + ["--measures", PAPER, "--out", str(tmp / "raw11.csv")],
    }
    if args.store:
        for mode in ("feasible", "common"):
            contenders[f"irscale ranked ({mode}), paper 11"] = irscale + common + [
                "--measures", PAPER, "--store", str(args.store), "--rb-scale", mode,
                "--out", str(tmp / f"ranked-{mode}.csv")]
    results: dict[str, list[dict]] = {name: [] for name in contenders}
    names = list(contenders)
    for rep in range(args.repeat):
        for name in (names if rep % 2 == 0 else names[::-1]):
            r = run_sampled(contenders[name], cwd=tmp)
            if r["rc"] != 0:
                sys.exit(f"{name} failed (exit {r['rc']})")
            results[name].append(r)
            print(f"  run {rep + 1}: {name}: {r['seconds']:.1f} s", flush=True)

    def med(name, key="seconds"):
        return statistics.median(r[key] for r in results[name])

    base = med("pytrec_eval, 5 measures")
    print(f"\nTREC-8: {len(_runs(data))} runs; median of {args.repeat} runs per contender; ratio = time / pytrec_eval")
    print(f"{'contender':38s} {'seconds':>8s} {'ratio':>7s} {'peak memory':>12s}")
    for name in names:
        print(f"{name:38s} {med(name):8.1f} {med(name) / base:7.2f} {gib(med(name, 'peak_tree')):>12s}")
    _check_same(tmp, data)


def _check_same(tmp: Path, data: Path) -> None:
    """Do irscale and pytrec_eval compute the same raw values (like with like)? Where
    they differ, trec_eval's own printed output (4 decimals) decides."""
    import pandas as pd
    ours = pd.read_csv(tmp / "same.csv", dtype={"topic": str})
    ref = pd.read_csv(tmp / "pytrec.csv", dtype={"topic": str})
    names = {"P_30": "P@30", "recall_30": "R@30", "map_cut_30": "AP@30", "ndcg_cut_30": "nDCG_trec@30"}
    ref = ref[ref.measure.isin(names)].assign(measure=lambda d: d.measure.map(names))
    ref["run"] = ref.run.str.removeprefix("input.").str.removesuffix(".gz")
    ours = ours[ours.measure.isin(names.values())]
    both = ours.merge(ref, on=["run", "topic", "measure"], suffixes=("", "_pytrec"))
    differ = both[(both.raw - both.raw_pytrec).abs() > 1e-9]
    print(f"irscale vs pytrec_eval: {len(both)} values compared, {len(differ)} differ", end="")
    if differ.empty:
        print()
        return
    printed = {}
    for run in differ.run.unique():
        with gzip.open(data / "trec_eval" / f"eval.{run}.gz", "rt") as f:
            for line in f:
                name, topic, value = line.split()
                if name in names:
                    printed[(run, topic, names[name])] = float(value)
    te = differ.apply(lambda r: printed[(r.run, r.topic, r.measure)], axis=1)
    ours_ok = int(((differ.raw - te).abs() <= 5e-5 + 1e-12).sum())
    theirs_ok = int(((differ.raw_pytrec - te).abs() <= 5e-5 + 1e-12).sum())
    print(f" (runs {', '.join(differ.run.unique())}); trec_eval's printed values agree with irscale on "
          f"{ours_ok} and with pytrec_eval on {theirs_ok} of them")


if __name__ == "__main__":
    main()
