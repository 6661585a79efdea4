"""Scores in other tools' shapes: the wide topics x systems matrix, ranx-style
per-query dicts, and ranx's comparison report over irscale's per-query values.

References: the long scores frame read row by row, ``ranx.compare`` itself (which computes
P@10 from the runs: with ``column="raw"`` the report must be the same), and scipy's paired
t-test on the matrix.
"""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import irscale
from irscale import IrscaleError, IrscaleWarning, MeasureError
from irscale.scales.runs.results import ranx_compare, to_ranx_runs, wide

RUNS = ["input.CL99SD.gz", "input.AntHoc1.gz", "input.Dm8Nbn.gz", "input.8manexT3D1N0.gz"]


@pytest.fixture(scope="module")
def trec8(tmp_path_factory):
    from conftest import SHARED
    folder = SHARED / "trec8"
    if not folder.is_dir():
        print(f"skipping: shared TREC data not found at {SHARED}")
        pytest.skip(f"shared TREC data not found at {SHARED}")
    store = irscale.build_store(tmp_path_factory.mktemp("results") / "t.h5", "AP@10,P@10", n_jobs=1)
    qrels, runs = folder / "qrels.trec8.adhoc.txt", [folder / "runs" / r for r in RUNS]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        scores = irscale.transform(qrels, runs, "AP@10,P@10", store, midranks=True)
    return qrels, runs, scores


def test_wide_is_the_long_frame_pivoted(trec8):
    _, _, scores = trec8
    tags = list(dict.fromkeys(scores["run"]))
    topics = list(dict.fromkeys(scores["topic"]))
    for measure in ("AP@10", "P@10"):
        for column in ("scaled", "raw", "rank", "midrank"):
            w = wide(scores, measure, column)
            assert list(w.columns) == tags and list(w.index) == topics == [str(t) for t in range(401, 451)]
            assert w.index.name == "topic" and w.columns.name == "run"
            for row in scores[scores["measure"] == measure].itertuples():
                assert w.at[row.topic, row.run] == float(getattr(row, column))
    assert wide(scores, irscale.parse_measure("AP@10")).equals(wide(scores, "AP@10"))
    assert wide(scores[scores["measure"] == "P@10"]).equals(wide(scores, "P@10"))      # one measure: no name needed
    w = wide(scores, "AP@10")
    assert stats.ttest_rel(w[tags[0]], w[tags[1]]).pvalue < 0.05


def test_ranx_runs_are_per_query_dicts(trec8):
    _, _, scores = trec8
    got = to_ranx_runs(scores, "AP@10")
    want: dict = {}
    for row in scores[scores["measure"] == "AP@10"].itertuples():
        want.setdefault(row.run, {})[row.topic] = row.scaled
    assert got == want
    holes = scores.copy()
    holes.loc[(holes["run"] == "CL99SD") & (holes["topic"] == "401"), "scaled"] = np.nan
    assert "401" not in to_ranx_runs(holes, "AP@10")["CL99SD"]        # no value: left out
    assert math.isnan(wide(holes, "AP@10").at["401", "CL99SD"])        # kept as NaN in the matrix
    holes.loc[(holes["run"] == "CL99SD") & (holes["topic"] == "401"), "rank"] = pd.NA
    assert math.isnan(wide(holes, "AP@10", "rank").at["401", "CL99SD"])


def test_ranx_compare_equals_ranx_on_the_values_ranx_computes(trec8):
    ranx = pytest.importorskip("ranx")
    ir_measures = pytest.importorskip("ir_measures")
    qrels, runs, scores = trec8
    qrels_dict: dict = {}
    for q in ir_measures.read_trec_qrels(str(qrels)):
        qrels_dict.setdefault(q.query_id, {})[q.doc_id] = q.relevance
    ranx_runs = []
    for path, tag in zip(runs, dict.fromkeys(scores["run"])):
        run: dict = {}
        for d in ir_measures.read_trec_run(str(path)):
            run.setdefault(d.query_id, {})[d.doc_id] = d.score
        ranx_runs.append(ranx.Run(run, name=tag))
    theirs = ranx.compare(ranx.Qrels(qrels_dict), ranx_runs, ["precision@10"], stat_test="student", max_p=0.05,
                          make_comparable=True)
    ours = ranx_compare(scores, "P@10", column="raw", stat_test="student", max_p=0.05)
    tags = list(dict.fromkeys(scores["run"]))
    assert ours.model_names == theirs.model_names == tags
    for a in tags:
        assert ours.results[a]["P@10"] == pytest.approx(theirs.results[a]["precision@10"], abs=1e-12)
        for b in tags:
            if a != b:
                assert ours.win_tie_loss[(a, b)]["P@10"] == theirs.win_tie_loss[(a, b)]["precision@10"]
                mine, ranx_own = ours.comparisons[a, b]["P@10"], theirs.comparisons[a, b]["precision@10"]
                assert mine["p_value"] == pytest.approx(ranx_own["p_value"], rel=1e-9)
                assert mine["significant"] == ranx_own["significant"]
    assert str(ours).replace("P@10", "precision@10") == str(theirs).replace("P@10", "precision@10")
    assert "P@10" in ours.to_latex()


def test_ranx_compare_on_scaled_values(trec8):
    pytest.importorskip("ranx")
    _, _, scores = trec8
    tags = list(dict.fromkeys(scores["run"]))
    report = ranx_compare(scores, ["AP@10", "P@10"], max_p=0.05)
    for measure in ("AP@10", "P@10"):
        w = wide(scores, measure)
        for a in tags:
            assert report.results[a][measure] == pytest.approx(w[a].mean(), rel=1e-12)
            for b in tags:
                if a != b:
                    p = stats.ttest_rel(w[a], w[b]).pvalue
                    assert report.comparisons[a, b][measure]["p_value"] == pytest.approx(p, rel=1e-9)
    assert "AP@10" in str(report) and "P@10" in str(report)
    for test in ("fisher", "tukey"):
        r = ranx_compare(scores, "AP@10", stat_test=test, n_permutations=200)
        assert r.stat_test == test and 0 <= r.comparisons[tags[0], tags[1]]["AP@10"]["p_value"] <= 1
    holes = scores.copy()
    holes.loc[(holes["run"] == tags[0]) & (holes["topic"] == "401"), "scaled"] = np.nan
    with pytest.warns(IrscaleWarning, match="AP@10: 1 of 50 topics left out of the comparison"):
        r = ranx_compare(holes, "AP@10")
    w = wide(scores, "AP@10").drop(index="401")
    assert r.comparisons[tags[0], tags[1]]["AP@10"]["p_value"] == pytest.approx(
        stats.ttest_rel(w[tags[0]], w[tags[1]]).pvalue, rel=1e-9)


def test_errors(trec8):
    pytest.importorskip("ranx")
    _, _, scores = trec8
    both = pd.concat([scores, scores.assign(rb_scale="common")])
    cases = [
        (lambda: wide(scores.to_dict()), IrscaleError, "scores must be the DataFrame irscale.transform returns"),
        (lambda: wide(scores.drop(columns="topic"), "AP@10"), IrscaleError, "scores have no column topic"),
        (lambda: wide(scores, "AP@10", "nothing"), IrscaleError, "scores have no column nothing"),
        (lambda: wide(scores, "AP@10", "rb_scale"), IrscaleError, "column rb_scale holds no numbers"),
        (lambda: wide(scores), MeasureError, "scores hold 2 measures (AP@10, P@10); say which one"),
        (lambda: wide(scores, "RR@10"), MeasureError, "scores have no measure RR@10 (they hold AP@10, P@10)"),
        (lambda: to_ranx_runs(both, "AP@10"), IrscaleError,
         "several rows of AP@10 for run CL99SD, topic 401 (the scores mix rb_scale feasible, common"),
        (lambda: ranx_compare(scores, "AP@10", stat_test="wilcoxon"), IrscaleError,
         "stat_test must be one of student, fisher, tukey"),
        (lambda: ranx_compare(scores[scores["run"] == "CL99SD"], "AP@10"), IrscaleError, "needs two runs or more"),
    ]
    for make, error, message in cases:
        with pytest.raises(error) as e:
            make()
        assert message in str(e.value)


def test_names_read_as_transform_reads_them_and_raw_only_scores_say_so(shared_data):
    trec8 = shared_data / "trec8"
    runs = sorted((trec8 / "runs").iterdir())[:2]
    scores = irscale.transform(trec8 / "qrels.trec8.adhoc.txt", runs, "map,P_10,ndcg_cut_10", raw_only=True)
    for name, canonical in [("map", "AP@1000"), ("P_10", "P@10"), ("irm:nDCG@10", "nDCG_trec@10"),
                            ("ndcg_cut_10", "nDCG_trec@10")]:
        got = irscale.wide(scores, name, column="raw")
        assert got.equals(irscale.wide(scores, canonical, column="raw")), name
    for call in (lambda: irscale.wide(scores, "P@10"), lambda: irscale.to_ranx_runs(scores, "P@10"),
                 lambda: irscale.ranx_compare(scores, ["P@10"]), lambda: irscale.wide(scores, "P@10", "midrank")):
        with pytest.raises(irscale.IrscaleError, match="no (scaled|midrank) values of P@10"):
            call()
