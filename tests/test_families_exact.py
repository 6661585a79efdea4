"""Every family of the registry against a plain-Python reference written from its definition
(tests/naive.py): the unq rank of every feasible run (or ranking) of a small run space, and K,
from the library's scale equal to those of brute force. A family without a reference here
fails :func:`test_every_family_has_a_reference`: a new family is not exact until it has one.

The per-family modules (test_exact_oracle, test_graded, test_twist_tables,
test_utility_tables, test_rprec, ...) check many more parameters, recall bases and sizes; this
module makes sure none is left out."""
from __future__ import annotations

import itertools
from fractions import Fraction

import naive
import numpy as np
import pytest

import irscale
from irscale.enumerate.truncated import PAD
from irscale.scales.measures.registry import families


def _rprec(run, rb):
    """R-precision: relevant documents in the top min(RB, N), divided by RB."""
    return Fraction(sum(run[:min(rb, len(run))]), rb)


#: family -> (measure, its reference f(run, rb), recall base); the run space (levels,
#: fixed or truncated) is the measure's own.
CASES = {
    "AP": ("AP@6", naive.REFERENCES["AP"], 3),
    "CRP": ("CRP(ind=rho,grades=2)@6", naive.crp_indicator("rho"), (1, 2)),
    "DCG": ("DCG(b=2,gains=(0,1,3))@5", naive.gDCG(2, (0, 1, 3)), None),
    "DCGU": ("DCGU@5", naive.dcgu(), None),
    "ERR": ("ERR(gains=(0,1,2))@5", naive.gERR((0, 1, 2)), None),
    "ERRU": ("ERRU(grades=2)@4", naive.utility("ERRU", grades=2), None),
    "F1": ("F1@6", naive.REFERENCES["F1"], 2),
    "FlatU": ("FlatU@5", naive.utility("FlatU"), None),
    "gP": ("gP(gains=(0,1,2))@5", naive.gP((0, 1, 2)), None),
    "gR": ("gR(gains=(0,1,2))@5", naive.gR((0, 1, 2)), (2, 1)),
    "nDCG": ("nDCG(b=2)@6", naive.REFERENCES["nDCG(b=2)"], 2),
    "nDCG_trec": ("nDCG_trec(gains=(0,1,2))@5", naive.gnDCG_trec((0, 1, 2)), (1, 2)),
    "OIE": ("OIE(grades=2)@4", naive.oie(), (1, 2)),
    "P": ("P@6", naive.REFERENCES["P"], None),
    "R": ("R@6", naive.REFERENCES["R"], 4),
    "RBP": ("RBP(p=0.8)@6", naive.REFERENCES["RBP(p=0.8)"], None),
    "RBPU": ("RBPU(p=0.8)@5", naive.utility("RBPU", "0.8"), None),
    "RBU": ("RBU(p=0.8)@5", naive.utility("RBU", "0.8"), None),
    "Rprec": ("Rprec@6", _rprec, 3),
    "RR": ("RR(gains=(0,1,2),rel=2)@5", naive.gRR(2), None),
    "Twist": ("Twist(grades=2)@6", naive.twist("impl"), (1, 2)),
}


def test_every_family_has_a_reference():
    assert set(families()) == set(CASES), "families without a reference (or references of no family)"


def _runs(m, rb):
    """The feasible runs (or rankings, for truncated run spaces) of ``m`` for ``rb``."""
    if m.run_space == "truncated":
        space = [r for length in range(m.n + 1) for r in itertools.product(range(m.levels), repeat=length)]
    else:
        space = list(itertools.product(range(m.levels), repeat=m.n))
    if rb is None:
        return space
    if isinstance(rb, tuple):
        return [r for r in space if all(r.count(g) <= c for g, c in enumerate(rb, start=1))]
    return [r for r in space if sum(1 for x in r if x > 0) <= rb]


@pytest.mark.parametrize("family", sorted(CASES))
def test_family_scale_equals_brute_force(family):
    name, reference, rb = CASES[family]
    m = irscale.parse_measure(name)
    assert m.name == family
    runs = _runs(m, rb)
    values = [reference(r, rb) for r in runs]
    distinct, ranks = naive.unq_ranks(values)
    scale = irscale.scale(m, rb=rb)
    assert scale.k == len(distinct) and scale.n_runs == len(runs)
    cells = np.array([list(r) + [PAD] * (m.n - len(r)) for r in runs], dtype=np.int64)
    assert scale.rank_runs(cells).tolist() == ranks
