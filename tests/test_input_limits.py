"""Hostile inputs (issue 32): devices, pipes, files that never end and compression bombs
given as run or qrels files are refused within seconds, in bounded memory, with one line
and exit status 2; Ctrl-C at any moment is exit 130 and one line, never a traceback.

CLI checks run ``python -m irscale`` in a child whose resident memory is watched (killed
past 1 GiB, or after a timeout, so that no check can hang or swap) and whose peak RSS is
read from ``os.wait4``.
"""
import gzip
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from irscale.cli import main
from irscale.errors import IrscaleError, TrecFormatError
from irscale.scales.runs import text_files
from irscale.scales.runs.inputs import qrels_of, read_runs
from irscale.scales.runs.qrels import read_qrels
from irscale.scales.runs.run_files import read_run
from irscale.scales.runs.text_files import input_limits, read_bytes

GIB = 1 << 30
MIB = 1 << 20
QRELS = "401 0 D1 1\n401 0 D2 0\n402 0 D3 1\n"
RUN = "401 Q0 D1 1 2.5 sysA\n401 Q0 D2 2 1.5 sysA\n402 Q0 D3 1 0.5 sysA\n"
LINE = b"401 Q0 D1 1 1.5 sys\n"


# -- the child -------------------------------------------------------------------------------
def _rss_kib(pid: int | str, field: str = "VmRSS") -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith(field + ":")), 0)
    except (OSError, ValueError):
        return 0


def _run(args, cwd, env=None, timeout=60.0, stdin=subprocess.DEVNULL, signal_at=None):
    """Run ``args`` (a child process) watched: (exit status, stderr, peak RSS in bytes).
    Fails the test when the child passes 1 GiB resident or ``timeout`` seconds (it is
    killed). ``signal_at``: seconds after which the child gets a SIGINT."""
    err = Path(cwd) / f"stderr-{time.monotonic_ns()}.txt"
    # Linux counts in a child's ru_maxrss the peak resident size of the memory it was
    # started from (vfork: this test process, which a long test session grows past 1 GiB):
    # past that, the peak is the child's own; below it, the highest VmHWM seen while it ran
    inherited, seen = _rss_kib("self", "VmHWM") * 1024, 0
    with open(err, "wb") as stderr:
        child = subprocess.Popen(args, cwd=cwd, env={**os.environ, **(env or {})}, stdin=stdin,
                                 stdout=subprocess.DEVNULL, stderr=stderr)
    start = time.monotonic()
    signalled = signal_at is None
    pid = 0
    try:
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if not signalled and time.monotonic() - start >= signal_at:
                child.send_signal(signal.SIGINT)
                signalled = True
            rss = _rss_kib(child.pid) * 1024
            seen = max(seen, rss, _rss_kib(child.pid, "VmHWM") * 1024)
            assert rss < GIB, f"{args}: {rss / GIB:.2f} GiB resident (killed)"
            assert time.monotonic() - start < timeout, f"{args}: still running after {timeout} s (killed)"
            time.sleep(0.01)
    finally:
        if not pid:
            child.kill()
            os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    peak = usage.ru_maxrss * 1024
    return child.returncode, err.read_text(errors="replace"), peak if peak > inherited else seen


def _lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def _irscale(tmp_path, *args, env=None, **kwargs):
    return _run([sys.executable, "-m", "irscale", *map(str, args)], tmp_path,
                env={"IRSCALE_STORE": str(tmp_path / "store"), **(env or {})}, **kwargs)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path


def _transform(tmp_path, qrels="qrels.txt", runs="run.txt", **kwargs):
    return _irscale(tmp_path, "transform", "--qrels", qrels, "--runs", runs, "-m", "P@5", "--raw-only",
                    "-o", tmp_path / "scores.tsv", **kwargs)


def _refused(result, what=""):
    code, err, peak = result
    assert code == 2, (what, code, err[-2000:])
    assert "Traceback" not in err and len(_lines(err)) == 1, (what, err[-2000:])
    assert peak < GIB, (what, peak)
    return _lines(err)[0]


# -- bombs -----------------------------------------------------------------------------------
def _bomb(path: Path, block: bytes, total: int, member: int = 16 * MIB) -> Path:
    """A valid gzip file of ``total`` bytes of ``block`` repeated, as gzip members of
    ``member`` bytes each (one member compressed once and repeated: seconds, not minutes)."""
    data = block * (member // len(block))
    packed = gzip.compress(data, compresslevel=9, mtime=0)
    path.write_bytes(packed * max(1, total // len(data)))
    return path


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    """About 2 MB gzip files inflating to gigabytes: of NUL bytes, of one valid run line
    repeated, of letters without a line end."""
    folder = tmp_path_factory.mktemp("bombs")
    return {"zeros": _bomb(folder / "zeros.gz", b"\0" * 4096, 2 * GIB),
            "lines": _bomb(folder / "lines.gz", LINE, 3 * GIB // 4),
            "no line end": _bomb(folder / "letters.gz", b"a" * 4096, 2 * GIB)}


def test_bombs_are_small_files_inflating_to_gigabytes(bombs):
    for name, path in bombs.items():
        assert path.stat().st_size < 4 * MIB, name
    with gzip.open(bombs["lines"]) as f:
        assert f.read(len(LINE) * 3) == LINE * 3


# -- the checks of the issue: exit 2, one line, under 1 GiB, within seconds ------------------
@pytest.mark.parametrize("device", ["/dev/zero", pytest.param("/dev/urandom", marks=pytest.mark.slow)])
def test_a_device_as_run_file_is_refused(files, device):
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    said = _refused(_transform(files, runs=device, timeout=30), device)
    assert device in said


@pytest.mark.parametrize("given", ["runs", pytest.param("qrels", marks=pytest.mark.slow)])
def test_a_fifo_as_run_or_qrels_file_is_refused_without_waiting(files, given):
    fifo = files / "fifo"
    os.mkfifo(fifo)                                  # no writer: opening it to read would wait forever
    assert "fifo" in _refused(_transform(files, **{given: fifo}, timeout=30), given)


@pytest.mark.parametrize("kind", ["zeros", "lines", pytest.param("no line end", marks=pytest.mark.slow)])
def test_a_gzip_bomb_as_run_file_is_refused_in_bounded_memory(files, bombs, kind):
    assert str(bombs[kind]) in _refused(_transform(files, runs=bombs[kind], timeout=60), kind)


@pytest.mark.slow
def test_good_files_still_read(files):
    code, err, _ = _transform(files)
    assert code == 0, err
    assert (files / "scores.tsv").read_text().count("sysA") == 2


# -- the limits, and raising them --------------------------------------------------------------
def test_limits_come_from_keywords_then_the_environment(monkeypatch):
    monkeypatch.delenv(text_files.SIZE_ENV, raising=False)
    assert input_limits().size == text_files.MAX_SIZE
    monkeypatch.setenv(text_files.SIZE_ENV, "8G")
    monkeypatch.setenv(text_files.LINE_ENV, "64KiB")
    monkeypatch.setenv(text_files.RATIO_ENV, "inf")
    assert input_limits() == text_files.InputLimits(8 * GIB, 64 << 10, float("inf"))
    assert input_limits(max_size=1000, max_line_length="1.5M").size == 1000
    assert input_limits(max_line_length="1.5M").line_length == 3 * MIB // 2
    for bad in ("lots", "0", "-5"):
        monkeypatch.setenv(text_files.SIZE_ENV, bad)
        with pytest.raises(IrscaleError, match=text_files.SIZE_ENV):
            input_limits()
    monkeypatch.delenv(text_files.SIZE_ENV)
    with pytest.raises(IrscaleError, match="max_gzip_ratio"):
        input_limits(max_gzip_ratio=0.5)


def test_the_size_limit_refuses_and_can_be_raised(tmp_path, monkeypatch):
    plain, packed = tmp_path / "run.txt", tmp_path / "run.gz"
    text = "".join(f"401 Q0 D{i} {i} {-i} sysA\n" for i in range(100))
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    for path in (plain, packed):
        with pytest.raises(TrecFormatError, match=str(path)):
            read_run(path, max_size=1000)
        monkeypatch.setenv(text_files.SIZE_ENV, "1000")
        with pytest.raises(TrecFormatError, match=text_files.SIZE_ENV):
            read_runs([path])
        assert read_run(path, max_size="1M").name == "sysA"          # the keyword wins over the environment
        monkeypatch.delenv(text_files.SIZE_ENV)
        assert read_run(path).name == "sysA"
    (tmp_path / "qrels.txt").write_text("".join(f"401 0 D{i} {i % 2}\n" for i in range(40)) + "402 0 D3 1\n")
    with pytest.raises(TrecFormatError):
        read_qrels(tmp_path / "qrels.txt", max_size=100)
    with pytest.raises(TrecFormatError):
        qrels_of(tmp_path / "qrels.txt", max_size=100)
    assert qrels_of(tmp_path / "qrels.txt", max_size=1000).judgments["402"] == {"D3": 1}


def test_the_size_limit_in_the_environment_reaches_the_cli(files, monkeypatch, capsys):
    args = ["transform", "--qrels", str(files / "qrels.txt"), "--runs", str(files / "run.txt"), "-m", "P@5",
            "--raw-only", "-o", str(files / "scores.tsv")]
    monkeypatch.setenv("IRSCALE_STORE", str(files / "store"))
    for value in ("10", "nonsense"):
        monkeypatch.setenv(text_files.SIZE_ENV, value)
        assert main(args) == 2
        err = capsys.readouterr().err
        assert len(_lines(err)) == 1 and text_files.SIZE_ENV in err, err
    monkeypatch.setenv(text_files.SIZE_ENV, "1K")
    assert main(args) == 0


def test_the_line_length_limit(tmp_path):
    long_line = tmp_path / "long.txt"
    long_line.write_bytes(LINE * 3 + b"401 Q0 " + b"x" * 5000 + b" 4 0.5 sys\n" + LINE)
    with pytest.raises(TrecFormatError, match=r"long.txt:4:"):
        read_run(long_line, max_line_length=4096)
    assert len(read_bytes(long_line, "run", input_limits(max_line_length=5100))) == long_line.stat().st_size
    # the last line, without a line end, counts too; a line of exactly the limit is allowed
    for text, ok in ((b"a" * 100, True), (b"a" * 101, False), (b"b\n" + b"a" * 100 + b"\n", True),
                     (b"b\n" + b"a" * 101 + b"\nc", False)):
        (tmp_path / "t").write_bytes(text)
        if ok:
            assert read_bytes(tmp_path / "t", "run", input_limits(max_line_length=100)) == text
        else:
            with pytest.raises(TrecFormatError):
                read_bytes(tmp_path / "t", "run", input_limits(max_line_length=100))


def test_lines_across_pieces(tmp_path, monkeypatch):
    """Lines and NUL bytes are checked across the pieces the file is read in."""
    monkeypatch.setattr(text_files, "_PIECE", 7)
    monkeypatch.setattr(text_files, "_GZ_PIECE", 5)
    text = b"".join(b"%d %s\n" % (i, b"y" * (i % 13)) for i in range(300))
    first_long = next(no for no, line in enumerate(text.split(b"\n"), start=1) if len(line) > 15)
    assert first_long == 104                        # line 104: "103 " and 12 letters
    for name, data in (("p.txt", text), ("p.gz", gzip.compress(text))):
        (tmp_path / name).write_bytes(data)
        assert read_bytes(tmp_path / name, "run", input_limits(max_line_length=16)) == text
        with pytest.raises(TrecFormatError, match=rf"{name}:{first_long}:"):
            read_bytes(tmp_path / name, "run", input_limits(max_line_length=15))
    (tmp_path / "nul.txt").write_bytes(text[:100] + b"\0" + text[100:])
    line = text[:100].count(b"\n") + 1
    with pytest.raises(TrecFormatError, match=rf"nul.txt:{line}: binary"):
        read_bytes(tmp_path / "nul.txt", "run")


def test_the_gzip_ratio_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(text_files, "RATIO_FLOOR", 1 << 16)
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(LINE * 20000))                   # 400 KB inflating about 200 times
    with pytest.raises(TrecFormatError, match=text_files.RATIO_ENV):
        read_run(path)
    monkeypatch.setenv(text_files.RATIO_ENV, "1000")
    with pytest.raises(TrecFormatError, match="twice"):            # read whole: one line, 20000 times
        read_run(path)
    assert len(read_bytes(path, "run", input_limits(max_gzip_ratio="inf"))) == len(LINE) * 20000


def test_gzip_members_padding_and_damage(tmp_path):
    text = b"".join(b"401 Q0 D%d 1 %d.5 sys\n" % (i, i) for i in range(20000))
    cases = {"members": gzip.compress(text[:1000]) + gzip.compress(b"") + gzip.compress(text[1000:]),
             "padding": gzip.compress(text[:5]) + b"\0" * 3 + gzip.compress(text[5:]) + b"\0" * 7}
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        assert read_bytes(tmp_path / name, "run") == text, name
    whole = gzip.compress(text)
    damaged = {"cut": whole[:-20], "no trailer": whole[:-8], "trailing data": whole + b"xy",
               "bad crc": whole[:-8] + bytes(4) + whole[-4:]}
    for name, data in damaged.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(TrecFormatError, match="corrupt gzip"):
            read_bytes(tmp_path / name, "run")


def test_a_file_that_grows_while_read_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "growing.txt"
    path.write_bytes(LINE * 1000)
    add = text_files._Text.add

    def add_and_grow(self, piece):
        add(self, piece)
        with open(path, "ab") as f:                                  # a writer still at work
            f.write(LINE)

    monkeypatch.setattr(text_files, "_GZ_PIECE", 4096)
    monkeypatch.setattr(text_files._Text, "add", add_and_grow)
    with pytest.raises(TrecFormatError, match="grows"):
        read_bytes(path, "run")


def test_special_files_in_api_and_path_checks(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    for call in (lambda: read_run(tmp_path / "fifo"), lambda: read_qrels(tmp_path / "fifo"),
                 lambda: read_runs([tmp_path / "fifo"]), lambda: read_run("/dev/null")):
        with pytest.raises(TrecFormatError, match="regular files"):
            call()
    os.symlink("/dev/zero", tmp_path / "zero.link")
    with pytest.raises(TrecFormatError, match="character device"):
        read_run(tmp_path / "zero.link")


# -- Ctrl-C ------------------------------------------------------------------------------------
#: A child running ``python -m irscale ARGS`` that sends itself SIGINT when it first imports
#: the module named by argv[1] ("exit": while the interpreter exits after the command).
INTERRUPT = textwrap.dedent("""
    import atexit, os, runpy, signal, sys, time
    when = sys.argv.pop(1)
    sys.argv[0] = "irscale"

    class Interrupt:
        def find_spec(self, name, path=None, target=None):
            if name == when:
                sys.meta_path.remove(self)
                os.kill(os.getpid(), signal.SIGINT)
            return None

    def ring():
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)

    if when == "exit":
        atexit.register(ring)
    else:
        sys.meta_path.insert(0, Interrupt())
    runpy.run_module("irscale", run_name="__main__", alter_sys=True)
""")


#: Exit statuses of an interrupted command: 130, or (the same 130 to a shell) death by the
#: SIGINT that Python sends itself on exit when an interrupt hit code run by
#: PyRun_String (some extension modules' imports), even though the CLI handled it.
INTERRUPTED = (130, -signal.SIGINT)


@pytest.mark.parametrize("when", ["click", "pandas", "exit"])
def test_ctrl_c_at_start_up_and_at_exit_is_one_line(files, when):
    """While the command line imports click (before main runs), while a command imports
    pandas (in main), and while the interpreter exits after it: 130, one line."""
    command = (["--help"] if when == "exit" else
               ["transform", "--qrels", "qrels.txt", "--runs", "run.txt", "-m", "P@5", "--raw-only", "-o", "s.tsv"])
    code, err, _ = _run([sys.executable, "-c", INTERRUPT, when, *command], files, timeout=60,
                        env={"IRSCALE_STORE": str(files / "store")})
    assert code in INTERRUPTED, err[-3000:]
    assert "Traceback" not in err and len(_lines(err)) == 1, err[-3000:]


def test_an_interrupt_python_wraps_in_another_error_is_one_line(monkeypatch, capsys):
    """A Ctrl-C within a class's __set_name__ while a module imports (numba's, at random
    moments) reaches the command as a RuntimeError caused by it: 130 and one line, not the
    traceback of a bug; a RuntimeError of its own is still a bug."""
    def interrupted_import(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as e:
            raise RuntimeError("Error calling __set_name__ on 'cached_property' instance") from e

    monkeypatch.setattr("irscale.commands.measures.command.callback", interrupted_import)
    assert main(["measures"]) == 130
    assert _lines(capsys.readouterr().err) == ["irscale: interrupted"]
    monkeypatch.setattr("irscale.commands.measures.command.callback", lambda *a, **k: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        main(["measures"])


def test_main_restores_the_sigint_handler_of_its_caller():
    def mine(signum, frame):
        pass

    before = signal.signal(signal.SIGINT, mine)
    try:
        assert main(["--help"]) == 0
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.slow
def test_ctrl_c_at_random_moments_is_one_line(files):
    """SIGINT at random moments of a transform of 40 runs, past the interpreter's own
    start-up (its site module, before any irscale code runs, is Python's)."""
    runs = files / "runs"
    runs.mkdir()
    for i in range(40):
        (runs / f"r{i}.txt").write_text(RUN.replace("sysA", f"sys{i}") * 1)
    rng = random.Random(32)
    for _ in range(30):
        at = rng.uniform(0.1, 2.0)
        code, err, _ = _transform(files, runs=runs, signal_at=at, timeout=60)
        lines = [line for line in _lines(err) if "reading runs" not in line]
        if code == 0 or (code == -signal.SIGINT and not lines):
            continue        # finished before the signal, or ended by it in the interpreter's last teardown
        assert code in INTERRUPTED and "Traceback" not in err and len(lines) == 1, (at, err[-3000:])
