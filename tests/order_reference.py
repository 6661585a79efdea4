"""Independent references for the order-theoretic checks' tests (test_run_order,
test_axioms, test_disagreements), written from the definitions (SPEC_MEASURES section 6):
runs from itertools (r_1 first, so itertools order is run-id order), the order by explicit
prefix counting, moves by explicit list surgery, values from tests/naive.py (exact
Fractions, or 50-digit mpmath with values within 1e-40 counted equal); and a tiny
non-monotone measure through the real Measure interface.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import naive

from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey


def runs_of(levels, n):
    return [tuple(r) for r in itertools.product(range(levels), repeat=n)]


def leq(r, s):
    """r <= s: for every grade t >= 1 and every k, #(grade >= t in r's top k) <= s's."""
    for t in range(1, max(max(r), max(s), 1) + 1):
        cr = cs = 0
        for x, y in zip(r, s):
            cr += x >= t
            cs += y >= t
            if cr > cs:
                return False
    return True


def moves_of(run, levels, adjacent_only=None):
    """Generating moves written out: binary: adjacent '01' -> '10' swaps and r_N 0 -> 1;
    graded: (lower, higher) -> (higher, lower) swaps at any two ranks and +1 raises
    anywhere."""
    n, out = len(run), []
    if adjacent_only is None:
        adjacent_only = levels == 2
    for i in range(n - 1):
        for j in ([i + 1] if adjacent_only else range(i + 1, n)):
            if run[i] < run[j]:
                r = list(run)
                r[i], r[j] = r[j], r[i]
                out.append(tuple(r))
    for k in ([n - 1] if levels == 2 else range(n)):
        if run[k] < levels - 1:
            r = list(run)
            r[k] += 1
            out.append(tuple(r))
    return out


REFERENCES = dict(naive.REFERENCES, **{"RBP(p=0.95)": naive.RBP("0.95")})


def naive_fn(family):
    return REFERENCES[family]


def naive_ranks(family, n):
    """(runs in run-id order, exact values, distinct values, unq ranks) of all binary runs,
    rb = n for RB measures."""
    fn = naive_fn(family)
    rb = n if family in naive.RB_DEPENDENT else None
    runs = naive.all_runs(n)
    vals = [fn(r, rb) for r in runs]
    distinct, ranks = naive.unq_ranks(vals)
    return runs, vals, distinct, ranks


def value_cmp(a, b):
    """Sign of a - b for naive values (Fraction exact; mpmath with naive's equality)."""
    if naive._equal(a, b):
        return 0
    return 1 if a > b else -1


# tiny test-only measures through the real Measure interface (not registered)
@dataclass(frozen=True, repr=False)
class LateBias(KeyMeasure):
    """Non-monotone: rank k weighs k (lower ranks count more)."""
    name = "LateBias"

    def key_spec(self):
        return AdditiveKey(weights=[[0, k + 1] for k in range(self.n)],
                         max_key=self.n * (self.n + 1) // 2, ordered=True, scale=lambda rb: Fraction(1, 7))
