"""One evaluation path for every entry point (irscale.scales.runs.evaluator): the same
conventions and defaults (trec_eval's), the same topics and numbers from ``transform``,
``compare``, ``Scaled`` and the command line; every measure shows, in the order typed.

References: pandas means of the per-topic frame and plain-Python values of P and AP
written here from their definitions; the trec_eval comparisons on TREC data are in
tests/test_trec_eval_means.py.
"""
import json
import math
import random
import subprocess
import sys
import warnings

import pytest

import irscale
from irscale.scales.runs.conventions import Conventions
from irscale.scales.runs.evaluator import Evaluator

TOPICS = [f"t{i}" for i in range(1, 9)]
EMPTY = "t3"                          # judged, nothing relevant


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    """Qrels of 8 topics (t3 judged, nothing relevant; levels 0-2) and three runs of 8
    documents per topic (run C misses topic t5)."""
    folder = tmp_path_factory.mktemp("path")
    rnd = random.Random(7)
    qrels = {}
    lines = []
    for t in TOPICS:
        qrels[t] = {}
        for d in range(14):
            rel = 0 if t == EMPTY else rnd.choice([0, 0, 1, 2])
            qrels[t][f"d{d:02d}"] = rel
            lines.append(f"{t} 0 d{d:02d} {rel}")
    (folder / "qrels.txt").write_text("\n".join(lines) + "\n")
    runs = []
    for tag in ("A", "B", "C"):
        out = []
        for t in TOPICS:
            if tag == "C" and t == "t5":
                continue
            docs = rnd.sample(sorted(qrels[t]), 8)
            out += [f"{t} Q0 {d} {r + 1} {10 - r} {tag}" for r, d in enumerate(docs)]
        path = folder / f"run{tag}.txt"
        path.write_text("\n".join(out) + "\n")
        runs.append(path)
    return folder / "qrels.txt", runs, qrels


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        return f(*args, **kwargs)


def _ranked(run_path):
    """topic -> docnos in trec_eval's order (score descending, docno descending)."""
    rows = [line.split() for line in run_path.read_text().splitlines()]
    out = {}
    for t, _, d, _, _score, _ in sorted(rows, key=lambda r: (r[0], -float(r[4]), tuple(-ord(c) for c in r[2]))):
        out.setdefault(t, []).append(d)
    return out


def _p(ranked, judged, n, level=1):
    return sum(1 for d in ranked[:n] if judged.get(d, 0) >= level) / n


def _ap(ranked, judged, n, level=1):
    rb = sum(1 for v in judged.values() if v >= level)
    if rb == 0:
        return 0.0
    hits, total = 0, 0.0
    for k, d in enumerate(ranked[:n], 1):
        if judged.get(d, 0) >= level:
            hits += 1
            total += hits / k
    return total / rb


def test_defaults_are_trec_eval_s_everywhere():
    c = Conventions()
    assert (c.empty_topics, c.missing_topics, c.rel_level, c.depth) == ("zero", "zero", None, None)
    assert c.trec_eval() == "trec_eval -c"
    assert Conventions(rel_level=2, depth=100).trec_eval() == "trec_eval -c -l 2 -M 100"
    assert "unlike trec_eval" in Conventions(empty_topics="skip").trec_eval()
    assert Conventions(missing_topics="skip").trec_eval() == "trec_eval"
    import inspect

    from irscale.scales.analysis.compare import compare
    from irscale.scales.runs.ir_measures_scaled import Scaled
    for f in (irscale.transform, compare):
        params = inspect.signature(f).parameters
        assert params["empty_topics"].default == "zero" and params["missing_topics"].default == "zero"
    assert Scaled.SUPPORTED_PARAMS["empty_topics"].default == "zero"
    with pytest.raises(irscale.IrscaleError, match="empty_topics"):
        Conventions(empty_topics="drop")


@pytest.mark.parametrize("midranks", [False, True])
def test_an_empty_topic_counts_as_zero_in_every_mean(collection, midranks):
    """The leaderboard used to average AP and nDCG over 1 topic (49 left out) with an
    empty topic and empty_topics='zero'."""
    qrels, runs, judged = collection
    board = _quiet(irscale.compare, qrels, runs[:2], "AP@5,nDCG@5,P@5", midranks=midranks)
    for s in board.measures:
        assert s.topics == len(TOPICS) and s.left_out == 0, s
    for path in runs[:2]:
        ranked = _ranked(path)
        tag = path.stem[-1]
        rows = board.table[board.table["run"] == tag].set_index("measure")
        want_p = sum(_p(ranked.get(t, []), judged[t], 5) for t in TOPICS) / len(TOPICS)
        want_ap = sum(_ap(ranked.get(t, []), judged[t], 5) for t in TOPICS) / len(TOPICS)
        assert rows.loc["P@5", "raw_mean"] == pytest.approx(want_p, abs=1e-12)
        assert rows.loc["AP@5", "raw_mean"] == pytest.approx(want_ap, abs=1e-12)
    scores = _quiet(irscale.transform, qrels, runs[:2], "AP@5,nDCG@5,P@5", midranks=midranks)
    empty = scores[scores["topic"] == EMPTY]
    assert (empty["raw"] == 0).all() and (empty["scaled"] == 0).all()
    means = scores.groupby(["run", "measure"])["scaled"].mean()
    for row in board.table.itertuples():
        assert row.scaled_mean == pytest.approx(means[(row.run, row.measure)], abs=1e-12)


def test_rel_level_counts_topics_as_trec_eval(collection):
    """-l 2: topics without a level-2 document score 0 and count (they were left out)."""
    qrels, runs, judged = collection
    board = _quiet(irscale.compare, qrels, runs[:2], "P@5,RR", rel_level=2)
    assert all(s.topics == len(TOPICS) for s in board.measures)
    ranked = _ranked(runs[0])
    want = sum(_p(ranked[t], judged[t], 5, level=2) for t in TOPICS) / len(TOPICS)
    got = board.table[(board.table["run"] == "A") & (board.table["measure"] == "P@5")]["raw_mean"].iloc[0]
    assert got == pytest.approx(want, abs=1e-12)
    assert "-l 2" in board.conventions


def test_scaled_transform_and_compare_agree(collection):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, runs, _ = collection
    scores = _quiet(irscale.transform, qrels, runs[0], "AP@5")
    qrels_rows = list(ir_measures.read_trec_qrels(str(qrels)))
    run_rows = list(ir_measures.read_trec_run(str(runs[0])))
    measure = irscale.Scaled("AP@5")
    assert repr(measure) == "Scaled(AP@5)"                # no store in the name (pt.Experiment columns)
    got = _quiet(ir_measures.calc_aggregate, [measure], qrels_rows, run_rows)[measure]
    assert got == pytest.approx(scores["scaled"].mean(), abs=1e-12)
    assert scores["topic"].nunique() == len(TOPICS)


def test_every_measure_shows_when_one_scale_is_too_costly(collection):
    qrels, runs, _ = collection
    with pytest.warns(irscale.IrscaleWarning, match=r"no scale for AP@7: building its scale would take"):
        board = irscale.compare(qrels, runs, "P@5,AP@7,RR", max_build_seconds=0)
    by = {s.label: s for s in board.measures}
    assert list(by) == ["P@5", "AP@7", "RR"]
    assert by["P@5"].scaled and by["RR"].scaled and not by["AP@7"].scaled
    assert "irscale build" in by["AP@7"].reason and len(by["AP@7"].reason) < 400
    assert board.table[board.table["measure"] == "AP@7"]["raw_mean"].notna().all()


def test_no_build_shows_raw_scores_with_the_command(collection, tmp_path):
    qrels, runs, _ = collection
    ev = _quiet(Evaluator, qrels, "AP@6,P@6", store=tmp_path / "empty-store", build=False)
    [ap, p] = ev.measures()
    assert ap in ev.reasons and "irscale build" in ev.commands[ap] and p not in ev.reasons
    scores = ev.evaluate(runs)
    assert scores[scores["measure"] == "AP@6"]["scaled"].isna().all()
    assert scores[scores["measure"] == "P@6"]["scaled"].notna().all()


def test_measures_in_the_order_typed(collection, tmp_path):
    qrels, runs, _ = collection
    typed = ["RR", "P@5", "map", "AP@5"]                 # RR and map take their depth from the runs
    board = _quiet(irscale.compare, qrels, runs, ",".join(typed))
    assert [s.label for s in board.measures] == typed
    assert list(dict.fromkeys(board.table["measure"])) == [s.measure for s in board.measures]
    scores = _quiet(irscale.transform, qrels, runs, ",".join(typed))
    assert list(dict.fromkeys(scores["measure"])) == [s.measure for s in board.measures]
    board.save(tmp_path / "b.json")
    names = [m["label"] for m in json.loads((tmp_path / "b.json").read_text())["measures"]]
    assert names == typed


def test_evaluator_is_made_once_and_applied_to_runs(collection):
    qrels, runs, _ = collection
    ev = _quiet(Evaluator, qrels, "P@5,AP@5")
    one = ev.evaluate(runs[0])
    both = ev.evaluate(runs[:2])
    assert one.equals(both[both["run"] == "A"].reset_index(drop=True))


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "irscale", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_compare_defaults_and_outputs(collection, tmp_path):
    qrels, runs, _ = collection
    md, tex = tmp_path / "b.md", tmp_path / "b.tex"
    done = _cli("compare", "--qrels", str(qrels), "--runs", *map(str, runs), "-m", "AP@5,nDCG@5,P@5",
                "-o", str(md), "-o", str(tex), "-q")
    assert done.returncode == 0, done.stderr
    assert md.is_file() and tex.is_file()
    assert "trec_eval -c" in done.stdout
    assert f"{len(TOPICS)} topics" in done.stdout and "left out" not in done.stdout


def test_baseline_of_a_repeated_tag_fails_before_reading(collection, tmp_path):
    qrels, runs, _ = collection
    twin = tmp_path / "twin.txt"
    twin.write_text(runs[0].read_text())              # tag A twice: read_runs names both by file name
    done = _cli("compare", "--qrels", str(qrels), "--runs", str(runs[0]), str(twin), "-m", "P@5", "-b", "A")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "runA" in done.stderr and "twin" in done.stderr


def test_warnings_point_at_the_callers_line(collection):
    qrels, runs, _ = collection
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        irscale.transform(qrels, runs[2], "P@5")          # run C misses topic t5
    ours = [w for w in said if issubclass(w.category, irscale.IrscaleWarning)]
    assert ours and all(w.filename == __file__ for w in ours), [(w.filename, w.lineno) for w in ours]


def test_a_build_that_does_not_fit_leaves_its_measure_raw(collection, tmp_path, monkeypatch):
    import irscale.scales.runs.evaluator as evaluator

    def full(*args, **kwargs):
        raise irscale.BuildTooLargeError("building 1 table(s) needs about 9 GB of disk, 1 MB free")

    monkeypatch.setattr(evaluator, "build_tables", full)
    qrels, runs, _ = collection
    with pytest.warns(irscale.IrscaleWarning, match="no scale for AP@6: its tables do not fit here") as said:
        board = irscale.compare(qrels, runs, "AP@6,P@6", store=tmp_path / "s")
    assert [s.scaled for s in board.measures] == [False, True]
    # AP has no rank oracle to stand in: the reason says why (its values do not split in parts)
    assert any("no rank oracle" in str(w.message) and "independent parts" in str(w.message) for w in said)


def test_a_level_no_judgment_reaches_is_said(collection):
    qrels, runs, _ = collection
    with pytest.warns(irscale.IrscaleWarning, match="no judgment reaches level 3"):
        scores = irscale.transform(qrels, runs[0], "P@5", rel_level=3)
    assert (scores["raw"] == 0).all() and "-l 3" in scores.attrs["conventions"]


def test_scaled_reads_names_whatever_their_case(collection):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, runs, _ = collection
    qrels_rows = list(ir_measures.read_trec_qrels(str(qrels)))
    run_rows = list(ir_measures.read_trec_run(str(runs[0])))
    for lower, upper in (("p(rel=2)@5", "P(rel=2)@5"), ("ndcg@5", "nDCG@5"), ("rr@5", "RR@5")):
        a, b = irscale.Scaled(lower), irscale.Scaled(upper)
        got = _quiet(ir_measures.calc_aggregate, [a, b], qrels_rows, run_rows)
        assert got[a] == got[b] and not math.isnan(got[a]), (lower, got)


def test_lookup_and_info_default_to_the_store_every_command_uses(collection, tmp_path, monkeypatch):
    from irscale.cli import main

    qrels, runs, _ = collection
    store = tmp_path / "default"
    monkeypatch.setenv("IRSCALE_STORE", str(store))
    _quiet(irscale.compare, qrels, runs, "AP@5")             # builds AP@5's tables there
    assert main(["lookup", str(store), "AP@5", "--rb", "3", "0", "1"]) == 0
    assert main(["lookup", "AP@5", "--rb", "3", "0", "1"]) == 0          # no STORE: the default one
    assert main(["lookup", "P@5", "0.4"]) == 0
    assert main(["lookup", "AP@5"]) == 2                                 # no values: a usage error
    assert main(["info"]) == 0 and main(["info", str(store)]) == 0
