"""The report of ``irscale analyze`` (scales/analysis/report.py): degenerate inputs (one
measure, no mid-ranks, one topic) give a report and impossible ones one line naming what is
missing; the title names the scores file, runs and topics (not TREC-8), or is the one
given; --stores draws the value distribution of each table; the sentence about measure
pairs never names one pair both ways; figures come with notes, a figure left out is a note."""
import random

import numpy as np
import pandas as pd
import pytest

import irscale
from irscale.cli import main
from irscale.scales.analysis.analyze import Analysis, analyze
from irscale.scales.analysis.report import measure_pairs_section, write_report

MEASURES = "AP@5,P@5"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """5 runs x 4 topics of 10 documents, a store of AP@5 and P@5, and the scores."""
    tmp = tmp_path_factory.mktemp("report")
    rng = random.Random(12)
    topics, docs = ("401", "402", "403", "404"), [f"D{d}" for d in range(10)]
    qrels = [f"{t} 0 {d} {int(d == 'D0' or rng.random() < 0.4)}" for t in topics for d in docs]
    (tmp / "qrels.txt").write_text("\n".join(qrels) + "\n")
    runs = []
    for s in range(5):
        path = tmp / f"sys{s}.run"
        path.write_text("".join(f"{t} Q0 {d} {k + 1} {10 - k} sys{s}\n"
                                for t in topics for k, d in enumerate(rng.sample(docs, 7))))
        runs.append(path)
    store = tmp / "t.h5"
    irscale.build_store(store, MEASURES, n_jobs=1)
    scores = irscale.transform(tmp / "qrels.txt", runs, MEASURES, store, midranks=True)
    return tmp, store, scores


def _write(scores, path):
    irscale.write_scores(scores, path)
    return str(path)


def _run(argv, capsys):
    capsys.readouterr()
    if argv[0] == "analyze":            # these tests are about the paper's analyses: no transform comparison
        argv = [*argv, "--transforms", "none"]
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


def test_degenerate_inputs_report_or_one_line(tiny, tmp_path, capsys):
    _, _, scores = tiny
    one_measure = _write(scores[scores.measure == "AP@5"], tmp_path / "ap.csv")
    status, err = _run(["analyze", one_measure, "--out", str(tmp_path / "r1"), "--tests", "sign", "-q"], capsys)
    assert status == 0, err
    report = (tmp_path / "r1" / "report.md").read_text()
    assert "only one measure" in report.lower()
    assert "## 1." in report and "## 4." in report

    no_mid = _write(scores.assign(midrank=np.nan), tmp_path / "nomid.csv")
    status, err = _run(["analyze", no_mid, "--out", str(tmp_path / "r2"), "--tests", "none", "-q"], capsys)
    assert status == 0 and (tmp_path / "r2" / "report.md").is_file(), err

    one_topic = _write(scores[scores.topic == "401"], tmp_path / "topic.csv")
    status, err = _run(["analyze", one_topic, "--out", str(tmp_path / "r3"), "--tests", "none", "-q"], capsys)
    assert status == 0 and (tmp_path / "r3" / "report.md").is_file(), err

    (tmp_path / "empty.csv").write_text("")
    for name, frame, needle in (("run.csv", scores[scores.run == "sys0"], "run"),
                                ("topic2.csv", scores[scores.topic == "401"], "topic"),
                                ("raw.csv", scores.assign(rank=pd.NA, k=pd.NA, scaled=np.nan), "scaled"),
                                ("empty.csv", None, "empty.csv")):
        path = _write(frame, tmp_path / name) if frame is not None else str(tmp_path / name)
        status, err = _run(["analyze", path, "--out", str(tmp_path / "bad"), "--tests", "sign", "-q"], capsys)
        lines = err.strip().splitlines()
        assert status == 2 and len(lines) == 1 and lines[0].startswith("irscale: error: "), (name, err)
        assert needle in lines[0], lines[0]


def test_title_neutral_and_settable(tiny, tmp_path, capsys):
    _, _, scores = tiny
    path = _write(scores, tmp_path / "myruns.csv")
    status, err = _run(["analyze", path, "--out", str(tmp_path / "a"), "--tests", "none", "-q"], capsys)
    assert status == 0, err
    title = (tmp_path / "a" / "report.md").read_text().splitlines()[0]
    assert title.startswith("# ") and "TREC" not in title
    assert "myruns.csv" in title and "5 runs" in title and "4 topics" in title
    status, err = _run(["analyze", path, "--out", str(tmp_path / "b"), "--tests", "none", "-q",
                        "--title", "Robust04, run set B"], capsys)
    assert status == 0, err
    assert (tmp_path / "b" / "report.md").read_text().splitlines()[0] == "# Robust04, run set B"
    result = analyze(scores, tests=(), transforms="none")
    assert "TREC" not in write_report(result, tmp_path / "c").read_text().splitlines()[0]
    assert write_report(result, tmp_path / "d", title="API title").read_text().startswith("# API title\n")


def test_stores_draw_values_against_fraction_of_runs(tiny, tmp_path, capsys):
    _, store, scores = tiny
    path = _write(scores, tmp_path / "s.csv")
    out = tmp_path / "rep"
    status, err = _run(["analyze", path, "--out", str(out), "--tests", "none", "--stores", str(store), "-q"],
                       capsys)
    assert status == 0, err
    png = out / "value-distributions.png"
    assert png.is_file() and png.read_bytes().startswith(b"\x89PNG")
    report = (out / "report.md").read_text()
    assert "](value-distributions.png)" in report
    assert "fraction of runs" in report
    # the data drawn: x = cumulative run count / runs, y = the distinct values
    from irscale.scales.analysis.figures import value_distribution_lines
    p5 = irscale.open_store(store).scale("P@5")
    lines = value_distribution_lines(lambda name: p5 if name == "P@5" else None, measures=("P", "AP"), ns=(5, 6))
    assert list(lines) == ["P"] and [line["n"] for line in lines["P"]] == [5]
    line = lines["P"][0]
    assert np.allclose(line["value"], p5.values)
    assert np.allclose(line["fraction"], np.cumsum(p5.counts) / p5.counts.sum()) and line["fraction"][-1] == 1


def _pairs(changes):
    rows = []
    names = ["A@5", "B@5", "C@5"]
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    for (a, b), change in zip(pairs, changes):
        rows.append({"n": 5, "rb_scale": "feasible", "measure_a": a, "measure_b": b, "tau_raw": 0.5,
                     "tau_scaled": 0.5 + change, "delta_pct": change / 0.5 * 100})
    return pd.DataFrame(rows)


def test_pair_sentence_never_names_one_pair_both_ways(tmp_path):
    text = measure_pairs_section(_pairs([0.0, 0.0, 0.0]), 5)
    assert "most towards" not in text and "away from" not in text
    assert "no" in text.lower() and "change" in text.lower()
    text = measure_pairs_section(_pairs([0.2]), 5)      # one pair, towards agreement only
    assert "towards agreement for A – B" in text and "away from" not in text
    text = measure_pairs_section(_pairs([-0.1, -0.3, -0.1]), 5)
    assert "towards agreement" not in text and "most away from agreement for A – C" in text
    text = measure_pairs_section(_pairs([0.1, -0.2, 0.0]), 5)
    assert "towards agreement for A – B" in text and "away from it for A – C" in text
    # the whole report, every Δ = 0
    analysis = Analysis(pd.DataFrame([{"n": 5, "rb_scale": "feasible", "measure": m, "systems": 3, "topics": 2,
                                       "tau_unq": 1.0, "tau_midrank": 1.0, "topic_tau_min": 1.0,
                                       "topics_checked": 2, "topics_constant": 0} for m in ("A@5", "B@5", "C@5")]),
                        _pairs([0.0, 0.0, 0.0]), pd.DataFrame())
    assert "most towards" not in write_report(analysis, tmp_path).read_text()


def test_figure_notes_and_figures_left_out(tiny, tmp_path):
    """A figure may come with a note saying what it shows; a figure left out is a note alone."""
    _, _, scores = tiny
    result = analyze(scores, tests=(), transforms="none")
    text = write_report(result, tmp_path, figures=[("Runs", "runs-length4.png", "Shown: AP@4. Left out: Twist@10."),
                                                   ("Hasse diagram", None, "No Hasse diagram: graded runs only."),
                                                   ("Plain", "plain.png")]).read_text()
    figures = text.split("## Figures", 1)[1]
    assert "![Runs](runs-length4.png)" in figures and "Shown: AP@4. Left out: Twist@10." in figures
    assert "No Hasse diagram: graded runs only." in figures and "![Hasse diagram]" not in figures
    assert "![Plain](plain.png)" in figures
