"""Lookup speed on a stored table, opened lazily: resident memory after opening and after
the first lookup, then batches of value -> rank and run -> rank lookups on one core.

    python scripts/bench_lookup.py STORE "DCG(b=2)@30" [--rb K] [--count 1000000]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import psutil


def rss() -> int:
    return psutil.Process(os.getpid()).memory_info().rss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("measure")
    ap.add_argument("--rb", type=int)
    ap.add_argument("--count", type=int, default=1_000_000)
    args = ap.parse_args()
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    import irscale
    from irscale.enumerate.split_kernels import popcount_ids

    m = irscale.parse_measure(args.measure)
    # compile the kernels on a tiny table first, so timings are lookups, not compilation
    warm = irscale.scale(f"{m.name}{str(m)[len(m.name):].split('@')[0]}@6", rb=1 if m.rb_dependent else None)
    warm.rank(warm.values[:2])
    warm.rank_runs(np.zeros((1, 6), np.uint8))

    r0 = rss()
    t0 = time.perf_counter()
    store = irscale.open_store(args.store)
    s = store.scale(m, rb=args.rb)
    t_open = time.perf_counter() - t0
    r1 = rss()
    rng = np.random.default_rng(1)
    n = m.n
    ids = rng.integers(0, 2 ** n, size=args.count, dtype=np.int64)
    if m.rb_dependent and args.rb is not None and args.rb < n:  # feasible runs only
        ids = ids[popcount_ids(ids, 2, n) <= args.rb]
    values = m.values_of_ids(ids, args.rb)
    t0 = time.perf_counter()
    first = s.rank(values[:1], errors="zero")
    t_first = time.perf_counter() - t0
    r2 = rss()
    size = os.path.getsize(args.store)
    print(f"{m} rb={args.rb}: K = {s.k}, store file {size / 1e9:.2f} GB")
    print(f"open + scale: {t_open * 1e3:.1f} ms, first lookup {t_first * 1e3:.2f} ms (rank {first[0]}); "
          f"resident memory +{(r1 - r0) / 2**20:.1f} MiB after open, +{(r2 - r0) / 2**20:.1f} MiB after first lookup")
    for label, fn, arg in (("value -> rank", lambda v: s.rank(v, errors="zero"), values),
                           ("run id -> rank", s.rank_ids, ids)):
        for _ in range(2):
            t0 = time.perf_counter()
            out = fn(arg)
            dt = time.perf_counter() - t0
        extra = f"; {int((out == 0).sum())} values ambiguous within tolerance (rank 0)" if label[0] == "v" else ""
        print(f"{label}: {len(arg)} lookups in {dt:.2f} s = {len(arg) / dt / 1e6:.2f} million/s (one core, "
              f"second pass){extra}")
    rv, ri = s.rank(values, errors="zero"), s.rank_ids(ids)
    ok = bool(np.all((rv == ri) | (rv == 0)))
    print(f"value and run lookups agree wherever the value is unambiguous: {ok}; resident memory now "
          f"+{(rss() - r0) / 2**20:.0f} MiB (file pages mapped by the lookups)")


if __name__ == "__main__":
    main()
