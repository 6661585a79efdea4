"""`irscale analyze` on partly scaled scores: measures without a scale (e.g.
AP@40, beyond the tables' N) or without mid-ranks are left out of what needs them, loudly,
and analysed under what they allow; the figures of runs of length 4 follow the measures
analysed."""
import random
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import irscale
from irscale.cli import main
from irscale.errors import IrscaleError, IrscaleWarning
from irscale.scales.analysis.analyze import analyze
from irscale.scales.measures.measure import MAX_N

SCALED = ("AP@5", "P@5", "nDCG(b=2)@5")
NO_SCALE = "AP@40"                     # raw scores only: AP's scales stop at N = 32
STANDARDISED = {"raw", "zscore", "zscore-cdf", "std-linear", "ecdf"}


@pytest.fixture(scope="module")
def partly(tmp_path_factory):
    """6 runs x 6 topics; AP@5, P@5, nDCG(b=2)@5 and Twist@6 scaled with mid-ranks,
    AP@40 raw only; the store and the scores (DataFrame and file)."""
    tmp = tmp_path_factory.mktemp("partly")
    rng = random.Random(5)
    topics, docs = [str(400 + t) for t in range(6)], [f"D{d}" for d in range(12)]
    qrels = []
    for i, t in enumerate(topics):
        rel = set(rng.sample(docs, 2 if i % 2 else 3))
        qrels += [f"{t} 0 {d} {int(d in rel)}" for d in docs]
    (tmp / "qrels.txt").write_text("\n".join(qrels) + "\n")
    runs = []
    for s in range(6):
        path = tmp / f"sys{s}.run"
        path.write_text("".join(f"{t} Q0 {d} {k + 1} {20 - k} sys{s}\n"
                                for t in topics for k, d in enumerate(rng.sample(docs, 8))))
        runs.append(path)
    store = tmp / "t.h5"
    irscale.build_store(store, ",".join(SCALED), n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)         # "no scale for AP@40"
        scores = irscale.transform(tmp / "qrels.txt", runs, ",".join(SCALED + (NO_SCALE, "Twist@6")), store,
                                   midranks=True, build_missing=True)
    assert scores[scores.measure == NO_SCALE].scaled.isna().all()
    assert scores[scores.measure != NO_SCALE].scaled.notna().all()
    path = tmp / "s.parquet"
    irscale.write_scores(scores, path)
    return tmp, store, scores, path


def _analyze(scores, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = analyze(scores, permutations=20, resamples=20, **kw)
    return result, [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]


def _cli(argv, capsys):
    capsys.readouterr()
    status = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err.strip().splitlines()


def test_unscaled_measure_left_out_of_raw_vs_scaled_loudly(partly):
    _, _, scores, _ = partly
    result, caught = _analyze(scores)
    analysed = set(SCALED) | {"Twist@6"}
    assert set(result.tau_scaled.measure) == analysed
    assert set(result.significance.measure) == analysed
    assert NO_SCALE not in set(result.tau_measures.measure_a) | set(result.tau_measures.measure_b)
    assert result.tau_scaled.tau_unq.notna().all() and result.tau_scaled.tau_midrank.notna().all()
    said = [w for w in caught if NO_SCALE in w]
    assert len(said) == 1 and "scaled" in said[0] and "N = 32" in said[0], caught
    left = {(r["measure"], r["lacks"]) for r in result.meta["left_out"]}
    assert left == {(NO_SCALE, "scaled")}
    assert result.meta["measures"] == list(dict.fromkeys(scores.measure))


def test_unscaled_measure_compared_under_the_transforms_it_allows(partly):
    _, _, scores, _ = partly
    result, _ = _analyze(scores, tests=("ttest", "sign"))
    under = result.inference.groupby("measure")["transform"].agg(set)
    assert under[NO_SCALE] == STANDARDISED
    for m in SCALED:        # a measure without mid-ranks must not take midrank away from the others
        assert under[m] == STANDARDISED | {"unq", "midrank"}
    c = result.conclusions.set_index(["measure", "test"])
    assert np.isnan(c.loc[(NO_SCALE, "ttest"), "changed_unq"])
    assert c.loc[("AP@5", "ttest"), "changed_unq"] >= 0
    # the raw-only measure's decisions are those of its own raw scores
    raw = scores[scores.measure == NO_SCALE].pivot(index="topic", columns="run", values="raw")
    from irscale.scales.analysis.significance import pairwise_significance
    assert c.loc[(NO_SCALE, "ttest"), "significant_raw"] == pairwise_significance(raw.to_numpy(), ("ttest",))[
        "ttest"].sum()
    assert c.loc[(NO_SCALE, "sign"), "scale_free"] == c.loc[(NO_SCALE, "sign"), "pairs"]


def test_midranks_missing_for_one_measure(partly):
    _, _, scores, _ = partly
    no_mid = scores[scores.measure != NO_SCALE].copy()
    no_mid.loc[no_mid.measure == "P@5", "midrank"] = np.nan
    result, caught = _analyze(no_mid, tests=("ttest",))
    tau = result.tau_scaled.set_index("measure")
    assert np.isnan(tau.loc["P@5", "tau_midrank"]) and not np.isnan(tau.loc["AP@5", "tau_midrank"])
    said = [w for w in caught if "P@5" in w]
    assert len(said) == 1 and "mid-rank" in said[0] and "--midranks" in said[0], caught
    under = result.inference.groupby("measure")["transform"].agg(set)
    assert "midrank" not in under["P@5"] and {"midrank", "unq"} <= under["AP@5"]
    assert ("P@5", "midrank") in {(r["measure"], r["lacks"]) for r in result.meta["left_out"]}


def test_no_scaled_values_at_all_is_one_clear_error(partly):
    _, _, scores, _ = partly
    raw = scores.assign(rank=pd.NA, k=pd.NA, scaled=np.nan, midrank=np.nan)
    with pytest.raises(IrscaleError) as err:
        analyze(raw[raw.measure.isin(["AP@5", NO_SCALE])], transforms="none")
    message = str(err.value)
    assert "no scaled values" in message and "--store" in message
    assert "AP@5" in message and NO_SCALE in message and "N = 32" in message


def _table(report: str, heading: str) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the first markdown table after a heading that contains
    ``heading``."""
    lines = report.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("#") and heading in line)
    start = next(i for i in range(at, len(lines)) if lines[i].startswith("|"))
    table = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        table.append([c.strip() for c in line.strip("|").split("|")])
    return table[0], table[2:]


def test_cli_report_says_what_is_left_out(partly, tmp_path, capsys):
    tmp, _, scores, _ = partly
    mixed = pd.concat([scores[scores.measure != NO_SCALE],
                       scores[scores.measure == "P@5"].assign(measure="R@5", rank=pd.NA, k=pd.NA, scaled=np.nan,
                                                              midrank=np.nan, n_runs=pd.NA)], ignore_index=True)
    path = tmp_path / "mixed.csv"
    irscale.write_scores(mixed, path)
    out = tmp_path / "rep"
    status, err = _cli(["analyze", str(path), "--out", str(out), "-q", "--tests", "ttest,sign",
                        "--permutations", "20", "--resamples", "20"], capsys)
    assert status == 0, err
    warned = [line for line in err if "R@5" in line]
    assert len(warned) == 1 and warned[0].startswith("irscale: warning: "), err
    report = (out / "report.md").read_text()
    left = next(line for line in report.splitlines() if line.startswith("**Left out.**"))
    assert "R@5" in left and "`scaled` column is empty" in left
    header, _ = _table(report, "Kendall tau between each measure and its scaled version")
    assert "AP" in header and "R" not in header
    # sections 7-9: R has no unq or midrank value, shown as a dash, never as 0
    header, rows = _table(report, "share of the other runs' per-topic scores")
    r = header.index("R")
    cells = {row[0]: row[r] for row in rows}
    assert cells["`unq`"] == cells["`midrank`"] == "–" and cells["`zscore`"] != "–"
    header, rows = _table(report, "significant pairs")
    r = header.index("R")
    unq = [row for row in rows if row[1] == "`unq`"]
    assert unq and all(row[r] == "–" for row in unq)
    assert all(row[r] != "–" for row in rows if row[1] == "`zscore`")
    assert re.search(r"R is compared under `raw`, `zscore`, `zscore-cdf`, `std-linear`, `ecdf` only", report)


def test_cli_all_raw_is_one_line(partly, tmp_path, capsys):
    _, _, scores, _ = partly
    path = tmp_path / "raw.csv"
    irscale.write_scores(scores[scores.measure == NO_SCALE], path)
    status, err = _cli(["analyze", str(path), "--out", str(tmp_path / "o"), "-q"], capsys)
    assert status == 2 and len(err) == 1 and err[0].startswith("irscale: error: "), err
    assert NO_SCALE in err[0] and "--store" in err[0]


def test_cli_figures_follow_the_measures_analysed(partly, tmp_path, capsys):
    _, store, scores, _ = partly
    path = tmp_path / "s.csv"
    irscale.write_scores(scores[scores.measure != NO_SCALE], path)
    out = tmp_path / "rep"
    status, err = _cli(["analyze", str(path), "--out", str(out), "-q", "--tests", "none", "--transforms", "none",
                        "--stores", str(store)], capsys)
    assert status == 0, err
    report = (out / "report.md").read_text()
    caption = next(line for line in report.splitlines() if line.startswith("![Runs of length 4"))
    assert "](runs-length4.png)" in caption
    for m in ("AP@4", "P@4", "nDCG(b=2)@4"):
        assert m in caption
    assert "RBP" not in caption and "DCG(b=2)@4" not in caption.replace("nDCG(b=2)@4", "")
    note = report.split("](runs-length4.png)", 1)[1]
    assert "Left out: Twist@6 (per-topic tables" in note.split("![", 1)[0]
    assert "](hasse4.png)" in report
    assert (out / "runs-length4.png").read_bytes().startswith(b"\x89PNG")


def test_transform_figure_of_an_unscaled_measure_has_no_empty_unq_panel(partly):
    from irscale.scales.analysis.figures import transform_figure_data
    _, _, scores, _ = partly
    data = transform_figure_data(scores, NO_SCALE, ["raw", "unq", "midrank", "zscore", "ecdf"])
    assert data["topics"] and all(set(v) == {"raw", "zscore", "ecdf"} for v in data["topics"].values())
    data = transform_figure_data(scores, "AP@5", ["raw", "unq", "zscore"])
    assert all(set(v) == {"raw", "unq", "zscore"} for v in data["topics"].values())


def test_cli_report_links_the_leaderboard(partly, tmp_path, capsys):
    """The research report links the leaderboard of the same scores (which systems are
    best), written beside it as irscale.leaderboard computes it."""
    _, _, scores, path = partly
    out = tmp_path / "rep"
    status, err = _cli(["analyze", str(path), "--out", str(out), "-q", "--tests", "ttest", "--permutations", "0",
                        "--resamples", "0", "--baseline", "sys0"], capsys)
    assert status == 0, err
    assert "[leaderboard.md](leaderboard.md)" in (out / "report.md").read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        board = irscale.leaderboard(scores, baseline="sys0")
    assert (out / "leaderboard.md").read_text() == board.to_markdown()
    written = pd.read_csv(out / "leaderboard.csv", index_col="run")
    assert written["P@5 scaled_mean"].round(12).tolist() == board.to_dataframe()[("P@5", "scaled_mean")].round(
        12).tolist()
    reason = irscale.parse_measure(NO_SCALE).scales_reason()              # the measure's own reason
    assert reason and str(MAX_N) in reason
    assert f"NO SCALE for {NO_SCALE}: {reason}" in board.to_markdown()
