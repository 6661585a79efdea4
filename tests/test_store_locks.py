"""The lock files of a store folder last as long as their locks: a build removes each one
before it lets its lock go, so a store keeps no ``.lock-*`` file once its builds are done,
and builds of one table still exclude each other (a build that gets the lock of a file its
holder removed meanwhile opens the path again)."""
import errno
import subprocess
import sys
import textwrap
import threading

import pytest

import irscale
from irscale.cli import main
from irscale.errors import StoreBusyError
from irscale.store import folder
from irscale.store.folder import TableLocks, file_of

PY = sys.executable


def _locks(path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name.startswith(".lock-"))


def _holder(path, name, cwd) -> subprocess.Popen:
    """A child that takes the lock of table ``name`` of ``path`` (waiting for it, as a
    build does), says "locked", and lets it go when told (a line on stdin)."""
    script = f"""
        import sys
        from pathlib import Path
        from irscale.store.folder import TableLocks
        with TableLocks(Path({str(path)!r}), [{name!r}]):
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


def test_a_build_leaves_no_lock_file(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "AP@6,P@6")
    assert main(["build", "-m", "RR@6,AP@6", "--out", str(path), "-q"]) == 0
    assert _locks(path) == []
    assert {t["measure"] for t in irscale.open_store(path).tables()} >= {"AP@6", "P@6", "RR@6"}
    with TableLocks(path, ["AP@6", "RR@6"]):
        assert _locks(path) == [f".lock-{file_of('AP@6')}", f".lock-{file_of('RR@6')}"]
    assert _locks(path) == []


def test_builds_of_one_table_still_exclude_each_other(tmp_path):
    """A holds the lock; B waits for it (it has opened A's lock file); A lets go and removes
    the file; B, once it has the lock of the removed file, opens the path again: while B
    holds the table's lock, a third build is refused (with a lock on the removed file only,
    it would not be)."""
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
        assert _locks(path) == [f".lock-{file_of('AP@6')}"]          # B's own, at the path
        for _ in range(2):
            with pytest.raises(StoreBusyError, match="AP@6"):
                irscale.build_store(path, "AP@6", wait=0.3)
        assert irscale.build_store(path, "RR@6", wait=0).has("RR@6")   # another table: at once
        _tell(b)
        assert _line(b.stdout) == "released\n"
        assert irscale.build_store(path, "AP@6", wait=0).has("AP@6")   # free again: built at once
    finally:
        for child in (a, b):
            if child is not None:
                child.kill()
                child.wait()
    assert _locks(path) == []
    assert {t["measure"] for t in irscale.open_store(path).tables()} == {"P@4", "RR@6", "AP@6"}


def test_readers_ignore_lock_files_present_or_gone(tmp_path, capsys):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "AP@6")
    capsys.readouterr()
    with TableLocks(path, ["AP@6", "RR@6"]):       # a build at work: its lock files are there
        assert main(["info", str(path)]) == 0
        held = capsys.readouterr().out
    assert main(["info", str(path)]) == 0         # and gone
    assert capsys.readouterr().out == held
    assert "1 tables" in held and ".lock" not in held
    assert list(irscale.open_store(path).tables()) and _locks(path) == []


def test_a_lock_file_left_by_a_killed_build_is_taken_and_removed(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@4")
    (path / f".lock-{file_of('AP@6')}").touch()     # what a SIGKILLed build leaves
    assert irscale.build_store(path, "AP@6", wait=0).has("AP@6")
    assert _locks(path) == []


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
        assert _locks(path) == [f".lock-{file_of('AP@6')}"]         # the holder's, still its lock
        with pytest.raises(StoreBusyError):
            irscale.build_store(path, "AP@6", wait=0)
        _tell(a)
        assert _line(a.stdout) == "released\n"
    finally:
        a.kill()
        a.wait()
    assert _locks(path) == []


def test_a_file_system_without_locks_builds_and_leaves_no_lock_file(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"

    def no_locks(fd, operation):
        raise OSError(errno.ENOLCK, "No locks available")
    monkeypatch.setattr(folder.fcntl, "lockf", no_locks)
    assert irscale.build_store(path, "AP@6", wait=0).has("AP@6")
    assert _locks(path) == []


def test_a_first_build_keeps_the_folder_while_another_build_holds_a_lock(tmp_path):
    """remove_if_unused (a refused first build's store goes again) leaves a store folder
    whose lock file another build holds."""
    path = tmp_path / "new"
    folder.create(path)
    a = _holder(path, "AP@6", tmp_path)
    try:
        assert _line(a.stdout) == "locked\n"
        folder.remove_if_unused(path)
        assert (path / folder.MANIFEST).exists() and _locks(path) == [f".lock-{file_of('AP@6')}"]
        _tell(a)
        assert _line(a.stdout) == "released\n"
    finally:
        a.kill()
        a.wait()
    folder.remove_if_unused(path)
    assert not path.exists()
