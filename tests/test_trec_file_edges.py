"""TREC files as trec_eval reads them (issue 13, item 7): fields after a run's tag ignored,
a byte order mark kept as part of the first topic id, fields separated by ASCII white space
only; and every refused line named by file and line, whichever reader (pyarrow, pandas,
line by line) met it.

The trec_eval comparisons build NIST trec_eval from ../shared/tools (a few seconds) and
skip, saying why, when it or a C compiler is missing."""
import gzip
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest

import irscale
from irscale import IrscaleWarning, TrecFormatError
from irscale.cli import main
from irscale.scales.runs import qrels as qrels_module
from irscale.scales.runs import run_files as run_files_module
from irscale.scales.runs.qrels import read_qrels
from irscale.scales.runs.run_files import read_run

BUILD = Path(__file__).resolve().parents[1].parent / "shared" / "tools" / "build-trec_eval.sh"

QRELS = ["401 0 D1 1", "401 0 D2 0", "401 0 D3 1", "402 0 D4 1", "402 0 D5 1", "403 0 D7 1", "403 0 D8 2"]
#: topic, docno, score: the run of every test, written in different layouts.
DOCS = [("401", "D1", "3.5"), ("401", "D2", "2.5"), ("401", "D3", "1.5"), ("402", "D5", "1.0"),
        ("402", "D6", "0.5"), ("402", "D4", "0.2"), ("403", "D9", "2"), ("403", "D8", "1"), ("403", "D7", "0.5")]
MEASURES = {"map_cut_5": "AP@5", "P_5": "P@5"}


def _run_text(extra=lambda i: [], sep=" "):
    return "".join(sep.join([t, "Q0", d, str(i + 1), s, "sysA", *extra(i)]) + "\n" for i, (t, d, s) in enumerate(DOCS))


def _write(path, text, gz=False):
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture(scope="module")
def trec_eval(tmp_path_factory):
    if not BUILD.is_file():
        pytest.skip(f"trec_eval build script not found at {BUILD}")
    out = tmp_path_factory.mktemp("trec_eval")
    done = subprocess.run(["bash", str(BUILD), str(out / "te")], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"trec_eval could not be built: {done.stderr.strip()[-200:]}")
    return done.stdout.strip().splitlines()[-1]


def _trec_eval(binary, qrels, run):
    """(measure, topic) -> value printed by ``trec_eval -c -q`` (without the 'all' rows)."""
    done = subprocess.run([binary, "-c", "-q", "-m", "map_cut.5", "-m", "P.5", str(qrels), str(run)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    out = {}
    for line in done.stdout.splitlines():
        name, topic, value = line.split("\t")
        if topic != "all":
            out[MEASURES[name.strip()], topic] = float(value)
    return out


def _irscale(qrels, run):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        scores = irscale.transform(str(qrels), [str(run)], ",".join(MEASURES.values()))
    return {(m, t): raw for m, t, raw in zip(scores["measure"], scores["topic"], scores["raw"])}


def _agree(ours, theirs):
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        assert abs(ours[key] - value) <= 5e-5 + 1e-12, (key, ours[key], value)


def _fails(read, path, line, *needles):
    with pytest.raises(TrecFormatError) as info:
        read(path)
    text = str(info.value)
    assert text.startswith(f"{path}:{line}: "), text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


# -- columns after the run tag ------------------------------------------------------------------
EXTRA_LAYOUTS = {
    "7 to 9, spaces": dict(extra=lambda i: ["x"] * (1 + i % 3)),
    "7, tabs": dict(extra=lambda i: ["7"], sep="\t"),
    "7, spaces": dict(extra=lambda i: ["1.5"]),
    "8, numbers, tabs": dict(extra=lambda i: [str(i), "0"], sep="\t"),
}


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("layout", sorted(EXTRA_LAYOUTS))
def test_columns_after_the_tag_are_ignored(tmp_path, layout, gz):
    plain = read_run(_write(tmp_path / "six.txt", _run_text()))
    run = read_run(_write(tmp_path / "more.txt", _run_text(**EXTRA_LAYOUTS[layout]), gz))
    assert run.name == plain.name == "sysA"
    assert run.rankings() == plain.rankings()
    assert np.array_equal(run.scores, plain.scores)
    reference = {}
    for t, d, s in DOCS:
        reference.setdefault(t, []).append((float(s), d))
    assert run.rankings() == {t: [d for _, d in sorted(v, reverse=True)] for t, v in reference.items()}


def test_each_reader_ignores_the_extra_columns(tmp_path, monkeypatch):
    """Uniform extra columns with one separator: pyarrow; other layouts: pandas; never the
    line-by-line reader, which is for odd files and errors."""
    plain = read_run(_write(tmp_path / "six.txt", _run_text())).rankings()
    monkeypatch.setattr(run_files_module, "_run_lines", lambda *a: pytest.fail("read line by line"))
    with monkeypatch.context() as m:
        m.setattr(run_files_module, "read_fields", lambda *a, **k: pytest.fail("read by pandas"))
        tabs = _write(tmp_path / "tabs.txt", _run_text(extra=lambda i: ["7", "8"], sep="\t"))
        assert read_run(tabs).rankings() == plain
    mixed = _write(tmp_path / "mixed.txt", _run_text(extra=lambda i: ["x"] * (1 + i % 3)))
    assert read_run(mixed).rankings() == plain


def test_extra_columns_equal_trec_eval(tmp_path, trec_eval):
    qrels = _write(tmp_path / "qrels.txt", "".join(line + "\n" for line in QRELS))
    run = _write(tmp_path / "run.txt", _run_text(extra=lambda i: ["x"] * (1 + i % 3)))
    _agree(_irscale(qrels, run), _trec_eval(trec_eval, qrels, run))


def test_short_lines_are_still_refused(tmp_path):
    text = _run_text().splitlines()
    text[3] = "402 Q0 D5 1 1.0"
    bad = _write(tmp_path / "run.txt", "\n".join(text) + "\n")
    _fails(read_run, bad, 4, "expected 6 columns", "found 5")


# -- byte order mark ----------------------------------------------------------------------------
def test_run_with_a_bom_equals_trec_eval(tmp_path, trec_eval):
    qrels = _write(tmp_path / "qrels.txt", "".join(line + "\n" for line in QRELS))
    clean = _write(tmp_path / "clean.txt", _run_text())
    bom = _write(tmp_path / "bom.txt", b"\xef\xbb\xbf" + _run_text().encode())
    with pytest.warns(IrscaleWarning, match="byte order mark") as caught:
        run = read_run(bom)
    assert any(f"{bom}:1:" in str(w.message) and "'\\ufeff401'" in str(w.message) for w in caught)
    assert set(run.rankings()) == {"\ufeff401", "401", "402", "403"}
    assert run.rankings()["\ufeff401"] == ["D1"]
    ours, theirs = _irscale(qrels, bom), _trec_eval(trec_eval, qrels, bom)
    _agree(ours, theirs)
    assert ours["AP@5", "401"] != _irscale(qrels, clean)["AP@5", "401"]     # the BOM matters, as in trec_eval


def test_qrels_with_a_bom_equal_trec_eval(tmp_path, trec_eval):
    qrels = _write(tmp_path / "qrels.txt", b"\xef\xbb\xbf" + "".join(line + "\n" for line in QRELS).encode())
    run = _write(tmp_path / "run.txt", _run_text())
    with pytest.warns(IrscaleWarning, match="byte order mark"):
        judgments = read_qrels(qrels).judgments
    assert judgments["\ufeff401"] == {"D1": 1} and judgments["401"] == {"D2": 0, "D3": 1}
    _agree(_irscale(qrels, run), _trec_eval(trec_eval, qrels, run))


# -- separators -------------------------------------------------------------------------------------
@pytest.mark.parametrize("space", ["\x0b", "\x0c", "\r"])
def test_ascii_white_space_separates_as_in_trec_eval(tmp_path, trec_eval, space):
    """Vertical tab, form feed and a CR without LF separate fields in trec_eval (C isspace);
    the fast readers do not take them so, or end lines at a lone CR."""
    qrels = _write(tmp_path / "qrels.txt", "".join(line + "\n" for line in QRELS))
    lines = _run_text().splitlines()
    lines[1] = lines[1].replace(" ", space, 1)
    lines[4] = lines[4] + space + lines[5]              # a lone CR: one line of 12 fields, the rest ignored
    del lines[5]
    run = _write(tmp_path / "run.txt", "\n".join(lines) + "\n")
    got = read_run(run).rankings()
    assert got["401"] == ["D1", "D2", "D3"] and got["402"] == ["D5", "D6"]
    _agree(_irscale(qrels, run), _trec_eval(trec_eval, qrels, run))


def test_non_breaking_space_is_part_of_a_field(tmp_path, trec_eval):
    qrels = _write(tmp_path / "qrels.txt", "".join(line + "\n" for line in QRELS))
    for sep in (" ", "\t"):
        lines = _run_text(sep=sep).splitlines()
        lines[2] = lines[2].replace(sep, "\u00a0", 1)
        bad = _write(tmp_path / f"nbsp{ord(sep)}.txt", "\n".join(lines) + "\n")
        _fails(read_run, bad, 3, "expected 6 columns", "found 5")
        done = subprocess.run([trec_eval, str(qrels), str(bad)], capture_output=True, text=True)
        assert done.returncode != 0 and "Malformed line 3" in done.stderr
    inside = _write(tmp_path / "inside.txt", _run_text().replace("D9", "D\u00a09"))
    assert read_run(inside).rankings()["403"][0] == "D\u00a09"
    bad_qrels = _write(tmp_path / "nbsp.qrels", "401 0 D1 1\n401\u00a00 D2 0\n")
    _fails(read_qrels, bad_qrels, 2, "expected 4 columns", "found 3")


# -- every refused line named --------------------------------------------------------------------
def test_refused_qrels_lines_are_named(tmp_path, trec_eval):
    run = _write(tmp_path / "run.txt", _run_text())
    cases = {
        "extra column": (["401 0 D1 1", "401 0 D2 0 5"], 2, ["expected 4 columns", "found 5"]),
        "extra column everywhere": (["401 0 D1 1 7", "401 0 D2 0 7"], 1, ["expected 4 columns", "found 5"]),
        "level 10^20": (["401 0 D1 1", "401 0 D2 100000000000000000000"], 2, ["100000000000000000000", "64-bit"]),
        "level -10^20": (["401 0 D1 -100000000000000000000"], 1, ["64-bit"]),
        "level with digit separator": (["401 0 D1 1_0"], 1, ["'1_0' is not an integer"]),
        "level not ASCII": (["401 0 D1 \u0661"], 1, ["is not an integer"]),
    }
    for name, (lines, line, needles) in cases.items():
        qrels = _write(tmp_path / "q.txt", "".join(x + "\n" for x in lines))
        _fails(read_qrels, qrels, line, *needles)
        if name.startswith("extra") or name == "level 10^20":
            done = subprocess.run([trec_eval, "-c", str(qrels), str(run)], capture_output=True, text=True)
            assert done.returncode != 0, name                  # trec_eval refuses these files too


def test_refused_run_lines_are_named(tmp_path):
    good = _run_text().splitlines()
    cases = {
        "score with digit separator": ("401 Q0 D2 2 1_5 sysA", ["score '1_5' is not a number"]),
        "score NaN": ("401 Q0 D2 2 NaN sysA", ["score is NaN"]),
        "not UTF-8": ("401 Q0 D\xff2 2 1 sysA", ["not UTF-8"]),
        "NBSP and extra columns": ("401\u00a0Q0 D2 2 1 sysA x", ["score 'sysA' is not a number"]),
    }
    for name, (line, needles) in cases.items():
        lines = list(good)
        lines[1] = line
        for sep in (" ", "\t"):
            text = "\n".join(x.replace(" ", sep) for x in lines) + "\n"
            data = text.encode("latin-1") if name == "not UTF-8" else text.encode()
            _fails(read_run, _write(tmp_path / "r.txt", data), 2, *needles)


def test_cli_names_the_file_and_line(tmp_path, capsys):
    qrels = _write(tmp_path / "qrels.txt", "401 0 D1 1\n401 0 D2 100000000000000000000\n")
    run = _write(tmp_path / "run.txt", _run_text())
    assert main(["transform", "--qrels", str(qrels), "--runs", str(run), "--measures", "AP@5",
                 "--out", str(tmp_path / "s.csv"), "-q"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"irscale: error: {qrels}:2: relevance level"), err


def test_line_reader_equals_the_fast_readers_on_trec8(shared_data, monkeypatch):
    """The line-by-line reader (BOMs, odd separators, errors) reads real files as pyarrow and
    pandas do."""
    trec8 = shared_data / "trec8"
    files = sorted((trec8 / "runs").glob("input.*.gz"))[::43]
    fast = [read_run(f, 30) for f in files]
    qrels = read_qrels(trec8 / "qrels.trec8.adhoc.txt").judgments
    monkeypatch.setattr(run_files_module, "read_line_by_line", lambda data: True)
    monkeypatch.setattr(qrels_module, "read_line_by_line", lambda data: True)
    monkeypatch.setattr(run_files_module, "delimited_table", lambda *a, **k: pytest.fail("fast reader used"))
    for f, a in zip(files, fast):
        b = read_run(f, 30)
        assert a.name == b.name and a.rankings() == b.rankings()
        assert np.array_equal(a.scores, b.scores)
    assert read_qrels(trec8 / "qrels.trec8.adhoc.txt").judgments == qrels
