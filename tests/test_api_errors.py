"""Bad input to the Python API raises irscale's own errors, naming the first bad item, on
every table layout (entries, implicit, fraction, formal, oracle), fixed and truncated run spaces,
binary and graded measures.

Values: ValueNotInScaleError (not a number; below the smallest or above the largest
distinct value by more than the tolerance). Run ids and runs: RunError. Ranks:
ValueNotInScaleError (rank 0, which ``rank(errors="zero")`` gives a rejected value, scales
to NaN). Every scale here is built in memory (at most a few hundred runs)."""
from fractions import Fraction

import numpy as np
import pytest

import irscale
from irscale import RunError, ValueNotInScaleError
from irscale.scales.tables.scale import FOUND, NOT_A_VALUE

#: (measure, rb, layout) covering every layout, both run spaces, binary and graded.
SCALES = [
    ("DCG(b=2)@4", None, "oracle"),
    ("nDCG(b=2)@4", 2, "oracle"),
    ("RBP(p=0.8)@4", None, "oracle"),
    ("AP@4", 2, "entries"),
    ("RR@4", None, "entries"),
    ("DCG(b=2,gains=(0,1,2))@3", None, "oracle"),
    ("ERR@3", None, "entries"),
    ("gR(gains=(0,1,2))@3", (1, 1), "entries"),
    ("RBP(p=0.5)@4", None, "implicit"),
    ("Rprec@4", 2, "fraction"),
    ("Twist@4", 2, "fraction"),
    ("RBPU(p=0.8)@3", None, "fraction"),
    ("FlatU@3", None, "fraction"),
    ("ERRU@3", None, "fraction"),
    ("DCGU@3", None, "formal"),
    ("OIE@3", 2, "formal"),
]
IDS = [f"{m}|rb={rb}" for m, rb, _ in SCALES]

_cache = {}


def _scale(measure, rb):
    if (measure, rb) not in _cache:
        _cache[measure, rb] = irscale.scale(measure, rb=rb)
    return _cache[measure, rb]


@pytest.fixture(params=SCALES, ids=IDS)
def scale(request):
    measure, rb, layout = request.param
    s = _scale(measure, rb)
    assert s.table.layout == layout
    return s


# -- values ----------------------------------------------------------------------------------
BAD_VALUES = [
    (["a"], "values[0]", "'a'"),
    ([0.0, "0.5"], "values[1]", "'0.5'"),          # strings are refused even when they hold a number
    ([1j], "values[0]", "1j"),
    ([0.0, None], "values[1]", "None"),
    ([True], "values[0]", "True"),
    ([[0.0, 1.0], [0.0, {}]], "values[1][1]", "{}"),
    (np.array([0.0, 2 + 0j]), "values[0]", "0j"),
    (np.array(["0.25"]), "values[0]", "'0.25'"),
    (np.array([False, True]), "values[0]", "False"),
    ("0.5", "values", "'0.5'"),
    (None, "values", "None"),
]


@pytest.mark.parametrize("values,where,shown", BAD_VALUES, ids=[repr(v[0])[:30] for v in BAD_VALUES])
def test_values_that_are_not_numbers(scale, values, where, shown):
    calls = [lambda: scale.rank(values), lambda: scale.rank(values, errors="zero"), lambda: scale.lookup(values),
             lambda: scale.midrank(values), lambda: scale.rank(values, decimals=4)]
    for call in calls:
        with pytest.raises(ValueNotInScaleError) as info:
            call()
        assert f"{where} is {shown}" in str(info.value) and "not a number" in str(info.value)


def test_ragged_values(scale):
    for ragged in ([[0.0], [1.0, 2.0]], [0.0, [1.0]]):
        with pytest.raises(ValueNotInScaleError, match="values"):
            scale.rank(ragged)
        with pytest.raises(ValueNotInScaleError, match="values"):
            scale.lookup(ragged)


def test_real_numbers_of_any_type_are_values(scale):
    top = float(scale.values[-1])
    k = scale.k
    assert scale.rank([top]).tolist() == [k]
    assert scale.rank([np.float64(top)]).tolist() == [k]
    assert scale.rank(np.array([top], dtype=object)).tolist() == [k]
    assert scale.rank((top,)).tolist() == [k]
    assert scale.rank(top).tolist() == k                           # a scalar keeps its shape
    assert scale.rank([[top], [top]]).tolist() == [[k], [k]]
    if float(top).is_integer():
        assert scale.rank([int(top)]).tolist() == [k]


def _outside(s):
    """Values beyond the smallest and largest distinct value by far more than the tolerance."""
    v = s.values[np.isfinite(s.values)]
    lo, hi = float(v[0]), float(v[-1])
    return [lo - 1e-6, lo - 0.5, -1e9, hi + 1e-6, hi + 0.5, 1e9]


def test_values_outside_the_range_are_not_values(scale):
    outside = _outside(scale)
    found = scale.lookup(outside)
    assert found.status.tolist() == [NOT_A_VALUE] * len(outside), found.messages
    assert found.ranks.tolist() == [0] * len(outside)
    assert np.isnan(found.matched).all()
    assert scale.rank(outside, errors="zero").tolist() == [0] * len(outside)
    for x in outside:
        with pytest.raises(ValueNotInScaleError, match="not a value of"):
            scale.rank([x])
        with pytest.raises(ValueNotInScaleError, match="not a value of"):
            scale.midrank([x])


def test_values_between_distinct_values_are_not_values(scale):
    v = scale.values[np.isfinite(scale.values)]
    mids = ((v[1:] + v[:-1]) / 2)[np.diff(v) > 1e-9]
    assert (scale.lookup(mids).status == NOT_A_VALUE).all()


def test_rr_below_zero_is_not_rank_one():
    """RR@4 takes exactly the values 0, 1/4, 1/3, 1/2, 1 (ranks 1..5); -0.5 and -1e9 used to
    answer rank 1."""
    s = _scale("RR@4", None)
    assert s.rank([0, 0.25, 1 / 3, 0.5, 1]).tolist() == [1, 2, 3, 4, 5]
    for x in (-0.5, -1e9, -1e-3, -1e-12):
        with pytest.raises(ValueNotInScaleError, match=r"not a value of RR@4 \(below its smallest value 0\.0\)"):
            s.rank([x])
    with pytest.raises(ValueNotInScaleError, match=r"not a value of RR@4 \(above its largest value 1\.0\)"):
        s.rank([1.5])
        assert s.lookup([x]).status.tolist() == [NOT_A_VALUE]
    assert s.rank([-0.0]).tolist() == [1]
    assert s.rank([-0.00004], decimals=4).tolist() == [1]          # within half a unit of 0.0000
    assert s.lookup([-0.0001], decimals=4).status.tolist() == [NOT_A_VALUE]
    assert s.rank([1.00004], decimals=4).tolist() == [5]
    assert s.lookup([1.0001], decimals=4).status.tolist() == [NOT_A_VALUE]


def test_lookup_still_finds_values(scale):
    v = scale.values
    finite = np.isfinite(v)
    found = scale.lookup(v[finite])
    assert (found.status == FOUND).all()
    assert found.ranks.tolist() == (np.flatnonzero(finite) + 1).tolist()


def test_bad_decimals():
    s = _scale("RR@4", None)
    with pytest.raises(ValueNotInScaleError, match="decimals"):
        s.rank([0.5], decimals="four")
    with pytest.raises(ValueNotInScaleError, match="decimals"):
        s.rank([0.5, 1.0], decimals=[4, 4, 4])


# -- run ids ----------------------------------------------------------------------------------
def test_rank_ids_refuses_what_is_not_a_run_id(scale):
    count = scale.measure.id_count()
    bad = [([1.5], "ids[0] is 1.5", "not an integer"), (["3"], "ids[0] is '3'", "not an integer"),
           ([0, True], "ids[1] is True", "not an integer"), ([float("nan")], "ids[0] is nan", "not an integer"),
           ([-1], "ids[0] is -1", "not a run id"), ([0, count], f"ids[1] is {count}", "not a run id"),
           ([2 ** 64], f"ids[0] is {2 ** 64}", "not a run id"), ([2 ** 63], f"ids[0] is {2 ** 63}", "not a run id"),
           (np.array([2 ** 63], dtype=np.uint64), f"ids[0] is {2 ** 63}", "not a run id"),
           (np.array([0.0, 1e30]), "ids[1] is 1e+30", "not a run id"),
           (np.array([0, 1.5]), "ids[1] is 1.5", "not an integer"),
           (np.array([True]), "ids[0] is True", "not an integer"),
           ([None], "ids[0] is None", "not an integer"), ([[0], [1, 2]], "ids", "")]
    for ids, where, why in bad:
        with pytest.raises(RunError) as info:
            scale.rank_ids(ids)
        assert where in str(info.value) and why in str(info.value), (ids, str(info.value))
    assert scale.rank_ids([1.0, 0.0]).tolist() == scale.rank_ids([1, 0]).tolist()
    assert scale.rank_ids(np.array([1, 0], dtype=np.uint64)).tolist() == scale.rank_ids([1, 0]).tolist()


def test_rank_ids_of_every_run_still_agree_with_rank_runs():
    s = _scale("DCG(b=2)@4", None)
    ids = np.arange(16)
    runs = [[(i >> (3 - k)) & 1 for k in range(4)] for i in ids]
    assert s.rank_ids(ids).tolist() == s.rank_runs(runs).tolist()


# -- ranks -------------------------------------------------------------------------------------
def test_scaled_and_midranks_of_bad_ranks(scale):
    k = scale.k
    bad = [([k + 1], f"ranks[0] is {k + 1}"), ([-1], "ranks[0] is -1"), ([1, 1.5], "ranks[1] is 1.5"),
           ([True], "ranks[0] is True"), (["2"], "ranks[0] is '2'"), ([None], "ranks[0] is None"),
           (np.array([np.nan]), "ranks[0] is nan"), ([2 ** 64], f"ranks[0] is {2 ** 64}")]
    for ranks, where in bad:
        for call in (scale.scaled, scale.midranks_of_ranks, scale.values_of_ranks):
            with pytest.raises(ValueNotInScaleError) as info:
                call(ranks)
            assert where in str(info.value), (call.__name__, ranks, str(info.value))
    for call in (scale.midranks_of_ranks, scale.values_of_ranks):       # no value has rank 0
        with pytest.raises(ValueNotInScaleError, match="ranks\\[0\\] is 0"):
            call([0])


def test_scaled_maps_ranks_and_rank_zero(scale):
    k = scale.k
    assert scale.scaled([1, k]).tolist() == ([0.0, 1.0] if k > 1 else [0.0, 0.0])
    assert scale.scaled([float(k)]).tolist() == scale.scaled([k]).tolist()
    assert scale.scaled(np.array([[1], [k]])).shape == (2, 1)
    got = scale.scaled([0, k])
    assert np.isnan(got[0]) and got[1] == (1.0 if k > 1 else 0.0)   # rank 0: a value rank(errors="zero") rejected


def test_scaled_of_rank_with_errors_zero():
    s = _scale("RR@4", None)
    ranks = s.rank([0.5, 0.4, -0.5, 1.0], errors="zero")
    assert ranks.tolist() == [4, 0, 0, 5]
    got = s.scaled(ranks)
    assert got[0] == 0.75 and got[3] == 1.0 and np.isnan(got[1]) and np.isnan(got[2])


# -- judged runs --------------------------------------------------------------------------------
TRUNC_NAMES = {"RBPU", "FlatU", "ERRU", "DCGU", "OIE"}


def _bad_runs(s):
    """(runs, needle) a user may send, each a RunError naming the bad run or item."""
    n, g = s.measure.n, s.measure.levels
    run = [0] * n
    out = [
        ([[True] + run[1:]], "runs[0][0]"),
        ([run, [0, 1.5] + run[2:]], "runs[1][1]"),
        ([run, [0, 1.0] + run[2:]], "runs[1][1]"),                     # floats in lists: not degrees
        ([["1"] + run[1:]], "runs[0][0]"),
        ([[None] + run[1:]], "runs[0][0]"),
        ([[[1]] + run[1:]], "runs[0][0]"),                              # one level too deep
        ([[[1]]], "runs[0]"),
        ([[-1] + run[1:]], "outside REL"),
        ([run, [g] + run[1:]], "outside REL"),
        ([[2 ** 64] + run[1:]], "outside REL"),
        ([run, 5], "runs[1]"),
        (np.array([[True] + [False] * (n - 1)]), "runs[0][0]"),
        (np.array([[0.5] + [0.0] * (n - 1)]), "runs[0][0]"),
        (np.array([[np.nan] + [0.0] * (n - 1)]), "runs[0][0]"),
        (np.array([["1"] + ["0"] * (n - 1)]), "runs[0][0]"),
        (np.array([[g] + [0] * (n - 1)], dtype=np.uint64), "outside REL"),
        (np.array([[2 ** 63] + [0] * (n - 1)], dtype=np.uint64), "outside REL"),
        (np.zeros((1, 1, n), np.int64), "shape"),
        (None, "runs"),
        ("0101", "runs"),
        (7, "runs"),
    ]
    if s.measure.name in TRUNC_NAMES:
        out += [([[1, -1]], "outside REL"), ([-1], "outside REL"), ([[0] * (n + 1)], "at most N"),
                (np.array([[-2] + [-1] * (n - 1)]), "outside REL"), (np.array([[-1, 1] + [-1] * (n - 2)]), "padding")]
    else:
        out += [([run[1:]], "length"), (np.zeros((1, n + 1), np.int64), "length")]
    return out


def test_rank_runs_refuses_bad_runs(scale):
    for runs, needle in _bad_runs(scale):
        with pytest.raises(RunError) as info:
            scale.rank_runs(runs)
        assert needle in str(info.value), (runs, str(info.value))


def test_rank_runs_accepts_integral_float_arrays(scale):
    n = scale.measure.n
    if scale.measure.name in TRUNC_NAMES:
        ints = np.array([[1] + [-1] * (n - 1), [0] * n])
    else:
        ints = np.array([[1] + [0] * (n - 1), [0] * n])
    want = scale.rank_runs(ints)
    assert scale.rank_runs(ints.astype(np.float64)).tolist() == want.tolist()
    assert scale.rank_runs(ints.astype(object)).tolist() == want.tolist()


def test_truncated_lists_and_padded_arrays_agree():
    s = _scale("RBPU(p=0.8)@3", None)
    lists = [[], [1], [0, 1], [1, 1, 1]]
    padded = np.array([[-1, -1, -1], [1, -1, -1], [0, 1, -1], [1, 1, 1]])
    assert s.rank_runs(lists).tolist() == s.rank_runs(padded).tolist()
    # exact reference, up to the factor (1 - p): RBPU = sum_k p^(k-1) (r_k - e), p = 0.8, e = 0.05
    p, e = Fraction(4, 5), Fraction(1, 20)

    def value(r):
        return sum(p ** k * (g - e) for k, g in enumerate(r))

    values = [value(r) for r in lists]
    ranks = s.rank_runs(lists).tolist()
    assert sorted(range(4), key=lambda i: values[i]) == sorted(range(4), key=lambda i: ranks[i])
