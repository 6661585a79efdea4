"""Helpers of the benchmark scripts: run a command and sample its memory."""
from __future__ import annotations

import subprocess
import time

import psutil


def run_sampled(cmd: list[str], interval: float = 0.05, **kw) -> dict:
    """Run ``cmd``; return wall seconds, exit code, the peak resident memory of the
    largest single process and the peak of the whole process tree (bytes)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, **kw)
    ps = psutil.Process(proc.pid)
    peak_single = peak_tree = 0
    while proc.poll() is None:
        try:
            procs = [ps] + ps.children(recursive=True)
            rss = []
            for p in procs:
                try:
                    rss.append(p.memory_info().rss)
                except psutil.Error:
                    pass
            if rss:
                peak_single = max(peak_single, max(rss))
                peak_tree = max(peak_tree, sum(rss))
        except psutil.Error:
            pass
        time.sleep(interval)
    return {"seconds": time.perf_counter() - t0, "rc": proc.returncode, "peak_single": peak_single,
            "peak_tree": peak_tree}


def gib(b: float) -> str:
    return f"{b / 2 ** 30:.2f} GiB"
