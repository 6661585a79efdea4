"""Slow, obviously correct plain-Python references of the numba kernels (stumpy style).

One function per kernel (or per kernel contract), written straight from the definitions in
the kernels' docstrings with Python loops, ``itertools``, ``fractions`` and Python integers.
Nothing here imports irscale: numpy appears only to read inputs and to build synthetic
inputs for the tests (``synthetic_split_form``, ``reference_table``).

Conventions shared with the kernels (restated here, not imported):

* a run id is the base-``levels`` number whose most significant digit is rank 1, so run
  ids enumerate ``itertools.product(range(levels), repeat=N)`` in order;
* split forms: ``rid = p * S + s`` and ``raw = A[p] + B[state[p], s]`` (float64);
  exact multi-word keys ``KA[p] + KB[state[p], s]``, words most significant first;
* tables: entries in value order; a strata byte holds the stratum in bits 0-6 and, in
  bit 7, whether the entry starts a new distinct value; a value is present for table
  recall base r when its first entry has stratum <= r.
"""
from __future__ import annotations

import bisect
import itertools
import math
import struct
from collections import defaultdict
from fractions import Fraction

import numpy as np

BLOCK = 1024          # entries per block of the cumulative index (lookup_kernels.BLOCK)
RAW_BLOCK = 64        # entries per raw sample of the index (lookup_kernels.RAW_BLOCK)
FIRST = 0x80
STRATUM = 0x7F
WORD = 1 << 64
U = 2.0 ** -53


# -- run space ---------------------------------------------------------------------------------
def all_runs(levels, n):
    """Every run of REL^N in run id order (the lexicographic order of itertools.product)."""
    return [tuple(r) for r in itertools.product(range(levels), repeat=n)]


def run_of_id(rid, levels, n):
    """Digits of ``rid`` in base ``levels``, most significant (rank 1) first."""
    rid = int(rid)
    digits = []
    for _ in range(n):
        rid, d = divmod(rid, levels)
        digits.append(d)
    return tuple(reversed(digits))


def id_of_run(run, levels):
    n = len(run)
    return sum(int(d) * levels ** (n - 1 - k) for k, d in enumerate(run))


def feasible_runs(n, caps):
    """Runs of length n over grades 0..G with at most caps[g - 1] documents of grade g >= 1,
    in run id order."""
    G = len(caps)
    return [r for r in all_runs(G + 1, n) if all(r.count(g) <= caps[g - 1] for g in range(1, G + 1))]


def relevant_count(run):
    return sum(1 for d in run if d > 0)


def grade_counts(run, grades):
    return [sum(1 for d in run if d == g) for g in range(1, grades + 1)]


def grade_count_code(run):
    n = len(run)
    return sum(c * (n + 1) ** (g - 1) for g, c in enumerate(grade_counts(run, max(run, default=0)), start=1))


# -- scoring keys ------------------------------------------------------------------------------
def additive_key(run, weights):
    return sum(int(weights[k][d]) for k, d in enumerate(run))


def ap_key(run, weights):
    """sum over relevant ranks k of (relevant documents in the top k) * weights[k][1]."""
    total = 0
    for k, d in enumerate(run):
        if d > 0:
            total += sum(1 for x in run[:k + 1] if x > 0) * int(weights[k][1])
    return total


def rr_key(run, threshold=1):
    """N + 1 - (1-based rank of the first document of degree >= threshold); 0 if none."""
    for rank, d in enumerate(run, start=1):
        if d >= threshold:
            return len(run) + 1 - rank
    return 0


def err_key(run, weights, factors):
    return sum(int(weights[k][d]) * math.prod(int(factors[x]) for x in run[:k]) for k, d in enumerate(run))


# -- multi-word integers ---------------------------------------------------------------------
def int_to_words(v, words):
    """Python int -> list of ``words`` 64-bit words, most significant first."""
    return [(v >> (64 * (words - 1 - w))) % WORD for w in range(words)]


def words_to_int(row):
    v = 0
    for w in row:
        v = v * WORD + int(w)
    return v


# -- split forms -------------------------------------------------------------------------------
def split_raw(A, state, B, S, rid):
    """raw = A[p] + B[state[p], s] in float64 (Python floats are IEEE doubles)."""
    p, s = divmod(int(rid), int(S))
    return float(A[p]) + float(B[int(state[p])][s])


def exact_key(rid, KA, KB, state, S):
    """KA[p] + KB[state[p], s] as a Python int."""
    p, s = divmod(int(rid), int(S))
    return words_to_int(KA[p]) + words_to_int(KB[int(state[p])][s])


def count_between(A, state, Bs, lo, hi):
    return sum(1 for p in range(len(A)) for b in Bs[int(state[p])] if lo <= float(A[p]) + float(b) < hi)


def fill_between(A, state, pstrat, pcount, pmin, Bs, Bstrat, Bcount, Bmin, S, lo, hi):
    """Sorted list of (raw, smallest run id, runs, stratum) of every (prefix group, suffix
    group) pair with raw in [lo, hi)."""
    out = []
    for p in range(len(A)):
        c = int(state[p])
        for j in range(len(Bs[c])):
            raw = float(A[p]) + float(Bs[c][j])
            if lo <= raw < hi:
                out.append((raw, int(pmin[p]) * S + int(Bmin[c][j]), int(pcount[p]) * int(Bcount[c][j]),
                            int(pstrat[p]) + int(Bstrat[c][j])))
    return sorted(out)


def settle(raw, ids, counts, strata, max_moves):
    """Insertion sort of items by raw (ids, counts, strata moved alongside) that gives up
    after max_moves moves: (sorted?, raw, ids, counts, strata) as lists."""
    items = [list(t) for t in zip(raw, ids, counts, strata)]
    moves = 0
    for x in range(1, len(items)):
        item = items[x]
        y = x - 1
        while y >= 0 and items[y][0] > item[0]:
            items[y + 1] = items[y]
            y -= 1
            moves += 1
        items[y + 1] = item
        if moves > max_moves:
            break
    else:
        return (True, *map(list, zip(*items))) if items else (True, [], [], [], [])
    return (False, *map(list, zip(*items)))


def group_entries(items, ids, counts, strata, stratified):
    """Entries of one distinct value made of ``items``: [(smallest id, runs, stratum, first)],
    one per stratum present (ascending) for stratified values, one in all otherwise."""
    if not stratified:
        return [(min(int(ids[i]) for i in items), sum(int(counts[i]) for i in items), 0, True)]
    by_stratum = defaultdict(list)
    for i in items:
        by_stratum[int(strata[i])].append(i)
    out = []
    for k, st in enumerate(sorted(by_stratum)):
        its = by_stratum[st]
        out.append((min(int(ids[i]) for i in its), sum(int(counts[i]) for i in its), st, k == 0))
    return out


def reduce_sorted(raw, ids, counts, strata, keys, exact, two_bound, stratified):
    """Entries, flagged clusters and smallest gap between clusters of items sorted by raw
    (see split_kernels.reduce_sorted): clusters are maximal runs of equal raws (exact) or
    chains of neighbours at most ``two_bound`` apart; an inexact cluster of several items
    is split into distinct values by exact key (ascending) and flagged when it holds
    several keys. Returns (entries [(id, count, stratum, first)], flagged [(e0, e1)], gap,
    first entry of the cluster before the gap's first occurrence, first entry of the one
    after it), the entries -1 when there is no gap."""
    raw = [float(v) for v in raw]
    m = len(raw)
    clusters = []
    i = 0
    while i < m:
        j = i + 1
        while j < m and ((raw[j] == raw[i]) if exact else (raw[j] - raw[j - 1] <= two_bound)):
            j += 1
        clusters.append((i, j))
        i = j
    gaps = [raw[b] - raw[b - 1] for (_, b) in clusters[:-1]]
    entries, flagged, starts = [], [], []
    for a, b in clusters:
        starts.append(len(entries))
        if exact or b - a == 1:
            groups = [list(range(a, b))]
        else:
            by_key = defaultdict(list)
            for t in range(a, b):
                by_key[words_to_int(keys[t])].append(t)
            groups = [by_key[k] for k in sorted(by_key)]
        e0 = len(entries)
        for g in groups:
            entries.extend(group_entries(g, ids, counts, strata, stratified))
        if len(groups) > 1:
            flagged.append((e0, len(entries)))
    if not gaps:
        return entries, flagged, math.inf, -1, -1
    at = gaps.index(min(gaps))
    return entries, flagged, min(gaps), starts[at], starts[at + 1]


def smallest_gap(reps, A, state, B, S):
    """(smallest difference of raws of consecutive reps, index of its first occurrence)."""
    raws = [split_raw(A, state, B, S, r) for r in reps]
    diffs = [b - a for a, b in zip(raws, raws[1:])]
    if not diffs:
        return math.inf, 0
    best = min(diffs)
    return best, diffs.index(best)


# -- synthetic inputs (numpy only) -------------------------------------------------------------
def synthetic_split_form(seed, n=10, h=5, coarse=4, fine=40, words=2, noise=0.4):
    """A binary split form with exact keys of ``words`` words (no irscale code).

    key(p, s) = T0 + (ua[p] + vb[state[p], s]) * D + f[s] with f[s] < ``fine``. Two words:
    D = 2^61, T0 = 4 * 2^64 - 2^62 (low words of KA[p] and KB[c, s] often sum past 2^64:
    carries); one word: D = 2^50, T0 = 2^62. Keys of one coarse level differ by less than the
    float resolution of raws (ulp >= 2^10), so distinct keys share or invert raw values
    (clusters), while exact ties come from repeated (ua, vb, f).
    A[p] = float(KA[p]) + e and B[c, s] = float(KB[c, s]) + e' with |e|, |e'| <= ``noise`` * bound
    and bound = 64 u max_key: raws carry errors up to about 0.8 bound (plus rounding), so runs of
    one value have raws up to ~1.6 bound apart, close to the two_bound = 2 bound the kernels allow
    for. Returns a dict with n, levels, h, S, A, state, B, KA, KB, bound and ``key`` (Python
    function rid -> exact key)."""
    rng = np.random.default_rng(seed)
    levels = 2
    P, S = levels ** h, levels ** (n - h)
    ns = 3
    D, T0 = (1 << 61, 4 * WORD - (1 << 62)) if words >= 2 else (1 << 50, 1 << 62)
    state = np.array([bin(p).count("1") % ns for p in range(P)], dtype=np.int64)
    ua = rng.integers(0, coarse, size=P)
    vb = rng.integers(0, coarse, size=(ns, S))
    f = rng.integers(0, fine, size=S)
    ka = [T0 + int(ua[p]) * D for p in range(P)]
    kb = [[int(vb[c, s]) * D + int(f[s]) for s in range(S)] for c in range(ns)]
    KA = np.array([int_to_words(v, words) for v in ka], dtype=np.uint64)
    KB = np.array([[int_to_words(v, words) for v in row] for row in kb], dtype=np.uint64)
    max_key = max(ka) + max(max(r) for r in kb)
    bound = 64 * U * float(max_key)
    A = np.array([float(v) for v in ka]) + rng.uniform(-noise, noise, size=P) * bound
    B = np.array([[float(v) for v in row] for row in kb]) + rng.uniform(-noise, noise, size=(ns, S)) * bound
    return dict(n=n, levels=levels, h=h, S=S, A=A, state=state, B=B, KA=KA, KB=KB, bound=bound, exact=False,
                key=lambda rid: ka[int(rid) // S] + kb[int(state[int(rid) // S])][int(rid) % S])


def reference_table(key, levels, n, stratified, n_runs=None):
    """Entries of a table built by brute force: every run id scored by ``key`` (exact value
    key, value order = key order), grouped by value and, if ``stratified``, by number of
    nonzero digits (ascending). Returns ids (int64), counts (int64), packed strata (uint8, empty
    when not stratified)."""
    n_runs = levels ** n if n_runs is None else n_runs
    by_value = defaultdict(lambda: defaultdict(list))
    for rid in range(n_runs):
        st = relevant_count(run_of_id(rid, levels, n)) if stratified else 0
        by_value[key(rid)][st].append(rid)
    ids, counts, strata = [], [], []
    for k in sorted(by_value):
        for t, st in enumerate(sorted(by_value[k])):
            rids = by_value[k][st]
            ids.append(min(rids))
            counts.append(len(rids))
            strata.append(st | (FIRST if t == 0 else 0))
    return (np.array(ids, np.int64), np.array(counts, np.int64),
            np.array(strata if stratified else [], np.uint8))


# -- tables -----------------------------------------------------------------------------------
class TableModel:
    """A table as plain Python lists: per entry its run id, raw value, stratum, whether it
    starts a value, and its run count."""

    def __init__(self, ids, implicit, n_entries, strata, counts, A, state, B, S):
        self.E = int(n_entries)
        self.rid = list(range(self.E)) if implicit else [int(v) for v in np.asarray(ids)[:self.E]]
        self.has_strata = len(strata) > 0
        st = [int(v) for v in np.asarray(strata)[:self.E]] if self.has_strata else [0] * self.E
        self.stratum = [v & STRATUM for v in st]
        self.first = [bool(v & FIRST) for v in st] if self.has_strata else [True] * self.E
        self.count = [int(v) for v in np.asarray(counts)[:self.E]] if len(counts) > 0 else [1] * self.E
        self.raw = [split_raw(A, state, B, S, r) for r in self.rid]

    def present(self, j, r):
        return self.first[j] and (not self.has_strata or self.stratum[j] <= r)

    def feasible(self, j, r):
        return not self.has_strata or self.stratum[j] <= r

    def value_starts(self, r):
        """First entries of the values present for r, in table (value) order."""
        return [j for j in range(self.E) if self.present(j, r)]

    def value_start(self, j):
        while not self.first[j]:
            j -= 1
        return j

    def value_end(self, j):
        """One past the last entry of the value starting at entry j."""
        t = j + 1
        while t < self.E and not self.first[t]:
            t += 1
        return t


def build_index(table, nr):
    """(block_raw, block_cum) of lookup_kernels.build_index from the definition: the raw of
    every RAW_BLOCK-th entry; values present for r (column r) among the entries before each
    BLOCK boundary (without strata every entry is a value, counted in every column)."""
    block_raw = [table.raw[j] for j in range(0, table.E, RAW_BLOCK)]
    nb = -(-table.E // BLOCK)
    block_cum = [[sum(1 for j in range(min(b * BLOCK, table.E)) if table.present(j, r)) for r in range(nr)]
                 for b in range(nb + 1)]
    return block_raw, block_cum


def build_run_index(table, nr):
    """Runs (with multiplicity) of the entries of stratum <= r before each BLOCK boundary."""
    nb = -(-table.E // BLOCK)
    return [[sum(table.count[j] for j in range(min(b * BLOCK, table.E)) if table.feasible(j, r))
             for r in range(nr)] for b in range(nb + 1)]


def rank_raw(table, xs, tols, r):
    """(ranks, status) of raw queries: status 0 and the 1-based rank among the values present
    for r when exactly one present value lies within tol of x; 1 when none; 2 when several."""
    starts = table.value_starts(r)
    ranks, status = [], []
    for x, tol in zip(xs, tols):
        hits = [k for k, j in enumerate(starts, start=1) if abs(table.raw[j] - float(x)) <= float(tol)]
        status.append(0 if len(hits) == 1 else (1 if not hits else 2))
        ranks.append(hits[0] if len(hits) == 1 else 0)
    return ranks, status


def rank_ids(table, qids, r, entry_values, query_value, levels, n):
    """(ranks, status) of run ids: 3 when the table has strata and the run has more than r
    nonzero digits; otherwise the rank (among values present for r) of the value of the first
    entry whose value (``entry_values[j]``: its raw for exact raws, its exact key otherwise)
    equals the run's (``query_value(qid)``); status 1 when no entry has it."""
    starts = table.value_starts(r)
    ranks, status = [], []
    for q in qids:
        q = int(q)
        if table.has_strata and relevant_count(run_of_id(q, levels, n)) > r:
            ranks.append(0)
            status.append(3)
            continue
        v = query_value(q)
        hit = next((j for j in range(table.E) if entry_values[j] == v), None)
        if hit is None:
            ranks.append(0)
            status.append(1)
            continue
        start = table.value_start(hit)
        ranks.append(starts.index(start) + 1 if start in starts else -1)
        status.append(0)
    return ranks, status


def midranks(table, qs, r):
    """Mid-ranks (Fractions) of the values of unq ranks qs among the values present for r:
    feasible runs of smaller values + (feasible runs of this value + 1) / 2."""
    starts = table.value_starts(r)

    def runs_of(j):
        return sum(table.count[t] for t in range(j, table.value_end(j)) if table.feasible(t, r))

    out = []
    for q in qs:
        below = sum(runs_of(j) for j in starts[:int(q) - 1])
        out.append(below + Fraction(runs_of(starts[int(q) - 1]) + 1, 2))
    return out


def present_raw(table, start, m, r):
    """(raws, counts, lead) of lookup_kernels.present_raw for the chunk of entries
    start..start+m-1: per value present for r whose first entry lies in the chunk, the raw of
    that entry and the runs of its feasible entries inside the chunk; ``lead`` the feasible
    runs of the chunk's entries before its first such value."""
    raws, counts, lead = [], [], 0
    for j in range(start, start + m):
        if not table.feasible(j, r):
            continue
        if table.first[j]:
            raws.append(table.raw[j])
            counts.append(table.count[j])
        elif counts:
            counts[-1] += table.count[j]
        else:
            lead += table.count[j]
    return raws, counts, lead


# -- spacing ---------------------------------------------------------------------------------
def float_bits(x):
    return struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def bits_float(b):
    return struct.unpack("<d", struct.pack("<Q", int(b)))[0]


def edge_lut(edges, shift=48):
    """Per leading-bits key from edges[0] to edges[-1]: the last edge index <= the smallest
    float with that key (0 if none). Returns (lut, smallest key)."""
    edges = [float(e) for e in edges]
    kmin, kmax = float_bits(edges[0]) >> shift, float_bits(edges[-1]) >> shift
    lut = [max(bisect.bisect_right(edges, bits_float(k << shift)) - 1, 0) for k in range(kmin, kmax + 1)]
    return lut, kmin


def stats(vals, vmin, span, kk, mu0, edges):
    """The final state of spacing_kernels.stats_block folded over all sorted values ``vals``
    from a fresh state: dict seen, covered, lastbin, nonpos, prev, s1, s2, gmin, gmax, devmax,
    devsum, hist (bins, then below edges[0] (and NaN), then above edges[-1]; np.histogram
    bins: half-open, the last one closed)."""
    edges = [float(e) for e in edges]
    nbins = len(edges) - 1
    vals = [float(v) for v in vals]
    gaps = [b - a for a, b in zip(vals, vals[1:])]
    hist = [0] * (nbins + 2)
    for g in gaps:
        if not g >= edges[0]:
            hist[nbins] += 1
        elif g > edges[-1]:
            hist[nbins + 1] += 1
        elif g == edges[-1]:
            hist[nbins - 1] += 1
        else:
            hist[bisect.bisect_right(edges, g) - 1] += 1
    s1 = s2 = 0.0
    for g in gaps:                       # summed in value order, as the kernel does
        s1 += g - mu0
        s2 += (g - mu0) * (g - mu0)
    devs, bins = [], set()
    for i, v in enumerate(vals):
        if kk > 1:
            t = (v - vmin) / span
            devs.append(abs(t - i / float(kk - 1)))
            bins.add(min(max(math.floor(t * float(kk - 1) + 0.5), 0), kk - 1))
        else:
            bins.add(0)
    devsum = 0.0
    for d in devs:
        devsum += d
    return dict(seen=len(vals), covered=len(bins), lastbin=max(bins, default=-1),
                nonpos=sum(1 for g in gaps if g <= 0), prev=vals[-1] if vals else 0.0, s1=s1, s2=s2,
                gmin=min(gaps, default=math.inf), gmax=max(gaps, default=-math.inf),
                devmax=max(devs, default=0.0), devsum=devsum, hist=hist)


def dist_targets(cnts, points, n_runs):
    """spacing_kernels.dist_block over all counts at once: the indices of the values picked
    (the first value, and for j = 1..points the first value whose cumulative count cum
    satisfies cum * points >= j * n_runs), their cumulative counts, and the next target."""
    cums = list(itertools.accumulate(int(c) for c in cnts))
    picked = {0} if cums else set()
    nxt, hit = 1, 0
    for j in range(1, points + 1):
        # targets increase with j: the first value reaching target j is at or after the previous one
        hit = next((i for i in range(hit, len(cums)) if cums[i] * points >= j * n_runs), None)
        if hit is None:
            break
        picked.add(hit)
        nxt = j + 1
    idx = sorted(picked)
    return idx, [cums[i] for i in idx], nxt


# -- axioms ------------------------------------------------------------------------------------
def strict_inversions(x):
    x = [int(v) for v in x]
    per = [sum(1 for i in range(j) if x[i] > x[j]) for j in range(len(x))]
    return sum(per), per


def partner_before(x, j):
    return max((i for i in range(j) if x[i] > x[j]), default=-1)


def prefix_counts(run, G):
    """[t - 1][k - 1]: documents of grade >= t among ranks 1..k."""
    return [[sum(1 for d in run[:k] if d >= t) for k in range(1, len(run) + 1)] for t in range(1, G + 1)]


def leq(b_run, a_run, G):
    """b <= a in the partial order: every prefix count per grade threshold of b <= that of a."""
    pb, pa = prefix_counts(b_run, G), prefix_counts(a_run, G)
    return all(x <= y for rb_, ra_ in zip(pb, pa) for x, y in zip(rb_, ra_))


def all_pairs(r1, r2, runs, G, max_examples):
    """(discordant, comparable discordant, examples [(lower, upper)]) over pairs a < b."""
    disc = comp = 0
    examples = []
    R = len(r1)
    for a, b in itertools.combinations(range(R), 2):
        if (r1[a] - r1[b]) * (r2[a] - r2[b]) < 0:
            disc += 1
            pair = (a, b) if leq(runs[a], runs[b], G) else ((b, a) if leq(runs[b], runs[a], G) else None)
            if pair is not None:
                comp += 1
                if len(examples) < max_examples:
                    examples.append(pair)
    return disc, comp, examples


# -- rank oracles (irscale.scales.tables.oracle_kernels) -------------------------------------------
def oracle_count(a_side, b_side, r, y, strict):
    """count(y): sum of w_a * w_b over pairs of entries (s, c, w) of the two sides with
    c_a + c_b <= r and s_b < y - s_a (<= when not ``strict``), the difference in float64."""
    total = 0
    for sa, ca, wa in a_side:
        for sb, cb, wb in b_side:
            d = y - sa
            if ca + cb <= r and (sb < d if strict else sb <= d):
                total += wa * wb
    return total


def oracle_lists(b_side, want, thresholds, bucket_entries):
    """Side B's lists for thresholds 0..want: per list (values, positions in B, weight before
    each entry, total weight, bucket starts, first value, buckets per unit of value); list t
    holds the entries (s, c, w) with c <= t (every entry unless ``thresholds``), bucket g
    starting at the first entry not below first + g * width."""
    out = []
    for t in range(want + 1):
        entries = [(i, s, w) for i, (s, c, w) in enumerate(b_side) if not thresholds or c <= t]
        xs = [s for _, s, _ in entries]
        before = [sum(w for _, _, w in entries[:k]) for k in range(len(entries))]
        buckets = max(1, len(xs) // bucket_entries)
        if not xs:
            out.append((xs, [], before, 0, [0] * (buckets + 1), 0.0, 0.0))
            continue
        width = (xs[-1] - xs[0]) / buckets
        edges = [xs[0] + g * width if width > 0 else xs[0] for g in range(buckets + 1)]
        starts = [sum(1 for x in xs if x < e) for e in edges]
        out.append((xs, [i for i, _, _ in entries], before, sum(w for _, _, w in entries), starts, xs[0],
                    1.0 / width if width > 0 else 0.0))
    return out


def oracle_band(a_side, b_side, r, lo, hi):
    """The pairs (index in A, index in B) counted by count(hi) (<=) and not by count(lo) (<)."""
    out = []
    for i, (sa, ca, _) in enumerate(a_side):
        for j, (sb, cb, _) in enumerate(b_side):
            if ca + cb <= r and not sb < lo - sa and sb <= hi - sa:
                out.append((i, j))
    return sorted(out)
