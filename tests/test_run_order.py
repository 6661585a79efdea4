"""The runs of REL^N and their dominance order (irscale.scales.analysis.run_order) against
independent brute force (tests/order_reference.py): relevance strings and ids, the order
by prefix counting, and the closure of the generating moves."""
from __future__ import annotations

import numpy as np
import pytest
from order_reference import leq, moves_of, runs_of

from irscale.enumerate.runspace import runs_of_ids
from irscale.scales.analysis.run_order import (
    comparable,
    decode_ids,
    dominates,
    generating_moves,
    move_pairs,
    parse_run_string,
    run_string,
)


# -- strings, ids --------------------------------------------------------------------------------
def test_strings_and_ids():
    assert run_string([1, 0, 1, 0]) == "1010"
    assert run_string([0, 12, 3]) == "0,12,3"
    for s in ("1010", "0,12,3", "2101"):
        assert run_string(parse_run_string(s)) == s
    for levels, n in ((2, 7), (3, 4), (4, 3)):
        ids = np.arange(levels ** n)
        assert np.array_equal(decode_ids(ids, levels, n), runs_of_ids(ids, levels, n))
        assert [tuple(r) for r in decode_ids(ids, levels, n)] == runs_of(levels, n)


# -- 1. the order and its generating moves ------------------------------------------------------------
@pytest.mark.parametrize("levels,n", [(2, 4), (2, 5), (3, 3), (4, 2)])
def test_dominates_matches_definition(levels, n):
    runs = runs_of(levels, n)
    arr = np.array(runs, dtype=np.uint8)
    got = dominates(arr[:, None, :], arr[None, :, :])          # got[i, j]: runs[j] <= runs[i]
    ref = np.array([[leq(s, r) for s in runs] for r in runs])
    assert np.array_equal(got, ref)
    assert np.array_equal(comparable(arr[:, None, :], arr[None, :, :]), ref | ref.T)
    assert bool(dominates([1, 0, 0], [0, 0, 1])) and not bool(dominates([0, 0, 1], [1, 0, 0]))


@pytest.mark.parametrize("levels,n", [(2, 1), (2, 2), (2, 3), (2, 4), (2, 5), (3, 1), (3, 2), (3, 3), (3, 4),
                                     (4, 2), (4, 3)])
def test_closure_of_moves_is_the_order(levels, n):
    runs = runs_of(levels, n)
    index = {r: i for i, r in enumerate(runs)}
    R = len(runs)
    # moves by id arithmetic equal moves by list surgery
    got = set()
    for _mv, before, after in move_pairs(levels, n):
        for b, a in zip(before, after):
            got.add((int(b), int(a)))
    ref = {(index[r], index[s]) for r in runs for s in moves_of(r, levels)}
    assert got == ref
    # reflexive-transitive closure (Warshall) equals the order, and equals dominates
    M, _ = closure(runs, levels)
    order = np.array([[leq(r, s) for s in runs] for r in runs])  # order[i, j]: runs[i] <= runs[j]
    assert np.array_equal(M, order)
    arr = np.array(runs, dtype=np.uint8)
    assert np.array_equal(dominates(arr[None, :, :], arr[:, None, :]), order)
    # every move goes strictly up
    assert all(order[b, a] and not order[a, b] for b, a in got)
    if levels == 2:  # binary moves are exactly the covers
        strict = order & ~np.eye(R, dtype=bool)
        covers = {(i, j) for i in range(R) for j in range(R) if strict[i, j]
                  and not any(strict[i, k] and strict[k, j] for k in range(R))}
        assert covers == got


def closure(runs, levels, **kw):
    index = {r: i for i, r in enumerate(runs)}
    M = np.eye(len(runs), dtype=bool)
    for r in runs:
        for s in moves_of(r, levels, **kw):
            M[index[r], index[s]] = True
    for k in range(len(runs)):
        M |= M[:, k:k + 1] & M[k:k + 1, :]
    return M, index


def test_graded_moves_need_long_swaps_and_raises_anywhere():
    # "021" < "120" (a grade-1 document jumps over a grade-2 one), but adjacent swaps and
    # raises cannot get there; "10" < "20" needs a raise at rank 1
    runs = runs_of(3, 3)
    M, index = closure(runs, 3, adjacent_only=True)
    assert leq((0, 2, 1), (1, 2, 0)) and not M[index[(0, 2, 1)], index[(1, 2, 0)]]
    M, index = closure(runs, 3)
    assert M[index[(0, 2, 1)], index[(1, 2, 0)]]
    assert leq((1, 0), (2, 0))
    labels = [m.label for m in generating_moves(3, 3)]
    assert labels == ["swap 1,2", "swap 1,3", "swap 2,3", "raise 1", "raise 2", "raise 3"]
    assert [m.label for m in generating_moves(2, 3)] == ["swap 1,2", "swap 2,3", "raise 3"]

