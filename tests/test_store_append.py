"""Append commits (irscale.store.journal): tables added to a store in place, the tables
already there not copied, atomic through a redo journal; readers never see a half-done
commit, whenever the writer dies."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest

import irscale
from irscale.errors import CorruptStoreError
from irscale.store import journal


def _tables(path) -> set:
    store = irscale.open_store(path)
    store.verify()
    return {t["measure"] for t in store.tables()}


def _arrays(path, name) -> dict:
    with h5py.File(path, "r") as f:
        g = f[f"tables/{name}"]
        return {k: g[k][()] for k in g}


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8,AP@10")
    return path


def test_an_append_copies_nothing_and_writes_what_a_copy_writes(tmp_path, store):
    ino, before = store.stat().st_ino, store.read_bytes()
    end = journal.end_of_data(store)
    assert end == len(before)
    irscale.build_store(store, "AP@14,RR@12")
    assert store.stat().st_ino == ino                              # not replaced by a new file
    assert _tables(store) == {"P@8", "AP@10", "AP@14", "RR@12"}
    assert journal.end_of_data(store) == store.stat().st_size
    # the data of the tables already there did not move
    with h5py.File(store, "r") as f:
        ds = f["tables/AP@10/ids"]
        offset, size = ds.id.get_offset(), ds.id.get_storage_size()
    assert store.read_bytes()[offset:offset + size] == before[offset:offset + size]
    # the same tables as a store written by copies (a replaced table goes through one)
    other = tmp_path / "o.h5"
    irscale.build_store(other, "P@8,AP@10")
    irscale.build_store(other, "AP@14,RR@12")
    irscale.build_store(other, "AP@14", rebuild=True)
    for name in ("AP@10", "AP@14", "RR@12"):
        a, b = _arrays(store, name), _arrays(other, name)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert not journal.redo_path(store).exists()


def test_a_replaced_table_goes_through_a_copy(store):
    ino = store.stat().st_ino
    irscale.build_store(store, "AP@10", rebuild=True)
    assert store.stat().st_ino != ino
    assert _tables(store) == {"P@8", "AP@10"}


def test_a_superblock_the_journal_cannot_take_is_copied(tmp_path):
    path = tmp_path / "latest.h5"
    irscale.build_store(path, "P@8")
    with h5py.File(path, "r") as f, h5py.File(tmp_path / "l2.h5", "w", libver="latest") as g:
        for k, v in f.attrs.items():
            g.attrs[k] = v
        f.copy("tables", g)
    path = tmp_path / "l2.h5"
    assert journal.end_of_data(path) is None
    ino = path.stat().st_ino
    irscale.build_store(path, "AP@10")
    assert path.stat().st_ino != ino
    assert _tables(path) == {"P@8", "AP@10"}


#: Where the child dies (os._exit, as SIGKILL would leave things), and what a reader then sees.
CRASHES = {
    "before the journal": ("_write_journal", "before", False),
    "after the journal": ("_apply", "before", True),
    "half applied": ("_apply", "half", True),
    "after applying": ("_apply", "after", True),
}


@pytest.mark.parametrize("where", list(CRASHES))
def test_a_writer_dying_at_any_step_leaves_the_old_store_or_the_new_one(tmp_path, store, where):
    fn, when, new = CRASHES[where]
    script = textwrap.dedent(f"""
        import os, irscale
        from irscale.store import journal
        real = journal.{fn}
        def dying(*args):
            if {when!r} == "half":
                fd, changes, size = args
                real(fd, changes[: max(1, len(changes) // 2)], os.fstat(fd).st_size)
            elif {when!r} == "after":
                real(*args)
            os._exit(9)
        journal.{fn} = dying
        irscale.build_store({str(store)!r}, "AP@14")
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 9, r.stderr
    assert journal.redo_path(store).exists() == new
    # a reader finishes a journaled commit, and sees the old or the new store, whole
    assert _tables(store) == ({"P@8", "AP@10", "AP@14"} if new else {"P@8", "AP@10"})
    assert not journal.redo_path(store).exists()
    # and the next commit works (data of a commit that never reached its journal cut off)
    irscale.build_store(store, "AP@14,RR@9")
    assert _tables(store) == {"P@8", "AP@10", "AP@14", "RR@9"}
    assert journal.end_of_data(store) == store.stat().st_size


@pytest.mark.slow      # 13-27 s: readers in another process during 12 commits (CI runs it)
def test_readers_never_see_a_half_done_commit(tmp_path, store):
    """A reader process lists the store and reads its tables while this one appends
    tables one by one: no error, and the tables only ever grow."""
    reader = textwrap.dedent(f"""
        import sys, time, irscale
        seen, rounds, end = 0, 0, time.time() + 60
        irscale.open_store({str(store)!r}).tables()
        print("ready", flush=True)
        while time.time() < end:
            store = irscale.open_store({str(store)!r})
            names = [t["measure"] for t in store.tables()]
            assert len(names) >= seen, (names, seen)
            seen = len(names)
            store.table(names[-1])
            rounds += 1
            if seen == 14:
                break
        print(rounds, seen)
    """)
    child = subprocess.Popen([sys.executable, "-c", reader], cwd=tmp_path, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
        for n in range(3, 15):
            irscale.build_store(store, f"RR@{n}")
            time.sleep(0.05)
    finally:
        out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    rounds, seen = map(int, out.split())
    assert seen == 14 and rounds > 1
    assert _tables(store) == {"P@8", "AP@10"} | {f"RR@{n}" for n in range(3, 15)}


def test_readers_hold_the_commit_lock(store):
    """While a reader has the store's metadata open, an append cannot change it."""
    def free() -> bool:
        fd = os.open(store, os.O_RDWR)
        try:
            got = journal._lock(fd, exclusive=True, wait=False)
            if got:
                journal._unlock(fd)
            return got
        finally:
            os.close(fd)
    with journal.open_for_reading(store) as f:
        assert "tables" in f
        assert not free()
    assert free()


def test_a_store_open_elsewhere_delays_nothing(tmp_path, store):
    """HDF5 holds a flock on files it has open (h5py, HDFView): an append commit's lock
    is another kind, so it neither waits for them nor makes their opens fail."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time, h5py
        f = h5py.File({str(store)!r}, "r")
        print("open", flush=True)
        sys.stdin.readline()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        assert holder.stdout.readline() == "open\n"
        ino = store.stat().st_ino
        t0 = time.perf_counter()
        irscale.build_store(store, "AP@12")
        assert time.perf_counter() - t0 < journal.WAIT_SECONDS
        assert store.stat().st_ino == ino                    # appended, not copied
        with h5py.File(store, "r") as f:                       # HDF5's own lock is not in the way
            assert "AP@12" in f["tables"]
    finally:
        holder.communicate("\n", timeout=30)
    assert _tables(store) == {"P@8", "AP@10", "AP@12"}


def test_a_failed_folder_flush_after_the_journal_still_commits(store, monkeypatch):
    """Once the journal is renamed into place the commit is decided: an error after it
    (here the folder's fsync) does not cut the new data off."""
    real, calls = journal.fsync_folder, []

    def failing(folder):
        calls.append(folder)
        if len(calls) == 1:
            raise OSError(5, "Input/output error")
        real(folder)
    monkeypatch.setattr(journal, "fsync_folder", failing)
    with pytest.raises(OSError):
        journal._write_journal(store, [], 0, {})           # the failure is real ...
    journal.redo_path(store).unlink()
    calls.clear()
    irscale.build_store(store, "AP@12")                      # ... and the commit goes on past it
    monkeypatch.undo()
    assert _tables(store) == {"P@8", "AP@10", "AP@12"}
    assert not journal.redo_path(store).exists()


def test_an_apply_that_fails_says_the_journal_holds_the_commit(store, monkeypatch):
    def failing(fd, changes, size):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(journal, "_apply", failing)
    with pytest.raises(journal.JournaledError, match="its journal .*holds it"):
        irscale.build_store(store, "AP@12")
    monkeypatch.undo()
    assert journal.redo_path(store).exists()
    assert _tables(store) == {"P@8", "AP@10", "AP@12"}       # the next reader finishes it
    assert not journal.redo_path(store).exists()


def _die_after_the_journal(tmp_path, store, measure):
    script = textwrap.dedent(f"""
        import os, irscale
        from irscale.store import journal
        journal._apply = lambda *args: os._exit(9)
        irscale.build_store({str(store)!r}, {measure!r})
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 9, r.stderr
    assert journal.redo_path(store).exists()


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_journal_of_another_file_is_set_aside(tmp_path, store, how):
    """The store of an interrupted commit deleted (or replaced by a copy) before anyone
    read it: its journal is never replayed into the new file."""
    _die_after_the_journal(tmp_path, store, "AP@12")
    if how == "deleted":
        store.unlink()
        with pytest.warns(irscale.errors.IrscaleWarning, match="was not replayed: .*does not exist"):
            irscale.build_store(store, "RR@9")
        assert _tables(store) == {"RR@9"}
    else:
        other = tmp_path / "other.h5"
        irscale.build_store(other, "RR@9,P@5")
        os.replace(other, store)
        with pytest.warns(irscale.errors.IrscaleWarning, match="written for another file"):
            assert _tables(store) == {"RR@9", "P@5"}
    assert not journal.redo_path(store).exists()
    assert list(tmp_path.glob(".t.h5.redo-stale-*"))


def test_a_damaged_journal_says_what_to_do(store):
    journal.redo_path(store).write_bytes(journal.MAGIC + b"garbage" * 10)
    with pytest.raises(CorruptStoreError, match=r"is damaged.*delete .*\.t\.h5\.redo, then check the store"):
        irscale.open_store(store).tables()
    journal.redo_path(store).unlink()
    assert _tables(store) == {"P@8", "AP@10"}


def test_ctrl_c_during_a_commit_waits_for_it_and_says_so(tmp_path, store):
    """SIGINT in the middle of writing the journal's changes into the store (with tqdm's
    monitor thread running, as in any build): the commit completes, then the build stops
    saying it kept the table."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        from irscale.store import journal
        real = journal._apply
        def interrupted(fd, changes, size):
            os.kill(os.getpid(), signal.SIGINT)
            real(fd, changes, size)
        journal._apply = interrupted
        from irscale.cli import main
        sys.exit(main(["build", "-m", "AP@12", "--out", {str(store)!r}]))
    """)
    r = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"})
    assert r.returncode == 130, (r.returncode, r.stderr)
    assert "1 table(s) committed to" in r.stderr and "unchanged" not in r.stderr, r.stderr
    assert not journal.redo_path(store).exists()
    assert _tables(store) == {"P@8", "AP@10", "AP@12"}
