"""A full disk or a file-size limit anywhere in a build: exit status 2
and one line saying so and where, no temporary file left, earlier tables intact.

Real failures come from RLIMIT_FSIZE set in a child Python (writes past the limit fail
with EFBIG; no root or small file system needed); a full disk (ENOSPC, short writes
without an errno, HDF5's RuntimeError) is simulated by monkeypatching."""
import errno
import os
import signal
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import irscale
from irscale.enumerate import disk, split
from irscale.errors import DiskFullError
from irscale.store import fill, writer

# builds and commits against file-size limits: 8 s; CI runs it (pytest --runslow)
pytestmark = pytest.mark.slow


def _limited_build(tmp_path, limit: int, argv: list, prelude: str = "") -> subprocess.CompletedProcess:
    """``irscale build ARGV`` in a child whose files may not grow beyond ``limit`` bytes."""
    script = textwrap.dedent(f"""
        import resource, sys
        {prelude}
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        from irscale.cli import main
        sys.exit(main({argv!r}))
    """)
    return subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def _leftovers(tmp_path) -> list:
    """Temporary files of commits and half-written checkpoints."""
    return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if ".tmp" in p.name)


def _assert_one_line(r, *words):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscale: error: "), r.stderr
    for w in words:
        assert w in lines[0], r.stderr


@pytest.fixture
def small_store(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8,AP@8")
    return path


def _tables(path) -> set:
    store = irscale.open_store(path)
    store.verify()
    return {t["measure"] for t in store.tables()}


def _contents(store) -> dict:
    """The store folder's files (hidden ones apart: locks) and their bytes."""
    return {p.name: p.read_bytes() for p in store.iterdir() if not p.name.startswith(".")}


@pytest.mark.parametrize("rebuild", [False, True])
def test_commit_beyond_the_file_size_limit(tmp_path, small_store, rebuild):
    """Refused before writing: the new table's file would exceed the limit."""
    before = _contents(small_store)
    argv = ["build", "-m", "AP@16" + (",AP@8" if rebuild else ""), "--out", "t.h5", "-q"]
    r = _limited_build(tmp_path, 200_000, argv + (["--rebuild"] if rebuild else []))   # AP@16: about 1 MB
    _assert_one_line(r, "file size limit reached writing t.h5", "file too large", "t.h5 is unchanged")
    assert _leftovers(tmp_path) == []
    assert _tables(small_store) == {"P@8", "AP@8"} and _contents(small_store) == before


@pytest.mark.parametrize("rebuild", [False, True])
def test_writes_beyond_the_limit(tmp_path, rebuild):
    """The room check bypassed: the table file meets the limit as it is written; the store
    is unchanged."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "AP@16")                   # about 1 MB
    before = _contents(path)
    argv = ["build", "-m", "AP@16" if rebuild else "AP@15", "--out", "t.h5", "-q"] + (["--rebuild"] if rebuild else [])
    bypass = "import irscale.store.fill as f; f.table_bytes = lambda t: 0"      # the room check passes
    r = _limited_build(tmp_path, 300_000, argv, prelude=bypass)
    _assert_one_line(r, "file size limit reached writing")
    assert _leftovers(tmp_path) == []
    assert _tables(path) == {"AP@16"} and _contents(path) == before


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_checkpoint_beyond_the_file_size_limit(tmp_path, small_store, jobs):
    """Bucket files of AP@20 are up to ~700 kB; with a 100 kB limit the first save fails,
    in the parent (one job, SIGXFSZ left at its default: the build ignores it) or in a
    worker."""
    prelude = "import signal; signal.signal(signal.SIGXFSZ, signal.SIG_DFL)"
    # an explicit work unit (the default one): small tables checkpoint only when asked to
    r = _limited_build(tmp_path, 100_000, ["build", "-m", "AP@20", "--out", "t.h5", "-q", "-j", jobs,
                                           "--bucket-items", str(1 << 18)], prelude=prelude)
    assert r.returncode != -signal.SIGXFSZ, "killed by SIGXFSZ"
    _assert_one_line(r, "file size limit reached writing", ".t.h5.build", "bucket-", "raise the file-size limit")
    assert _leftovers(tmp_path) == []
    assert _tables(small_store) == {"P@8", "AP@8"}


# -- simulated full disks -------------------------------------------------------------


def test_hdf5_write_failure_is_a_full_disk(tmp_path, small_store, monkeypatch):
    """h5py reports a failed write as RuntimeError (not OSError), with HDF5's text."""
    def failing(*args, **kw):
        raise RuntimeError("Can't write data (file write failed: time = Thu Nov 26 10:16:40 2026, filename = "
                           "'AP@10.h5', file descriptor = 3, errno = 28, error message = 'No space left on "
                           "device', buf = 0x1, total write size = 32432, bytes this sub-write = 32432, offset = 0)")
    monkeypatch.setattr(writer, "write_table", failing)
    before = _contents(small_store)
    for measure, rebuild in (("AP@10", False), ("AP@8", True)):
        with pytest.raises(DiskFullError, match=r"disk full while writing .*/t\.h5 \(.* free on "):
            irscale.build_store(small_store, measure, rebuild=rebuild)
        assert _contents(small_store) == before
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    assert _tables(small_store) == {"P@8", "AP@8"}


@pytest.mark.parametrize("error", [errno.ENOSPC, errno.EIO])
@pytest.mark.parametrize("rebuild", [False, True])
def test_a_failed_flush_fails_the_commit(tmp_path, small_store, monkeypatch, error, rebuild):
    """ENOSPC or EIO from the flush of a table file (fsync): the commit fails, the store is
    unchanged and no temporary file is left."""
    real = os.fsync

    def failing(fd):
        if os.path.isfile(f"/proc/self/fd/{fd}") and os.readlink(f"/proc/self/fd/{fd}").endswith(".h5"):
            raise OSError(error, os.strerror(error))
        return real(fd)
    before = _contents(small_store)
    monkeypatch.setattr(os, "fsync", failing)
    with pytest.raises((DiskFullError, irscale.StoreError)) as info:
        irscale.build_store(small_store, "AP@8" if rebuild else "AP@10", rebuild=rebuild)
    assert os.strerror(error) in str(info.value) or "disk full" in str(info.value)
    monkeypatch.undo()
    assert _contents(small_store) == before and _leftovers(tmp_path) == []


def test_no_room_for_the_commit_is_refused_before_writing(tmp_path, small_store, monkeypatch):
    class Usage:
        free = 10_000
    monkeypatch.setattr(fill.shutil, "disk_usage", lambda folder: Usage)
    monkeypatch.setattr(fill, "commit", lambda *a, **kw: pytest.fail("commit started"))
    for measure, rebuild in (("AP@12", False), ("AP@8", True)):
        with pytest.raises(DiskFullError, match=r"disk full while writing .*/t\.h5 \(10 kB free on .*"
                                                r"the new tables need about"):
            irscale.build_store(small_store, measure, rebuild=rebuild)


def test_short_write_of_a_checkpoint_is_a_full_disk(tmp_path, small_store, monkeypatch):
    """np.save on a full disk: OSError("783696 requested and 271328 written"), no errno."""
    real_save = np.save

    def save(fh, arr, *a, **kw):
        real_save(fh, arr[: len(arr) // 3])
        raise OSError("783696 requested and 271328 written")

    class Usage:
        free = 4096
    monkeypatch.setattr(split.np, "save", save)
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda folder: Usage)
    with pytest.raises(DiskFullError, match=r"disk full while writing .*\.t\.h5\.build/AP@12/bucket-00000\.tmp/"
                                            r"ids\.npy \(783696 requested and 271328 written; 4096 bytes free on .*"
                                            r"t\.h5 is unchanged"):
        irscale.build_store(small_store, "AP@12", n_jobs=1, bucket_items=1 << 18)     # explicit: checkpoints
    assert _leftovers(tmp_path) == []
    monkeypatch.undo()
    assert _tables(small_store) == {"P@8", "AP@8"}


def test_which_errors_mean_a_full_disk(tmp_path, monkeypatch):
    f = tmp_path / "x"
    assert "disk full while writing" in str(disk.disk_error(OSError(errno.ENOSPC, "No space left"), f))
    assert "file size limit reached" in str(disk.disk_error(OSError(errno.EFBIG, "File too large"), f))
    assert "file too large" in str(disk.disk_error(RuntimeError("Can't decrement id ref count (file write failed: "
                                                                 "errno = 27, error message = 'File too large')"), f))
    assert disk.disk_error(OSError(errno.EACCES, "Permission denied"), f) is None
    assert disk.disk_error(RuntimeError("dataset ids: 3 rows written, 4 declared"), f) is None
    assert disk.disk_error(KeyError("x"), f) is None
    short = OSError("100 requested and 12 written")

    class Usage:
        free = 1 << 40
    monkeypatch.setattr(disk.shutil, "disk_usage", lambda folder: Usage)
    assert disk.disk_error(short, f) is None          # plenty of room, no limit: not a full disk
    Usage.free = 1000
    assert "disk full" in str(disk.disk_error(short, f))


def test_build_ignores_sigxfsz_only_while_it_runs(tmp_path):
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are set in the main thread only")
    before = signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    try:
        seen = []
        real = fill._build

        def spy(*args, **kw):
            seen.append(signal.getsignal(signal.SIGXFSZ))
            return real(*args, **kw)
        fill._build = spy
        try:
            irscale.build_store(tmp_path / "t.h5", "P@8")
        finally:
            fill._build = real
        assert seen == [signal.SIG_IGN]
        assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGXFSZ, before)


def test_no_tmp_file_survives_any_commit_failure(tmp_path, small_store, monkeypatch):
    """Whatever the writer raises (here a bug-like ValueError), this process's temporary
    file is gone afterwards."""
    def failing(*args, **kw):
        raise ValueError("boom")
    monkeypatch.setattr(writer, "write_table", failing)
    with pytest.raises(ValueError, match="boom"):
        irscale.build_store(small_store, "AP@10")
    assert not list(small_store.glob(".tmp-*"))
