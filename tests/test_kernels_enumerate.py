"""The enumerator's numba kernels (enumerate/kernels.py) against the plain-Python
references of tests/kernel_references.py: run decoding/encoding, feasible runs, strata and
every scoring kernel, on small random inputs with fixed seeds and on real measures' weights."""
from __future__ import annotations

import math

import kernel_references as ref
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale.enumerate import kernels as K
from irscale.enumerate.jobs import kernel_of
from irscale.scales.measures.families import average_precision_kernels as APK
from irscale.scales.measures.families import err_kernels as ERRK
from irscale.scales.measures.families import reciprocal_rank_kernels as RRK

SPACES = [(2, 1), (2, 7), (3, 4), (4, 3), (5, 2)]


def random_runs(rng, m, n, levels):
    return rng.integers(0, levels, size=(m, n), dtype=np.uint8)


def as_lists(arr):
    return [tuple(int(v) for v in row) for row in arr]


# -- run ids ---------------------------------------------------------------------------------
@pytest.mark.parametrize("levels,n", SPACES)
def test_decode_runs_whole_space_is_product_order(levels, n):
    total = levels ** n
    out = np.full((total, n), 255, np.uint8)
    K.decode_runs(0, total, levels, n, out)
    assert as_lists(out) == ref.all_runs(levels, n)


@pytest.mark.parametrize("levels,n", SPACES)
def test_decode_runs_chunks_and_untouched_rows(levels, n):
    rng = np.random.default_rng(levels * 100 + n)
    total = levels ** n
    runs = ref.all_runs(levels, n)
    for _ in range(5):
        start = int(rng.integers(0, total))
        count = int(rng.integers(0, total - start + 1))
        out = np.full((count + 2, n), 255, np.uint8)
        K.decode_runs(start, count, levels, n, out)
        assert as_lists(out[:count]) == runs[start:start + count]
        assert (out[count:] == 255).all()          # rows past count are not written


def test_decode_runs_far_into_large_spaces():
    for levels, n in [(2, 30), (3, 30), (4, 30)]:
        total = levels ** n
        for start in (0, total // 3, total - 5):
            out = np.empty((5, n), np.uint8)
            K.decode_runs(start, 5, levels, n, out)
            assert as_lists(out) == [ref.run_of_id(start + i, levels, n) for i in range(5)]


@pytest.mark.parametrize("levels,n", [(2, 1), (2, 12), (2, 30), (3, 9), (3, 30), (4, 30)])
def test_decode_ids_any_order(levels, n):
    rng = np.random.default_rng(7 + levels * n)
    total = levels ** n
    ids = rng.integers(0, total, size=200, dtype=np.int64)
    ids[:3] = [0, total - 1, ids[5]]              # extremes and a duplicate
    out = np.full((ids.size, n), 255, np.uint8)
    K.decode_ids(ids, levels, n, out)
    assert as_lists(out) == [ref.run_of_id(i, levels, n) for i in ids]


def test_decode_ids_empty():
    out = np.empty((0, 5), np.uint8)
    K.decode_ids(np.zeros(0, np.int64), 2, 5, out)
    assert out.shape == (0, 5)


@pytest.mark.parametrize("levels,n", [(2, 1), (2, 12), (2, 30), (3, 30), (4, 30), (5, 6)])
def test_encode_runs(levels, n):
    rng = np.random.default_rng(11 * levels + n)
    runs = random_runs(rng, 300, n, levels)
    runs[0] = 0
    runs[1] = levels - 1
    got = K.encode_runs(runs, levels)
    assert got.dtype == np.uint64
    assert [int(v) for v in got] == [ref.id_of_run(r, levels) for r in as_lists(runs)]
    assert int(got[1]) == levels ** n - 1


def test_encode_runs_empty():
    assert K.encode_runs(np.zeros((0, 4), np.uint8), 2).shape == (0,)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 4).flatmap(lambda L: st.tuples(st.just(L), st.lists(st.integers(0, L - 1), min_size=1,
                                                                           max_size=30))))
def test_encode_runs_hypothesis(case):
    levels, run = case
    got = K.encode_runs(np.array([run], np.uint8), levels)
    assert int(got[0]) == ref.id_of_run(run, levels)


# -- feasible runs ---------------------------------------------------------------------------
FEASIBLE = [(4, [1]), (5, [2, 1]), (4, [0, 2]), (3, [3, 3, 3]), (6, [6]), (5, [0]), (4, [1, 0, 2]), (1, [1, 1]),
            (6, [2, 2]), (3, [5, 0])]


def feasible_by_kernel(n, caps, rows):
    caps = np.asarray(caps, np.int64)
    run = np.zeros(n, np.int64)
    run[0] = -1
    have = np.zeros(caps.size + 1, np.int64)
    pos = np.zeros(1, np.int64)
    got = []
    calls = 0
    while pos[0] >= 0:
        out = np.full((rows, n), 255, np.uint8)
        k = K.feasible_runs(n, caps, run, have, pos, out)
        if pos[0] >= 0:                      # fewer rows than asked only when finished
            assert k == rows
        got += as_lists(out[:k])
        assert (out[k:] == 255).all()
        calls += 1
        assert calls < 10_000
    return got


@pytest.mark.parametrize("n,caps", FEASIBLE)
@pytest.mark.parametrize("rows", [1, 3, 7, 4096])
def test_feasible_runs_in_id_order_resumable(n, caps, rows):
    assert feasible_by_kernel(n, caps, rows) == ref.feasible_runs(n, caps)


# -- strata ----------------------------------------------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 1), (2, 10), (3, 6), (4, 12), (5, 4)])
def test_relevant_counts(levels, n):
    runs = random_runs(np.random.default_rng(levels + n), 300, n, levels)
    got = K.relevant_counts(runs)
    assert got.dtype == np.int64
    assert got.tolist() == [ref.relevant_count(r) for r in as_lists(runs)]


@pytest.mark.parametrize("levels,n", [(2, 10), (3, 6), (4, 12), (5, 4), (4, 30)])
def test_grade_count_codes(levels, n):
    rng = np.random.default_rng(levels * n)
    runs = random_runs(rng, 300, n, levels)
    runs[0] = levels - 1                        # every document of the top grade: the largest code
    got = K.grade_count_codes(runs, levels)
    assert got.tolist() == [ref.grade_count_code(r) for r in as_lists(runs)]


def test_strata_of_empty_runs():
    empty = np.zeros((0, 6), np.uint8)
    assert K.relevant_counts(empty).shape == (0,)
    assert K.grade_count_codes(empty, 3).shape == (0,)


# -- scoring kernels -------------------------------------------------------------------------
def score(fn, runs, weights, words=1):
    out = np.full((runs.shape[0], words), 0xDEAD, np.uint64)
    fn(runs, weights, out)
    return out


def keys(out):
    return [ref.words_to_int(row) for row in out]


@pytest.mark.parametrize("levels,n", [(2, 8), (3, 6), (4, 20)])
def test_additive_keys_random_weights(levels, n):
    rng = np.random.default_rng(3 * levels + n)
    W = rng.integers(0, 1 << 40, size=(n, levels), dtype=np.uint64)
    runs = random_runs(rng, 400, n, levels)
    want = [ref.additive_key(r, W.tolist()) for r in as_lists(runs)]
    assert keys(score(K.additive_keys, runs, W)) == want


@pytest.mark.parametrize("name", ["P@8", "RBP(p=0.8)@10", "gP(gains=(0,1,3))@5", "RBP(p=0.3)@20"])
def test_additive_keys_real_weights(name):
    m = irscale.parse_measure(name)
    kernel, words, W = m.spec.kernel_arrays()
    assert (kernel, words) == ("additive", 1)
    runs = random_runs(np.random.default_rng(5), 500, m.n, m.levels)
    want = [ref.additive_key(r, m.spec.weights) for r in as_lists(runs)]
    assert keys(score(K.additive_keys, runs, W)) == want


def limbs(weights, words):
    """(n, levels, 2 * words) little-endian 32-bit limbs of Python-int weights."""
    n, L = len(weights), len(weights[0])
    return np.array([[[(weights[k][g] >> (32 * j)) & 0xFFFFFFFF for j in range(2 * words)] for g in range(L)]
                     for k in range(n)], dtype=np.uint64)


@pytest.mark.parametrize("levels,n,words", [(2, 12, 2), (3, 10, 2), (4, 8, 3), (2, 30, 2)])
def test_additive_keys_mw_with_carries(levels, n, words):
    rng = np.random.default_rng(levels * n * words)
    top = 64 * words - 6                       # sums of <= 30 weights stay below 2^(64 words)
    W = [[int(rng.integers(0, 1 << 62)) << (top - 62) for _ in range(levels)] for _ in range(n)]
    for k in range(n):                         # limbs at 0xFFFFFFFF: carries at every limb
        W[k][levels - 1] = (1 << top) - 1 - k
    runs = random_runs(rng, 300, n, levels)
    runs[0] = levels - 1
    want = [ref.additive_key(r, W) for r in as_lists(runs)]
    got = score(K.additive_keys_mw, runs, limbs(W, words), words)
    assert keys(got) == want
    assert want[0] >= 1 << 64                  # the case holds keys beyond one word


def test_additive_keys_mw_real_weights():
    m = irscale.parse_measure("RBP(p=0.7)@20")
    kernel, words, L = m.spec.kernel_arrays()
    assert (kernel, words) == ("additive_mw", 2)
    runs = random_runs(np.random.default_rng(9), 300, m.n, 2)
    runs[0] = 1
    want = [ref.additive_key(r, m.spec.weights) for r in as_lists(runs)]
    assert keys(score(K.additive_keys_mw, runs, L, words)) == want


def _named(kernel):
    """The numba function a key spec's kernel name stands for (through its tiered view)."""
    fn = kernel_of(kernel)
    return getattr(fn, "kernel", fn)


def _is(kernel, fn):
    """Whether a key spec's kernel name stands for ``fn`` (or the kernel ``fn`` wraps)."""
    return _named(kernel) is getattr(fn, "kernel", fn)


def test_ap_keys_real_weights():
    for name in ["AP@10", "AP@16"]:
        m = irscale.parse_measure(name)
        kernel, words, W = m.spec.kernel_arrays()
        assert _is(kernel, APK.ap_keys)                 # the family's own kernel
        L = math.lcm(*range(1, m.n + 1))
        assert [int(W[k, 1]) for k in range(m.n)] == [L // (k + 1) for k in range(m.n)]
        runs = random_runs(np.random.default_rng(m.n), 500, m.n, 2)
        want = [ref.ap_key(r, W.tolist()) for r in as_lists(runs)]
        assert keys(score(APK.ap_keys, runs, W)) == want


def test_ap_keys_graded_runs_random_weights():
    rng = np.random.default_rng(21)
    n = 9
    W = rng.integers(0, 1 << 30, size=(n, 3), dtype=np.uint64)
    runs = random_runs(rng, 400, n, 3)           # any degree > 0 counts as relevant
    want = [ref.ap_key(r, W.tolist()) for r in as_lists(runs)]
    assert keys(score(APK.ap_keys, runs, W)) == want


@pytest.mark.parametrize("levels,n,threshold", [(2, 8, None), (3, 6, None), (3, 6, 2), (4, 10, 3), (4, 10, 1)])
def test_rr_keys(levels, n, threshold):
    W = np.zeros((0, 0), np.uint64) if threshold is None else np.array([[threshold]], np.uint64)
    runs = random_runs(np.random.default_rng(levels + n), 400, n, levels)
    runs[0] = 0                                 # no relevant document: key 0
    want = [ref.rr_key(r, threshold or 1) for r in as_lists(runs)]
    got = keys(score(RRK.rr_keys, runs, W))
    assert got == want
    assert got[0] == 0


def test_rr_keys_real_measures():
    for name in ["RR@8", "RR(gains=(0,1,2),rel=2)@6"]:
        m = irscale.parse_measure(name)
        kernel, _, W = m.spec.kernel_arrays()
        assert _is(kernel, RRK.rr_keys)
        runs = np.array(ref.all_runs(m.levels, m.n), np.uint8)
        thr = int(W[0, 0]) if W.shape[0] else 1
        want = [ref.rr_key(r, thr) for r in as_lists(runs)]
        assert keys(score(RRK.rr_keys, runs, W)) == want


@pytest.mark.parametrize("name", ["ERR@8", "ERR(gains=(0,1,2))@6", "ERR(gains=(0,1,2,3))@7", "ERR@24"])
def test_err_keys_real_measures(name):
    m = irscale.parse_measure(name)
    kernel, words, W = m.spec.kernel_arrays()
    assert _is(kernel, ERRK.err_keys) and words == 1
    n = m.n
    runs = random_runs(np.random.default_rng(n), 400, n, m.levels)
    runs[0] = m.levels - 1
    want = [ref.err_key(r, W[:n].tolist(), W[n].tolist()) for r in as_lists(runs)]
    assert keys(score(ERRK.err_keys, runs, W)) == want


def test_err_keys_random_weights():
    rng = np.random.default_rng(4)
    n, levels = 7, 3
    W = np.vstack([rng.integers(0, 1 << 20, size=(n, levels)), rng.integers(1, 9, size=(1, levels))]).astype(np.uint64)
    runs = random_runs(rng, 300, n, levels)
    want = [ref.err_key(r, W[:n].tolist(), W[n].tolist()) for r in as_lists(runs)]
    assert keys(score(ERRK.err_keys, runs, W)) == want


@pytest.mark.parametrize("fn,words", [(K.additive_keys, 1), (APK.ap_keys, 1), (RRK.rr_keys, 1), (ERRK.err_keys, 1),
                                      (K.additive_keys_mw, 2)])
def test_scoring_kernels_on_no_runs(fn, words):
    runs = np.zeros((0, 4), np.uint8)
    W = np.ones((5, 2, 4), np.uint64) if words == 2 else np.ones((5, 2), np.uint64)
    out = score(fn, runs, W, words)
    assert out.shape == (0, words)
