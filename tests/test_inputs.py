"""Qrels and runs given in memory (issue 14): pandas DataFrames, dicts, ranx objects,
ir_measures named tuples and generators give the same per-topic numbers as the TREC
files (TREC-8, three runs, topics 401-420); malformed inputs raise irscale errors naming
the problem; run names by tag or by file.

The in-memory inputs are built from the files by independent readers (ir_measures'
``read_trec_qrels`` / ``read_trec_run``, plain Python), never by irscale's, and compared
with ``irscale.transform`` of the files themselves (checked against trec_eval elsewhere).
"""
import collections
import gzip
import random
import warnings

import numpy as np
import pandas as pd
import pytest

import irscale
from irscale import IrscaleError, IrscaleWarning, RunError, TrecFormatError
from irscale.scales.runs.inputs import qrels_of, read_runs

ir_measures = pytest.importorskip("ir_measures")
ranx = pytest.importorskip("ranx")

RUNS = ["input.CL99SD.gz", "input.AntHoc1.gz", "input.Dm8Nbn.gz"]
MEASURES = "AP@10,P@10"
#: ir_datasets' qrels tuple (its qrels_iter() yields these): the fields are what counts
TrecQrel = collections.namedtuple("TrecQrel", "query_id doc_id relevance iteration")
COMPARED = ["run", "topic", "measure", "n", "rb", "raw", "rank", "k", "scaled"]


def _subset(folder, tmp):
    """The TREC-8 qrels and RUNS cut to topics 401-420 (files in tmp; runs stay gzipped)."""
    keep = {str(t) for t in range(401, 421)}
    lines = (folder / "qrels.trec8.adhoc.txt").read_text().splitlines(keepends=True)
    (tmp / "qrels.txt").write_text("".join(line for line in lines if line.split()[0] in keep))
    runs = []
    for name in RUNS:
        with gzip.open(folder / "runs" / name, "rt") as f:
            text = "".join(line for line in f if line.split()[0] in keep)
        (tmp / name).write_bytes(gzip.compress(text.encode()))
        runs.append(tmp / name)
    return tmp / "qrels.txt", runs


@pytest.fixture(scope="module")
def trec8(tmp_path_factory):
    from conftest import SHARED
    folder = SHARED / "trec8"
    if not folder.is_dir():
        print(f"skipping: shared TREC data not found at {SHARED}")
        pytest.skip(f"shared TREC data not found at {SHARED}")
    tmp = tmp_path_factory.mktemp("inputs")
    store = irscale.build_store(tmp / "t.h5", MEASURES, n_jobs=1)
    qrels, runs = _subset(folder, tmp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        reference = irscale.transform(qrels, runs, MEASURES, store)
    # independent readers: ir_measures' (TREC files), tags from the files' sixth column
    qrel_tuples = list(ir_measures.read_trec_qrels(str(qrels)))
    run_tuples = {}
    for path in runs:
        with gzip.open(path, "rt") as f:
            tag = f.readline().split()[5]
        run_tuples[tag] = list(ir_measures.read_trec_run(str(path)))
    return store, qrels, runs, reference, qrel_tuples, run_tuples


def _scores(store, qrels, runs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        return irscale.transform(qrels, runs, MEASURES, store, **kw)


def _same(got: pd.DataFrame, want: pd.DataFrame, what: str = ""):
    assert len(got) == len(want) > 0, what
    try:
        pd.testing.assert_frame_equal(got[COMPARED].reset_index(drop=True), want[COMPARED].reset_index(drop=True))
    except AssertionError as e:
        raise AssertionError(f"{what}: {e}") from None


def _nested(tuples, value):
    out = {}
    for t in tuples:
        out.setdefault(t.query_id, {})[t.doc_id] = getattr(t, value)
    return out


# -- the same numbers through every form ----------------------------------------------------
@pytest.mark.slow     # with the slow ones: the default run stays under 4 minutes
def test_qrels_forms_give_the_file_numbers(trec8):
    store, qrels, runs, reference, qrel_tuples, _ = trec8
    frame = pd.DataFrame(qrel_tuples)                          # query_id, doc_id, relevance, iteration
    forms = {
        "DataFrame": frame,
        "DataFrame, TREC names": frame.rename(columns={"query_id": "topic", "doc_id": "docno", "relevance": "rel"}),
        "DataFrame, PyTerrier names": frame.rename(columns={"query_id": "qid", "doc_id": "docno",
                                                            "relevance": "label"}).drop(columns="iteration"),
        "dict": _nested(qrel_tuples, "relevance"),
        "ranx Qrels": ranx.Qrels(_nested(qrel_tuples, "relevance")),
        "Qrel tuples": qrel_tuples,
        "other named tuples": [TrecQrel(q.query_id, q.doc_id, q.relevance, "0") for q in qrel_tuples],
        "generator": ir_measures.read_trec_qrels(str(qrels)),
    }
    want = reference[reference["run"] == reference["run"].iloc[0]]
    for what, form in forms.items():
        _same(_scores(store, form, runs[:1]), want, what)


@pytest.mark.slow      # 7 s: every run form over TREC-8 runs (the README test and test_cli cover the usual forms)
def test_run_forms_give_the_file_numbers(trec8):
    store, qrels, runs, reference, _, run_tuples = trec8
    tags = list(run_tuples)
    frames = {tag: pd.DataFrame(t) for tag, t in run_tuples.items()}       # query_id, doc_id, score
    one_frame = pd.concat([f.assign(run=tag) for tag, f in frames.items()], ignore_index=True)
    shuffled = one_frame.sample(frac=1.0, random_state=3)                  # row order is irrelevant
    trec_names = one_frame.rename(columns={"query_id": "topic", "doc_id": "docno", "run": "tag"})
    dicts = {tag: _nested(t, "score") for tag, t in run_tuples.items()}
    forms = {
        "DataFrames": [frames[t].assign(run=t) for t in tags],
        "one DataFrame with a run column": one_frame,
        "shuffled rows": shuffled,
        "TREC column names": trec_names,
        "dict of runs": dicts,
        "named DataFrames": {t: frames[t] for t in tags},
        "ranx Runs": [ranx.Run(dicts[t], name=t) for t in tags],
        "named ScoredDoc lists": {t: run_tuples[t] for t in tags},
        "mixed list": [runs[0], {tags[1]: dicts[tags[1]]}, ranx.Run(dicts[tags[2]], name=tags[2])],
    }
    for what, form in forms.items():
        got = _scores(store, qrels, form)
        if what == "shuffled rows":                 # runs in order of first appearance
            assert list(dict.fromkeys(got["run"])) == list(dict.fromkeys(shuffled["run"]))
            got = pd.concat([got[got["run"] == t] for t in tags])
        assert list(dict.fromkeys(got["run"])) == tags, what
        _same(got, reference, what)


@pytest.mark.slow      # about 5 s
def test_unnamed_runs_are_numbered_as_ranx_numbers_them(trec8):
    store, qrels, runs, reference, _, run_tuples = trec8
    tags = list(run_tuples)
    forms = {
        "ScoredDoc lists": [run_tuples[t] for t in tags],
        "generators": [ir_measures.read_trec_run(str(p)) for p in runs],
        "single-run dicts": [_nested(run_tuples[t], "score") for t in tags],
        "DataFrames": [pd.DataFrame(run_tuples[t]) for t in tags],
        "unnamed ranx Runs": [ranx.Run(_nested(run_tuples[t], "score")) for t in tags],
    }
    want = reference.assign(run=reference["run"].map({t: f"run_{i}" for i, t in enumerate(tags, 1)}))
    for what, form in forms.items():
        _same(_scores(store, qrels, form), want, what)
    one = _scores(store, qrels, run_tuples[tags[0]])                    # one run: a list of ScoredDoc
    _same(one, want[want["run"] == "run_1"])


def test_ties_are_broken_as_in_files(tmp_path):
    """Scores with many ties: every form orders documents as trec_eval does (score
    descending, docno descending), whatever the order given; checked with sorted()."""
    rng = random.Random(5)
    docs = [f"D{i:02d}" for i in range(30)]
    run = {t: {d: float(rng.randint(0, 3)) for d in rng.sample(docs, 20)} for t in ("1", "2", "10")}
    lines = [f"{t} Q0 {d} 1 {s} tied" for t, ds in run.items() for d, s in ds.items()]
    rng.shuffle(lines)
    (tmp_path / "tied.run").write_text("\n".join(lines) + "\n")
    want = {t: [d for d, _ in sorted(ds.items(), key=lambda x: (x[1], x[0]), reverse=True)] for t, ds in run.items()}
    frame = pd.DataFrame([(t, d, s) for t, ds in run.items() for d, s in ds.items()],
                         columns=["query_id", "doc_id", "score"]).sample(frac=1.0, random_state=1)
    forms = {"file": tmp_path / "tied.run", "dict": run, "DataFrame": frame,
             "ranx": ranx.Run(run, name="tied"),
             "tuples": [ir_measures.ScoredDoc(t, d, s) for t, ds in run.items() for d, s in ds.items()][::-1]}
    for what, form in forms.items():
        (got,) = read_runs(form, depth=None)
        assert got.rankings() == want, what
        (cut,) = read_runs(form, depth=5)
        assert cut.rankings(5) == {t: ds[:5] for t, ds in want.items()}, what


def test_integer_ids_read_as_trec_eval_reads_them(tmp_path):
    (tmp_path / "q.txt").write_text("401 0 7 1\n401 0 8 0\n402 0 7 2\n")
    (tmp_path / "r.run").write_text("401 Q0 7 1 2.0 s\n401 Q0 8 2 1.0 s\n402 Q0 8 1 5 s\n402 Q0 7 2 5 s\n")
    want = irscale.transform(tmp_path / "q.txt", tmp_path / "r.run", "P@2,RR@2")
    qrels = pd.DataFrame({"query_id": [401, 401, 402], "doc_id": [7, 8, 7], "relevance": [1, 0, 2]})
    run = pd.DataFrame({"query_id": [401, 401, 402, 402], "doc_id": [7, 8, 8, 7], "score": [2, 1, 5, 5],
                        "run": "s"})
    got = irscale.transform(qrels, run, "P@2,RR@2")
    pd.testing.assert_frame_equal(got, want)
    assert qrels_of({401: {7: 1}}).judgments == {"401": {"7": 1}}
    assert qrels_of(qrels.astype({"relevance": float})).judgments == qrels_of(qrels).judgments    # 1.0 is 1
    got = irscale.transform({401: {7: 1, 8: 0}, 402: {7: 2}}, {"s": {401: {7: 2, 8: 1}, 402: {8: 5, 7: 5}}},
                            "P@2,RR@2")
    pd.testing.assert_frame_equal(got, want)


# -- errors ----------------------------------------------------------------------------
GOOD_QRELS = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 1]})
GOOD_RUN = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]})

BAD_QRELS = {
    "no relevance column": (GOOD_QRELS.drop(columns="relevance"), TrecFormatError, "no column relevance or rel"),
    "a run as qrels": (GOOD_RUN, TrecFormatError, "looks like a run"),
    "two topic columns": (GOOD_QRELS.assign(qid="1"), TrecFormatError, "query_id, qid all name the topic"),
    "fractional level": (GOOD_QRELS.assign(relevance=[1, 0.5, 1]), TrecFormatError, "level 0.5 of row 1 is not a"),
    "NaN level": (GOOD_QRELS.assign(relevance=[1, np.nan, 1]), TrecFormatError, "level nan of row 1 is not"),
    "boolean levels": (GOOD_QRELS.assign(relevance=[True, False, True]), TrecFormatError, "booleans"),
    "text level": (GOOD_QRELS.assign(relevance=[1, "high", 1]), TrecFormatError, "'high' of row 1 is not an int"),
    "huge level": ({"1": {"a": 2 ** 70}}, TrecFormatError, "out of range"),
    "judged twice": (pd.concat([GOOD_QRELS, GOOD_QRELS.iloc[:1]]), TrecFormatError,
                     "document a is judged twice for topic 1 (row 3)"),
    "judged twice as int and str": ({1: {"a": 1}, "1": {"a": 0}}, TrecFormatError, "judged twice for topic 1"),
    "float topic ids": (GOOD_QRELS.assign(query_id=[1.0, 1.0, 2.0]), TrecFormatError, "is a float"),
    "None doc id": ({"1": {None: 1}}, TrecFormatError, "document id None (topic '1', document None) is not"),
    "empty doc id": (GOOD_QRELS.assign(doc_id=["a", "", "a"]), TrecFormatError, "empty document id (row 1)"),
    "dict of non-dicts": ({"1": [("a", 1)]}, TrecFormatError, "value of topic '1' is a list, not a dict"),
    "not tuples": ([("1", "a", 1)], TrecFormatError, "item 0 (('1', 'a', 1)) is not a named tuple"),
    "a number": (5, TrecFormatError, "cannot read a int"),
}


@pytest.mark.parametrize("case", list(BAD_QRELS))
def test_bad_qrels_raise_irscale_errors(case):
    qrels, error, message = BAD_QRELS[case]
    with pytest.raises(error) as e:
        irscale.transform(qrels, GOOD_RUN, "P@2")
    assert message in str(e.value)


BAD_RUNS = {
    "no score column": (GOOD_RUN.drop(columns="score"), RunError, "no column score"),
    "qrels as a run": (GOOD_QRELS, RunError, "looks like qrels"),
    "NaN score": (GOOD_RUN.assign(score=[1.0, np.nan, 2.0]), RunError, "score of row 1 is NaN"),
    "NaN score in a dict": ({"1": {"a": 1.0, "b": float("nan")}}, RunError,
                            "score of topic '1', document 'b' is NaN"),
    "text score": (GOOD_RUN.assign(score=[1.0, "2.5", 2.0]), RunError, "score '2.5' of row 1 is not a number"),
    "boolean scores": (GOOD_RUN.assign(score=[True, False, True]), RunError, "booleans"),
    "document twice": (pd.concat([GOOD_RUN, GOOD_RUN.iloc[:1]]), RunError,
                       "document a appears twice for topic 1 (row 3)"),
    "document twice in one run of several": (
        pd.concat([GOOD_RUN.assign(run="x"), GOOD_RUN.iloc[:1].assign(run="x"), GOOD_RUN.assign(run="y")]),
        RunError, "run x): document a appears twice for topic 1 (row 3)"),
    "missing run name": (GOOD_RUN.assign(run=["x", None, "x"]), RunError, "no run name in column run (row 1)"),
    "mixed dict": ({"1": {"a": 1.0, "b": {"c": 1.0}}}, RunError, "ambiguous dict"),
    "dict of dicts and numbers": ({"x": {"1": {"a": 1.0}}, "2": 1.0}, RunError, "ambiguous dict"),
    "empty inner dicts": ({"1": {}, "2": {}}, RunError, "ambiguous dict: no score in it"),
    "empty dict": ({}, RunError, "empty dict"),
    "bad value in dict of runs": ({"x": {"1": {"a": 1.0}}, "y": {"1": {"a": "high"}}}, RunError,
                                  "score 'high' of topic '1', document 'a' is not a number"),
    "a path in a dict": ({"x": "run.txt"}, RunError, "run x is a path"),
    "qrels tuples as a run": ([ir_measures.Qrel("1", "a", 1)], RunError, "are qrels, not a run"),
    "not a ScoredDoc": ([ir_measures.ScoredDoc("1", "a", 1.0), ("1", "b", 2.0)], RunError,
                        "item 1 (('1', 'b', 2.0)) is not a named tuple"),
    "a number": (5, RunError, "cannot read a int"),
    "a number in a list": ([GOOD_RUN, 5], RunError, "run input 2: cannot read a int"),
    "two runs of one name": ([GOOD_RUN.assign(run="x"), {"x": GOOD_RUN}], IrscaleError,
                             "run name x appears twice (in memory and in memory)"),
    "no run": ([], IrscaleError, "no run given"),
}


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_bad_runs_raise_irscale_errors(case):
    runs, error, message = BAD_RUNS[case]
    with pytest.raises(error) as e:
        irscale.transform(GOOD_QRELS, runs, "P@2")
    assert message in str(e.value)


# -- run names -------------------------------------------------------------------------------
def _run_file(path, tag, gz=False):
    text = f"1 Q0 a 1 2.0 {tag}\n1 Q0 b 2 1.0 {tag}\n2 Q0 a 1 1.0 {tag}\n"
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_run_names_by_tag_and_by_file(tmp_path):
    a = _run_file(tmp_path / "input.a.gz", "sysA", gz=True)
    b = _run_file(tmp_path / "input.b", "sysB")
    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # distinct tags: no warning
        assert [r.name for r in read_runs([a, b])] == ["sysA", "sysB"]
        assert [r.name for r in read_runs([a, b], run_names="tag")] == ["sysA", "sysB"]
        assert [r.name for r in read_runs([a, b], run_names="file")] == ["input.a", "input.b"]
        assert [r.name for r in read_runs(tmp_path, run_names="file")] == ["input.a", "input.b"]
        runs = read_runs([a, {"mem": GOOD_RUN}], run_names="file")      # in-memory runs keep their names
        assert [r.name for r in runs] == ["input.a", "mem"]


def test_repeated_tags_name_runs_by_file_with_a_warning(tmp_path):
    a = _run_file(tmp_path / "base1.run.gz", "baseline", gz=True)
    b = _run_file(tmp_path / "base2.run", "baseline")
    c = _run_file(tmp_path / "mine.run", "mine")
    with pytest.warns(IrscaleWarning, match=r"run tags repeat; 2 run\(s\) named by file name instead: "
                                            r"base1\.run \(tag baseline\), base2\.run \(tag baseline\)"):
        runs = read_runs([a, c, b])
    assert [r.name for r in runs] == ["base1.run", "mine", "base2.run"]
    assert runs[0].path == str(a)
    with pytest.warns(IrscaleWarning, match="base2.run"):
        scores = irscale.transform(GOOD_QRELS, [a, c, b], "P@2")
    assert list(dict.fromkeys(scores["run"])) == ["base1.run", "mine", "base2.run"]
    with pytest.warns(IrscaleWarning, match=r"mine\.run \(tag mine\)"):      # a file run and an in-memory one
        runs = read_runs([c, {"mine": GOOD_RUN}])
    assert [r.name for r in runs] == ["mine.run", "mine"]


def test_repeated_names_that_cannot_be_told_apart_are_errors(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    a = _run_file(tmp_path / "x" / "run.txt", "same")
    b = _run_file(tmp_path / "y" / "run.txt.gz", "same", gz=True)
    with pytest.warns(IrscaleWarning), pytest.raises(IrscaleError, match="run name run.txt appears twice .*"
                                                                          "their file names repeat too"):
        read_runs([a, b])
    with pytest.raises(IrscaleError, match="run name run.txt appears twice"):
        read_runs([a, b], run_names="file")
    with pytest.raises(IrscaleError, match="run_names must be one of tag, file"):
        read_runs([a], run_names="name")
