"""Builds of one store (a folder of table files): builds of different tables go on at once
and keep every table; a build of a table another build is writing waits for its lock (a
lock per table), then builds what is still missing; a lock of a SIGKILLed build does not
block; readers take no lock and never wait; the same store reached through a symlink and
a hard link is one store; nothing is written through a symlink planted in the folder."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import irscale
from irscale.cli import main
from irscale.errors import StoreBusyError
from irscale.store.folder import TableLocks, file_of

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
        assert not list(path.glob(".tmp-*")), "temporary files left"
        assert not list(tmp_path.glob(f".t{attempt}.h5.*")), "checkpoints left"


@pytest.mark.slow      # about 3 s
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


def _holder(path, names, cwd) -> subprocess.Popen:
    """A child holding the locks of the tables ``names`` of ``path`` until told to stop."""
    return _child(f"""
        import sys
        from pathlib import Path
        from irscale.store.folder import TableLocks
        with TableLocks(Path({str(path)!r}), {names!r}):
            print("locked", flush=True)
            sys.stdin.readline()
    """, cwd, stdin=subprocess.PIPE)


def test_a_busy_table_waits_for_its_holder_and_other_tables_do_not(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8")
    holder = _holder(path, ["AP@8"], tmp_path)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for wait in (0, 0.3):                      # refuse at once / after a short wait, naming the table
            with pytest.raises(StoreBusyError, match=r"table AP@8 .* being built by another build"):
                irscale.build_store(path, "AP@8", wait=wait)
        assert main(["build", "-m", "AP@8", "--out", str(path), "-q", "--wait", "0"]) == 2
        assert irscale.build_store(path, "RR@8", wait=0).has("RR@8")      # another table: at once
        # by default: wait, say so, then build once the holder is done
        cli = subprocess.Popen([PY, "-m", "irscale", "build", "-m", "AP@8", "--out", str(path), "-q"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        guard = threading.Timer(60, cli.kill)
        guard.start()
        said = cli.stderr.readline()
        guard.cancel()
        assert "waiting for another build to finish table AP@8" in said and str(path) in said, said
        time.sleep(0.5)
        assert cli.poll() is None, cli.communicate()
        holder.stdin.write("\n")
        holder.stdin.flush()
        out, err = cli.communicate(timeout=60)
    finally:
        holder.kill()
        holder.wait()
    assert cli.returncode == 0, err
    assert _measures(path) == {"P@8", "AP@8", "RR@8"}


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
    store = irscale.build_store(path, "AP@16", bucket_items=3000, wait=0)   # busy would raise at once
    assert {t["measure"] for t in store.tables()} == {"P@8", "AP@16"}
    store.verify()


def test_readers_take_no_lock_and_a_reader_delays_no_build(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "AP@8")
    with TableLocks(path, ["AP@8"]):               # a build writing AP@8: readers read on
        assert irscale.open_store(path).scale("AP@8", rb=3).rank_runs([[1, 0, 0, 0, 0, 0, 0, 0]]).size == 1
        assert irscale.build_store(path, "AP@8", wait=0).has("AP@8")   # nothing to build: no lock needed
    reader = irscale.open_store(path)
    table = reader.table("AP@8")                   # held open, memory-mapped
    ids = np.array(table.ids)
    t0 = time.perf_counter()
    irscale.build_store(path, "AP@8,RR@8", rebuild=True, wait=0)
    assert time.perf_counter() - t0 < 30
    assert np.array_equal(np.asarray(table.ids), ids)      # the replaced file stays mapped as it was


@pytest.mark.slow
def test_a_store_through_a_symlink_and_a_hard_link_loses_nothing(tmp_path):
    """Two builds at once, one through a symlink to the store folder, 8 rounds: every table
    there and verified; the symlink stays a symlink."""
    real = tmp_path / "real"
    link = tmp_path / "link"
    irscale.build_store(real, "P@4")
    link.symlink_to(real)
    for round_ in range(8):
        go = tmp_path / f"go{round_}"
        a, b = f"AP@{6 + round_}", f"RR@{6 + round_}"
        procs = [_child(_builder(real, a, go), tmp_path), _child(_builder(link, b, go, ", rebuild=True"), tmp_path)]
        time.sleep(0.5)
        go.touch()
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        assert {a, b} <= _measures(real)
    assert link.is_symlink() and len(irscale.open_store(link).verify()) == 17
    # a table file hard-linked elsewhere is replaced by a rebuild, never written through
    outside = tmp_path / "outside.h5"
    os.link(real / file_of("P@4"), outside)
    before = outside.read_bytes()
    irscale.build_store(link, "P@4", rebuild=True)
    assert outside.read_bytes() == before


def test_nothing_is_written_through_a_planted_symlink(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (path / file_of("AP@6")).symlink_to(victim)                         # a planted table file
    irscale.build_store(path, "AP@6", rebuild=True)
    assert victim.read_text() == "keep me" and not (path / file_of("AP@6")).is_symlink()
    irscale.open_store(path).verify()
