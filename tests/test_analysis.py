"""The analyses of SPEC section 6: invariants that hold by construction, an independent
recomputation of the Kendall taus, the loud self-check, and the command line."""
import json
import random

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import irscale
from irscale.cli import main
from irscale.presets import preset_measures
from irscale.scales.analysis.agreement import SelfCheckError
from irscale.scales.analysis.analyze import analyze

INTERVAL_ALREADY = ("P", "RBP(p=0.5)")      # their scaled scores are affine maps of the raw ones
ORDER_ONLY_TESTS = ("sign", "friedman")     # use only the order of the systems within a topic


def _synthetic(tmp_path, systems=14, topics=12, docs=15, seed=3):
    rng = random.Random(seed)
    qrels, runs = [], []
    for t in range(topics):
        for d in range(docs):
            qrels.append(f"{t + 1} 0 D{d} {int(rng.random() < 0.35)}")
    if not any(line.endswith(" 1") for line in qrels):
        qrels[0] = qrels[0][:-1] + "1"
    q = tmp_path / "qrels.txt"
    q.write_text("\n".join(qrels) + "\n")
    for s in range(systems):
        lines = [f"{t + 1} Q0 D{d} 0 {rng.randint(0, 9)} sys{s:02d}" for t in range(topics)
                 for d in rng.sample(range(docs), rng.randint(4, docs))]
        runs.append(tmp_path / f"sys{s:02d}.run")
        runs[-1].write_text("\n".join(lines) + "\n")
    return q, runs


def _scores(q, runs, store, n, **kw):
    names = preset_measures("paper", n)
    return pd.concat([irscale.transform(q, runs, names, store, rb_scale=mode, midranks=True, **kw)
                      for mode in ("common", "feasible")], ignore_index=True)


def _check_invariants(result):
    tau, sig = result.tau_scaled, result.significance
    assert (tau.topic_tau_min.dropna() > 1 - 1e-12).all()
    for m in INTERVAL_ALREADY:
        rows = tau[tau.measure.str.startswith(m + "@")]
        assert len(rows) and (rows.tau_unq > 1 - 1e-12).all(), rows
        s = sig[sig.measure.str.startswith(m + "@")]
        assert len(s) and (s.s2ns == 0).all() and (s.ns2s == 0).all(), s
    order_only = sig[sig.test.isin(ORDER_ONLY_TESTS)]
    assert (order_only.s2ns == 0).all() and (order_only.ns2s == 0).all(), \
        order_only[order_only.s2ns + order_only.ns2s > 0]


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("analysis")
    q, runs = _synthetic(tmp)
    store = tmp / "paper6.h5"
    irscale.build_store(store, preset_measures("paper", 6))
    scores = _scores(q, runs, store, 6)
    path = tmp / "scores.parquet"
    irscale.write_scores(scores, path)
    return tmp, scores, path, store


def test_invariants_on_synthetic_runs(synthetic):
    _, scores, _, _ = synthetic
    result = analyze(scores, transforms="none")
    _check_invariants(result)
    assert set(result.significance.test) == {"sign", "ranksum", "signrank", "ttest", "anova1", "anova2",
                                             "kruskal", "friedman"}
    assert (result.significance.pairs == 14 * 13 // 2).all()
    assert len(result.tau_measures) == 2 * 55


def test_taus_recomputed_independently(synthetic):
    _, scores, _, _ = synthetic
    result = analyze(scores, tests=(), transforms="none")
    for row in result.tau_scaled.itertuples():
        rows = scores[(scores.measure == row.measure) & (scores.rb_scale == row.rb_scale)]
        means = rows.groupby("run")[["raw", "scaled"]].mean().round(8)
        assert row.tau_unq == pytest.approx(stats.kendalltau(means.raw, means.scaled).statistic, abs=1e-12)
        mid = rows.assign(m=(rows.midrank - 1) / (rows.n_runs.astype(float) - 1)).groupby("run").m.mean().round(8)
        assert row.tau_midrank == pytest.approx(stats.kendalltau(means.raw, mid.loc[means.index]).statistic,
                                                abs=1e-12)
    pair = result.tau_measures.iloc[0]
    a = scores[(scores.measure == pair.measure_a) & (scores.rb_scale == pair.rb_scale)].groupby("run").raw.mean()
    b = scores[(scores.measure == pair.measure_b) & (scores.rb_scale == pair.rb_scale)].groupby("run").raw.mean()
    assert pair.tau_raw == pytest.approx(stats.kendalltau(a.round(8), b.round(8)).statistic, abs=1e-12)


def test_significance_counts_recomputed(synthetic):
    from irscale.scales.analysis.significance import pairwise_significance
    _, scores, _, _ = synthetic
    result = analyze(scores, tests=("ttest",), transforms="none")
    row = result.significance[(result.significance.measure == "AP@6")
                              & (result.significance.rb_scale == "feasible")].iloc[0]
    rows = scores[(scores.measure == "AP@6") & (scores.rb_scale == "feasible")]
    raw = rows.pivot(index="topic", columns="run", values="raw").to_numpy()
    scaled = rows.pivot(index="topic", columns="run", values="scaled").to_numpy()
    b, a = pairwise_significance(raw, ("ttest",))["ttest"], pairwise_significance(scaled, ("ttest",))["ttest"]
    assert (row.sig, row.s2ns, row.ns2s) == (b.sum(), (b & ~a).sum(), (~b & a).sum())


def test_self_check_fails_loudly(synthetic):
    _, scores, _, _ = synthetic
    broken = scores.copy()
    rows = broken[(broken.measure == "AP@6") & (broken.rb_scale == "common")]
    # two systems with different raw AP on one topic: swap their scaled scores
    for _topic, g in rows.groupby("topic"):
        if g.raw.nunique() > 1:
            lo, hi = g.raw.idxmin(), g.raw.idxmax()
            broken.loc[[lo, hi], "scaled"] = broken.loc[[hi, lo], "scaled"].to_numpy()
            break
    with pytest.raises(SelfCheckError, match="topic-by-topic tau"):
        analyze(broken, tests=(), transforms="none")


@pytest.mark.slow
def test_invariants_on_trec8(shared_data, tmp_path):
    trec8 = shared_data / "trec8"
    runs = sorted((trec8 / "runs").glob("input.*.gz"))[::3]            # 43 of the 129 runs
    store = tmp_path / "paper10.h5"
    irscale.build_store(store, preset_measures("paper", 10), n_jobs=2)
    scores = _scores(trec8 / "qrels.trec8.adhoc.txt", runs, store, 10)
    result = analyze(scores, n_jobs=2)
    _check_invariants(result)
    assert result.tau_scaled.topics.eq(50).all()
    # DCG(b=10)@10 does not discount the first ten ranks: it is 10 * P@10, already an interval scale
    tau = result.tau_scaled.set_index(["rb_scale", "measure"]).tau_unq
    assert tau["feasible", "DCG(b=10)@10"] > 1 - 1e-12
    # transforms compared (issue 16): order-only tests are scale-free and every transform keeps the order
    c = result.conclusions
    order = c[c.test.isin(ORDER_ONLY_TESTS)]
    assert len(order) and (order.scale_free == order.pairs).all() and (order.pairs == 43 * 42 // 2).all()
    assert result.inference.keeps_topic_order.all()
    dep = result.set_dependence
    assert (dep[dep["transform"].isin(["raw", "unq", "midrank"])].cells_changed == 0).all()
    assert (dep[dep["transform"] == "zscore"].cells_changed > 0).all()
    # R@10 = P@10 * 10 / RB on each topic: their z-scores, and so every decision on them, are the same
    pairs = result.conclusion_pairs
    p = pairs[(pairs.measure == "P@10") & (pairs.rb_scale == "feasible")].zscore.to_numpy()
    r = pairs[(pairs.measure == "R@10") & (pairs.rb_scale == "feasible")].zscore.to_numpy()
    assert len(p) == len(r) > 0 and (p == r).all()


@pytest.mark.slow
def test_cli_analyze_and_spacing(synthetic, capsys):
    tmp, _, path, store = synthetic
    out = tmp / "report"
    assert main(["analyze", str(path), "--out", str(out), "--tests", "sign,ttest", "--stores", str(store), "-q",
                 "--transforms", "none"]) == 0
    report = (out / "report.md").read_text()
    for heading in ("## 1.", "## 2.", "## 3.", "## 4.", "## 5.", "## 6.", "## Figures"):
        assert heading in report
    assert {p.name for p in out.iterdir()} >= {"report.md", "tau_scaled.csv", "tau_measures.csv",
                                              "significance.csv", "analysis.json", "hasse4.png", "hasse4.svg"}
    capsys.readouterr()
    assert main(["spacing", str(store), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["measure"] for r in rows} == set(preset_measures("paper", 6))
    assert main(["spacing", str(store), "--measures", "P@6"]) == 0
    assert "P@6" in capsys.readouterr().out


def test_cli_analyze_errors(synthetic, tmp_path, capsys):
    tmp, scores, _, _ = synthetic
    raw = scores.assign(rank=pd.NA, k=pd.NA, scaled=np.nan)
    irscale.write_scores(raw, tmp_path / "raw.csv")
    for argv, needle in (([str(tmp_path / "raw.csv")], "no scaled values"),
                         ([str(tmp_path / "nope.csv")], "no such file"),
                         ([str(tmp / "scores.parquet"), "--tests", "magic"], "unknown test")):
        capsys.readouterr()
        assert main(["analyze", *argv, "--out", str(tmp_path / "o"), "-q"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], err
