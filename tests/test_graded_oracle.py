"""Graded rank oracles behind the scale interface (irscale.scales.tables.graded_oracle): for
count vectors that bound several grades they answer as the tables of the feasible runs do
(every run, every rank's value, value lookups) where both exist, are stored and read back
as oracles, and serve the evaluation path (compare on graded qrels at N = 20)."""
import warnings

import numpy as np
import pytest

import irscale
from irscale.errors import OracleListError, RunError
from irscale.scales.tables import graded_mitm, graded_oracle, oracles
from irscale.scales.tables.build_options import BuildOptions
from irscale.scales.tables.entries import LAYOUT as ENTRIES


def _pair(name, vec, monkeypatch):
    """(the oracle's scale, the table's scale) of ``name`` for the count vector ``vec``."""
    m = irscale.parse_measure(name)
    monkeypatch.setattr(graded_oracle, "TABLE_RUNS", 0)          # the oracle even where a table is cheap
    assert graded_oracle.serves(m, vec)
    oracle = oracles.oracle_table(m, vec)
    [table] = ENTRIES.build([m], {m: [vec]}, BuildOptions())
    return oracle.scale(vec), table.scale(vec)


CASES = [("nDCG_trec(gains=(0,1,2,3))@7", (3, 2, 1)), ("nDCG_trec(gains=(0,1,2,3))@7", (7, 1, 0)),
         ("nDCG(b=2,gains=(0,1,3))@8", (2, 3)), ("nDCG_trec(gains=(0,1,2,3,4,5))@5", (1, 2, 0, 1, 5))]


@pytest.mark.parametrize("name,vec", CASES)
def test_oracle_answers_as_the_table_of_the_feasible_runs(name, vec, monkeypatch):
    o, t = _pair(name, vec, monkeypatch)
    assert type(o).__name__ == "GradedOracleScale" and o.table.layout == "oracle"
    assert (o.k, o.n_runs) == (t.k, t.n_runs)
    m = o.measure
    ids = np.arange(m.id_count(), dtype=np.int64)
    runs = m.runs_of_ids(ids)
    feasible = ids[np.all([(runs == g).sum(axis=1) <= c for g, c in enumerate(vec, 1)], axis=0)]
    assert o.rank_ids(feasible).tolist() == t.rank_ids(feasible).tolist()
    ranks = np.unique(np.concatenate([[1, t.k], np.random.default_rng(0).integers(1, t.k + 1, 40)]))
    assert np.allclose(o.values_of_ranks(ranks), t.values[ranks - 1], rtol=1e-14, atol=0)
    assert o.rank(t.values[ranks - 1]).tolist() == ranks.tolist()
    assert o.rank(t.values[ranks - 1], decimals=4, errors="zero").tolist() == \
        t.rank(t.values[ranks - 1], decimals=4, errors="zero").tolist()
    assert o.value_range() == pytest.approx((t.values[0], t.values[-1]), rel=1e-14)


def test_many_probes_rebuild_the_oracle_with_the_default_side_b(monkeypatch):
    """A scale answers with the quick oracle it opened with (side B of FEW_B entries) until
    its queries times that oracle's side A pass MANY_PROBES, then with the default split;
    both rank as the table does."""
    o, t = _pair(*CASES[0], monkeypatch)
    m = o.measure
    ids = np.arange(m.id_count(), dtype=np.int64)
    runs = m.runs_of_ids(ids)
    feasible = ids[np.all([(runs == g).sum(axis=1) <= c for g, c in enumerate(CASES[0][1], 1)], axis=0)]
    monkeypatch.setattr(graded_oracle, "MANY_PROBES", 10**15)
    first = o.rank_ids(feasible)
    assert set(o.table.built) == {graded_oracle.FEW_B}
    monkeypatch.setattr(graded_oracle, "MANY_PROBES", 0)
    assert o.rank_ids(feasible).tolist() == first.tolist() == t.rank_ids(feasible).tolist()
    assert graded_mitm.B_LIMIT in o.table.built


def test_what_it_does_not_count_is_said(monkeypatch):
    o, _ = _pair(*CASES[0], monkeypatch)
    for what in (lambda: o.values, lambda: o.counts, lambda: o.midranks_of_ranks([1]), lambda: o.value_blocks()):
        with pytest.raises(OracleListError, match="does not count the runs"):
            what()
    m = o.measure
    bad = np.zeros((1, m.n), np.int64)
    bad[0, :3] = 3                                                  # three documents of grade 3, c_3 = 1
    with pytest.raises(RunError, match="grade 3"):
        o.rank_runs(bad)


def test_served_where_tables_cost_most():
    m = irscale.parse_measure("nDCG_trec(gains=(0,1,2,3))@20")
    assert graded_oracle.serves(m, (20, 1, 4)) and graded_oracle.serves(m, (10, 12, 3))
    assert not graded_oracle.serves(m, (20, 20, 4))                 # one grade bounded: the one-grade oracle
    assert not graded_oracle.serves(m, (20, 0, 0))                  # 2^20 feasible runs: a table
    assert not graded_oracle.serves(irscale.parse_measure("nDCG_trec(gains=(0,1,2,3))@10"), (3, 2, 1))


def _random_runs(rng, vec, count, n=20):
    runs = np.zeros((count, n), np.int64)
    for r in runs:
        pos, at = rng.permutation(n), 0
        for g, c in enumerate(vec, 1):
            take = int(rng.integers(0, min(c, n - at) + 1))
            r[pos[at:at + take]] = g
            at += take
    return runs


@pytest.mark.slow           # 9 s: CI runs it
def test_stored_read_back_and_verified(tmp_path):
    name, vec = "nDCG_trec(gains=(0,1,2,3))@20", (20, 1, 4)
    store = irscale.build_store(tmp_path / "s", name, rb_counts=vec, n_jobs=1)
    info = {t.name: t for t in store.tables()}[f"{name} rb=(20,1,4)"]
    assert info.layout == "oracle" and info.n_runs == graded_oracle.feasible_space_size(20, vec)
    assert irscale.open_store(tmp_path / "s").verify() == [info.name]
    scale = irscale.open_store(tmp_path / "s").scale(name, vec)
    assert type(scale).__name__ == "GradedOracleScale"
    direct = graded_mitm.oracle_of_measure(scale.measure, vec)          # the default split, built apart
    assert scale.k == info.n_entries == direct.k
    runs = _random_runs(np.random.default_rng(1), vec, 300)
    got = scale.rank_runs(runs)
    assert got.tolist() == direct.rank_runs(runs).tolist()
    ranks = np.unique(got)[:20]
    assert scale.rank(scale.values_of_ranks(ranks)).tolist() == ranks.tolist()


@pytest.mark.slow           # 11 s: CI runs it
def test_transform_scales_graded_ndcg_at_20(tmp_path):
    """Topics whose counts bound two grades at N = 20 get exact scales from transform, equal
    to ranking their judged runs with the oracles directly."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    counts = {"1": (3, 2, 1), "2": (9, 4, 0), "3": (25, 1, 2)}
    with open(qrels, "w") as f:
        for q, cs in counts.items():
            for g, c in enumerate(cs, 1):
                for i in range(c):
                    f.write(f"{q} 0 d{q}-{g}-{i} {g}\n")
    rng = np.random.default_rng(2)
    grades = {}
    with open(run, "w") as f:
        for q, cs in counts.items():
            docs = [(f"d{q}-{g}-{i}", g) for g, c in enumerate(cs, 1) for i in range(c)] + \
                [(f"x{j}", 0) for j in range(20)]
            picked = [docs[i] for i in rng.permutation(len(docs))[:20]]
            grades[q] = [g for _, g in picked]
            for rank, (d, _) in enumerate(picked, 1):
                f.write(f"{q} Q0 {d} {rank} {30 - rank} a\n")
    scores = irscale.transform(qrels, run, "nDCG@20", store=tmp_path / "s")
    m = irscale.parse_measure("nDCG_trec(gains=(0,1,2,3))@20")
    for q, cs in counts.items():
        row = scores[scores.topic == q].iloc[0]
        vec = tuple(min(c, 20) for c in cs)
        want = graded_mitm.oracle_of_measure(m, vec)
        assert row["k"] == want.k and row["rank"] == want.rank_runs(np.array([grades[q]]))[0], (q, row)
        assert row["scaled"] == pytest.approx((row["rank"] - 1) / (row["k"] - 1))


def test_transform_with_midranks_leaves_the_oracles_cells_empty_and_says_so(tmp_path, monkeypatch):
    """Mid-ranks asked of a measure whose count vector a graded oracle serves: its midrank
    cells are empty (with one warning naming why), its ranks are those of the table, and
    the same transform with the table fills them."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"1 0 d{g}-{i} {g}\n" for g, c in enumerate((3, 2, 1), 1) for i in range(c)))
    docs = ["d3-0", "x0", "d1-0", "d2-1", "x1", "d1-2", "d2-0"]
    run.write_text("".join(f"1 Q0 {d} {r} {9 - r} a\n" for r, d in enumerate(docs, 1)))
    name = "nDCG_trec(gains=(0,1,2,3))@7"
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        table = irscale.transform(qrels, run, name, store=tmp_path / "t", midranks=True)
    assert not any("mid-rank" in str(w.message) for w in said) and table.midrank.notna().all()
    monkeypatch.setattr(graded_oracle, "TABLE_RUNS", 0)
    with pytest.warns(UserWarning, match="mid-ranks") as said:
        oracle = irscale.transform(qrels, run, name, store=tmp_path / "o", midranks=True)
    assert oracle.midrank.isna().all()
    assert oracle[["raw", "rank", "k", "scaled"]].equals(table[["raw", "rank", "k", "scaled"]])


@pytest.mark.parametrize("name", ["s.tsv", "s.csv.gz", "s.parquet"])
def test_what_scaled_each_topic_survives_the_scores_file(tmp_path, monkeypatch, name):
    """A measure answered by a graded oracle for one topic and by a table for the other: the
    ``scale`` column says which per row, and a scores file read back says the mix as the
    transform did (in every format, csv included)."""
    from irscale.enumerate.runspace import feasible_space_size
    from irscale.scales.runs.scores import read_scores, write_scores

    qrels, run = tmp_path / "qrels", tmp_path / "run"
    counts = {"1": (3, 2, 1), "2": (1, 1, 1)}
    qrels.write_text("".join(f"{q} 0 d{q}-{g}-{i} {g}\n" for q, cs in counts.items()
                             for g, c in enumerate(cs, 1) for i in range(c)))
    run.write_text("".join(f"{q} Q0 d{q}-{g}-0 {g} {9 - g} a\n" for q in counts for g in (1, 2, 3)))
    monkeypatch.setattr(graded_oracle, "TABLE_RUNS", feasible_space_size(7, counts["2"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = irscale.transform(qrels, run, "nDCG_trec(gains=(0,1,2,3))@7", store=tmp_path / "s")
    assert scores.set_index("topic")["scale"].to_dict() == {"1": "exact: rank oracle", "2": "exact: table"}
    write_scores(scores, tmp_path / name)
    back = read_scores(tmp_path / name)
    [said] = back.attrs["scale_kinds"].values()
    assert "rank oracle (1 of 2 " in said and "table (1)" in said     # topics (csv) or count vectors
    assert back["scale"].tolist() == scores["scale"].tolist()
    old = scores.drop(columns=["scale"])                # a file written before the column
    write_scores(old, tmp_path / name)
    assert read_scores(tmp_path / name)["scale"].isna().all()
