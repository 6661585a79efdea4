"""A reader of stdout that leaves (``irscale info STORE | head -1``) is not an error: the
command exits 0, says nothing on stderr and writes its files (the closed pipe is replaced
by devnull, as Python's note on SIGPIPE advises). A BrokenPipeError that is not about
stdout or stderr stays a bug, with its traceback."""
# Subprocesses run with cwd=tmp_path: from the repository root, "python -m irscale" would
# import the source folder irscale/ instead of the installed package.
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irscale.cli import main

IRSCALE = [sys.executable, "-m", "irscale"]
CONSOLE_SCRIPT = Path(sys.executable).with_name("irscale")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipes") / "t.h5"
    assert main(["build", "--measures", "AP@6", "--out", str(path), "-q"]) == 0
    return path


def _into_closed_pipe(argv, cwd, **kw) -> subprocess.CompletedProcess:
    """Run ``argv`` with stdout a pipe whose reader has left before the command writes."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(argv, stdout=write, stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=120, **kw)
    finally:
        os.close(write)


def _reader_leaves_after_one_line(argv, cwd) -> tuple[str, subprocess.Popen, str]:
    """Run ``argv``, read one line of its stdout and close the pipe (``| head -1``)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)
    first = p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    p.wait(timeout=120)
    return first, p, err


def test_info_lookup_and_help_into_a_closed_pipe_exit_0_saying_nothing(store, tmp_path):
    for argv in (["info", str(store)], ["lookup", str(store), "AP@6", "--rb", "2", "0", "0.25", "1"], ["--help"]):
        r = _into_closed_pipe(IRSCALE + argv, tmp_path)
        assert (r.returncode, r.stderr) == (0, ""), argv


def test_a_reader_that_leaves_after_one_line(store, tmp_path):
    """More output than a pipe holds (64 KiB): writes after the reader left must fail, and
    the command goes on into devnull."""
    values = ["0", "1"] * 4000                                     # about 100 KB of rows
    first, p, err = _reader_leaves_after_one_line(IRSCALE + ["lookup", str(store), "AP@6", "--rb", "5", *values],
                                                  tmp_path)
    assert first == "value\trank\tk\tscaled\n"
    assert (p.returncode, err) == (0, "")
    # the console script, as a shell runs it: head -1 leaves, irscale's status is 0
    script = f"set -o pipefail; {CONSOLE_SCRIPT} info {store} | head -1; echo status=${{PIPESTATUS[0]}} >&2"
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert r.stdout.startswith(f"{store}: irscale-store v1") and r.stdout.count("\n") == 1
    assert r.stderr == "status=0\n"


def test_compare_into_a_closed_pipe_still_writes_its_file(tmp_path):
    (tmp_path / "qrels.txt").write_text("1 0 a 1\n1 0 b 0\n1 0 c 1\n2 0 a 0\n2 0 b 1\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for tag, order in (("x", "abc"), ("y", "cba"), ("z", "bac")):
        (runs / tag).write_text("".join(f"{t} Q0 {d} {i} {9 - i} {tag}\n" for t in (1, 2)
                                        for i, d in enumerate(order, start=1)))
    out = tmp_path / "board.md"
    r = _into_closed_pipe(IRSCALE + ["compare", "--qrels", "qrels.txt", "--runs", "runs", "-m", "P@2,RR", "-o",
                                     str(out), "-q", "--no-build"], tmp_path,
                          env={**os.environ, "IRSCALE_STORE": str(tmp_path / "store")})
    assert r.returncode == 0, r.stderr
    assert r.stderr == f"{out}: written\n"
    assert "P@2" in out.read_text()


def test_in_process_a_closed_stdout_returns_0(store, monkeypatch):
    """A program calling main() gets 0 back; the closed pipe is replaced by devnull."""
    read, write = os.pipe()
    os.close(read)
    stream = open(write, "w", buffering=1)
    try:
        monkeypatch.setattr(sys, "stdout", stream)
        assert main(["info", str(store)]) == 0
        assert os.fstat(write).st_rdev == os.stat(os.devnull).st_rdev     # devnull now
    finally:
        monkeypatch.undo()
        stream.close()


def test_a_broken_pipe_elsewhere_is_a_bug(store, monkeypatch):
    """Not stdout's reader that left (a worker's pipe, say): the traceback, not exit 0."""
    import irscale.commands.info as info

    def broken(path):
        raise BrokenPipeError(32, "Broken pipe (a worker's)")
    monkeypatch.setattr(info, "open_store", broken)
    with pytest.raises(BrokenPipeError, match="a worker's"):
        main(["info", str(store)])
