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
