"""What a build says when it ends: a second identical build says its tables are already
built; an interrupted build says what it kept (tables committed just before the Ctrl-C
included), does not call a store that never existed "unchanged", and suggests resuming
only when there is something to resume from; the command line prints that message (exit
130), not click's "Aborted"; a Ctrl-C while waiting for another build says so; a real
SIGINT to the build's process group prints the message once.
And the workers of a build: by default the cores this process may use."""
from __future__ import annotations

import _thread
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
from irscale.enumerate import split
from irscale.enumerate.jobs import available_cores
from irscale.store import fill


def _said(capsys) -> tuple[str, str]:
    got = capsys.readouterr()
    return got.out.strip(), got.err.strip()


# -- repeated builds -------------------------------------------------------------------------------
def test_a_second_identical_build_says_its_tables_are_already_built(tmp_path, capsys):
    out = str(tmp_path / "t.h5")
    assert main(["build", "-q", "-m", "P@5,AP@5,RR@5", "--out", out]) == 0
    first, _ = _said(capsys)
    assert "3 tables for 3 measures" in first and "already" not in first
    assert main(["build", "-q", "-m", "P@5,AP@5,RR@5", "--out", out]) == 0
    second, _ = _said(capsys)
    assert second != first
    assert "all 3 tables already built" in second and "3 tables in the store" in second
    assert main(["build", "-q", "-m", "AP@5", "--out", out]) == 0
    one, _ = _said(capsys)
    assert "AP@5" in one and "already built" in one
    assert main(["build", "-q", "-m", "P@5,AP@5,R@5,P@6", "--out", out]) == 0
    both, _ = _said(capsys)
    assert "2 tables built" in both and "2 already built" in both and "5 tables in the store" in both
    assert main(["build", "-q", "-m", "P@5", "--rebuild", "--out", out]) == 0
    rebuilt, _ = _said(capsys)
    assert "already" not in rebuilt                    # rebuilt: built again, not found


def test_build_store_reports_what_it_built_and_found(tmp_path):
    path = tmp_path / "t.h5"
    report = fill.BuildReport()
    irscale.build_store(path, "P@5,AP@5", report=report)
    assert (sorted(report.built), report.found) == (["AP@5", "P@5"], [])
    report = fill.BuildReport()
    irscale.build_store(path, "P@5,AP@6", report=report)
    assert (report.built, report.found) == (["AP@6"], ["P@5"])


# -- interrupted builds ----------------------------------------------------------------------------
def _interrupt_buckets(monkeypatch, after: int = 0):
    """Ctrl-C in the enumeration of the table of N = 18, after ``after`` buckets."""
    real = split.process_bucket
    calls = {"n": 0}

    def interrupted(sf, *args):
        if sf.n == 18:                                 # not the estimate's small probe builds
            calls["n"] += 1
            if calls["n"] > after:
                raise KeyboardInterrupt
        return real(sf, *args)
    monkeypatch.setattr(split, "process_bucket", interrupted)


def test_interrupting_the_build_of_a_new_store_says_nothing_was_written(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    _interrupt_buckets(monkeypatch)
    with pytest.raises(KeyboardInterrupt) as stopped:
        irscale.build_store(path, "AP@18", n_jobs=1)
    message = str(stopped.value)
    assert not path.exists()
    assert "not created" in message and "unchanged" not in message
    assert "resume" not in message                   # nothing kept, no checkpoints: nothing to resume from


def _contents(store) -> dict:
    """The store folder's files (lock files apart) and their bytes."""
    return {p.name: p.read_bytes() for p in store.iterdir() if not p.name.startswith(".")}


def test_interrupting_a_build_of_an_existing_store_says_it_is_unchanged(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@5")
    before = _contents(path)
    _interrupt_buckets(monkeypatch)
    with pytest.raises(KeyboardInterrupt) as stopped:
        irscale.build_store(path, "AP@18", n_jobs=1)
    assert _contents(path) == before
    assert "t.h5 is unchanged" in str(stopped.value) and "resume" not in str(stopped.value)


def test_interrupted_build_with_checkpoints_says_how_to_resume(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    _interrupt_buckets(monkeypatch, after=2)
    with pytest.raises(KeyboardInterrupt) as stopped:
        irscale.build_store(path, "AP@18", bucket_items=1 << 14, n_jobs=1)      # explicit work unit: checkpoints
    message = str(stopped.value)
    assert "not created" in message and "2 of" in message and "run the same build again to resume" in message


@pytest.mark.parametrize("where", ["after the commit", "deleting checkpoints"])
def test_a_ctrl_c_just_after_a_commit_counts_the_committed_table(tmp_path, monkeypatch, where):
    """The table is in the store: the message says it is kept, not that the store is
    unchanged, and that the same build resumes with the other."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@5")
    if where == "after the commit":
        real = fill.commit

        def commit_then_interrupted(*args, **kwargs):
            real(*args, **kwargs)
            raise KeyboardInterrupt
        monkeypatch.setattr(fill, "commit", commit_then_interrupted)
    else:
        def interrupted(wd, measure):
            raise KeyboardInterrupt
        monkeypatch.setattr(fill, "_forget_checkpoints", interrupted)
    with pytest.raises(KeyboardInterrupt) as stopped:
        irscale.build_store(path, "AP@8,RR@8")
    message = str(stopped.value)
    listed = {t.measure for t in irscale.open_store(path).tables()}
    assert len(listed) == 2 and "P@5" in listed and listed < {"P@5", "AP@8", "RR@8"}
    assert "unchanged" not in message and "1 table" in message
    assert "resume" in message                       # one table of the build is left to build


def test_cli_interrupt_prints_the_message_not_aborted(tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt("interrupted: t.h5 is unchanged; run the same build again to resume")

    monkeypatch.setattr("irscale.commands.build.build_store", interrupted)
    assert main(["build", "--measures", "AP@6", "--out", str(tmp_path / "t.h5")]) == 130
    said = capsys.readouterr().err
    assert "irscale: interrupted: t.h5 is unchanged; run the same build again to resume" in said
    assert "aborted" not in said

def test_a_ctrl_c_while_waiting_for_another_build_says_so(tmp_path, capsys):
    path = tmp_path / "t.h5"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from irscale.store import folder
        folder.create(Path({str(path)!r}))
        with folder.TableLocks(Path({str(path)!r}), ["AP@6"]):
            print("locked", flush=True)
            sys.stdin.readline()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        timer = threading.Timer(0.5, _thread.interrupt_main)
        timer.start()
        code = main(["build", "-q", "-m", "AP@6", "--out", str(path)])
    finally:
        holder.kill()
        holder.wait()
    _, err = _said(capsys)
    assert code == 130
    assert "waiting" in err and "wrote nothing" in err and "aborted" not in err
    assert not irscale.open_store(path).tables()


def test_a_sigint_to_the_build_prints_its_message_once(tmp_path):
    """Ctrl-C in a terminal: SIGINT to the whole process group (the build and its workers)."""
    proc = subprocess.Popen([sys.executable, "-m", "irscale", "build", "-q", "-m", "AP@22", "-j", "2",
                             "--bucket-items", str(1 << 16), "--out", "t.h5"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    work = tmp_path / ".t.h5.build" / "AP@22"
    deadline = time.monotonic() + 120
    while not list(work.glob("bucket-*/meta.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    said = [line for line in err.splitlines() if "interrupted" in line]
    assert len(said) == 1, err
    assert "Traceback" not in err
    assert "checkpoints in" in said[0] and "resume" in said[0]


# -- workers ---------------------------------------------------------------------------------------
def test_available_cores_follows_the_cpu_affinity(tmp_path):
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    assert available_cores() == len(os.sched_getaffinity(0))
    code = textwrap.dedent("""
        import os
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
        from irscale.enumerate.jobs import available_cores
        print(available_cores())
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1"


def test_builds_use_the_available_cores_by_default(tmp_path, monkeypatch):
    seen = []
    real = fill._build

    def spy(*args, **kwargs):
        seen.append(kwargs["n_jobs"])
        return real(*args, **kwargs)
    monkeypatch.setattr(fill, "_build", spy)
    monkeypatch.setattr(fill, "available_cores", lambda: 3)
    irscale.build_store(tmp_path / "a.h5", "P@5")
    irscale.build_store(tmp_path / "b.h5", "P@5", n_jobs=1)
    irscale.build_store(tmp_path / "c.h5", "P@5", n_jobs=-1)
    assert seen == [3, 1, -1]
    from irscale.commands import options
    monkeypatch.setattr(options, "available_cores", lambda: 5)
    assert main(["build", "-q", "-m", "P@6", "--out", str(tmp_path / "d.h5")]) == 0
    assert main(["build", "-q", "-m", "P@6", "-j", "1", "--out", str(tmp_path / "e.h5")]) == 0
    assert seen[3:] == [5, 1]
    assert main(["build", "-q", "-m", "P@6", "-j", "0", "--out", str(tmp_path / "f.h5")]) == 2
