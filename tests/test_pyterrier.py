"""``irscale.Scaled`` inside PyTerrier's ``pt.Experiment``.

``pt.Experiment`` over result DataFrames (``qid, docno, score, rank`` as ``pt.io.read_results``
gives them) calls ``ir_measures.iter_calc`` once per system with the qrels and the results
renamed to ir_measures' columns, averages the per-query values itself (a plain mean), and
computes the baseline columns (``+``, ``-``, paired t-test p-value, Holm's correction over
the systems) from the per-query values. The references here are independent of PyTerrier:
``irscale.transform`` of the TREC files (irscale's own reader) for the scaled values,
ir_measures on its own readers for the raw measures, scipy and statsmodels for the tests.

The data are synthetic TREC files: 9 topics (409 judged with nothing relevant), 3 runs of 20
documents per topic (run b with tied scores, run c without a ranking for topic 402).
"""
import math
import random
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import irscale
from irscale import IrscaleWarning

try:
    import ir_measures
    import pyterrier as pt
except ImportError as e:
    print(f"skipping: {e.name} is not installed (pip install python-terrier ir_measures)")
    pytest.skip(f"{e.name} is not installed (pip install python-terrier ir_measures)", allow_module_level=True)

from scipy import stats  # noqa: E402 - after the skip
from statsmodels.stats.multitest import multipletests  # noqa: E402 - a dependency of the test extras

TOPICS = [str(t) for t in range(401, 410)]
EMPTY = "409"                  # judged, nothing relevant
MISSING = ("c", "402")         # run c has no ranking for topic 402
RUNS = ("a", "b", "c")
# ir_measures measure -> the name transform reads it by (names="ir_measures")
WRAPPED = {"AP@10": ir_measures.AP @ 10, "P@10": ir_measures.P @ 10, "RR@10": ir_measures.RR @ 10,
           "RBP(p=0.8)@10": ir_measures.RBP(p=0.8) @ 10}
TABLES = "AP@10,P@10,RR@10,RBP(p=0.8)@10"


def _write_data(folder: Path) -> tuple[Path, list[Path]]:
    rng = random.Random(29)
    docs = [f"D{i:03d}" for i in range(50)]
    relevant = {t: set() if t == EMPTY else set(rng.sample(docs, rng.randint(2, 12))) for t in TOPICS}
    qrels = folder / "qrels.txt"
    qrels.write_text("".join(f"{t} 0 {d} {int(d in relevant[t])}\n" for t in TOPICS for d in docs[:35]))
    files = []
    for name in RUNS:
        rows = []
        for t in TOPICS:
            if (name, t) == MISSING:
                continue
            ranked = rng.sample(docs, 20)
            if name == "a":        # a better run: relevant documents tend to come first
                ranked.sort(key=lambda d: rng.random() - 0.6 * (d in relevant[t]))
            for rank, d in enumerate(ranked, 1):
                score = 20.0 - rank // 3 if name == "b" else 100 - rank + rng.random()
                rows.append(f"{t} Q0 {d} {rank} {score:.4f} {name}\n")
        path = folder / f"run.{name}"
        path.write_text("".join(rows))
        files.append(path)
    return qrels, files


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pyterrier")
    qrels, files = _write_data(folder)
    store = folder / "t.h5"
    irscale.build_store(store, TABLES, n_jobs=1)
    return SimpleNamespace(folder=folder, qrels_path=qrels, run_files=files, store=str(store),
                           qrels=pt.io.read_qrels(str(qrels)),
                           runs={name: pt.io.read_results(str(f)) for name, f in zip(RUNS, files)})


def _scaled(data, name: str, **kw) -> irscale.Scaled:
    return irscale.Scaled(WRAPPED[name], store=data.store, **kw)


def _experiment(data, measures, topics=None, systems=None, **kw) -> pd.DataFrame:
    topics = data.qrels[["qid"]].drop_duplicates() if topics is None else topics
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)      # run c misses topic 402
        return pt.Experiment(systems or data.runs, topics, data.qrels, measures, **kw)


def _transform(data, names, **kw) -> pd.DataFrame:
    kw.setdefault("empty_topics", "zero")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        return irscale.transform(str(data.qrels_path), [str(f) for f in data.run_files], names, data.store,
                                 names="ir_measures", **kw)


def _ir_measures_mean(data, measure, run: str, topics=None) -> float:
    qrels = list(ir_measures.read_trec_qrels(str(data.qrels_path)))
    if topics is not None:
        qrels = [q for q in qrels if q.query_id in topics]
    run_file = data.run_files[RUNS.index(run)]
    return ir_measures.calc_aggregate([measure], qrels, ir_measures.read_trec_run(str(run_file)))[measure]


def _row(table: pd.DataFrame, name: str) -> pd.Series:
    return table.set_index("name").loc[name]


def test_data_has_the_cases_it_claims(data):
    assert set(data.qrels["qid"]) == set(TOPICS)
    assert data.qrels[data.qrels["qid"] == EMPTY]["label"].max() == 0
    assert MISSING[1] not in set(data.runs[MISSING[0]]["qid"])
    b = data.runs["b"]
    assert b.duplicated(["qid", "score"]).any()                  # ties: trec_eval's order decides


def test_averages_equal_transform_and_ir_measures(data):
    """Each Scaled column is the mean over the qrels' topics of transform's ``scaled``;
    the plain measures are ir_measures' own values; both sit in one table."""
    scaled = {name: _scaled(data, name) for name in WRAPPED}
    table = _experiment(data, [*scaled.values(), ir_measures.AP @ 10, "P_10"])
    assert list(table["name"]) == list(RUNS)
    assert {str(m) for m in scaled.values()} <= set(table.columns)
    ref = _transform(data, list(WRAPPED))
    assert set(ref["topic"]) == set(TOPICS)
    for name, m in scaled.items():
        want = ref[ref["measure"] == name].groupby("run")["scaled"].mean()
        got = table.set_index("name")[str(m)]
        np.testing.assert_allclose(got.loc[list(RUNS)].to_numpy(float), want.loc[list(RUNS)].to_numpy(float),
                                   rtol=0, atol=1e-12, err_msg=name)
    ap = ref[ref["measure"] == "AP@10"].groupby("run")["raw"].mean()
    for run in RUNS:
        want_ap = _ir_measures_mean(data, ir_measures.AP @ 10, run)
        assert _row(table, run)["AP@10"] == pytest.approx(want_ap, abs=1e-12)
        assert _row(table, run)["P_10"] == pytest.approx(_ir_measures_mean(data, ir_measures.P @ 10, run), abs=1e-12)
        assert ap[run] == pytest.approx(want_ap, abs=1e-12)            # irscale's raw AP@10 is ir_measures'
    # the scale is not the raw measure: AP@10 and its scaled values differ
    assert not np.allclose(table[str(scaled["AP@10"])], table["AP@10"])


def test_per_query_values_equal_transform(data):
    scaled = [_scaled(data, "AP@10"), _scaled(data, "RBP(p=0.8)@10"), _scaled(data, "P@10", scale="midrank")]
    pq = _experiment(data, [*scaled, ir_measures.AP @ 10], perquery=True)
    assert list(pq.columns) == ["name", "qid", "measure", "value"]
    assert all(isinstance(q, str) for q in pq["qid"])
    ref = _transform(data, ["AP@10", "RBP(p=0.8)@10", "P@10"], midranks=True)
    for m, name, column in zip(scaled, ["AP@10", "RBP(p=0.8)@10", "P@10"], ["scaled", "scaled", "midrank"]):
        rows = ref[ref["measure"] == name]
        values = rows[column].to_numpy(float)
        if column == "midrank":
            values = (values - 1) / (rows["n_runs"].to_numpy(float) - 1)
        want = dict(zip(zip(rows["run"], rows["topic"]), values))
        got = pq[pq["measure"] == str(m)]
        got = dict(zip(zip(got["name"], got["qid"]), got["value"]))
        assert got.keys() == want.keys() == {(r, t) for r in RUNS for t in TOPICS}
        bad = [(k, got[k], want[k]) for k in want if abs(got[k] - want[k]) > 1e-12]
        assert not bad, (str(m), bad[:5])
    # ir_measures' conventions, kept by Scaled: the empty topic and the missing ranking are 0
    for qid, name in [(EMPTY, "a"), (MISSING[1], MISSING[0])]:
        values = pq[(pq["qid"] == qid) & (pq["name"] == name)].set_index("measure")["value"]
        assert values[str(scaled[0])] == 0.0 and values["AP@10"] == 0.0
    # Scaled's query ids are the plain measures' ones (pt.Experiment pairs topics by them)
    for name in RUNS:
        ids = pq[pq["name"] == name].groupby("measure")["qid"].apply(frozenset)
        assert ids[str(scaled[0])] == ids["AP@10"]


def test_baseline_and_holm_on_scaled_values(data):
    """``baseline=0, correction="holm"``: +/- counts, paired t-test p-values and Holm's
    correction over the non-baseline systems, computed from transform's per-topic scaled
    values with scipy and statsmodels."""
    scaled = [_scaled(data, "AP@10"), _scaled(data, "P@10")]
    table = _experiment(data, [*scaled, ir_measures.AP @ 10], baseline=0, correction="holm")
    ref = _transform(data, ["AP@10", "P@10"])
    for m, name in zip(scaled, ["AP@10", "P@10"]):
        col = str(m)
        expected_cols = [col, f"{col} +", f"{col} -", f"{col} p-value", f"{col} reject", f"{col} p-value corrected"]
        assert set(expected_cols) <= set(table.columns)
        i = list(table.columns).index(f"{col} p-value")
        assert list(table.columns)[i:i + 3] == expected_cols[3:]
        per_run = ref[ref["measure"] == name].pivot(index="topic", columns="run", values="scaled").loc[TOPICS]
        base = per_run["a"].to_numpy(float)
        ps = []
        for run in ("b", "c"):
            x = per_run[run].to_numpy(float)
            row = _row(table, run)
            assert row[f"{col} +"] == (x > base).sum() and row[f"{col} -"] == (x < base).sum()
            p = stats.ttest_rel(x, base).pvalue
            assert row[f"{col} p-value"] == pytest.approx(p, rel=1e-9)
            ps.append(p)
        reject, corrected, _, _ = multipletests(ps, alpha=0.05, method="holm")
        for run, rej, cp in zip(("b", "c"), reject, corrected):
            row = _row(table, run)
            assert row[f"{col} p-value corrected"] == pytest.approx(cp, rel=1e-9)
            assert bool(row[f"{col} reject"]) == bool(rej)
        base_row = _row(table, "a")
        assert math.isnan(base_row[f"{col} p-value"]) and math.isnan(base_row[f"{col} p-value corrected"])
        assert not base_row[f"{col} reject"]
    # the scale is monotone per topic: Scaled(AP@10) wins and loses the topics AP@10 does
    for run in ("b", "c"):
        row = _row(table, run)
        assert (row[f"{scaled[0]} +"], row[f"{scaled[0]} -"]) == (row["AP@10 +"], row["AP@10 -"])
    # ... but the p-values are those of the scaled values, not of the raw ones
    assert _row(table, "b")[f"{scaled[0]} p-value"] != pytest.approx(_row(table, "b")["AP@10 p-value"])


def test_empty_topics_skip_and_the_topics_workaround(data):
    """PyTerrier averages with its own plain mean, not the measure's aggregator: a Scaled
    measure with ``empty_topics="skip"`` (NaN for topic 409) averages to NaN there, though
    ir_measures gives the mean of the other topics. Restricting the topics to those with a
    relevant document (pt.Experiment then drops the others from the qrels) gives
    transform's default (skip) for Scaled and the same topics for the plain measures."""
    skip = _scaled(data, "AP@10", empty_topics="skip")
    table = _experiment(data, [skip, ir_measures.AP @ 10])
    assert table[str(skip)].isna().all()
    pq = _experiment(data, [skip], perquery=True)
    assert pq[pq["value"].isna()]["qid"].unique().tolist() == [EMPTY]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        mean = ir_measures.calc_aggregate([skip], ir_measures.read_trec_qrels(str(data.qrels_path)),
                                          ir_measures.read_trec_run(str(data.run_files[0])))[skip]
    assert not math.isnan(mean)

    judged = data.qrels[data.qrels["label"] > 0][["qid"]].drop_duplicates()
    plain = _scaled(data, "AP@10")
    table = _experiment(data, [plain, skip, ir_measures.AP @ 10], topics=judged)
    ref = _transform(data, ["AP@10"], empty_topics="skip")
    assert EMPTY not in set(ref["topic"])
    want = ref.groupby("run")["scaled"].mean()
    assert mean == pytest.approx(want["a"], abs=1e-12)
    for run in RUNS:
        row = _row(table, run)
        assert row[str(plain)] == pytest.approx(want[run], abs=1e-12)
        assert row[str(skip)] == pytest.approx(want[run], abs=1e-12)
        others = set(TOPICS) - {EMPTY}
        assert row["AP@10"] == pytest.approx(_ir_measures_mean(data, ir_measures.AP @ 10, run, others), abs=1e-12)


def test_irscale_and_trec_eval_names(data, tmp_path):
    """Names ir_measures does not have (irscale's ``nDCG(b=2)@10``, ``DCG(b=10)@10``,
    trec_eval's ``map_cut_10``) are read as irscale reads them, in pt.Experiment too."""
    store = str(tmp_path / "own.h5")
    irscale.build_store(store, "nDCG(b=2)@10,DCG(b=10)@10,AP@10", n_jobs=1)
    names = {"nDCG(b=2)@10": "nDCG(b=2)@10", "DCG(b=10)@10": "DCG(b=10)@10", "map_cut_10": "AP@10"}
    scaled = {name: irscale.Scaled(name, store=store) for name in names}
    pq = _experiment(data, list(scaled.values()), perquery=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        ref = irscale.transform(str(data.qrels_path), [str(f) for f in data.run_files], sorted(set(names.values())),
                                store, empty_topics="zero")
    for name, m in scaled.items():
        got = pq[pq["measure"] == str(m)].set_index(["name", "qid"])["value"].sort_index()
        want = ref[ref["measure"] == names[name]].set_index(["run", "topic"])["scaled"].sort_index()
        assert list(got.index) == list(want.index) and len(got) == len(RUNS) * len(TOPICS)
        np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=0, atol=1e-12, err_msg=name)


def test_transformers_in_batches_equal_result_frames(data):
    """Systems as transformers (``pt.Transformer.from_df``) evaluated in batches of 4
    topics give the table of the result frames."""
    measures = [_scaled(data, "AP@10"), _scaled(data, "RR@10"), ir_measures.AP @ 10]
    topics = data.qrels[["qid"]].drop_duplicates().assign(query="q")
    systems = {name: pt.Transformer.from_df(run) for name, run in data.runs.items()}
    batched = _experiment(data, measures, topics=topics, systems=systems, batch_size=4)
    frames = _experiment(data, measures)
    pd.testing.assert_frame_equal(batched.set_index("name")[frames.columns[1:]], frames.set_index("name"),
                                  rtol=0, atol=1e-12)


def test_graded_qrels_through_pyterrier_labels(tmp_path):
    """PyTerrier's ``label`` column reaches Scaled as ir_measures' ``relevance``: ir_measures'
    nDCG@5 on qrels of levels 0..2 is trec_eval's graded nDCG, nDCG_trec(gains=(0,1,2))@5."""
    rng = random.Random(5)
    docs = [f"D{i:02d}" for i in range(25)]
    qrels = pd.DataFrame([(str(t), d, rng.choice([0, 0, 0, 1, 2])) for t in range(1, 6) for d in docs],
                         columns=["qid", "docno", "label"])
    runs = {n: pd.DataFrame([(str(t), d, float(30 - r)) for t in range(1, 6)
                             for r, d in enumerate(rng.sample(docs, 8))], columns=["qid", "docno", "score"])
            for n in ("x", "y")}
    store = str(tmp_path / "g.h5")
    ndcg = irscale.Scaled(ir_measures.nDCG @ 5, store=store, build_missing=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        pq = pt.Experiment(runs, qrels[["qid"]].drop_duplicates(), qrels, [ndcg, ir_measures.nDCG @ 5], perquery=True)
        ref = irscale.transform(qrels, [r.assign(run=n) for n, r in runs.items()], "nDCG_trec(gains=(0,1,2))@5",
                                store, empty_topics="zero")
    got = pq[pq["measure"] == str(ndcg)].set_index(["name", "qid"])["value"].sort_index()
    want = ref.set_index(["run", "topic"])["scaled"].sort_index()
    assert len(got) == 10
    np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=0, atol=1e-12)
    raw = pq[pq["measure"] == "nDCG@5"].set_index(["name", "qid"])["value"].sort_index()
    np.testing.assert_allclose(raw.to_numpy(float), ref.set_index(["run", "topic"])["raw"].sort_index().to_numpy(float),
                               rtol=0, atol=1e-9)


@pytest.mark.slow      # about 3 s
def test_no_java_and_no_network(data, tmp_path):
    """Importing pyterrier and running pt.Experiment over result frames with Scaled measures
    opens no network connection, starts no Java VM and fetches no Terrier jar (a fresh
    process, HOME in a temporary folder, every socket connection refused and recorded)."""
    script = textwrap.dedent(f"""
        import socket
        tried = []
        def refuse(*args, **kwargs):
            tried.append(repr(args[1:] or kwargs))
            raise OSError("network refused by the test")
        socket.socket.connect = socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        import warnings
        import ir_measures
        import pyterrier as pt
        import irscale
        warnings.simplefilter("ignore")
        qrels = pt.io.read_qrels({str(data.qrels_path)!r})
        runs = {{n: pt.io.read_results(f) for n, f in zip("abc", {[str(f) for f in data.run_files]!r})}}
        table = pt.Experiment(runs, qrels[["qid"]].drop_duplicates(), qrels,
                              [irscale.Scaled(ir_measures.AP@10, store={data.store!r}), ir_measures.AP@10],
                              baseline="a", correction="holm")
        print(len(table), pt.java.started(), tried)
    """)
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin", "TQDM_DISABLE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().split(None, 2) == ["3", "False", "[]"], done.stdout
    assert not (home / ".pyterrier").exists()
    assert not list(home.rglob("*.jar"))


TREC8_RUNS = ["input.CL99SD.gz", "input.AntHoc1.gz", "input.Dm8Nbn.gz", "input.8manexT3D1N0.gz"]


@pytest.mark.slow
def test_trec8_runs(tmp_path):
    """Four TREC-8 ad hoc runs (50 topics, 1000 documents a topic): the Scaled(AP@10) column,
    its baseline columns and AP@10 against transform, scipy, statsmodels and ir_measures."""
    from conftest import SHARED
    folder = SHARED / "trec8"
    if not folder.is_dir():
        print(f"skipping: shared TREC data not found at {folder}")
        pytest.skip(f"shared TREC data not found at {folder}")
    qrels_path, run_paths = folder / "qrels.trec8.adhoc.txt", [folder / "runs" / r for r in TREC8_RUNS]
    store = str(tmp_path / "t.h5")
    irscale.build_store(store, "AP@10", n_jobs=1)
    qrels = pt.io.read_qrels(str(qrels_path))
    runs = {p.name: pt.io.read_results(str(p)) for p in run_paths}
    m = irscale.Scaled(ir_measures.AP @ 10, store=store)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        table = pt.Experiment(runs, qrels[["qid"]].drop_duplicates(), qrels, [m, ir_measures.AP @ 10],
                              baseline=0, correction="holm").set_index("name")
        ref = irscale.transform(str(qrels_path), [str(p) for p in run_paths], "AP@10", store, empty_topics="zero",
                                run_names="file")
    per_run = ref.pivot(index="topic", columns="run", values="scaled")
    assert len(per_run) == 50
    names = [n.removesuffix(".gz") for n in TREC8_RUNS]
    ps = []
    for run, name in zip(TREC8_RUNS, names):
        assert table.loc[run, str(m)] == pytest.approx(per_run[name].mean(), abs=1e-12)
        assert table.loc[run, "AP@10"] == pytest.approx(ref[ref["run"] == name]["raw"].mean(), abs=1e-12)
        if run != TREC8_RUNS[0]:
            p = stats.ttest_rel(per_run[name].to_numpy(float), per_run[names[0]].to_numpy(float)).pvalue
            assert table.loc[run, f"{m} p-value"] == pytest.approx(p, rel=1e-9)
            ps.append(p)
    corrected = multipletests(ps, method="holm")[1]
    np.testing.assert_allclose(table[f"{m} p-value corrected"].to_numpy(float)[1:], corrected, rtol=1e-9)
