"""Worker processes end with the build that started them, however it ends: SIGKILL the
parent of a ``--jobs 2`` build while its loky workers are busy, and every process it
started is gone within a few seconds."""
import signal
import subprocess
import sys
import time

import pytest

psutil = pytest.importorskip("psutil")


def _gone(p) -> bool:
    try:
        return p.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.slow      # about 2 s
def test_sigkill_of_the_build_ends_its_workers(tmp_path):
    # AP@26 takes about 9 s with two workers: long enough to kill it in the middle
    build = subprocess.Popen([sys.executable, "-m", "irscale", "build", "-m", "AP@26", "--out", "t.h5", "-q",
                              "-j", "2"], cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parent = psutil.Process(build.pid)
    started = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            started = parent.children(recursive=True)
            workers = [p for p in started if "loky" in " ".join(p.cmdline()) and "resource_tracker" not in
                       " ".join(p.cmdline())]
            # wait until the workers have been working for a while (past the estimates' probes)
            if len(workers) >= 2 and sum(w.cpu_times().user for w in workers) > 1.0:
                break
            assert build.poll() is None, "the build ended before its workers were busy"
            time.sleep(0.1)
        else:
            pytest.fail("no busy loky workers within 60 s")
        started = parent.children(recursive=True)
        build.send_signal(signal.SIGKILL)
        build.wait()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10 and not all(_gone(p) for p in started):
            time.sleep(0.1)
        left = [(p.pid, " ".join(p.cmdline())[:80]) for p in started if not _gone(p)]
        assert not left, f"still running {time.monotonic() - t0:.1f} s after the build was killed: {left}"
        assert time.monotonic() - t0 < 5
    finally:
        for p in started:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        if build.poll() is None:
            build.kill()
