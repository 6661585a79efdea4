"""Plain-Python references for tests/test_inference.py, written from the definitions in the
module docstring of irscale.scales.analysis.inference and the papers it cites, without
NumPy and without reading the implementation: loops over topics, systems and pairs, and
Python's own ``random`` module for the random draws (so the Monte Carlo results share no
random numbers with irscale's)."""
from __future__ import annotations

import math
import random
import statistics


def all_pairs(n_systems):
    """(i, j), i < j, row-major: (0, 1), (0, 2), ..., (1, 2), ..."""
    return [(i, j) for i in range(n_systems) for j in range(i + 1, n_systems)]


def columns(scores):
    """The systems' score lists of a topics x systems matrix (list of rows)."""
    rows = [list(map(float, r)) for r in scores]
    return [[r[s] for r in rows] for s in range(len(rows[0]))]


def randomised_tukey_hsd(scores, permutations, seed, tie=1e-9):
    """Randomised Tukey HSD (Carterette 2012; Sakai's Discpower): ``permutations`` times,
    shuffle every topic's scores among the systems (random.shuffle, topic by topic), take
    the range (largest minus smallest) of the systems' mean scores; the p-value of a pair
    is the fraction of the shuffles whose range reaches the pair's observed absolute
    difference of means (``tie``: differences this close count as equal)."""
    rows = [list(map(float, r)) for r in scores]
    n, k = len(rows), len(rows[0])
    rnd = random.Random(seed)
    means = [sum(r[s] for r in rows) / n for s in range(k)]
    ranges = []
    for _ in range(permutations):
        sums = [0.0] * k
        for r in rows:
            shuffled = r[:]
            rnd.shuffle(shuffled)
            for s in range(k):
                sums[s] += shuffled[s]
        ranges.append((max(sums) - min(sums)) / n)
    out = []
    for i, j in all_pairs(k):
        observed = abs(means[i] - means[j])
        out.append(sum(1 for g in ranges if g >= observed - tie) / permutations)
    return out


def cohens_d(scores):
    """mean(d) / stdev(d) per pair with d_t = x_ti - x_tj (statistics.stdev: n - 1, exact
    sums); 0 when every d_t is 0, +-inf when the d_t are one non-zero value."""
    cols = columns(scores)
    out = []
    for i, j in all_pairs(len(cols)):
        d = [a - b for a, b in zip(cols[i], cols[j])]
        mean, sd = statistics.mean(d), statistics.stdev(d)     # exact: 0 for equal d_t
        if sd == 0:
            out.append(0.0 if mean == 0 else math.copysign(math.inf, mean))
        else:
            out.append(mean / sd)
    return out


def glass_delta(scores, baseline):
    """(mean_s - mean_b) / stdev(baseline's scores) for every system s; NaN for every system
    when the baseline's scores are all equal."""
    cols = columns(scores)
    base = cols[baseline]
    sd = statistics.stdev(base)
    if sd == 0:
        return [math.nan] * len(cols)
    mb = statistics.mean(base)
    return [(statistics.mean(c) - mb) / sd for c in cols]


def baseline_family(n_systems, baseline):
    """Whether each pair (all_pairs order) contains the baseline."""
    return [baseline in pair for pair in all_pairs(n_systems)]
