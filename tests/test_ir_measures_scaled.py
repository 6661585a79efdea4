"""``Scaled`` inside ir_measures: ``calc_aggregate``, ``iter_calc``, ``calc`` and
evaluators give per query exactly the ``scaled`` column of ``irscale.transform`` of the
same files, and as aggregate its mean over topics; options (unq/midrank, feasible/common,
empty topics), names, ir_measures' own conventions (topics without relevant documents,
topics a run misses, ids as given), graded qrels and the errors.

The runs and qrels reach ir_measures through its own readers (``read_trec_run``,
``read_trec_qrels``), the reference is ``irscale.transform`` of the files.
"""
import math
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest

import irscale
from irscale import IrscaleError, IrscaleWarning, MeasureError
from irscale.scales.runs.inputs import read_runs

ir_measures = pytest.importorskip("ir_measures")
from irscale.scales.runs.ir_measures_scaled import Scaled  # noqa: E402 - needs ir_measures

RUNS = ["input.CL99SD.gz", "input.AntHoc1.gz", "input.Dm8Nbn.gz", "input.8manexT3D1N0.gz"]
MEASURES = "AP@10,P@10"


def _data(name):
    from conftest import SHARED
    folder = SHARED / name
    if not folder.is_dir():
        print(f"skipping: shared TREC data not found at {folder}")
        pytest.skip(f"shared TREC data not found at {folder}")
    return folder


@pytest.fixture(scope="module")
def trec8(tmp_path_factory):
    folder = _data("trec8")
    store = tmp_path_factory.mktemp("scaled") / "t.h5"
    irscale.build_store(store, MEASURES, n_jobs=1)
    return folder / "qrels.trec8.adhoc.txt", sorted((folder / "runs").iterdir()), store


def _transform(qrels, runs, measures, store, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        return irscale.transform(qrels, runs, measures, store, **kw)


def _per_query(metrics) -> dict:
    out: dict = {}
    for m in metrics:
        key = (str(m.measure), m.query_id)
        assert key not in out, f"two values for {key}"
        out[key] = m.value
    return out


def _reference(scores: pd.DataFrame, name: str, measure: str, values: str = "scaled") -> dict:
    rows = scores[scores["measure"] == measure]
    if values == "midrank":
        v = (rows["midrank"].to_numpy(float) - 1) / (rows["n_runs"].to_numpy(float) - 1)
    else:
        v = rows[values].to_numpy(float)
    return {(name, t): x for t, x in zip(rows["topic"], v)}


def _assert_same(got: dict, want: dict):
    assert got.keys() == want.keys()
    bad = [(k, got[k], want[k]) for k in want
           if not (got[k] == want[k] or (math.isnan(got[k]) and math.isnan(want[k])))]
    assert not bad, bad[:5]


def _check_runs(qrels, runs, store):
    """Scaled through iter_calc and calc_aggregate against transform, for each run."""
    ap = ir_measures.AP @ 10
    measures = {Scaled(ap, store=str(store)): ("AP@10", "scaled", "feasible"),
                Scaled("P@10", store=store): ("P@10", "scaled", "feasible"),
                Scaled(ap, store=str(store), scale="midrank"): ("AP@10", "midrank", "feasible"),
                Scaled(ap, store=str(store), rb_scale="common"): ("AP@10", "scaled", "common")}
    read = read_runs(runs)        # once for both references (ir_measures reads the files itself)
    feasible = _transform(qrels, read, MEASURES, store, midranks=True, empty_topics="zero")
    common = _transform(qrels, read, MEASURES, store, rb_scale="common", empty_topics="zero")
    evaluator = ir_measures.evaluator([*measures, ap], ir_measures.read_trec_qrels(str(qrels)))
    names = list(dict.fromkeys(feasible["run"]))
    assert len(names) == len(runs)
    for i, (path, tag) in enumerate(zip(runs, names)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrscaleWarning)
            if i == 0:           # the module-level functions, then an evaluator's calc (one pass)
                got = _per_query(ir_measures.iter_calc(list(measures), ir_measures.read_trec_qrels(str(qrels)),
                                                       ir_measures.read_trec_run(str(path))))
                aggregate = ir_measures.calc_aggregate([*measures, ap], ir_measures.read_trec_qrels(str(qrels)),
                                                       ir_measures.read_trec_run(str(path)))
            else:
                aggregate, per_query = evaluator.calc(ir_measures.read_trec_run(str(path)))
                got = _per_query(per_query)
        for measure, (name, values, mode) in measures.items():
            scores = feasible if mode == "feasible" else common
            want = _reference(scores[scores["run"] == tag], str(measure), name, values)
            _assert_same({k: v for k, v in got.items() if k[0] == str(measure)}, want)
            assert aggregate[measure] == pytest.approx(np.mean(list(want.values())), rel=1e-12, abs=1e-15)
        if tag != "uwmt8a0":     # pytrec_eval reads its scores (100000.1546100) in less than double precision
            raw = feasible[(feasible["run"] == tag) & (feasible["measure"] == "AP@10")]["raw"]
            assert aggregate[ap] == pytest.approx(raw.mean(), abs=1e-12)   # pytrec_eval's AP@10 beside it


@pytest.mark.slow
def test_all_trec8_runs_equal_transform(trec8):
    """Every TREC-8 run, RUNS first (the first, CL99SD, through the module-level iter_calc
    and calc_aggregate; the others through an evaluator). The same check of RUNS alone
    would check nothing more: it is left out."""
    qrels, runs, store = trec8
    assert len(runs) == 129
    chosen = [r for r in runs if r.name in RUNS]
    assert len(chosen) == len(RUNS)
    chosen.sort(key=lambda r: RUNS.index(r.name))
    _check_runs(qrels, chosen + [r for r in runs if r.name not in RUNS], store)


def test_calc_and_every_input_form(trec8):
    qrels, runs, store = trec8
    path = next(r for r in runs if r.name == RUNS[0])
    want = _transform(qrels, [path], "AP@10", store, empty_topics="zero")
    measure = Scaled(ir_measures.AP @ 10, store=store)
    want = _reference(want, str(measure), "AP@10")
    run_tuples = list(ir_measures.read_trec_run(str(path)))
    qrel_tuples = list(ir_measures.read_trec_qrels(str(qrels)))
    run_dict: dict = {}
    for r in run_tuples:
        run_dict.setdefault(r.query_id, {})[r.doc_id] = r.score
    qrels_dict: dict = {}
    for q in qrel_tuples:
        qrels_dict.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    forms = [(qrel_tuples, run_tuples), (pd.DataFrame(qrel_tuples), pd.DataFrame(run_tuples)),
             (qrels_dict, run_dict),
             (pd.DataFrame(qrel_tuples), pd.DataFrame(run_tuples).assign(run="ignored", rank=0))]
    for q, r in forms:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrscaleWarning)
            aggregate, per_query = ir_measures.calc([measure], q, r)
        _assert_same(_per_query(per_query), want)
        assert aggregate[measure] == pytest.approx(np.mean(list(want.values())), rel=1e-12)
        assert measure.calc_aggregate(q, r) == aggregate[measure]


def test_names_and_parameters(trec8):
    _, _, store = trec8
    a = Scaled(ir_measures.AP @ 10, store=str(store))
    assert a == Scaled("AP@10", store=str(store)) == Scaled(ir_measures.AP, store=str(store)) @ 10
    assert a == Scaled(measure=ir_measures.AP @ 10, store=store)              # a Path is its text
    assert a == Scaled(ir_measures.AP @ 10, store=irscale.open_store(store))  # an open Store is its path
    assert hash(a) == hash(Scaled("AP@10", store=str(store)))
    assert repr(a) == "Scaled(AP@10)"              # no store: an exact scale is the same in every store
    b = Scaled(ir_measures.AP @ 10, store=str(store), scale="midrank", rb_scale="common", empty_topics="skip")
    assert repr(b) == "Scaled(AP@10,scale='midrank',rb_scale='common',empty_topics='skip')"
    assert a != b and a @ 5 == Scaled("AP@5", store=str(store))
    assert b(scale="unq", rb_scale="feasible", empty_topics="zero") == a      # ir_measures' measure(**params)
    assert str(a.irscale_measure(1)) == "AP@10"
    assert str(Scaled(ir_measures.nDCG @ 10, store=store).irscale_measure(2)) == "nDCG_trec(gains=(0,1,2))@10"


def test_store_object_and_build_missing(tmp_path, trec8):
    qrels, runs, store = trec8
    path = next(r for r in runs if r.name == RUNS[0])
    built = tmp_path / "built.h5"
    measure = Scaled(ir_measures.AP @ 5, store=built, build_missing=True)     # AP needs a table (P: closed form)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        got = measure.calc_aggregate(ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(path)))
        want = _transform(qrels, [path], "AP@5", irscale.open_store(built), empty_topics="zero")
        again = Scaled("AP@5", store=irscale.open_store(built)).calc_aggregate(
            ir_measures.read_trec_qrels(str(qrels)), ir_measures.read_trec_run(str(path)))
    assert built.exists() and got == pytest.approx(want["scaled"].mean(), rel=1e-12) and again == got


def test_trec_eval_and_irscale_names(tmp_path):
    """Names ir_measures does not parse mean what they mean elsewhere: trec_eval's
    (``map_cut_5``, ``P_5``) and irscale's own (``nDCG(b=2)@5``, ``irscale:P@5``)."""
    qrels, run = _small()
    store = tmp_path / "s.h5"
    cases = {"map_cut_5": "AP@5", "P_5": "P@5", "nDCG(b=2)@5": "nDCG(b=2)@5", "irscale:P@5": "P@5"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        for name, canonical in cases.items():
            measure = Scaled(name, store=store, build_missing=True)
            assert repr(measure) == f"Scaled({name})"
            got = _per_query(measure.iter_calc(qrels, run))
            want = _transform(qrels, run, canonical, store, empty_topics="zero")
            assert [got[(str(measure), q)] for q in "1234"] == want["scaled"].tolist(), name


def _small(ids=str):
    """Qrels with a topic without relevant documents (3); a run that misses topic 2 and
    has a topic the qrels lack (9)."""
    qrels = {1: {"a": 1, "b": 0, "c": 1}, 2: {"a": 1}, 3: {"a": 0, "b": 0}, 4: {"d": 2, "e": 1}}
    run = {1: {"a": 0.5, "b": 0.9, "c": 0.1, "x": 0.7}, 3: {"a": 1.0}, 4: {"e": 3.0, "d": 3.0}, 9: {"a": 1.0}}
    return {ids(k): v for k, v in qrels.items()}, {ids(k): v for k, v in run.items()}


def test_bounded_scales_past_n40(tmp_path):
    """``bounded=True`` (or ``error``): nDCG past N = 40 gets the midpoints of its bounded
    scale's intervals, as transform with bounded scales gives them; without it, an error
    that names the option."""
    rng = np.random.default_rng(5)
    qrels = {str(q): {f"d{i}": int(rng.integers(0, 2)) for i in range(60)} for q in range(1, 4)}
    run = {q: {f"d{i}": float(rng.random()) for i in range(60)} for q in qrels}
    store = tmp_path / "none"
    measure = Scaled("nDCG(b=2)@50", store=store, error=1e-2)
    assert "error=0.01" in repr(measure)
    got = _per_query(measure.iter_calc(qrels, run))
    want = _transform(qrels, run, "nDCG(b=2)@50", store, bounded=True, error=1e-2)
    assert [got[(str(measure), q)] for q in "123"] == want["scaled"].tolist()
    assert all(0 < v < 1 for v in want["scaled"]) and not store.exists()
    plain = Scaled("nDCG(b=2)@50", store=store)         # a bounded scale within the build limit, unasked
    auto = _per_query(plain.iter_calc(qrels, run))
    # both midpoints of intervals that hold the exact value, of widths <= 1e-2: within 1e-2
    assert all(abs(auto[(str(plain), q)] - v) <= 1e-2 for q, v in zip("123", want["scaled"]))
    with pytest.raises(MeasureError, match="bounded=True"):
        _per_query(Scaled("nDCG(b=2)@50", store=store, bounded=False).iter_calc(qrels, run))   # says how


def test_ir_measures_conventions_for_topics(tmp_path):
    qrels, run = _small()
    store = tmp_path / "s.h5"
    zero = Scaled(ir_measures.AP @ 5, store=store, build_missing=True)
    skip = zero(empty_topics="skip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        got = _per_query(ir_measures.iter_calc([zero, skip, ir_measures.AP @ 5], qrels, run))
        want_zero = _transform(qrels, run, "AP@5", store, empty_topics="zero")
        want_skip = _transform(qrels, run, "AP@5", store, empty_topics="skip")
        aggregate = ir_measures.calc_aggregate([zero, skip, ir_measures.AP @ 5], qrels, run)
    # every qrels topic once, as for ir_measures' AP@5 itself
    assert {q for (m, q) in got if m == "AP@5"} == {q for (m, q) in got if m == str(zero)} == {"1", "2", "3", "4"}
    assert {q for (m, q) in got if m == str(skip)} == {"1", "2", "3", "4"}
    assert got[(str(zero), "3")] == 0.0 and math.isnan(got[(str(skip), "3")])   # no relevant document
    assert got[(str(zero), "2")] == 0.0 == got[("AP@5", "2")]                    # missed by the run
    assert got[(str(zero), "4")] == 1.0                                          # d, e: both relevant on top
    assert [got[(str(zero), q)] for q in "1234"] == want_zero["scaled"].tolist()
    assert [got[(str(skip), q)] for q in "124"] == want_skip["scaled"].tolist()
    assert aggregate[zero] == pytest.approx(want_zero["scaled"].mean())
    assert aggregate[skip] == pytest.approx(want_skip["scaled"].mean())         # NaN left out of the mean
    assert want_skip["scaled"].mean() != want_zero["scaled"].mean()


def test_query_ids_come_back_as_given(tmp_path):
    """Integer ids (fine for ir_measures' runtime provider, not for pytrec_eval): the
    values are those of the string ids, reported under the integers."""
    store = tmp_path / "s.h5"
    measure = Scaled("AP@5", store=store, build_missing=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        as_int = _per_query(measure.iter_calc(*_small(int)))
        as_str = _per_query(measure.iter_calc(*_small(str)))
    assert as_int.keys() == {(str(measure), q) for q in (1, 2, 3, 4)}
    assert {(m, str(q)): v for (m, q), v in as_int.items()} == as_str


def test_a_measure_without_cutoff_is_cut_at_the_longest_ranking(tmp_path):
    qrels, run = _small()                               # rankings of at most 4 documents
    store = tmp_path / "s.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        got = _per_query(Scaled(ir_measures.AP, store=store, build_missing=True).iter_calc(qrels, run))
        want = _transform(qrels, run, "AP@4", store, empty_topics="zero")
    _assert_same(got, _reference(want, "Scaled(AP)", "AP@4"))


def test_graded_qrels_and_relevance_threshold(tmp_path):
    """TREC-COVID round 5 (levels 0..2): ir_measures' nDCG@5 is trec_eval's graded
    ndcg_cut, and AP(rel=2)@5 counts level 2 only (trec_eval's -l 2)."""
    folder = _data("trec-covid5")
    qrels = folder / "qrels" / "qrels.covid-round5.txt"
    runs = sorted((folder / "runs").iterdir())[:2]
    store = tmp_path / "g.h5"
    ndcg = Scaled(ir_measures.nDCG @ 5, store=store, build_missing=True)
    ap2 = Scaled(ir_measures.AP(rel=2) @ 5, store=store, build_missing=True)
    for path in runs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrscaleWarning)
            got = _per_query(ir_measures.iter_calc([ndcg, ap2, ir_measures.AP(rel=2) @ 5],
                                                   ir_measures.read_trec_qrels(str(qrels)),
                                                   ir_measures.read_trec_run(str(path))))
            want_ndcg = _transform(qrels, [path], "nDCG_trec(gains=(0,1,2))@5", store, empty_topics="zero")
            want_ap2 = _transform(qrels, [path], "AP@5", store, empty_topics="zero", rel_level=2)
        _assert_same({k: v for k, v in got.items() if k[0] == str(ndcg)},
                     _reference(want_ndcg, str(ndcg), "nDCG_trec(gains=(0,1,2))@5"))
        _assert_same({k: v for k, v in got.items() if k[0] == str(ap2)}, _reference(want_ap2, str(ap2), "AP@5"))
        raw = {(m, q): v for (m, q), v in got.items() if m == "AP(rel=2)@5"}     # pytrec_eval's -l 2
        assert raw.keys() == {("AP(rel=2)@5", t) for t in want_ap2["topic"]}
        assert [raw[("AP(rel=2)@5", t)] for t in want_ap2["topic"]] == pytest.approx(want_ap2["raw"].tolist())


BAD = {
    "no measure": (lambda s: Scaled(store=s), IrscaleError, "Scaled needs the measure to scale"),
    "store not a path": (lambda s: Scaled(ir_measures.AP @ 10, store=5), IrscaleError, "store must be a path"),
    "bad scale": (lambda s: Scaled(ir_measures.AP @ 10, store=s, scale="rank"), IrscaleError,
                  "scale must be one of unq, midrank, got 'rank'"),
    "bad rb_scale": (lambda s: Scaled(ir_measures.AP @ 10, store=s, rb_scale="own"), IrscaleError,
                     "rb_scale must be one of feasible, common"),
    "bad empty_topics": (lambda s: Scaled(ir_measures.AP @ 10, store=s, empty_topics="drop"), IrscaleError,
                         "empty_topics must be one of zero, skip"),
    "unknown parameter": (lambda s: Scaled(ir_measures.AP @ 10, store=s, depth=3), IrscaleError,
                          "unknown parameter(s) depth"),
    "measure twice": (lambda s: Scaled(ir_measures.AP @ 10, store=s, measure="P@10"), IrscaleError,
                      "the measure is given twice"),
    "not a measure": (lambda s: Scaled(3, store=s), MeasureError, "Scaled wraps an ir_measures measure"),
    "bounded not a flag": (lambda s: Scaled(ir_measures.nDCG @ 50, store=s, bounded="yes"), IrscaleError,
                           "bounded must be True or False"),
    "error out of range": (lambda s: Scaled(ir_measures.nDCG @ 50, store=s, error=2.0), IrscaleError,
                           "error must be a number between 0 and 1"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_parameters(case, tmp_path):
    make, error, message = BAD[case]
    with pytest.raises(error) as e:
        make(str(tmp_path / "t.h5"))
    assert message in str(e.value)


def test_errors_in_evaluation(tmp_path, trec8):
    _, _, store = trec8
    qrels, run = _small()
    for measure, message in ((Scaled(ir_measures.AP @ 12, store=store, build_missing=False),
                              f'irscale build --measures "AP@12" --out {store}'),
                             (Scaled(ir_measures.AP @ 5, store=tmp_path / "none.h5", build_missing=False),
                              f'not in the store {tmp_path / "none.h5"}')):
        with pytest.warns(IrscaleWarning, match="no scale for AP") as said:    # NaN values, with the command
            values = ir_measures.calc_aggregate([measure], qrels, run)
        assert math.isnan(values[measure]) and any(message in str(w.message) for w in said), [
            str(w.message) for w in said]
    cases = [
        (Scaled(ir_measures.Bpref, store=store), MeasureError, "irscale has no measure for ir_measures' 'Bpref'"),
        (Scaled(ir_measures.AP @ 40, store=store), MeasureError, "AP@40 has no scale (no exact or bounded"),
    ]
    for measure, error, message in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrscaleWarning)
            with pytest.raises(error) as e:
                ir_measures.calc_aggregate([measure], qrels, run)
        assert message in str(e.value), (measure, str(e.value))


def test_without_ir_measures_scaled_says_how_to_install_it():
    """ir_measures is optional: without it the module imports (``from irscale import *``
    keeps working) and Scaled(...) raises an irscale error naming the install command."""
    code = ("import sys; sys.modules['ir_measures'] = None\n"
            "import irscale\n"
            "from irscale.scales.runs.ir_measures_scaled import Scaled\n"
            "try:\n    Scaled('AP@10', store='t.h5')\n"
            "except irscale.IrscaleError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tempfile.gettempdir()).stdout
    assert "ir_measures, which is not installed: pip install ir_measures" in out
