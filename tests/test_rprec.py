"""Rprec@N (R-precision of the ranking cut at N) added as one family module: its tables
against brute force over every feasible run, the store, the CLI, the service, and
transforms of TREC-8 against trec_eval's own ``Rprec`` for every topic with RB <= N."""
import gzip
import itertools
import os
import warnings
from fractions import Fraction

import numpy as np
import pytest

import irscale
from irscale.cli import main
from irscale.scales.runs.inputs import read_runs
from irscale.scales.runs.judging import qrels_table_rbs


def _rprec(run, rb):
    """Definition: relevant documents in the top min(RB, N), divided by RB."""
    return Fraction(sum(run[:min(rb, len(run))]), rb)


def _oracle(n, rb):
    runs = [r for r in itertools.product((0, 1), repeat=n) if sum(r) <= rb]      # the feasible runs
    vals = [_rprec(r, rb) for r in runs]
    distinct = sorted(set(vals))
    index = {v: i + 1 for i, v in enumerate(distinct)}
    return runs, vals, distinct, [index[v] for v in vals]


@pytest.mark.parametrize("n", [1, 2, 5, 8])
def test_tables_equal_brute_force(n):
    for rb in list(range(1, n + 1)) + [n + 1, n + 5]:
        s = irscale.scale(f"Rprec@{n}", rb=rb)
        runs, vals, distinct, ranks = _oracle(n, rb)
        assert s.k == len(distinct) == min(rb, n) + 1
        assert s.n_runs == len(runs)
        assert s.fractions == distinct
        assert s.counts.tolist() == np.bincount(np.array(ranks) - 1).tolist()
        assert s.rank_runs(np.array(runs)).tolist() == ranks
        assert s.rank([float(v) for v in vals]).tolist() == ranks
        m = irscale.parse_measure(f"Rprec@{n}")
        assert m.values_of_ids(m.ids_of_runs(np.array(runs, np.uint8)), rb).tolist() == [float(v) for v in vals]
        assert [m.exact_value(r, rb) for r in runs] == vals


def test_recall_base_and_infeasible_runs():
    m = irscale.parse_measure("Rprec@6")
    assert str(m) == "Rprec@6" and m.rb_dependent and m.table_rb(4) == (4,) and m.table_rb((9,)) == (9,)
    with pytest.raises(irscale.RecallBaseError):
        irscale.scale("Rprec@6")
    with pytest.raises(irscale.RunError, match="cannot occur"):
        irscale.scale("Rprec@6", rb=2).rank_runs([[1, 1, 1, 0, 0, 0]])
    common = irscale.scale("Rprec@6", rb=m.common_rb())          # every run feasible: ordered like P@6
    runs = np.array(list(itertools.product((0, 1), repeat=6)))
    assert common.rank_runs(runs).tolist() == irscale.scale("P@6").rank_runs(runs).tolist()


def test_store_cli_and_service(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient
    from irscale.service import create_app
    path = tmp_path / "t.h5"
    assert main(["build", "-m", "Rprec@8", "--rb", "(3),(20)", "--out", str(path), "-q"]) == 0
    names = [t["name"] for t in irscale.open_store(path).tables()]
    assert names == ["Rprec@8 rb=(3)", "Rprec@8 rb=(20)"]
    store = irscale.open_store(path)
    store.verify()
    for rb in (3, 20):
        mem, disk = irscale.scale("Rprec@8", rb=rb), store.scale("Rprec@8", rb=rb)
        assert np.array_equal(mem.values, disk.values) and np.array_equal(mem.counts, disk.counts)
    capsys.readouterr()
    assert main(["lookup", str(path), "Rprec@8", "0", "0.3333333333333333", "1", "--rb", "3"]) == 0
    assert [line.split("\t")[1] for line in capsys.readouterr().out.splitlines()[1:]] == ["1", "2", "4"]
    client = TestClient(create_app(path))
    r = client.post("/v1/rank", json={"measure": "Rprec@8", "rb": 20, "values": [0.0, 0.4]})
    assert r.status_code == 200 and r.json()["rank"] == [1, 9] and r.json()["k"] == 9
    r = client.post("/v1/rank", json={"measure": "Rprec@8", "rb": [3], "runs": [[1, 0, 1, 0, 0, 0, 0, 0]]})
    assert r.status_code == 200 and r.json()["rank"] == [3]
    r = client.post("/v1/rank", json={"measure": "Rprec@8", "rb": 5, "values": [0.2]})
    assert r.status_code == 200 and r.json()["rank"] == [2] and r.json()["k"] == 6     # no table: the closed form
    assert "Rprec@8" in {t["measure"] for t in client.get("/v1/tables").json()["tables"]}


def _trec_eval_rprec(folder, runs=None):
    """(run, topic) -> trec_eval's printed Rprec."""
    out = {}
    for path in sorted(folder.glob("eval.*.gz")):
        run, rows = None, []
        with gzip.open(path, "rt") as f:
            for line in f:
                name, topic, value = line.split()
                if name == "runid":
                    run = value
                elif name == "Rprec" and topic != "all":
                    rows.append((topic, value))
        if runs is None or run in runs:
            out.update({(run, topic): value for topic, value in rows})
    return out


def _equal_printed(raw: float, printed: str) -> bool:
    return abs(Fraction(raw) - Fraction(printed)) <= Fraction(1, 20000)


def test_raw_equals_trec_eval_on_trec8(shared_data):
    """All 129 runs at N = 20: Rprec@20 is trec_eval's Rprec on every topic with RB <= 20."""
    trec8 = shared_data / "trec8"
    scores = irscale.transform(trec8 / "qrels.trec8.adhoc.txt", trec8 / "runs", "Rprec@20")
    reference = _trec_eval_rprec(trec8 / "trec_eval")
    small = scores[scores.rb <= 20]
    assert small.topic.nunique() == 8 and len(small) == 8 * 129
    for row in small.itertuples():
        assert _equal_printed(row.raw, reference[(row.run, row.topic)]), row
    # beyond RB = 20 only the top 20 count: at most 20 / RB
    big = scores[scores.rb > 20]
    assert (big.raw <= 20 / big.rb + 1e-12).all()


def _check_scaled(scores, reference, n):
    for row in scores[scores.rb <= n].itertuples():
        assert _equal_printed(row.raw, reference[(row.run, row.topic)]), row
    for row in scores.itertuples():     # rank = relevant in the top min(RB, N) + 1, k = min(RB, N) + 1
        j = round(row.raw * row.rb)
        assert (row.rank, row.k) == (j + 1, min(row.rb, n) + 1), row
        assert row.n_runs == sum(int(np.prod(range(n - c + 1, n + 1)) // np.prod(range(1, c + 1)))
                                 for c in range(min(row.rb, n) + 1))


def test_transform_with_tables_on_trec8(shared_data, tmp_path):
    """Scaled Rprec@12 of three TREC-8 runs (its closed form: nothing to build)."""
    trec8 = shared_data / "trec8"
    runs = [trec8 / "runs" / f"input.{r}.gz" for r in ("1", "CL99SD", "weaver2")]
    scores = irscale.transform(trec8 / "qrels.trec8.adhoc.txt", runs, "Rprec@12", tmp_path / "t.h5",
                               build_missing=True, n_jobs=2)
    _check_scaled(scores, _trec_eval_rprec(trec8 / "trec_eval"), 12)
    assert scores[scores.rb <= 12].topic.nunique() == 2
    assert not (tmp_path / "t.h5").exists()


#: IRSCALE_RPREC_EVERY_RB=1 (or ``scripts/long_checks.py rprec``): every topic of TREC-8 in
#: test_transform_with_tables_on_trec8_n20, the tables of its 44 recall bases (about 2 s each)
EVERY_RB_ENV = "IRSCALE_RPREC_EVERY_RB"
#: Its recall bases in CI: every one <= N = 20 (the topics compared with trec_eval), the two
#: past N and the largest; the tables of the 36 others (N < RB < 347) differ from these only
#: in the divisor RB
CI_RBS = {6, 11, 13, 16, 17, 21, 22, 347}


def _trec8_topics(qrels_path, out, rbs):
    """A copy of the TREC-8 qrels with the topics whose recall base is in ``rbs`` (all: None)."""
    lines = qrels_path.read_text().splitlines(keepends=True)
    relevant: dict = {}
    for line in lines:
        topic, _, _, level = line.split()
        relevant[topic] = relevant.get(topic, 0) + (int(level) > 0)
    out.write_text("".join(line for line in lines if rbs is None or relevant[line.split()[0]] in rbs))
    return out


@pytest.mark.slow
def test_transform_with_tables_on_trec8_n20(shared_data, tmp_path):
    """All 129 runs at N = 20 through stored tables for the recall bases of the qrels equal
    the closed form, and trec_eval: in CI the topics of the recall bases CI_RBS (12 topics,
    8 tables); with IRSCALE_RPREC_EVERY_RB=1 all 50 topics (44 tables, about a minute and
    a half). tests/test_closed_scales.py::test_equal_to_tables checks Rprec@20's tables
    against the closed form at recall bases 1, 3, 19, 20 and 25."""
    trec8 = shared_data / "trec8"
    every = os.environ.get(EVERY_RB_ENV, "").strip() not in ("", "0")
    qrels = irscale.read_qrels(_trec8_topics(trec8 / "qrels.trec8.adhoc.txt", tmp_path / "qrels.txt",
                                             None if every else CI_RBS))
    m = irscale.parse_measure("Rprec@20")
    rbs = qrels_table_rbs(qrels, m)
    assert len(rbs) == (44 if every else len(CI_RBS)) and len(qrels.topics) == (50 if every else 12)
    irscale.build_store(tmp_path / "t.h5", [m], rbs={str(m): rbs}, n_jobs=2)
    assert type(irscale.open_store(tmp_path / "t.h5").scale(m, rbs[0])).__name__ == "FractionScale"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "run .*not in the qrels", irscale.IrscaleWarning)   # topics left out
        runs = read_runs(trec8 / "runs")     # read once: both transforms compare scales, not readers
        scores = irscale.transform(qrels, runs, "Rprec@20", tmp_path / "t.h5", n_jobs=2)
        closed = irscale.transform(qrels, runs, "Rprec@20", tmp_path / "none.h5", n_jobs=2)
    cols = ["run", "topic", "raw", "rank", "k", "scaled", "n_runs"]
    assert scores[cols].equals(closed[cols])
    _check_scaled(scores, _trec_eval_rprec(trec8 / "trec_eval"), 20)
