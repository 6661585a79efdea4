"""Spacing statistics (scales/spacing.py): the streaming pass over a table equals a plain
numpy computation on Scale.values / Scale.counts, for every recall base and for chunk
sizes that split values' entries across chunks; and agrees with a brute force. The
``irscale spacing`` table prints exact zeros for equally spaced values."""
from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner
from naive import REFERENCES, oracle

import irscale
from irscale.cli import cli
from irscale.scales.analysis import spacing as sp
from irscale.scales.analysis import spacing_kernels as sk
from irscale.scales.tables import lookup_kernels as lk

CHUNKS = (5, 64, 1 << 20)


def _scale(name, rb=None):
    return irscale.scale(name, rb=rb)


def plain_stats(values, counts):
    """The definitions of scales/spacing.py written out directly."""
    v = np.asarray(values, dtype=np.float64)
    k = v.size
    g = np.diff(v)
    edges = 10.0 ** np.linspace(-18, 0, 18 * sp.GAP_BINS_PER_DECADE + 1)
    hist, _ = np.histogram(g, bins=edges)
    t = (v - v[0]) / (v[-1] - v[0])
    dev = np.abs(t - np.arange(k) / (k - 1))
    occupied = {min(max(int(math.floor(x * (k - 1) + 0.5)), 0), k - 1) for x in t}
    return dict(n_distinct=k, n_runs=int(np.sum(counts)), min=v[0], max=v[-1], gap_mean=g.mean(),
                gap_std=g.std(), gap_cv=g.std() / g.mean(), gap_min=g.min(), gap_max=g.max(),
                n_nonpositive_gaps=int((g <= 0).sum()), gap_hist_counts=hist.tolist(),
                gap_hist_below=int((g < 1e-18).sum()), gap_hist_above=int((g > 1).sum()),
                uncovered=1 - len(occupied) / k, max_deviation=dev.max(), mean_abs_deviation=dev.mean())


EXACT_KEYS = ("n_distinct", "n_runs", "min", "max", "gap_min", "gap_max", "n_nonpositive_gaps",
              "gap_hist_counts", "gap_hist_below", "gap_hist_above", "uncovered", "max_deviation")
CLOSE_KEYS = ("gap_mean", "gap_std", "gap_cv", "mean_abs_deviation")


def check_against_plain(stats, values, counts):
    ref = plain_stats(values, counts)
    for key in EXACT_KEYS:
        assert stats[key] == ref[key], key
    for key in CLOSE_KEYS:
        assert stats[key] == pytest.approx(ref[key], rel=1e-9, abs=1e-15), key


CASES = [
    ("P@8", [None]),
    ("RR@10", [None]),
    ("RBP(p=0.3)@11", [None]),          # implicit table: entry i is run i
    ("RBP(p=0.5)@9", [None]),
    ("RBP(p=0.8)@10", [None]),
    ("DCG(b=2)@12", [None]),
    ("DCG(b=10)@11", [None]),
    ("AP@9", list(range(1, 12))),        # every recall base, and rb > N
    ("AP@12", [1, 2, 6, 11, 12, 40]),
    ("nDCG(b=2)@10", list(range(1, 13))),
    ("R@8", [1, 4, 8, 9]),
    ("F1@9", list(range(1, 11))),
    ("nDCG_trec@8", [1, 3, 8, 20]),
]


@pytest.mark.parametrize("name,rbs", CASES, ids=[c[0] for c in CASES])
def test_streaming_equals_materialised(name, rbs):
    for rb in rbs:
        s = _scale(name, rb)
        values, counts = s.values, s.counts
        for chunk in CHUNKS:
            got_v, got_c = [], []
            for v, c in s.value_blocks(chunk):
                got_v.append(v.copy())
                got_c.append(c.copy())
            assert np.array_equal(np.concatenate(got_v), values), (name, rb, chunk)
            assert np.array_equal(np.concatenate(got_c), counts), (name, rb, chunk)
            stats = sp.spacing_stats(s, chunk=chunk)
            check_against_plain(stats, values, counts)
            assert stats["n_runs"] == s.n_runs
            ref = sp.spacing_of_values(values, counts)
            for key in EXACT_KEYS:
                assert stats[key] == ref[key], (name, rb, chunk, key)
            for key in CLOSE_KEYS:
                assert stats[key] == pytest.approx(ref[key], rel=1e-9, abs=1e-15)
        assert stats["measure"] == str(s.measure) and stats["n"] == s.n and stats["rb"] == rb
        json.dumps(stats)


def test_present_raw_division_path():
    """The kernel's generic path (S not a power of two: graded runs) gives what the
    shift path gives on a binary table."""
    s = _scale("AP@10", 6)
    t, sf = s.table, s._sf
    ids, strata, counts = (np.asarray(a) for a in (t.ids, t.strata, t.counts))
    out = []
    for sh in (int(sf.S).bit_length() - 1, -1):
        raw, cnt = np.zeros(t.n_entries), np.zeros(t.n_entries, np.int64)
        k, lead = lk._present_raw(ids, False, 0, t.n_entries, strata, counts, s.r, sf.A, sf.state, sf.B, sf.S,
                                  sh, raw, cnt)
        out.append((k, lead, raw[:k], cnt[:k]))
    assert out[0][0] == out[1][0] == s.k and out[0][1] == out[1][1] == 0
    assert np.array_equal(out[0][2], out[1][2]) and np.array_equal(out[0][3], out[1][3])
    assert np.array_equal(s._values_of_raw(out[1][2]), s.values) and np.array_equal(out[1][3], s.counts)


def test_entries_of_one_value_straddle_chunks():
    """AP tables have values with entries of several strata; chunks of 2 and 3 entries cut
    through them (the counts of such values must still add up)."""
    s = _scale("AP@8", 8)
    strata = np.asarray(s.table.strata)
    assert ((strata & lk.FIRST) == 0).sum() > 10       # many values have several entries
    for chunk in (1, 2, 3):
        check_against_plain(sp.spacing_stats(s, chunk=chunk), s.values, s.counts)


@pytest.mark.parametrize("name,rb", [("P@10", None), ("RBP(p=0.5)@10", None), ("R@9", 9), ("R@9", 4),
                                     ("DCG(b=10)@9", None)])
def test_equal_spacing_is_zero(name, rb):
    st = sp.spacing_stats(_scale(name, rb), chunk=3)
    assert st["uncovered"] == 0.0
    assert st["gap_cv"] == pytest.approx(0.0, abs=1e-12)
    assert st["max_deviation"] == pytest.approx(0.0, abs=1e-12)
    assert st["mean_abs_deviation"] == pytest.approx(0.0, abs=1e-12)
    assert st["n_nonpositive_gaps"] == 0


def test_spacing_prints_exact_zeros_for_equally_spaced_values(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@16,AP@8")
    r = CliRunner().invoke(cli, ["spacing", str(path)])
    assert r.exit_code == 0, r.output
    row = next(line.split() for line in r.output.splitlines() if line.startswith("P@16"))
    assert row[5:8] == ["0", "0", "0"] and row[-1] == "yes"
    rows = json.loads(CliRunner().invoke(cli, ["spacing", str(path), "--json"]).output)
    p = next(x for x in rows if x["measure"] == "P@16")
    assert p["gap_cv"] == 0.0 and p["gap_min"] == p["gap_max"] == float(Fraction(1, 16))
    ap = next(x for x in rows if x["measure"] == "AP@8")
    assert ap["gap_cv"] > 0.5

def test_unequal_spacing_is_positive():
    st = sp.spacing_stats(_scale("RR@10"))
    # RR@10: values 0, 1/10, ..., 1/2, 1: the top half of the range holds only the value 1
    assert st["n_distinct"] == 11 and st["gap_max"] == pytest.approx(0.5)
    assert st["uncovered"] > 0.3 and st["max_deviation"] > 0.4 and st["gap_cv"] > 1


def test_spacing_of_values_small_cases():
    st = sp.spacing_of_values([0.0, 0.25, 0.5, 0.75, 1.0])
    assert st["gap_cv"] == 0 and st["uncovered"] == 0 and st["max_deviation"] == 0
    st = sp.spacing_of_values([0.0, 0.1, 1.0])
    # grid points 0, 0.5, 1: 0.1 rounds to point 0, point 0.5 is empty
    assert st["uncovered"] == pytest.approx(1 / 3)
    assert st["max_deviation"] == pytest.approx(0.4)
    assert st["mean_abs_deviation"] == pytest.approx(0.4 / 3)
    st = sp.spacing_of_values([0.0, 2.0, 5.0])
    assert st["gap_hist_above"] == 2 and sum(st["gap_hist_counts"]) == 0
    st = sp.spacing_of_values([0.5])
    assert st["n_distinct"] == 1 and st["gap_mean"] is None and st["uncovered"] == 0
    json.dumps(st)


def test_gap_binning_kernel_matches_numpy_histogram():
    """The bit-pattern lookup of the kernel puts every gap where np.histogram does,
    including gaps on the edges, below 1e-18, <= 0 and above 1."""
    edges = sp.gap_edges()
    rng = np.random.default_rng(1)
    gaps = np.concatenate([10.0 ** rng.uniform(-20, 1, 20000), edges, np.nextafter(edges, 0),
                           np.nextafter(edges, 2), [0.0, 0.0, 1.0, 2.0]])
    vals = np.zeros(2 * gaps.size + 1)
    vals[1::2] = gaps                                     # diffs: g1, -g1, g2, -g2, ... exactly
    vals_gaps = np.diff(vals)
    assert np.array_equal(vals_gaps[::2], gaps)
    lut, key_min = sp._edge_lut(edges)
    ist = np.zeros(sk.N_ISTATE, np.int64)
    ist[sk.I_LASTBIN] = -1
    fst = np.zeros(sk.N_FSTATE)
    fst[sk.F_GMIN], fst[sk.F_GMAX] = np.inf, -np.inf
    hist = np.zeros(edges.size + 1, np.int64)
    for a in range(0, vals.size, 777):                   # several blocks, state carried over
        sk.stats_block(vals[a:a + 777], vals[0], 1.0, vals.size, 0.0, edges, lut, key_min, ist, fst, hist)
    ref, _ = np.histogram(vals_gaps, bins=edges)
    nb = edges.size - 1
    assert hist[:nb].tolist() == ref.tolist()
    assert hist[nb] == (vals_gaps < edges[0]).sum()
    assert hist[nb + 1] == (vals_gaps > 1).sum()
    assert ist[sk.I_NONPOS] == (vals_gaps <= 0).sum() == gaps.size + 2
    assert hist[nb + 1] == (gaps > 1).sum() > 0 and hist[nb - 1] >= 2   # 1.0 is in the last, closed bin


@pytest.mark.parametrize("name,rb", [("P@9", None), ("AP@10", 4), ("AP@10", 10), ("RR@8", None),
                                     ("RBP(p=0.3)@12", None), ("RBP(p=0.8)@11", None), ("DCG(b=2)@12", None),
                                     ("nDCG(b=2)@10", 3)])
@pytest.mark.parametrize("points", [1, 7, 100, 5000])
def test_value_distribution(name, rb, points):
    s = _scale(name, rb)
    v, f = sp.value_distribution(s, points, chunk=50)
    v2, f2 = sp.value_distribution_of(s.values, s.counts, points)
    assert np.array_equal(v, v2) and np.array_equal(f, f2)
    assert v[0] == s.values[0] and v[-1] == s.values[-1] and f[-1] == 1.0
    assert np.all(np.diff(v) > 0) and np.all(np.diff(f) > 0)
    assert len(v) <= min(points + 1, s.k)
    # f is the CDF over runs at each value
    cdf = np.cumsum(s.counts) / s.n_runs
    idx = np.searchsorted(s.values, v)
    assert np.array_equal(cdf[idx], f)
    # for every target j/points, the first value whose CDF reaches it is among the values
    cum = np.cumsum(s.counts)
    wanted = {0, s.k - 1}
    for j in range(1, points + 1):
        wanted.add(int(np.argmax(cum * points >= j * s.n_runs)))
    assert set(idx.tolist()) == wanted
    if points >= s.n_runs:
        assert len(v) == s.k


BRUTE = [("P", None), ("AP", 1), ("AP", 3), ("AP", 7), ("RR", None), ("RBP(p=0.3)", None),
         ("RBP(p=0.8)", None), ("DCG(b=2)", None), ("nDCG(b=2)", 2), ("nDCG(b=2)", 6), ("R", 3)]


@pytest.mark.parametrize("family,rb", BRUTE)
def test_against_brute_force(family, rb):
    n = 6
    runs, vals, distinct, ranks = oracle(REFERENCES[family], n, rb)
    counts = np.bincount(np.asarray(ranks) - 1)
    values = np.array([float(x) for x in distinct])
    s = _scale(f"{family}@{n}", rb)
    st = sp.spacing_stats(s, chunk=4)
    assert st["n_distinct"] == len(distinct)
    assert st["n_runs"] == len(runs)
    assert st["min"] == pytest.approx(values[0], abs=1e-15)
    assert st["max"] == pytest.approx(values[-1], rel=1e-14)
    ref = sp.spacing_of_values(values, counts)
    for key in ("n_distinct", "n_runs", "uncovered", "n_nonpositive_gaps"):
        assert st[key] == ref[key], key
    for key in ("gap_mean", "gap_std", "gap_min", "gap_max", "max_deviation", "mean_abs_deviation"):
        assert st[key] == pytest.approx(ref[key], rel=1e-9, abs=1e-12), key
    v, f = sp.value_distribution(s, points=10_000, chunk=3)
    assert np.allclose(v, values, rtol=1e-13, atol=1e-15)
    assert np.allclose(f, np.cumsum(counts) / len(runs), rtol=0, atol=1e-15)


def test_store_tables(tmp_path):
    """Tables read from a store file (plain reads of the mapped datasets) give the same
    statistics as the in-memory tables; store_spacing covers every table at rb = N."""
    names = ["AP@9", "RBP(p=0.3)@9", "RBP(p=0.8)@9", "DCG(b=2)@9", "nDCG(b=2)@9", "P@9"]
    store = irscale.build_store(tmp_path / "t.h5", names)
    out = sp.store_spacing(store, chunk=100)
    assert sorted(d["measure"] for d in out) == sorted(names)
    for d in out:
        m = irscale.parse_measure(d["measure"])
        assert d["n"] == 9 and d["rb"] == (9 if m.rb_dependent else None)
        mem = _scale(d["measure"], d["rb"])
        check_against_plain(d, mem.values, mem.counts)
    s = store.scale("AP@9", rb=4)
    check_against_plain(sp.spacing_stats(s, chunk=33), s.values, s.counts)
    v, f = sp.value_distribution(store.scale("nDCG(b=2)@9", rb=2), 50, chunk=10)
    v2, f2 = sp.value_distribution_of(*(lambda x: (x.values, x.counts))(_scale("nDCG(b=2)@9", 2)), 50)
    assert np.array_equal(v, v2) and np.array_equal(f, f2)
    subset = sp.store_spacing(str(tmp_path / "t.h5"), ["AP@9"])
    assert len(subset) == 1 and subset[0]["measure"] == "AP@9"
    json.dumps(out)
