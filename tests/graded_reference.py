"""Plain-Python exact reference for graded DCG scales per count vector, from the definition
(nothing here imports irscale).

Every run of {0..G}^N is enumerated and keyed by its exact tuple of group sums: rank k's
discount is written as coef * X_m with k + 1 (trec) or k (Jarvelin-Kekalainen) = m^j, m not a
perfect power, coef rational, X_m = ln(base) / ln(m) (X = 1 for the rational ranks), and the
key is, per coordinate m, the Fraction sum of gain * coef over the ranks of that coordinate.
A run is feasible for the count vector c when it holds at most c_g documents of grade g. The
distinct keys of the feasible runs are the distinct values; they are ordered by the value
sum_k gain_k * discount_k computed from the definition in 50-digit mpmath (two different keys
whose values agree to 40 digits fail the reference: the independence assumption would not
hold), and the unq rank of a run is 1 + the number of feasible keys of smaller value.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath

DIGITS = 50
EQUAL = mpmath.mpf(10) ** -40


def perfect_root(x: int) -> tuple[int, int]:
    """x = m^j with j as large as possible (m is then not a perfect power)."""
    best = (x, 1)
    for j in range(2, x.bit_length() + 1):
        for m in range(2, x + 1):
            if m ** j > x:
                break
            if m ** j == x:
                best = (m, j)
    return best


def formal_discounts(n: int, kind="trec"):
    """Per rank k = 1..n: (coordinate, coef) with discount = coef * X_coordinate, and a
    function giving the discount of rank k in mpmath from the definition. ``kind``:
    ``"trec"`` (1/log2(k + 1)) or an integer b (J-K: 1 for k < b, else 1/log_b(k))."""
    out = []
    if kind == "trec":
        for k in range(1, n + 1):
            m, j = perfect_root(k + 1)
            out.append((None, Fraction(1, j)) if m == 2 else (m, Fraction(1, j)))
        return out, (lambda k: 1 / mpmath.log(k + 1, 2))
    b = int(kind)
    mb, jb = perfect_root(b)
    for k in range(1, n + 1):
        if k < b:
            out.append((None, Fraction(1)))
            continue
        m, j = perfect_root(k)
        out.append((None, Fraction(jb, j)) if m == mb else (m, Fraction(1, j)))
    return out, (lambda k: mpmath.mpf(1) if k < b else mpmath.log(b) / mpmath.log(k))


class Reference:
    """Every run of ``levels`` grades at cutoff ``n`` with its exact key, its value and its
    per-grade counts; :meth:`scale` gives K and the ranks for a count vector."""

    def __init__(self, n: int, gains, kind="trec"):
        self.n, self.gains, self.levels = n, tuple(gains), len(gains)
        formal, discount = formal_discounts(n, kind)
        coords = sorted({c for c, _ in formal}, key=lambda c: (c is not None, c or 0))
        where = {c: i for i, c in enumerate(coords)}
        self.runs, keys, self.have, self.key_of_run = [], [], [], []
        index: dict = {}
        with mpmath.workdps(DIGITS):
            disc = [discount(k) for k in range(1, n + 1)]
            values = []
            for run in itertools.product(range(self.levels), repeat=n):
                key = [Fraction(0)] * len(coords)
                for k, r in enumerate(run):
                    c, coef = formal[k]
                    key[where[c]] += self.gains[r] * coef
                key = tuple(key)
                if key not in index:
                    index[key] = len(keys)
                    keys.append(key)
                    values.append(mpmath.fsum(self.gains[r] * d for r, d in zip(run, disc)))
                self.runs.append(run)
                self.key_of_run.append(index[key])
                self.have.append(tuple(run.count(g) for g in range(1, self.levels)))
            order = sorted(range(len(keys)), key=lambda i: values[i])
            for u, v in zip(order, order[1:]):
                if abs(values[v] - values[u]) <= EQUAL * max(1, abs(values[v])):
                    raise AssertionError(f"keys {keys[u]} and {keys[v]} have values equal to 40 digits")
        self.position = [0] * len(keys)          # the value order of every distinct key
        for p, i in enumerate(order):
            self.position[i] = p
        self.values = values
        self.keys = keys

    def scale(self, counts) -> tuple[int, dict[int, int]]:
        """(K, {run index: unq rank}) over the runs feasible for ``counts`` (c_1..c_G)."""
        if not hasattr(self, "by_counts"):
            self.by_counts: dict = {}
            for i, h in enumerate(self.have):
                self.by_counts.setdefault(h, []).append(i)
        feasible = [i for h, runs in self.by_counts.items() if all(a <= c for a, c in zip(h, counts)) for i in runs]
        present = sorted({self.position[self.key_of_run[i]] for i in feasible})
        rank_of_position = {p: r for r, p in enumerate(present, start=1)}
        return len(present), {i: rank_of_position[self.position[self.key_of_run[i]]] for i in feasible}

