"""Scale lookups: value -> rank, run -> rank, their errors, mid-ranks, exactness at
larger N (random runs against exact fractions)."""
from fractions import Fraction

import naive
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irscale
from irscale import RunError, ValueNotInScaleError


def test_rank_rejects_non_values():
    s = irscale.scale("P@10")
    with pytest.raises(ValueNotInScaleError, match="0.55 is not a value of P@10"):
        s.rank([0.5, 0.55])
    with pytest.raises(ValueNotInScaleError, match="nan"):
        s.rank([float("nan")])
    with pytest.raises(ValueNotInScaleError):
        s.rank([1.5])
    assert s.rank([0.3 + 1e-15]).tolist() == [4]  # within tolerance (64 ulps)
    with pytest.raises(ValueNotInScaleError):
        s.rank([0.3 + 1e-12])
    assert s.rank([0.3 + 1e-12], rtol=1e-9).tolist() == [4]
    assert s.rank(np.array([[0.0, 1.0]])).tolist() == [[1, 11]]


def test_rank_ambiguous_values_are_refused():
    s = irscale.scale("P@10")
    with pytest.raises(ValueNotInScaleError, match="ambiguous"):
        s.rank([0.15], atol=0.06)


def test_rank_runs_errors():
    s = irscale.scale("AP@6", rb=2)
    with pytest.raises(RunError, match="length N = 6"):
        s.rank_runs([[1, 0, 0]])
    with pytest.raises(RunError, match="outside REL"):
        s.rank_runs([[2, 0, 0, 0, 0, 0]])
    with pytest.raises(RunError, match="more than the recall base"):
        s.rank_runs([[1, 1, 1, 0, 0, 0]])
    with pytest.raises(RunError, match="integers"):
        s.rank_runs([[0.5, 0, 0, 0, 0, 0]])
    assert s.rank_runs([1, 1, 0, 0, 0, 0]).tolist() == [len(s)]


def test_midranks():
    s = irscale.scale("P@4")
    # counts 1,4,6,4,1 -> positions 1 | 2-5 | 6-11 | 12-15 | 16
    assert s.midranks.tolist() == [1.0, 3.5, 8.5, 13.5, 16.0]
    assert s.midrank([0.5]).tolist() == [8.5]
    assert s.scaled([1, 3, 5]).tolist() == [0.0, 0.5, 1.0]


def _ids_to_runs(ids, n):
    return np.array([[(i >> (n - 1 - k)) & 1 for k in range(n)] for i in ids], dtype=np.uint8)


@pytest.mark.parametrize("name,n,rb", [("RBP(p=0.7)", 20, None), ("AP", 20, 7), ("F1", 20, 3),
                                        ("RR", 20, None), ("RBP(p=0.3)", 21, None)])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_random_pairs_at_larger_n_match_exact_order(name, n, rb, data):
    """Order of unq ranks = order of exact values for random runs (multi-word keys too)."""
    s = irscale.scale(f"{name}@{n}", rb=rb)
    fn = naive.REFERENCES[name]
    ids = data.draw(st.lists(st.integers(0, 2 ** n - 1), min_size=2, max_size=6))
    runs = _ids_to_runs(ids, n)
    if rb is not None:
        runs = runs[runs.sum(axis=1) <= rb]
    ranks = s.rank_runs(runs) if len(runs) else []
    vals = [fn(tuple(int(x) for x in r), rb) for r in runs]
    for i in range(len(vals)):
        for j in range(len(vals)):
            assert (vals[i] < vals[j]) == (ranks[i] < ranks[j])
            assert (vals[i] == vals[j]) == (ranks[i] == ranks[j])
        assert abs(s.values[ranks[i] - 1] - float(vals[i])) <= s.certificate.error_bound


def test_multiword_keys_are_used_and_exact():
    m = irscale.parse_measure("RBP(p=0.3)@21")
    assert m.key_spec().words == 2
    s = irscale.scale(m)
    assert len(s) == 2 ** 21  # p < 1/2: lexicographic, every run distinct
    ids = np.array([0, 1, 2 ** 20, 2 ** 21 - 1, 123456])
    assert s.rank_runs(_ids_to_runs(ids, 21)).tolist() == (ids + 1).tolist()
    v = Fraction(7, 10) * sum(Fraction(3, 10) ** k for k in range(21))
    assert s.values[-1] == pytest.approx(float(v), rel=1e-15)


def test_run_ids_for_graded_spaces():
    from irscale.enumerate.runspace import all_runs, ids_of_runs, runs_of_ids
    for levels, n in ((3, 5), (4, 4), (2, 7)):
        runs = all_runs(levels, n)
        assert len(runs) == levels ** n
        # id order = lexicographic order, r_1 most significant
        assert [tuple(r) for r in runs] == sorted(tuple(r) for r in runs)
        assert np.array_equal(ids_of_runs(runs, levels), np.arange(levels ** n))
        assert np.array_equal(runs_of_ids([5, 17], levels, n), runs[[5, 17]])
