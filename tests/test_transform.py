"""Transforms of TREC runs: trec_eval conventions, raw values, exact ranks, output files.

References are independent of irscale: the document order is recomputed here with a
plain ``sorted`` (score descending, docno descending), raw values come from the exact
implementations in ``naive.py`` and from pytrec_eval (trec_eval's own code), and ranks
from brute-force enumeration of the feasible runs.
"""
import gzip
import random
import warnings

import naive
import numpy as np
import pandas as pd
import pytest

from irscale import IrscaleWarning, transform
from irscale.scales.runs.scores import read_scores, write_scores

N = 6
MEASURES = ["P", "R", "F1", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(b=2)", "DCG(b=10)",
            "nDCG(b=2)", "nDCG(b=10)", "nDCG_trec"]


def _write(path, lines, gz=False):
    text = "".join(line + "\n" for line in lines)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def _collection(rng, topics=16, docs=12):
    """Random qrels (levels -1..2, some topics without relevant documents) and runs with
    many score ties, some short rankings, unjudged documents and a missing topic."""
    qrels = {}
    for t in range(1, topics + 1):
        judged = rng.sample([f"D{d:02d}" for d in range(docs)], rng.randint(3, docs))
        qrels[str(400 + t)] = {d: rng.choice([-1, 0, 0, 1, 2]) for d in judged}
    runs = {}
    for name in ("sysA", "sysB", "sysC"):
        ranking = {}
        for t in qrels:
            if name == "sysC" and t == "402":
                continue          # missing topic
            pool = [f"D{d:02d}" for d in range(docs + 4)]   # D12..D15 never judged
            retrieved = rng.sample(pool, rng.randint(2, len(pool)))
            ranking[t] = {d: float(rng.randint(0, 3)) for d in retrieved}   # ties
        if name == "sysB":
            ranking["999"] = {"D00": 1.0}                     # topic not in the qrels
        runs[name] = ranking
    return qrels, runs


def _files(tmp_path, qrels, runs):
    q = _write(tmp_path / "qrels.txt", [f"{t} 0 {d} {r}" for t, docs in qrels.items() for d, r in docs.items()])
    paths = []
    for i, (name, ranking) in enumerate(runs.items()):
        lines = [f"{t} Q0 {d} {rank} {s} {name}" for t, docs in ranking.items()
                 for rank, (d, s) in enumerate(docs.items(), start=1)]
        random.Random(i).shuffle(lines)      # file order and rank column are irrelevant
        paths.append(_write(tmp_path / (f"{name}.run.gz" if i == 0 else f"{name}.run"), lines, gz=i == 0))
    return q, paths


def _judged_reference(qrels, runs, n):
    """(run, topic) -> (judged run tuple, rb), from the definitions in SPEC section 5."""
    out = {}
    for name, ranking in runs.items():
        for t, judged in qrels.items():
            rb = sum(1 for r in judged.values() if r > 0)
            if rb == 0:
                continue
            docs = sorted(ranking.get(t, {}).items(), key=lambda ds: (ds[1], ds[0]), reverse=True)[:n]
            rel = [1 if judged.get(d, 0) > 0 else 0 for d, _ in docs]
            out[(name, t)] = (tuple(rel + [0] * (n - len(rel))), rb)
    return out


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("trec")
    qrels, runs = _collection(random.Random(7))
    q, paths = _files(tmp, qrels, runs)
    return tmp, qrels, runs, q, paths


@pytest.fixture(scope="module")
def scored(collection):
    tmp, qrels, runs, q, paths = collection
    names = [f"{m}@{N}" for m in MEASURES]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        feasible = transform(q, paths, names, tmp / "t.h5", build_missing=True, midranks=True)
        common = transform(q, paths, names, tmp / "t.h5", rb_scale="common", midranks=True)
    return feasible, common, [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]


def _exact_rank(fn, run, rb, n):
    """(unq rank, k, mid-rank, runs) of ``run`` among the feasible runs for ``rb``."""
    runs, _, distinct, ranks = naive.oracle(fn, n, rb)
    value = fn(run, rb)
    rank = 1 + sum(1 for d in distinct if d < value and not naive._equal(d, value))
    below = sum(1 for r in ranks if r < rank)
    here = sum(1 for r in ranks if r == rank)
    return rank, len(distinct), below + (here + 1) / 2, len(runs)


def test_rows_columns_and_coverage(collection, scored):
    _, qrels, runs, _, _ = collection
    feasible, common, caught = scored
    assert list(feasible.columns) == ["run", "topic", "measure", "n", "rb", "raw", "rank", "k", "scaled", "midrank",
                                      "n_runs", "rb_scale", "scale"]
    ref = _judged_reference(qrels, runs, N)
    topics = sorted({t for _, t in ref}, key=int)
    assert len(feasible) == len(runs) * len(topics) * len(MEASURES)
    assert feasible["run"].unique().tolist() == ["sysA", "sysB", "sysC"]
    assert feasible["topic"].unique().tolist() == topics                      # qrels order, RB >= 1 only
    assert "999" not in set(feasible["topic"])
    assert set(feasible["rb_scale"]) == {"feasible"} and set(common["rb_scale"]) == {"common"}
    kinds = feasible.groupby("measure")["scale"].agg(lambda s: set(s.dropna()))
    assert all(len(k) == 1 for k in kinds) and kinds[f"P@{N}"] == {"exact: closed form"}, kinds
    assert any("sysC" in w and "402" in w and "all non-relevant" in w for w in caught)
    assert any("sysB" in w and "999" in w and "ignored" in w for w in caught)


@pytest.mark.parametrize("mode", ["feasible", "common"])
def test_raw_and_ranks_match_brute_force(collection, scored, mode):
    _, qrels, runs, _, _ = collection
    scores = scored[0] if mode == "feasible" else scored[1]
    ref = _judged_reference(qrels, runs, N)
    for row in scores.itertuples():
        run, rb = ref[(row.run, row.topic)]
        assert row.rb == rb
        name = row.measure.rsplit("@", 1)[0]
        fn = naive.REFERENCES[name]
        dependent = name in naive.RB_DEPENDENT
        assert row.raw == pytest.approx(float(fn(run, rb if dependent else None)), rel=1e-12, abs=1e-15)
        scale_rb = (rb if mode == "feasible" else N) if dependent else None
        rank, k, midrank, n_runs = _exact_rank(fn, run, scale_rb, N)
        assert (row.rank, row.k, row.midrank, row.n_runs) == (rank, k, midrank, n_runs), (row, run)
        assert row.scaled == pytest.approx((rank - 1) / (k - 1))


def test_recall_ranks_equal_in_both_modes(scored):
    feasible, common, _ = scored
    f = feasible[feasible.measure == f"R@{N}"]
    c = common[common.measure == f"R@{N}"]
    assert (f["rank"].to_numpy() == c["rank"].to_numpy()).all()
    assert (f["rank"].to_numpy() == np.rint(f["raw"] * f["rb"]).astype(int) + 1).all()


@pytest.mark.filterwarnings("ignore::irscale.IrscaleWarning")
def test_raw_scores_equal_pytrec_eval(collection):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    _, qrels, runs, q, paths = collection
    n = 10
    raw = transform(q, paths, [f"P@{n}", f"R@{n}", f"AP@{n}", f"nDCG_trec@{n}", f"RR@{n}"], raw_only=True)
    ev = pytrec_eval.RelevanceEvaluator({t: {d: int(r > 0) for d, r in j.items()} for t, j in qrels.items()},
                                        {f"P.{n}", f"recall.{n}", f"map_cut.{n}", f"ndcg_cut.{n}", "recip_rank"})
    names = {f"P@{n}": f"P_{n}", f"R@{n}": f"recall_{n}", f"AP@{n}": f"map_cut_{n}",
             f"nDCG_trec@{n}": f"ndcg_cut_{n}", f"RR@{n}": "recip_rank"}
    checked = 0
    for name, ranking in runs.items():
        result = ev.evaluate(ranking)
        rows = raw[raw.run == name]
        for row in rows.itertuples():
            if row.topic not in result:          # pytrec_eval skips topics the run lacks
                assert row.raw == 0.0
                continue
            expected = result[row.topic][names[row.measure]]
            if row.measure.startswith("RR") and expected < 1 / n:   # first relevant beyond the cutoff
                assert row.raw == 0.0
                continue
            assert row.raw == pytest.approx(expected, abs=1e-12)
            checked += 1
    assert checked > 200


def test_output_formats_round_trip(scored, tmp_path):
    feasible = scored[0]
    for name in ("s.csv", "s.tsv", "s.parquet", "s.csv.gz"):
        write_scores(feasible, tmp_path / name)
        back = read_scores(tmp_path / name)
        pd.testing.assert_frame_equal(back.reset_index(drop=True), feasible, check_dtype=False)
        assert back["raw"].to_numpy().tobytes() == feasible["raw"].to_numpy().tobytes()   # exact floats
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv", "s.csv.gz", "s.parquet", "s.tsv"]


@pytest.mark.filterwarnings("ignore::irscale.IrscaleWarning")
def test_raw_only_has_empty_rank_columns(collection):
    _, _, _, q, paths = collection
    raw = transform(q, paths[:1], "AP@6,P@6", raw_only=True)
    assert raw["rank"].isna().all() and raw["k"].isna().all() and raw["scaled"].isna().all()
    assert raw["midrank"].isna().all() and raw["n_runs"].isna().all()
    assert raw["raw"].notna().all()
