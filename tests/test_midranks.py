"""Mid-ranks read from tables (run-count index) against brute force over all runs."""
import naive
import numpy as np
import pytest

import irscale


@pytest.mark.parametrize("name,rbs", [("AP", [1, 3, 8, 11]), ("DCG(b=2)", [None]), ("RBP(p=0.8)", [None]),
                                      ("RBP(p=0.3)", [None]), ("nDCG(b=2)", [2, 8]), ("P", [None]),
                                      ("R", [4]), ("RR", [None])])
def test_midranks_of_ranks_match_brute_force(name, rbs):
    n = 8
    for rb in rbs:
        s = irscale.scale(f"{name}@{n}", rb=rb)
        runs, vals, distinct, ranks = naive.oracle(naive.REFERENCES[name], n, rb)
        expected = {}
        for q in range(1, len(distinct) + 1):
            below = sum(1 for r in ranks if r < q)
            here = sum(1 for r in ranks if r == q)
            expected[q] = below + (here + 1) / 2
        q = np.arange(1, s.k + 1)
        assert s.k == len(distinct)
        got = s.midranks_of_ranks(q[::-1])[::-1]       # any order
        assert got.tolist() == [expected[int(x)] for x in q]
        assert np.array_equal(got, s.midranks)
    with pytest.raises(ValueError):
        s.midranks_of_ranks([0])
