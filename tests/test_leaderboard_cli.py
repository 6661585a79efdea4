"""``irscale compare`` as a user meets it: one command from qrels and runs to the table,
files in every format, and every mistake about names, files, stores, outputs and the
baseline answered in one line before any run is read (reading a run fails these tests)."""
import json
import warnings

import pytest

import irscale
from irscale.cli import main
from irscale.commands import compare as compare_command
from irscale.scales.analysis import compare as compare_module
from irscale.scales.analysis import leaderboard as leaderboard_module
from irscale.scales.runs import inputs


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    from test_readme import write_trec_files
    folder = tmp_path_factory.mktemp("compare")
    write_trec_files(folder)
    return folder


@pytest.fixture
def run(capsys):
    """``irscale ARGS`` in this process: (exit status, stdout, stderr)."""
    def go(args):
        capsys.readouterr()
        code = main(args)
        out = capsys.readouterr()
        return code, out.out, out.err
    return go


@pytest.fixture
def no_run_read(monkeypatch):
    """Reading a run raises: the command must have answered before."""
    def refuse(*args, **kwargs):
        raise AssertionError("a run was read before the mistake was reported")
    monkeypatch.setattr(inputs, "read_run", refuse)


def test_the_command_line_constants_are_the_library_s():
    assert compare_command.TESTS == leaderboard_module.LEADERBOARD_TESTS
    assert compare_command.CORRECTIONS == leaderboard_module.LEADERBOARD_CORRECTIONS
    assert compare_command.DEFAULT_MEASURES == compare_module.DEFAULT_MEASURES
    assert compare_command.MAX_BUILD_SECONDS == compare_module.MAX_BUILD_SECONDS


def test_one_command_prints_the_table_and_writes_every_format(walk, tmp_path, run):
    outs = [tmp_path / f"board{s}" for s in (".md", ".csv", ".json", ".tex")]
    code, out, err = run(["compare", "--qrels", str(walk / "qrels.txt"), "--runs", str(walk / "runs"), "-m",
                           "nDCG@10,P_5,RR,AP@10", "--baseline", "input.a", "--store", str(tmp_path / "t.h5"),
                           *[x for o in outs for x in ("-o", str(o))]])
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line) <= 100 for line in lines)
    for section in ("nDCG@10 = nDCG_trec@10", "P_5 = P@5", "RR = RR@30", "AP@10"):
        assert any(line.startswith(section) for line in lines), section
    assert sum(1 for line in lines if {"input.a", "baseline"} <= set(line.split())) == 4   # its row, per measure
    assert all(o.exists() for o in outs)
    data = json.loads(outs[2].read_text())
    assert data["baseline"] == "input.a" and len(data["systems"]) == 12
    # the printed means are the library's
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = irscale.compare(walk / "qrels.txt", walk / "runs", "nDCG@10,P_5,RR,AP@10", baseline="input.a",
                                store=tmp_path / "t.h5")
    first = board.table.iloc[0]
    assert f"{first['scaled_mean']:.4f}" in out and first["run"] in out


@pytest.mark.parametrize("args, needle", [
    (["-m", "nDGC@10"], "did you mean nDCG@10"),
    (["-m", "P@5", "--baseline", "input.x"], "did you mean input."),
    (["-m", "P@5", "-o", "board.docx"], "unknown leaderboard format"),
    (["-m", "P@5", "--alpha", "5"], "between 0 and 1"),
    (["-m", "P@5", "--runs", "nowhere/run.gz"], "no such file"),
])
def test_mistakes_are_answered_before_any_run_is_read(walk, tmp_path, no_run_read, run, args, needle):
    base = ["compare", "--qrels", str(walk / "qrels.txt"), "--runs", str(walk / "runs"), "--store",
            str(tmp_path / "none.h5")]
    code, _, err = run(base + args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("irscale: error:"), err
    assert needle in lines[0], lines[0]


def test_a_measure_without_scale_is_said_before_any_run_is_read(walk, tmp_path, no_run_read, capsys):
    with pytest.raises(AssertionError, match="a run was read"):
        main(["compare", "--qrels", str(walk / "qrels.txt"), "--runs", str(walk / "runs"), "-m", "AP@100",
              "--store", str(tmp_path / "t.h5")])
    assert "irscale: warning: no scale for AP@100" in capsys.readouterr().err
    with pytest.raises(AssertionError, match="a run was read"):            # --no-build: raw only, the command said
        main(["compare", "--qrels", str(walk / "qrels.txt"), "--runs", str(walk / "runs"), "-m", "AP@5",
              "--store", str(tmp_path / "t.h5"), "--no-build"])
    err = capsys.readouterr().err
    assert "irscale: warning: no scale for AP@5" in err and "irscale build" in err, err


def test_a_long_build_is_refused_off_a_terminal_and_done_with_yes(walk, tmp_path, monkeypatch, run):
    monkeypatch.setattr("irscale.scales.runs.preflight.QUICK_RUNS", 0)       # estimate every table
    monkeypatch.setattr("irscale.commands.compare.MAX_BUILD_SECONDS", 1e-9)  # and find each too long
    args = ["compare", "--qrels", str(walk / "qrels.txt"), "--runs", str(walk / "runs"), "-m", "AP@16",
            "--store", str(tmp_path / "t.h5")]
    code, out, err = run(args)                   # raw scores only, the command that builds the scale said
    assert code == 0 and "irscale build" in err and "NO SCALE for AP@16" in out, err
    assert not (tmp_path / "t.h5").exists()
    code, _, err = run(args + ["--yes"])
    assert code == 0, err
    assert irscale.open_store(tmp_path / "t.h5").has("AP@16")


def test_transform_mistakes_come_before_any_run_is_read(walk, tmp_path, no_run_read, run):
    base = ["transform", "--qrels", str(walk / "qrels.txt"), "--runs", str(walk / "runs"), "--out",
            str(tmp_path / "s.csv")]
    for args, needle in ((["-m", "nDGC@10"], "did you mean nDCG@10"),
                         (["-m", "AP@10", "--runs", "nowhere"], "no such file")):
        code, _, err = run(base + args)
        assert code == 2 and needle in err, err
    with pytest.raises(AssertionError, match="a run was read"):
        run(base + ["-m", "AP@100", "--store", str(tmp_path / "none.h5")])


def test_header_names_tables_among_oracles(tmp_path, capsys):
    """A measure answered by rank oracles for some count vectors and tables for the others:
    the leaderboard's header and the transform's summary say both, with how many of each
    (not "rank oracle" alone), and a board from scores read back from a tsv file says it too, by
    topics (from the ``scale`` column)."""
    import warnings

    import irscale
    from irscale.scales.runs.scores import read_scores, write_scores
    qrels = tmp_path / "qrels.txt"
    lines = [f"1 0 a{i} {1 if i < 2 else 2}" for i in range(8)]           # (2, 6): grade 1 bounds alone: oracle
    lines += [f"2 0 b{i} {1 if i < 2 else 2}" for i in range(5)]          # (2, 3): both grades bound: a table
    qrels.write_text("\n".join(lines) + "\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for name, shift in (("x", 0), ("y", 1)):
        (runs / name).write_text("".join(f"{q} Q0 {docs}{(i + shift) % 6} {i} {10 - i} {name}\n"
                                         for q, docs in (("1", "a"), ("2", "b")) for i in range(6)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = irscale.compare(str(qrels), str(runs), "nDCG@6", store=tmp_path / "s")
        scores = irscale.transform(str(qrels), str(runs), "nDCG@6", store=tmp_path / "s")
    [summary] = board.measures
    assert summary.scale == "exact: rank oracle (1 of 2 count vectors) and table (1)", summary.scale
    assert scores.attrs["scale_kinds"] == {summary.measure: summary.scale}
    main(["transform", "--qrels", str(qrels), "--runs", str(runs), "-m", "nDCG@6", "--store", str(tmp_path / "s"),
          "-o", str(tmp_path / "scores.tsv")])
    out = " ".join(capsys.readouterr().out.split())
    assert "rank oracle (1 of 2 count vectors) and table (1) for nDCG" in out, out
    write_scores(scores, tmp_path / "back.tsv")
    back = irscale.leaderboard(read_scores(tmp_path / "back.tsv"))
    assert back.measures[0].scale == "exact: rank oracle (1 of 2 topics) and table (1)"
