"""Transforms side by side: decisions under every transform recomputed
independently, scale-free decisions really equal, the sign/Friedman check, set
dependence against a recomputation without the removed run, inference summaries against
statsmodels, the report and the command line."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from test_analysis import _scores, _synthetic

import irscale
from irscale.cli import main
from irscale.presets import preset_measures
from irscale.scales.analysis import transforms_compared
from irscale.scales.analysis.agreement import SelfCheckError, system_means
from irscale.scales.analysis.analyze import analyze
from irscale.scales.analysis.report import write_report
from irscale.scales.analysis.significance import TESTS, pairwise_pvalues, pairwise_significance
from irscale.scales.analysis.significance_input import pairs
from irscale.scales.runs.standardize import standardize

TRANSFORMS = ("raw", "unq", "midrank", "zscore", "zscore-cdf", "std-linear", "ecdf")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("transforms")
    q, runs = _synthetic(tmp, systems=9, topics=10)
    store = tmp / "paper6.h5"
    irscale.build_store(store, preset_measures("paper", 6))
    scores = _scores(q, runs, store, 6)
    scores = scores[scores.measure.isin(["AP@6", "RR@6", "DCG(b=2)@6", "P@6"])].reset_index(drop=True)
    path = tmp / "scores.parquet"
    irscale.write_scores(scores, path)
    return tmp, scores, path, q, runs, store


@pytest.fixture(scope="module")
def result(synthetic):
    _, scores, *_ = synthetic
    return analyze(scores, alpha=0.25, permutations=200, resamples=200, seed=5)


def _pandas_matrices(scores, measure, mode):
    """Every transform of one measure, from plain pandas (systems sorted by name)."""
    rows = scores[(scores.measure == measure) & (scores.rb_scale == mode)]
    raw = rows.pivot(index="topic", columns="run", values="raw").sort_index(axis=1)
    out = {"raw": raw,
           "unq": rows.pivot(index="topic", columns="run", values="scaled").loc[raw.index, raw.columns],
           "midrank": rows.assign(m=(rows.midrank - 1) / (rows.n_runs - 1))
           .pivot(index="topic", columns="run", values="m").loc[raw.index, raw.columns]}
    mean, sd = raw.mean(axis=1), raw.std(axis=1)
    z = raw.sub(mean, axis=0).div(sd.where(sd > 0), axis=0).fillna(0.0)
    out["zscore"], out["zscore-cdf"], out["std-linear"] = z, pd.DataFrame(stats.norm.cdf(z), z.index, z.columns), \
        0.15 * z + 0.5
    out["ecdf"] = raw.rank(axis=1, method="max", pct=True)
    return {k: v.to_numpy(dtype=float) for k, v in out.items()}, list(raw.columns)


def _direction(test, x, y, xs, i, j):
    """Sign of each test's statistic, computed pair by pair from SciPy / plain numpy."""
    if test == "sign":
        return np.sign((x > y).sum() - (x < y).sum())
    if test == "signrank":
        d = x - y
        d = d[np.abs(d) > 1e-12]
        r = stats.rankdata(np.round(np.abs(d), 10))
        return np.sign(r[d > 0].sum() - r[d < 0].sum())
    if test == "ranksum":
        return np.sign(stats.mannwhitneyu(x, y).statistic - len(x) ** 2 / 2)
    if test == "kruskal":
        r = stats.rankdata(np.round(xs, 10)).reshape(xs.shape)
        return np.sign(r[:, i].sum() - r[:, j].sum())
    if test == "friedman":
        r = np.apply_along_axis(stats.rankdata, 1, np.round(xs, 10))
        return np.sign(r[:, i].sum() - r[:, j].sum())
    return np.sign(np.round(x.mean() - y.mean(), 12))


@pytest.mark.parametrize("measure,mode", [("AP@6", "feasible"), ("RR@6", "common")])
def test_decisions_recomputed_independently(synthetic, result, measure, mode):
    _, scores, *_ = synthetic
    mats, systems = _pandas_matrices(scores, measure, mode)
    got = result.conclusion_pairs
    got = got[(got.measure == measure) & (got.rb_scale == mode)]
    i, j = pairs(len(systems))
    for t in TRANSFORMS:
        sig = pairwise_significance(mats[t], alpha=0.25)
        for test in TESTS:
            rows = got[got.test == test]
            assert list(rows.system_a) == [systems[a] for a in i]
            want = np.array([_direction(test, mats[t][:, a], mats[t][:, b], mats[t], a, b) if s else 0
                             for a, b, s in zip(i, j, sig[test])])
            np.testing.assert_array_equal(rows[t].to_numpy(), want, err_msg=f"{measure} {mode} {t} {test}")


def test_scale_free_decisions_really_equal(result):
    pairs_ = result.conclusion_pairs
    stack = pairs_[list(TRANSFORMS)].to_numpy()
    equal = (stack == stack[:, :1]).all(axis=1)
    np.testing.assert_array_equal(pairs_.scale_free.to_numpy(), equal)
    for row in pairs_[~pairs_.scale_free].head(200).itertuples():
        flipped = [t for t in TRANSFORMS if getattr(row, t.replace("-", "_"), None) is not None] and \
            [t for k, t in enumerate(TRANSFORMS) if stack[row.Index, k] != stack[row.Index, 0]]
        assert row.flipped_by == ",".join(flipped)
    c = result.conclusions
    assert not pairs_.scale_free.all(), "the synthetic runs should give some decision that depends on the transform"
    summary = pairs_.groupby(["rb_scale", "measure", "test"], observed=True).scale_free.sum()
    for row in c.itertuples():
        assert row.scale_free == summary[(row.rb_scale, row.measure, row.test)]
    order = c[c.test.isin(["sign", "friedman"])]
    assert len(order) and (order.scale_free == order.pairs).all()
    assert result.inference.keeps_topic_order.all()


def test_order_tests_checked_not_assumed(synthetic, monkeypatch):
    """A transform that keeps every topic's order but (by a bug) flips a sign-test decision
    stops the analysis."""
    _, scores, *_ = synthetic
    real = transforms_compared._decisions

    def broken(x, tests, alpha):
        decisions, pv = real(x, tests, alpha)
        if x.min() < 0:                                 # z-scores (raw scores are never negative)
            decisions["sign"] = decisions["sign"].copy()
            decisions["sign"][0] = 1 - abs(decisions["sign"][0])
        return decisions, pv
    monkeypatch.setattr(transforms_compared, "_decisions", broken)
    with pytest.raises(SelfCheckError, match="sign test changes"):
        analyze(scores, transforms="raw,zscore", permutations=0, resamples=0)


def test_external_reference_can_break_ties(synthetic):
    """With a reference of other runs the ECDF can merge different scores: the order check
    says so and the sign test is then free to change (nothing is raised)."""
    _, scores, *_ = synthetic
    ap = scores[scores.measure == "AP@6"]
    runs = sorted(ap.run.unique())
    reference = ap[ap.run.isin(runs[:2])]
    got = analyze(ap[ap.run.isin(runs[2:])], transforms="raw,ecdf", reference=reference, permutations=0,
                  resamples=0)
    keeps = got.inference.set_index(["rb_scale", "transform"]).keeps_topic_order
    assert keeps[("feasible", "raw")] and not keeps[("feasible", "ecdf")]
    assert got.meta["reference_runs"] == 2


def test_set_dependence_against_recomputation(synthetic, result):
    _, scores, *_ = synthetic
    dep = result.set_dependence
    for measure in ("AP@6", "DCG(b=2)@6"):
        d = dep[(dep.measure == measure) & (dep.rb_scale == "feasible")].set_index("transform")
        rows = scores[(scores.measure == measure) & (scores.rb_scale == "feasible")]
        best = rows.groupby("run").raw.mean().idxmax()
        assert (d.removed_run == best).all()
        for t in ("raw", "unq", "midrank"):
            assert d.loc[t, "cells_changed"] == 0 and not d.loc[t, "depends_on_systems"]
        before = standardize(rows)
        after = standardize(rows[rows.run != best])
        merged = before[before.run != best].merge(after, on=["run", "topic"], suffixes=("", "_after"))
        for t, col in (("zscore", "zscore"), ("ecdf", "ecdf"), ("std-linear", "std_linear")):
            changed = int((merged[col] != merged[col + "_after"]).sum())
            assert d.loc[t, "cells_changed"] == changed and d.loc[t, "depends_on_systems"]
            assert d.loc[t, "cells"] == len(merged)
        assert d.loc["zscore", "cells_changed"] > 0


@pytest.mark.slow      # about 3 s
def test_inference_against_statsmodels(synthetic, result):
    _, scores, *_ = synthetic
    mats, systems = _pandas_matrices(scores, "DCG(b=2)@6", "common")
    inf = result.inference.set_index(["rb_scale", "measure", "transform"])
    for t in ("raw", "zscore", "ecdf"):
        pv = pairwise_pvalues(mats[t])
        row = inf.loc[("common", "DCG(b=2)@6", t)]
        assert row.pairs == len(systems) * (len(systems) - 1) // 2
        for test, p in pv.items():
            assert row[test] == int((p <= 0.25).sum())
            assert row[f"{test}_holm"] == int(multipletests(p, 0.25, "holm")[0].sum())
            assert row[f"{test}_bh"] == int(multipletests(p, 0.25, "fdr_bh")[0].sum())
    per_pair = result.inference_pairs
    one = per_pair[(per_pair.measure == "DCG(b=2)@6") & (per_pair.rb_scale == "common")
                   & (per_pair["transform"] == "raw")]
    i, j = pairs(len(systems))
    x = mats["raw"]
    np.testing.assert_allclose(one.mean_diff, x[:, i].mean(axis=0) - x[:, j].mean(axis=0), atol=1e-12)
    assert ((one.ci_low <= one.mean_diff + 1e-12) & (one.mean_diff - 1e-12 <= one.ci_high)).mean() > 0.9


def test_baseline_family_and_glass_delta(synthetic):
    _, scores, *_ = synthetic
    ap = scores[(scores.measure == "AP@6") & (scores.rb_scale == "feasible")]
    base = sorted(ap.run.unique())[3]
    got = analyze(ap, baseline=base, permutations=0, resamples=0, transforms="raw,unq")
    k = ap.run.nunique()
    assert (got.inference.pairs == k - 1).all()
    rows = got.inference_pairs[got.inference_pairs["transform"] == "raw"]
    with_base = (rows.system_a == base) | (rows.system_b == base)
    assert rows.glass_delta[with_base].notna().all() and rows.glass_delta[~with_base].isna().all()
    assert rows.p_ttest_holm[~with_base].isna().all()
    raw = ap.pivot(index="topic", columns="run", values="raw")
    for row in rows[with_base].itertuples():          # oriented as mean_diff: a - b, in the baseline's sd
        assert row.glass_delta == pytest.approx((raw[row.system_a].mean() - raw[row.system_b].mean())
                                                / raw[base].std(), abs=1e-12)
        assert np.sign(row.glass_delta) == np.sign(row.mean_diff)
    assert (rows.system_a[with_base] == base).any() and (rows.system_b[with_base] == base).any()
    p = rows.p_ttest[with_base].to_numpy()
    np.testing.assert_allclose(rows.p_ttest_holm[with_base], multipletests(p, method="holm")[1], atol=1e-12)
    assert "median_abs_glass" in got.inference.columns


def test_transform_taus(synthetic, result):
    _, scores, *_ = synthetic
    mats, _ = _pandas_matrices(scores, "RR@6", "feasible")
    taus = result.transform_taus
    taus = taus[(taus.measure == "RR@6") & (taus.rb_scale == "feasible")]
    assert len(taus) == len(TRANSFORMS) * (len(TRANSFORMS) - 1) // 2
    for row in taus.itertuples():
        want = stats.kendalltau(system_means(mats[row.transform_a]), system_means(mats[row.transform_b])).statistic
        assert row.tau == pytest.approx(want, abs=1e-9) or (np.isnan(row.tau) and np.isnan(want))


def test_choice_of_transforms_and_errors(synthetic):
    _, scores, *_ = synthetic
    got = analyze(scores, transforms=["ecdf"], permutations=0, resamples=0)
    assert set(got.inference["transform"]) == {"raw", "ecdf"}
    assert "tukey_randomised" not in got.inference.columns and "ci_excludes_0" not in got.inference.columns
    assert analyze(scores, transforms="none").conclusions.empty
    with pytest.raises(irscale.IrscaleError, match="unknown transform"):
        analyze(scores, transforms="zscore,tscore")
    with pytest.raises(irscale.IrscaleError, match="midrank is not available"):
        analyze(scores.assign(midrank=np.nan), transforms="midrank")
    with pytest.raises(irscale.IrscaleError, match="baseline nosuchrun"):
        analyze(scores, baseline="nosuchrun")
    with pytest.raises(irscale.IrscaleError, match="permutations"):
        analyze(scores, permutations=-1)


def test_report_and_files(synthetic, result, tmp_path):
    paths = result.save(tmp_path)
    names = {p.name for p in paths}
    assert {"conclusions.csv", "transform_taus.csv", "set_dependence.csv", "inference.csv",
            "conclusion_pairs.parquet", "inference_pairs.parquet", "analysis.json"} <= names
    back = pd.read_parquet(tmp_path / "conclusion_pairs.parquet")
    assert len(back) == len(result.conclusion_pairs)
    report = write_report(result, tmp_path).read_text()
    for heading in ("## 7. Transforms", "## 8. Which conclusions survive", "## 9. Corrections"):
        assert heading in report
    assert "scale-free by construction" in report and "randomised Tukey HSD" in report


def test_cli_analyze_with_transforms(synthetic, capsys):
    tmp, _, path, *_ = synthetic
    out = tmp / "cli-report"
    code = main(["analyze", str(path), "-o", str(out), "-q", "--transforms", "unq,zscore,ecdf", "--permutations",
                 "100", "--resamples", "100", "--figure-measure", "AP@6", "--baseline", "sys02"])
    assert code in (0, None), capsys.readouterr()
    report = (out / "report.md").read_text()
    assert "transforms.png" in report and (out / "transforms.png").is_file()
    assert "comparisons with the baseline `sys02`" in report
    code = main(["analyze", str(path), "-o", str(out), "-q", "--transforms", "zscore,nope"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown transform(s) nope" in err and "Traceback" not in err


def test_cli_transform_standardize(synthetic, capsys):
    tmp, scores, _, q, runs, store = synthetic
    out = tmp / "std.csv"
    code = main(["transform", "--qrels", str(q), "--runs", *map(str, runs), "-m", "AP@6", "--store", str(store),
                 "-o", str(out), "-q", "--standardize", "all"])
    assert code in (0, None), capsys.readouterr()
    got = irscale.read_scores(out)
    want = standardize(got[["run", "topic", "measure", "n", "rb_scale", "raw"]])
    for col in ("zscore", "zscore_cdf", "std_linear", "ecdf"):
        np.testing.assert_allclose(got[col], want[col], atol=1e-12)
    code = main(["transform", "--qrels", str(q), "--runs", *map(str, runs), "-m", "AP@6", "-o", str(out), "-q",
                 "--leave-one-out"])
    assert code == 2 and "--standardize" in capsys.readouterr().err


def test_edge_cases_write_true_sentences(synthetic, tmp_path):
    """Equal means after the removal, every decision scale-free, one transform only: the
    report is written and says what happened, not a 'largest change' that is no change."""
    _, scores, *_ = synthetic
    ap = scores[(scores.measure == "AP@6") & scores.run.isin(["sys00", "sys01", "sys02"])].copy()
    copy = ap[ap.run == "sys01"].assign(run="sys02")
    dup = pd.concat([ap[ap.run != "sys02"], copy], ignore_index=True)
    got = analyze(dup, permutations=20, resamples=20, remove_run="sys00")
    report = write_report(got, tmp_path / "dup").read_text()
    assert "moves most" not in report
    two = analyze(ap[ap.run.isin(["sys00", "sys01"])], permutations=20, resamples=20)
    text = write_report(two, tmp_path / "two").read_text()
    if (two.conclusions.scale_free == two.conclusions.pairs).all():
        assert "least scale-free" not in text and "Every decision of every other test is scale-free" in text
    only_raw = write_report(analyze(ap, transforms="raw", permutations=0, resamples=0), tmp_path / "raw").read_text()
    assert "there is no other transform to compare decisions with" in only_raw


def test_reference_holding_the_removed_run(synthetic):
    """With the runs themselves as an explicit reference, removing a run removes it from
    the reference too: the z-scores still change."""
    _, scores, *_ = synthetic
    ap = scores[scores.measure == "AP@6"]
    got = analyze(ap, reference=ap, transforms="zscore,ecdf", permutations=0, resamples=0)
    dep = got.set_dependence.set_index(["rb_scale", "transform"])
    assert dep.loc[("feasible", "zscore"), "cells_changed"] > 0
    assert got.meta["reference_runs_analysed"] == got.meta["reference_runs"] == ap.run.nunique()


def test_python_api_mistakes_are_irscale_errors(synthetic):
    _, scores, *_ = synthetic
    ap = scores[scores.measure == "AP@6"]
    for kwargs, needle in (({"transforms": 3}, "transforms must be names"), ({"alpha": 2}, "alpha"),
                           ({"reference": ap.drop(columns=["raw"]), "transforms": "zscore"}, "no column raw"),
                           ({"seed": -1}, "seed"), ({"resamples": 1}, "resamples")):
        with pytest.raises(irscale.IrscaleError, match=needle):
            analyze(ap, permutations=0, **kwargs)
    numbered = ap.assign(run=ap.run.str[3:].astype(int))          # integer run names, as a DataFrame may hold
    got = analyze(numbered, baseline=3, remove_run=4, permutations=np.int64(10), resamples=0, transforms="zscore")
    assert (got.inference.pairs == numbered.run.nunique() - 1).all()
    assert (got.set_dependence.removed_run == "4").all()


def test_cli_checks_figure_measure_first_and_skips_pair_tables(synthetic, capsys):
    tmp, _, path, *_ = synthetic
    out = tmp / "early"
    code = main(["analyze", str(path), "-o", str(out), "-q", "--figure-measure", "XX@6"])
    err = capsys.readouterr().err
    assert code == 2 and "no measure XX@6" in err and not out.exists()
    out = tmp / "nopairs"
    code = main(["analyze", str(path), "-o", str(out), "-q", "--no-pair-tables", "--permutations", "0",
                 "--resamples", "0"])
    assert code in (0, None), capsys.readouterr()
    assert (out / "conclusions.csv").is_file() and not list(out.glob("*.parquet"))
