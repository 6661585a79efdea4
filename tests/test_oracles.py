"""Rank oracles: scales counted on demand, checked against brute force
(tests/oracle_reference.py: every run scored from the definitions with fractions and
50-digit mpmath) and against the tables, for every run and every recall base; K against
closed forms; the store's tiny oracle entries; N up to 40."""
import os
from fractions import Fraction

import h5py
import numpy as np
import oracle_reference as ref
import pytest
from click.testing import CliRunner
from store_files import rewrite, table_file

import irscale
from irscale.cli import cli
from irscale.errors import CorruptStoreError, MeasureError, OracleListError
from irscale.scales.analysis import spacing
from irscale.scales.runs.inputs import read_runs
from irscale.scales.tables import oracle_form, oracles
from irscale.scales.tables.scale import AMBIGUOUS, FOUND, NOT_A_VALUE

#: (measure, reference value function, levels): every family with a rank oracle.
REFERENCES = [
    ("RBP(p=0.8)@{n}", ref.rbp(Fraction(4, 5)), 2),
    ("RBP(p=0.6)@{n}", ref.rbp(Fraction(3, 5)), 2),
    ("DCG(b=2)@{n}", ref.dcg(2), 2),
    ("DCG(b=3)@{n}", ref.dcg(3), 2),
    ("DCG(b=10)@{n}", ref.dcg(10), 2),
    ("nDCG(b=2)@{n}", ref.ndcg(2), 2),
    ("nDCG(b=10)@{n}", ref.ndcg(10), 2),
    ("nDCG_trec@{n}", ref.ndcg_trec(), 2),
    ("P@{n}", ref.precision(), 2),
    ("R@{n}", ref.recall(), 2),
    ("F1@{n}", ref.f1(), 2),
    ("RR@{n}", ref.rr(), 2),
]


def _oracle(name, rb):
    return irscale.scale(name, rb=rb, layout="oracle")


def _check_against(scale, values, counts, ranks, mids, first, feasible_ids):
    assert scale.k == len(values) and scale.n_runs == sum(counts)
    got = scale.rank_ids(feasible_ids)
    assert got.tolist() == [ranks[i] for i in feasible_ids]
    assert np.allclose(scale.midranks_of_ranks(got), [mids[i] for i in feasible_ids])
    assert scale.counts.tolist() == counts
    assert scale.representatives.tolist() == first
    assert np.allclose(scale.values, values, rtol=1e-13, atol=1e-15)
    assert scale.rank(scale.values).tolist() == list(range(1, scale.k + 1))


@pytest.mark.parametrize("name,value,levels", REFERENCES, ids=[r[0] for r in REFERENCES])
def test_oracle_equals_brute_force(name, value, levels):
    n = 9 if "DCG" in name else 11
    name = name.format(n=n)
    m = irscale.parse_measure(name)
    for rb in (range(1, n + 2) if m.rb_dependent else [None]):
        values, counts, ranks, mids, first = ref.reference_scale(value, n, levels, rb)
        ids = np.array([i for i, r in enumerate(ranks) if r], np.int64)
        _check_against(_oracle(name, rb), values, counts, ranks, mids, first, ids)


@pytest.mark.parametrize("name,value,n,levels", [
    ("DCG(b=2,gains=(0,1,3))@6", ref.dcg(2, (0, 1, 3)), 6, 3),
    ("RBP(gains=(0,1,3),p=0.8)@6", ref.rbp(Fraction(4, 5), (0, 1, 3)), 6, 3),
    ("DCG(b=3,gains=(0,2,3,5))@5", ref.dcg(3, (0, 2, 3, 5)), 5, 4),
])
def test_graded_oracles_equal_brute_force(name, value, n, levels):
    values, counts, ranks, mids, first = ref.reference_scale(value, n, levels)
    _check_against(_oracle(name, None), values, counts, ranks, mids, first, np.arange(levels ** n))


def test_graded_rbp_with_gains_congruent_modulo_c_has_no_oracle():
    """gains 0 and 2 with p = 1/2 (c = 2): (0, 2) and (1, 0) share a value, so runs are not
    values; the oracle is refused with the reason and the table serves."""
    m = irscale.parse_measure("RBP(gains=(0,1,2),p=0.5)@3")
    assert "oracle" not in m.layouts and "multiple of c = 2" in m.oracle_reason()
    with pytest.raises(MeasureError, match="no rank oracle"):
        irscale.scale(m, layout="oracle")
    values, counts, *_ = ref.reference_scale(ref.rbp(Fraction(1, 2), (0, 1, 2)), 3, 3)
    assert irscale.scale(m).counts.tolist() == counts and max(counts) > 1


@pytest.mark.parametrize("n", [11])
@pytest.mark.parametrize("family", ["RBP(p=0.8)", "RBP(p=0.9)", "DCG(b=2)", "DCG(b=10)", "nDCG(b=2)", "nDCG(b=10)",
                                    "nDCG_trec", "P", "R", "F1", "RR"])
def test_oracle_equals_table_for_every_run_and_recall_base(family, n):
    _oracle_equals_table(f"{family}@{n}")


#: At N = 20 the recall-base-dependent measures (nDCG) are checked for the recall bases at
#: the edges and the middle (1, 2, N / 2, N - 1, N, N + 1): each of the 21 takes about 5 s,
#: and test_oracle_equals_table_for_every_run_and_recall_base checks every one at N = 11.
#: IRSCALE_ORACLE_EVERY_RB=1 (or scripts/check_oracles_n20.py) checks all 21 at N = 20.
EVERY_RB_ENV = "IRSCALE_ORACLE_EVERY_RB"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["RBP(p=0.8)@20", "DCG(b=2)@20", "nDCG(b=2)@20", "DCG(b=10)@20", "nDCG(b=10)@20"])
def test_oracle_equals_table_at_n20(name):
    every = os.environ.get(EVERY_RB_ENV, "").strip() not in ("", "0")
    _oracle_equals_table(name, rbs=None if every else (1, 2, 10, 19, 20, 21))


def _popcount(ids):
    """The number of 1 bits of each id (relevant documents of the run), vectorised
    (numpy 1.24 has no bitwise_count)."""
    return np.unpackbits(ids.astype(">u8").view(np.uint8)).reshape(len(ids), 64).sum(axis=1)


def _oracle_equals_table(name, rbs=None):
    """``rbs``: the recall bases to check (of an rb-dependent measure); None: every one, 1 to N + 1."""
    m = irscale.parse_measure(name)
    ids = np.arange(m.id_count())
    relevant = _popcount(ids) if m.rb_dependent else None
    for rb in ((range(1, m.n + 2) if rbs is None else rbs) if m.rb_dependent else [None]):
        o, t = _oracle(name, rb), irscale.scale(name, rb=rb, layout="table")
        feasible = ids if rb is None else ids[relevant <= rb]
        assert o.k == t.k and o.n_runs == t.n_runs
        ro, rt = o.rank_ids(feasible), t.rank_ids(feasible)
        assert np.array_equal(ro, rt)
        assert np.array_equal(o.midranks_of_ranks(ro), t.midranks_of_ranks(rt))
        if o.k <= oracle_form.LIST_LIMIT:
            assert np.array_equal(o.counts, t.counts) and np.array_equal(o.representatives, t.representatives)


def test_unlisted_paths_equal_the_listed_ones(monkeypatch):
    """With listing switched off, ranks of values, values of ranks (selection) and mid-ranks
    (runs view) are computed by counting and equal the listed results."""
    listed = {rb: _oracle("nDCG(b=2)@10", rb) for rb in (3, 10)}
    expect = {rb: (s.values.copy(), s.midranks.copy()) for rb, s in listed.items()}
    monkeypatch.setattr(oracles, "LIST_LIMIT", 0)
    m = irscale.parse_measure("nDCG(b=2)@10")
    for rb, (values, mids) in expect.items():
        s = oracles.oracle_table(m).scale(rb)
        ids = np.flatnonzero([bin(i).count("1") <= rb for i in range(2 ** 10)])
        ranks = s.rank_ids(ids)                    # remembers the keys of these ranks
        assert np.array_equal(s.midranks_of_ranks(ranks), listed[rb].midranks_of_ranks(ranks))
        s = oracles.oracle_table(m).scale(rb)      # nothing remembered: every rank selected
        q = np.arange(1, s.k + 1)
        assert np.allclose(s.values_of_ranks(q), values, rtol=1e-14)
        assert np.array_equal(s.midranks_of_ranks(q), mids)
        assert s.rank(values).tolist() == q.tolist()
        with pytest.raises(OracleListError, match="value_blocks streams every value"):
            _ = s.values


def test_value_lookups_say_what_they_found():
    s = _oracle("DCG(b=2)@10", None)
    v = s.values
    gap = np.diff(v)
    i = int(np.argmax(gap))
    got = s.lookup([v[3], (v[i] + v[i + 1]) / 2, v[-1] * 2, np.nan])
    assert got.status.tolist() == [FOUND, NOT_A_VALUE, NOT_A_VALUE, 3] and got.ranks[0] == 4
    j = int(np.argmin(gap))
    wide = s.lookup([v[j]], atol=float(gap[j]) * 2)
    assert wide.status[0] == AMBIGUOUS


@pytest.mark.parametrize("name,k", [("DCG(b=2)@30", 3 * 2 ** 28), ("DCG(b=10)@30", 11 * 2 ** 20),
                                    ("DCG(b=10)@40", 11 * 2 ** 30), ("RBP(p=0.8)@40", 2 ** 40), ("P@40", 41),
                                    ("RR@40", 41), ("DCG(b=2)@16", 3 * 2 ** 14)])
def test_k_equals_the_closed_forms(name, k):
    assert irscale.parse_measure(name).grouping().k == k
    assert _oracle(name, None if "R@" not in name or "RR" in name else 40).k == k


def test_k_of_dcg_b2_at_40_from_the_groups_by_hand():
    """DCG(b=2)@40: the ranks 1, 2, 4, 8, 16, 32 (discounts 1, 1, 1/2, 1/3, 1/4, 1/5) give
    the rational group; 3, 9, 27; 5, 25; 6, 36 groups of distinct sums; 27 single ranks."""
    from itertools import combinations
    rational = [Fraction(1), Fraction(1), Fraction(1, 2), Fraction(1, 3), Fraction(1, 4), Fraction(1, 5)]
    sums = {sum(c, Fraction(0)) for r in range(7) for c in combinations(rational, r)}
    assert irscale.parse_measure("DCG(b=2)@40").grouping().k == len(sums) * 8 * 4 * 4 * 2 ** 27 == 824633720832


@pytest.mark.parametrize("n", [33, 40])
def test_closed_form_measures_beyond_tables(n):
    rng = np.random.default_rng(n)
    runs = (rng.random((50, n)) < 0.4).astype(np.uint8)
    runs[0] = 0
    rel = runs.sum(axis=1)
    assert _oracle(f"P@{n}", None).rank_runs(runs).tolist() == (rel + 1).tolist()
    rb = 45
    assert _oracle(f"R@{n}", rb).rank_runs(runs).tolist() == (rel + 1).tolist()
    first = np.where(rel > 0, np.argmax(runs, axis=1) + 1, 0)
    want = np.where(first > 0, n + 2 - first, 1)
    assert _oracle(f"RR@{n}", None).rank_runs(runs).tolist() == want.tolist()
    assert irscale.parse_measure(f"AP@{n}").scales_reason().startswith("no exact or bounded scale exists for AP")


def test_rbp_at_40_orders_runs_by_their_exact_values():
    """Every run of binary RBP(p=0.8)@40 has a value of its own: ranks of sampled runs are
    ordered as their exact values, 1 for the empty run and 2^40 for the full one."""
    s = _oracle("RBP(p=0.8)@40", None)
    rng = np.random.default_rng(7)
    runs = (rng.random((300, 40)) < 0.5).astype(np.uint8)
    runs[0], runs[1] = 0, 1
    ranks = s.rank_runs(runs)
    exact = [ref.rbp(Fraction(4, 5))(tuple(r), None) for r in runs.tolist()]
    order = sorted(range(len(exact)), key=exact.__getitem__)
    assert all(ranks[a] < ranks[b] for a, b in zip(order, order[1:]))
    assert ranks[0] == 1 and ranks[1] == 2 ** 40
    # a run and the run after it in value order: the oracle counts the values between them
    m = irscale.parse_measure("RBP(p=0.8)@40")
    values = m.values_of_ids(m.ids_of_runs(runs))
    assert s.rank(values[:2]).tolist() == [1, 2 ** 40]


def test_ndcg_at_40_ranks_agree_with_exact_order():
    """nDCG(b=2)@40 at RB = 12 (no table can exist): ranks of sampled feasible runs are
    ordered as their exact values, equal exactly for equal values."""
    s = _oracle("nDCG(b=2)@40", 12)
    rng = np.random.default_rng(9)
    runs = np.zeros((200, 40), np.uint8)
    for row in runs:
        row[rng.choice(40, int(rng.integers(0, 13)), replace=False)] = 1
    runs[1:3] = 0
    runs[1, [0, 2]], runs[2, [1, 2]] = 1, 1          # equal values: ranks 1 and 2 discount alike
    ranks = s.rank_runs(runs)
    exact = [ref.ndcg(2)(tuple(r), 12) for r in runs.tolist()]
    order = sorted(range(len(exact)), key=exact.__getitem__)
    for a, b in zip(order, order[1:]):
        same = abs(exact[a] - exact[b]) < 1e-40
        assert (ranks[a] == ranks[b]) if same else ranks[a] < ranks[b]
    assert ranks[1] == ranks[2] and s.rank_runs(np.zeros((1, 40), np.uint8))[0] == 1


def test_value_lookups_with_rounded_values_equal_the_table():
    """Values rounded to 4 decimals (trec_eval's output): statuses, ranks and matched values
    of the oracle equal the table's, and wide tolerances stay fast (pairs between the edges
    of a tolerance are counted, not listed)."""
    name = "nDCG(b=2)@14"
    for rb in (4, 14):
        o, t = _oracle(name, rb), irscale.scale(name, rb=rb, layout="table")
        m = o.measure
        rng = np.random.default_rng(rb)
        runs = (rng.random((400, 14)) < 0.3).astype(np.uint8)
        runs = np.where(np.cumsum(runs, axis=1) > rb, 0, runs).astype(np.uint8)
        x = np.round(m.values_of_judged(runs, np.full(400, 14), rb), 4)
        a, b = o.lookup(x, decimals=4), t.lookup(x, decimals=4)
        assert np.array_equal(a.status, b.status) and np.array_equal(a.ranks, b.ranks)
        assert np.allclose(a.matched, b.matched, rtol=1e-14, equal_nan=True)
        assert (a.status == AMBIGUOUS).any() and (a.status == FOUND).any()


@pytest.mark.slow
def test_dcg_at_40_ranks_agree_with_exact_order():
    s = _oracle("DCG(b=2)@40", None)
    rng = np.random.default_rng(8)
    runs = (rng.random((200, 40)) < 0.3).astype(np.uint8)
    ranks = s.rank_runs(runs)
    exact = [ref.dcg(2)(tuple(r), None) for r in runs.tolist()]
    order = sorted(range(len(exact)), key=exact.__getitem__)
    for a, b in zip(order, order[1:]):
        same = abs(exact[a] - exact[b]) < 1e-40
        assert (ranks[a] == ranks[b]) if same else ranks[a] < ranks[b]


# -- the store ---------------------------------------------------------------------------------------
def test_store_keeps_oracles_as_attributes(tmp_path):
    path = tmp_path / "o.h5"
    names = "RBP(p=0.8)@12,DCG(b=2)@12,nDCG(b=2)@12,AP@8"
    store = irscale.build_store(path, names)
    layouts = {t["measure"]: t["layout"] for t in store.tables()}
    assert layouts == {"RBP(p=0.8)@12": "oracle", "DCG(b=2)@12": "oracle", "nDCG(b=2)@12": "oracle",
                       "AP@8": "entries"}
    for name in layouts:
        with h5py.File(table_file(path, name), "r") as g:
            if layouts[name] == "oracle":
                assert len(g) == 0               # no datasets
    for rb in (1, 5, 12, 20):
        a, b = store.scale("nDCG(b=2)@12", rb=rb), irscale.scale("nDCG(b=2)@12", rb=rb, layout="table")
        assert a.k == b.k and np.array_equal(a.rank_ids(np.arange(64)[[bin(i).count("1") <= rb
                                                                       for i in range(64)]]),
                                             b.rank_ids(np.arange(64)[[bin(i).count("1") <= rb
                                                                       for i in range(64)]]))
    meta = {t["measure"]: t for t in store.tables()}["nDCG(b=2)@12"]
    assert meta.distinct_by_rb == tuple(irscale.scale("nDCG(b=2)@12", rb=r).k for r in range(1, 13))
    # an explicit --layout table replaces the oracle with a table, and back
    store = irscale.build_store(path, "DCG(b=2)@12", layout="table")
    assert store.layout_of("DCG(b=2)@12") == "entries"
    store = irscale.build_store(path, "DCG(b=2)@12", layout="oracle")
    assert store.layout_of("DCG(b=2)@12") == "oracle"


def _tamper(path, table, **attrs):
    """Change attributes of a stored table and re-seal its checksum, as a deliberate forger
    would: only the layout's own checks can find it."""
    rewrite(table_file(path, table), lambda g: g.attrs.update(attrs))


@pytest.mark.parametrize("attrs,problem", [
    ({"n_distinct": 7, "n_entries": 7}, "n_distinct=7"),
    ({"oracle_groups": "[2, 2]"}, "oracle_groups"),
    ({"distinct_by_rb": "[1, 2]"}, "distinct_by_rb"),
])
def test_tampered_oracle_entries_are_refused(tmp_path, attrs, problem):
    path = tmp_path / "o.h5"
    irscale.build_store(path, "nDCG(b=2)@8")
    _tamper(path, "nDCG(b=2)@8", **attrs)
    with pytest.raises(CorruptStoreError) as info:
        irscale.open_store(path).scale("nDCG(b=2)@8", rb=3)
    assert "nDCG(b=2)@8" in str(info.value) and problem in str(info.value)
    assert "checksum" not in str(info.value)


def test_an_oracle_for_a_measure_without_one_is_refused(tmp_path):
    path = tmp_path / "o.h5"
    irscale.build_store(path, "AP@6")
    _tamper(path, "AP@6", layout="oracle")
    with pytest.raises(CorruptStoreError) as info:
        irscale.open_store(path).scale("AP@6", rb=3)
    said = str(info.value)                             # the table, the layout found and the one it should have
    assert "AP@6" in said and "'oracle'" in said and "entries" in said


def test_cli_build_layouts_and_spacing_of_big_oracles(tmp_path, monkeypatch):
    out = tmp_path / "t.h5"
    r = CliRunner().invoke(cli, ["build", "-m", "DCG(b=2)@24,AP@6", "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["build", "-m", "AP@6", "--layout", "oracle", "--out", str(out), "-q"])
    assert isinstance(r.exception, MeasureError)        # the installed command prints it in one line
    assert "AP@6" in str(r.exception) and "oracle" in str(r.exception)
    assert {t.measure: t.layout for t in irscale.open_store(out).tables()}["AP@6"] == "entries"   # kept as it was
    r = CliRunner().invoke(cli, ["info", str(out)])
    assert r.exit_code == 0 and "0 (oracle)" in r.output and "rank oracle" in r.output
    monkeypatch.setattr(oracles, "LIST_LIMIT", 1 << 10)         # DCG(b=2)@14 has 12,288 values
    monkeypatch.setattr(spacing, "LIST_LIMIT", 1 << 10)
    irscale.build_store(out, "DCG(b=2)@14", layout="oracle")
    with pytest.warns(irscale.IrscaleWarning, match=r"DCG\(b=2\)@14 left out of the spacing statistics: a rank oracle"):
        rows = spacing.store_spacing(out)              # every table: big oracles left out, saying how to ask
    assert "DCG(b=2)@14" not in [r["measure"] for r in rows]
    [streamed] = spacing.store_spacing(out, ["DCG(b=2)@14"])         # asked by name: streamed band by band
    irscale.build_store(tmp_path / "table.h5", "DCG(b=2)@14", layout="table")
    [listed] = spacing.store_spacing(tmp_path / "table.h5", ["DCG(b=2)@14"])
    for key in ("n_distinct", "n_runs", "n_nonpositive_gaps", "gap_hist_counts", "gap_hist_below", "gap_hist_above"):
        assert streamed[key] == listed[key], key
    for key in ("min", "max", "gap_mean", "gap_std", "gap_cv", "gap_min", "gap_max", "uncovered", "max_deviation",
                "mean_abs_deviation"):      # float values of an oracle and a table may differ in the last bit
        assert streamed[key] == pytest.approx(listed[key], rel=1e-9, abs=1e-15), key


def test_streamed_values_equal_the_listed_ones():
    """Bands, the pairs carried across their edges and the counts of runs: the streamed
    values and counts are the listed ones, for oracles with and without recall bases."""
    for name, rb in [("nDCG_trec(gains=(0,1,2))@8", (8, 3)), ("nDCG_trec(gains=(0,1,2))@8", (2, 8)),
                     ("nDCG(b=2)@12", 5), ("RBP(p=0.8)@12", None), ("DCG(b=2,gains=(0,1,3))@7", None), ("RR@12", None)]:
        s = _oracle(name, rb)
        blocks = list(s.streamed_blocks(chunk=97, band=300))
        assert np.array_equal(np.concatenate([b[0] for b in blocks]), s.values), name
        assert np.array_equal(np.concatenate([b[1] for b in blocks]), s.counts), name


# -- transforms ------------------------------------------------------------------------------------
def test_transform_from_an_oracle_store_equals_the_table_store(shared_data, tmp_path):
    """TREC-8, 20 runs, RBP(p=0.8), DCG and nDCG at N = 14 (and P at 40, beyond tables): the
    rank, scaled and mid-rank columns from oracles equal those from tables."""
    trec8 = shared_data / "trec8"
    runs = sorted((trec8 / "runs").iterdir())[:20]
    names = "RBP(p=0.8)@14,DCG(b=2)@14,nDCG(b=2)@14,nDCG(b=10)@14"
    oracle = irscale.build_store(tmp_path / "o.h5", names)
    table = irscale.build_store(tmp_path / "t.h5", names, layout="table")
    qrels = trec8 / "qrels.trec8.adhoc.txt"
    runs = read_runs(runs)             # read once: the four transforms compare scales, not readers
    for rb_scale in ("feasible", "common"):
        a = irscale.transform(qrels, runs, names, oracle, midranks=True, rb_scale=rb_scale)
        b = irscale.transform(qrels, runs, names, table, midranks=True, rb_scale=rb_scale)
        assert len(a) == 20 * 50 * 4
        for column in ("raw", "rank", "k", "scaled", "midrank", "n_runs"):
            assert np.array_equal(a[column].to_numpy(), b[column].to_numpy(), equal_nan=True), column
    deep = irscale.transform(qrels, runs[:3], "P@40,RR@40,RBP(p=0.8)@40", build_missing=True)
    p = deep[deep["measure"] == "P@40"]
    assert (p["rank"] == np.rint(p["raw"] * 40) + 1).all() and (p["k"] == 41).all()
    rbp = deep[deep["measure"] == "RBP(p=0.8)@40"]
    assert (rbp["k"] == 2 ** 40).all() and rbp["rank"].between(1, 2 ** 40).all()


def test_every_family_stores_and_reads_its_oracle(tmp_path):
    """RR's key is not proportional to its value: its oracle's error bound is still a number,
    and a store of every family's oracle reads back."""
    names = "RR@10,P@40,R@12,F1@12,RBP(p=0.8)@10,DCG(b=2)@10,nDCG(b=2)@10,nDCG_trec@10"
    store = irscale.build_store(tmp_path / "o.h5", names, layout="oracle")
    for t in store.tables():
        assert t["layout"] == "oracle" and t["error_bound"] >= 0
    assert store.scale("RR@10").rank_runs([[0, 1] + [0] * 8]).tolist() == [10]
    assert store.scale("P@40").k == 41


def test_streams_stay_exact_when_float_sums_are_off_by_up_to_the_error_bound(monkeypatch):
    """Every side entry's float value moved by random noise within a widened error bound:
    the float order of pairs is then wrong within the bound, inside bands and across their
    edges, and the stream must still give the listed values in exact order (re-ordered by
    exact keys, pairs near an edge carried into the next band)."""
    rng = np.random.default_rng(5)
    noise = 3e-4                                  # far above float error: many pairs change order
    make_side = oracle_form.OracleForm._side

    def noisy_side(self, idx, runs):
        side = make_side(self, idx, runs)
        side.s = side.s + rng.uniform(-noise, noise, side.s.shape[0])
        order = np.argsort(side.s, kind="stable")
        for field in ("s", "c", "w", "code"):
            setattr(side, field, getattr(side, field)[order])
        return side

    monkeypatch.setattr(oracle_form.OracleForm, "_side", noisy_side)
    for name, rb in [("nDCG_trec(gains=(0,1,2))@7", (7, 3)), ("DCG(b=2)@11", None), ("nDCG(b=2)@11", 4)]:
        m = irscale.parse_measure(name)
        form = oracle_form.OracleForm(m, oracles.oracle_count(m, m.check_rb(rb))[0])
        form.bound = 2 * (form.bound + 2 * noise)
        form.margin = 4 * form.bound
        monkeypatch.setattr(oracles, "oracle_form", lambda *args, form=form: form)
        s = oracles.oracle_table(m, m.table_rb(rb) if m.per_grade_rb else None).scale(rb)
        listed = irscale.scale(name, rb=rb, layout="table")
        blocks = list(s.streamed_blocks(chunk=61, band=97))
        values = np.concatenate([b[0] for b in blocks])
        assert np.array_equal(np.concatenate([b[1] for b in blocks]), listed.counts), name
        assert np.allclose(values, listed.values, rtol=1e-13, atol=1e-15), name
        assert (np.diff(values) > 0).all(), name


def test_many_runs_ranked_through_a_split_for_many_queries_rank_as_the_table():
    """Past MANY_RUNS runs, a scale ranks with sides split for SPLIT_MANY queries: another
    split (here: 1 group on side A, against 5), the same exact ranks as the table's."""
    name, rb = "nDCG_trec(gains=(0,1,2,3))@8", (2, 8, 8)       # grade 1 bounds alone
    m = irscale.parse_measure(name)
    few, many = oracle_form.oracle_form(m, 1), oracle_form.oracle_form(m, 1, oracle_form.SPLIT_MANY)
    assert few is not many and few.a_groups != many.a_groups
    o, t = irscale.scale(name, rb=rb), irscale.scale(name, rb=rb, layout="table")
    assert isinstance(o, oracles.OracleScale)
    runs = m.runs_of_ids(np.arange(m.id_count()))
    ids = np.flatnonzero((runs == 1).sum(axis=1) <= 2)                 # the feasible runs: 65,536 in all
    assert ids.size > oracles.MANY_RUNS
    want = t.rank_ids(ids)
    assert np.array_equal(o.rank_ids(ids[:100]), want[:100])            # the default split
    assert np.array_equal(o.rank_ids(ids), want)                        # past MANY_RUNS: the other split
