"""Order-theoretic checks of one measure (irscale.scales.analysis.axioms) against
independent brute force (tests/order_reference.py): the axiom on every generating move,
the balancing index, equal spacing, the summary and the CLI.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from fractions import Fraction

import naive
import numpy as np
import pytest
from order_reference import LateBias, moves_of, naive_fn, naive_ranks, runs_of, value_cmp

from irscale.errors import IrscaleError
from irscale.scales.analysis import axioms as A
from irscale.scales.analysis.run_order import AxiomLimitError, decode_ids, parse_run_string
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey

ALL_BINARY = ["P", "R", "F1", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "RBP(p=0.95)",
              "DCG(b=2)", "DCG(b=10)", "nDCG(b=2)", "nDCG_trec"]


# graded test-only measures through the real Measure interface (not registered)
@dataclass(frozen=True, repr=False)
class GradedSum(KeyMeasure):
    """Ternary, monotone: sum of gains (0, 1, 2), rank-independent."""
    name = "GradedSum"
    levels = 3
    gains = (0, 1, 2)

    def key_spec(self):
        return AdditiveKey(weights=[list(self.gains) for _ in range(self.n)],
                         max_key=max(self.gains) * self.n, ordered=True, scale=lambda rb: Fraction(1))


@dataclass(frozen=True, repr=False)
class GradedBad(GradedSum):
    """Ternary, non-monotone: grade 2 gains less than grade 1."""
    name = "GradedBad"
    gains = (0, 2, 1)


@dataclass(frozen=True, repr=False)
class GradedHeavyTop(GradedSum):
    """Ternary: the top grade outweighs N grade-1 documents (balancing index 0)."""
    name = "GradedHeavyTop"
    gains = (0, 1, 100)


# -- 2. the axiom ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [8, 9, 10])
def test_standard_measures_satisfy_axiom(n):
    for fam in ALL_BINARY:
        rep = A.check_axiom(fam, n)
        assert rep.holds, (fam, n, rep.examples)
        assert rep.n_pairs == (n - 1) * 2 ** (n - 2) + 2 ** (n - 1)   # swaps 01 + zeros at rank N
        assert rep.n_violations == 0 and rep.n_ties + rep.n_increases == rep.n_pairs
        assert rep.rb == (n if fam in naive.RB_DEPENDENT else None)
    # ties: DCG(b=2) ignores exactly the swap of ranks 1 and 2; P ignores every swap
    dcg = A.check_axiom("DCG(b=2)", n)
    assert dcg.n_ties == 2 ** (n - 2)
    assert [m["move"] for m in dcg.by_move if m["ties"]] == ["swap 1,2"]
    p = A.check_axiom(f"P@{n}")
    assert p.n_ties == (n - 1) * 2 ** (n - 2) and p.n_increases == 2 ** (n - 1)
    assert A.check_axiom(f"DCG(b=10)@{n}").n_ties == (min(n, 10) - 1) * 2 ** (n - 2)


@pytest.mark.parametrize("fam", ALL_BINARY)
def test_axiom_counts_match_bruteforce(fam):
    n = 6
    runs, vals, distinct, ranks = naive_ranks(fam, n)
    index = {r: i for i, r in enumerate(runs)}
    pairs = viol = ties = 0
    for r in runs:
        for s in moves_of(r, 2):
            pairs += 1
            c = value_cmp(vals[index[s]], vals[index[r]])
            viol += c < 0
            ties += c == 0
    rep = A.check_axiom(f"{fam}@{n}")
    assert (rep.n_pairs, rep.n_violations, rep.n_ties) == (pairs, viol, ties)
    assert np.array_equal(A.space_ranks(f"{fam}@{n}"), np.array(ranks))


def test_violations_detected_with_exact_values():
    n = 6
    rep = A.check_axiom(LateBias(n))
    # every '01' -> '10' swap loses 1/7; raising rank N gains
    assert not rep.holds
    assert rep.n_violations == (n - 1) * 2 ** (n - 2) and rep.n_ties == 0
    assert len(rep.examples) == 10
    for e in rep.examples:
        b, a = parse_run_string(e["before"]), parse_run_string(e["after"])
        assert tuple(a) in moves_of(tuple(b), 2)
        vb = Fraction(sum((k + 1) * int(x) for k, x in enumerate(b)), 7)
        va = Fraction(sum((k + 1) * int(x) for k, x in enumerate(a)), 7)
        assert (e["value_before"], e["value_after"]) == (str(vb), str(va)) and va < vb
        assert e["rank_after"] < e["rank_before"]
    assert rep.examples[0]["before"] == "000001" and rep.examples[0]["after"] == "000010"
    json.dumps(rep.to_dict())


def test_rank_array_input():
    n = 5
    ids = np.arange(2 ** n)
    ranks = A.space_ranks(f"RBP(p=0.8)@{n}")
    assert A.check_axiom(np.asarray(ranks)).holds
    rep = A.check_axiom(-ranks)                      # reversed measure: every strict move violates
    assert rep.n_violations == rep.n_pairs and rep.measure == "ranks"
    assert "value_before" not in rep.examples[0]
    runs = decode_ids(ids, 2, n)
    # violation of the raise only: the count of relevant documents, minus a bonus for r_N
    score = runs.sum(axis=1) * 10 - 15 * runs[:, -1]
    rep = A.check_axiom(score.astype(np.int64))
    assert rep.n_violations == 2 ** (n - 1)
    assert [m["move"] for m in rep.by_move if m["violations"]] == [f"raise {n}"]
    with pytest.raises(AxiomLimitError):
        A.check_axiom(np.arange(30))


def test_graded_axiom():
    n, levels = 4, 3
    good = A.check_axiom(GradedSum(n))
    runs = runs_of(levels, n)
    pairs = sum(len(moves_of(r, levels)) for r in runs)
    swaps = sum(1 for r in runs for i, j in itertools.combinations(range(n), 2) if r[i] < r[j])
    assert good.holds and good.levels == 3 and good.n_pairs == pairs and good.n_ties == swaps
    bad = A.check_axiom(GradedBad(n))
    assert bad.n_violations == 3 ** (n - 1) * n          # raise 1 -> 2 at any rank
    assert {e["move"].split()[0] for e in bad.examples} == {"raise"}
    # the same through a rank array of the ternary space
    ranks = np.array([sum((0, 2, 1)[g] for g in r) for r in runs])
    by_array = A.check_axiom(ranks, levels=3)
    assert (by_array.n, by_array.n_pairs, by_array.n_violations) == (n, bad.n_pairs, bad.n_violations)
    with pytest.raises(AxiomLimitError):
        A.check_axiom(ranks)                              # 81 runs are no binary space
    with pytest.raises(AxiomLimitError):
        A.check_axiom(GradedSum(13))                      # 3^13 > 2^20


def test_limit_refused():
    with pytest.raises(AxiomLimitError) as e:
        A.check_axiom("AP@21")
    assert isinstance(e.value, IrscaleError) and "2^20" in str(e.value)
    with pytest.raises(AxiomLimitError):
        A.check_axiom("AP@10", limit=2 ** 9)
    with pytest.raises(IrscaleError):
        A.check_axiom("AP")                               # no cutoff
    with pytest.raises(IrscaleError):
        A.check_axiom("NoSuchMeasure@5")


# -- 4. balancing index -----------------------------------------------------------------------------------
def bal_ref(fn, n, rb=None, top=1):
    """Largest b with fn(top doc at rank 1) <= fn(ones at b..n), 0 if none (naive values)."""
    e1 = tuple([top] + [0] * (n - 1))
    best = 0
    for b in range(1, n + 1):
        fill = tuple([0] * (b - 1) + [1] * (n - b + 1))
        if value_cmp(fn(e1, rb), fn(fill, rb)) <= 0:
            best = b
    return best


def test_balancing_rbp_known_values():
    assert A.balancing_index("RBP(p=0.8)", 20) == 7
    assert [A.balancing_index("RBP(p=0.8)", n) for n in (21, 25, 30, 32)] == [8, 8, 8, 8]
    # p = 0.95: B(N) grows toward 59 (p^(b-1) >= 1 - p); within N <= 32 it follows the reference
    bs = [A.balancing_index(f"RBP(p=0.95)@{n}") for n in (5, 10, 20, 32)]
    assert bs == [bal_ref(naive.RBP("0.95"), n) for n in (5, 10, 20, 32)]
    assert bs == sorted(bs) and bs[-1] < 59
    assert all(A.balancing_index("RBP(p=0.5)", n) == 1 for n in (1, 2, 10, 32))


def test_balancing_closed_forms():
    for n in range(1, 13):
        # P, R, F1: rank-insensitive, a single relevant document anywhere matches: B(N) = N
        assert A.balancing_index("P", n) == n
        assert A.balancing_index("R", n) == n and A.balancing_index("F1", n) == n
        # RR: 1/b < 1 for b >= 2
        assert A.balancing_index("RR", n) == 1


@pytest.mark.parametrize("fam", ["DCG(b=2)", "DCG(b=3)", "AP", "nDCG(b=2)", "nDCG_trec", "RBP(p=0.8)", "RBP(p=0.3)"])
def test_balancing_against_naive(fam):
    fn = naive_fn(fam)
    ns = range(1, 21) if fam.startswith("DCG") else (1, 2, 3, 5, 8, 13, 20)
    for n in ns:
        rb = n if fam in naive.RB_DEPENDENT else None
        assert A.balancing_index(fam, n) == bal_ref(fn, n, rb), (fam, n)


def test_balancing_dcg2_derivation():
    # DCG(b=2): e_1 scores 1; ones at ranks b..N score sum_{k=b..N} 1/log2(k) (b >= 2).
    # N = 2: 1/log2(2) = 1 ties exactly (decided by the exact key), so B(2) = 2.
    assert [A.balancing_index("DCG(b=2)", n) for n in (1, 2, 3, 4)] == [1, 2, 2, 3]
    assert A.balancing_profile("DCG(b=2)@4") == [True, True, True, False]


def test_balancing_graded_conventions():
    # sum of gains (0, 1, 2): top = 2 <= N - b + 1 ones  <=>  b <= N - 1
    assert A.balancing_index(GradedSum(5)) == 4
    # the top grade outweighs any number of grade-1 documents: even b = 1 fails -> 0
    assert A.balancing_index(GradedHeavyTop(5)) == 0


# -- 5. equal spacing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [8, 9, 10])
def test_equal_spacing_expected(n):
    equal = ["P", "R", "F1", "RBP(p=0.5)", "DCG(b=10)"]       # DCG(b=10)@N, N <= 10: P times N
    unequal = ["AP", "RR", "RBP(p=0.3)", "RBP(p=0.8)", "DCG(b=2)", "nDCG(b=2)", "nDCG_trec"]
    for fam in equal:
        rep = A.equal_spacing(fam, n)
        assert rep.equal and rep.n_distinct_gaps == 1, fam
    for fam in unequal:
        rep = A.equal_spacing(fam, n)
        assert not rep.equal and rep.n_distinct_gaps > 1, fam
    # fixed N and RB: P, R, F1 over the feasible runs of rb = 3
    for fam in ("R", "F1"):
        rep = A.equal_spacing(fam, n, rb=3)
        assert rep.equal and rep.n_distinct == 4 and rep.rb == 3
    assert A.equal_spacing("P", n).min_gap == str(Fraction(1, n))
    assert A.equal_spacing("RBP(p=0.5)", n).min_gap == str(Fraction(1, 2 ** n))


def gap_count_ref(values):
    """Distinct gaps of sorted distinct naive values (Fractions exact; mpmath clustered)."""
    gaps = sorted(values[i + 1] - values[i] for i in range(len(values) - 1))
    count = 0
    for i, g in enumerate(gaps):
        if i == 0 or not naive._equal(g, gaps[i - 1]):
            count += 1
    return count, gaps


@pytest.mark.parametrize("fam", ALL_BINARY)
def test_equal_spacing_against_naive(fam):
    n = 7
    _, _, distinct, _ = naive_ranks(fam, n)
    count, gaps = gap_count_ref(distinct)
    rep = A.equal_spacing(fam, n)
    assert (rep.n_distinct, rep.n_distinct_gaps, rep.equal) == (len(distinct), count, count == 1)
    assert abs(rep.min_gap_float - float(gaps[0])) <= 1e-12 and abs(rep.max_gap_float - float(gaps[-1])) <= 1e-12
    if isinstance(gaps[0], Fraction):
        assert (rep.min_gap, rep.max_gap) == (str(gaps[0]), str(gaps[-1]))
    gen = A.equal_spacing(fam, n, method="generic").to_dict()
    fast = rep.to_dict()
    gen.pop("seconds"), fast.pop("seconds")
    assert gen == fast


# -- 6. summary -----------------------------------------------------------------------------------------
def test_summary():
    s = A.axioms_summary("DCG(b=2)@8")
    json.dumps(s)
    assert s["axiom_holds"] is True and s["violations"] == 0 and s["ties"] == 2 ** 6
    assert s["balancing_index"] == A.balancing_index("DCG(b=2)", 8)
    assert s["equal_spacing"] is False and s["distinct_gaps"] > 1 and s["exhaustive"]
    s = A.axioms_summary("AP", 30)
    json.dumps(s)
    assert s["exhaustive"] is False and s["axiom_holds"] is None and s["balancing_index"] >= 1
    with pytest.raises(AxiomLimitError):
        A.axioms_summary("AP@30", strict=True)
    s = A.axioms_summary(LateBias(5))
    assert s["axiom_holds"] is False and s["violation_examples"][0] == "00001 -> 00010"


def test_cli_axioms_and_spacing_columns(tmp_path, capsys):
    from irscale.cli import main
    capsys.readouterr()
    assert main(["axioms", "--measures", "AP@6,DCG(b=2)@6,P@6", "--pairs"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["measure", "runs", "axiom", "moves"]
    assert "AP@6 vs DCG(b=2)@6" in out
    assert main(["axioms", "--measures", "AP@6", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["measures"][0]["axiom_holds"] is True and doc["measures"][0]["equal_spacing"] is False
    store = tmp_path / "t.h5"
    assert main(["build", "--measures", "P@6,RR@6", "--out", str(store), "-q"]) == 0
    capsys.readouterr()
    assert main(["spacing", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[-3:] == ["axiom", "B", "equal"]
    p_row = [line for line in lines if line.startswith("P@6")][0].split()
    assert p_row[-3:] == ["yes", "6", "yes"]
    assert main(["axioms", "--measures", "XP@6"]) == 2
