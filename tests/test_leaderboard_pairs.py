"""The leaderboard's pairs against independent computations: ``Leaderboard.differences()``
(mean difference, paired t interval by ``scipy.stats.ttest_rel(...).confidence_interval()``,
Cohen's d_z by numpy) and Fisher's randomisation test (``test="randomisation"``) by
``scipy.stats.permutation_test(..., permutation_type="samples")``, exact and sampled."""
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from irscale import IrscaleWarning
from irscale.scales.analysis.inference import paired_differences, randomisation_pvalues
from irscale.scales.analysis.leaderboard import leaderboard
from irscale.scales.analysis.leaderboard_output import DIFFERENCE_COLUMNS
from irscale.scales.analysis.significance_input import SignificanceInputError, pairs


def _frame(runs=5, topics=12, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for m in ("AP@10", "P@10"):
        base = rng.random(topics)
        for r in range(runs):
            raw = np.clip(base + 0.05 * r + rng.normal(0, 0.1, topics), 0, 1)
            rows.append(pd.DataFrame({"run": f"run{r}", "topic": [f"t{t}" for t in range(topics)], "measure": m,
                                      "raw": raw, "scaled": np.sqrt(raw)}))
    return pd.concat(rows, ignore_index=True)


def _board(scores, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        return leaderboard(scores, **kwargs)


def _column(scores, measure, run, column):
    rows = scores[(scores["measure"] == measure) & (scores["run"] == run)].sort_values("topic")
    return rows[column].to_numpy()


@pytest.mark.parametrize("baseline, confidence", [(None, 0.95), ("run2", 0.9)])
def test_differences_match_scipy_intervals_and_numpy_effect_sizes(baseline, confidence):
    scores = _frame()
    board = _board(scores, baseline=baseline, confidence=confidence)
    diff = board.differences()
    assert list(diff.columns) == list(DIFFERENCE_COLUMNS)
    assert len(diff) == len(board.pairs) == 2 * (4 if baseline else 10)
    pd.testing.assert_frame_equal(diff[["measure", "a", "b"]], board.pairs[["measure", "a", "b"]])
    if baseline:
        assert (diff["b"] == baseline).all()                      # (system, baseline)
    for row in diff.itertuples():
        for kind in ("raw", "scaled"):
            x, y = (_column(scores, row.measure, r, kind) for r in (row.a, row.b))
            ci = stats.ttest_rel(x, y).confidence_interval(confidence_level=confidence)
            d = x - y
            assert getattr(row, f"{kind}_diff") == pytest.approx(d.mean(), abs=1e-12)
            assert getattr(row, f"{kind}_ci_low") == pytest.approx(ci.low, abs=1e-12)
            assert getattr(row, f"{kind}_ci_high") == pytest.approx(ci.high, abs=1e-12)
            assert getattr(row, f"{kind}_effect") == pytest.approx(d.mean() / np.std(d, ddof=1), abs=1e-12)
    for column in ("p_value", "raw_p_value", "decision", "raw_decision"):
        np.testing.assert_array_equal(diff[column].to_numpy(), board.pairs[column].to_numpy())


def test_differences_are_nan_where_undefined():
    scores = _frame(runs=3)
    scores.loc[scores["measure"] == "P@10", "scaled"] = np.nan          # no scale
    same = scores["run"] == "run1"
    scores.loc[same, "raw"] = scores.loc[scores["run"] == "run0", "raw"].to_numpy() + 0.25   # constant difference
    diff = _board(scores).differences().set_index(["measure", "a", "b"])
    assert diff.loc["P@10", ["scaled_diff", "scaled_ci_low", "scaled_effect"]].isna().all().all()
    assert diff.loc["P@10", "raw_diff"].notna().all()
    const = diff.loc[("P@10", "run0", "run1")]
    assert const["raw_diff"] == pytest.approx(-0.25) and np.isnan(const["raw_effect"])
    assert const["raw_ci_low"] == pytest.approx(-0.25) and const["raw_ci_high"] == pytest.approx(-0.25)
    one = _board(_frame(runs=3, topics=1)).differences()            # one topic: nothing tested
    assert one.empty and list(one.columns) == list(DIFFERENCE_COLUMNS)


def test_paired_differences_checks_its_input():
    with pytest.raises(SignificanceInputError, match="2-D"):
        paired_differences(np.zeros(3), [0], [1])
    with pytest.raises(SignificanceInputError, match="confidence"):
        paired_differences(np.zeros((3, 2)), [0], [1], confidence=1.5)


def _scipy_p(x, y, resamples=np.inf, rng=None):
    return stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
                                  n_resamples=resamples, alternative="two-sided", rng=rng).pvalue


@pytest.mark.parametrize("kind", ["dyadic", "continuous"])
def test_exact_randomisation_equals_scipy(kind):
    rng = np.random.default_rng(7)
    n, k = 9, 5                                               # 512 sign patterns <= 1000: enumerated
    x = rng.integers(0, 9, size=(n, k)) / 8 if kind == "dyadic" else rng.random((n, k))
    x[:, 4] = x[:, 3]                                         # a pair that never differs: p = 1
    got = randomisation_pvalues(x, permutations=1000, seed=5)
    i, j = pairs(k)
    want = np.array([_scipy_p(x[:, a], x[:, b]) for a, b in zip(i, j)])
    np.testing.assert_array_equal(got * 512, np.rint(got * 512))   # multiples of 1 / 2^n
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    assert got[-1] == 1.0
    np.testing.assert_array_equal(randomisation_pvalues(x, permutations=512, seed=9), got)   # no draw at all


def test_sampled_randomisation_is_within_monte_carlo_error_of_scipy():
    rng = np.random.default_rng(3)
    n, k, b = 14, 6, 4000                                      # 16,384 patterns > 4,000: sampled
    x = rng.random((n, k)) + np.linspace(0, 0.3, k)
    got = randomisation_pvalues(x, permutations=b, seed=1)
    i, j = pairs(k)
    exact = np.array([_scipy_p(x[:, a], x[:, c]) for a, c in zip(i, j)])
    sampled = np.array([_scipy_p(x[:, a], x[:, c], resamples=b, rng=np.random.default_rng(2)) for a, c in zip(i, j)])
    se = np.sqrt(exact * (1 - exact) / b) + 1 / b
    assert (np.abs(got - exact) <= 4.5 * se).all(), np.c_[got, exact]
    assert (np.abs(got - sampled) <= 4.5 * np.sqrt(2) * se).all(), np.c_[got, sampled]
    assert ((got * (b + 1)) % 1 < 1e-6).all() and got.min() >= 1 / (b + 1)    # (count + 1) / (B + 1)
    np.testing.assert_array_equal(got, randomisation_pvalues(x, permutations=b, seed=1))   # the seed decides
    assert not np.array_equal(got, randomisation_pvalues(x, permutations=b, seed=2))


def test_randomisation_of_73_systems_takes_seconds():
    x = np.random.default_rng(0).random((50, 73))
    start = time.perf_counter()
    p = randomisation_pvalues(x, permutations=1000, seed=0)
    assert time.perf_counter() - start < 3.0
    assert p.shape == (73 * 72 // 2,) and ((p > 0) & (p <= 1)).all()


def test_randomisation_checks_its_parameters():
    x = np.random.default_rng(0).random((5, 3))
    with pytest.raises(SignificanceInputError, match="permutations"):
        randomisation_pvalues(x, permutations=0)
    with pytest.raises(SignificanceInputError, match="seed"):
        randomisation_pvalues(x, seed=-1)
