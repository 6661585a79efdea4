"""The table lookup kernels (scales/tables/lookup_kernels.py) against the plain-Python
references of tests/kernel_references.py, on real tables (stratified and not, exact and
inexact raws, counts of several dtypes, an implicit table, a graded table whose S is not a
power of two), on synthetic tables with two-word exact keys whose distinct values share raw
values, and on an empty table. The block indexes handed to the lookups are built by the
reference, so each kernel is checked on its own."""
from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass, field

import kernel_references as ref
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale.scales.tables import lookup_kernels as lk


@dataclass
class Case:
    name: str
    ids: np.ndarray
    implicit: bool
    E: int
    strata: np.ndarray
    counts: np.ndarray
    A: np.ndarray
    state: np.ndarray
    B: np.ndarray
    S: int
    exact: bool
    bound: float
    KA: np.ndarray
    KB: np.ndarray
    levels: int
    n: int
    model: ref.TableModel = field(init=False)
    nr: int = field(init=False)
    block_raw: np.ndarray = field(init=False)
    block_cum: np.ndarray = field(init=False)
    block_runs: np.ndarray = field(init=False)

    def __post_init__(self):
        self.model = ref.TableModel(self.ids, self.implicit, self.E, self.strata, self.counts, self.A, self.state,
                                    self.B.tolist(), self.S)
        self.nr = self.n + 1 if self.strata.size else 1
        br, bc = ref.build_index(self.model, self.nr)
        self.block_raw = np.array(br, np.float64)
        self.block_cum = np.array(bc, np.int64).reshape(-1, self.nr)
        self.block_runs = np.array(ref.build_run_index(self.model, self.nr), np.int64).reshape(-1, self.nr)

    @property
    def rs(self):
        return sorted({0, 1, self.n // 3, self.n}) if self.strata.size else [0]

    def args(self):
        return (self.ids, self.implicit, self.E, self.strata, self.A, self.state, self.B, self.S, self.block_raw,
                self.block_cum)

    @functools.cached_property
    def entry_values(self):
        """Per entry what identifies its value: the raw (exact raws) or the exact key."""
        if self.exact:
            return self.model.raw
        return [ref.exact_key(r, self.KA.tolist(), self.KB.tolist(), self.state, self.S) for r in self.model.rid]

    def query_value(self, q):
        if self.exact:
            return ref.split_raw(self.A, self.state, self.B.tolist(), self.S, q)
        return ref.exact_key(q, self.KA.tolist(), self.KB.tolist(), self.state, self.S)


REAL = {"AP@12": 5, "nDCG(b=2)@12": 4, "R@12": 3, "DCG(b=2)@12": None, "RBP(p=0.5)@12": None,
        "DCG(b=2,gains=(0,1,2))@7": None, "gP(gains=(0,1,2))@7": None}
SYNTHETIC = {"synthetic-2w-strata": (12, True, 2, 150), "synthetic-2w": (10, False, 2, 40),
             "synthetic-1w-strata": (10, True, 1, 20)}
CASES = [*REAL, *SYNTHETIC, "AP@12-nocounts", "empty"]


@functools.cache
def case(name):
    if name in REAL:
        s = irscale.scale(name, rb=REAL[name], layout="table")
        t, sf = s.table, s.measure.split_form()
        ids = np.zeros(0, np.int64) if t.implicit else np.asarray(t.ids)
        strata = np.zeros(0, np.uint8) if t.strata is None else np.asarray(t.strata)
        counts = np.zeros(0, np.uint8) if t.counts is None else np.asarray(t.counts)
        return Case(name, ids, bool(t.implicit), int(t.n_entries), strata, counts, sf.A, sf.state, sf.B, sf.S,
                    sf.exact, sf.bound, sf.KA, sf.KB, sf.levels, sf.n)
    if name.endswith("-nocounts"):          # counts absent: one run per entry
        c = case(name.removesuffix("-nocounts"))
        return Case(name, c.ids, c.implicit, c.E, c.strata, np.zeros(0, np.uint8), c.A, c.state, c.B, c.S, c.exact,
                    c.bound, c.KA, c.KB, c.levels, c.n)
    if name in SYNTHETIC:
        n, stratified, words, fine = SYNTHETIC[name]
        sf = ref.synthetic_split_form(len(name), n=n, h=n // 2, fine=fine, words=words)
        ids, counts, strata = ref.reference_table(sf["key"], 2, n, stratified)
        counts = counts.astype(np.uint8 if counts.max() < 256 else np.uint16)
        return Case(name, ids.astype(np.uint32), False, ids.size, strata, counts, sf["A"], sf["state"], sf["B"],
                    sf["S"], False, sf["bound"], sf["KA"], sf["KB"], 2, n)
    sf = irscale.parse_measure("AP@8").split_form()
    return Case(name, np.zeros(0, np.uint32), False, 0, np.zeros(0, np.uint8), np.zeros(0, np.uint8), sf.A, sf.state,
                sf.B, sf.S, True, 0.0, sf.KA, sf.KB, 2, 8)


def test_constants_match_the_reference():
    assert (lk.BLOCK, lk.RAW_BLOCK, lk.FIRST, lk.STRATUM) == (ref.BLOCK, ref.RAW_BLOCK, ref.FIRST, ref.STRATUM)


def test_cases_cover_the_edge_cases():
    cs = [case(c) for c in CASES]
    assert any(c.implicit for c in cs) and any(c.E == 0 for c in cs)
    assert any(c.strata.size and not c.counts.size for c in cs)             # strata without counts
    assert any(c.E > 3 * lk.BLOCK and c.strata.size for c in cs)           # several blocks, strata
    assert any(c.E > lk.BLOCK and not c.exact and c.strata.size and c.KA.shape[1] == 2 for c in cs)
    assert any(c.S & (c.S - 1) for c in cs)                                # S not a power of two
    assert {c.counts.dtype for c in cs if c.counts.size} >= {np.dtype(np.uint8), np.dtype(np.uint16)}
    syn = case("synthetic-2w-strata")
    raws = [syn.model.raw[j] for j in syn.model.value_starts(syn.n)]
    assert any(b < a for a, b in zip(raws, raws[1:]))                      # raws out of value order
    assert max(abs(syn.model.raw[j] - syn.model.raw[syn.model.value_start(j)]) for j in range(syn.E)) > syn.bound


# -- indexes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_build_index(name):
    c = case(name)
    block_raw, block_cum = lk.build_index(c.ids, c.implicit, c.E, c.strata, c.A, c.state, c.B, c.S, c.nr)
    assert block_raw.tolist() == c.block_raw.tolist()
    assert block_cum.tolist() == c.block_cum.tolist()


@pytest.mark.parametrize("name", CASES)
def test_build_run_index(name):
    c = case(name)
    got = lk.build_run_index(c.counts, c.strata, c.E, c.nr)
    assert got.tolist() == c.block_runs.tolist()
    assert got[-1, -1] == sum(c.model.count)


# -- present_raw ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", CASES)
def test_present_raw_chunks(name):
    c = case(name)
    empty_i64 = np.zeros(0, np.int64)
    pow2 = c.S & (c.S - 1) == 0
    for r in c.rs:
        for chunk in (1, 7, 100, lk.BLOCK, max(c.E, 1)):
            if chunk == 1 and c.E > 1500:
                continue
            for a in range(0, c.E, chunk):
                m = min(chunk, c.E - a)
                ids = empty_i64 if c.implicit else c.ids[a:a + m]
                strata = c.strata[a:a + m] if c.strata.size else c.strata
                counts = c.counts[a:a + m] if c.counts.size else empty_i64
                want_raw, want_cnt, want_lead = ref.present_raw(c.model, a, m, r)
                out_raw = np.full(m + 1, np.nan)
                out_cnt = np.full(m + 1, -1, np.int64)
                k, lead = lk.present_raw(ids, c.implicit, a, m, strata, counts, r, c.A, c.state, c.B, c.S,
                                         out_raw, out_cnt)
                assert (k, lead) == (len(want_raw), want_lead)
                assert out_raw[:k].tolist() == want_raw
                assert out_cnt[:k].tolist() == want_cnt
                if pow2 and chunk == lk.BLOCK:              # the division path gives the same answer
                    k2, lead2 = lk._present_raw(ids, c.implicit, a, m, strata, counts, r, c.A, c.state, c.B, c.S,
                                                -1, out_raw, out_cnt)
                    assert (k2, lead2) == (k, lead) and out_raw[:k].tolist() == want_raw
    if c.E == 0:
        out = np.zeros(1)
        assert lk.present_raw(c.ids, False, 0, 0, c.strata, empty_i64, 0, c.A, c.state, c.B, c.S, out,
                              np.zeros(1, np.int64)) == (0, 0)


# -- ranks of entries -----------------------------------------------------------------------------
def blocks_seen(c):
    """A ``seen`` array for the lookups (one byte per BLOCK of entries)."""
    return np.zeros((c.E + lk.BLOCK - 1) // lk.BLOCK, np.uint8)


def assert_marked(c, seen, entries):
    """The lookups marked the blocks of the entries they answered with (first entry of the
    value found), and no block beyond the table."""
    assert seen.shape[0] == (c.E + lk.BLOCK - 1) // lk.BLOCK and set(np.unique(seen).tolist()) <= {0, 1}
    for j in entries:
        assert seen[j // lk.BLOCK] == 1, (j, np.flatnonzero(seen))


@pytest.mark.parametrize("name", [c for c in CASES if c != "empty"])
def test_rank_of_and_entry_of_rank(name):
    c = case(name)
    for r in c.rs:
        starts = c.model.value_starts(r)
        assert c.block_cum[-1, r if c.strata.size else 0] == len(starts)
        for k, j in enumerate(starts, start=1):
            assert lk._rank_of(j, r, c.strata, c.block_cum, lk.NO_SEEN) == k
            assert lk._entry_of_rank(k, r, c.strata, c.block_cum, c.E, lk.NO_SEEN) == j
        assert lk._entry_of_rank(len(starts) + 1, r, c.strata, c.block_cum, c.E, lk.NO_SEEN) == -1


@pytest.mark.parametrize("name", [c for c in CASES if c != "empty"])
def test_midranks_of_ranks(name):
    c = case(name)
    rng = np.random.default_rng(1)
    for r in c.rs:
        K = len(c.model.value_starts(r))
        qs = np.arange(1, K + 1, dtype=np.int64)
        if K > 400:
            qs = np.unique(np.concatenate([qs[:50], qs[-50:], rng.choice(qs, 300)]))
        out = np.full(qs.size, np.nan)
        seen = blocks_seen(c)
        lk.midranks_of_ranks(qs, r, c.counts, c.strata, c.E, c.block_cum, c.block_runs, out, seen)
        want = ref.midranks(c.model, qs, r)
        assert_marked(c, seen, [c.model.value_starts(r)[q - 1] for q in qs])
        assert out.tolist() == [float(w) for w in want]


# -- rank_raw -----------------------------------------------------------------------------------------
def raw_queries(c, r, rng):
    """Raws of values present (tolerance 0), points near a value within a tolerance smaller
    than the gap to its neighbour, midpoints between neighbours (tolerance 0), points beyond
    both ends, and wide tolerances (ambiguous)."""
    vals = sorted({c.model.raw[j] for j in c.model.value_starts(r)})
    if not vals:
        return np.array([0.0, 1.0]), np.array([0.0, 10.0])
    scale = max(abs(vals[-1]), 1.0)
    pairs = list(zip(vals, vals[1:]))

    def sample(seq, k):
        return seq if len(seq) <= k else [seq[i] for i in sorted(rng.choice(len(seq), k, replace=False))]

    q = [(v, 0.0) for v in sample(vals, 200)]
    q += [(v + 1e-3 * (w - v), 2e-3 * (w - v)) for v, w in sample(pairs, 50)]
    q += [((v + w) / 2, 0.0) for v, w in sample(pairs, 100)]
    q += [(vals[0] - scale, 0.0), (vals[-1] + scale, 1e-3 * scale)]
    q += [(v, 2 * scale) for v in vals[:20]]
    return np.array([x for x, _ in q]), np.array([t for _, t in q])


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_rank_raw(name, order):
    c = case(name)
    rng = np.random.default_rng(5)
    seen = set()
    for r in c.rs:
        xs, tols = raw_queries(c, r, rng)
        perm = np.argsort(xs, kind="stable") if order == "sorted" else rng.permutation(xs.size)
        xs, tols = xs[perm], tols[perm]
        ranks = np.full(xs.size, -7, np.int64)
        status = np.full(xs.size, -7, np.int8)
        marks = blocks_seen(c)
        lk.rank_raw(xs, tols, r, 2 * c.bound, *c.args(), ranks, status, marks)
        want_rank, want_status = ref.rank_raw(c.model, xs.tolist(), tols.tolist(), r)
        assert_marked(c, marks, [c.model.value_starts(r)[k - 1] for k, s in zip(ranks, status) if s == 0])
        assert status.tolist() == want_status
        assert [int(x) for x, s in zip(ranks, status) if s == 0] == \
            [w for w, s in zip(want_rank, want_status) if s == 0]
        seen |= set(want_status)
    if not c.E:
        assert seen == {1}
    else:       # synthetic clusters: every value may share its raw with another (always ambiguous)
        assert seen >= ({1, 2} if name.startswith("synthetic") else {0, 1, 2})


# -- rank_ids -----------------------------------------------------------------------------------------
def run_rank_ids(c, qids, r):
    if c.exact:
        qkeys = np.zeros((qids.size, 1), np.uint64)
        KA, KB = np.zeros((1, 1), np.uint64), np.zeros((1, 1, 1), np.uint64)
    else:
        qkeys = np.array([ref.int_to_words(c.query_value(q), c.KA.shape[1]) for q in qids], np.uint64)
        qkeys = qkeys.reshape(qids.size, c.KA.shape[1])
        KA, KB = c.KA, c.KB
    ranks = np.full(qids.size, -7, np.int64)
    status = np.full(qids.size, -7, np.int8)
    marks = blocks_seen(c)
    lk.rank_ids(qids, r, c.exact, 2 * c.bound, *c.args(), qkeys, KA, KB, c.levels, c.n, ranks, status, marks)
    if c.E:
        assert_marked(c, marks, [c.model.value_starts(r)[k - 1] for k, s in zip(ranks, status) if s == 0])
    return ranks, status


def check_rank_ids(c, qids, r):
    ranks, status = run_rank_ids(c, qids, r)
    want_rank, want_status = ref.rank_ids(c.model, qids, r, c.entry_values, c.query_value, c.levels, c.n)
    assert status.tolist() == want_status
    assert [int(x) for x, s in zip(ranks, status) if s == 0] == [w for w, s in zip(want_rank, want_status) if s == 0]
    return want_status


@pytest.mark.parametrize("name", [c for c in CASES if c != "empty"])
@pytest.mark.parametrize("order", ["value", "shuffled"])
def test_rank_ids(name, order):
    c = case(name)
    rng = np.random.default_rng(11)
    total = c.levels ** c.n
    qids = np.unique(np.concatenate([[0, total - 1], rng.integers(0, total, 150)])).astype(np.int64)
    raws = np.array([ref.split_raw(c.A, c.state, c.B.tolist(), c.S, q) for q in qids])
    qids = qids[np.argsort(raws, kind="stable")] if order == "value" else rng.permutation(qids)
    seen = set()
    for r in c.rs:
        seen |= set(check_rank_ids(c, qids, r))
    assert 0 in seen and 1 not in seen                          # complete tables hold every run
    assert (3 in seen) == bool(c.strata.size)


def holey(c, seed):
    """The table without the entries of about one value in five (and of the first and last)."""
    rng = np.random.default_rng(seed)
    starts = [j for j in range(c.E) if c.model.first[j]]
    drop = set(rng.choice(len(starts), len(starts) // 5, replace=False).tolist()) | {0, len(starts) - 1}
    keep = [t for k, j in enumerate(starts) if k not in drop for t in range(j, c.model.value_end(j))]
    keep = np.array(keep, np.int64)
    strata = c.strata[keep] if c.strata.size else c.strata
    counts = c.counts[keep] if c.counts.size else c.counts
    return Case(c.name + "-holey", c.ids[keep], False, keep.size, strata, counts, c.A, c.state, c.B, c.S, c.exact,
                c.bound, c.KA, c.KB, c.levels, c.n)


@pytest.mark.parametrize("name", ["AP@12", "nDCG(b=2)@12", "DCG(b=2)@12", "synthetic-2w-strata", "synthetic-2w"])
def test_rank_ids_values_missing_from_the_table(name):
    c = holey(case(name), 3)
    rng = np.random.default_rng(2)
    total = c.levels ** c.n
    qids = rng.integers(0, total, 150).astype(np.int64)
    raws = np.array([ref.split_raw(c.A, c.state, c.B.tolist(), c.S, q) for q in qids])
    qids = qids[np.argsort(raws, kind="stable")]
    seen = set()
    for r in c.rs:
        seen |= set(check_rank_ids(c, qids, r))
    assert {0, 1} <= seen


def test_rank_raw_and_rank_ids_on_an_empty_table():
    c = case("empty")
    ranks, status = run_rank_ids(c, np.array([0, 5, 255], np.int64), 0)
    assert status.tolist() == [1, 1, 1]
    st_ = np.full(2, -7, np.int8)
    lk.rank_raw(np.array([0.0, 1.0]), np.array([1.0, 1.0]), 0, 0.0, *c.args(), np.zeros(2, np.int64), st_,
                lk.NO_SEEN)
    assert st_.tolist() == [1, 1]


# -- _lower_from ----------------------------------------------------------------------------------------
SORTED = ["AP@12", "RBP(p=0.5)@12", "gP(gains=(0,1,2))@7", "R@12"]


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(SORTED), st.floats(-0.1, 1.1), st.integers(-1, 80), st.booleans(), st.data())
def test_lower_from_sorted_tables(name, u, hint, on_value, data):
    c = case(name)
    raws = c.model.raw
    assert raws == sorted(raws)                    # exact tables: raws in value order
    lo, hi = raws[0], raws[-1]
    x = raws[data.draw(st.integers(0, c.E - 1))] if on_value else lo + u * (hi - lo)
    j, b = lk._lower_from(x, hint, c.ids, c.implicit, c.E, c.A, c.state, c.B, c.S, c.block_raw, lk.NO_SEEN)
    assert j == bisect.bisect_left(raws, x)
    assert b == bisect.bisect_left(c.block_raw.tolist(), x)
