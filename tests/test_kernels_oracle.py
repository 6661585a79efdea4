"""The rank-oracle kernels (irscale.scales.tables.oracle_kernels) against the plain-Python
double loops of tests/kernel_references.py, on random sides with counts and weights (and
many equal values, so that the strict and non-strict comparisons are both exercised)."""
import numpy as np
import pytest
from kernel_references import oracle_band, oracle_count, oracle_lists

from irscale.scales.tables import oracle_form as of
from irscale.scales.tables.oracle_form import Searchable, Side


def _side(rng, m, counts, weights):
    s = np.sort(rng.integers(0, 12, m).astype(np.float64) * 0.25)
    c = rng.integers(0, counts + 1, m).astype(np.int16)
    w = rng.integers(1, 4, m).astype(np.int64) if weights else np.ones(m, np.int64)
    return Side(s, c, w, np.arange(m), [m], [np.arange(m)], [np.zeros((m, 1), np.uint64)], [np.zeros(m, np.int64)])


def _searchable(rng, rb_dependent, weights):
    A = _side(rng, int(rng.integers(1, 40)), 4 if rb_dependent else 0, weights)
    B = _side(rng, int(rng.integers(1, 60)), 5 if rb_dependent else 0, weights)
    return of.searchable(A, B, rb_dependent)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("rb_dependent,weights", [(False, False), (True, False), (True, True), (False, True)])
def test_counts_and_bands_equal_the_double_loop(seed, rb_dependent, weights, parallel, monkeypatch):
    """Both kernels of each kind: one thread (small batches) and parallel (big ones)."""
    monkeypatch.setattr(of, "PARALLEL_QUERIES", 1 if parallel else 1 << 40)
    rng = np.random.default_rng(seed)
    view: Searchable = _searchable(rng, rb_dependent, weights)
    a_side = list(zip(view.A.s.tolist(), view.A.c.tolist(), view.A.w.tolist()))
    b_side = list(zip(view.B.s.tolist(), view.B.c.tolist(), view.B.w.tolist()))
    ys = np.concatenate([rng.integers(-2, 30, 25) * 0.125, [-np.inf, np.inf]])
    for r in ([0] if not rb_dependent else [0, 1, 3, 5, 9, 20]):
        for strict in (True, False):
            got = view.count(ys, strict, r)
            want = [oracle_count(a_side, b_side, r, float(y), strict) for y in ys]
            assert got.tolist() == want
        his = ys + rng.integers(0, 6, ys.shape[0]) * 0.125
        counts, starts, pa, pb, over = view.scan(ys, his, r, limit=1 << 40)
        assert not over.any()
        for q, (lo, hi) in enumerate(zip(ys.tolist(), his.tolist())):
            assert counts[q] == oracle_count(a_side, b_side, r, lo, True)
            pairs = sorted(zip(pa[starts[q]:starts[q + 1]].tolist(), pb[starts[q]:starts[q + 1]].tolist()))
            assert pairs == oracle_band(a_side, b_side, r, lo, hi)


def test_bands_over_the_limit_are_flagged_not_listed():
    rng = np.random.default_rng(3)
    view = _searchable(rng, False, False)
    counts, starts, pa, pb, over = view.scan(np.array([-np.inf, 0.5]), np.array([np.inf, 0.5]), 0, limit=3)
    assert over[0] and starts[1] == 0


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rb_dependent,weights", [(False, False), (True, False), (True, True), (False, True)])
def test_lists_equal_the_plain_loops(seed, rb_dependent, weights):
    """Side B's lists per count threshold (fill_lists) as the plain loops build them."""
    rng = np.random.default_rng(seed)
    B = _side(rng, int(rng.integers(0, 60)), 5 if rb_dependent else 0, weights)
    lists = of.Lists(B, rb_dependent)
    want = int(rng.integers(0, 7))
    Bx, Bpos, Bcw, WB, Boff, Bidx, Bidx_off, Bmin, Binv, T = lists.ready(want)
    ref = oracle_lists(list(zip(B.s.tolist(), B.c.tolist(), B.w.tolist())), T, lists.T_full > 0, of.BUCKET_ENTRIES)
    assert T == min(want, lists.T_full) and len(WB) == len(ref)
    for t, (xs, pos, before, total, starts, xmin, inv) in enumerate(ref):
        part = slice(Boff[t], Boff[t + 1])
        assert Bx[part].tolist() == xs and Bpos[part].tolist() == pos and WB[t] == total
        assert Bcw[part].tolist() == before if not lists.unit else Bcw.size == 0
        assert Bidx[Bidx_off[t]:Bidx_off[t + 1]].tolist() == starts and (Bmin[t], Binv[t]) == (xmin, inv)
