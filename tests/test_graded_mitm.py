"""The graded meet-in-the-middle oracle (scales/tables/graded_mitm.py) against the plain-Python
reference from the definition (tests/graded_reference.py: every run enumerated, keyed by its
exact tuple of group sums, feasible runs kept per count vector), against irscale's tables of
graded nDCG, and its kernel against a plain-Python twin."""
import itertools
import os
import random

import graded_reference as gr
import mpmath
import numpy as np
import pytest

import irscale
from irscale.errors import RunError
from irscale.scales.tables import graded_mitm as gm
from irscale.scales.tables import graded_mitm_bases as gb
from irscale.scales.tables import graded_mitm_kernels as mk

_REFS: dict = {}


def _ref(n, gains, kind="trec"):
    key = (n, tuple(gains), kind)
    if key not in _REFS:
        _REFS[key] = gr.Reference(n, gains, kind)
    return _REFS[key]


def _oracle(n, gains, counts, kind="trec", **kw):
    d, b = gm.trec_discounts(n) if kind == "trec" else gm.jk_discounts(int(kind), n)
    return gm.GradedMitm(n, gains, counts, d, b, **kw)


def _check(ref, counts, kind="trec", **kw):
    """K and the rank of every feasible run equal the reference's."""
    o = _oracle(ref.n, ref.gains, counts, kind, **kw)
    k, ranks = ref.scale(counts)
    idx = sorted(ranks)
    runs = np.array([ref.runs[i] for i in idx], np.uint8)
    assert o.k == k, counts
    assert o.rank_runs(runs).tolist() == [ranks[i] for i in idx], counts
    return o


def _vectors(n, grades):
    return list(itertools.product(range(n + 1), repeat=grades))


@pytest.mark.parametrize("n,gains", [(6, (0, 1, 2, 3)), (5, (0, 1, 3, 7)), (5, (0, 1, 1, 2)), (5, (0, 0, 1, 3)),
                                     (4, (0, 2, 3, 5))])
def test_every_count_vector_with_4_levels(n, gains):
    ref = _ref(n, gains)
    several = 0
    for vec in _vectors(n, 3):
        _check(ref, vec)
        several += sum(c < n for c in vec) >= 2
    assert several > 0


#: every count vector with 6 levels at N = 4 and 5, and random vectors at N = 10 (minutes):
#: IRSCALE_MITM_EVERY_VECTOR=1, or ``python scripts/long_checks.py mitm``; samples otherwise
EVERY_VECTOR = os.environ.get("IRSCALE_MITM_EVERY_VECTOR") == "1"


def test_count_vectors_with_6_levels_at_n4():
    """Every 5th of the 3,125 vectors (all of them with EVERY_VECTOR)."""
    ref = _ref(4, (0, 1, 2, 3, 4, 5))
    for vec in _vectors(4, 5)[::1 if EVERY_VECTOR else 5] + [(4,) * 5]:
        _check(ref, vec)


def test_count_vectors_with_6_levels_at_n5():
    """A sample of 150 vectors (all 7,776 with EVERY_VECTOR)."""
    ref = _ref(5, (0, 1, 2, 3, 4, 5))
    rng = random.Random(5)
    sample = _vectors(5, 5) if EVERY_VECTOR else [tuple(rng.randint(0, 5) for _ in range(5)) for _ in range(150)]
    for vec in [(5,) * 5, (0,) * 5] + sample:
        _check(ref, vec)


@pytest.mark.parametrize("b", [2, 3])
def test_jarvelin_kekalainen_discount(b):
    ref = _ref(6, (0, 1, 2, 3), b)
    rng = random.Random(b)
    for vec in [(6, 6, 6), (2, 1, 0)] + [tuple(rng.randint(0, 6) for _ in range(3)) for _ in range(60)]:
        _check(ref, vec, b)


def test_random_count_vectors_at_n8():
    ref = _ref(8, (0, 1, 2, 3))
    rng = random.Random(8)
    for vec in [(8, 8, 8), (3, 2, 1)] + [tuple(rng.randint(0, 8) for _ in range(3)) for _ in range(3)]:
        _check(ref, vec)


@pytest.mark.slow
@pytest.mark.parametrize("n", [9, 10] if EVERY_VECTOR else [9])     # N = 10: the reference takes 100 s
def test_random_count_vectors_at_n9_n10(n):
    ref = _ref(n, (0, 1, 2, 3))
    rng = random.Random(n)
    for vec in [(n, n, n), (n // 2, n // 3, 2)] + [tuple(rng.randint(0, n) for _ in range(3)) for _ in range(6)]:
        _check(ref, vec)


def test_the_split_does_not_change_the_answers():
    """Every split the limits allow (B of one group up to B of all but one; rows budgets that
    refuse the first splits) gives the same K and ranks."""
    ref = _ref(6, (0, 1, 2, 3))
    seen = set()
    for b_limit in (1, 4, 16, 64, 256, 4096, 1 << 20):
        for vec in [(2, 1, 1), (6, 3, 0), (1, 6, 2), (6, 6, 6)]:
            o = _check(ref, vec, b_limit=b_limit)
            seen.add(o.split_sizes()[:2])
    assert len(seen) >= 5
    o = _check(ref, (2, 1, 1), row_budget=64)
    assert o.split_sizes()[3] <= 64
    for vec in [(2, 1, 1), (1, 6, 2)]:                       # another split started from a first one's classes
        first = _check(ref, vec, b_limit=4)
        again = _check(ref, vec, b_limit=1 << 20, like=first)
        assert again.split_sizes()[:2] != first.split_sizes()[:2]
    with pytest.raises(ValueError):
        _oracle(6, (0, 1, 2, 3), (2, 1, 2), like=first)


def side_step_reference(s, code, cls, floats, table, empty):
    """Plain-Python twin of graded_mitm_kernels.side_step: every (entry, option) whose class is
    not empty, as (value, code, class), in increasing order of value."""
    m = len(floats)
    out = [(s[e] + floats[o], code[e] * m + o, table[cls[e]][o]) for e in range(len(s)) for o in range(m)
           if table[cls[e]][o] != empty]
    return sorted(out, key=lambda x: x[0])


@pytest.mark.parametrize("seed", range(6))
def test_side_step_equals_its_python_twin(seed):
    rng = np.random.default_rng(seed)
    n, m, classes = int(rng.integers(0, 300)), int(rng.integers(1, 8)), 5
    s = np.sort(np.round(rng.random(n) * 4, 1))              # ties on purpose
    code = rng.permutation(n).astype(np.int64)
    cls = rng.integers(0, classes, n).astype(np.int64)
    floats = np.round(rng.random(m) * 2, 1)
    table = np.where(rng.random((classes, m)) < 0.3, 0, rng.integers(1, 9, (classes, m))).astype(np.int64)
    want = side_step_reference(s.tolist(), code.tolist(), cls.tolist(), floats.tolist(), table.tolist(), 0)
    out = np.empty(len(want)), np.empty(len(want), np.int64), np.empty(len(want), np.int64)
    assert mk.side_step(s, code, cls, floats, table, 0, *out) == len(want)
    assert out[0].tolist() == [v for v, _, _ in want]                       # sorted, the same values
    assert sorted(zip(*(x.tolist() for x in out))) == sorted(want)          # the same entries


@pytest.mark.parametrize("fill", [mk.block_counts, mk.block_counts_serial])
def test_block_counts_equal_their_python_twin_over_many_blocks(fill):
    rng = np.random.default_rng(5)
    nb, classes, rows = 64 * (2 * mk.BLOCKS + 3) + 17, 7, 5
    Bs = np.sort(rng.random(nb))
    Bcls = rng.integers(0, classes, nb).astype(np.uint16)
    G = (rng.random((rows, classes)) < 0.4).astype(np.uint8)
    G[0] = 0                                                 # a row with no entry
    cm = np.zeros((rows, (nb >> 6) + 1, 2), np.int64)
    total, lo, hi = np.zeros(rows, np.int64), np.zeros(rows), np.zeros(rows)
    fill(Bs, Bcls, G, cm, total, lo, hi)
    for r in range(rows):
        ok = [e for e in range(nb) if G[r, Bcls[e]]]
        blocks = cm.shape[1]
        assert cm[r, :, 0].tolist() == np.searchsorted(ok, 64 * np.arange(blocks)).tolist()
        masks = [0] * blocks
        for e in ok:
            masks[e >> 6] |= 1 << (e & 63)
        assert cm[r, :, 1].view(np.uint64).tolist() == masks
        assert total[r] == len(ok) and (lo[r], hi[r]) == ((Bs[ok[0]], Bs[ok[-1]]) if ok else (0.0, 0.0))


def test_a_value_of_several_realisations_is_counted_once():
    """gains (0,1,2,3): grade 1 at rank 1 and grade 2 at rank 3 give the same part 12 in the
    group {1, 3}; for c = (1, 1, 0) the runs tie, for (0, 1, 0) only the second is feasible and
    the value is there still, for (1, 0, 0) only the first."""
    first, second = [1, 0, 0], [0, 0, 2]
    for counts, runs in [((1, 1, 0), [first, second]), ((0, 1, 0), [second]), ((1, 0, 0), [first])]:
        o = _oracle(3, (0, 1, 2, 3), counts)
        ref = _ref(3, (0, 1, 2, 3))
        k, ranks = ref.scale(counts)
        assert o.k == k
        got = o.rank_runs(np.array(runs, np.uint8)).tolist()
        assert got == [ranks[ref.runs.index(tuple(r))] for r in runs]
    o = _oracle(3, (0, 1, 2, 3), (1, 1, 0))
    a, b = o.rank_runs(np.array([first, second], np.uint8)).tolist()
    assert a == b


def test_infeasible_runs_are_refused():
    o = _oracle(6, (0, 1, 2, 3), (6, 2, 1))
    with pytest.raises(RunError, match="grade 3"):
        o.rank_runs(np.array([[3, 3, 0, 0, 0, 0]], np.uint8))
    with pytest.raises(RunError, match="grades 0..3"):
        o.rank_runs(np.array([[4, 0, 0, 0, 0, 0]], np.uint8))
    assert o.rank_runs(np.array([[3, 2, 2, 1, 1, 1]], np.uint8)).tolist() == [o.k]


def test_raw_values_are_ranked_from_the_definition():
    """Raw DCG values from the definition (mpmath, rounded to float) get the rank of their run,
    and one value within the margin; values between two neighbours none."""
    ref = _ref(6, (0, 1, 2, 3))
    o = _oracle(6, (0, 1, 2, 3), (3, 2, 1))
    k, ranks = ref.scale((3, 2, 1))
    idx = sorted(ranks)
    raw = np.array([float(ref.values[ref.key_of_run[i]]) for i in idx])
    below, near = o.rank_values(raw)
    assert (below + 1).tolist() == [ranks[i] for i in idx] and (near == 1).all()
    vals = np.unique(raw)
    below, near = o.rank_values((vals[:-1] + vals[1:]) / 2)
    assert (near == 0).all() and (below == np.arange(1, vals.size)).all()


@pytest.mark.parametrize("name,gains", [("nDCG_trec(gains=(0,1,2,3))@6", (0, 1, 2, 3)),
                                        ("nDCG(b=2,gains=(0,1,3,4))@5", (0, 1, 3, 4))])
def test_equals_irscale_tables(name, gains):
    """The feasible-runs tables of irscale (layout table) for vectors bounding several grades,
    and the oracles it has for the others: same K and ranks on every feasible run."""
    m = irscale.parse_measure(name)
    n = m.n
    runs = np.array(list(itertools.product(range(4), repeat=n)), np.uint8)
    rng = random.Random(n)
    vectors = [(n, n, n), (2, 1, 1), (n, 1, 0)] + [tuple(rng.randint(0, n) for _ in range(3)) for _ in range(10)]
    for vec in vectors:
        if sum(vec) == 0:
            continue
        feasible = runs[((runs[:, :, None] == np.arange(1, 4)).sum(axis=1) <= np.array(vec)).all(axis=1)]
        t = irscale.scale(name, rb=vec, layout="table")
        o = gm.oracle_of_measure(m, vec)
        assert o.k == t.k
        assert np.array_equal(o.rank_runs(feasible), t.rank_runs(feasible))


# -- the kernel against its plain-Python twin ---------------------------------------------------
def scan_reference(los, his, sA, rowA, Bs, Bcls, F):
    """Per query: the feasible pairs (a, e) (F[rowA[a], Bcls[e]]) with Bs[e] < los - sA[a] (float
    subtraction), and the feasible band pairs with los - sA[a] <= Bs[e] <= his - sA[a]."""
    counts, bands = [], []
    for lo, hi in zip(los, his):
        c, band = 0, set()
        for a, s in enumerate(sA):
            for e, x in enumerate(Bs):
                if not F[rowA[a]][Bcls[e]]:
                    continue
                if x < lo - s:
                    c += 1
                elif x <= hi - s:
                    band.add((a, e))
        counts.append(c)
        bands.append(band)
    return counts, bands


def _row_bases(rng, classes):
    """Three rows over ``classes`` B classes (none; the union of three random sets, by
    inclusion and exclusion; all, its own base) and their bases: (F, G, start, base, sign)."""
    sets = [int(x) for x in rng.integers(1, 1 << classes, 3)]
    rows = [{}, gb._terms(sets), {(1 << classes) - 1: 1}]
    bits = sorted({x for t in rows for x in t})
    G = np.array([[(x >> j) & 1 for j in range(classes)] for x in bits], np.uint8)
    start, base, sign = [0], [], []
    for t in rows:
        base += [bits.index(x) for x in t]
        sign += list(t.values())
        start.append(len(base))
    union = sets[0] | sets[1] | sets[2]
    F = np.array([[0] * classes, [(union >> j) & 1 for j in range(classes)], [1] * classes], np.uint8)
    return F, G, np.array(start, np.int64), np.array(base, np.int32), np.array(sign, np.int64)


@pytest.mark.parametrize("seed,nb", [(0, 50), (1, 64), (2, 130), (3, 1), (4, 200)])
def test_scan_kernel_equals_its_python_twin(seed, nb):
    rng = np.random.default_rng(seed)
    sA = np.sort(np.round(rng.random(40) * 8, 1))
    rows, classes = 3, 5
    rowA = rng.integers(0, rows, 40).astype(np.int32)
    Bs = np.sort(np.round(rng.random(nb) * 5, 1))            # ties on purpose
    Bcls = rng.integers(0, classes, nb).astype(np.uint16)
    F, G, tstart, tbase, tsign = _row_bases(rng, classes)
    nbase = G.shape[0]
    cm = np.zeros((nbase, (nb >> 6) + 1, 2), np.int64)
    btotal, bmin_, bmax_ = np.zeros(nbase, np.int64), np.zeros(nbase), np.zeros(nbase)
    mk.block_counts(Bs, Bcls, G, cm, btotal, bmin_, bmax_)
    for r in range(nbase):
        ok = [e for e in range(nb) if G[r, Bcls[e]]]
        assert cm[r, :, 0].tolist() == [sum(1 for e in ok if e < 64 * j) for j in range(cm.shape[1])]
        masks = [sum(1 << (e - 64 * j) for e in ok if 64 * j <= e < 64 * (j + 1)) for j in range(cm.shape[1])]
        assert cm[r, :, 1].view(np.uint64).tolist() == masks
        assert btotal[r] == len(ok) and (not ok or (bmin_[r], bmax_[r]) == (Bs[ok[0]], Bs[ok[-1]]))
    total = np.array([sum(1 for e in range(nb) if F[r, Bcls[e]]) for r in range(rows)], np.int64)
    feasible = [[Bs[e] for e in range(nb) if F[r, Bcls[e]]] for r in range(rows)]
    rmin = np.array([min(f) if f else 0.0 for f in feasible])
    rmax = np.array([max(f) if f else 0.0 for f in feasible])
    Bidx, bmin, binv = mk.bucket_index(Bs, max(1, nb // 4))
    los = np.sort(np.round(rng.random(150) * 14 - 0.5, 1))
    his = los + rng.choice([0.0, 0.1, 0.3], los.shape[0])
    cap = 4
    nq = los.shape[0]
    want_counts, want_bands = scan_reference(los, his, sA, rowA, Bs, Bcls, F)
    users = mk.base_users(rowA, tstart, tbase, tsign, nbase)
    ustart, uentry, usign = users
    for b in range(nbase):                                    # per base, its rows' A entries and signs
        want = [(a, int(tsign[t])) for a in range(len(rowA)) for t in range(tstart[rowA[a]], tstart[rowA[a] + 1])
                if tbase[t] == b]
        assert list(zip(uentry[ustart[b]:ustart[b + 1]].tolist(), usign[ustart[b]:ustart[b + 1]].tolist())) == want
    for scan, tile in ((mk.scan_many, mk.TILE), (mk.scan_serial, mk.TILE), (mk.scan_many, 7), (mk.scan_serial, 1)):
        counts, sizes = np.zeros(nq, np.int64), np.zeros(nq, np.int64)
        pa, pb = np.zeros(nq * cap, np.int64), np.zeros(nq * cap, np.int64)
        scan(los, his, sA, rowA, Bs, Bcls, Bidx, bmin, binv, F, *users, cm, total, rmin, rmax, tile, cap,
             counts, sizes, pa, pb)
        assert counts.tolist() == want_counts
        assert sizes.tolist() == [len(b) for b in want_bands]
        for q in range(nq):
            got = {(int(pa[q * cap + j]), int(pb[q * cap + j])) for j in range(min(cap, int(sizes[q])))}
            assert got <= want_bands[q] and len(got) == min(cap, len(want_bands[q]))
    assert mk.feasible_pairs(rowA, total) == sum(total[r] for r in rowA)


def test_bases_add_up_to_the_rows():
    """Inclusion and exclusion over random class sets: the signed sum of the intersections is
    the union, class by class; decompose() checks the same for the oracle's rows, and a row of
    a long antichain is its own base."""
    rng = random.Random(3)
    for _ in range(200):
        sets = [rng.randrange(1, 1 << 12) for _ in range(rng.randint(1, 7))]
        terms = gb._terms(sets)
        union = 0
        for x in sets:
            union |= x
        for j in range(12):
            assert sum(c for x, c in terms.items() if x >> j & 1) == (union >> j & 1)
    rows = np.array([[1, 1, 0], [1, 1, 1]], np.uint8)
    long = tuple((i, 8 - i) for i in range(gb.IE_MAX + 1))
    G, start, base, sign = gb.decompose(rows, [((0, 1),), long], [((1, 0),), ((0, 0),), ((3, 0),)], (2, 2))
    assert start.tolist() == [0, 1, 2] and sign.tolist() == [1, 1] and G.tolist() == [[1, 1, 0], [1, 1, 1]]


def test_exact_values_of_pairs_are_the_definition():
    """The exact value the oracle decides ties with is sum_k gains[r_k] / log2(k + 1)."""
    o = _oracle(6, (0, 1, 2, 3), (6, 6, 6))
    rng = np.random.default_rng(0)
    runs = rng.integers(0, 4, (20, 6)).astype(np.uint8)
    parts = o.parts(runs)
    qa, qb = o._entries(o.A, parts), o._entries(o.B, parts)
    with mpmath.workdps(50):
        for run, a, b in zip(runs, qa, qb):
            want = mpmath.fsum(int(g) / mpmath.log(k + 1, 2) for k, g in enumerate(run.tolist(), start=1))
            assert abs(o.exact_value(int(a), int(b)) - want) < mpmath.mpf(10) ** -45


def _feasible_runs(seed, levels, counts, n, count):
    """Random feasible runs: per run, a number of documents of each grade g at most c_g (and
    together at most n), placed at random ranks."""
    rng = np.random.default_rng(seed)
    runs = np.zeros((count, n), np.uint8)
    for i in range(count):
        ranks = rng.permutation(n)
        at = 0
        for g in rng.permutation(np.arange(1, levels)):
            k = int(rng.integers(0, min(counts[g - 1], n - at) + 1))
            runs[i, ranks[at:at + k]] = g
            at += k
    return runs


@pytest.mark.slow
def test_equals_the_trec_covid_table_at_n20():
    """TREC-COVID's (7, 2) bounds both grades at N = 20: irscale's table of its 1.4 * 10^7
    feasible runs (about 20 s to build) against the oracle, K and 20,000 random feasible runs."""
    name, counts = "nDCG_trec(gains=(0,1,2))@20", (7, 2)
    o = gm.oracle_of_measure(irscale.parse_measure(name), counts)
    t = irscale.scale(name, rb=counts, layout="table")     # (by default such a vector gets the oracle)
    assert t.table.layout == "entries" and o.k == t.k == 11_348_236
    runs = _feasible_runs(7, 3, counts, 20, 20_000)
    assert np.array_equal(o.rank_runs(runs), t.rank_runs(runs))


@pytest.mark.slow
def test_equals_the_one_grade_oracle_at_n20():
    """(20, 20, 8) bounds one grade: irscale's oracle counting grade 3 against this one."""
    name, counts = "nDCG_trec(gains=(0,1,2,3))@20", (20, 20, 8)
    o = gm.oracle_of_measure(irscale.parse_measure(name), counts)
    s = irscale.scale(name, rb=counts)
    assert s.table.layout == "oracle" and o.k == s.k == 181_718_652_312
    runs = _feasible_runs(8, 4, counts, 20, 2_000)
    assert np.array_equal(o.rank_runs(runs), s.rank_runs(runs))
