"""Faults at every flush and close of a commit: ENOSPC or EIO injected at each call of
os.fsync, at each os.close of a file or folder a commit writes or flushes, and at each
close and flush of an HDF5 file it writes, one call at a time. A commit is a rename, so
each time the build fails with a StoreError (on the command line: exit status 2, one
line), every table is the old one or, when only the flush of the folder after the rename
failed, the new one, whole; the store verifies, no temporary file is left, and the same
build then succeeds.

The faults are injected in this process (monkeypatched ``os.fsync``, ``os.close``,
``h5py.File.close`` and ``h5py.File.flush``, counting only while a build runs), and for the
command line in a child Python that patches ``os.fsync`` before running ``irscale build``."""
from __future__ import annotations

import errno
import fcntl
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import h5py
import pytest

import irscale
from irscale.errors import StoreError
from irscale.store import folder
from irscale.store.pack import pack

FAULTS = {"ENOSPC": errno.ENOSPC, "EIO": errno.EIO}


class Faults:
    """Call ``at`` (counted from 0) of ``op`` fails with ``code`` while a build runs; every
    call is counted (:attr:`calls`). ``op``: "fsync", "close" (of the files and folders
    below ``root`` that commits write or flush: tables, manifests, folders; not lock files
    or temporary folders), "h5close" or "h5flush" (of HDF5 files open for writing)."""

    def __init__(self, monkeypatch, op: str, root: Path, at: int | None = None, code: int = errno.ENOSPC):
        self.op, self.root, self.at, self.code = op, str(root), at, code
        self.calls, self.failed, self.flushed = 0, False, set()
        real_fsync, real_close = os.fsync, os.close
        real_h5close, real_h5flush = h5py.File.close, h5py.File.flush

        def fsync(fd):
            self.flushed.add(fd)
            if op == "fsync" and self._hit():
                raise OSError(code, os.strerror(code))
            return real_fsync(fd)

        def close(fd):
            ours = op == "close" and self._ours(fd)
            self.flushed.discard(fd)
            real_close(fd)                          # on Linux a failed close releases the fd too
            if ours and self._hit():
                raise OSError(code, os.strerror(code))

        def h5close(f):
            ours = op == "h5close" and f.id.valid and f.mode == "r+"
            real_h5close(f)
            if ours and self._hit():
                raise RuntimeError(f"Can't decrement id ref count (unable to extend file properly, errno = {code}, "
                                   f"error message = '{os.strerror(code)}')")

        def h5flush(f):
            if op == "h5flush" and f.mode == "r+" and self._hit():
                raise RuntimeError(f"Unable to flush file's cached information (file write failed: errno = {code}, "
                                   f"error message = '{os.strerror(code)}')")
            return real_h5flush(f)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "close", close)
        monkeypatch.setattr(h5py.File, "close", h5close)
        monkeypatch.setattr(h5py.File, "flush", h5flush)

    def _ours(self, fd: int) -> bool:
        """Whether closing ``fd`` is part of a commit: a file open for writing or a file or
        folder flushed, below ``root``, not a lock file."""
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
            written = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
        except OSError:
            return False
        return (target.startswith(self.root) and f"/{folder.LOCKS}/" not in target
                and (written or fd in self.flushed))

    def _hit(self) -> bool:
        n = self.calls
        self.calls += 1
        if n == self.at:
            self.failed = True
            return True
        return False


def _files(path: Path) -> dict:
    """Every entry of the store folder (hidden ones apart: locks) and its bytes."""
    if not path.exists():
        return {}
    return {p.name: p.read_bytes() for p in path.iterdir() if not p.name.startswith(".")}


def _leftovers(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if ".tmp" in p.name)


def _old_or_new(store: Path, before: dict, measures: str) -> None:
    """Every file of the store as before, but the table the build writes (and the manifest
    of a store it made), which, changed, is whole: the store verifies."""
    after = _files(store)
    changed = {n for n in set(before) | set(after) if before.get(n) != after.get(n)}
    assert changed <= {folder.file_of(measures), folder.MANIFEST}, changed
    if folder.MANIFEST in changed:
        assert not before
    if after:
        irscale.open_store(store).verify()


#: name -> (tables in the store before, what the build asks for, rebuild)
SCENARIOS = {"new table": ("P@4,AP@6", "AP@7", False),
             "replaced table": ("P@4,AP@6", "AP@6", True),
             "new store": (None, "AP@6", False)}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """The store of each scenario, built once (copied for each case)."""
    root = tmp_path_factory.mktemp("pristine")
    out = {}
    for name, (before, _, _) in SCENARIOS.items():
        if before is not None:
            irscale.build_store(root / name, before, n_jobs=1)
        out[name] = root / name
    return out


def _one_case(tmp_path, monkeypatch, pristine, scenario: str, op: str, at: int | None, code: int) -> Faults:
    """Run the scenario's build with call ``at`` of ``op`` failing; checks the outcome."""
    _, measures, rebuild = SCENARIOS[scenario]
    case = tmp_path / f"{scenario.replace(' ', '-')}-{op}-{at}-{code}"
    case.mkdir()
    store = case / "s"
    if pristine[scenario].exists():
        shutil.copytree(pristine[scenario], store)
    before = _files(store)
    with monkeypatch.context() as mp:
        faults = Faults(mp, op, case, at, code)
        if at is None:
            irscale.build_store(store, measures, rebuild=rebuild, n_jobs=1)
            return faults
        with pytest.raises(StoreError):
            irscale.build_store(store, measures, rebuild=rebuild, n_jobs=1)
    assert faults.failed
    _old_or_new(store, before, measures)
    assert not store.exists() or store.is_dir() and (store / folder.MANIFEST).is_file()
    assert _leftovers(case) == []
    built = irscale.build_store(store, measures, rebuild=rebuild, n_jobs=1)  # no fault: the build succeeds
    assert measures in built.verify()
    return faults


def _calls(tmp_path, monkeypatch, pristine, scenario: str, op: str) -> int:
    """How many calls of ``op`` the scenario's build makes (a dry run)."""
    return _one_case(tmp_path, monkeypatch, pristine, scenario, op, None, 0).calls


@pytest.mark.parametrize("op", ["fsync", "close", "h5close", "h5flush"])
@pytest.mark.parametrize("scenario", ["new table", "replaced table"])
def test_every_fault_of_a_commit_fails_it(tmp_path, monkeypatch, pristine, scenario, op):
    """ENOSPC at each call in turn: the build raises, the store is as it was, no temporary
    file is left, and the build then succeeds."""
    n = _calls(tmp_path, monkeypatch, pristine, scenario, op)
    assert n >= {"fsync": 2, "close": 3, "h5close": 2, "h5flush": 1}[op]     # file and folder, at least
    for at in range(n):
        _one_case(tmp_path, monkeypatch, pristine, scenario, op, at, errno.ENOSPC)


@pytest.mark.slow
@pytest.mark.parametrize("code", list(FAULTS))
@pytest.mark.parametrize("op", ["fsync", "close", "h5close", "h5flush"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_every_fault_of_a_commit_fails_it_all(tmp_path, monkeypatch, pristine, scenario, op, code):
    """The same for ENOSPC and EIO, and for the first commit of a new store (which leaves
    no store folder behind)."""
    n = _calls(tmp_path, monkeypatch, pristine, scenario, op)
    assert n >= 1
    for at in range(n):
        _one_case(tmp_path, monkeypatch, pristine, scenario, op, at, FAULTS[code])


@pytest.mark.parametrize("op", ["fsync", "close", "h5close"])
def test_every_fault_of_a_pack_fails_it(tmp_path, monkeypatch, pristine, op):
    """irscale pack: EIO at each call in turn; pack raises StoreError and leaves no file
    (or, when only the flush of the folder after the rename failed, the whole file)."""
    source = tmp_path / "s"
    shutil.copytree(pristine["new table"], source)

    def run(at: int | None) -> int:
        out = tmp_path / f"p-{at}.h5"
        with monkeypatch.context() as mp:
            faults = Faults(mp, op, tmp_path, at, errno.EIO)
            if at is None:
                assert pack(source, out) == 2
                out.unlink()
                return faults.calls
            with pytest.raises(StoreError):
                pack(source, out)
        assert faults.failed and _leftovers(tmp_path) == []
        assert not out.exists() or len(irscale.open_store(out).verify()) == 2
        return faults.calls
    n = run(None)
    assert n >= 1
    for at in range(n):
        run(at)


def _cli_build(case: Path, at: int | None, code: int) -> subprocess.CompletedProcess:
    """``irscale build -m AP@7 --out s`` in a child whose call ``at`` of os.fsync fails;
    prints the number of calls on stdout's last line when ``at`` is None."""
    script = textwrap.dedent(f"""
        import os, sys
        from irscale.cli import main
        real, calls = os.fsync, []
        def fsync(fd):
            calls.append(fd)
            if len(calls) - 1 == {at!r}:
                raise OSError({code}, os.strerror({code}))
            return real(fd)
        os.fsync = fsync
        rc = main(["build", "-m", "AP@7", "--out", "s", "-q", "-j", "1"])
        print(len(calls))
        sys.exit(rc)
    """)
    return subprocess.run([sys.executable, "-c", script], cwd=case, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize("code", list(FAULTS))
def test_the_command_line_exits_non_zero(tmp_path, pristine, code):
    """``irscale build`` with the fault at each fsync of its commit: exit status 2 and one
    line, the store unchanged; then the build exits 0."""
    dry = tmp_path / "dry"
    shutil.copytree(pristine["new table"], dry / "s")
    r = _cli_build(dry, None, 0)
    assert r.returncode == 0, r.stderr
    n = int(r.stdout.strip().splitlines()[-1])
    assert n >= 2
    for at in range(n):
        case = tmp_path / f"case-{at}"
        shutil.copytree(pristine["new table"], case / "s")
        before = _files(case / "s")
        r = _cli_build(case, at, FAULTS[code])
        assert r.returncode == 2, (at, r.returncode, r.stderr)
        lines = [line for line in r.stderr.strip().splitlines() if line.startswith("irscale: error: ")]
        assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
        _old_or_new(case / "s", before, "AP@7")
        assert _leftovers(case) == []
    r = _cli_build(case, None, 0)
    assert r.returncode == 0 and "AP@7" in irscale.open_store(case / "s").verify()
