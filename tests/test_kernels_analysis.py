"""The analysis kernels (scales/analysis/spacing_kernels.py, axioms_kernels.py) against the
plain-Python references of tests/kernel_references.py: the streaming spacing fold (state
carried across blocks of any size, gaps on histogram edges), the value-distribution
targets, strict inversions with their partners, and the all-pairs discordance check."""
from __future__ import annotations

import kernel_references as ref
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale.scales.analysis import axioms_kernels as ak
from irscale.scales.analysis import spacing_kernels as sk

EDGES = 10.0 ** np.linspace(-18, 0, 18 * 4 + 1)       # the spacing pass's gap histogram edges


# -- stats_block -----------------------------------------------------------------------------------
def fold(vals, blocks, kk=None):
    """Run stats_block over ``vals`` cut into consecutive blocks of the given sizes."""
    vals = np.asarray(vals, np.float64)
    kk = vals.size if kk is None else kk
    vmin, span = float(vals[0]), float(vals[-1] - vals[0])
    span = span if span > 0 else 1.0
    mu0 = float(vals[-1] - vals[0]) / (kk - 1) if kk > 1 else 0.0
    lut, key_min = ref.edge_lut(EDGES, sk.LUT_SHIFT)
    lut = np.array(lut, np.int64)
    ist = np.zeros(sk.N_ISTATE, np.int64)
    ist[sk.I_LASTBIN] = -1
    fst = np.zeros(sk.N_FSTATE, np.float64)
    fst[sk.F_GMIN], fst[sk.F_GMAX] = np.inf, -np.inf
    hist = np.zeros(EDGES.size + 1, np.int64)
    a = 0
    for size in blocks:
        sk.stats_block(vals[a:a + size], vmin, span, kk, mu0, EDGES, lut, key_min, ist, fst, hist)
        a += size
    assert a == vals.size
    got = dict(seen=ist[sk.I_SEEN], covered=ist[sk.I_COVERED], lastbin=ist[sk.I_LASTBIN], nonpos=ist[sk.I_NONPOS],
               prev=fst[sk.F_PREV], s1=fst[sk.F_S1], s2=fst[sk.F_S2], gmin=fst[sk.F_GMIN], gmax=fst[sk.F_GMAX],
               devmax=fst[sk.F_DEVMAX], devsum=fst[sk.F_DEVSUM], hist=hist.tolist())
    want = ref.stats(vals, vmin, span, kk, mu0, EDGES)
    return {k: (v if k == "hist" else v.item()) for k, v in got.items()}, want


def random_values(seed, m):
    """Sorted values with gaps spread over 1e-20 .. 10, some exactly 0 (float ties), and gaps
    exactly on histogram edges (edges[c] - 0, and 2.0 - 1.0 == edges[-1])."""
    rng = np.random.default_rng(seed)
    gaps = 10.0 ** rng.uniform(-20, 1, size=m)
    gaps[rng.random(m) < 0.05] = 0.0
    head = [0.0] + [float(EDGES[c]) for c in rng.choice(EDGES.size - 1, 1)] + [1.0, 2.0]
    tail = 3.0 + np.cumsum(gaps)
    return np.concatenate([head, tail])


def assert_same_state(got, want):
    assert got == want


@pytest.mark.parametrize("seed,m", [(0, 50), (1, 300), (2, 5000)])
def test_stats_block_one_block(seed, m):
    vals = random_values(seed, m)
    got, want = fold(vals, [vals.size])
    assert_same_state(got, want)
    assert want["nonpos"] > 0 and want["hist"][EDGES.size - 2] > 0      # ties and a gap on the closed last edge
    assert want["hist"][EDGES.size - 1] > 0 and want["hist"][EDGES.size] > 0   # below and above the edges


@pytest.mark.parametrize("seed", [3, 4])
def test_stats_block_state_across_blocks(seed):
    vals = random_values(seed, 9000)
    rng = np.random.default_rng(seed)
    cuts = np.sort(np.concatenate([rng.choice(np.arange(1, vals.size), 12, replace=False), [100, 100]]))
    edges = [0, *cuts.tolist(), vals.size]
    sizes = [b - a for a, b in zip(edges, edges[1:])]
    assert 0 in sizes and max(sizes) < vals.size                    # empty blocks and several blocks
    got, want = fold(vals, sizes)
    assert_same_state(got, want)
    assert fold(vals, [4096, 4097, vals.size - 8193])[0] == want    # blocks straddling the inner SUB loop


def test_stats_block_equal_spacing_and_single_value():
    vals = np.arange(11, dtype=np.float64) / 8                       # exact gaps 1/8
    got, want = fold(vals, [3, 8])
    assert_same_state(got, want)
    assert got["covered"] == 11 and got["devmax"] == 0.0
    got, want = fold(np.array([0.25]), [1])
    assert_same_state(got, want)
    assert (got["seen"], got["covered"], got["lastbin"]) == (1, 1, 0)


def test_stats_block_crowded_values_leave_bins_uncovered():
    vals = np.array([0.0, 1e-6, 2e-6, 3e-6, 0.5, 1.0])
    got, want = fold(vals, [2, 4])
    assert_same_state(got, want)
    assert got["covered"] == 3


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 1e3, allow_nan=False), min_size=2, max_size=60), st.data())
def test_stats_block_hypothesis(xs, data):
    vals = np.array(sorted(xs))
    if vals[-1] == vals[0]:
        vals = np.append(vals, vals[0] + 1.0)
    cuts = sorted(data.draw(st.lists(st.integers(0, vals.size), max_size=4)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, vals.size])]
    got, want = fold(vals, sizes)
    assert_same_state(got, want)


def test_reference_lut_is_a_lower_bound():
    lut, key_min = ref.edge_lut(EDGES, sk.LUT_SHIFT)
    rng = np.random.default_rng(0)
    for g in 10.0 ** rng.uniform(-18, 0, 500):
        c = lut[(ref.float_bits(g) >> sk.LUT_SHIFT) - key_min]
        assert EDGES[c] <= g


# -- dist_block --------------------------------------------------------------------------------------
def dist_by_kernel(cnts, points, n_runs, sizes):
    st_ = np.array([0, 0, 1, 0], np.int64)
    idx_all, cum_all = [], []
    a = 0
    for size in sizes:
        block = np.asarray(cnts[a:a + size], np.int64)
        idx = np.full(min(size, points + 1), -1, np.int64)
        cum = np.full(idx.size, -1, np.int64)
        k = sk.dist_block(block, points, n_runs, st_, idx, cum)
        idx_all += [a + int(i) for i in idx[:k]]
        cum_all += cum[:k].tolist()
        a += size
    return idx_all, cum_all, st_.tolist()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=80), st.sampled_from([1, 2, 3, 7, 40, 2000]),
       st.integers(0, 5), st.data())
def test_dist_block(cnts, points, extra, data):
    n_runs = sum(cnts) + (extra if extra < 3 else 0)                  # sometimes more runs than streamed
    cuts = sorted(data.draw(st.lists(st.integers(0, len(cnts)), max_size=4)))
    sizes = [b - a for a, b in zip([0, *cuts], [*cuts, len(cnts)])]
    idx, cum, state = dist_by_kernel(cnts, points, n_runs, sizes)
    want_idx, want_cum, nxt = ref.dist_targets(cnts, points, n_runs)
    assert idx == want_idx
    assert cum == want_cum
    assert state == [len(cnts), sum(cnts), nxt, len(want_idx)]


def test_dist_block_fixed_cases():
    rng = np.random.default_rng(8)
    cnts = rng.integers(1, 1000, 5000).tolist()
    for points in (1, 10, 2000, 10_000):
        got = dist_by_kernel(cnts, points, sum(cnts), [1000, 0, 1500, 2500])
        want_idx, want_cum, nxt = ref.dist_targets(cnts, points, sum(cnts))
        assert got[:2] == (want_idx, want_cum)
        assert got[2] == [5000, sum(cnts), nxt, len(want_idx)]
        assert want_idx[0] == 0 and want_idx[-1] == 4999 and nxt == points + 1


# -- strict_inversions / partner_before ----------------------------------------------------------
def inversions_by_kernel(x):
    x = np.asarray(x, np.int64)
    per = np.full(x.size, -1, np.int64)
    total = ak.strict_inversions(x, int(x.max()) if x.size else 0, per)
    return int(total), per.tolist()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 12), max_size=60))
def test_strict_inversions_hypothesis(x):
    assert inversions_by_kernel(x) == ref.strict_inversions(x)


@pytest.mark.parametrize("seed,m,kmax", [(0, 500, 3), (1, 400, 1000), (2, 300, 1)])
def test_strict_inversions_and_partners(seed, m, kmax):
    x = np.random.default_rng(seed).integers(1, kmax + 1, m)
    total, per = inversions_by_kernel(x)
    assert (total, per) == ref.strict_inversions(x)
    xa = np.asarray(x, np.int64)
    for j in range(m):
        assert ak.partner_before(xa, j) == ref.partner_before(x.tolist(), j)


def test_strict_inversions_extremes():
    assert inversions_by_kernel([]) == (0, [])
    desc = list(range(40, 0, -1))
    assert inversions_by_kernel(desc) == ref.strict_inversions(desc) == (40 * 39 // 2, list(range(40)))
    assert inversions_by_kernel([5] * 10) == (0, [0] * 10)
    assert ak.partner_before(np.array([3, 1, 2], np.int64), 0) == -1


# -- all_pairs_check ------------------------------------------------------------------------------------
def pairs_case(levels, n, seed, kind):
    runs = ref.all_runs(levels, n)
    rng = np.random.default_rng(seed)
    G = levels - 1
    gain = [sum(r) for r in runs]                                       # satisfies the order's axiom
    if kind == "random":
        r1 = rng.integers(1, 6, len(runs))
        r2 = rng.integers(1, 6, len(runs))
    else:                                                               # a measure and a reversed one
        r1 = np.array(gain) + 1
        r2 = np.array([sum(d * (k + 1) for k, d in enumerate(r)) for r in runs]) + 1
    pref = np.array([ref.prefix_counts(r, G) for r in runs], np.int16).reshape(len(runs), G, n)
    return runs, G, r1.astype(np.int64), r2.astype(np.int64), pref


@pytest.mark.parametrize("levels,n,kind", [(2, 4, "random"), (2, 5, "monotone"), (3, 3, "random"),
                                           (3, 3, "monotone"), (4, 2, "random")])
@pytest.mark.parametrize("max_examples", [0, 3, 10_000])
def test_all_pairs_check(levels, n, kind, max_examples):
    runs, G, r1, r2, pref = pairs_case(levels, n, levels * 10 + n, kind)
    ea = np.full(max(max_examples, 1), -1, np.int64)
    eb = np.full_like(ea, -1)
    disc, comp, nex = ak.all_pairs_check(r1, r2, pref, max_examples, ea, eb)
    want_disc, want_comp, want_ex = ref.all_pairs(r1.tolist(), r2.tolist(), runs, G, max_examples)
    assert (int(disc), int(comp), int(nex)) == (want_disc, want_comp, len(want_ex))
    assert list(zip(ea[:nex].tolist(), eb[:nex].tolist())) == want_ex
    assert want_disc > 0
    if kind == "random":
        assert want_comp > 0
