"""The leaderboard (``irscale.compare``, ``irscale.leaderboard``) cell by cell against an
independent computation: pandas means of transform's columns, ranks by pandas, confidence
intervals by statsmodels, paired tests by scipy pair by pair, corrections by statsmodels'
``multipletests``, decisions under every standardisation from transform's own columns.

The TREC-8 tests read ../shared/data (skipping, saying where, without it); the others use
small synthetic TREC files.
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

import irscale
from irscale import IrscaleError, IrscaleWarning
from irscale.scales.analysis.leaderboard import leaderboard

TRANSFORM_COLUMNS = {"raw": "raw", "unq": "scaled", "zscore": "zscore", "zscore-cdf": "zscore_cdf",
                     "std-linear": "std_linear", "ecdf": "ecdf"}


def _trec8_runs(n):
    from conftest import SHARED
    folder = SHARED / "trec8"
    if not folder.is_dir():
        print(f"skipping: shared TREC data not found at {SHARED}")
        pytest.skip(f"shared TREC data not found at {SHARED}")
    return folder / "qrels.trec8.adhoc.txt", sorted((folder / "runs").iterdir())[:n]


def _matrix(scores, measure, column):
    rows = scores[scores["measure"] == measure]
    return rows.pivot(index="topic", columns="run", values=column)


def _reference(scores, measure, baseline, alpha=0.05, correction="holm", tested=None):
    """Per run: raw/scaled means and ranks, CI, and per transform the (adjusted p, decision)
    against ``baseline`` (or, without one, wins and losses over every pair). ``tested``:
    the transforms whose decisions are wanted (default: every one in ``scores``)."""
    runs = list(dict.fromkeys(scores["run"]))
    mats = {t: _matrix(scores, measure, c)[runs] for t, c in TRANSFORM_COLUMNS.items()
            if c in scores and scores.loc[scores["measure"] == measure, c].notna().any()}
    out = pd.DataFrame(index=runs)
    for t in ("raw", "unq"):
        if t in mats:
            means = mats[t].mean()
            out[f"{t}_mean"] = means
            out[f"{t}_rank"] = means.round(8).rank(ascending=False, method="min").astype(int)
    if "unq" in mats:
        ci = [DescrStatsW(mats["unq"][r].to_numpy()).tconfint_mean(alpha=0.05) for r in runs]
        out["ci_low"], out["ci_high"] = [max(c[0], 0.0) for c in ci], [min(c[1], 1.0) for c in ci]
    pairs = [(a, baseline) for a in runs if a != baseline] if baseline else \
        [(runs[i], runs[j]) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    decisions = {}
    for t, m in mats.items():
        if tested is not None and t not in tested:
            continue
        means = {r: m[r].mean() for r in runs}          # pandas: NaN left out
        # scipy's ttest_rel of every pair at once (one column a pair); equal columns: p = 1
        index = {r: i for i, r in enumerate(runs)}
        values = m[runs].to_numpy()
        x = values[:, [index[a] for a, _ in pairs]]
        y = values[:, [index[b] for _, b in pairs]]
        same = np.all(x == y, axis=0)
        p = np.ones(len(pairs))
        if (~same).any():
            p[~same] = stats.ttest_rel(x[:, ~same], y[:, ~same], axis=0).pvalue
        adj = p if correction == "none" else multipletests(p, alpha=alpha, method=correction)[1]
        d = [int(np.sign(means[a] - means[b])) if q <= alpha else 0 for (a, b), q in zip(pairs, adj)]
        decisions[t] = (adj, np.array(d))
    return out, pairs, decisions


@pytest.fixture(scope="module")
def trec8_board(tmp_path_factory):
    qrels, runs = _trec8_runs(12)
    store = tmp_path_factory.mktemp("board") / "t.h5"
    baseline = "CL99SD"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        board = irscale.compare(qrels, runs, "AP@10,P@10,map", baseline=baseline, store=store)
        scores = irscale.transform(qrels, runs, "AP@10,P@10,map", store, standardize="all")
    return board, scores, baseline


def test_means_ranks_and_intervals_match_pandas_and_statsmodels(trec8_board):
    board, scores, baseline = trec8_board
    for measure in ("AP@10", "P@10", "AP@1000"):
        ref, _, _ = _reference(scores, measure, baseline)
        got = board.table[board.table["measure"] == measure].set_index("run").loc[ref.index]
        np.testing.assert_allclose(got["raw_mean"], ref["raw_mean"], rtol=0, atol=1e-12)
        assert (got["raw_rank"].astype(int) == ref["raw_rank"]).all()
        if measure == "AP@1000":          # map: no scale; its scaled columns are empty
            assert got["scaled_mean"].isna().all() and got["ci_low"].isna().all()
            continue
        np.testing.assert_allclose(got["scaled_mean"], ref["unq_mean"], rtol=0, atol=1e-12)
        assert (got["scaled_rank"].astype(int) == ref["unq_rank"]).all()
        np.testing.assert_allclose(got["ci_low"], ref["ci_low"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(got["ci_high"], ref["ci_high"], rtol=0, atol=1e-12)


@pytest.mark.slow      # about 4 s
def test_significance_against_the_baseline_matches_scipy_and_holm(trec8_board):
    board, scores, baseline = trec8_board
    for measure in ("AP@10", "P@10", "AP@1000"):
        _, pairs, dec = _reference(scores, measure, baseline)
        got = board.table[board.table["measure"] == measure].set_index("run")
        names = [a for a, _ in pairs]
        main = "unq" if "unq" in dec else "raw"
        np.testing.assert_allclose(got.loc[names, "p_value"].to_numpy(float), dec[main][0], rtol=1e-9, atol=1e-12)
        assert got.loc[names, "decision"].astype(int).tolist() == dec[main][1].tolist()
        np.testing.assert_allclose(got.loc[names, "raw_p_value"].to_numpy(float), dec["raw"][0], rtol=1e-9,
                                   atol=1e-12)
        assert got.loc[names, "raw_decision"].astype(int).tolist() == dec["raw"][1].tolist()
        assert pd.isna(got.loc[baseline, "decision"])
        if main == "raw":
            assert got.loc[names, "differs"].isna().all()
            continue
        assert got.loc[names, "differs"].astype(bool).tolist() == (dec["unq"][1] != dec["raw"][1]).tolist()
        every = np.stack([d for _, d in dec.values()])
        assert got.loc[names, "scale_free"].astype(bool).tolist() == (every == every[0]).all(axis=0).tolist()
    assert board.transforms == ("raw", "unq", "zscore", "zscore-cdf", "std-linear", "ecdf")


def test_a_measure_without_scale_is_said_loudly_with_its_raw_columns(trec8_board):
    board, _, _ = trec8_board
    [summary] = [s for s in board.measures if s.measure == "AP@1000"]
    assert summary.label == "map" and not summary.scaled and "N = 32" in summary.reason
    assert [s.scaled for s in board.measures] == [True, True, False]
    text = str(board)
    assert "NO SCALE for map" in text
    assert all(len(line) <= 100 for line in text.splitlines())


@pytest.mark.slow
def test_every_pair_of_all_trec8_runs_matches_scipy_and_holm(tmp_path):
    qrels, runs = _trec8_runs(129)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        board = irscale.compare(qrels, runs, "P@10", store=tmp_path / "t.h5")
        scores = irscale.transform(qrels, runs, "P@10", tmp_path / "t.h5")
    ref, pairs, dec = _reference(scores, "P@10", None, tested=("unq",))     # 8256 pairs: the decisions checked
    got = board.pairs.set_index(["a", "b"]).loc[pairs]
    np.testing.assert_allclose(got["p_value"].to_numpy(float), dec["unq"][0], rtol=1e-9, atol=1e-12)
    assert got["decision"].astype(int).tolist() == dec["unq"][1].tolist()
    table = board.table.set_index("run")
    for run in ref.index:
        wins = sum(1 for (a, b), d in zip(pairs, dec["unq"][1]) if (a == run and d > 0) or (b == run and d < 0))
        losses = sum(1 for (a, b), d in zip(pairs, dec["unq"][1]) if (a == run and d < 0) or (b == run and d > 0))
        assert (table.loc[run, "wins"], table.loc[run, "losses"]) == (wins, losses)


# -- synthetic files: every path runs without the shared data --------------------------------------
@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from test_readme import write_trec_files
    folder = tmp_path_factory.mktemp("synthetic")
    write_trec_files(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        scores = irscale.transform(folder / "qrels.txt", folder / "runs", "AP@10,P@10,RR@10",
                                   folder / "t.h5", build_missing=True, standardize="all")
    return folder, scores


@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_every_pair_with_each_correction(synthetic, correction):
    _, scores = synthetic
    board = leaderboard(scores.drop(columns=["zscore", "zscore_cdf", "std_linear", "ecdf"]),
                        correction=correction)
    for measure in ("AP@10", "P@10", "RR@10"):
        _, pairs, dec = _reference(scores, measure, None, correction={"bh": "fdr_bh"}.get(correction, correction))
        got = board.pairs[board.pairs["measure"] == measure].set_index(["a", "b"]).loc[pairs]
        np.testing.assert_allclose(got["p_value"].to_numpy(float), dec["unq"][0], rtol=1e-9, atol=1e-12)
        assert got["decision"].astype(int).tolist() == dec["unq"][1].tolist()
        every = np.stack([d for _, d in dec.values()])
        assert got["scale_free"].astype(bool).tolist() == (every == every[0]).all(axis=0).tolist()


def test_randomised_tukey_needs_no_correction(synthetic):
    _, scores = synthetic
    board = leaderboard(scores, test="tukey-hsd", correction="holm", permutations=200, seed=3)
    assert board.correction == "none"
    from irscale.scales.analysis.inference import randomised_tukey_hsd
    m = _matrix(scores, "AP@10", "scaled")[list(dict.fromkeys(scores["run"]))]
    expected = randomised_tukey_hsd(m.to_numpy(), permutations=200, seed=3)
    got = board.pairs[board.pairs["measure"] == "AP@10"]["p_value"].to_numpy()
    np.testing.assert_array_equal(got, expected)


def test_outputs_hold_the_same_numbers(synthetic, tmp_path):
    folder, scores = synthetic
    board = leaderboard(scores, baseline="input.b")
    for suffix in (".csv", ".md", ".tex", ".json", ".txt"):
        board.save(tmp_path / f"b{suffix}")
    frame = board.to_dataframe()
    assert frame.index.tolist() == board.runs and frame.columns.nlevels == 2
    csv = pd.read_csv(tmp_path / "b.csv", index_col="run")
    np.testing.assert_allclose(csv["AP@10 scaled_mean"].to_numpy(), frame[("AP@10", "scaled_mean")].to_numpy())
    data = json.loads((tmp_path / "b.json").read_text())
    assert [m["measure"] for m in data["measures"]] == ["AP@10", "P@10", "RR@10"]
    assert len(data["systems"]) == 9 and data["baseline"] == "input.b"
    means = {(r["measure"], r["run"]): r["scaled_mean"] for r in data["systems"]}
    assert means[("P@10", "input.a")] == pytest.approx(frame.loc["input.a", ("P@10", "scaled_mean")])
    md = (tmp_path / "b.md").read_text()
    assert md.count("\n## ") == 3 and "| input.a |" in md
    tex = (tmp_path / "b.tex").read_text()
    assert r"\begin{tabular}" in tex and "input.a" in tex and r"\midrule" in tex
    assert board.to_latex() == tex


def test_bad_arguments_are_irscale_errors(synthetic):
    _, scores = synthetic
    with pytest.raises(IrscaleError, match="did you mean input.b"):
        leaderboard(scores, baseline="input.bb")
    with pytest.raises(IrscaleError, match="test must be one of"):
        leaderboard(scores, test="wilcoxon")
    with pytest.raises(IrscaleError, match="alpha"):
        leaderboard(scores, alpha=5)
    with pytest.raises(IrscaleError, match="no measure nDCG"):
        leaderboard(scores, measures=["nDCG@10"])
    with pytest.raises(IrscaleError, match="rb_scale"):
        leaderboard(pd.concat([scores, scores.assign(rb_scale="common")]))


def test_compare_builds_what_it_needs_into_the_default_store(synthetic, tmp_path, monkeypatch):
    folder, _ = synthetic
    monkeypatch.setenv("IRSCALE_STORE", str(tmp_path / "cache" / "tables"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        board = irscale.compare(folder / "qrels.txt", folder / "runs", "nDCG@10,P_5,recip_rank")
    assert board.store == str(tmp_path / "cache" / "tables")
    built = irscale.open_store(board.store)
    assert not built.has("P@5") and not built.has("RR@30")          # closed forms: nothing built
    assert [s.scale for s in board.measures][1:] == ["exact: closed form"] * 2
    labels = [(s.label, s.measure) for s in board.measures]
    assert labels == [("nDCG@10", "nDCG_trec@10"), ("P_5", "P@5"), ("recip_rank", "RR@30")]


def test_a_build_over_the_limit_asks_and_is_refused_without_an_answer(synthetic, tmp_path):
    folder, _ = synthetic
    asked = []
    with pytest.warns(IrscaleWarning, match="no scale for AP@24: building its scale would take"):
        board = irscale.compare(folder / "qrels.txt", folder / "runs", "AP@24,P@5", store=tmp_path / "t.h5",
                                max_build_seconds=0.0, confirm=lambda what: asked.append(what) or False)
    assert asked and "AP@24" in asked[0] and not (tmp_path / "t.h5").exists()
    [ap, p] = board.measures                      # the board shows both: AP@24 raw only, with the command
    assert not ap.scaled and "irscale build" in ap.reason and p.scaled


# -- hand-made scores: mid-ranks, topics left out, named marks, the tests offered -----------------
def _frame(runs=5, topics=10, measures=("AP@10", "P@10"), seed=0, spread=0.05):
    """A scores frame as transform writes it: raw and scaled per (run, topic, measure),
    systems of increasing quality, scaled a monotone (non-linear) map of raw."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in measures:
        base = rng.random(topics)
        for r in range(runs):
            raw = np.clip(base + spread * r + rng.normal(0, 0.1, topics), 0, 1)
            rows.append(pd.DataFrame({"run": f"run{r}", "topic": [f"t{t:02d}" for t in range(topics)], "measure": m,
                                      "raw": raw, "scaled": raw ** 3, "midrank": 1 + raw * 99, "n_runs": 100}))
    return pd.concat(rows, ignore_index=True)


def _quiet_board(scores, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        return leaderboard(scores, *args, **kwargs)


def _means_are_pandas_means(board, scores, topics):
    """The board's raw and scaled means are the pandas means of ``scores`` over every topic."""
    expected = scores.groupby(["measure", "run"])[["raw", "scaled"]].mean()
    got = board.table.set_index(["measure", "run"]).loc[expected.index]
    np.testing.assert_allclose(got["raw_mean"], expected["raw"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["scaled_mean"], expected["scaled"], rtol=0, atol=1e-12)
    assert (got["raw_mean"] > 0).all() and [s.topics for s in board.measures] == [topics] * len(board.measures)


def test_midranks_on_half_the_rows_leave_no_topic_out(tmp_path):
    scores = _frame()
    scores.loc[scores.index % 2 == 0, "midrank"] = np.nan         # half the rows: no mid-rank
    with pytest.warns(IrscaleWarning, match="mid-ranks left out of its scale-freeness decision"):
        board = leaderboard(scores)
    expected = scores.groupby(["measure", "run"])[["raw", "scaled"]].mean()
    got = board.table.set_index(["measure", "run"]).loc[expected.index]
    np.testing.assert_allclose(got["raw_mean"], expected["raw"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["scaled_mean"], expected["scaled"], rtol=0, atol=1e-12)
    assert (got["topics"] == 10).all() and all(s.topics == 10 and s.left_out == 0 for s in board.measures)
    assert all(s.midranks == "left out: 25 of its 50 rows with a scaled value have no mid-rank"
               for s in board.measures)
    assert "midrank" not in board.transforms
    assert "decision_midrank" not in board.pairs.columns
    # every row with a mid-rank: they decide, on the same topics
    full = _quiet_board(_frame())
    assert all(s.midranks == "used" for s in full.measures) and "midrank" in full.transforms
    assert "decision_midrank" in full.pairs.columns
    np.testing.assert_allclose(full.table["raw_mean"], board.table["raw_mean"], rtol=0, atol=1e-12)
    # as transform(empty_topics="zero") wrote them before: mid-rank 1 of 1 run on the topics
    # without relevant documents only, mid-ranks not asked for; AP's means were over that topic
    zero = _frame().assign(midrank=np.nan)
    empty = zero["topic"] == "t00"
    zero.loc[empty, ["raw", "scaled", "midrank", "n_runs"]] = [0.0, 0.0, 1.0, 1]
    with warnings.catch_warnings():
        warnings.simplefilter("error", IrscaleWarning)              # nothing to say: none were asked for
        board = leaderboard(zero)
    _means_are_pandas_means(board, zero, topics=10)
    assert board.measures[0].midranks == "left out: 45 of its 50 rows with a scaled value have no mid-rank"


def test_empty_topics_zero_keeps_every_topic_in_the_means(synthetic, tmp_path):
    """A topic without relevant documents, scored 0 (trec_eval's convention): every topic
    in the means, as pandas gives them, with mid-ranks or without."""
    folder, _ = synthetic
    qrels = (folder / "qrels.txt").read_text() + "".join(f"409 0 D{d:03d} 0\n" for d in range(10))
    (tmp_path / "qrels.txt").write_text(qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        scores = irscale.transform(tmp_path / "qrels.txt", folder / "runs", "AP@10,P@10", folder / "t.h5",
                                   empty_topics="zero", missing_topics="zero")
    assert scores["topic"].nunique() == 9
    board = _quiet_board(scores)
    _means_are_pandas_means(board, scores, topics=9)
    assert not any("mid-ranks" in n for n in board.notes)            # not asked for: not said
    without = scores
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        scores = irscale.transform(tmp_path / "qrels.txt", folder / "runs", "AP@10,P@10", folder / "t.h5",
                                   empty_topics="zero", missing_topics="zero", midranks=True)
    board = _quiet_board(scores)
    assert [(s.topics, s.midranks) for s in board.measures] == [(9, "used"), (9, "used")]
    assert "midrank" in board.transforms
    _means_are_pandas_means(board, without, topics=9)                 # the means of the scores without mid-ranks


def test_topics_left_out_are_said_in_every_title(tmp_path):
    scores = _frame()
    scores.loc[(scores["measure"] == "AP@10") & (scores["topic"] == "t03") & (scores["run"] == "run1"),
               "scaled"] = np.nan
    with pytest.warns(IrscaleWarning, match="1 topic"):
        board = leaderboard(scores)
    ap = board.measures[0]
    assert (ap.topics, ap.left_out, ap.left_out_why) == (9, 1, "no scaled value")
    kept = scores[(scores["measure"] == "AP@10") & (scores["topic"] != "t03")]
    expected = kept.groupby("run")[["raw", "scaled"]].mean()         # raw and scaled: the same topics
    got = board.table[board.table["measure"] == "AP@10"].set_index("run").loc[expected.index]
    np.testing.assert_allclose(got["raw_mean"], expected["raw"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["scaled_mean"], expected["scaled"], rtol=0, atol=1e-12)
    title = "AP@10 · 9 topics (1 left out: no scaled value)"
    assert title in str(board).splitlines()
    assert f"## {title}" in board.to_markdown().splitlines()
    assert "AP@10: 9 topics (1 left out: no scaled value)" in board.to_latex()
    data = board.to_dict()
    assert data["measures"][0]["title"] == title and data["measures"][0]["left_out_why"] == "no scaled value"
    assert data["measures"][1]["title"] == "P@10 · 10 topics"
    scores.loc[(scores["measure"] == "AP@10") & (scores["topic"] == "t05") & (scores["run"] == "run2"),
               "raw"] = np.nan
    board = _quiet_board(scores)
    assert board.measures[0].left_out_why == "1 no value, 1 no scaled value"
    assert "AP@10 · 8 topics (2 left out: 1 no value, 1 no scaled value)" in str(board).splitlines()


def test_marks_name_their_pairs_in_markdown_latex_and_json(tmp_path):
    scores = _frame(runs=6, topics=30, seed=4, spread=0.04)
    board = _quiet_board(scores, measures=["AP@10"])
    marked = board.pairs[board.pairs["differs"].astype(bool)]
    loose = board.pairs[~board.pairs["scale_free"].astype(bool)]
    assert len(marked) and len(loose), "the frame must give both marks"
    board.save(tmp_path / "b.json")
    data = json.loads((tmp_path / "b.json").read_text())
    for record in data["systems"]:
        run = record["run"]
        for key, rows in (("differs_vs", marked), ("not_scale_free_vs", loose)):
            want = set(rows.loc[rows["a"] == run, "b"]) | set(rows.loc[rows["b"] == run, "a"])
            assert set(record[key]) == want and len(record[key]) == len(want), (run, key)
        assert len(record["differs_vs"]) == record["differs"]
        assert len(record["not_scale_free_vs"]) == record["not_scale_free"]
    md = board.to_markdown()
    tex = board.to_latex()
    for record in data["systems"]:
        if record["differs_vs"]:
            cell = f"†{len(record['differs_vs'])} vs {', '.join(record['differs_vs'])}"
            row = next(line for line in md.splitlines() if f"| {record['run']} |" in line)
            assert cell in row, (cell, row)
            assert f"+ vs {', '.join(record['differs_vs'])}" in tex
    assert all(len(line) <= 100 for line in str(board).splitlines())          # the terminal counts
    # with a baseline: the pair with the baseline, the baseline named in the JSON
    base = _quiet_board(scores, measures=["AP@10"], baseline="run0")
    for record in base.to_dict()["systems"]:
        assert record["differs_vs"] == (["run0"] if record["differs"] else [])
        assert record["not_scale_free_vs"] == (["run0"] if record["scale_free"] is False else [])


def _wilcoxon(x, y):
    """SciPy's p-value on the differences rounded to 12 decimals: equal differences of
    scaled scores ((rank - 1)/(k - 1), not exact in binary) tie, as irscale ties them."""
    d = np.round(x - y, 12)
    return 1.0 if np.all(d == 0) else stats.wilcoxon(d, zero_method="wilcox").pvalue


@pytest.mark.parametrize("frame", ["synthetic", "hand-made"])
def test_signrank_with_benjamini_hochberg_matches_scipy_and_statsmodels(synthetic, frame):
    scores = synthetic[1] if frame == "synthetic" else _frame(runs=6, topics=30, seed=4)
    runs = list(dict.fromkeys(scores["run"]))
    board = _quiet_board(scores, test="signrank", correction="bh")
    for measure in dict.fromkeys(scores["measure"]):
        for column, p_col in (("scaled", "p_value"), ("raw", "raw_p_value")):
            m = _matrix(scores, measure, column)[runs]
            pairs = [(runs[i], runs[j]) for i in range(len(runs)) for j in range(i + 1, len(runs))]
            p = np.array([_wilcoxon(m[a].to_numpy(), m[b].to_numpy()) for a, b in pairs])
            want = multipletests(p, method="fdr_bh")[1]
            got = board.pairs[board.pairs["measure"] == measure].set_index(["a", "b"]).loc[pairs, p_col]
            np.testing.assert_allclose(got.to_numpy(float), want, rtol=1e-9, atol=1e-12)
    assert "Wilcoxon signed-rank test between every pair of systems, Benjamini-Hochberg" in str(board)


def _permutation_p(x, y, resamples=np.inf):
    return stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
                                  n_resamples=resamples, alternative="two-sided").pvalue


def test_randomisation_test_in_the_leaderboard_matches_scipy(synthetic):
    _, scores = synthetic                              # 8 topics: 256 sign patterns, enumerated
    runs = list(dict.fromkeys(scores["run"]))
    board = _quiet_board(scores, test="randomisation", correction="none", permutations=1000)
    assert board.test == "randomisation" and board.correction == "none" and board.permutations == 1000
    assert str(board).startswith("Leaderboard of 3 runs: Fisher's randomisation test between every pair")
    for measure in ("AP@10", "P@10", "RR@10"):
        m = _matrix(scores, measure, "scaled")[runs]
        pairs = [(runs[i], runs[j]) for i in range(len(runs)) for j in range(i + 1, len(runs))]
        want = [_permutation_p(m[a].to_numpy(), m[b].to_numpy()) for a, b in pairs]
        got = board.pairs[board.pairs["measure"] == measure].set_index(["a", "b"]).loc[pairs, "p_value"]
        np.testing.assert_allclose(got.to_numpy(float), want, rtol=1e-12, atol=0)
    held = _quiet_board(scores, test="randomisation", baseline="input.b")   # corrected as the others
    assert held.correction == "holm"
    data = held.to_dict()
    assert data["test"] == "randomisation" and data["permutations"] == 1000 and data["seed"] == 0
    assert _quiet_board(scores).to_dict()["permutations"] is None


def test_latex_says_which_packages_it_needs(synthetic):
    tex = _quiet_board(synthetic[1], baseline="input.b").to_latex()
    first = tex.splitlines()[:2]
    assert all(line.startswith("%") for line in first)
    assert r"\usepackage{booktabs}" in first[0] and r"\usepackage{amssymb}" in first[1]


def test_the_board_keeps_its_scores(synthetic):
    _, scores = synthetic
    board = _quiet_board(scores, measures=["P@10", "RR@10"])
    pd.testing.assert_frame_equal(board.scores, scores[scores["measure"].isin(["P@10", "RR@10"])])
    assert set(board.matrices) == {"P@10", "RR@10"} and board.matrices["P@10"]["raw"].shape == (8, 3)
