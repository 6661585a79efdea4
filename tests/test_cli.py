"""The irscale command line: success paths and every user-error path (exit 2, one line)."""
# Subprocesses run with cwd=tmp_path: from the repository root, "python -m irscale" would
# import the source folder irscale/ instead of the installed package.
import os
import shlex
import shutil
import subprocess
import sys
import warnings

import h5py
import pytest

from irscale.cli import main
from irscale.commands.options import warnings_said
from irscale.errors import IrscaleWarning


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "t.h5"
    assert main(["build", "--measures", "AP@6,DCG(b=2)@6", "--out", str(path), "-q"]) == 0
    return path


def _error(capsys, argv, needle):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("irscale: error: ")
    assert needle in lines[0], lines[0]
    assert "Traceback" not in err
    return lines[0]


def test_build_info_lookup(store, capsys):
    capsys.readouterr()
    assert main(["info", str(store)]) == 0
    out = capsys.readouterr().out
    assert "AP@6" in out and "DCG(b=2)@6" in out and "formal-log+mpmath60" in out and "exact-integer" in out
    assert main(["lookup", str(store), "DCG(b=2)@6", "0", "1", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "value\trank\tk\tscaled"
    import naive
    distinct, _ = naive.unq_ranks([naive.DCG(2)(r) for r in naive.all_runs(6)])
    expected = [str(1 + sum(1 for d in distinct if d < v)) for v in (0, 1, 2)]
    assert [line.split("\t")[1] for line in out[1:]] == expected
    assert main(["lookup", str(store), "AP@6", "--rb", "2", "1"]) == 0
    k = len(naive.oracle(naive.AP, 6, 2)[2])
    assert capsys.readouterr().out.splitlines()[1].split("\t")[1:3] == [str(k), str(k)]
    assert main(["info", str(store), "--json"]) == 0
    import json
    assert len(json.loads(capsys.readouterr().out)["tables"]) == 2


def test_preset_paper(tmp_path, capsys):
    path = tmp_path / "p.h5"
    assert main(["build", "--preset", "paper", "--depth", "5", "--out", str(path), "-q"]) == 0
    from irscale import open_store
    measures = {t["measure"] for t in open_store(path).tables()}
    assert measures == {"P@5", "R@5", "AP@5", "RR@5", "RBP(p=0.3)@5", "RBP(p=0.5)@5", "RBP(p=0.8)@5",
                        "DCG(b=2)@5", "DCG(b=10)@5", "nDCG(b=2)@5", "nDCG(b=10)@5"}


def test_user_errors(store, tmp_path, capsys):
    out = str(tmp_path / "x.h5")
    _error(capsys, ["build", "--measures", "Foo@10", "--out", out], "unknown measure 'Foo")
    _error(capsys, ["build", "--measures", "RBP(p=1.5)@10", "--out", out], "p must be a number in (0, 1)")
    _error(capsys, ["build", "--measures", "AP@0", "--out", out], "between 1 and")
    _error(capsys, ["build", "--measures", "AP@99", "--out", out], "no exact or bounded scale exists for AP at N > 32")
    _error(capsys, ["build", "--measures", "AP@5", "--rb", "x", "--out", out], "comma-separated list")
    _error(capsys, ["build", "--preset", "nope", "--depth", "5", "--out", out], "unknown preset")
    _error(capsys, ["build", "--out", out], "give --measures or --preset")
    _error(capsys, ["lookup", str(store), "AP@6", "0.5"], "depends on the recall base")
    _error(capsys, ["lookup", str(store), "DCG(b=2)@6", "--rb", "3", "1"], "does not depend")
    _error(capsys, ["lookup", str(store), "AP@6", "--rb", "2", "0.123"], "is not a value of AP@6")
    _error(capsys, ["lookup", str(store), "AP@6", "--rb", "2", "abc"], "'abc' is not a number")
    _error(capsys, ["lookup", str(store), "AP@6", "--rb", "2", "nan"], "nan is not a value")
    # a missing table: the line names the table and the store, and the command it suggests builds it
    copy = tmp_path / "copy.h5"
    shutil.copytree(store, copy)
    lookup = ["lookup", str(copy), "nDCG(b=2)@6", "--rb", "2", "1"]
    line = _error(capsys, lookup, "nDCG(b=2)@6")
    assert str(copy) in line and "irscale build" in line
    suggested = shlex.split("irscale build" + line.split("irscale build", 1)[1])
    assert main([*suggested[1:], "-q"]) == 0
    assert main(lookup) == 0
    _error(capsys, ["lookup", str(store), "AP@7", "--rb", "3", "1"], 'irscale build --measures "AP@7"')
    _error(capsys, ["info", str(tmp_path / "missing.h5")], "no such file")
    (tmp_path / "junk.h5").write_bytes(b"\x00\x01 not hdf5")
    _error(capsys, ["info", str(tmp_path / "junk.h5")], "not an HDF5 file")
    with h5py.File(tmp_path / "foreign.h5", "w") as f:
        f["a"] = 1
    _error(capsys, ["lookup", str(tmp_path / "foreign.h5"), "P@5", "0.2"], "foreign.h5")   # one line naming it
    _error(capsys, ["build", "-m", "AP@5", "--out", "/proc/irscale-test.h5"], "cannot write /proc/irscale-test.h5")
    _error(capsys, ["nosuchcommand"], "No such command")
    _error(capsys, ["build", "--measures", "P@5"], "--out")


def test_build_rb_for_measures_without_recall_base_is_refused(tmp_path, capsys):
    _error(capsys, ["build", "--measures", "P@6", "--rb", "3", "--out", str(tmp_path / "t.h5")],
           "none of the measures given does")
    assert not (tmp_path / "t.h5").exists()


def test_console_script_exit_codes(tmp_path):
    r = subprocess.run([sys.executable, "-m", "irscale", "lookup", str(tmp_path / "none.h5"), "AP@5", "1", "--rb", "2"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr.strip().count("\n") == 0 and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "irscale", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "build" in r.stdout and "lookup" in r.stdout


def test_commands_show_warnings_for_users_not_python_developer_warnings(capsys):
    """A command says every warning meant for its user (once per text), but not what Python
    keeps quiet by default: the unclosed file of an import cut short by Ctrl-C, a library's
    deprecation."""
    with warnings_said():
        warnings.warn("about your runs", IrscaleWarning, stacklevel=1)
        warnings.warn("about your runs", IrscaleWarning, stacklevel=1)
        warnings.warn("a library's own", UserWarning, stacklevel=1)
        warnings.warn("unclosed file <_io.BufferedReader name='x.pyc'>", ResourceWarning, stacklevel=1)
        warnings.warn("old API", DeprecationWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err.count("about your runs") == 1 and "a library's own" in err
    assert "unclosed" not in err and "old API" not in err


def test_a_run_file_given_as_qrels_is_one_clear_line(tmp_path, capsys, monkeypatch):
    """No warning of pandas (a first line wider than a qrels line) before the error."""
    monkeypatch.setenv("IRSCALE_STORE", str(tmp_path / "no-store"))
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n")
    _error(capsys, ["transform", "--qrels", str(run), "--runs", str(run), "-m", "P@5", "--raw-only", "--out",
                    str(tmp_path / "o.csv")], f"{run}:1: expected 4 columns (topic iteration docno rel), found 6; "
                                              f"this looks like a run file")
    from irscale.errors import TrecFormatError
    from irscale.scales.runs.qrels import read_qrels
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TrecFormatError, match="found 6; this looks like a run file"):
            read_qrels(run)
        qrels = tmp_path / "q.txt"                  # blank lines and blanks around fields: 4 fields still
        qrels.write_text("\n 1 0 d1 1 \n1\t0 d2 0\n")
        assert read_qrels(qrels).judgments == {"1": {"d1": 1, "d2": 0}}


@pytest.mark.slow      # 8 runs of the command: 8 to 15 s
def test_an_error_ends_the_command_with_its_status_not_an_abort(tmp_path):
    """The right one-line error, then exit 2, never "terminate called without an active
    exception" and SIGABRT from C++ threads (pyarrow, numba's TBB) still running at exit:
    the command ends with os._exit after Python's exit functions (most likely to show while
    another process takes the CPU)."""
    (tmp_path / "q.txt").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 nan t\n")
    env = {**os.environ, "IRSCALE_STORE": str(tmp_path / "no-store")}
    argv = [sys.executable, "-m", "irscale", "transform", "--qrels", "q.txt", "-m", "AP@10", "--raw-only", "--out",
            "o.csv", "--runs", "r"]
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        for attempt in range(8):
            r = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
            assert (r.returncode, r.stderr) == (2, "irscale: error: r:1: score is NaN\n"), f"attempt {attempt}"
    finally:
        burner.kill()
        burner.wait()
    assert not (tmp_path / "o.csv").exists()
