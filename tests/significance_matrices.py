"""Scores matrices (topics x systems) for the significance tests' tests
(test_two_sample, test_multi_system, test_significance): continuous and integer scores,
with system effects, ties, zero differences and degenerate columns."""
import numpy as np

ALPHA = 0.05


def cont(rng, n, k, spread=0.6):
    return rng.normal(size=(n, k)) + rng.normal(0.0, spread, k)


def ints(rng, n, k, top=3, spread=0.8):
    """Integer scores 0..top with system effects: many ties and zero differences."""
    return np.clip(np.round(rng.normal(top / 2, 1.0, (n, k)) + rng.normal(0.0, spread, k)), 0, top)


def matrices():
    rng = np.random.default_rng(20240611)
    out = {
        "cont_12x6": cont(rng, 12, 6),
        "int_10x6": rng.integers(0, 4, (10, 6)).astype(float),  # signrank: permutation test
        "int_effect_16x6": ints(rng, 16, 6),
        "int_20x5": ints(rng, 20, 5),           # signrank: normal approximation with ties
        "cont_20x5": cont(rng, 20, 5),          # signrank: exact, n = 20
        "cont_51x4": cont(rng, 51, 4, 0.3),     # signrank: n > 50 -> normal approximation
        "cont_50x3": cont(rng, 50, 3, 0.3),     # signrank: exact at n = 50 (TREC-8)
        "int_50x4": ints(rng, 50, 4, top=9),
        "cont_6x5": cont(rng, 6, 5, 1.5),       # ranksum: exact U distribution (n <= 8)
        "int_6x5": rng.integers(0, 3, (6, 5)).astype(float),
        "cont_3x4": cont(rng, 3, 4),
    }
    # degenerate columns: identical (all differences zero), shifted (zero variance of d)
    x = rng.integers(0, 4, (15, 5)).astype(float)
    x[:, 1] = x[:, 0]
    x[:, 2] = x[:, 0] + 1.0
    x[:, 4] = 2.0
    out["degenerate_15x5"] = x
    y = rng.integers(0, 4, (10, 4)).astype(float)
    y[:, 3] = y[:, 2]
    out["degenerate_10x4"] = y
    return out


MATRICES = matrices()
