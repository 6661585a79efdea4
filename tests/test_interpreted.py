"""Kernels run by the interpreter (enumerate/interpreted.py) give what the compiled kernels give.

* Every kernel a module lists in ``INTERPRETABLE`` is a numba function, and each is covered
  here (a kernel added to a list without a test fails).
* The kernel tests against the plain-Python references (tests/test_kernels_enumerate.py,
  test_kernels_split.py, test_kernels_lookup.py) run again with the listed kernels
  interpreted.
* Edge cases the references do not reach, compiled and interpreted on the same inputs:
  64-bit wrap-around, corrupt tables (run ids outside the run space, strata beyond N,
  counts of 0, tampered block sums and indexes), NaN and infinite tolerances.
* Whole tables (exact and inexact raws, strata, graded, per-vector) built and looked up
  with every kernel interpreted equal those of the compiled kernels, entry for entry; a
  store written and validated interpreted equals one written compiled.
* The policy: small calls interpreted, big ones and kernels already compiled compiled,
  the budget per kernel; a fresh process with an empty numba cache answers
  ``irscale.scale("AP@10", rb=5).rank(...)`` without compiling anything; and every numba
  kernel of the package is cached on disk (compiled once per machine, not per process).
"""
from __future__ import annotations

import inspect
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numba as nb
import numpy as np
import pytest
import test_kernels_enumerate
import test_kernels_lookup
import test_kernels_oracle
import test_kernels_split
from _pytest.mark.structures import ParameterSet

import irscale
from irscale.enumerate import interpreted as ip
from irscale.enumerate import kernels as K
from irscale.enumerate import split_kernels as sk
from irscale.enumerate.split import group_split, process_bucket
from irscale.scales.measures.families import average_precision_kernels as apk
from irscale.scales.measures.families import err_kernels as errk
from irscale.scales.measures.families import reciprocal_rank_kernels as rrk
from irscale.scales.tables import lookup_kernels as lk
from irscale.scales.tables import oracle_kernels as ok

ROOT = Path(__file__).resolve().parents[1]
MODULES = {"kernels": K, "split_kernels": sk, "lookup_kernels": lk, "oracle_kernels": ok,
           "average_precision_kernels": apk, "reciprocal_rank_kernels": rrk, "err_kernels": errk}
#: The listed kernels this file compares directly on inputs of its own (the rest of each
#: list is covered by the kernel tests run interpreted; see test_every_listed_kernel_is_covered).
COMPARED = {"decode_runs", "decode_ids", "encode_runs", "relevant_counts", "additive_keys", "ap_keys", "rr_keys",
            "count_between", "fill_between", "gather_items", "pack_sort_keys", "unpack_order", "settle",
            "popcount_ids", "grade_counts_ids", "key_of_id", "exact_keys", "reduce_sorted", "smallest_gap",
            "build_index", "rank_raw", "rank_ids", "build_run_index", "check_index", "scan_entries",
            "add_block_sums", "check_blocks", "count_serial", "scan_serial"}


class Interpreted:
    """A kernel module whose listed kernels always run interpreted."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if name in self._module.INTERPRETABLE:
            t = ip.Tiered(value)
            t.interpret = True
            return t
        return value


def interpreted(kernel):
    t = ip.Tiered(kernel)
    t.interpret = True
    return t


def same(x, y):
    """Equal values of equal types (arrays: dtype, shape and every element, NaN equal to NaN)."""
    if isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
        if x.dtype.names:
            for f in x.dtype.names:
                same(x[f], y[f])
        else:
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
    elif isinstance(x, tuple):
        assert isinstance(y, tuple) and len(x) == len(y)
        for a, b in zip(x, y):
            same(a, b)
    else:
        assert type(x) is type(y), (x, y)
        assert x == y or (x != x and y != y), (x, y)


def both(kernel, *args, scratch=()):
    """Run ``kernel`` compiled and interpreted on copies of ``args``; the results and every
    array argument afterwards must be the same, except the arguments at the positions
    ``scratch`` (inputs a kernel may reorder as it likes). Returns the compiled result."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    r1 = kernel(*a1)
    r2 = interpreted(kernel)(*a2)
    same(r1, r2)
    for i, (x, y) in enumerate(zip(a1, a2)):
        if isinstance(x, np.ndarray) and i not in scratch:
            same(x, y)
    return r1


def test_every_listed_kernel_is_covered():
    for module in MODULES.values():
        assert module.INTERPRETABLE or module is errk, module.__name__      # ERR's kernel: compiled only
        for name in module.INTERPRETABLE:
            assert isinstance(getattr(module, name), nb.core.registry.CPUDispatcher), name
    listed = {name for m in MODULES.values() for name in m.INTERPRETABLE}
    assert listed == COMPARED


# -- the kernel tests, interpreted ---------------------------------------------------------------
def _parameter_sets(fn):
    """Keyword arguments of every case of a test function's parametrize marks."""
    combos = [{}]
    for mark in getattr(fn, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names = [n.strip() for n in mark.args[0].split(",")] if isinstance(mark.args[0], str) else mark.args[0]
        new = []
        for c in combos:
            for v in mark.args[1]:
                v = v.values if isinstance(v, ParameterSet) else v
                new.append({**c, **dict(zip(names, v if len(names) > 1 else (v,)))})
        combos = new
    return combos


def _compiled_only() -> set[str]:
    """Public kernels that always run compiled (not listed): tests named after them are not rerun."""
    return {name for m in MODULES.values() for name, v in vars(m).items()
            if isinstance(v, nb.core.registry.CPUDispatcher) and not name.startswith("_")
            and v.py_func.__module__ == m.__name__ and name not in m.INTERPRETABLE}


def _kernel_tests():
    out = []
    skip = _compiled_only()
    for mod, attr in ((test_kernels_enumerate, ("K", "APK", "RRK", "ERRK")), (test_kernels_split, ("sk",)),
                      (test_kernels_lookup, ("lk",)),
                      (test_kernels_oracle, ())):       # the oracle tests call the kernels through oracle_form
        for name, fn in inspect.getmembers(mod, inspect.isfunction):
            if not name.startswith("test_") or fn.__module__ != mod.__name__:
                continue
            if any(k in name for k in skip):
                continue
            for kw in _parameter_sets(fn):
                params = set(inspect.signature(fn).parameters)
                if params - set(kw) - {"monkeypatch"}:          # other fixtures: not run here
                    continue
                label = ",".join(f"{k}={getattr(v, '__name__', v)}" for k, v in kw.items())   # no addresses: the
                # ids are the same in every process (pytest-xdist's workers compare them)
                out.append(pytest.param(mod, attr, fn, kw, id=f"{mod.__name__}.{name}[{label}]"))
    return out


@pytest.mark.parametrize("mod,attr,fn,kw", _kernel_tests())
def test_kernel_tests_pass_interpreted(mod, attr, fn, kw, monkeypatch):
    for name in attr:
        monkeypatch.setattr(mod, name, Interpreted(getattr(mod, name)))
    monkeypatch.setattr(ip.Tiered, "interpret", True)        # what they call through the library too
    if "monkeypatch" in inspect.signature(fn).parameters:
        kw = {**kw, "monkeypatch": monkeypatch}
    fn(**kw)


# -- edge cases, compiled and interpreted --------------------------------------------------------
def test_run_kernels_and_scoring_wrap_as_compiled():
    rng = np.random.default_rng(0)
    for levels, n in [(2, 12), (3, 7), (4, 40)]:          # 4^40 > 2^64: ids wrap
        runs = rng.integers(0, levels, size=(300, n), dtype=np.uint8)
        both(K.encode_runs, runs, levels)
        both(K.relevant_counts, runs)
        big = rng.integers(1 << 62, (1 << 63) - 1, size=(n, levels), dtype=np.int64).astype(np.uint64)
        for weights in (big, rng.integers(0, 50, size=(n, levels)).astype(np.uint64)):
            both(K.additive_keys, runs, weights, np.zeros((300, 1), np.uint64))
            both(apk.ap_keys, runs, weights, np.zeros((300, 1), np.uint64))
        for weights in (np.zeros((0, 0), np.uint64), np.full((1, 1), 2, np.uint64)):
            both(rrk.rr_keys, runs, weights, np.zeros((300, 1), np.uint64))
        both(K.decode_runs, 5, 100, levels, min(n, 12), np.full((110, min(n, 12)), 255, np.uint8))
        both(K.decode_ids, rng.integers(0, levels ** min(n, 12), size=50), levels, min(n, 12),
             np.zeros((50, min(n, 12)), np.uint8))


@pytest.mark.parametrize("name", ["AP@10", "R@9", "nDCG(b=2)@8", "DCG(b=2,gains=(0,1,2))@6", "RR@8", "P@7",
                                  "RBP(p=0.8)@9"])
def test_split_kernels_on_real_buckets(name):
    sf = irscale.parse_measure(name).split_form()
    g = group_split(sf)
    both(sk.popcount_ids, np.arange(g.S, dtype=np.int64), sf.levels, sf.n - sf.h)
    both(sk.grade_counts_ids, np.arange(g.S, dtype=np.int64), sf.levels, sf.n - sf.h, sf.levels - 1)
    for lo, hi in [(-np.inf, np.inf), (0.1, 0.3), (0.0, 0.0)]:
        m = both(sk.count_between, g.A, g.state, g.Bs, lo, hi)
        from irscale.enumerate.split import ITEM
        items = np.zeros(m, ITEM)
        both(sk.fill_between, g.A, g.state, g.pstrat, g.pcount, g.pmin, g.Bs, g.Bstrat, g.Bcount, g.Bmin, g.S, lo, hi,
             items)
    # the whole bucket through both forms of every kernel (sorting, gathering, reducing, keys, gaps)
    ip_res = _bucket(sf, g, True)
    res = _bucket(sf, g, False)
    for f in ("ids", "counts", "strata", "first"):
        same(getattr(res, f), getattr(ip_res, f))
    assert (res.min_gap, res.gap_pair, res.redecided) == (ip_res.min_gap, ip_res.gap_pair, ip_res.redecided)
    if not sf.exact:                      # exact keys of inexact raws
        ids = np.arange(0, sf.P * sf.S, 7, dtype=np.int64)
        both(sk.exact_keys, ids, sf.KA, sf.KB, sf.state, sf.S)
        both(sk.key_of_id, np.int64(sf.P * sf.S - 1), sf.KA, sf.KB, sf.state, sf.S,
             np.zeros(sf.KA.shape[1], np.uint64))
    both(sk.smallest_gap, res.ids.astype(np.int64), sf.A, sf.state, sf.B, sf.S)


def _bucket(sf, g, interpret):
    old = ip.Tiered.interpret
    ip.Tiered.interpret = interpret
    try:
        return process_bucket(sf, g, -np.inf, np.inf)
    finally:
        ip.Tiered.interpret = old


def test_sorting_kernels_as_compiled():
    rng = np.random.default_rng(3)
    raw = np.concatenate([rng.uniform(0, 1e6, 500), -rng.uniform(0, 1, 3)])
    both(sk.pack_sort_keys, np.abs(raw).view(np.uint64), np.uint64(0), 7, 10, np.zeros(raw.size, np.uint64))
    packed = np.sort(rng.integers(0, 1 << 63, 400, dtype=np.int64).astype(np.uint64))
    for reverse in (False, True):
        both(sk.unpack_order, packed, 9, reverse, np.zeros(400, np.int64))
    for max_moves in (0, 5, 10 ** 6):
        r = np.sort(rng.integers(0, 30, 200).astype(np.float64))
        r[[3, 50, 120]] = r[[4, 51, 121]] + 1
        both(sk.settle, r, rng.permutation(200).astype(np.int64), rng.integers(1, 9, 200),
             rng.integers(0, 9, 200).astype(np.uint8), max_moves)
    from irscale.enumerate.split import ITEM
    items = np.zeros(50, ITEM)
    items["raw"], items["id"], items["count"], items["stratum"] = rng.normal(size=50), np.arange(50), 3, 1
    both(sk.gather_items, rng.permutation(50).astype(np.int64), items, np.zeros(50), np.zeros(50, np.int64),
         np.zeros(50, np.int64), np.zeros(50, np.uint8))


@pytest.mark.parametrize("exact,stratified,words", [(True, True, 1), (False, False, 2), (False, True, 1)])
def test_reduce_sorted_with_clusters(exact, stratified, words):
    rng = np.random.default_rng(words)
    m = 400
    raw = np.sort(np.round(rng.uniform(0, 20, m)) + (0 if exact else rng.uniform(0, 1e-9, m)))
    keys = rng.integers(0, 4, size=(m, words)).astype(np.uint64) + np.round(raw).astype(np.uint64)[:, None] * 8
    out = (np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.uint8), np.zeros(m, np.bool_))
    both(sk.reduce_sorted, raw, rng.permutation(m).astype(np.int64), rng.integers(1, 5, m),
         rng.integers(0, 6, m).astype(np.uint8), keys, exact, 0.0 if exact else 1e-8, stratified, 7, *out,
         np.zeros((m, 2), np.int64), scratch=(1, 2, 3, 4))    # items of a cluster are reordered by key (any tie order)


LOOKUP_CASES = ["AP@12", "nDCG(b=2)@12", "RBP(p=0.5)@12", "synthetic-2w-strata", "empty"]


@pytest.mark.parametrize("name", LOOKUP_CASES)
def test_lookup_kernels_as_compiled(name):
    c = test_kernels_lookup.case(name)
    rng = np.random.default_rng(len(name))
    nr = c.nr
    both(lk.build_index, c.ids, c.implicit, c.E, c.strata, c.A, c.state, c.B, c.S, nr)
    both(lk.build_run_index, c.counts, c.strata, c.E, nr)
    raws = np.array(c.model.raw, np.float64) if c.E else np.array([0.5])
    xs = np.sort(np.concatenate([raws[rng.integers(0, raws.size, 60)], rng.uniform(raws.min() - 1, raws.max() + 1, 30),
                                 np.nextafter(raws[:5], np.inf), [np.inf, -np.inf, np.nan]]))
    tols = rng.choice([0.0, 1e-12, 1e-3, 10.0, np.inf, np.nan], size=xs.size)
    bound = 2 * c.bound
    for r in c.rs:
        seen = np.zeros((c.E >> lk.BLOCK_SHIFT) + 1, np.uint8)
        both(lk.rank_raw, xs, tols, r, bound, *c.args(), np.zeros(xs.size, np.int64), np.zeros(xs.size, np.int8),
             seen)
        if c.E:
            q = np.sort(rng.integers(0, c.A.shape[0] * c.S, 80)).astype(np.int64)
            qkeys = sk.exact_keys(q, c.KA, c.KB, c.state, c.S) if not c.exact else np.zeros((q.size, 1), np.uint64)
            KA = c.KA if not c.exact else np.zeros((1, 1), np.uint64)        # as EntryScale.rank_ids passes them
            KB = c.KB if not c.exact else np.zeros((1, 1, 1), np.uint64)
            both(lk.rank_ids, q, r, c.exact, bound, *c.args(), qkeys, KA, KB, c.levels, c.n,
                 np.zeros(q.size, np.int64), np.zeros(q.size, np.int8), seen)
    both(lk.check_index, c.block_raw, c.block_cum, c.E, bound, bool(c.strata.size))
    both(lk.scan_entries, c.ids, c.implicit, c.E, c.strata, c.counts, c.A, c.state, c.B, c.S, c.exact, bound, nr)
    if c.implicit:                        # no block sums: entry i is run i
        return
    sums = np.zeros((c.E + lk.BLOCK - 1) // lk.BLOCK, np.uint64)
    for d, arr in enumerate((c.ids, c.counts, c.strata)):
        if arr.size:
            both(lk.add_block_sums, sums, np.ascontiguousarray(arr), 0, d)       # compared on copies of sums
            lk.add_block_sums(sums, np.ascontiguousarray(arr), 0, d)
            both(lk.add_block_sums, sums, np.ascontiguousarray(arr[7:]), 7, d)   # an offset, sums far from 0
    blocks = np.arange(sums.size, dtype=np.int64)
    both(lk.check_blocks, blocks, c.ids, c.counts, c.strata, c.E, sums, np.zeros(sums.size, np.uint8))


@pytest.mark.parametrize("damage", ["id outside", "stratum beyond N", "zero count", "out of order", "nan index",
                                    "index counts", "block sum"])
def test_corrupt_tables_are_met_alike(damage):
    c = test_kernels_lookup.case("AP@12")
    ids, strata, counts = c.ids.astype(np.int64), c.strata.copy(), c.counts.astype(np.int64)
    block_raw, block_cum = c.block_raw.copy(), c.block_cum.copy()
    j = c.E // 2
    if damage == "id outside":
        ids[j] = c.A.shape[0] * c.S + 5
    elif damage == "stratum beyond N":
        strata[j] = lk.FIRST | (c.n + 3)
    elif damage == "zero count":
        counts[j] = 0
    elif damage == "out of order":
        ids[j], ids[j + 40] = ids[j + 40], ids[j]
    elif damage == "nan index":
        block_raw[3] = np.nan
    elif damage == "index counts":
        block_cum[2, 1] += 5000
    bound = 2 * c.bound
    args = (ids, False, c.E, strata, c.A, c.state, c.B, c.S, block_raw, block_cum)
    both(lk.check_index, block_raw, block_cum, c.E, bound, True)
    both(lk.scan_entries, ids, False, c.E, strata, counts, c.A, c.state, c.B, c.S, True, bound, c.nr)
    both(lk.build_index, ids, False, c.E, strata, c.A, c.state, c.B, c.S, c.nr)
    xs = np.sort(np.array(c.model.raw, np.float64)[::37])
    both(lk.rank_raw, xs, np.full(xs.size, 1e-3), 3, bound, *args, np.zeros(xs.size, np.int64),
         np.zeros(xs.size, np.int8), np.zeros(8, np.uint8))
    q = np.arange(0, c.A.shape[0] * c.S, 29, dtype=np.int64)
    both(lk.rank_ids, q, 5, True, bound, *args, np.zeros((q.size, 1), np.uint64), np.zeros((1, 1), np.uint64),
         np.zeros((1, 1, 1), np.uint64), c.levels, c.n,
         np.zeros(q.size, np.int64), np.zeros(q.size, np.int8), np.zeros(8, np.uint8))
    sums = np.zeros((c.E + lk.BLOCK - 1) // lk.BLOCK, np.uint64)
    lk.add_block_sums(sums, ids.astype(np.uint32), 0, 0)
    if damage == "block sum":
        sums[1] += np.uint64(1)
    both(lk.check_blocks, np.arange(sums.size, dtype=np.int64), ids.astype(np.uint32), np.zeros(0, np.uint8),
         np.zeros(0, np.uint8), c.E, sums, np.zeros(sums.size, np.uint8))


# -- whole tables ------------------------------------------------------------------------------------
TABLES = {"AP@10": [None], "R@9": [None], "RR@9": [None], "P@8": [None], "F1@8": [None], "RBP(p=0.5)@9": [None],
          "nDCG(b=2)@9": [None], "DCG(b=2)@9": [None], "RBP(p=0.8)@9": [None], "DCG(b=2,gains=(0,1,2))@6": [None],
          "ERR(gains=(0,1,2))@5": [None], "nDCG(b=2,gains=(0,1,2))@5": [(2, 1), (1, 3)], "Twist@7": [(3,)]}


def _built(interpret, monkeypatch):
    monkeypatch.setattr(ip.Tiered, "interpret", interpret)
    return {str(t.measure) + str(t.table_rb): t for t in irscale.build_tables(list(TABLES), TABLES, layout="table")}


def _lookups(t, rng):
    """Values, counts, ranks of values (present, between, outside) and of runs by id, for
    several recall bases of a table serving them all (RB > N included)."""
    m = t.measure
    if t.table_rb is not None:
        rbs = [t.table_rb]
    else:
        rbs = [1, 3, m.n, m.n + 4] if m.rb_dependent else [None]
    out = []
    for rb in rbs:
        s = t.scale(rb)
        v = s.values
        x = np.concatenate([v, v[:-1] + np.diff(v) / 2, [v[0] - 1, v[-1] + 1]])
        out += [v, s.counts, s.rank(x, errors="zero")]
        ranks = []
        for i in rng.integers(0, m.id_count(), 150):
            try:
                ranks.append(int(s.rank_ids([int(i)])[0]))
            except irscale.RunError:           # a run the recall base cannot have
                ranks.append(-1)
        out.append(np.array(ranks))
    return out


def test_tables_built_and_looked_up_interpreted_equal_compiled(monkeypatch):
    a = _built(True, monkeypatch)
    b = _built(False, monkeypatch)
    assert a.keys() == b.keys() and len(a) == sum(len(v) for v in TABLES.values())
    for key, t in b.items():
        u = a[key]
        assert u.n_entries == t.n_entries and u.n_runs == t.n_runs and u.certificate == t.certificate, key
        for f in ("ids", "counts", "strata"):
            x, y = getattr(t, f, None), getattr(u, f, None)
            assert (x is None) == (y is None), (key, f)
            if x is not None:
                same(np.asarray(x), np.asarray(y))
        monkeypatch.setattr(ip.Tiered, "interpret", False)
        want = _lookups(t, np.random.default_rng(1))
        monkeypatch.setattr(ip.Tiered, "interpret", True)
        got = _lookups(t, np.random.default_rng(1))
        for x, y in zip(want, got):
            same(np.asarray(x), np.asarray(y))


def test_store_written_and_read_interpreted_equals_compiled(tmp_path, monkeypatch):
    measures = "AP@9,P@6,RR@7,nDCG(b=2)@7"
    monkeypatch.setattr(ip.Tiered, "interpret", True)
    s1 = irscale.build_store(tmp_path / "i.h5", measures, layout="table", n_jobs=1)
    monkeypatch.setattr(ip.Tiered, "interpret", False)
    s2 = irscale.build_store(tmp_path / "c.h5", measures, layout="table", n_jobs=1)
    tables1, tables2 = s1.tables(), s2.tables()
    assert [t["name"] for t in tables1] == [t["name"] for t in tables2]
    for t1, t2 in zip(tables1, tables2):
        with s1.raw(t1) as (_, f), s2.raw(t2) as (_, g):
            assert sorted(f) == sorted(g)
            for ds in g:
                same(np.asarray(f[ds]), np.asarray(g[ds]))
    for interpret, store in itertools.product((True, False), (s1, s2)):
        monkeypatch.setattr(ip.Tiered, "interpret", interpret)
        reopened = irscale.open_store(store.path if hasattr(store, "path") else tmp_path / "i.h5")
        sc = reopened.scale("AP@9", rb=4)
        assert sc.rank_runs([[1, 0, 1, 0, 0, 0, 0, 0, 0]]).tolist() == \
            irscale.scale("AP@9", rb=4).rank_runs([[1, 0, 1, 0, 0, 0, 0, 0, 0]]).tolist()


@pytest.mark.parametrize("name,rb", [("nDCG(b=2)@9", 4), ("RBP(p=0.8)@9", None), ("DCG(b=2)@9", None),
                                     ("nDCG(b=10)@9", 12)])
def test_oracles_interpreted_equal_compiled(name, rb, monkeypatch):
    from irscale.scales.tables.build import build_tables
    got = {}
    for interpret in (False, True):
        monkeypatch.setattr(ip.Tiered, "interpret", interpret)
        [t] = build_tables([name], layout="oracle")
        s = t.scale(rb)
        v = s.values
        x = np.concatenate([v, v[:-1] + np.diff(v) / 3, [v[0] - 1, v[-1] + 1]])
        runs = np.random.default_rng(2).integers(0, 2, size=(300, 9))
        if rb is not None:
            runs = runs[runs.sum(axis=1) <= rb]            # the runs a topic with this recall base can have
        got[interpret] = [v, s.counts, s.rank(x, errors="zero"), s.rank(x, atol=0.05, errors="zero"),
                          s.rank_runs(runs), s.midrank(v)]
    for a, b in zip(got[False], got[True]):
        same(np.asarray(a), np.asarray(b))


# -- the policy --------------------------------------------------------------------------------------
def _fresh_kernel():
    @nb.njit(cache=False)
    def total(a):
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i]
        return s
    return total


def test_small_calls_run_interpreted_and_big_ones_compiled(monkeypatch):
    k = _fresh_kernel()
    t = ip.Tiered(k)
    assert t(np.arange(10.0)) == 45.0 and not k.overloads                   # interpreted: nothing compiled
    big = np.ones(ip.SMALL_ITEMS + 1)
    assert t(big) == ip.SMALL_ITEMS + 1 and k.overloads                    # compiled
    assert t.interpreted_now((np.arange(3.0),)) is False                   # compiled once: compiled from then on


def test_a_kernel_goes_compiled_once_its_budget_is_spent(monkeypatch):
    monkeypatch.setattr(ip, "BUDGET_SECONDS", 0.0)
    k = _fresh_kernel()
    t = ip.Tiered(k)
    t(np.arange(3.0))
    assert not t.interpreted_now((np.arange(3.0),))
    t(np.arange(3.0))
    assert k.overloads


def test_interpreted_results_are_boxed_like_numba():
    r = interpreted(sk.smallest_gap)(np.array([0, 1, 2], np.int64), np.array([0.0, 0.5, 2.0]), np.zeros(3, np.int64),
                                     np.zeros((1, 1)), 1)
    assert type(r[0]) is float and type(r[1]) is int


def test_first_contact_compiles_nothing(tmp_path):
    """A fresh process with an empty numba cache builds and looks up a small table without
    compiling a kernel (what made the first scaled value of a fresh install take 8-16 s)."""
    code = textwrap.dedent("""
        import gc, json
        import irscale
        ranks = irscale.scale("AP@10", rb=5).rank([0.5, 0.25]).tolist()
        runs = irscale.scale("P@5").rank_runs([[1, 0, 1, 0, 0]]).tolist()
        from numba.core.registry import CPUDispatcher
        compiled = [d.py_func.__qualname__ for d in gc.get_objects() if isinstance(d, CPUDispatcher) and d.overloads]
        print(json.dumps({"ranks": ranks, "runs": runs, "compiled": compiled}))
    """)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=tmp_path,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["compiled"] == []
    assert got["ranks"] == irscale.scale("AP@10", rb=5).rank([0.5, 0.25]).tolist()
    assert got["runs"] == [3]


def test_every_numba_kernel_is_cached_on_disk():
    found = 0
    for path in ROOT.glob("**/*.py"):
        if ".venv" in path.parts or "tests" in path.parts:
            continue
        for line in path.read_text().splitlines():
            if re.match(r"\s*@(nb\.|numba\.)?n?jit\b", line):
                found += 1
                assert "cache=True" in line, f"{path.relative_to(ROOT)}: {line.strip()} (compile on every process)"
    assert found >= 40
