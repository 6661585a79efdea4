"""Locks of a store folder: one flock per table, its lock file in the hidden folder
``.locks``; builds of one table exclude each other, builds of different tables do not; a
writer's temporary folder is known to be abandoned by its lock (nobody holds it), never by
a process id, so a build in another PID namespace (a container, another host of an NFS
mount) keeps its temporary files."""
import errno
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import irscale
from irscale.cli import main
from irscale.errors import StoreBusyError
from irscale.store import folder
from irscale.store.folder import TableLocks

PY = sys.executable


def _visible(path) -> list[str]:
    """What a listing of the store folder shows besides hidden entries."""
    return sorted(p.name for p in path.iterdir() if not p.name.startswith("."))


def _holder(path, name, cwd, temporary: bool = False) -> subprocess.Popen:
    """A child that takes the lock of table ``name`` of ``path`` (waiting for it, as a
    build does), with ``temporary`` makes the temporary folder of a commit of it, says
    "locked", and lets it go when told (a line on stdin)."""
    script = f"""
        import sys
        from pathlib import Path
        from irscale.store import folder
        path = Path({str(path)!r})

        def write(tmp):                       # a commit of the table, stopped halfway
            tmp.write_bytes(b"half a table")
            print("locked", flush=True)
            sys.stdin.readline()
            raise SystemExit(0)
        with folder.TableLocks(path, [{name!r}]):
            if {temporary!r}:
                folder.publish(path, folder.file_of({name!r}), write)
            print("locked", flush=True)
            sys.stdin.readline()
        print("released", flush=True)
    """
    return subprocess.Popen([PY, "-c", textwrap.dedent(script)], cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _line(stream, timeout=60) -> str:
    """The next line of a child's stream, within ``timeout`` seconds."""
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    assert out, "the child said nothing"
    return out[0]


def _tell(child: subprocess.Popen) -> None:
    child.stdin.write("\n")
    child.stdin.flush()


def _stop(*children) -> None:
    for child in children:
        if child is not None:
            child.kill()
            child.wait()


def test_lock_files_are_hidden_and_readers_ignore_them(tmp_path, capsys):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "AP@6,P@6")
    assert main(["build", "-m", "RR@6,AP@6", "--out", str(path), "-q"]) == 0
    assert _visible(path) == ["AP@6.h5", "P@6.h5", "RR@6.h5", folder.MANIFEST]
    capsys.readouterr()
    with TableLocks(path, ["AP@6", "RR@6"]):       # a build at work
        assert main(["info", str(path)]) == 0
        held = capsys.readouterr().out
    assert main(["info", str(path)]) == 0
    assert capsys.readouterr().out == held and "3 tables" in held and ".lock" not in held


def test_builds_of_one_table_exclude_each_other(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    a = _holder(path, "AP@6", tmp_path)
    b = None
    try:
        assert _line(a.stdout) == "locked\n"
        b = _holder(path, "AP@6", tmp_path)
        assert "waiting for another build to finish table AP@6" in _line(b.stderr)
        with pytest.raises(StoreBusyError, match=r"table AP@6 .* being built by another build"):
            irscale.build_store(path, "AP@6", wait=0)
        _tell(a)
        assert _line(a.stdout) == "released\n"
        assert _line(b.stdout) == "locked\n"
        with pytest.raises(StoreBusyError, match="AP@6"):
            irscale.build_store(path, "AP@6", wait=0.3)
        assert irscale.build_store(path, "RR@6", wait=0).has("RR@6")   # another table: at once
        _tell(b)
        assert _line(b.stdout) == "released\n"
        assert irscale.build_store(path, "AP@6", wait=0).has("AP@6")   # free again: built at once
    finally:
        _stop(a, b)
    assert {t.measure for t in irscale.open_store(path).tables()} == {"P@4", "RR@6", "AP@6"}


def test_the_lock_of_a_killed_holder_is_free(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    a = _holder(path, "AP@6", tmp_path)
    try:
        assert _line(a.stdout) == "locked\n"
    finally:
        _stop(a)                                   # SIGKILL: the kernel lets its lock go
    assert irscale.build_store(path, "AP@6", wait=0).has("AP@6")


def test_a_running_writers_temporary_folder_is_kept_whatever_its_process(tmp_path):
    """A writer's temporary folder is removed once nobody holds its lock, and not before:
    other builds (which remove what dead writers left) leave it alone."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    a = _holder(path, "AP@6", tmp_path, temporary=True)
    try:
        assert _line(a.stdout) == "locked\n"
        [tmp] = path.glob(".tmp-*")
        irscale.build_store(path, "RR@6")
        irscale.build_store(path, "P@4")
        assert tmp.is_dir()                        # the running writer's, kept
    finally:
        _stop(a)
    irscale.build_store(path, "P@4")               # nothing to build: what dead writers left goes
    assert not tmp.exists()
    (path / ".tmp-999999-left").mkdir()            # not a writer's name: left alone
    irscale.build_store(path, "AP@6")
    assert (path / ".tmp-999999-left").is_dir() and not list(path.glob(".tmp-*-*-*"))


def test_an_interrupted_wait_says_so_and_leaves_the_holders_lock(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    a = _holder(path, "AP@6", tmp_path)
    try:
        assert _line(a.stdout) == "locked\n"

        def ctrl_c(seconds):
            raise KeyboardInterrupt
        monkeypatch.setattr(folder.time, "sleep", ctrl_c)
        with pytest.raises(KeyboardInterrupt, match="interrupted while waiting for another build .* wrote nothing"):
            with TableLocks(path, ["AAA@1", "AP@6"]):    # AAA@1 taken first, then let go
                pass
        monkeypatch.undo()
        with pytest.raises(StoreBusyError):
            irscale.build_store(path, "AP@6", wait=0)
        assert irscale.build_store(path, "RR@4", wait=0).has("RR@4")
        _tell(a)
        assert _line(a.stdout) == "released\n"
    finally:
        _stop(a)


def test_a_file_system_without_locks_builds(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(folder.fcntl, "flock", no_locks)
    assert irscale.build_store(path, "AP@6", wait=0).has("AP@6")
    assert irscale.build_store(path, "AP@6", rebuild=True, wait=0).verify() == ["AP@6"]


def test_a_first_build_keeps_the_folder_while_another_build_holds_a_lock(tmp_path):
    """remove_if_unused (a refused first build's store goes again) leaves a store folder
    whose lock another build holds."""
    path = tmp_path / "new"
    folder.create(path)
    a = _holder(path, "AP@6", tmp_path)
    try:
        assert _line(a.stdout) == "locked\n"
        folder.remove_if_unused(path)
        assert (path / folder.MANIFEST).exists()
        _tell(a)
        assert _line(a.stdout) == "released\n"
    finally:
        _stop(a)
    folder.remove_if_unused(path)
    assert not path.exists()


def test_a_planted_lock_folder_is_not_written_through(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for p in (path / folder.LOCKS).iterdir():
        os.unlink(p)
    (path / folder.LOCKS).rmdir()
    (path / folder.LOCKS).symlink_to(elsewhere)
    with pytest.raises(irscale.StoreError, match="lock folder"):
        irscale.build_store(path, "AP@6")
    assert list(elsewhere.iterdir()) == []
