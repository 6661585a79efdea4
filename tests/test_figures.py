"""Figures (scales/figures.py): files are written; the Hasse diagram's edges are the cover
relation of the run order, computed here by brute force."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from naive import REFERENCES, all_runs, oracle  # noqa: E402

from irscale.scales.analysis import figures  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def check_written(paths, prefix):
    assert [str(p) for p in paths] == [f"{prefix}.png", f"{prefix}.svg"]
    png, svg = (open(p, "rb").read() for p in paths)
    assert png.startswith(PNG) and len(png) > 5000
    assert b"<svg" in svg[:2000] and len(svg) > 5000


def test_value_distributions_written(tmp_path):
    prefix = tmp_path / "sub" / "vd"
    calls = []

    def get_scale(name):
        calls.append(name)
        return figures.memory_scale(name)

    paths = figures.plot_value_distributions(get_scale, measures=("P", "RBP(p=0.8)", "DCG(b=2)", "AP"),
                                             ns=(3, 4, 5), out_prefix=prefix, points=50)
    check_written(paths, prefix)
    assert calls == [f"{m}@{n}" for m in ("P", "RBP(p=0.8)", "DCG(b=2)", "AP") for n in (3, 4, 5)]


def test_memory_scale_uses_common_rb():
    s = figures.memory_scale("AP@5")
    assert s.rb == 5
    assert figures.memory_scale("RR@5").rb is None


def test_runs_length4_written(tmp_path):
    prefix = tmp_path / "runs4"
    check_written(figures.plot_runs_length4(prefix), prefix)


def test_runs_length4_data():
    data = {d["name"]: d for d in figures.runs_length4_data()}
    assert set(data) == set(figures.RUN4_MEASURES)
    ap = data["AP"]
    assert ap["rb"] == 4 and ap["measure"] == "AP@4"
    runs = [tuple(r) for r in ap["runs"]]
    assert runs == all_runs(4) and ap["labels"][5] == "0101"
    for name, d in data.items():
        rb = d["rb"]
        _, vals, distinct, ranks = oracle(REFERENCES[name], 4, rb)
        assert d["k"] == len(distinct)
        assert d["ranks"].tolist() == ranks
        assert np.allclose(d["values"], [float(v) for v in vals], rtol=1e-13, atol=0)
        assert d["x_value"].min() == 0 and d["x_value"].max() == 1
        assert np.allclose(sorted(set(d["x_unq"].tolist())), np.linspace(0, 1, d["k"]))
    # P and RBP(p=0.5) are interval scales: value position == unq position
    for name in ("P", "RBP(p=0.5)"):
        assert np.allclose(data[name]["x_value"], data[name]["x_unq"], atol=1e-12)


def brute_covers(n):
    """Covers of a <= b iff prefix sums of a <= those of b, from the definition."""
    runs = list(itertools.product((0, 1), repeat=n))
    cs = {r: np.cumsum(r) for r in runs}

    def lt(a, b):
        return a != b and bool(np.all(cs[a] <= cs[b]))
    return {(a, b) for a in runs for b in runs
            if lt(a, b) and not any(lt(a, c) and lt(c, b) for c in runs)}


def moved_down_or_dropped(a, b):
    """a from b by moving relevant documents down or dropping them: an injection of a's
    relevant ranks into b's relevant ranks with every rank of a at or below its image."""
    ra = [k for k, x in enumerate(a) if x]
    rb = [k for k, x in enumerate(b) if x]
    return any(all(ka >= kb for ka, kb in zip(ra, sub)) for sub in itertools.combinations(rb, len(ra)))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_hasse_edges_are_the_covers(n):
    edges = {(a, b) for a, b, _ in figures.hasse_covers(n)}
    assert edges == brute_covers(n)
    runs = list(itertools.product((0, 1), repeat=n))
    for a in runs:             # the two definitions of the order agree
        for b in runs:
            assert figures.run_leq(a, b) == moved_down_or_dropped(a, b)


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_hasse_height_grows_by_one_per_cover(n):
    lay = figures.hasse_layout(n)
    assert len(lay["nodes"]) == 2 ** n
    assert max(lay["height"].values()) == n * (n + 1) // 2
    for a, b, kind in lay["covers"]:
        assert figures.run_height(b) == figures.run_height(a) + 1
        assert figures.run_leq(a, b) and not figures.run_leq(b, a)
        assert kind in ("up", "add")
    for r, (_x, y) in lay["pos"].items():
        assert y == lay["height"][r]
    xs = {}
    for r, (x, y) in lay["pos"].items():
        assert (x, y) not in xs
        xs[(x, y)] = r


def test_hasse_written(tmp_path):
    prefix = tmp_path / "hasse3"
    check_written(figures.plot_hasse(prefix, n=3), prefix)
    svg = open(f"{prefix}.svg").read()
    for r in itertools.product((0, 1), repeat=3):
        assert "".join(map(str, r)) in svg          # node labels kept as text (svg.fonttype none)


# -- issue 29: the runs of length 4 follow the measures analysed --------------------------------
def test_length4_measures_keep_parameters_and_name_what_is_left_out():
    shown, left = figures.length4_measures(["nDCG(b=2)@10", "AP@10", "AP@1000", "Twist@10",
                                            "nDCG_trec(gains=(0,1,2))@20", "RBP(gains=(0,1,2,3,4,5),p=0.8)@10"])
    assert shown == ["nDCG(b=2)@4", "AP@4", "nDCG_trec(gains=(0,1,2))@4"]      # AP@10 and AP@1000 meet at AP@4
    reasons = dict(left)
    assert set(reasons) == {"Twist@10", "RBP(gains=(0,1,2,3,4,5),p=0.8)@10"}
    assert "per-topic" in reasons["Twist@10"] and "1,296 runs" in reasons["RBP(gains=(0,1,2,3,4,5),p=0.8)@10"]
    assert figures.length4_measures(["P", "RBP(p=0.5)"]) == (["P@4", "RBP(p=0.5)@4"], [])


def test_runs_length4_data_graded_and_truncated():
    from naive import gnDCG_trec, graded_runs, unq_ranks
    g, u = figures.runs_length4_data(["nDCG_trec(gains=(0,1,2))@20", "DCGU@10"])
    assert g["measure"] == "nDCG_trec(gains=(0,1,2))@4" and g["rb"] == (4, 4) and g["levels"] == 3
    runs = [tuple(r) for r in g["runs"].tolist()]
    assert runs == graded_runs(3, 4) and len(runs) == 81 and g["labels"][5] == "0012"
    vals = [gnDCG_trec((0, 1, 2))(r, (4, 4)) for r in runs]
    distinct, ranks = unq_ranks(vals)
    assert g["k"] == len(distinct) and g["ranks"].tolist() == ranks
    assert np.allclose(g["values"], [float(v) for v in vals], rtol=1e-13, atol=0)
    assert u["run_space"] == "truncated" and len(u["runs"]) == 31
    assert u["labels"][0] == "∅"          # the empty ranking; then 2 of length 1, 4 of length 2, ...
    assert sorted(map(len, u["labels"][1:])) == [1] * 2 + [2] * 4 + [3] * 8 + [4] * 16
    assert figures.runs_description(g) == "81 graded runs of length 4 with grades 0–2"
    assert figures.runs_description(u) == "31 binary rankings of length 0 to 4"


def test_graded_panel_drawn_without_labels(tmp_path):
    prefix = tmp_path / "runs4g"
    check_written(figures.plot_runs_length4(prefix, ["AP@10", "nDCG_trec(gains=(0,1,2))@10"]), prefix)
    svg = open(f"{prefix}.svg").read()
    assert "0101" in svg                     # the binary runs are labelled
    assert "0012" not in svg and "2100" not in svg and "not labelled" in svg
    assert "81 graded runs with grades 0–2" in svg


def test_length4_figures_text(tmp_path):
    figs = figures.length4_figures(["AP@10", "nDCG(b=2)@10", "Twist@10"], tmp_path)
    (cap_runs, png_runs, note_runs), (cap_hasse, png_hasse, note_hasse) = figs
    assert png_runs == "runs-length4.png" and (tmp_path / png_runs).is_file()
    assert "AP@4" in cap_runs and "nDCG(b=2)@4" in cap_runs and "RBP" not in cap_runs
    assert "16 binary runs" in note_runs and "Left out: Twist@10 (per-topic" in note_runs
    assert png_hasse == "hasse4.png" and (tmp_path / png_hasse).is_file() and "AP@4, nDCG(b=2)@4" in note_hasse
    # graded measures only: no Hasse diagram of binary runs, and the report says why
    out = tmp_path / "graded"
    figs = figures.length4_figures(["nDCG_trec(gains=(0,1,2))@20"], out)
    assert len(figs) == 2 and figs[0][1] == "runs-length4.png" and "81 graded runs" in figs[0][2]
    assert figs[1][1] is None and "No Hasse diagram" in figs[1][2] and not (out / "hasse4.png").exists()
    # nothing can be drawn at length 4
    figs = figures.length4_figures(["Twist@10"], tmp_path / "none")
    assert len(figs) == 1 and figs[0][1] is None and "Twist@10" in figs[0][2]
