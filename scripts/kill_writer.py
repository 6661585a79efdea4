"""A writer killed at random moments: builds of several tables into one store folder, each
SIGKILLed after a random delay; after every kill the store must open and every table
verify, and at the end one build completes the store. Prints the counts and the load.

    python scripts/kill_writer.py [--kills 200] [--seed 1] [--store DIR]
"""
from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURES = "AP@11,RR@9,P@9,DCG(b=2)@11,nDCG(b=2,gains=(0,1,2))@6,R@9"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store", help="store folder to use (default: a temporary one)")
    args = ap.parse_args()
    import irscale
    from irscale.store import folder

    with tempfile.TemporaryDirectory() as td:
        path = Path(args.store) if args.store else Path(td) / "s"
        irscale.build_store(path, "P@4")
        rng = random.Random(args.seed)
        script = f"import irscale; irscale.build_store({str(path)!r}, {MEASURES!r}, rebuild=True, n_jobs=1)"
        load0, bad, tables_seen, t0 = os.getloadavg(), [], 0, time.perf_counter()
        for i in range(args.kills):
            p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.2, 2.5))
            p.send_signal(signal.SIGKILL)
            p.wait()
            try:
                store = irscale.open_store(path)
                problems = [(name, why) for name, why in store.verify_each() if why]
                tables_seen += len(store.tables())
            except Exception as e:           # noqa: BLE001 (any failure to open is what this script counts)
                problems = [("store", f"{type(e).__name__}: {e}")]
            if problems:
                bad.append((i, problems))
                print(f"kill {i + 1}: {problems}", flush=True)
            if (i + 1) % 20 == 0:
                print(f"{i + 1} kills, {len(bad)} bad stores (load {os.getloadavg()[0]:.2f})", flush=True)
        final = irscale.build_store(path, MEASURES, rebuild=True)     # a commit: it clears what the dead left
        final.verify()
        left = list(path.glob(".tmp-*"))
        print(f"{args.kills} writers killed at random moments in {time.perf_counter() - t0:.0f} s: {len(bad)} stores "
              f"failed to open or verify ({tables_seen} table listings checked); the final build has "
              f"{len(final.tables())} tables, all verified; {len(left)} temporary folders left; load average "
              f"before {' '.join(f'{x:.2f}' for x in load0)}, after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if bad or left or not (path / folder.MANIFEST).exists():
            sys.exit(1)


if __name__ == "__main__":
    main()
