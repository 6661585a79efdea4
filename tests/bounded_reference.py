"""Plain-Python twins of the bounded-scale kernels (scales/tables/bounded_kernels.py) and a
brute-force reference of the bounds they compute, written from the definitions with dicts,
Python integers and fractions. Nothing here imports irscale.

Kernel twins (same inputs, same results up to float summation order):

* :func:`group_spans` / :func:`group_pass`: a histogram over (count, cell) as a dict; one
  group of options (shift, count), each of weight q, added: mass'(c, i) = q * sum_o
  mass(c - count_o, i - shift_o), rows above the last dropped;
* :func:`last_group`: the last group added and the rows summed into one array of cells;
* :func:`geometric_stage`: RBP's rank step, cell i -> shift + floor(a i / c) (ceil when up).

Brute force (every tuple of options, exact integers):

* :func:`tuple_counts`: per grid cell V, the number of feasible tuples whose cells (each
  option's value times the scale plus its group's offset, rounded down) sum to at most V plus
  the tuples' largest rounding error, and to at most V plus their smallest (the exact counts
  the float programme bounds);
* :func:`best_spread`: the narrowest rounding errors one group's offset can give;
* :func:`geometric_counts`: the same for RBP's self-similar programme: each run's tail
  rounded rank by rank on the given grids.
"""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np


def group_spans(lo, hi, shifts, counts):
    rows = len(lo)
    nlo, nhi = [1 << 62] * rows, [-1] * rows
    for c in range(rows):
        for s, k in zip(shifts, counts):
            src = c - k
            if src >= 0 and lo[src] <= hi[src]:
                nlo[c] = min(nlo[c], lo[src] + s)
                nhi[c] = max(nhi[c], hi[src] + s)
    return nlo, nhi


def group_pass(hist: dict, rows: int, shifts, counts, q: float) -> dict:
    """hist: {(count, cell): mass}; the new histogram."""
    out: dict = {}
    for (c, i), v in hist.items():
        for s, k in zip(shifts, counts):
            if c + k < rows:
                out[(c + k, i + s)] = out.get((c + k, i + s), 0.0) + v
    return {key: v * q for key, v in out.items()}


def last_group(hist: dict, rows: int, shifts, counts, q: float, cells: int) -> list:
    out = [0.0] * cells
    for (_, i), v in group_pass(hist, rows, shifts, counts, q).items():
        out[i] += v
    return out


def geometric_stage(old, n_old: int, a: int, c: int, shifts, q: float, up: bool, size: int) -> tuple[list, int]:
    new = [0.0] * size
    top = 0
    for i in range(n_old):
        if old[i] != 0.0:
            t = -(-a * i // c) if up else a * i // c
            for s in shifts:
                new[s + t] += old[i] * q
            top = t
    return new, top + max(shifts) + 1


# -- brute force ------------------------------------------------------------------------------------------
def tuple_counts(lows, highs, counts, rows: int, scale: int, cells: int, offsets) -> tuple[list, list, tuple, tuple]:
    """(upper, lower, (low, high), (tuple low, tuple high)) by brute force over every feasible
    tuple (sum of counts < rows), each option's cell c = floor(low * scale + t_g) for the
    group's offset t_g: [low, high] the sums over the groups of their options' extremes of
    c - value * scale (from the values' low and high ends; feasible or not), per cell V in
    0..cells-1 the tuples of cells at most V + ceil(high), and at most V + floor(low); the
    last pair the extremes over the feasible tuples themselves (within [low, high])."""
    def cell(g, o):
        return math.floor(Fraction(float(lows[g][o])) * scale + offsets[g])
    low = sum(min(cell(g, o) - Fraction(float(highs[g][o])) * scale for o in range(len(x))) for g, x in enumerate(lows))
    high = sum(max(cell(g, o) - Fraction(float(lows[g][o])) * scale for o in range(len(x))) for g, x in enumerate(lows))
    tuples = []
    for t in itertools.product(*[range(len(x)) for x in lows]):
        if sum(int(counts[g][o]) for g, o in enumerate(t)) >= rows:
            continue
        r = [cell(g, o) for g, o in enumerate(t)]
        err_lo = sum(c - Fraction(float(highs[g][o])) * scale for c, (g, o) in zip(r, enumerate(t)))
        err_hi = sum(c - Fraction(float(lows[g][o])) * scale for c, (g, o) in zip(r, enumerate(t)))
        tuples.append((sum(r), err_lo, err_hi))
    upper = [sum(r <= V + math.ceil(high) for r, _, _ in tuples) for V in range(cells)]
    lower = [sum(r <= V + math.floor(low) for r, _, _ in tuples) for V in range(cells)]
    return upper, lower, (low, high), (min(e for _, e, _ in tuples), max(e for _, _, e in tuples))


def best_spread(y) -> Fraction:
    """The smallest spread (largest minus smallest) of floor(y + t) - y over the values ``y``
    (Fractions) for an offset t in [0, 1), by trying every candidate offset: 0 and, for each
    value, the one taking it to its next integer."""
    def spread(t):
        e = [math.floor(v + t) - v for v in y]
        return max(e) - min(e)
    cands = [Fraction(0)] + [(math.ceil(v) - v) % 1 for v in y]
    return min(spread(t) for t in cands)


def geometric_counts(p: Fraction, gains, n: int, grids, cells: int) -> tuple[list, list]:
    """RBP's programme run by run: T_j = g_j + p T_(j+1) on grids[j - 1] cells per unit for
    ranks j = 1..J (J = len(grids)), the ranks after J a point mass at 0 (down) or at the
    tail's largest value (up); per cell V of T_1, the runs (every tuple of distinct gains)
    whose down index is <= V and whose up index is."""
    J = len(grids)
    upper, lower = [0] * cells, [0] * cells
    tail_top = gains[-1] * (1 - p ** (n - J)) / (1 - p)
    for head in itertools.product(gains, repeat=J):
        d, u = 0, math.ceil(tail_top * grids[-1])
        for j in range(J - 1, -1, -1):
            q_next = grids[j + 1] if j + 1 < J else grids[-1]
            d = head[j] * grids[j] + math.floor(p * d * grids[j] / q_next)
            u = head[j] * grids[j] + math.ceil(p * u * grids[j] / q_next)
        tails = len(gains) ** (n - J)
        for V in range(max(d, 0), cells):
            upper[V] += tails
        for V in range(max(u, 0), cells):
            lower[V] += tails
    return upper, lower


def random_groups(rng: np.random.Generator, groups: int, rows: int):
    """Random options: values on a coarse grid (so that many sums tie), counts < rows, the
    first option of every group empty (value 0, count 0)."""
    lows, highs, counts = [], [], []
    for _ in range(groups):
        m = int(rng.integers(2, 6))
        x = np.concatenate([[0.0], rng.integers(1, 40, m - 1) * 0.125])
        lows.append(x)
        highs.append(x + np.where(x > 0, 0.0625, 0.0))
        counts.append(np.concatenate([[0], rng.integers(0, max(rows, 1), m - 1)]).astype(np.int64))
    return lows, highs, counts


# -- several count dimensions (tests/test_bounded_graded.py) -----------------------------------------------
def group_pass_md(hist: dict, caps, shifts, vectors, q: float) -> dict:
    """hist: {(count vector, cell): mass}; one group of options (shift, count vector) added,
    vectors above ``caps`` in any grade dropped."""
    out: dict = {}
    for (c, i), v in hist.items():
        for s, k in zip(shifts, vectors):
            new = tuple(a + b for a, b in zip(c, k))
            if all(a <= b for a, b in zip(new, caps)):
                out[(new, i + s)] = out.get((new, i + s), 0.0) + v
    return {key: v * q for key, v in out.items()}


def row_sums_md(hist: dict, cells: int) -> list:
    out = [0.0] * cells
    for (_, i), v in hist.items():
        out[i] += v
    return out


def graded_feasible(run, counts) -> bool:
    """Whether a run (grades) holds at most counts[g - 1] documents of every grade g >= 1."""
    return all(sum(1 for x in run if x == g) <= c for g, c in enumerate(counts, start=1))


# -- antichain states (tests/test_bounded_states.py) ----------------------------------------------------
def minimal(vectors) -> tuple:
    """Pareto-minimal vectors, from the definition: those no other vector is below."""
    vs = set(vectors)
    return tuple(sorted(v for v in vs if not any(w != v and all(a <= b for a, b in zip(w, v)) for w in vs)))


def group_pass_antichains(hist: dict, caps, shifts, pareto, q: float) -> dict:
    """hist: {(antichain, cell): mass}; one group of options (shift, minimal count vectors)
    added: a tuple's antichain is the minimal sums within ``caps`` of one vector per option
    (none left: the tuple is infeasible and dropped)."""
    out: dict = {}
    for (state, i), v in hist.items():
        for s, p in zip(shifts, pareto):
            new = minimal(tuple(a + b for a, b in zip(u, w)) for u in state for w in p
                          if all(a + b <= c for a, b, c in zip(u, w, caps)))
            if new:
                out[(new, i + s)] = out.get((new, i + s), 0.0) + v
    return {key: v * q for key, v in out.items()}


def clamp(state: tuple, low) -> tuple:
    """An antichain as groups that can add at most c - low see it: every count raised to low."""
    return minimal(tuple(max(a, b) for a, b in zip(v, low)) for v in state)
