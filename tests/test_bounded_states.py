"""Exact feasibility over several count dimensions (irscale.scales.tables.bounded_states):
antichain states for rows.

* the state kernels (group_spans_states, group_pass_states) against a plain-Python twin over
  antichains written from the definition (tests/bounded_reference.py), on random groups;
* K counted over the states equals the number of feasible tuples by brute force;
* past the state limit a problem keeps kappa and mu's brackets; the rounding depth counts
  every term a cell sums.
(K and intervals against the tables and the graded oracles: tests/test_bounded_graded.py.)
"""
import itertools

import bounded_reference as ref
import numpy as np
import pytest

from irscale.scales.tables import bounded_grid as bd
from irscale.scales.tables import bounded_kernels as bk
from irscale.scales.tables import bounded_problem as bp
from irscale.scales.tables import bounded_states as bs


def _random_groups(rng: np.random.Generator, dims: int):
    """Groups of options (shift, P(o)): the first option of each (0, {0}), the others 1-3
    random vectors over ``dims`` grades made minimal."""
    groups = []
    for _ in range(int(rng.integers(2, 6))):
        m = int(rng.integers(2, 6))
        shifts = [0] + [int(x) for x in rng.integers(0, 10, m - 1)]
        pareto = [((0,) * dims,)] + [ref.minimal(tuple(int(x) for x in rng.integers(0, 3, dims))
                                                 for _ in range(int(rng.integers(1, 4)))) for _ in range(m - 1)]
        groups.append((shifts, pareto))
    return groups


def _options(st, groups) -> list:
    """Per group the kernels' arguments: shifts by class then shift, class starts, moves, kept."""
    out = []
    for g, (shifts, _) in enumerate(groups):
        s, cls = np.array(shifts, np.int64), st.classes[g]
        o = np.lexsort((s, cls))
        cstart = np.searchsorted(cls[o], np.arange(len(st.sizes[g]) + 1)).astype(np.int64)
        out.append((np.ascontiguousarray(s[o]), cstart, *st.moves[g], st.kept[g]))
    return out


def _lows(groups, caps) -> list:
    """Per step j (j groups added), c minus the most the groups left can add in each grade."""
    most = [tuple(max(v[d] for p in pareto for v in p if all(a <= c for a, c in zip(v, caps)))
                  for d in range(len(caps))) for _, pareto in groups]
    return [tuple(c - sum(m[d] for m in most[j:]) for d, c in enumerate(caps)) for j in range(len(groups) + 1)]


@pytest.mark.parametrize("seed", range(8))
def test_minimal_is_the_definition(seed):
    rng = np.random.default_rng(seed)
    vs = [tuple(int(x) for x in rng.integers(0, 4, 3)) for _ in range(int(rng.integers(1, 12)))]
    assert bs.minimal(vs) == ref.minimal(vs)


@pytest.mark.parametrize("seed", range(8))
def test_state_kernels_equal_their_twins(seed):
    rng = np.random.default_rng(100 + seed)
    dims = int(rng.integers(2, 4))
    caps = tuple(int(x) for x in rng.integers(1, 4, dims))
    groups = _random_groups(rng, dims)
    order = list(range(len(groups)))
    st = bs.antichain_states([p for _, p in groups], list(range(dims)), caps, order)
    at = {a: i for i, a in enumerate(st.antichains)}
    options = _options(st, groups)
    lo, hi = bd._start_spans(st.n)
    wlo, whi = lo.copy(), hi.copy()
    for opt in options:
        lo, hi = bk.group_spans_states(lo, hi, *opt)
        wlo, whi = np.minimum(wlo, lo), np.maximum(whi, hi)
    off = np.concatenate(([0], np.cumsum(np.maximum(whi - wlo + 1, 0)))).astype(np.int64)
    buf = np.zeros(int(off[-1]))
    buf[0] = 1.0
    lo, hi = bd._start_spans(st.n)
    hist = {(((0,) * dims,), 0): 1.0}
    lows = _lows(groups, caps)
    for j, ((shifts, pareto), opt) in enumerate(zip(groups, options)):
        q = 1.0 / len(shifts)
        bk.group_pass_states(buf, off, wlo, lo, hi, *opt, q)
        hist = ref.group_pass_antichains(hist, caps, shifts, pareto, q)
        got = {}
        for c in range(st.n):
            for i in range(lo[c], hi[c] + 1):
                if buf[off[c] - wlo[c] + i] != 0.0:
                    got[(c, i)] = buf[off[c] - wlo[c] + i]
        want: dict = {}                         # the twin's antichains as the groups left see them
        for (a, i), v in hist.items():
            key = (at[ref.clamp(a, lows[j + 1])], i)
            want[key] = want.get(key, 0.0) + v
        assert got.keys() == want.keys()
        for key, v in want.items():
            assert got[key] == pytest.approx(v, rel=1e-12, abs=0)
    out = np.zeros(int(hi.max()) + 1)
    bk.row_sums(buf, off, wlo, lo, hi, out)
    np.testing.assert_allclose(out, ref.row_sums_md(hist, out.shape[0]), rtol=1e-13, atol=0)


@pytest.mark.parametrize("seed", range(6))
def test_states_count_the_feasible_tuples(seed):
    """K over the states against every tuple of options, feasible when some choice of one
    minimal vector per option sums within the counts."""
    rng = np.random.default_rng(200 + seed)
    dims = int(rng.integers(2, 4))
    caps = tuple(int(x) for x in rng.integers(1, 4, dims))
    groups = [p for _, p in _random_groups(rng, dims)]
    order = [int(x) for x in rng.permutation(len(groups))]
    st = bs.antichain_states(groups, list(range(dims)), caps, order)
    brute = sum(any(all(sum(v[d] for v in choice) <= caps[d] for d in range(dims))
                    for choice in itertools.product(*tup)) for tup in itertools.product(*groups))
    assert st.count(order) == brute
    for start, source, _ in st.moves:          # a topological order: every move to a later state
        dest = np.repeat(np.arange(st.n), np.diff(start))
        assert np.all(source < dest)


def test_past_the_state_limit_none():
    rng = np.random.default_rng(7)
    groups = [p for _, p in _random_groups(rng, 3)]
    assert bs.antichain_states(groups, [0, 1, 2], (3, 3, 3), list(range(len(groups))), limit=1) is None


def test_a_problem_past_the_limit_keeps_the_brackets(monkeypatch):
    m = "nDCG_trec(gains=(0,1,2,3))@8"
    import irscale
    measure = irscale.parse_measure(m)
    bp.graded_problem.cache_clear()
    try:
        exact = bp.bounded_problem(measure, (3, 2, 1))
        monkeypatch.setattr(bs, "STATE_LIMIT", 1)
        bp.graded_problem.cache_clear()
        bracketed = bp.bounded_problem(measure, (3, 2, 1))
    finally:
        bp.graded_problem.cache_clear()
    assert exact.method == "states" and exact.k_lo == exact.k
    assert bracketed.method == "" and bracketed.k_lo < exact.k < bracketed.k


def test_the_rounding_depth_counts_every_term_of_a_cell():
    """One group (nothing left after it: every state clamps to the counts): its 6 options all
    move {0} into one state, whose cells sum 6 terms, weighted once. Two groups: the first's
    states are told apart by what the second can add (no clamping to one state)."""
    g = [((0, 0),), ((0, 1), (1, 0)), ((0, 1), (1, 0)), ((2, 0),), ((0, 2),), ((1, 1),)]
    one = bs.antichain_states([g], [0, 1], (2, 2), [0])
    assert one.n == 2 and one.antichains[1] == ((2, 2),) and one.terms >= len(g) + 1 and one.count([0]) == 6
    two = bs.antichain_states([g, g], [0, 1], (2, 2), [0, 1])
    assert two.n > 3 and not two.kept[1].any() and two.terms >= 2 * (len(g) + 1)


@pytest.mark.parametrize("seed", range(8))
def test_the_last_group_on_row_sums_equals_its_twin(seed):
    """last_group_states (the last group added on sums of the rows feasible with each class)
    against the twin's pass of that group and its row sums."""
    rng = np.random.default_rng(300 + seed)
    dims = int(rng.integers(2, 4))
    caps = tuple(int(x) for x in rng.integers(1, 4, dims))
    groups = _random_groups(rng, dims)
    order = list(range(len(groups)))
    st = bs.antichain_states([p for _, p in groups], list(range(dims)), caps, order)
    options = _options(st, groups)
    lo, hi = bd._start_spans(st.n)
    flo, fhi = lo.copy(), hi.copy()
    for opt in options[:-1]:
        lo, hi = bk.group_spans_states(lo, hi, *opt)
        flo, fhi = np.minimum(flo, lo), np.maximum(fhi, hi)
    off = np.concatenate(([0], np.cumsum(np.maximum(fhi - flo + 1, 0)))).astype(np.int64)
    buf = np.zeros(int(off[-1]))
    buf[0] = 1.0
    lo, hi = bd._start_spans(st.n)
    hist = {(((0,) * dims,), 0): 1.0}
    for (shifts, pareto), opt in zip(groups, options):
        q = 1.0 / len(shifts)
        if opt is not options[-1]:
            bk.group_pass_states(buf, off, flo, lo, hi, *opt, q)
        hist = ref.group_pass_antichains(hist, caps, shifts, pareto, q)
    s, cstart = options[-1][:2]
    fstart, fstate = st.feasible(order[-1])
    width = int(hi.max()) + 1
    out = np.zeros(width + int(s.max()))
    bk.last_group_states(buf, off, flo, lo, hi, s, cstart, fstart, fstate, 1.0 / len(s), np.zeros(width), out)
    want = ref.row_sums_md(hist, out.shape[0])
    assert sum(want) > 0
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("rb", [(3, 2, 1), (2, 2, 2)])
def test_two_threads_count_what_one_counts(monkeypatch, rb):
    """count_grid in two threads (each level's rows shared out, the last group's cells in two
    halves) gives the bounds one thread gives: the same sums, up to the order of two halves."""
    import irscale
    measure = irscale.parse_measure("nDCG_trec(gains=(0,1,2,3))@8")
    prob = bp.bounded_problem(measure, rb)
    assert prob.states is not None
    monkeypatch.setattr(bd, "SHARED_WORK", 0)            # share every level of more than one row
    one, two = bd.count_grid(prob, 4000, threads=1), bd.count_grid(prob, 4000, threads=2)
    assert one.down.shape == two.down.shape and one.up.shape == two.up.shape
    assert one.down[-1] > 0 and not np.array_equal(one.down, one.up)
    np.testing.assert_allclose(two.down, one.down, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(two.up, one.up, rtol=1e-12, atol=1e-300)
