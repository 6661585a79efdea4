"""Bounded scales standing in for exact ones that are not affordable
(irscale.scales.runs.evaluator, irscale.scales.tables.bounded_scales): graded nDCG below
N = 40 whose tables are over the build limit gets certified intervals holding the exact
scaled values, per count vector (tables already stored are used), said in the outputs; with
bounded=False the measure stays raw only, saying why."""
import warnings

import numpy as np
from test_bounded_use import _data

import irscale

M = "nDCG_trec(gains=(0,1,2))@8"


def _transform(qrels, runs, store, **kwargs):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = irscale.transform(qrels, runs, M, store=store, **kwargs)
    return out, [str(w.message) for w in said]


def test_intervals_stand_in_for_tables_over_the_limit(tmp_path):
    """Nothing may be built (limit 0): the vectors one-grade oracles serve (free) stay exact,
    the others get intervals holding the exact scaled values."""
    qrels, runs, _ = _data(tmp_path, graded=True)
    exact, _ = _transform(qrels, runs, tmp_path / "exact")
    stood, _ = _transform(qrels, runs, tmp_path / "limited", max_build_seconds=0, bounded=True, error=1e-3)
    assert (stood[["run", "topic", "raw"]] == exact[["run", "topic", "raw"]]).all().all()
    by_topic = stood.groupby("topic")["scale"].agg(set).to_dict()
    assert by_topic == {"1": {"bounded"}, "2": {"bounded"}, "3": {"exact: rank oracle"},
                        "4": {"exact: rank oracle"}, "5": {"bounded"}}, by_topic
    want, lo, hi = (a.to_numpy(dtype=float) for a in (exact.scaled, stood.scaled_lo, stood.scaled_hi))
    assert np.all((lo <= want) & (want <= hi)) and np.any(hi > lo)       # (a few ranks wide at small K)
    oracle = stood.scale.eq("exact: rank oracle").to_numpy()
    assert np.array_equal(stood.scaled.to_numpy()[oracle], want[oracle])
    assert stood.attrs["scale_kinds"] == {M: "bounded (3 of 5 count vectors) and exact: rank oracle (2)"}


def test_stored_tables_are_used_and_the_rest_stood_in_for(tmp_path):
    qrels, runs, _ = _data(tmp_path, graded=True)
    lines = qrels.read_text().splitlines()
    some = tmp_path / "some.txt"
    some.write_text("\n".join(x for x in lines if x.split()[0] in ("1", "2")) + "\n")
    _transform(some, runs, tmp_path / "s")                  # the tables of topics 1 and 2
    exact, _ = _transform(qrels, runs, tmp_path / "exact")
    mixed, _ = _transform(qrels, runs, tmp_path / "s", max_build_seconds=0, bounded=True, error=1e-3)
    by_topic = mixed.groupby("topic")["scale"].agg(set).to_dict()
    assert by_topic["1"] == by_topic["2"] == {"exact: table"} and by_topic["5"] == {"bounded"}, by_topic
    rows = mixed.topic.isin(["1", "2", "3", "4"]).to_numpy()
    assert np.array_equal(mixed.scaled.to_numpy()[rows], exact.scaled.to_numpy()[rows])
    [said] = mixed.attrs["scale_kinds"].values()
    assert said == "bounded (1 of 5 count vectors) and exact: rank oracle and table (4)", said


def test_without_bounded_scales_the_measure_is_raw_and_says_why(tmp_path):
    qrels, runs, _ = _data(tmp_path, graded=True)
    raw, said = _transform(qrels, runs, tmp_path / "none", max_build_seconds=0, bounded=False)
    assert raw.scaled.isna().all() and raw.raw.notna().all()
    assert any("no scale for" in s and "limit" in s for s in said), said


def test_by_default_planned_within_the_limit(tmp_path, monkeypatch):
    """Tables estimated far over the limit (estimates made huge here): bounded scales planned
    within the limit stand in, and --explain says why and for how many vectors."""
    from irscale.scales.runs import evaluator
    real = evaluator.plan_build
    monkeypatch.setattr(evaluator, "plan_build", lambda missing, n_jobs: (1e12, 0, []) if any(
        sum(0 < c < 8 for c in rb) > 1 for rbs in missing.values() for rb in rbs) else real(missing, n_jobs))
    qrels, runs, _ = _data(tmp_path, graded=True)
    scores, said = _transform(qrels, runs, tmp_path / "s", max_build_seconds=30)
    several = scores.topic.eq("2").to_numpy()              # the one topic both of whose grades bound at N = 8
    assert set(scores.scale[several]) == {"bounded"} and "bounded" not in set(scores.scale[~several])
    [why] = scores.attrs["scales"].values()
    assert why.startswith("bounded:") and "1 of its count vectors are not affordable" in why and "years" in why, why
    assert not any("no scale" in s for s in said), said


def test_lookup_stands_in_where_the_table_is_missing_and_too_costly(tmp_path, monkeypatch, capsys):
    """``irscale lookup`` of a vector whose table the store lacks and would take too long:
    an interval holding the exact scaled value, said in one warning; --no-bounded: the
    error naming the table."""
    from irscale.cli import main
    from irscale.scales.runs import preflight
    exact = irscale.scale(M, rb=(3, 5))
    value = float(exact.values_of_ranks([exact.k // 2])[0])
    monkeypatch.setattr(preflight, "plan_build", lambda missing, n_jobs: (1e12, 0, []))
    assert main(["lookup", str(tmp_path / "none"), M, repr(value), "--rb", "(3,5)"]) == 0
    out, err = capsys.readouterr()
    [head, row] = out.splitlines()
    got = dict(zip(head.split("\t"), row.split("\t")))
    want = float(exact.scaled(exact.k // 2))
    assert float(got["scaled_lo"]) <= want <= float(got["scaled_hi"])         # printed rounded outward
    assert err.count("warning") == 1 and "stands in" in err
    assert main(["lookup", str(tmp_path / "none"), M, repr(value), "--rb", "(3,5)", "--no-bounded"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_the_leaderboard_says_the_mix_with_its_width(tmp_path):
    qrels, runs, _ = _data(tmp_path, graded=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = irscale.compare(qrels, runs, M, store=tmp_path / "s", max_build_seconds=0, bounded=True, error=1e-3)
    [summary] = board.measures
    assert summary.scale.startswith("bounded: scaled within ") and summary.scale.endswith(
        "(3 of 5 count vectors) and exact: rank oracle (2)"), summary.scale


def test_stand_ins_read_back_from_a_tsv_and_without_building(tmp_path, monkeypatch):
    """The mix survives a tsv (by topics, bounded first); with building turned off, or a
    build refused for memory, bounded scales stand in for what the store lacks."""
    from irscale.errors import BuildTooLargeError
    from irscale.scales.runs import evaluator
    from irscale.scales.runs.scores import read_scores, write_scores
    qrels, runs, _ = _data(tmp_path, graded=True)
    stood, _ = _transform(qrels, runs, tmp_path / "limited", max_build_seconds=0, bounded=True, error=1e-3)
    write_scores(stood, tmp_path / "s.tsv")
    [said] = read_scores(tmp_path / "s.tsv").attrs["scale_kinds"].values()
    assert said == "bounded (3 of 5 topics) and exact: rank oracle (2)", said
    unbuilt, _ = _transform(qrels, runs, tmp_path / "none", build=False, bounded=True, error=1e-3)
    assert set(unbuilt["scale"]) == {"bounded"}

    def refused(*args, **kwargs):
        raise BuildTooLargeError("no memory for it")
    monkeypatch.setattr(evaluator, "build_tables", refused)
    big, said = _transform(qrels, runs, tmp_path / "big", bounded=True, error=1e-3)
    assert set(big["scale"]) == {"bounded"} and big.scaled.notna().all(), said


def test_a_table_serving_every_recall_base_is_stood_in_for_too(tmp_path):
    """A binary measure's one table (every recall base) missing, building turned off: with
    bounded=True its bounded scales stand in; without, it stays raw and names the build."""
    qrels, runs, _ = _data(tmp_path)
    name = "nDCG_trec@8"
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        stood = irscale.transform(qrels, runs, name, store=tmp_path / "none", build=False, bounded=True, error=1e-3)
        raw = irscale.transform(qrels, runs, name, store=tmp_path / "none", build=False)
    assert set(stood["scale"]) == {"bounded"} and stood.scaled.notna().all()
    assert raw.scaled.isna().all() and any("irscale build" in str(w.message) for w in said)
