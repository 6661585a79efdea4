"""Closed-form scales where users meet them: transform with trec_eval's deep names (against
trec_eval on TREC-8), lookup and build without a store, the service, Scaled and the
leaderboard, and an exact/none label per measure in every scaled output."""
import gzip
import json
import warnings
from math import comb

import numpy as np
import pytest

import irscale
from irscale.cli import main

TREC_EVAL = {"recip_rank": "RR@1000", "P_1000": "P@1000", "recall_1000": "R@1000", "Rprec": "Rprec@1000"}


def _trec_eval(folder, runs):
    """(run, topic, measure) -> trec_eval's printed value."""
    out = {}
    for run in runs:
        with gzip.open(folder / f"eval.{run}.gz", "rt") as f:
            for line in f:
                name, topic, value = line.split()
                if name in TREC_EVAL and topic != "all":
                    out[(run, topic, TREC_EVAL[name])] = float(value)
    return out


def test_trec_eval_names_at_depth_1000_on_trec8(shared_data, tmp_path):
    trec8 = shared_data / "trec8"
    runs = ["1", "AntHoc1", "8manexT3D1N0"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = irscale.transform(trec8 / "qrels.trec8.adhoc.txt", [trec8 / "runs" / f"input.{r}.gz" for r in runs],
                                   "map,recip_rank,P_1000,recall_1000,Rprec", tmp_path / "none.h5",
                                   names="trec_eval", empty_topics="zero")
    assert not (tmp_path / "none.h5").exists()                       # nothing built, nothing stored
    want = _trec_eval(trec8 / "trec_eval", runs)
    rows = scores[scores.measure != "AP@1000"]
    assert len(rows) == len(want) == 3 * 50 * 4
    got = {(r, t, m): v for r, t, m, v in zip(rows.run, rows.topic, rows.measure, rows.raw)}
    assert all(abs(got[key] - value) <= 5e-5 for key, value in want.items())
    assert scores.loc[scores.measure == "AP@1000", "scaled"].isna().all()      # map: no scale, said
    # scaled values from the raw ones, by the definitions (rank - 1) / (K - 1)
    for m, expect in [
        ("P@1000", lambda raw, rb: raw),
        ("R@1000", lambda raw, rb: raw * rb / np.minimum(rb, 1000)),
        ("Rprec@1000", lambda raw, rb: raw * rb / np.minimum(rb, 1000)),
        ("RR@1000", lambda raw, rb: np.where(raw > 0, (1001 - np.rint(1 / np.where(raw > 0, raw, 1))) / 1000, 0.0)),
    ]:
        x = rows[rows.measure == m]
        assert np.allclose(x.scaled.to_numpy(float), expect(x.raw.to_numpy(float), x.rb.to_numpy(float)),
                           atol=1e-12), m
        assert x["k"].notna().all()
    r = rows[rows.measure == "R@1000"]
    feasible = [sum(comb(1000, j) for j in range(min(rb, 1000) + 1)) for rb in r.rb]
    assert r.n_runs.isna().tolist() == [f >= 2 ** 63 for f in feasible]         # Int64 holds the others
    assert [int(v) for v, f in zip(r.n_runs, feasible) if f < 2 ** 63] == [f for f in feasible if f < 2 ** 63]
    assert rows.loc[rows.measure.isin(["P@1000", "RR@1000"]), "n_runs"].isna().all()        # 2^1000 runs


def test_lookup_and_build_need_no_store(tmp_path, capsys):
    missing = tmp_path / "none.h5"
    assert main(["lookup", str(missing), "RR@1000", "0.3333", "0.5", "--nearest"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(row[1], row[2]) for row in lines] == [("999", "1001"), ("1000", "1001")]
    assert main(["lookup", str(missing), "P_1000", "0.013"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[1] == "14"
    assert main(["lookup", str(missing), "AP@10", "0.5", "--rb", "3"]) != 0       # tables still need a store
    assert main(["build", "-m", "P_1000,recall_1000", "--out", str(missing), "-q"]) == 0
    assert "closed form" in capsys.readouterr().err and not missing.exists()


def test_store_answers_closed_forms_without_tables(tmp_path):
    path = tmp_path / "s.h5"
    irscale.build_store(path, ["P@5"])
    store = irscale.open_store(path)
    assert type(store.scale("P@5")).__name__ != "ClosedScale"           # a stored table answers first
    assert store.scale("P@6").rank([0.5])[0] == 4                        # none stored: the closed form
    assert store.scale("Rprec@500", rb=(20,)).k == 21
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient
    from irscale.service import create_app
    client = TestClient(create_app(path))
    r = client.post("/v1/rank", json={"measure": "RR@1000", "values": [0.25, 1.0]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["rank"] == [998, 1001] and body["k"] == 1001 and body["scale"] == "exact: closed form"
    r = client.post("/v1/rank", json={"measure": "P@5", "values": [0.4]})
    assert r.json()["scale"] == "exact: table" and r.json()["rank"] == [3]


def test_scaled_and_leaderboard_say_what_each_scale_is(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{t} 0 d{i} {int(i % 3 == 0)}\n" for t in (1, 2, 3) for i in range(60)))
    runs = []
    rng = np.random.default_rng(1)
    for name in ("a", "b", "c"):
        path = tmp_path / f"{name}.run"
        path.write_text("".join(f"{t} Q0 d{i} {r + 1} {60 - r} {name}\n" for t in (1, 2, 3)
                                for r, i in enumerate(rng.permutation(60))))
        runs.append(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        board = irscale.compare(qrels, runs, "P_50,recip_rank,map", store=tmp_path / "s.h5")
    kinds = {s.label: s.scale for s in board.measures}
    assert kinds == {"P_50": "exact: closed form", "recip_rank": "exact: closed form", "map": None}
    assert not (tmp_path / "s.h5").exists()
    out = tmp_path / "board.json"
    board.save(out)
    assert {m["label"]: m["scale"] for m in json.loads(out.read_text())["measures"]} == kinds
    assert "exact: closed form" in board.to_markdown()
    ir_measures = pytest.importorskip("ir_measures")
    from irscale import Scaled
    measure = Scaled(ir_measures.P @ 50, store=tmp_path / "s.h5")
    qrels_df = ir_measures.read_trec_qrels(str(qrels))
    run_df = ir_measures.read_trec_run(str(runs[0]))
    got = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels_df, run_df)}
    assert set(got) == {"1", "2", "3"} and all(0 <= v <= 1 for v in got.values())
