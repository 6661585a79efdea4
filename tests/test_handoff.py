"""Bucket results from local worker processes through shared memory (enumerate/handoff.py):
the same entries as in-process, read-only arrays mapped from files unlinked at once, the
pipe where there is no shared memory or no room, and no file left behind (results never
taken, parents killed)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

import irscale
from irscale.enumerate import handoff, split
from irscale.enumerate.fanout import Fanout
from irscale.enumerate.processes import pid_namespace


@pytest.fixture
def prefix():
    p = handoff.handoff_prefix()
    if p is None:
        print(f"\nskipped: {handoff.SHARED_MEMORY} is not a writable tmpfs on this machine")
        pytest.skip(f"no shared memory at {handoff.SHARED_MEMORY}")
    free = shutil.disk_usage(os.path.dirname(p)).free
    if free < handoff.SPARE_BYTES + (256 << 20):
        print(f"\nskipped: {handoff.SHARED_MEMORY} has {free >> 20} MiB free, too little to hand results over")
        pytest.skip(f"{handoff.SHARED_MEMORY} too small")
    yield p
    handoff.remove_unclaimed(p)


def _mine(prefix):
    folder, start = os.path.split(prefix)
    return sorted(n for n in os.listdir(folder) if n.startswith(start))


def _result(seed=0, m=1000):
    rng = np.random.default_rng(seed)
    return split.BucketResult(rng.integers(0, 1 << 30, m).astype(np.uint32), rng.integers(1, 99, m).astype(np.uint16),
                              rng.integers(0, 31, m).astype(np.uint8), rng.integers(0, 2, m).astype(np.bool_), 0.5, 3,
                              (7, 9))


def test_round_trip_maps_read_only_arrays_and_unlinks(prefix):
    want = _result()
    handed = handoff.hand_over(_result(), split.BucketResult.ARRAYS, prefix)
    assert isinstance(handed, handoff.Handed)
    assert _mine(prefix) == [os.path.basename(handed.path)]
    got = handoff.take_back(handed)
    assert _mine(prefix) == []                                  # unlinked once mapped
    for name in split.BucketResult.ARRAYS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and (a == b).all()
        assert not a.flags.writeable
    assert (got.min_gap, got.redecided, got.gap_pair) == (0.5, 3, (7, 9))


def test_empty_arrays_round_trip(prefix):
    got = handoff.take_back(handoff.hand_over(_result(m=0), split.BucketResult.ARRAYS, prefix))
    assert all(getattr(got, n).shape == (0,) for n in split.BucketResult.ARRAYS)
    assert _mine(prefix) == []


def test_the_pipe_without_shared_memory_or_room(prefix, monkeypatch):
    r = _result()
    assert handoff.hand_over(r, split.BucketResult.ARRAYS, None) is r
    monkeypatch.setattr(handoff, "SPARE_BYTES", 1 << 60)        # no room
    assert handoff.hand_over(r, split.BucketResult.ARRAYS, prefix) is r
    assert r.ids is not None and _mine(prefix) == []
    assert handoff.take_back(r) is r
    monkeypatch.setattr(handoff, "SHARED_MEMORY", handoff.SHARED_MEMORY / "no-such-folder")
    assert handoff.handoff_prefix() is None


def test_unclaimed_and_stale_files_are_removed(prefix, tmp_path):
    folder = os.path.dirname(prefix)
    handed = [handoff.hand_over(_result(s), split.BucketResult.ARRAYS, prefix) for s in range(3)]
    other = handoff.handoff_prefix()
    kept = handoff.hand_over(_result(), split.BucketResult.ARRAYS, other)
    assert handoff.remove_unclaimed(prefix) == 3 and _mine(prefix) == []
    assert not any(os.path.exists(h.path) for h in handed)
    assert os.path.exists(kept.path)                             # another call's file is left alone
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    ns = pid_namespace()
    stale = os.path.join(folder, f"{handoff.PREFIX}{ns}-{int(dead.stdout)}-0123456789ab-1-feed")
    elsewhere = os.path.join(folder, f"{handoff.PREFIX}1{ns}-{int(dead.stdout)}-0123456789ab-1-feed")
    for path in (stale, elsewhere):
        with open(path, "wb") as fh:
            fh.write(b"x")
    assert handoff.remove_stale(folder) >= 1
    assert not os.path.exists(stale) and os.path.exists(kept.path)   # this live process's file stays
    assert os.path.exists(elsewhere)                  # another PID namespace's PIDs mean nothing here
    os.unlink(elsewhere)
    handoff.take_back(kept)


def test_an_error_in_the_parent_leaves_no_file(prefix, monkeypatch):
    """An exception (here an interrupt) while the parent takes results: the workers stop
    taking buckets, and the files of results not taken are removed."""
    sf = irscale.parse_measure("AP@12").split_form()
    real, calls = handoff.take_back, []

    def interrupted(handed):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(handed)
    monkeypatch.setattr(handoff, "take_back", interrupted)
    mine = f"{handoff.PREFIX}{pid_namespace()}-{os.getpid()}-"
    with pytest.raises(KeyboardInterrupt):
        split.split_enumerate(sf, Fanout(2), target=200)
    time.sleep(1.0)                                   # workers that were still running have returned
    assert not [n for n in os.listdir(os.path.dirname(prefix)) if n.startswith(mine)]


def test_workers_hand_buckets_over_through_shared_memory(prefix):
    sf = irscale.parse_measure("AP@12").split_form()
    local = split.split_enumerate(sf, Fanout(1), target=300)
    handed = split.split_enumerate(sf, Fanout(2), target=300)     # loky workers, no work folder
    assert len(handed) == len(local) > 1
    assert all(not p.ids.flags.writeable for p in handed)      # mapped, not unpickled
    for a, b in zip(local, handed):
        for name in split.BucketResult.ARRAYS:
            assert (getattr(a, name) == getattr(b, name)).all()
        assert (a.min_gap, a.gap_pair, a.redecided) == (b.min_gap, b.gap_pair, b.redecided)
    folder, start = os.path.split(prefix)
    mine = f"{handoff.PREFIX}{pid_namespace()}-{os.getpid()}-"
    assert not [n for n in os.listdir(folder) if n.startswith(mine) and not n.startswith(start)]


def test_the_parent_counts_a_result_it_takes_in_its_resident_memory(prefix):
    psutil = pytest.importorskip("psutil")
    big = _result(m=4 << 20)                     # 4 M entries: 32 MiB of arrays
    handed = handoff.hand_over(big, split.BucketResult.ARRAYS, prefix)
    before = psutil.Process().memory_info().rss
    got = handoff.take_back(handed)
    after = psutil.Process().memory_info().rss
    assert after - before >= 0.9 * sum(getattr(got, n).nbytes for n in split.BucketResult.ARRAYS)


ORPHAN = """
import os, sys, time
import numpy as np
from irscale.enumerate import fanout, handoff, split
from irscale.enumerate.processes import pid_namespace
parent = int(sys.argv[1])
fanout.watch_parent(parent)            # as a loky worker does
prefix = os.path.join(sys.argv[2], f"{handoff.PREFIX}{pid_namespace()}-{parent}-0123456789ab-")
r = split.BucketResult(np.arange(10, dtype=np.uint32), np.ones(10, np.uint8), np.zeros(10, np.uint8),
                       np.ones(10, np.bool_), 1.0, 0)
print(handoff.hand_over(r, split.BucketResult.ARRAYS, prefix).path, flush=True)
time.sleep(60)
"""

PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid()), sys.argv[2]],
                         stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(60)
"""


@pytest.mark.slow      # about 2.5 s
def test_workers_of_a_killed_parent_remove_its_results(prefix, tmp_path):
    """A parent killed (SIGKILL) between a worker's hand-over and its own mapping: the
    worker, watching its parent, removes the file before it ends."""
    folder = os.path.dirname(prefix)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, ORPHAN, folder], stdout=subprocess.PIPE, text=True,
                              cwd=tmp_path)     # not the checkout, whose irscale/ folder is not the package
    try:
        line = parent.stdout.readline().split()
        assert len(line) == 2, "the worker did not hand its result over"
        child_pid, path = line
        assert os.path.exists(path)
        assert os.path.basename(path).startswith(f"{handoff.PREFIX}{pid_namespace()}-{parent.pid}-")
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not os.path.exists(path)
        while time.monotonic() < deadline:
            try:
                os.kill(int(child_pid), 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            raise AssertionError("the orphaned worker did not end")
    finally:
        parent.kill()
