"""Bad input to ``irscale transform``: one line naming the file (and line), exit status 2,
no output file and no temporary file left behind, an existing output file kept."""
import gzip
import os

import pandas as pd
import pytest

from irscale.cli import main

GOOD_RUN = ["401 Q0 D1 1 3.5 sysA", "401 Q0 D2 2 2.5 sysA", "402 Q0 D3 1 1.0 sysA"]
QRELS = ["401 0 D1 1", "401 0 D2 0", "402 0 D3 1"]


def _lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return path


@pytest.fixture
def files(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    return inputs, _lines(inputs / "qrels.txt", QRELS), _lines(inputs / "good.run", GOOD_RUN), out


def _fails(capsys, argv, *needles, out_dir=None):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("irscale: error: ") and "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    if out_dir is not None:
        assert sorted(os.listdir(out_dir)) == [], os.listdir(out_dir)   # no partial or temporary file
    return lines[0]


def _transform(qrels, runs, out, *extra):
    return ["transform", "--qrels", str(qrels), "--runs", *map(str, runs), "--measures", "AP@5,P@5",
            "--out", str(out / "scores.csv"), "-q", *extra]


RUN_CASES = {
    "short line": (GOOD_RUN[:1] + ["401 Q0 D2 2 2.5"] + GOOD_RUN[2:], ":2: expected 6 columns", "found 5"),
    "garbage line": (GOOD_RUN + ["<html><body>"], ":4: expected 6 columns", "found 1"),
    "non-numeric score": (GOOD_RUN[:1] + ["401 Q0 D2 2 high sysA"], ":2: score 'high' is not a number"),
    "NaN score": (GOOD_RUN[:2] + ["402 Q0 D3 1 nan sysA"], ":3: score is NaN"),
    "duplicate docno": (GOOD_RUN + ["401 Q0 D1 9 0.5 sysA"], ":4: document D1 appears twice for topic 401",
                        "line 1"),
    "qrels as run": (QRELS, ":1: expected 6 columns", "looks like a qrels file"),
}


@pytest.mark.parametrize("case", sorted(RUN_CASES))
def test_malformed_run(files, capsys, case):
    inputs, qrels, good, out = files
    lines, *needles = RUN_CASES[case]
    bad = _lines(inputs / "bad.run", lines)
    _fails(capsys, _transform(qrels, [good, bad], out), str(bad), *needles, out_dir=out)


def test_gzipped_bad_run_reports_line(files, capsys):
    inputs, qrels, good, out = files
    bad = inputs / "bad.run.gz"
    bad.write_bytes(gzip.compress(b"401 Q0 D1 1 3.5 sysA\n\n401 Q0 D2 2\n"))
    _fails(capsys, _transform(qrels, [bad], out), f"{bad}:3: expected 6 columns", out_dir=out)


def test_empty_and_binary_runs(files, capsys):
    inputs, qrels, good, out = files
    empty = inputs / "empty.run"
    empty.write_text("\n  \n")
    _fails(capsys, _transform(qrels, [good, empty], out), str(empty), "empty run file", out_dir=out)
    binary = inputs / "run.bin"
    binary.write_bytes(b"401 Q0 D1 1 3.5 sysA\n\x89HDF\r\n\x1a\n\x00\x00\x00\x00\x00\x08\x08\x00")
    _fails(capsys, _transform(qrels, [binary], out), f"{binary}:4: binary content", out_dir=out)
    store = inputs / "tables"
    assert main(["build", "--measures", "P@3", "--out", str(store), "-q"]) == 0
    _fails(capsys, _transform(qrels, [store], out), str(store), "binary content", out_dir=out)
    corrupt = inputs / "cut.run.gz"
    corrupt.write_bytes(gzip.compress(("\n".join(GOOD_RUN) * 50).encode())[:40])
    _fails(capsys, _transform(qrels, [corrupt], out), str(corrupt), "corrupt gzip", out_dir=out)


def test_unreadable_paths(files, capsys):
    inputs, qrels, good, out = files
    _fails(capsys, _transform(qrels, [good, inputs / "nope.run"], out), "nope.run: no such file", out_dir=out)
    _fails(capsys, _transform(inputs / "nope.qrels", [good], out), "nope.qrels: no such file", out_dir=out)
    empty_folder = inputs / "empty"
    empty_folder.mkdir()
    _fails(capsys, _transform(qrels, [empty_folder], out), "holds no run files", out_dir=out)
    if os.geteuid() != 0:   # root reads anything
        locked = _lines(inputs / "locked.run", GOOD_RUN)
        locked.chmod(0)
        _fails(capsys, _transform(qrels, [locked], out), str(locked), "cannot read", out_dir=out)


QRELS_CASES = {
    "run as qrels": (GOOD_RUN, ":1: expected 4 columns", "looks like a run file"),
    "short line": (QRELS[:1] + ["401 0 D2"], ":2: expected 4 columns", "found 3"),
    "non-integer level": (QRELS[:2] + ["402 0 D3 yes"], ":3: relevance level 'yes' is not an integer"),
    "judged twice": (QRELS + ["401 0 D1 0"], ":4: document D1 is judged twice for topic 401"),
}


@pytest.mark.parametrize("case", sorted(QRELS_CASES))
def test_malformed_qrels(files, capsys, case):
    inputs, _, good, out = files
    lines, *needles = QRELS_CASES[case]
    bad = _lines(inputs / "bad.qrels", lines)
    _fails(capsys, _transform(bad, [good], out), str(bad), *needles, out_dir=out)


def test_qrels_without_relevant_documents(files, capsys):
    """trec_eval scores such qrels 0 everywhere: so does irscale, saying so; with
    --empty-topics skip nothing is left to evaluate, an error."""
    inputs, _, good, out = files
    none = _lines(inputs / "none.qrels", ["401 0 D1 0", "402 0 D3 -1"])
    capsys.readouterr()
    assert main([x for x in _transform(none, [good], out) if x != "-q"]) == 0
    assert "no topic has a relevant document" in capsys.readouterr().err
    _fails(capsys, _transform(none, [good], out, "--empty-topics", "skip"), "no topic has a relevant document")


def test_run_without_common_topic(files, capsys):
    inputs, qrels, good, out = files
    other = _lines(inputs / "other.run", ["501 Q0 D1 1 3.5 sysB", "502 Q0 D2 1 1.0 sysB"])
    _fails(capsys, _transform(qrels, [good, other], out), "run sysB", "no topic in common with the qrels",
           out_dir=out)


def test_duplicate_run_names(files, capsys):
    """Runs whose tags repeat are named by file (with a warning); repeated file names too
    are an error."""
    inputs, qrels, good, out = files
    copy = _lines(inputs / "copy.run", GOOD_RUN)
    done = inputs / "done"
    done.mkdir()
    assert main(_transform(qrels, [good, copy], done)) == 0
    names = set(pd.read_csv(done / "scores.csv")["run"])
    assert len(names) == 2 and any("copy" in n for n in names), names
    twin = inputs / "twin"
    twin.mkdir()
    again = _lines(twin / "good.run", GOOD_RUN)
    _fails(capsys, _transform(qrels, [good, again], out), "good", out_dir=out)


def test_bad_outputs_fail_before_work(files, capsys, tmp_path):
    inputs, qrels, good, out = files
    argv = ["transform", "--qrels", str(qrels), "--runs", str(good), "--measures", "P@5", "-q", "--out"]
    _fails(capsys, argv + [str(out / "scores.xlsx")], "unknown output format", out_dir=out)
    _fails(capsys, argv + [str(tmp_path / "no" / "scores.csv")], "does not exist")
    _fails(capsys, ["transform", "--qrels", str(qrels), "--runs", str(good), "--measures", "XP@5", "-q",
                    "--out", str(out / "s.csv")], "XP", out_dir=out)


def test_existing_output_kept_on_error(files, capsys):
    inputs, qrels, good, out = files
    assert main(_transform(qrels, [good], out)) == 0
    before = (out / "scores.csv").read_bytes()
    assert before.startswith(b"run,topic,measure,n,rb,raw,rank,k,scaled,midrank,n_runs,rb_scale,scale\n")
    bad = _lines(inputs / "bad.run", GOOD_RUN[:1] + ["401 Q0 D2 2 x sysA"])
    _fails(capsys, _transform(qrels, [good, bad], out), f"{bad}:2:")
    assert os.listdir(out) == ["scores.csv"] and (out / "scores.csv").read_bytes() == before


def test_missing_table_names_build_command(files, capsys):
    """A missing table is built (default) or, with --no-build or beyond the limit, its
    measure gets raw scores only and one warning naming the command that builds it."""
    inputs, qrels, good, out = files
    store = inputs / "t.h5"
    assert main(["build", "--measures", "P@5", "--out", str(store), "-q"]) == 0
    capsys.readouterr()
    assert main([x for x in _transform(qrels, [good], out, "--store", str(store), "--no-build") if x != "-q"]) == 0
    err = capsys.readouterr().err
    assert f'irscale build --measures "AP@5" --out {store}' in err and err.count("irscale: warning") == 1, err
    assert main(_transform(qrels, [good], out, "--store", str(store))) == 0
    too_big = ["transform", "--qrels", str(qrels), "--runs", str(good), "--measures", "AP@30",
               "--store", str(store), "--out", str(out / "big.csv")]
    capsys.readouterr()
    assert main(too_big) == 0
    err = capsys.readouterr().err
    assert "building its scale would take about" in err and 'irscale build --measures "AP@30"' in err, err
    assert (out / "big.csv").is_file()
