"""Disagreements between two measures (irscale.scales.analysis.disagreements) against
brute force over all pairs of runs: discordant, concordant and tied pairs, comparable
discordant pairs by proof and by enumeration, the inversion count with ties."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from order_reference import LateBias, leq, naive_ranks, runs_of

from irscale.scales.analysis import axioms as A
from irscale.scales.analysis import disagreements as D
from irscale.scales.analysis.run_order import AxiomLimitError, parse_run_string


# -- 3. disagreements ------------------------------------------------------------------------------------
def brute_pairs(r1, r2, runs):
    disc = conc = t1 = t2 = t12 = comp = 0
    for i, j in itertools.combinations(range(len(r1)), 2):
        d1, d2 = np.sign(r1[i] - r1[j]), np.sign(r2[i] - r2[j])
        if d1 == 0 and d2 == 0:
            t12 += 1
        elif d1 == 0:
            t1 += 1
        elif d2 == 0:
            t2 += 1
        elif d1 == d2:
            conc += 1
        else:
            disc += 1
            if runs is not None and (leq(runs[i], runs[j]) or leq(runs[j], runs[i])):
                comp += 1
    return disc, conc, t1, t2, t12, comp


@pytest.mark.parametrize("f1,f2", [("AP", "RR"), ("P", "RBP(p=0.8)"), ("DCG(b=2)", "nDCG_trec"),
                                   ("AP", "nDCG(b=2)"), ("RBP(p=0.5)", "RR"), ("R", "F1")])
def test_disagreements_match_bruteforce(f1, f2):
    n = 6
    runs, _, _, ra = naive_ranks(f1, n)
    _, _, _, rb = naive_ranks(f2, n)
    disc, conc, t1, t2, t12, comp = brute_pairs(ra, rb, runs)
    rep = D.disagreements(f1, f2, n)
    assert (rep.discordant, rep.concordant, rep.tied_first, rep.tied_second, rep.tied_both) == (disc, conc, t1, t2, t12)
    assert comp == 0 and rep.comparable_discordant == 0 and rep.comparable_method == "proof+enumeration"
    assert rep.n_pairs == 2 ** n * (2 ** n - 1) // 2 and rep.consistent
    for e in rep.examples:
        assert e["first_ranks"][0] < e["first_ranks"][1] and e["second_ranks"][0] > e["second_ranks"][1]
        assert not e["comparable"]
        i, j = int(e["a"], 2), int(e["b"], 2)
        assert ra[i] < ra[j] and rb[i] > rb[j]
    assert len(rep.examples) == min(10, disc)
    json.dumps(rep.to_dict())


def test_disagreements_with_a_violating_measure():
    n = 6
    runs = runs_of(2, n)
    r1 = list(A.space_ranks(LateBias(n)))
    _, _, _, r2 = naive_ranks("P", n)
    disc, conc, t1, t2, t12, comp = brute_pairs(r1, r2, runs)
    assert comp > 0
    rep = D.disagreements(LateBias(n), f"P@{n}")
    assert (rep.discordant, rep.comparable_discordant) == (disc, comp)
    assert rep.comparable_method == "enumeration" and not rep.axiom_first and not rep.consistent
    for e in rep.comparable_examples:
        assert leq(tuple(parse_run_string(e["lower"])), tuple(parse_run_string(e["upper"])))
    # too large to enumerate: undecided rather than claimed
    rep = D.disagreements(LateBias(n), f"P@{n}", pair_limit=16)
    assert rep.comparable_discordant is None and rep.comparable_method == "undecided"
    with pytest.raises(AxiomLimitError):
        D.disagreements(LateBias(n), f"P@{n}", pair_limit=16, enumerate_pairs=True)
    with pytest.raises(AxiomLimitError):
        D.disagreements("P@6", "P@7")


def test_discordant_pairs_with_ties_random():
    rng = np.random.default_rng(7)
    for size, k in ((50, 3), (200, 10), (300, 300)):
        r1 = rng.integers(1, k + 1, size)
        r2 = rng.integers(1, k + 1, size)
        disc = brute_pairs(list(r1), list(r2), None)[0]
        got, ex = D.discordant_pairs(r1, r2)
        assert got == disc
        for a, b in ex:
            assert r1[a] < r1[b] and r2[a] > r2[b]


def test_disagreements_large_by_proof():
    rep = D.disagreements("AP@16", "DCG(b=2)@16")
    assert rep.comparable_method == "proof" and rep.comparable_discordant == 0
    assert rep.discordant + rep.concordant + rep.tied_first + rep.tied_second + rep.tied_both == rep.n_pairs

