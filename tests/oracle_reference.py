"""Brute-force reference scales for the rank-oracle tests: every run of {0,1}^N (or of
{0..G}^N) scored from the measures' definitions with Python fractions and 50-digit mpmath,
independently of irscale (nothing here imports it).

A reference scale for a recall base lists the distinct values of the feasible runs in
increasing order (values of logarithmic measures equal when they agree to 40 digits), the
number of runs of each, and the unq rank, the mid-rank and the smallest run id of every
value. Run ids are base-``levels`` numbers with rank 1 the most significant digit.
"""
from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath

DIGITS = 50
EQUAL = mpmath.mpf(10) ** -40


def rbp(p: Fraction, gains=(0, 1)):
    top = gains[-1]
    return lambda run, rb: (1 - p) * sum(Fraction(gains[r], top) * p ** k for k, r in enumerate(run))


def _jk(b: int, k: int):
    return mpmath.mpf(1) if k < b else mpmath.log(b) / mpmath.log(k)


def dcg(b: int, gains=(0, 1)):
    return lambda run, rb: mpmath.fsum(gains[r] * _jk(b, k) for k, r in enumerate(run, start=1) if r)


def ndcg(b: int):
    def value(run, rb):
        ideal = mpmath.fsum(_jk(b, k) for k in range(1, min(rb, len(run)) + 1))
        return mpmath.fsum(_jk(b, k) for k, r in enumerate(run, start=1) if r) / ideal
    return value


def ndcg_trec():
    def d(k):
        return 1 / mpmath.log(k + 1, 2)

    def value(run, rb):
        ideal = mpmath.fsum(d(k) for k in range(1, min(rb, len(run)) + 1))
        return mpmath.fsum(d(k) for k, r in enumerate(run, start=1) if r) / ideal
    return value


def graded_ideal(gains, counts, n: int, discount):
    """DCG of the ideal run of a topic with per-grade counts ``counts`` (c_1..c_G): the
    judged documents by decreasing grade, cut at n."""
    grades = [g for g in range(len(counts), 0, -1) for _ in range(counts[g - 1])][:n]
    return mpmath.fsum(gains[g] * discount(k) for k, g in enumerate(grades, start=1))


def trec_discount(k: int):
    """trec_eval's ndcg discount of rank k: 1 / log2(k + 1)."""
    return 1 / mpmath.log(k + 1, 2)


def graded_dcg_raw(gains, discount):
    """Unnormalised graded DCG of a run: sum of gains[r_k] * discount(k)."""
    return lambda run: mpmath.fsum(gains[r] * discount(k) for k, r in enumerate(run, start=1) if r)


def scales_by_counts(raw, n: int, levels: int, vectors, normalise):
    """Reference scales of a graded measure for every per-grade count vector of ``vectors``:
    every run of {0..G}^n scored once by ``raw`` (the unnormalised value, whose order is the
    value order for every vector) and, per vector, the runs with at most c_g documents of
    each grade g kept. ``normalise(vector)`` is the positive divisor of the vector's values.
    Returns {vector: (values, counts, ranks, mids, first)} as :func:`reference_scale`."""
    with mpmath.workdps(DIGITS):
        scored = []
        for rid, run in enumerate(itertools.product(range(levels), repeat=n)):
            have = tuple(run.count(g) for g in range(1, levels))
            scored.append((raw(run), rid, have))
        scored.sort(key=lambda t: t[0])
        out = {}
        for vec in vectors:
            norm = normalise(vec)
            feasible = [(v, rid) for v, rid, have in scored if all(h <= c for h, c in zip(have, vec))]
            values, counts, ranks, mids, first = _distinct(feasible, levels ** n)
            out[vec] = ([float(v / norm) for v in values], counts, ranks, mids, first)
        return out


def _distinct(scored, space: int):
    """(values, counts, ranks, mids, first) of runs ``scored`` as (value, run id) in
    increasing value order: values equal to 40 digits merged; ranks and mid-ranks per run
    id (0 for runs not scored)."""
    values, counts, first = [], [], []
    ranks = [0] * space
    for v, rid in scored:
        if values and abs(v - values[-1]) <= EQUAL * max(1, abs(v)):
            counts[-1] += 1
            first[-1] = min(first[-1], rid)
        else:
            values.append(v)
            counts.append(1)
            first.append(rid)
        ranks[rid] = len(values)
    before, position = 0, []
    for c in counts:
        position.append(before + (c + 1) / 2)
        before += c
    mids = [0.0] * space
    for _, rid in scored:
        mids[rid] = position[ranks[rid] - 1]
    return values, counts, ranks, mids, first


def precision():
    return lambda run, rb: Fraction(sum(run), len(run))


def recall():
    return lambda run, rb: Fraction(sum(run), rb)


def f1():
    return lambda run, rb: Fraction(2 * sum(run), len(run) + rb)


def rr():
    return lambda run, rb: next((Fraction(1, k) for k, r in enumerate(run, start=1) if r), Fraction(0))


def reference_scale(value, n: int, levels: int = 2, rb=None):
    """(values, counts, ranks_of_runs, midranks_of_runs, smallest ids) of the runs with at
    most ``rb`` relevant documents (all runs when rb is None); ranks per run id (0 for
    infeasible runs)."""
    with mpmath.workdps(DIGITS):
        scored = []
        for rid, run in enumerate(itertools.product(range(levels), repeat=n)):
            relevant = sum(1 for r in run if r)
            if rb is not None and relevant > rb:
                continue
            scored.append((value(run, rb), rid))
        scored.sort(key=lambda t: t[0])
        values, counts, ranks, mids, first = _distinct(scored, levels ** n)
        return [float(v) for v in values], counts, ranks, mids, first
