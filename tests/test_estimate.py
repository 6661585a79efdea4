"""Estimates of a table build (scales/tables/estimate.py) and what they guard: runs exact,
entries and stored bytes within a factor of two of the build, checkpoints for big tables,
heavy builds announced (on the command line too), and builds that cannot fit in memory or
on disk refused before any work."""
import re
import warnings

import pytest
from click.testing import CliRunner

import irscale
from irscale.cli import cli
from irscale.errors import BuildTooLargeError, IrscaleWarning
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables import build as build_module
from irscale.scales.tables import estimate as estimate_module
from irscale.scales.tables.build import build_tables
from irscale.scales.tables.estimate import Estimate, estimate
from irscale.store import fill


@pytest.mark.parametrize("name", ["AP@16", "DCG(b=2)@16", "RBP(p=0.8)@16", "ERR@14"])
def test_estimates_are_close_to_the_build(name):
    m = parse_measure(name)
    guess = estimate(m, None, workers=1, layout="table")
    [table] = build_tables([m], layout="table")
    assert guess.runs == m.id_count()
    assert 0.5 <= guess.entries / table.n_entries <= 2.0
    assert 0.5 <= guess.stored / table.stored_bytes() <= 2.0
    assert guess.checkpoints == 0                        # a small table is built in memory


def test_estimates_count_checkpoints_of_big_tables(monkeypatch):
    """Checkpoints are estimated for the tables that write them: at least 2^31 pairs, or
    entries that would not fit in half the memory available."""
    m = parse_measure("AP@16")
    assert estimate(m, None, layout="table").checkpoints == 0
    monkeypatch.setattr(estimate_module, "available_memory", lambda: 1 << 16)
    guess = estimate(m, None, layout="table")
    assert guess.checkpoints >= guess.stored > 0
    assert "checkpoints while it builds" in guess.describe()


def test_only_long_or_big_builds_are_announced():
    guesses = {name: estimate(parse_measure(name), None, workers=2)
               for name in ("AP@30", "P@30", "RBP(p=0.3)@30", "DCG(b=2)@16")}
    assert [name for name, g in guesses.items() if g.heavy] == ["AP@30"]
    assert guesses["RBP(p=0.3)@30"].memory == guesses["RBP(p=0.3)@30"].stored == 0   # implicit: nothing held
    assert guesses["P@30"].entries < 100 and guesses["AP@30"].stored > 1e9


def test_in_memory_scale_refuses_what_cannot_fit(monkeypatch):
    monkeypatch.setattr(build_module, "available_memory", lambda: 10 << 20)
    build_module._TABLES.clear()
    with pytest.raises(BuildTooLargeError, match=r"(?s)4\.19e\+06 runs.*10 MB are available.*irscale build"):
        irscale.scale("DCG(b=2)@22", layout="table")


def test_in_memory_scale_announces_slow_builds(monkeypatch):
    monkeypatch.setattr(build_module, "SLOW_SECONDS", 0.0)
    build_module._TABLES.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = irscale.scale("RBP(p=0.8)@22", layout="table")
    said = [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]
    assert s.k == 2 ** 22
    assert len(said) == 1 and "4.19e+06 runs" in said[0] and "of memory" in said[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # cached: no second estimate, no warning
        assert irscale.scale("RBP(p=0.8)@22", layout="table") is not None


def test_store_build_refuses_what_cannot_fit_on_disk(tmp_path, monkeypatch):
    class Full:
        free = 1 << 20

    monkeypatch.setattr(fill.shutil, "disk_usage", lambda folder: Full)
    with pytest.raises(BuildTooLargeError, match=r"needs about .* of disk .* 1\.0 MB free"):
        irscale.build_store(tmp_path / "t.h5", "DCG(b=2)@25", layout="table")
    assert not (tmp_path / "t.h5").exists() and not fill.workdir_for(tmp_path / "t.h5").exists()


def test_cli_build_prints_estimates_of_heavy_tables(tmp_path, monkeypatch):
    monkeypatch.setattr(Estimate, "heavy", property(lambda self: True))
    r = CliRunner().invoke(cli, ["build", "--measures", "AP@12", "--out", str(tmp_path / "t.h5")])
    assert r.exit_code == 0, r.output
    assert re.search(r"AP@12: 4\.1e\+03 runs, about .* entries; about \d+ s with 1 worker", r.output)
