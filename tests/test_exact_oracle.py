"""Every measure, every N <= 12, every recall base: same distinct values, same counts and
the same unq rank for every run as the exact brute-force oracle of tests/naive.py."""
from collections import Counter

import mpmath
import naive
import numpy as np
import pytest

from irscale import parse_measure
from irscale.scales.tables.build import build_tables

NS = range(1, 13)


def _reference(measure_name, n, rb):
    """The brute-force oracle of tests/naive.py, with its values as floats: computed once,
    checked against the tables of both methods."""
    runs, vals, distinct, ranks = naive.oracle(naive.REFERENCES[measure_name], n, rb)
    exact = np.array([float(mpmath.mpf(d)) if not hasattr(d, "denominator") else float(d) for d in distinct])
    floats = np.array([float(v) if hasattr(v, "denominator") else float(mpmath.mpf(v)) for v in vals])
    return runs, distinct, ranks, exact, floats


def _check(reference, table, rb):
    runs, distinct, ranks, exact, floats = reference
    scale = table.scale(rb)
    m = table.measure
    assert len(scale) == len(distinct), f"{m} rb={rb}: {len(scale)} distinct values, oracle {len(distinct)}"
    got = scale.rank_runs(np.array(runs, dtype=np.uint8))
    assert got.tolist() == ranks, f"{m} rb={rb}: ranks differ from the oracle"
    # multiplicities
    cnt = Counter(ranks)
    assert scale.counts.tolist() == [cnt[i] for i in range(1, len(distinct) + 1)]
    assert scale.n_runs == len(runs)
    # float values are the exact values within the certified bound
    bound = scale.certificate.error_bound
    assert np.all(np.abs(scale.values - exact) <= bound + 1e-300), f"{m} rb={rb}: values off"
    assert np.all(np.diff(scale.values) >= 0)
    # value lookups agree with run lookups
    assert scale.rank(floats).tolist() == ranks


HEAVY = {"nDCG_trec", "nDCG(b=2)", "nDCG(b=10)"}     # 5-7 s each: run with --runslow


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n
                                  for n in sorted(naive.REFERENCES)])
def test_against_exact_oracle(name):
    for n in NS:
        m = parse_measure(f"{name}@{n}")
        rbs = list(range(1, n + 1)) + [n + 1, n + 7] if m.rb_dependent else [None]
        tables = []
        for method in ("generic", "split"):
            [table] = list(build_tables([m], method=method))
            tables.append(table)
        for rb in rbs:
            reference = _reference(name, n, rb)
            for table in tables:
                _check(reference, table, rb)


def test_float_unique_is_wrong_but_tables_are_exact():
    """SPEC section 4: float64 unique finds 56 AP values at N = 6 where there are 54."""
    runs = naive.all_runs(6)
    floats = {sum((sum(r[:k]) / k) for k in range(1, 7) if r[k - 1]) / 6 for r in runs}
    exact = {naive.AP(r, 6) for r in runs}
    assert len(exact) == 54
    from irscale import scale
    assert len(scale("AP@6", rb=6)) == 54
    assert len(floats) != 54  # the naive way really is wrong: this test can fail
