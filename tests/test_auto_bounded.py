"""Bounded scales taken without being asked for (``bounded=None``, the default): planned
before any is computed (:mod:`irscale.scales.tables.bounded_plan`), the narrowest error of
1e-4, 1e-3, 1e-2 that fits the build limit; else the measure is raw only, saying why."""
import warnings

import numpy as np
import pytest
from test_bounded_use import _data

import irscale
from irscale.cli import main
from irscale.scales.measures.parse import parse_measure
from irscale.scales.runs.evaluator import Evaluator
from irscale.scales.tables import bounded as bd
from irscale.scales.tables import bounded_grid, bounded_plan
from irscale.scales.tables.bounded_scales import BoundedScales
from irscale.scales.tables.closed import CLOSED_FORMS

MEASURES = "RBP(p=0.8)@60,nDCG(b=2)@50,P@10"


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = function(*args, **kwargs)
    return out, [str(w.message) for w in said]


def _coarse_probes(monkeypatch):
    """Probes so coarse that no error of the plan is reached without more grids."""
    monkeypatch.setattr(bounded_plan, "PROBE_CELLS", 16)


def test_taken_unasked_and_as_good_as_asked_for(tmp_path):
    qrels, runs, _ = _data(tmp_path)
    ev, said = _quiet(Evaluator, qrels, MEASURES, store=tmp_path / "s")
    auto = ev.evaluate(runs)
    for name in ("RBP(p=0.8)@60", "nDCG(b=2)@50"):
        m = parse_measure(name)
        plan = ev.bounded_plans[m]
        assert plan.error in bounded_plan.ERRORS and plan.reason is None
        rows = auto[auto.measure == name]
        assert rows.scaled.notna().all()
        assert ((rows.scaled_lo <= rows.scaled) & (rows.scaled <= rows.scaled_hi)).all()
        floor = np.maximum(plan.error, bounded_grid.FEW_RANKS / (rows.k.astype(float) - 1))   # a few ranks at least
        assert ((rows.scaled_hi - rows.scaled_lo) <= floor).all()
    assert not any("no scale" in s for s in said)
    asked, _ = _quiet(irscale.transform, qrels, runs, MEASURES, tmp_path / "s", bounded=True, error=1e-2)
    # both midpoints of intervals holding the exact scaled value: within half the two widths
    widths = (auto.scaled_hi - auto.scaled_lo + asked.scaled_hi - asked.scaled_lo) / 2
    assert (abs(auto.scaled - asked.scaled) <= widths + 1e-12).all()
    p10 = auto[auto.measure == "P@10"]
    assert (p10.scaled_lo == p10.scaled).all()          # an exact scale: its interval is its value


def test_plan_predicts_a_grid_that_reaches_the_error():
    """The last grid predicted from the probe reaches the chosen error, refined from the
    probe (which is kept: the scale's first grid is finer than the probe's)."""
    m = parse_measure("nDCG(b=2)@50")
    tables = BoundedScales(CLOSED_FORMS)
    [plan] = bounded_plan.plan_bounded(tables, {m: [3, 15]}, limit=None).values()
    assert plan.error == bounded_plan.ERRORS[0] and plan.seconds > 0 and plan.bytes > 0
    for rb in (3, 15):
        probe = tables.table(m, rb).stored[rb]
        scale = tables.scale(m, rb)
        target = max(plan.error, bounded_grid.FEW_RANKS / (scale.k - 1))        # a few ranks at least
        assert scale.error_bound <= target and scale.grid.scale >= probe.scale


def test_over_the_limit_the_measure_is_raw_and_says_how(tmp_path, monkeypatch):
    _coarse_probes(monkeypatch)
    qrels, runs, _ = _data(tmp_path)
    scores, said = _quiet(irscale.transform, qrels, runs, "nDCG(b=2)@50,P@10", tmp_path / "s",
                          max_build_seconds=0)
    rows = scores[scores.measure == "nDCG(b=2)@50"]
    assert rows.raw.notna().all() and rows.scaled.isna().all()
    assert scores[scores.measure == "P@10"].scaled.notna().all()
    [why] = [s for s in said if "nDCG" in s and "no scale" in s]
    assert "--bounded" in why and "limit" in why and len(why) < 300


def test_the_narrowest_error_that_fits():
    costs = [(1e-4, 100.0, 10), (1e-3, 10.0, 5), (1e-2, 1.0, 2)]
    assert bounded_plan.choose_error(costs, 200) == (1e-4, None)
    assert bounded_plan.choose_error(costs, 50) == (1e-3, None)
    assert bounded_plan.choose_error(costs, 50, max_bytes=4) == (1e-2, None)
    error, why = bounded_plan.choose_error(costs, 0.5)
    assert error is None and "1 s" in why
    error, why = bounded_plan.choose_error(costs, 1e9, max_bytes=1)
    assert error is None and "GiB" in why


def test_a_wider_error_is_said(tmp_path, monkeypatch):
    """An error narrower than any grid that fits memory (1e-12) is passed over for the next,
    and the warning says what the narrowest would take."""
    monkeypatch.setattr(bounded_plan, "ERRORS", (1e-12, 1e-2))
    qrels, runs, _ = _data(tmp_path)
    ev, said = _quiet(Evaluator, qrels, "nDCG(b=2)@50", store=tmp_path / "s")
    plan = ev.bounded_plans[parse_measure("nDCG(b=2)@50")]
    assert plan.error == 1e-2
    assert any("within 0.01" in s and "--error 1e-12" in s for s in said)
    scores = ev.evaluate(runs)
    floor = np.maximum(1e-2, bounded_grid.FEW_RANKS / (scores.k.astype(float) - 1))
    assert ((scores.scaled_hi - scores.scaled_lo) <= floor).all()


def test_turned_off(tmp_path):
    qrels, runs, _ = _data(tmp_path)
    for kwargs, words in (({"bounded": False}, "--bounded"), ({"build_missing": False}, "building")):
        scores, said = _quiet(irscale.transform, qrels, runs, "RBP(p=0.8)@60", tmp_path / "s", **kwargs)
        assert scores.scaled.isna().all() and "scaled_lo" not in scores
        assert any(words in s for s in said)


def test_cli_lookup_and_compare(tmp_path, capsys, monkeypatch):
    missing = tmp_path / "none.h5"
    assert main(["lookup", str(missing), "RBP(p=0.8)@60", "0.3", "0.7"]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0] == ["value", "rank", "k", "scaled", "scaled_lo", "scaled_hi"]
    lo, hi = bd.bounded_scale("RBP(p=0.8)@60").scaled_bounds([0.3, 0.7])    # the narrowest error fits
    for r, a, b in zip(rows[1:], lo, hi):       # two intervals holding the exact value, each of 1e-4 at most
        r_lo, r_hi = float(r[4]), float(r[5])
        assert r_lo <= b and a <= r_hi and r_hi - r_lo <= bounded_plan.ERRORS[0]
    qrels, runs, _ = _data(tmp_path)
    assert main(["compare", "--qrels", str(qrels), "--runs", str(runs), "-m", "RBP(p=0.8)@60",
                 "--store", str(tmp_path / "s"), "-q"]) == 0
    out = capsys.readouterr().out
    assert "bounded: scaled within" in out and "NO SCALE" not in out
    _coarse_probes(monkeypatch)
    monkeypatch.setattr("irscale.commands.lookup.MAX_BUILD_SECONDS", 0)
    assert main(["lookup", str(missing), "nDCG(b=2)@50", "--rb", "15", "0.3"]) == 2
    err = capsys.readouterr().err
    assert "--bounded" in err and "Traceback" not in err
    assert main(["lookup", str(missing), "nDCG(b=2)@50", "--rb", "15", "0.3", "--bounded", "--error", "1e-2"]) == 0
    assert not missing.exists()


@pytest.mark.parametrize("seed", [1, 2])
def test_auto_intervals_hold_exact_ranks_of_random_runs(seed):
    """The scale a plan leads to is a certified one: its intervals hold the exact ranks of
    rank oracles at N = 40, where both exist (bounded scales forced there)."""
    m = parse_measure("DCG(b=2)@40")
    tables = BoundedScales(CLOSED_FORMS)
    [plan] = bounded_plan.plan_bounded(tables, {m: [None]}, limit=30).values()
    assert plan.error is not None
    scale = tables.table(m, None).scale(None)
    exact = irscale.scale(m)
    rng = np.random.default_rng(seed)
    runs = rng.integers(0, 2, size=(200, 40)).astype(np.uint8)
    lo, hi = scale.rank_bounds_runs(runs)
    want = exact.rank_runs(runs)
    assert all(int(a) <= int(w) <= int(b) for a, w, b in zip(lo, want, hi))


def test_explain_says_every_scale_in_the_order_typed(tmp_path, capsys):
    qrels, runs, _ = _data(tmp_path)
    typed = ["RBP(p=0.8)@60", "AP@100", "P@10", "nDCG(b=2)@20", "AP@5"]
    ev, _ = _quiet(Evaluator, qrels, ",".join(typed), store=tmp_path / "s")
    _quiet(ev.evaluate, runs)
    said = ev.explain()
    assert list(said) == typed
    kinds = {name: what.split(":")[0] for name, what in said.items()}
    assert kinds == {"RBP(p=0.8)@60": "bounded", "AP@100": "raw only", "P@10": "exact", "nDCG(b=2)@20": "exact",
                     "AP@5": "exact"}
    assert "(built now)" in said["AP@5"] and str(tmp_path / "s") in said["AP@5"]
    assert main(["compare", "--qrels", str(qrels), "--runs", str(runs), "-m", ",".join(typed), "--store",
                 str(tmp_path / "s"), "--explain", "-q"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "scale of " in line]
    assert [line.split("scale of ")[1].split(": ")[0] for line in lines] == typed
    assert "trec_eval -c" in err and "(built now)" not in err        # built by the first: in the store now
    out = tmp_path / "o.csv"
    assert main(["transform", "--qrels", str(qrels), "--runs", str(runs), "-m", "AP@100,P@10", "--store",
                 str(tmp_path / "s"), "--out", str(out), "--explain", "-q"]) == 0
    assert len([line for line in capsys.readouterr().err.splitlines() if "scale of " in line]) == 2
