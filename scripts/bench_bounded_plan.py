"""How well a plan of bounded scales predicts their cost (scales/tables/bounded_plan.py).

For each case (a measure and its recall bases), a fresh plan probes every recall base and
predicts the seconds of the scales at each error it may choose; the scales are then
computed to that error and timed. Prints, per case and error, the probes' seconds, the
predicted and the measured seconds, and measured / predicted (median of the repeats),
with the machine's load. The plan's promise: a prediction of at most about 2x the time
taken, and rarely below it (MARGIN = 2 covers the grids' growth past the probe).

    python scripts/bench_bounded_plan.py [--repeats 3] [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

import irscale.scales.tables.bounded_plan as bp
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.bounded_plan import plan_bounded
from irscale.scales.tables.bounded_scales import BoundedScales
from irscale.scales.tables.closed import CLOSED_FORMS

# TREC-8's recall bases at N = 100 (27 distinct, 50 topics), a few of them, and deep cases
CASES = [
    ("RBP(p=0.8)@100", [None], (1e-4,)),
    ("DCG(b=2)@100", [None], (1e-4, 1e-3)),
    ("nDCG_trec@100", [6, 17, 39, 68, 100], (1e-4, 1e-3)),
    ("nDCG(b=2)@50", [1, 3, 8, 15, 70], (1e-4,)),
    ("nDCG_trec@1000", [20], (1e-3,)),
]


def one(name: str, rbs: list, error: float) -> tuple[float, float, float]:
    """(probe seconds, predicted seconds, measured seconds) of one fresh plan at ``error``."""
    m = parse_measure(name)
    tables = BoundedScales(CLOSED_FORMS)
    t0 = time.perf_counter()
    keep = bp.ERRORS
    bp.ERRORS = (error,)
    try:
        plan = plan_bounded(tables, {m: rbs}, limit=None)[m]
    finally:
        bp.ERRORS = keep
    probes = time.perf_counter() - t0
    t0 = time.perf_counter()
    for rb in rbs:
        tables.scale(m, rb)
    return probes, plan.seconds, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="leave out the N = 1000 case")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}; cores: {os.cpu_count()}")
    one("RBP(p=0.8)@100", [None], 1e-2)                 # compile and load the kernels
    print(f"{'case':40} {'error':>7} {'probes s':>9} {'predicted s':>12} {'measured s':>11} {'measured/pred':>14}")
    for name, rbs, errors in CASES:
        if args.quick and name.endswith("@1000"):
            continue
        for error in errors:
            runs = [one(name, rbs, error) for _ in range(args.repeats)]
            probes, predicted, measured = (statistics.median(x) for x in zip(*runs))
            ratio = statistics.median(m / p if p > 0 else float("nan") for _, p, m in runs)
            label = f"{name} rb={','.join(map(str, rbs))}" if rbs != [None] else name
            print(f"{label:40} {error:7.0e} {probes:9.2f} {predicted:12.2f} {measured:11.2f} {ratio:14.2f}",
                  flush=True)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
