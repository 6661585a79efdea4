"""The recall-base policies (scales/measures/recall_base.py, issue 31) against brute force:
for small N every run of {0..G}^N is listed and its per-grade counts taken directly, and
which runs a topic allows (SPEC section 2: at most RB relevant documents; graded: at most
c_g documents of each grade g) is decided run by run, independently of the policies."""
import itertools

import numpy as np
import pytest

import irscale
from irscale.errors import RecallBaseError, RunError
from irscale.scales.measures.recall_base import (
    MAX_RB,
    IntegerRecallBase,
    NoRecallBase,
    PerGradeCounts,
    recall_base_policy,
)
from irscale.scales.runs.scoring import _topic_groups


def _runs(levels, n):
    return np.array(list(itertools.product(range(levels), repeat=n)), np.uint8)


def _have(runs, grades):
    """Per run, the documents of each grade 1..G (counted here, not by irscale)."""
    return np.array([[sum(1 for d in run if d == g) for g in range(1, grades + 1)] for run in runs.tolist()])


def _feasible(have, counts):
    """The runs a topic with per-grade counts ``counts`` allows (SPEC section 2)."""
    return np.array([all(h <= c for h, c in zip(row, counts)) for row in have.tolist()])


def _vectors(n, grades, top=None):
    top = n + 2 if top is None else top
    return [v for v in itertools.product(range(top + 1), repeat=grades) if sum(v) >= 1]


def _allowed_by_oracle(policy, have, rb):
    """The runs an oracle counting as ``policy.oracle_count`` says would count as feasible."""
    counted, r = policy.oracle_count(rb)
    if not policy.counts_documents(counted):
        return np.ones(have.shape[0], bool)
    c = have.sum(axis=1) if counted is None else have[:, counted - 1]
    return c <= r


# -- the three kinds -------------------------------------------------------------------------
def test_the_factory_chooses_the_kind_from_dependence_and_levels():
    assert recall_base_policy("P@5", 5, False, 2) == NoRecallBase("P@5", 5)
    assert recall_base_policy("P@5", 5, False, 4) == NoRecallBase("P@5", 5)
    assert recall_base_policy("AP@5", 5, True, 2) == IntegerRecallBase("AP@5", 5)
    got = recall_base_policy("g@5", 5, True, 4)
    assert got == PerGradeCounts("g@5", 5, 3, capped=True, common_counts=(5, 5, 5))
    assert (got.depends, got.per_grade, got.strata) == (True, True, "grade_codes")
    assert (IntegerRecallBase("x", 3).strata, NoRecallBase("x", 3).strata) == ("relevant", None)


@pytest.mark.parametrize("name,kind,common", [
    ("P@5", NoRecallBase, None), ("RBP(p=0.5)@5", NoRecallBase, None), ("DCG(b=2)@5", NoRecallBase, None),
    ("AP@5", IntegerRecallBase, 5), ("R@5", IntegerRecallBase, 5), ("nDCG(b=2)@5", IntegerRecallBase, 5),
    ("nDCG_trec(gains=(0,1,2))@5", PerGradeCounts, (5, 5)), ("gR(gains=(0,1,3))@5", PerGradeCounts, (5, 5)),
    ("Rprec@5", PerGradeCounts, (5,)), ("Twist@5", PerGradeCounts, RecallBaseError),
    ("OIE@3", PerGradeCounts, RecallBaseError),
])
def test_every_kind_of_measure_owns_its_policy(name, kind, common):
    m = irscale.parse_measure(name)
    assert type(m.recall_base) is kind and m.recall_base is m.recall_base          # built once
    assert m.recall_base.label == str(m) and m.recall_base.n == m.n
    assert m.per_grade_rb == (kind is PerGradeCounts) and m.rb_dependent == (kind is not NoRecallBase)
    if common is RecallBaseError:
        with pytest.raises(RecallBaseError, match="no common scale"):
            m.common_rb()
        assert not m.has_common_scale()
    else:
        assert m.common_rb() == common and m.has_common_scale()


def test_measures_without_recall_base_refuse_one():
    p = NoRecallBase("P@4", 4)
    assert p.check(None) is None and p.table_rb(None) is None and p.common() is None
    assert p.of_counts([3, 1]) is None and p.oracle_count(None) == (None, 0) and not p.counts_documents(None)
    assert list(p.stratified_rbs()) == [] and p.oracle_serves(None)
    with pytest.raises(RecallBaseError, match="does not depend on the recall base"):
        p.check(3)
    with pytest.raises(RecallBaseError):
        p.refuse_infeasible(_runs(2, 4), 3)
    p.refuse_infeasible(_runs(2, 4), None)                     # every run allowed


@pytest.mark.parametrize("bad", [None, 0, -1, 2.0, True, "3", (3,), MAX_RB + 1])
def test_integer_recall_bases_are_validated(bad):
    with pytest.raises(RecallBaseError):
        IntegerRecallBase("AP@4", 4).check(bad)


@pytest.mark.parametrize("bad", [None, 3, (0, 0), (1,), (1, 2, 3), (-1, 2), (1.5, 2), (True, 1), "12"])
def test_per_grade_counts_are_validated(bad):
    with pytest.raises(RecallBaseError):
        PerGradeCounts("g@4", 4, 2).check(bad)


def test_normal_forms_of_recall_bases():
    i = IntegerRecallBase("AP@4", 4)
    assert i.check(np.int64(7)) == 7 and type(i.check(np.int64(7))) is int
    assert i.of_counts(np.array([2, 3])) == 5 and i.table_rb(9) is None and i.common() == 4
    g = PerGradeCounts("g@4", 4, 2, capped=True, common_counts=(4, 4))
    assert g.check([2, np.int64(9)]) == (2, 9) and g.check(np.array([0, 1])) == (0, 1)
    assert g.of_counts(np.array([0, 6])) == (0, 6)
    assert g.table_rb((2, 9)) == (2, 4)                               # capped at N
    one = PerGradeCounts("Twist@4", 4, 1, capped=False)
    assert one.check(3) == (3,) == one.check((3,)) and one.table_rb(9) == (9,)   # not capped
    with pytest.raises(RecallBaseError, match="no common scale"):
        one.common()


# -- against brute force ----------------------------------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 4), (3, 3), (4, 3), (3, 4)])
def test_tables_named_alike_allow_the_same_runs_and_the_common_one_every_run(levels, n):
    """Two recall bases with the same table allow the same runs; so does the table's own
    key; the common recall base allows every run."""
    runs = _runs(levels, n)
    have = _have(runs, levels - 1)
    policy = recall_base_policy(f"m@{n}", n, True, levels)
    named: dict = {}
    for v in _vectors(n, levels - 1):
        rb = policy.of_counts(v)
        allowed = _feasible(have, v)
        key = policy.table_rb(rb)
        if key is not None:                               # per-grade: the key is itself a vector
            assert (_feasible(have, key) == allowed).all()
        if key is None:
            continue                                      # binary: one stratified table, see below
        named.setdefault(key, allowed)
        assert (named[key] == allowed).all()
    common = policy.common()
    assert _feasible(have, common if isinstance(common, tuple) else (common,)).all()


@pytest.mark.parametrize("levels,n", [(2, 5), (3, 3), (3, 4), (4, 3)])
def test_oracles_count_exactly_the_feasible_runs_of_the_vectors_they_serve(levels, n):
    """For every recall base an oracle serves, the runs its count bound allows are the
    feasible runs (brute force); it serves a vector exactly when at most one grade's bound
    excludes a run, and refuses the others."""
    runs = _runs(levels, n)
    have = _have(runs, levels - 1)
    policy = recall_base_policy(f"m@{n}", n, True, levels)
    for v in _vectors(n, levels - 1):
        rb = policy.of_counts(v)
        allowed = _feasible(have, v)
        binding = [g for g in range(levels - 1) if not _feasible(have[:, [g]], [v[g]]).all()]
        key = policy.table_rb(rb)
        assert policy.oracle_serves(key) == (len(binding) <= 1)
        if len(binding) > 1:
            with pytest.raises(RecallBaseError, match="bound 2 grades|bound 3 grades"):
                policy.oracle_count(rb)
            continue
        assert (_allowed_by_oracle(policy, have, rb) == allowed).all(), v
        counted, _ = policy.oracle_count(rb)
        assert policy.per_grade or counted is None
        assert counted is None or counted - 1 == binding[0]


@pytest.mark.parametrize("n", [3, 5])
def test_a_stratified_table_serves_each_recall_base_by_its_own_strata(n):
    runs = _runs(2, n)
    have = _have(runs, 1)
    policy = IntegerRecallBase(f"AP@{n}", n)
    sets = [tuple(_allowed_by_oracle(policy, have, r)) for r in policy.stratified_rbs()]
    assert len(set(sets)) == n == len(sets)                            # RB = 1..N: all different
    assert all(np.array(sets[-1]))                                      # RB = N: every run
    assert _allowed_by_oracle(policy, have, n + 7).all()               # RB > N: the same as N


@pytest.mark.parametrize("levels,n", [(3, 3), (4, 3)])
def test_per_grade_policies_refuse_exactly_the_infeasible_runs(levels, n):
    runs = _runs(levels, n)
    have = _have(runs, levels - 1)
    policy = recall_base_policy(f"m@{n}", n, True, levels)
    for v in _vectors(n, levels - 1, top=n):
        allowed = _feasible(have, v)
        policy.refuse_infeasible(runs[allowed], v)
        for i in np.flatnonzero(~allowed)[:5]:
            with pytest.raises(RunError, match="cannot occur"):
                policy.refuse_infeasible(runs[i:i + 1], v)


def test_binary_tables_hold_every_run_whatever_the_recall_base():
    """An integer recall base validates rb, and leaves refusing infeasible runs to the
    scales (one stratified table holds every run)."""
    policy = IntegerRecallBase("AP@3", 3)
    policy.refuse_infeasible(_runs(2, 3), 1)
    with pytest.raises(RecallBaseError):
        policy.refuse_infeasible(_runs(2, 3), 0)


# -- the measures ask their policy ----------------------------------------------------------------
@pytest.mark.parametrize("name,rbs", [
    ("AP@4", [1, 2, 4, 9]), ("P@4", [None]),
    ("nDCG_trec(gains=(0,1,2))@3", [(1, 0), (0, 2), (2, 5), (3, 3)]), ("Twist@4", [(1,), (2,)]),
])
def test_oracle_and_table_scales_allow_the_runs_the_brute_force_allows(name, rbs):
    """Scales of each kind (oracles where the measure has one, tables otherwise) count the
    runs a topic allows, counted here run by run."""
    m = irscale.parse_measure(name)
    runs = _runs(m.levels, m.n)
    have = _have(runs, m.levels - 1)
    for rb in rbs:
        counts = (rb,) if isinstance(rb, int) else rb
        want = runs.shape[0] if rb is None else int(_feasible(have, counts).sum())
        for layout in ["table"] + (["oracle"] if "oracle" in m.layouts else []):
            if layout == "oracle" and not m.recall_base.oracle_serves(m.table_rb(rb)):
                continue
            s = irscale.scale(m, rb=rb, layout=layout)
            assert s.n_runs == want, (name, rb, layout)
            assert int(np.sum(s.counts)) == want


def test_transform_groups_topics_by_their_recall_base():
    counts = np.array([[2, 0], [0, 1], [2, 0], [1, 1]])
    groups = dict(_topic_groups(irscale.parse_measure("P@5"), counts[:, :1]))
    assert list(groups) == [None] and groups[None].all()               # one group: no recall base
    groups = dict(_topic_groups(irscale.parse_measure("AP@5"), counts.sum(axis=1, keepdims=True)))
    assert sorted(groups) == [1, 2] and groups[2].tolist() == [True, False, True, True]
    groups = dict(_topic_groups(irscale.parse_measure("nDCG_trec(gains=(0,1,2))@5"), counts))
    assert sorted(groups) == [(0, 1), (1, 1), (2, 0)] and groups[(2, 0)].tolist() == [True, False, True, False]
