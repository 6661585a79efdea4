"""Bounded scales where users meet them: transform, compare and lookup with ``bounded``
(``--bounded``, ``--error``): the interval columns scaled_lo and scaled_hi, the scaled value
their midpoint, what outputs say, and what stays unscaled (and is said)."""
import warnings

import numpy as np
import pandas as pd
import pytest

import irscale
from irscale.cli import main
from irscale.errors import IrscaleError
from irscale.scales.runs.scores import BOUND_COLUMNS, bounded_columns, read_scores, write_scores
from irscale.scales.tables import bounded as bd
from irscale.scales.tables import bounded_grid, bounded_problem
from irscale.scales.tables.bounded_scales import BoundedScales

DEPTH = 60


def _data(folder, graded=False, seed=0):
    """qrels.txt and runs/ (3 runs, 5 topics, DEPTH documents each with distinct scores):
    returns their paths and the judged grades per (run, topic), in ranked order."""
    rng = np.random.default_rng(seed)
    relevant = {"1": 3, "2": 8, "3": 15, "4": 70, "5": 1}
    qrels, grade = [], {}
    for topic, count in relevant.items():
        for i in range(count):
            level = int(rng.integers(1, 3)) if graded else 1
            if graded and topic == "4":
                level = 2 if i < 50 else 1             # counts (20, 50): only grade 1 bounded at N = 45
            qrels.append(f"{topic} 0 d{topic}-{i} {level}")
            grade[(topic, f"d{topic}-{i}")] = level
        qrels.append(f"{topic} 0 d{topic}-none 0")
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (folder / "runs").mkdir()
    judged = {}
    for run in ("a", "b", "c"):
        lines = []
        for topic, count in relevant.items():
            pool = [f"d{topic}-{i}" for i in range(count)] + [f"x{topic}-{i}" for i in range(DEPTH)]
            docs = list(rng.permutation(pool)[:DEPTH])
            for rank, doc in enumerate(docs, 1):
                lines.append(f"{topic} Q0 {doc} {rank} {DEPTH - rank + 0.5} {run}")
            judged[(run, topic)] = np.array([grade.get((topic, d), 0) for d in docs], np.uint8)
        (folder / "runs" / f"{run}.txt").write_text("\n".join(lines) + "\n")
    return folder / "qrels.txt", folder / "runs", judged


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    return out, [str(w.message) for w in said]


def test_intervals_hold_the_exact_scaled_values(tmp_path, monkeypatch):
    """At N = 20, where exact scales exist, bounded scales forced on the same runs give
    intervals that contain every exact scaled value, of the width asked for."""
    qrels, runs, _ = _data(tmp_path)
    measures = "DCG(b=2)@20,nDCG(b=2)@20,RBP(p=0.8)@20"
    exact, _ = _quiet(irscale.transform, qrels, runs, measures, tmp_path / "s.h5", build_missing=True)
    monkeypatch.setattr(BoundedScales, "covers", staticmethod(lambda m: m.bounded_scales))
    bounded, _ = _quiet(irscale.transform, qrels, runs, measures, tmp_path / "s.h5", bounded=True, error=1e-2)
    assert list(bounded.columns) == bounded_columns()
    assert (bounded[["run", "topic", "measure", "raw"]] == exact[["run", "topic", "measure", "raw"]]).all().all()
    lo, hi, want = bounded.scaled_lo.to_numpy(), bounded.scaled_hi.to_numpy(), exact.scaled.to_numpy()
    assert np.all((lo <= want) & (want <= hi))
    assert np.all(hi - lo <= 1e-2) and np.any(hi > lo)
    assert np.all(np.abs(bounded.scaled.to_numpy() - want) <= (hi - lo) / 2 + 1e-12)
    assert bounded.midrank.isna().all()                    # bounded scales list no mid-ranks


def test_transform_past_n40(tmp_path):
    qrels, runs, judged = _data(tmp_path)
    scores, said = _quiet(irscale.transform, qrels, runs, "DCG(b=2)@45,nDCG(b=2)@45,RBP(p=0.5)@45,P@45,AP@45",
                          bounded=True, error=1e-3)
    assert not list(tmp_path.glob("*.h5"))                 # bounded scales and closed forms: nothing stored
    assert list(scores.columns) == bounded_columns()
    assert any("AP@45" in s and "no exact or bounded scale" in s for s in said)
    assert not any("DCG" in s or "RBP" in s for s in said)
    ap = scores[scores.measure == "AP@45"]
    assert ap[["scaled", *BOUND_COLUMNS]].isna().all().all() and ap.raw.notna().all()
    p = scores[scores.measure == "P@45"]
    assert (p.scaled == p.scaled_lo).all() and (p.scaled == p.scaled_hi).all()
    for name in ("DCG(b=2)@45", "nDCG(b=2)@45", "RBP(p=0.5)@45"):
        rows = scores[scores.measure == name]
        assert rows.scaled.notna().all() and rows["rank"].notna().all()
        lo, hi = rows.scaled_lo.to_numpy(), rows.scaled_hi.to_numpy()
        k = rows.k.astype(float).to_numpy()
        # as asked, or a few ranks on scales of few values (rb = 1: 46 values)
        few = bounded_grid.FEW_RANKS / (k - 1)
        assert np.all((lo <= rows.scaled) & (rows.scaled <= hi) & (hi - lo <= np.maximum(1e-3, few)))
        assert np.all(np.abs(rows.scaled - (rows["rank"].astype(float) - 1) / (k - 1)) <= 1 / (k - 1))
        m = irscale.parse_measure(name)
        for rb in rows.rb.unique():
            at = rows[rows.rb == rb]
            grades = np.stack([judged[(r, t)][:45] for r, t in zip(at.run, at.topic)])
            s = bd.bounded_scale(m, int(rb) if m.rb_dependent else None, error=1e-3)
            want_lo, want_hi = s.scaled_bounds_runs(grades)       # the scale itself, on the judged runs
            assert np.allclose(want_lo, at.scaled_lo, rtol=1e-12, atol=1e-300)
            assert np.allclose(want_hi, at.scaled_hi, rtol=1e-12, atol=1e-300)


def test_with_no_bounded_nothing_is_bounded_and_the_warning_says_how(tmp_path):
    qrels, runs, _ = _data(tmp_path)
    scores, said = _quiet(irscale.transform, qrels, runs, "DCG(b=2)@45,P@45", tmp_path / "s.h5", bounded=False)
    assert "scaled_lo" not in scores and scores.loc[scores.measure == "DCG(b=2)@45", "scaled"].isna().all()
    assert any("DCG" in s and "--bounded" in s for s in said)


def test_options_checked(tmp_path):
    qrels, runs, _ = _data(tmp_path)
    for error in (0, 1.5, -1e-3, True, "1e-3"):
        with pytest.raises(IrscaleError, match="error"):
            irscale.transform(qrels, runs, "DCG(b=2)@45", error=error)
    both, _ = _quiet(irscale.transform, qrels, runs, "DCG(b=2)@45,AP@6", bounded=True)    # AP: the default store
    assert both["scaled"].notna().all()
    scores, _ = _quiet(irscale.transform, qrels, runs, "RBP(p=0.5)@45", error=5e-2)   # error: bounded
    assert scores.scaled_lo.notna().all() and (scores.scaled_hi - scores.scaled_lo).max() <= 5e-2
    raw, _ = _quiet(irscale.transform, qrels, runs, "RBP(p=0.5)@45", raw_only=True, bounded=True)
    assert raw.scaled.isna().all()


def test_scores_files_keep_the_bounds(tmp_path):
    qrels, runs, _ = _data(tmp_path)
    scores, _ = _quiet(irscale.transform, qrels, runs, "RBP(p=0.5)@45,P@45", bounded=True, error=1e-2)
    for name in ("s.csv", "s.tsv.gz", "s.parquet"):
        write_scores(scores, tmp_path / name)
        back = read_scores(tmp_path / name)
        assert list(back.columns) == bounded_columns()
        assert np.allclose(back[BOUND_COLUMNS].to_numpy(float), scores[BOUND_COLUMNS].to_numpy(float), rtol=1e-15)


@pytest.mark.parametrize("states", [True, False])
def test_per_grade_counts_bounding_two_grades_get_bounded_scales_or_say_why(tmp_path, monkeypatch, states):
    """nDCG_trec with graded gains: a topic whose counts of both grades are below N gets a
    bounded scale of two count dimensions (tests/test_bounded_graded.py) whose interval holds
    its scaled value, every topic over antichain states; with kappa and mu's brackets only
    (``states`` False), where K's bracket leaves it far wider than asked (topics 2 and 3:
    counts of both grades a few of N = 45), no scaled value, said with the counts."""
    from irscale.scales.tables import bounded_states
    if not states:
        monkeypatch.setattr(bounded_states, "STATE_LIMIT", 1)
    bounded_problem.graded_problem.cache_clear()
    try:
        qrels, runs, _ = _data(tmp_path, graded=True)
        scores, said = _quiet(irscale.transform, qrels, runs, "nDCG_trec(gains=(0,1,2))@45", bounded=True,
                              error=1e-2)
    finally:
        bounded_problem.graded_problem.cache_clear()
    assert scores.raw.notna().all()
    scaled = scores[scores.scaled.notna()]
    want = {"1", "2", "3", "4", "5"} if states else {"1", "4", "5"}
    assert set(scaled.topic) == want and scores[~scores.topic.isin(want)].scaled.isna().all()
    assert np.all((scaled.scaled_lo <= scaled.scaled) & (scaled.scaled <= scaled.scaled_hi))
    if not states:
        assert any("nDCG_trec(gains=(0,1,2))@45" in s and "count vector" in s for s in said)


def test_cli_transform_compare_lookup(tmp_path, capsys):
    qrels, runs, _ = _data(tmp_path)
    out = tmp_path / "scores.csv"
    assert main(["transform", "--qrels", str(qrels), "--runs", str(runs), "-m", "RBP(p=0.5)@45,P_45",
                 "--bounded", "--error", "1e-2", "-o", str(out), "-q"]) == 0
    said = capsys.readouterr().out
    assert "bounded" in said and "closed form" in said
    scores = read_scores(out)
    assert list(scores.columns) == bounded_columns() and scores.scaled.notna().all()
    assert main(["transform", "--qrels", str(qrels), "--runs", str(runs), "-m", "RBP(p=0.5)@45", "--error", "0",
                 "-o", str(out), "-q"]) == 2
    # compare: the leaderboard's scaled means are the transform's, and it says they are bounded
    board, _ = _quiet(irscale.compare, qrels, runs, "RBP(p=0.5)@45,P@45", store=tmp_path / "s.h5", bounded=True,
                      error=1e-2)
    summary = {s.measure: s for s in board.measures}
    assert summary["RBP(p=0.5)@45"].scale.startswith("bounded") and summary["P@45"].scale.startswith("exact")
    rows = board.table[board.table.measure == "RBP(p=0.5)@45"].set_index("run")
    means = scores[scores.measure == "RBP(p=0.5)@45"].groupby("run").scaled.mean()
    assert np.allclose(rows.loc[means.index, "scaled_mean"], means, rtol=0, atol=1e-12)
    assert main(["compare", "--qrels", str(qrels), "--runs", str(runs), "-m", "RBP(p=0.5)@45", "--bounded",
                 "--store", str(tmp_path / "s.h5"), "-q"]) == 0
    assert "bounded" in capsys.readouterr().out
    # lookup: the intervals of bounded_scale, no store
    missing = tmp_path / "none.h5"
    assert main(["lookup", str(missing), "RBP(p=0.8)@60", "0.3", "0.7", "--error", "1e-3"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["value", "rank", "k", "scaled", "scaled_lo", "scaled_hi"]
    lo, hi = bd.bounded_scale("RBP(p=0.8)@60", error=1e-3).scaled_bounds([0.3, 0.7])
    assert [float(r[4]) for r in rows[1:]] == pytest.approx(lo, abs=1e-9)
    assert [float(r[5]) for r in rows[1:]] == pytest.approx(hi, abs=1e-9)
    assert all(float(r[4]) <= float(r[3]) <= float(r[5]) for r in rows[1:])
    assert main(["lookup", str(missing), "RBP(p=0.8)@60", "0.3", "--bounded", "--nearest"]) == 2
    assert main(["lookup", str(missing), "DCG(b=2)@60", "0.3", "--no-bounded"]) == 2
    assert "--bounded" in capsys.readouterr().err
    assert not missing.exists()


def test_means_of_bounded_scores_are_within_the_widest_half_interval(tmp_path):
    """What the leaderboard's header promises: a mean of midpoints is within half the widest
    interval of the mean of the exact values, whatever they are inside their intervals."""
    qrels, runs, _ = _data(tmp_path)
    scores, _ = _quiet(irscale.transform, qrels, runs, "DCG(b=2)@45", bounded=True, error=1e-2)
    rng = np.random.default_rng(0)
    half = float((scores.scaled_hi - scores.scaled_lo).max()) / 2
    for _ in range(100):
        anywhere = scores.scaled_lo + rng.random(len(scores)) * (scores.scaled_hi - scores.scaled_lo)
        gap = (pd.Series(anywhere).groupby(scores.run).mean() - scores.scaled.groupby(scores.run).mean()).abs()
        assert gap.max() <= half + 1e-12


def test_transform_takes_the_grids_of_a_store(tmp_path, monkeypatch):
    """``irscale build --layout bounded --qrels`` stores the grids a transform of those
    qrels needs; the transform then computes none and gives the same intervals."""
    qrels, runs, _ = _data(tmp_path)
    measures = "DCG(b=2)@45,nDCG(b=2)@45"
    assert main(["build", "-m", measures, "--layout", "bounded", "--qrels", str(qrels), "--error", "1e-2",
                 "--out", str(tmp_path / "s"), "-q"]) == 0
    computed, _ = _quiet(irscale.transform, qrels, runs, measures, bounded=True, error=1e-2)

    def no_counting(*args, **kwargs):
        raise AssertionError("a grid was computed")
    monkeypatch.setattr(bd, "count_grid", no_counting)
    stored, _ = _quiet(irscale.transform, qrels, runs, measures, tmp_path / "s", bounded=True, error=1e-2)
    pd.testing.assert_frame_equal(stored, computed)
