"""Graded qrels through transform (and the service): grades = qrels levels folded into the
measure's top grade; raw graded nDCG_trec equals trec_eval's ndcg_cut (pytrec_eval) on the
TREC 2024 RAG run; ranks of graded measures equal brute force."""
import gzip
import random
import warnings

import naive
import numpy as np
import pytest

import irscale


def _graded_collection(tmp_path, seed=11, topics=6, docs=10):
    rng = random.Random(seed)
    qrels, runs = {}, {}
    for t in range(topics):
        qrels[f"q{t}"] = {f"d{d}": rng.choice([-1, 0, 0, 1, 2, 3, 4]) for d in range(docs)}
        qrels[f"q{t}"]["d0"] = 3                                   # every topic has a relevant document
    for s in range(3):
        runs[f"sys{s}"] = {t: {f"d{d}": float(rng.randint(0, 5)) for d in rng.sample(range(docs + 3), 7)}
                           for t in qrels}
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{t} 0 {d} {r}\n" for t, js in qrels.items() for d, r in js.items()))
    paths = []
    for name, ranking in runs.items():
        p = tmp_path / f"{name}.run"
        p.write_text("".join(f"{t} Q0 {d} 0 {sc} {name}\n" for t, ds in ranking.items() for d, sc in ds.items()))
        paths.append(p)
    return qrels, runs, q, paths


def test_graded_transform_matches_brute_force(tmp_path):
    qrels, runs, q, paths = _graded_collection(tmp_path)
    n = 5
    names = ["DCG(b=2,gains=(0,1,3))@5", "gP(gains=(0,1,2))@5", "RBP(gains=(0,1,2),p=0.8)@5"]
    store = tmp_path / "g.h5"
    scores = irscale.transform(q, paths, names, store, build_missing=True)
    raw = irscale.transform(q, paths, ["nDCG_trec(gains=(0,1,2,3))@5", "P@5"])
    refs = {names[0]: (naive.gDCG(2, (0, 1, 3)), 3), names[1]: (naive.gP((0, 1, 2)), 3),
            names[2]: (naive.gRBP("0.8", (0, 1, 2)), 3)}
    for row in scores.itertuples():
        ranking = runs[row.run][row.topic]
        docs = sorted(ranking.items(), key=lambda ds: (ds[1], ds[0]), reverse=True)[:n]
        fn, levels = refs[row.measure]
        run = tuple(min(max(qrels[row.topic].get(d, 0), 0), levels - 1) for d, _ in docs)
        run = run + (0,) * (n - len(run))
        _, _, distinct, _ = naive.graded_oracle(fn, levels, n)
        value = fn(run)
        assert row.raw == pytest.approx(float(value), rel=1e-12, abs=1e-15)
        assert row.rank == 1 + sum(1 for d in distinct if d < value and not naive._equal(d, value))
        assert row.k == len(distinct)
    p = raw[raw.measure == "P@5"]
    assert (p.raw * 5 == np.round(p.raw * 5)).all()                 # binary P still binary: levels > 0 relevant


def test_rag24_graded_ndcg_equals_trec_eval(shared_data, tmp_path):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rag = shared_data / "rag24"
    measures = ["nDCG_trec(gains=(0,1,2,3))@10", "nDCG_trec(gains=(0,1,2,3))@20"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)   # 270 run topics are not judged
        scores = irscale.transform(rag / "qrels.rag24.txt", rag / "run.rag24.gz", measures, raw_only=True)
    with open(rag / "qrels.rag24.txt") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with gzip.open(rag / "run.rag24.gz", "rt") as f:
        run = pytrec_eval.parse_run(f)
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "ndcg_cut.20"}).evaluate(run)
    checked = 0
    for row in scores.itertuples():
        n = row.measure.rsplit("@", 1)[1]
        assert row.raw == pytest.approx(ref[row.topic][f"ndcg_cut_{n}"], abs=1e-12), row
        checked += 1
    assert checked == 2 * scores.topic.nunique() and scores.topic.nunique() >= 30


def test_rag24_transform_and_service_end_to_end(shared_data, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # starlette asks for httpx2
        from fastapi.testclient import TestClient

    from irscale.scales.runs.judging import judge
    from irscale.scales.runs.qrels import read_qrels
    from irscale.scales.runs.run_files import read_run
    from irscale.service import create_app
    rag = shared_data / "rag24"
    name = "DCG(b=2,gains=(0,1,2,3))@8"
    store = tmp_path / "rag.h5"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        scores = irscale.transform(rag / "qrels.rag24.txt", rag / "run.rag24.gz", name, store, build_missing=True)
        judged = judge(read_run(rag / "run.rag24.gz", 8), read_qrels(rag / "qrels.rag24.txt"), 8, all_topics=True)
    grades = np.minimum(judged.rel, 3)
    client = TestClient(create_app(store))
    answer = client.post("/v1/rank", json={"measure": name, "runs": grades.tolist()})
    assert answer.status_code == 200, answer.text
    assert answer.json()["rank"] == scores["rank"].astype(int).tolist()
    values = client.post("/v1/rank", json={"measure": name, "values": scores["raw"].tolist()})
    assert values.json()["rank"] == scores["rank"].astype(int).tolist()
    bad = client.post("/v1/rank", json={"measure": name, "runs": [[4, 0, 0, 0, 0, 0, 0, 0]]})
    assert bad.status_code == 422 and "outside" in bad.json()["error"]["message"]


def test_max_grade_folds_levels(tmp_path):
    from irscale.cli import main
    qrels, runs, q, paths = _graded_collection(tmp_path)
    name = "nDCG_trec(gains=(0,1,2,3,4))@5"
    full = irscale.transform(q, paths, name)
    folded = irscale.transform(q, paths, name, max_grade=2)
    # folding 3 and 4 into 2 is the same as gains (0,1,2,2,2) on the original levels
    same = irscale.transform(q, paths, "nDCG_trec(gains=(0,1,2,2,2))@5")
    assert np.allclose(folded.raw, same.raw, rtol=0, atol=1e-15)
    assert not np.allclose(full.raw, folded.raw)
    out = tmp_path / "s.csv"
    assert main(["transform", "--qrels", str(q), "--runs", *map(str, paths), "--measures", name,
                 "--max-grade", "2", "--out", str(out), "-q"]) == 0
    assert np.allclose(irscale.read_scores(out).raw, folded.raw, rtol=0, atol=1e-15)
    with pytest.raises(irscale.IrscaleError):
        irscale.transform(q, paths, name, max_grade=0)
