"""The sides' entries of the graded meet-in-the-middle oracle (irscale.scales.tables.graded_mitm_sides)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from irscale.scales.tables import graded_mitm_sides as gms


def test_pareto_keeps_the_minimal_vectors():
    vecs = {(0, 2), (1, 1), (1, 2), (2, 0), (2, 2), (0, 3)}
    want = tuple(sorted(v for v in vecs if not any(u != v and all(a <= b for a, b in zip(u, v)) for u in vecs)))
    assert gms.pareto(vecs) == want == ((0, 2), (1, 1), (2, 0))


@pytest.mark.parametrize("direct", [True, False])
def test_find_returns_the_position_of_every_code_and_minus_one_for_others(monkeypatch, direct):
    if not direct:                                          # no table of codes: the codes sorted
        monkeypatch.setattr(gms, "DIRECT_CODES", 0)
        monkeypatch.setattr(gms, "DIRECT_PER_ENTRY", 0)
    rng = np.random.default_rng(1)
    radices = [3, 5, 4]
    space = int(np.prod(radices))
    code = np.sort(rng.choice(space, 17, replace=False)).astype(np.int64)
    order = rng.permutation(code.shape[0])                  # entries in value order, codes in any
    s = np.sort(rng.random(code.shape[0]))
    side = gms.Side([0, 1, 2], radices, s, code[order], np.zeros(code.shape[0], np.int64))
    assert (side._at is not None) == direct
    where = {int(c): i for i, c in enumerate(code[order])}
    queries = np.arange(-2, space + 2, dtype=np.int64)
    assert side.find(queries).tolist() == [where.get(int(q), -1) for q in queries]
    digits = side.digits(np.arange(len(side)))
    for i, c in enumerate(code[order].tolist()):
        assert tuple(digits[i]) == next(d for d in itertools.product(*map(range, radices))
                                        if (d[0] * 5 + d[1]) * 4 + d[2] == c)
