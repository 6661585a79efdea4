"""Writers of one store exclude each other (issue 13, item 1): a lock file next to the
store, held for the whole build; a second build waits, naming the holder's PID, then
builds what is still missing; a lock left by a SIGKILLed build does not block; readers
never wait."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import irscale
from irscale.cli import main
from irscale.errors import StoreBusyError
from irscale.store.lock import StoreLock, lock_path

PY = sys.executable


def _child(script: str, cwd, **kw) -> subprocess.Popen:
    return subprocess.Popen([PY, "-c", textwrap.dedent(script)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _builder(path, measures, go, extra="") -> str:
    """A child that imports everything, waits for the file ``go``, then builds."""
    return f"""
        import os, time, irscale
        irscale.scale("AP@6", rb=6)                     # kernels loaded before the start signal
        while not os.path.exists({str(go)!r}):
            time.sleep(0.005)
        irscale.build_store({str(path)!r}, {measures!r}{extra})
    """


def _measures(path) -> set:
    return {t["measure"] for t in irscale.open_store(path).tables()}


@pytest.mark.slow
def test_two_builds_of_different_measures_keep_every_table(tmp_path):
    for attempt in range(3):
        path = tmp_path / f"t{attempt}.h5"
        go = tmp_path / f"go{attempt}"
        procs = [_child(_builder(path, m, go), tmp_path) for m in ("AP@16", "DCG(b=2)@16,P@16")]
        time.sleep(1.0)
        go.touch()
        for p in procs:
            out, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        assert _measures(path) == {"AP@16", "DCG(b=2)@16", "P@16"}, f"attempt {attempt}: a table was lost"
        irscale.open_store(path).verify()
        assert not lock_path(path).exists()
        assert not list(tmp_path.glob(f".t{attempt}.h5.*")), "temporary files, checkpoints or lock left"


def test_two_identical_builds_at_once_both_succeed(tmp_path):
    path = tmp_path / "t.h5"
    go = tmp_path / "go"
    # many small buckets: both builds would otherwise write the same checkpoint folder
    procs = [_child(_builder(path, "AP@16,RR@16", go, ", bucket_items=3000"), tmp_path) for _ in range(2)]
    time.sleep(1.0)
    go.touch()
    errs = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        errs.append(err)
        assert p.returncode == 0, err
    assert not any("Directory not empty" in e or "Traceback" in e for e in errs), errs
    assert _measures(path) == {"AP@16", "RR@16"}
    irscale.open_store(path).verify()
    assert not (tmp_path / ".t.h5.build").exists()


def test_busy_store_waits_for_the_holder_and_names_it(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8")
    holder = _child(f"""
        import sys, time
        from irscale.store.lock import StoreLock
        with StoreLock({str(path)!r}):
            print("locked", flush=True)
            time.sleep(float(sys.stdin.readline()))
    """, tmp_path, stdin=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == "locked"
        info = json.loads(lock_path(path).read_text())
        assert info["pid"] == holder.pid
        # refuse at once / after a short wait, naming the PID
        for wait in (0, 0.3):
            with pytest.raises(StoreBusyError, match=rf"being written by PID {holder.pid}\b"):
                irscale.build_store(path, "AP@8", wait=wait)
        assert main(["build", "-m", "AP@8", "--out", str(path), "-q", "--wait", "0"]) == 2
        # by default: wait, say for whom, then build once the holder is done
        cli = subprocess.Popen([PY, "-m", "irscale", "build", "-m", "AP@8", "--out", str(path), "-q"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        guard = threading.Timer(60, cli.kill)
        guard.start()
        said = cli.stderr.readline()             # it says whom it waits for, then waits
        guard.cancel()
        assert f"waiting for PID {holder.pid}" in said and str(path) in said, said
        time.sleep(0.5)
        assert cli.poll() is None, cli.communicate()
        holder.stdin.write("0\n")
        holder.stdin.flush()
        out, err = cli.communicate(timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert cli.returncode == 0, err
    assert _measures(path) == {"P@8", "AP@8"}


def test_lock_of_a_killed_build_does_not_block_the_next(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8")
    script = f"""
        import os, signal
        import irscale
        from irscale.enumerate import split
        real = split.BucketResult.save
        saved = []
        def save(self, p):
            real(self, p)
            saved.append(p)
            if len(saved) == 3:              # in the middle of the table, lock held
                os.kill(os.getpid(), signal.SIGKILL)
        split.BucketResult.save = save
        irscale.build_store({str(path)!r}, "AP@16", bucket_items=3000, n_jobs=1)
    """
    p = _child(script, tmp_path)
    _, err = p.communicate(timeout=120)
    assert p.returncode == -signal.SIGKILL, err
    assert json.loads(lock_path(path).read_text())["pid"] == p.pid   # the killed build's lock file is left
    store = irscale.build_store(path, "AP@16", bucket_items=3000, wait=0)   # busy would raise at once
    assert {t["measure"] for t in store.tables()} == {"P@8", "AP@16"}
    store.verify()
    assert not lock_path(path).exists()


def test_lock_is_reentrant_in_a_thread_and_excludes_other_threads(tmp_path):
    path = tmp_path / "t.h5"
    events = []
    with StoreLock(path):
        with StoreLock(path, wait=0):          # the same thread: re-entrant
            assert lock_path(path).exists()

        def other():
            try:
                with StoreLock(path, wait=0.2, notify=None):
                    events.append("locked")
            except StoreBusyError as e:
                events.append(str(e))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert lock_path(path).exists()        # the inner release kept the outer hold
    assert len(events) == 1 and f"PID {os.getpid()}" in events[0]
    assert not lock_path(path).exists()
    with StoreLock(path, wait=0):              # free again
        pass


def test_readers_do_not_wait_for_a_writer(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "AP@8")
    with StoreLock(path):
        assert irscale.open_store(path).scale("AP@8", rb=3).rank_runs([[1, 0, 0, 0, 0, 0, 0, 0]]).size == 1
        assert irscale.build_store(path, "AP@8", wait=0).has("AP@8")   # nothing to build: no lock needed
