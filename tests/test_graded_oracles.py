"""Graded normalised DCG with per-grade recall bases: rank oracles for the count
vectors that bound at most one grade, tables of the feasible runs for the others, checked
against brute force (tests/oracle_reference.py: every run of {0..G}^N scored once with
50-digit mpmath, then kept per vector) for every count vector, in memory and in a store."""
import itertools
from functools import partial

import mpmath
import numpy as np
import oracle_reference as ref
import pytest
from store_files import rewrite, table_file

import irscale
from irscale.errors import CorruptStoreError, RecallBaseError, RunError
from irscale.scales.analysis import report, spacing
from irscale.scales.tables import oracles
from irscale.scales.tables.build import build_tables
from irscale.scales.tables.estimate import estimate, runs_enumerated


def _jk(b, k):
    return mpmath.mpf(1) if k < b else mpmath.log(b) / mpmath.log(k)


#: (measure at cutoff {n}, gains, discount, N): graded families with oracles.
CASES = [
    ("nDCG_trec(gains=(0,1,2))@{n}", (0, 1, 2), ref.trec_discount, 6),
    ("nDCG(b=2,gains=(0,1,3))@{n}", (0, 1, 3), partial(_jk, 2), 5),
    ("nDCG_trec(gains=(0,1,2,3))@{n}", (0, 1, 2, 3), ref.trec_discount, 4),
]


def _vectors(n, grades):
    return [v for v in itertools.product(range(n + 1), repeat=grades) if sum(v) >= 1]


def _references(gains, discount, n):
    levels = len(gains)
    vectors = _vectors(n, levels - 1)
    with mpmath.workdps(ref.DIGITS):
        return ref.scales_by_counts(ref.graded_dcg_raw(gains, discount), n, levels, vectors,
                                    lambda vec: ref.graded_ideal(gains, vec, n, discount))


def _check(scale, reference, layout):
    values, counts, ranks, mids, first = reference
    feasible = np.array([i for i, r in enumerate(ranks) if r], np.int64)
    assert scale.table.layout == layout
    assert scale.k == len(values) and scale.n_runs == sum(counts)
    got = scale.rank_ids(feasible)
    assert got.tolist() == [ranks[i] for i in feasible]
    assert np.allclose(scale.midranks_of_ranks(got), [mids[i] for i in feasible])
    assert scale.counts.tolist() == counts
    assert np.allclose(scale.values, values, rtol=1e-13, atol=1e-15)
    assert scale.rank(scale.values).tolist() == list(range(1, scale.k + 1))
    reps = scale.representatives
    if layout == "oracle":      # a feasible run of the value (fewest documents of the counted grade)
        assert scale.rank_ids(reps).tolist() == list(range(1, scale.k + 1))
        assert all(r >= f for r, f in zip(reps.tolist(), first))
    else:                       # the smallest feasible run id of the value
        assert reps.tolist() == first


@pytest.mark.parametrize("name,gains,discount,n", CASES, ids=[c[0].format(n=c[3]) for c in CASES])
def test_every_count_vector_equals_brute_force(name, gains, discount, n):
    name = name.format(n=n)
    m = irscale.parse_measure(name)
    assert m.layout == "oracle"
    served = 0
    for vec, reference in _references(gains, discount, n).items():
        layout = "oracle" if m.recall_base.oracle_serves(vec) else "entries"
        served += layout == "oracle"
        _check(irscale.scale(name, rb=vec), reference, layout)
        _check(irscale.scale(name, rb=vec, layout="table"), reference, "entries")
    assert served == 1 + (len(gains) - 1) * n     # (N, .., N), and c_g < N for one grade g alone


@pytest.mark.slow
def test_every_count_vector_at_n8_equals_brute_force():
    name, gains, discount = "nDCG_trec(gains=(0,1,2))@8", (0, 1, 2), ref.trec_discount
    for vec, reference in _references(gains, discount, 8).items():
        layout = "oracle" if irscale.parse_measure(name).recall_base.oracle_serves(vec) else "entries"
        _check(irscale.scale(name, rb=vec), reference, layout)


def test_which_vectors_oracles_serve_and_how_they_count():
    m = irscale.parse_measure("nDCG_trec(gains=(0,1,2))@20")
    assert oracles.oracle_count(m, (20, 20)) == (None, 0)
    assert oracles.oracle_count(m, (35, 40)) == (None, 0)          # counts above N are capped
    assert oracles.oracle_count(m, (3, 20)) == (1, 3)
    assert oracles.oracle_count(m, (25, 13)) == (2, 13)
    with pytest.raises(RecallBaseError, match="bound 2 grades"):
        oracles.oracle_count(m, (7, 2))
    assert [m.recall_base.oracle_serves(v) for v in [(20, 20), (2, 20), (20, 5), (7, 2)]] == [True, True, True, False]
    k = m.grouping().k
    assert k == 1_506_635_235 and oracles.oracle_table(m, (20, 20)).n_entries == k


def test_infeasible_runs_are_refused_by_the_oracle():
    s = irscale.scale("nDCG_trec(gains=(0,1,2))@6", rb=(6, 1))
    with pytest.raises(RunError, match="grade 2"):
        s.rank_runs([[2, 2, 0, 0, 0, 0]])
    assert s.rank_runs([[2, 1, 1, 1, 1, 1]]).tolist() == [s.k]


def test_store_holds_one_oracle_per_vector_and_tables_for_the_others(tmp_path):
    name, n = "nDCG_trec(gains=(0,1,2))@6", 6
    vectors = [(6, 6), (2, 6), (6, 1), (3, 2)]
    path = tmp_path / "g.h5"
    irscale.build_store(path, name, rbs={name: vectors}, n_jobs=1)
    store = irscale.open_store(path)
    refs = _references((0, 1, 2), ref.trec_discount, n)
    for vec in vectors:
        layout = "oracle" if irscale.parse_measure(name).recall_base.oracle_serves(vec) else "entries"
        assert store.layout_of(name, vec) == layout
        _check(store.scale(name, rb=vec), refs[vec], layout)
    assert [problem for _, problem in store.verify_each()] == [None] * len(vectors)


@pytest.mark.parametrize("name,rb", [("nDCG_trec(gains=(0,1,2))@8", (8, 3)), ("nDCG_trec(gains=(0,1,2))@8", (8, 8)),
                                     ("nDCG(b=2)@12", 5)])
def test_distribution_of_values_is_counted_for_oracles_too_big_to_list(monkeypatch, name, rb):
    """Oracles beyond the listing limit find the points of the distribution of values over
    runs by counting: the same points as streaming the listed values."""
    s = irscale.scale(name, rb=rb)
    assert s.table.layout == "oracle"
    listed = spacing.value_distribution(s, points=300)
    assert listed[0].size > 100
    monkeypatch.setattr(spacing, "LIST_LIMIT", 10)
    counted = spacing.value_distribution(s, points=300)
    assert np.array_equal(listed[0], counted[0]) and np.array_equal(listed[1], counted[1])


def test_transform_builds_graded_oracles_on_the_fly_beyond_the_enumeration_limit(tmp_path):
    """3^16 runs are more than --build-missing enumerates, but oracles enumerate nothing and
    the vectors that bound two grades enumerate their few feasible runs."""
    n = 16
    q = tmp_path / "qrels.txt"
    judged = {"t1": [2] * 3 + [1] * 20 + [0] * 5, "t2": [1] * 2 + [2] * 2 + [0] * 9, "t3": [2] * 30 + [1] * 30}
    q.write_text("".join(f"{t} 0 {t}d{i} {g}\n" for t, gs in judged.items() for i, g in enumerate(gs)))
    run = tmp_path / "a.run"
    run.write_text("".join(f"{t} Q0 {t}d{i} {i + 1} {100 - i} a\n" for t, gs in judged.items()
                           for i in range(0, len(gs), 2)))
    name = f"nDCG_trec(gains=(0,1,2))@{n}"
    scores = irscale.transform(q, [run], name, tmp_path / "s.h5", build_missing=True)
    store = irscale.open_store(tmp_path / "s.h5")
    vectors = {"t1": (16, 3), "t2": (2, 2), "t3": (16, 16)}
    for row in scores.itertuples():
        ranking = [g for i, g in enumerate(judged[row.topic]) if i % 2 == 0][:n]
        grades = ranking + [0] * (n - len(ranking))
        s = store.scale(name, rb=vectors[row.topic])
        assert s.table.layout == ("entries" if row.topic == "t2" else "oracle")
        assert row.rank == s.rank_runs([grades])[0] and row.k == s.k


def test_spacing_section_names_the_count_vector_of_each_table():
    """A graded measure's tables of several count vectors are columns of their own, named
    by vector, each with its own statistics (not the first row's)."""
    rows = [{"measure": "nDCG_trec(gains=(0,1,2))@6", "n": 6, "n_distinct": 10, "max_deviation": 0.25,
             "table": "nDCG_trec(gains=(0,1,2))@6 rb=(3,2)"},
            {"measure": "nDCG_trec(gains=(0,1,2))@6", "n": 6, "n_distinct": 20, "max_deviation": 0.5,
             "table": "nDCG_trec(gains=(0,1,2))@6 rb=(6,6)"},
            {"measure": "P@6", "n": 6, "n_distinct": 7, "max_deviation": 0.0}]
    text = report.spacing_section(rows)
    header = next(line for line in text.splitlines() if line.startswith("| statistic"))
    assert header == "| statistic | nDCG_trec(gains=(0,1,2)) rb=(3,2) | nDCG_trec(gains=(0,1,2)) rb=(6,6) | P |"
    assert "| distinct values K | 10 | 20 | 7 |" in text
    assert "furthest from equal spacing: nDCG_trec(gains=(0,1,2)) rb=(6,6) (max deviation 0.5000" in text
    assert "Equally spaced already: P;" in text


@pytest.mark.slow
@pytest.mark.parametrize("name,vectors", [
    ("nDCG_trec(gains=(0,1,2))@10", [(10, 10), (3, 10), (10, 0), (7, 2)]),
    ("nDCG_trec(gains=(0,1,2,3))@10", [(10, 10, 10), (10, 4, 10), (10, 10, 2), (3, 2, 1)]),
])
def test_oracles_equal_tables_at_n10_for_every_feasible_run(name, vectors):
    """TREC's graded depths: the oracle (or the feasible-runs table) of each vector against
    the table from the pass over every run, on every feasible run."""
    m = irscale.parse_measure(name)
    ids = np.arange(m.id_count())
    have = np.stack([(m.runs_of_ids(ids) == g).sum(axis=1) for g in range(1, m.levels)], axis=1)
    for vec in vectors:
        feasible = ids[(have <= np.array(vec)).all(axis=1)]
        o = irscale.scale(name, rb=vec)
        t = build_tables([m], {str(m): [vec]}, layout="table", method="generic")
        [t] = list(t)
        t = t.scale(vec)
        assert o.k == t.k and o.n_runs == t.n_runs == feasible.size
        ro = o.rank_ids(feasible)
        assert np.array_equal(ro, t.rank_ids(feasible))
        assert np.array_equal(o.midranks_of_ranks(ro), t.midranks_of_ranks(ro))


@pytest.mark.parametrize("attrs,problem", [
    ({"oracle_counted": 2}, "oracle_counted=2"),
    ({"n_runs": 497}, "n_runs=497"),
    ({"n_distinct": 401}, "n_distinct=401"),
    ({"distinct_by_rb": "[1]"}, "distinct_by_rb"),
])
def test_tampered_per_vector_oracles_are_refused(tmp_path, attrs, problem):
    """The oracle of (2, 6) counts grade-1 documents, K = 400 over 496 runs: a forged
    attribute (checksum re-sealed) is found by the layout's own checks."""
    name = "nDCG_trec(gains=(0,1,2))@6"
    path = tmp_path / "o.h5"
    irscale.build_store(path, name, rbs={name: [(2, 6)]})
    rewrite(table_file(path, f"{name} rb=(2,6)"), lambda g: g.attrs.update(attrs))
    with pytest.raises(CorruptStoreError) as info:
        irscale.open_store(path).scale(name, rb=(2, 6))
    assert f"{name} rb=(2,6)" in str(info.value) and problem in str(info.value)


def test_deep_verification_recounts_k(tmp_path):
    name = "nDCG_trec(gains=(0,1,2))@6"
    path = tmp_path / "o.h5"
    irscale.build_store(path, name, rbs={name: [(2, 6)]})
    rewrite(table_file(path, f"{name} rb=(2,6)"), lambda g: g.attrs.update({"n_distinct": 399, "n_entries": 399}))
    with pytest.raises(CorruptStoreError, match=r"n_entries=399, counted 400"):
        irscale.open_store(path).scale(name, rb=(2, 6))
    [(_, problem)] = list(irscale.open_store(path).verify_each())
    assert "n_entries=399, counted 400" in problem


def test_vectors_no_oracle_serves_are_estimated_and_guarded_as_tables():
    """The oracle layout builds tables for vectors that bound several grades: their
    estimates (memory, disk, time) are the table layout's, not an oracle's zeros."""
    m = irscale.parse_measure("nDCG_trec(gains=(0,1,2))@12")
    auto, table = estimate(m, (3, 2)), estimate(m, (3, 2), layout="table")
    assert auto.memory == table.memory > 0 and auto.stored == table.stored > 0 and auto.runs == table.runs
    assert estimate(m, (12, 2)).memory == 0                   # an oracle: nothing stored
    assert runs_enumerated(m, (12, 2)) == 0 and runs_enumerated(m, (3, 2)) == m.table_runs((3, 2)) > 0


def test_explain_says_which_count_vectors_have_tables(tmp_path):
    """A measure whose topics' count vectors are served partly by oracles, partly by tables:
    --explain says how many of each, not 'rank oracle' alone."""
    import warnings

    from irscale.scales.runs.evaluator import Evaluator
    qrels = tmp_path / "qrels.txt"
    lines = [f"1 0 a{i} {1 if i < 2 else 2}" for i in range(8)]           # (2, 6): grade 1 bounds alone
    lines += [f"2 0 b{i} {1 if i < 2 else 2}" for i in range(5)]          # (2, 3): both grades bound
    qrels.write_text("\n".join(lines) + "\n")
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {r} {10 - r} x\n" for q, docs in (("1", "a"), ("2", "b"))
                           for r, d in enumerate(f"{docs}{i}" for i in range(6))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = Evaluator(str(qrels), "nDCG@6", store=tmp_path / "s")
        ev.evaluate(str(run))
    [(name, said)] = ev.explain().items()
    m = ev.measures()[0]
    layouts = sorted(str(ev.store.layout_of(m, t)) for t in ((2, 6), (2, 3)))
    assert layouts == ["entries", "oracle"], layouts            # a table of the entries layout, an oracle
    assert "rank oracle for 1 of its 2 count vectors" in said and "table for the other 1" in said, said
