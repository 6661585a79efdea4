"""Closed forms of SPEC section 1 and the paper's worked example."""
from fractions import Fraction

import numpy as np
import pytest

import irscale
from irscale.enumerate.runspace import all_runs

N = 16


def test_rbp_half_every_run_distinct_rank_is_id_plus_one():
    s = irscale.scale(f"RBP(p=0.5)@{N}")
    runs = all_runs(2, N)
    assert len(s) == 2 ** N
    ids = np.arange(2 ** N)
    assert np.array_equal(s.rank_runs(runs), ids + 1)
    # phi(m) = 2^N m + 1 on the values themselves
    m = ids / 2.0 ** N  # RBP(1/2) of run id x is x / 2^N exactly
    assert np.array_equal(s.rank(m), (2 ** N * m + 1).astype(int))
    assert np.array_equal(s.values, m)


def test_rr_closed_form():
    s = irscale.scale(f"RR@{N}")
    assert len(s) == N + 1
    vals = [0.0] + [1.0 / k for k in range(N, 0, -1)]
    assert np.allclose(s.values, vals, rtol=0, atol=0)
    for k in range(1, N + 1):
        assert s.rank([1.0 / k])[0] == N + 2 - k
        run = np.zeros(N, dtype=np.uint8)
        run[k - 1] = 1
        run[k:] = 1  # later documents do not matter
        assert s.rank_runs(run)[0] == N + 2 - k
    assert s.rank([0.0])[0] == 1
    # multiplicity of 1/k is 2^(N-k), of 0 is 1
    assert s.counts.tolist() == [1] + [2 ** (N - k) for k in range(N, 0, -1)]


def test_precision_closed_form():
    s = irscale.scale(f"P@{N}")
    assert len(s) == N + 1
    for r in range(N + 1):
        assert s.rank([float(Fraction(r, N))])[0] == r + 1
    from math import comb
    assert s.counts.tolist() == [comb(N, r) for r in range(N + 1)]


def test_paper_dcg_example():
    s = irscale.scale("DCG(b=2)@4")
    assert len(s) == 12
    runs = [(1, 1, 1, 1), (1, 1, 1, 0), (1, 1, 0, 1), (1, 0, 1, 1), (0, 1, 1, 1), (0, 0, 0, 0)]
    assert s.rank_runs(runs).tolist() == [12, 11, 10, 9, 9, 1]


@pytest.mark.parametrize("n,k", [(5, 24), (10, 768), (15, 24576)])
def test_dcg_b2_distinct_count(n, k):
    assert len(irscale.scale(f"DCG(b=2)@{n}")) == k == 3 * 2 ** (n - 2)


def test_dcg_b10_orders_like_precision():
    """SPEC: with b = 10 the first ten ranks are not discounted, DCG(10)@N = P@N order."""
    for n in (5, 10):
        d, p = irscale.scale(f"DCG(b=10)@{n}"), irscale.scale(f"P@{n}")
        runs = all_runs(2, n)
        assert np.array_equal(d.rank_runs(runs), p.rank_runs(runs))


def test_rb_above_n_uses_actual_rb_for_values():
    s10, s25 = irscale.scale("AP@10", rb=10), irscale.scale("AP@10", rb=25)
    assert len(s10) == len(s25)
    assert np.allclose(s25.values * 25, s10.values * 10)
    run = [1] * 10
    assert s25.rank_runs(run)[0] == len(s25)
    assert s25.rank([10 / 25])[0] == len(s25)
    r = irscale.scale("R@10", rb=40)
    assert r.values[-1] == 10 / 40


@pytest.mark.parametrize("name", ["RR@9", "AP@9", "DCG(b=2)@9", "RBP(p=0.8)@9", "nDCG(b=2)@9", "P@9"])
def test_certificate_smallest_gap_is_exact(name):
    """The stored smallest gap of a table equals the smallest difference of the exact values
    (rank oracles do not enumerate gaps: their certificates say so)."""
    import mpmath
    import naive
    m = irscale.parse_measure(name)
    fam = name.split("@")[0]
    rb = m.n if m.rb_dependent else None
    distinct = naive.oracle(naive.REFERENCES[fam], m.n, rb)[2]
    gaps = [b - a for a, b in zip(distinct, distinct[1:])]
    cert = irscale.scale(m, rb=rb, layout="table").certificate
    if isinstance(distinct[0], Fraction):
        assert cert.min_gap_exact == str(min(gaps))
    else:
        assert abs(mpmath.mpf(cert.min_gap_exact) - min(gaps)) < 1e-15
