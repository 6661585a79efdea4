"""The split enumerator's numba kernels (enumerate/split_kernels.py) against the
plain-Python references of tests/kernel_references.py: bucket counting and filling, strata
of run ids, exact multi-word keys with carries, the reduction of sorted items to table
entries (exact and inexact raws, with and without strata) and the smallest gap."""
from __future__ import annotations

import math

import kernel_references as ref
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale.enumerate import split_kernels as sk
from irscale.enumerate.split import ITEM, group_split

INF = math.inf


# -- count_between / fill_between ----------------------------------------------------------------
def random_grouped(seed, P=30, ns=3, L=12, S=100):
    rng = np.random.default_rng(seed)
    A = np.round(rng.uniform(-5, 15, size=P) * 4) / 4          # quarter steps: many exact ties
    A[:3] = [0.0, 0.0, 7.25]
    state = rng.integers(0, ns, size=P).astype(np.int64)
    Bs = np.full((ns, L), np.inf)
    lengths = [L, 0, int(rng.integers(1, L))]                  # a full row, an empty row, a padded one
    for c in range(ns):
        Bs[c, :lengths[c]] = np.sort(np.round(rng.uniform(-3, 10, size=lengths[c]) * 4) / 4)
    return dict(A=A, state=state, pstrat=rng.integers(0, 3, size=P).astype(np.int64),
                pcount=rng.integers(1, 5, size=P).astype(np.int64), pmin=rng.integers(0, 50, size=P).astype(np.int64),
                Bs=Bs, Bstrat=rng.integers(0, 4, size=(ns, L)).astype(np.int64),
                Bcount=rng.integers(1, 7, size=(ns, L)).astype(np.int64),
                Bmin=rng.integers(0, S, size=(ns, L)).astype(np.int64), S=S)


def grouped_of(name):
    g = group_split(irscale.parse_measure(name).split_form())
    return dict(A=g.A, state=g.state, pstrat=g.pstrat, pcount=g.pcount, pmin=g.pmin, Bs=g.Bs, Bstrat=g.Bstrat,
                Bcount=g.Bcount, Bmin=g.Bmin, S=g.S)


def bounds(g, seed):
    """Bucket bounds: the whole axis, empty ones, and edges at (and between) actual sums."""
    sums = sorted(float(g["A"][p]) + float(b) for p in range(len(g["A"])) for b in g["Bs"][g["state"][p]]
                  if math.isfinite(b))
    rng = np.random.default_rng(seed)
    out = [(-INF, INF), (-INF, sums[0]), (sums[-1], INF), (sums[0], sums[0]), (sums[-1] + 1, INF)]
    for _ in range(8):
        a, b = sorted(rng.choice(len(sums), size=2))
        out.append((sums[a], sums[b]))
        out.append((sums[a] - 0.1, sums[b] + 0.1))
    return out


def kernel_fill(g, lo, hi):
    cap = g["A"].size * g["Bs"].shape[1]
    items = np.zeros(cap, ITEM)
    items["raw"], items["id"], items["count"] = np.nan, -1, -1
    m = sk.fill_between(g["A"], g["state"], g["pstrat"], g["pcount"], g["pmin"], g["Bs"], g["Bstrat"], g["Bcount"],
                        g["Bmin"], g["S"], lo, hi, items)
    assert np.isnan(items["raw"][m:]).all() and (items["id"][m:] == -1).all()      # nothing written past m
    return m, sorted(zip(*(items[f][:m].tolist() for f in ("raw", "id", "count", "stratum"))))


def reference_fill(g, lo, hi):
    return ref.fill_between(g["A"], g["state"], g["pstrat"], g["pcount"], g["pmin"], g["Bs"].tolist(),
                            g["Bstrat"].tolist(), g["Bcount"].tolist(), g["Bmin"].tolist(), g["S"], lo, hi)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_and_fill_between_random_groups(seed):
    g = random_grouped(seed)
    for lo, hi in bounds(g, seed):
        want = reference_fill(g, lo, hi)
        assert sk.count_between(g["A"], g["state"], g["Bs"], lo, hi) == len(want) == \
            ref.count_between(g["A"], g["state"], g["Bs"].tolist(), lo, hi)
        m, got = kernel_fill(g, lo, hi)
        assert m == len(want)
        assert got == want


@pytest.mark.parametrize("name", ["AP@8", "DCG(b=2)@8", "gP(gains=(0,1,2))@5", "RR@8", "nDCG(b=2)@8"])
def test_count_and_fill_between_real_split_forms(name):
    g = grouped_of(name)
    total = 0
    for lo, hi in bounds(g, 3):
        want = reference_fill(g, lo, hi)
        assert sk.count_between(g["A"], g["state"], g["Bs"], lo, hi) == len(want)
        assert kernel_fill(g, lo, hi)[1] == want
        if (lo, hi) == (-INF, INF):
            total = len(want)
    assert total == sum(1 for p in range(len(g["A"])) for b in g["Bs"][g["state"][p]] if math.isfinite(b))


# -- strata of run ids ----------------------------------------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 1), (2, 10), (2, 30), (3, 7), (3, 30), (4, 30)])
def test_popcount_and_grade_counts_ids(levels, n):
    rng = np.random.default_rng(levels * 31 + n)
    ids = rng.integers(0, levels ** n, size=300, dtype=np.int64)
    ids[:2] = [0, levels ** n - 1]
    runs = [ref.run_of_id(i, levels, n) for i in ids]
    pc = sk.popcount_ids(ids, levels, n)
    assert pc.tolist() == [ref.relevant_count(r) for r in runs]
    gc = sk.grade_counts_ids(ids, levels, n, levels - 1)
    assert gc.shape == (ids.size, levels - 1)
    assert gc.tolist() == [ref.grade_counts(r, levels - 1) for r in runs]


def test_strata_of_no_ids():
    empty = np.zeros(0, np.int64)
    assert sk.popcount_ids(empty, 2, 8).shape == (0,)
    assert sk.grade_counts_ids(empty, 3, 8, 2).shape == (0, 2)


# -- exact keys ---------------------------------------------------------------------------------------
def random_keys(seed, words, P=20, ns=3, S=16):
    """KA (P, W), KB (ns, S, W) with top words < 2^62 (sums never overflow the words) and
    lower words drawn near 0 and near 2^64 - 1, so that additions carry (and carries chain)."""
    rng = np.random.default_rng(seed)
    hi = np.uint64(0xFFFFFFFFFFFFFFFF)

    def draw(shape):
        x = rng.integers(0, 1 << 62, size=shape, dtype=np.uint64)
        pick = rng.integers(0, 4, size=shape)
        x = np.where(pick == 0, hi - rng.integers(0, 3, size=shape).astype(np.uint64), x)
        x = np.where(pick == 1, rng.integers(0, 3, size=shape).astype(np.uint64), x)
        x = np.where(pick == 2, x | np.uint64(1 << 63), x)
        x[..., 0] = rng.integers(0, 1 << 62, size=shape[:-1], dtype=np.uint64)
        return x.astype(np.uint64)

    KA, KB = draw((P, words)), draw((ns, S, words))
    state = rng.integers(0, ns, size=P).astype(np.int64)
    return KA, KB, state, S


@pytest.mark.parametrize("words", [1, 2, 3])
def test_exact_keys_and_key_of_id_with_carries(words):
    KA, KB, state, S = random_keys(words, words)
    P = KA.shape[0]
    ids = np.arange(P * S, dtype=np.int64)
    want = [ref.exact_key(i, KA.tolist(), KB.tolist(), state, S) for i in ids]
    assert max(want) < 1 << (64 * words)
    got = sk.exact_keys(ids, KA, KB, state, S)
    assert got.shape == (ids.size, words)
    assert [ref.words_to_int(r) for r in got] == want
    out = np.zeros(words, np.uint64)
    for i in (0, 5, P * S - 1):
        sk.key_of_id(np.int64(i), KA, KB, state, S, out)
        assert ref.words_to_int(out) == want[i]
    if words > 1:          # the cases exercise carries out of lower words
        lows = [(int(KA[i // S, -1]) + int(KB[state[i // S], i % S, -1])) >> 64 for i in ids]
        assert any(lows)


def test_exact_keys_carry_chain():
    M = 0xFFFFFFFFFFFFFFFF
    KA = np.array([[0, M, M], [5, M, M - 1], [1, 0, M]], np.uint64)
    KB = np.array([[[0, 0, 1], [0, 1, 1], [2, M, M]]], np.uint64)
    state = np.zeros(3, np.int64)
    ids = np.arange(9, dtype=np.int64)
    want = [ref.exact_key(i, KA.tolist(), KB.tolist(), state, 3) for i in ids]
    assert [ref.words_to_int(r) for r in sk.exact_keys(ids, KA, KB, state, 3)] == want
    assert want[0] == 1 << 128                              # [0, M, M] + 1 carries through two words


def test_exact_keys_uint32_ids_and_synthetic_form():
    sf = ref.synthetic_split_form(1, n=10, words=2)
    ids = np.random.default_rng(0).permutation(2 ** 10).astype(np.uint32)[:300]
    got = sk.exact_keys(ids, sf["KA"], sf["KB"], sf["state"], sf["S"])
    assert [ref.words_to_int(r) for r in got] == [sf["key"](i) for i in ids]


def test_exact_keys_no_ids():
    KA, KB, state, S = random_keys(0, 2)
    assert sk.exact_keys(np.zeros(0, np.int64), KA, KB, state, S).shape == (0, 2)


# -- settle / sorted_items ------------------------------------------------------------------------
@pytest.mark.parametrize("max_moves", [0, 3, 10**9])
def test_settle(max_moves):
    rng = np.random.default_rng(max_moves % 97)
    raw = np.sort(rng.integers(0, 40, size=60).astype(np.float64))
    for i in rng.integers(0, 59, size=6):             # a few local disorders
        raw[i], raw[i + 1] = raw[i + 1], raw[i]
    ids = rng.permutation(60).astype(np.int64)
    counts = rng.integers(1, 1 << 40, size=60).astype(np.int64)
    strata = rng.integers(0, 31, size=60).astype(np.uint8)
    want = ref.settle(raw.tolist(), ids.tolist(), counts.tolist(), strata.tolist(), max_moves)
    arrays = [raw.copy(), ids.copy(), counts.copy(), strata.copy()]
    assert sk.settle(*arrays, max_moves) == want[0]
    assert [a.tolist() for a in arrays] == list(want[1:])


finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
raw_lists = st.one_of(
    st.lists(finite, max_size=300),
    st.lists(st.floats(0, 1e-300, allow_subnormal=True), max_size=300),
    st.lists(st.sampled_from([0.0, -0.0, 5e-324, 1.0, np.nextafter(1.0, 2), np.nextafter(1.0, 0), 3.5, 1e300]),
             max_size=300),
    st.builds(lambda base, steps: [base + s * np.spacing(base) for s in steps],
              st.floats(1e-3, 1e6), st.lists(st.integers(0, 1 << 20), max_size=300)),
    st.builds(lambda base, steps: [-(base + s * np.spacing(base)) for s in steps],
              st.floats(1e-3, 1e6), st.lists(st.integers(0, 1 << 20), max_size=300)))


def check_sorted_items(raw):
    """sorted_items of records whose run id is their index: raws sorted like np.sort, and
    every output row is one whole input record."""
    from irscale.enumerate.split import sorted_items
    m = raw.size
    items = np.zeros(m, ITEM)
    items["raw"], items["id"] = raw, np.arange(m)
    items["count"], items["stratum"] = 3 * np.arange(m) + 1, np.arange(m) % 7
    got_raw, ids, counts, strata = sorted_items(items)
    assert got_raw.tolist() == np.sort(raw).tolist()
    assert sorted(ids.tolist()) == list(range(m))                   # a permutation of the records
    assert (raw[ids] == got_raw).all() and (counts == 3 * ids + 1).all() and (strata == ids % 7).all()


@given(raw_lists)
@settings(max_examples=300, deadline=None)
def test_sorted_items_sorts_whole_records(values):
    check_sorted_items(np.array(values, dtype=np.float64))


@pytest.mark.parametrize("case", ["near ties settled", "settling gives up", "both signs"])
def test_sorted_items_settles_or_falls_back(case):
    rng = np.random.default_rng(7)
    if case == "near ties settled":          # bits wider than the index leaves room for: neighbours a few
        base = rng.uniform(0, 1e6, size=5000)  # units in the last place apart come out of the packed sort unsorted
        raw = np.concatenate([base, np.nextafter(base, np.inf), base + 1e-9, base[:100]])
    elif case == "settling gives up":        # a span of 2^62 units: 2,000 raws within 2^10 units of 1.0 share
        raw = np.concatenate([[0.0, 1e300], 1.0 + rng.integers(0, 1 << 10, 2000) * np.spacing(1.0)])   # their keys
    else:
        raw = rng.normal(size=3000)
    rng.shuffle(raw)
    check_sorted_items(raw)


# -- _sort_by_key / _emit_value / _emit_strata ---------------------------------------------------------------
@pytest.mark.parametrize("words,size", [(1, 5), (1, 16), (1, 17), (1, 60), (2, 40), (3, 20)])
def test_sort_by_key(words, size):
    rng = np.random.default_rng(words * 100 + size)
    m = size + 10
    keys = rng.integers(0, 3, size=(m, words)).astype(np.uint64)      # many ties
    keys[:, 0] |= np.uint64(1 << 63) * rng.integers(0, 2, size=m).astype(np.uint64)   # high bit: unsigned order
    buf = rng.permutation(m).astype(np.int64)
    orig = buf.copy()
    a, b = 4, 4 + size
    sk._sort_by_key(buf, a, b, keys)
    assert sorted(buf[a:b].tolist()) == sorted(orig[a:b].tolist())
    got = [ref.words_to_int(keys[i]) for i in buf[a:b]]
    assert got == sorted(ref.words_to_int(keys[i]) for i in orig[a:b])
    assert (buf[:a] == orig[:a]).all() and (buf[b:] == orig[b:]).all()


@pytest.mark.parametrize("stratified", [False, True])
def test_emit_value_and_strata(stratified):
    rng = np.random.default_rng(int(stratified))
    m, nstrata = 30, 6
    ids = rng.permutation(1000)[:m].astype(np.int64)
    counts = rng.integers(1, 9, size=m).astype(np.int64)
    strata = rng.integers(1, 5, size=m).astype(np.uint8)
    cnt = np.zeros(nstrata, np.int64)
    best = np.zeros(nstrata, np.int64)
    out = [np.full(m, -1, np.int64), np.full(m, -1, np.int64), np.full(m, 99, np.uint8), np.zeros(m, np.bool_)]
    e0 = 3
    if stratified:
        e = sk._emit_strata(5, 17, ids, counts, strata, cnt, best, *out, e0)
    else:
        e = sk._emit_value(5, 17, ids, counts, *out, e0)
    want = ref.group_entries(list(range(5, 17)), ids, counts, strata, stratified)
    assert e == e0 + len(want)
    got = [(int(out[0][t]), int(out[1][t]), int(out[2][t]), bool(out[3][t])) for t in range(e0, e)]
    assert got == want
    assert (cnt == 0).all()                                           # scratch left zeroed
    assert (out[0][:e0] == -1).all() and (out[0][e:] == -1).all()


@pytest.mark.parametrize("words", [1, 3])
def test_put_in_order(words):
    rng = np.random.default_rng(words)
    m = 25
    ids = rng.permutation(1000)[:m].astype(np.int64)
    counts = rng.integers(1, 9, size=m).astype(np.int64)
    strata = rng.integers(0, 5, size=m).astype(np.uint8)
    keys = rng.integers(0, 1 << 62, size=(m, words)).astype(np.uint64)
    arrays = (ids, counts, strata, keys)
    before = [a.copy() for a in arrays]
    buf = np.arange(m, dtype=np.int64)
    buf[4:20] = 4 + rng.permutation(16)
    sk._put_in_order(buf, 4, 20, *arrays)
    for a, b in zip(arrays, before):
        assert (a[4:20] == b[buf[4:20]]).all()
        assert (a[:4] == b[:4]).all() and (a[20:] == b[20:]).all()


# -- reduce_sorted ------------------------------------------------------------------------------
def kernel_reduce(raw, ids, counts, strata, keys, exact, two_bound, stratified, nstrata):
    m = len(raw)
    out_ids = np.full(m, -1, np.int64)
    out_counts = np.full(m, -1, np.int64)
    out_strata = np.full(m, 99, np.uint8)
    out_first = np.zeros(m, np.bool_)
    flagged = np.full((m, 2), -1, np.int64)
    e, nflag, gap, gap_lo, gap_hi = sk.reduce_sorted(raw, ids.copy(), counts.copy(), strata.copy(), keys.copy(), exact,
                                                     two_bound, stratified, nstrata, out_ids, out_counts, out_strata,
                                                     out_first, flagged)
    entries = [(int(out_ids[t]), int(out_counts[t]), int(out_strata[t]), bool(out_first[t])) for t in range(e)]
    return entries, [tuple(int(v) for v in flagged[t]) for t in range(nflag)], float(gap), int(gap_lo), int(gap_hi)


def check_reduce(raw, ids, counts, strata, keys, exact, two_bound, stratified, nstrata):
    got = kernel_reduce(raw, ids, counts, strata, keys, exact, two_bound, stratified, nstrata)
    want = ref.reduce_sorted(raw, ids, counts, strata, keys.tolist(), exact, two_bound, stratified)
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert got[2] == want[2]
    assert got[3:] == want[3:]          # the first entries of the clusters on both sides of the smallest gap
    return got


def items_of_split_form(A, state, B, S, P, levels, n, key, seed):
    """Every run of the form as an item (raw, id, count, stratum, exact key), sorted by raw."""
    rng = np.random.default_rng(seed)
    ids = np.arange(P * S, dtype=np.int64)
    raw = A[ids // S] + B[state[ids // S], ids % S]
    order = np.argsort(raw, kind="stable")
    ids = ids[order]
    strata = np.array([ref.relevant_count(ref.run_of_id(i, levels, n)) for i in ids], np.uint8)
    counts = rng.integers(1, 4, size=ids.size).astype(np.int64)
    return raw[order], ids, counts, strata, key(ids)


@pytest.mark.parametrize("name,stratified", [("AP@8", True), ("AP@8", False), ("RR@8", False), ("P@8", True)])
def test_reduce_sorted_exact_real(name, stratified):
    sf = irscale.parse_measure(name).split_form()
    assert sf.exact
    raw, ids, counts, strata, keys = items_of_split_form(sf.A, sf.state, sf.B, sf.S, sf.P, sf.levels, sf.n,
                                                         lambda i: np.zeros((i.size, 1), np.uint64), 1)
    entries, flagged, gap, _, _ = check_reduce(raw, ids, counts, strata, keys, True, 0.0, stratified, sf.n + 1)
    assert flagged == []
    assert sum(c for _, c, _, _ in entries) == counts.sum()


@pytest.mark.parametrize("name,stratified", [("DCG(b=2)@8", False), ("nDCG(b=2)@8", True),
                                             ("DCG(b=2,gains=(0,1,2))@5", False)])
def test_reduce_sorted_inexact_real(name, stratified):
    sf = irscale.parse_measure(name).split_form()
    assert not sf.exact

    def key(i):
        return np.array([ref.int_to_words(ref.exact_key(r, sf.KA.tolist(), sf.KB.tolist(), sf.state, sf.S),
                                          sf.KA.shape[1]) for r in i], np.uint64)

    items = items_of_split_form(sf.A, sf.state, sf.B, sf.S, sf.P, sf.levels, sf.n, key, 2)
    check_reduce(*items, False, 2 * sf.bound, stratified, sf.n + 1)


@pytest.mark.parametrize("words,stratified,seed", [(2, True, 0), (2, False, 1), (1, True, 2), (1, False, 3)])
def test_reduce_sorted_inexact_clusters_of_several_keys(words, stratified, seed):
    sf = ref.synthetic_split_form(seed, n=10, words=words)

    def key(i):
        return np.array([ref.int_to_words(sf["key"](r), words) for r in i], np.uint64)

    items = items_of_split_form(sf["A"], sf["state"], sf["B"], sf["S"], 2 ** sf["h"], 2, sf["n"], key, seed)
    entries, flagged, gap, _, _ = check_reduce(*items, False, 2 * sf["bound"], stratified, sf["n"] + 1)
    assert flagged and max(e1 - e0 for e0, e1 in flagged) > 16      # big clusters: both sort paths
    assert gap > 2 * sf["bound"]


def test_reduce_sorted_empty():
    z = np.zeros(0)
    got = sk.reduce_sorted(z, z.astype(np.int64), z.astype(np.int64), z.astype(np.uint8),
                           np.zeros((0, 1), np.uint64), False, 1.0, True, 5, z.astype(np.int64),
                           z.astype(np.int64), z.astype(np.uint8), z.astype(np.bool_),
                           np.zeros((0, 2), np.int64))
    assert got == (0, 0, math.inf, -1, -1)


TWO_BOUND = 2.0 ** -36
# dyadic offsets (exact in float64): neighbour gaps far below, just below, exactly at and above TWO_BOUND
BASE_RAWS = [0.0, 0.5, 0.5 + 2 ** -40, 0.5 + 2 ** -39, 0.5 + 2 ** -36, 0.5 + 2 ** -35, 0.5 + 2 ** -35 + 2 ** -34,
             1.0, 1.0 + 2 ** -38, 3.0]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(BASE_RAWS), st.integers(0, 3), st.integers(0, 2), st.integers(1, 5),
                          st.integers(0, 4)), min_size=1, max_size=40),
       st.booleans(), st.booleans(), st.integers(1, 2), st.data())
def test_reduce_sorted_hypothesis(items, exact, stratified, words, data):
    items.sort(key=lambda t: t[0])
    ids = data.draw(st.lists(st.integers(0, 10 ** 6), min_size=len(items), max_size=len(items), unique=True))
    raw = np.array([t[0] for t in items])
    keys = np.array([[t[1]] + [t[2]] * (words - 1) for t in items], np.uint64)
    counts = np.array([t[3] for t in items], np.int64)
    strata = np.array([t[4] for t in items], np.uint8)
    check_reduce(raw, np.array(ids, np.int64), counts, strata, keys, exact, TWO_BOUND, stratified, 5)


def test_reduce_sorted_chains_at_exactly_two_bound():
    raw = np.array(BASE_RAWS[1:7])          # gaps 2^-40, 2^-40, 7 * 2^-39, 2^-36 (= TWO_BOUND), 2^-34
    n = raw.size
    keys = np.arange(n, dtype=np.uint64)[::-1].reshape(n, 1).copy()
    got = check_reduce(raw, np.arange(n, dtype=np.int64), np.ones(n, np.int64), np.zeros(n, np.uint8), keys, False,
                       TWO_BOUND, False, 3)
    assert got[1] == [(0, 5)] and got[2] == 2 ** -34


# -- smallest_gap ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["AP@8", "DCG(b=2)@8", "gP(gains=(0,1,2))@5", "RBP(p=0.5)@8"])
def test_smallest_gap_real(name):
    sf = irscale.parse_measure(name).split_form()
    rng = np.random.default_rng(0)
    ids = np.arange(sf.P * sf.S, dtype=np.int64)
    raw = sf.A[ids // sf.S] + sf.B[sf.state[ids // sf.S], ids % sf.S]
    for size in (1, 2, 10, 60):
        reps = np.sort(rng.choice(ids.size, size=size, replace=False))
        reps = reps[np.argsort(raw[reps], kind="stable")]          # value order
        got = sk.smallest_gap(reps, sf.A, sf.state, sf.B, sf.S)
        want = ref.smallest_gap(reps, sf.A, sf.state, sf.B.tolist(), sf.S)
        assert (float(got[0]), int(got[1])) == want


def test_smallest_gap_first_occurrence_and_any_order():
    A = np.array([0.0, 10.0])
    B = np.array([[0.0, 1.0, 2.0, 4.0]])
    state = np.zeros(2, np.int64)
    reps = np.array([0, 1, 2, 3, 4, 5], np.int64)          # raws 0 1 2 4 10 11: gap 1 first at 0
    assert sk.smallest_gap(reps, A, state, B, 4) == (1.0, 0)
    reps = np.array([3, 0, 5, 1], np.int64)                # raws 4 0 11 1: gaps -4 11 -10 (negative ones count)
    got = sk.smallest_gap(reps, A, state, B, 4)
    assert (float(got[0]), int(got[1])) == ref.smallest_gap(reps, A, state, B.tolist(), 4) == (-10.0, 2)
