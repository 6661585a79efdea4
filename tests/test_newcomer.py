"""Defects a newcomer met in the first hour (issue 12), one test each: in-memory runs in
any order, write progress sized by what is written, build time over resumed segments and
without the numba compile, interrupted and resumed builds that say what they keep,
estimates before heavy work, exact zeros in the spacing table, cached kernels."""
import json
import os
import re
import subprocess
import sys
import time
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import irscale
from irscale.cli import cli, main
from irscale.enumerate import split
from irscale.errors import BuildTooLargeError, IrscaleWarning, RunError
from irscale.scales.measures.parse import parse_measure
from irscale.scales.runs.qrels import Qrels
from irscale.scales.runs.run_files import Run
from irscale.scales.tables import build as build_module
from irscale.scales.tables.build import build_tables
from irscale.scales.tables.estimate import Estimate, estimate
from irscale.store import fill
from irscale.store.format import table_name
from irscale.store.writer import commit

ROOT = Path(__file__).resolve().parents[1]


# -- 2. an in-memory Run from unsorted arrays -------------------------------------------------------
def _ap_at_5(run: Run) -> float:
    qrels = Qrels({"1": {"d1": 1, "d2": 0, "d3": 0}})
    scores = irscale.transform(qrels, [run], "AP@5")
    return float(scores["raw"].iloc[0])


def test_run_from_unsorted_arrays_is_put_in_trec_eval_order():
    # d1 (relevant) scores lower than d2: trec_eval ranks d2 first, so AP@5 = 1/2, not 1
    unsorted = Run("r", np.array(["1", "1"]), np.array(["d1", "d2"]), np.array([1.0, 2.0]))
    assert unsorted.docnos.tolist() == ["d2", "d1"]
    assert _ap_at_5(unsorted) == 0.5
    # ties by docno descending, topics kept together
    r = Run("r", ["2", "1", "2", "1"], ["a", "a", "b", "b"], [1, 1, 1, 1])
    assert r.rankings() == {"2": ["b", "a"], "1": ["b", "a"]}
    # already in order: unchanged
    ordered = Run("r", ["1", "1"], ["d2", "d1"], [2.0, 1.0])
    assert ordered.docnos.tolist() == ["d2", "d1"] and _ap_at_5(ordered) == 0.5


@pytest.mark.parametrize("topics, docnos, scores, message", [
    (["1", "1"], ["a", "a"], [2.0, 1.0], "appears twice"),
    (["1", "1"], ["a", "b"], [1.0], "same length"),
    (["1", "1"], ["a", "b"], [1.0, float("nan")], "NaN"),
    (["1"], ["a"], ["high"], "numbers"),
])
def test_run_from_bad_arrays_is_refused(topics, docnos, scores, message):
    with pytest.raises(RunError, match=message):
        Run("r", topics, docnos, scores)


# -- 4. write progress sized by what is written ------------------------------------------------------
@pytest.mark.parametrize("name", ["AP@8", "P@8", "RBP(p=0.5)@8", "RBP(p=0.8)@8", "DCG(b=2)@8", "Rprec@6",
                                  "DCGU@4"])
def test_stored_bytes_are_the_bytes_the_store_writes(tmp_path, name):
    m = parse_measure(name)
    [table] = build_tables([m], {str(m): [m.table_rbs("all")[0]]})
    path = tmp_path / "t.h5"
    commit(path, [table])
    with irscale.open_store(path).group(table_name(str(m), table.table_rb)) as (g, _):
        written = sum(g[d].nbytes for d in g if d not in ("index_raw", "index_cum"))
    assert table.stored_bytes() == written


# -- 4 and 9. interrupted builds: what is kept, resuming, seconds over all segments -------------------
def test_interrupted_build_says_what_it_keeps_and_resumes_with_all_its_seconds(tmp_path, monkeypatch, capsys):
    path = tmp_path / "t.h5"
    real = split.process_bucket
    calls = {"n": 0}

    def slow_then_interrupted(sf, *args):
        if sf.n == 18:                                  # not the estimate's small probe builds
            calls["n"] += 1
            if calls["n"] == 4:
                raise KeyboardInterrupt
            time.sleep(0.4)
        return real(sf, *args)

    monkeypatch.setattr(split, "process_bucket", slow_then_interrupted)
    with pytest.raises(KeyboardInterrupt) as stopped:
        irscale.build_store(path, "AP@18", bucket_items=1 << 14, n_jobs=1)
    message = str(stopped.value)
    total = json.loads((fill.workdir_for(path) / "AP@18" / "plan.json").read_text())["edges"]
    assert f"AP@18: 3 of {len(total) - 1} buckets" in message
    assert "run the same build again to resume" in message and str(fill.workdir_for(path)) in message
    first_segment = json.loads((fill.workdir_for(path) / "AP@18" / "elapsed.json").read_text())["seconds"]
    assert first_segment >= 1.2

    monkeypatch.setattr(split, "process_bucket", real)
    t0 = time.perf_counter()
    store = irscale.build_store(path, "AP@18", bucket_items=1 << 14, progress=True)
    second_segment = time.perf_counter() - t0
    assert f"resuming AP@18: 3 of {len(total) - 1} buckets done" in capsys.readouterr().err
    [meta] = store.tables()
    assert meta["build_seconds"] >= first_segment
    assert meta["build_seconds"] <= first_segment + second_segment
    assert not fill.workdir_for(path).exists()
    fresh = irscale.build_store(tmp_path / "fresh.h5", "AP@18", bucket_items=1 << 14)
    assert fresh.tables()[0]["checksum"] == meta["checksum"]


def test_cli_interrupt_prints_the_message_not_aborted(tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt("interrupted: t.h5 is unchanged; run the same build again to resume")

    monkeypatch.setattr("irscale.commands.build.build_store", interrupted)
    assert main(["build", "--measures", "AP@6", "--out", str(tmp_path / "t.h5")]) == 130
    said = capsys.readouterr().err
    assert "irscale: interrupted: t.h5 is unchanged; run the same build again to resume" in said
    assert "aborted" not in said


@pytest.mark.slow
def test_numba_compile_is_not_counted_as_the_first_tables_build_time(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))   # cold: every kernel compiles
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "irscale", "build", "-q", "--measures", "P@18,AP@18", "--out", "t.h5"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    seconds = {t["measure"]: t["build_seconds"] for t in irscale.open_store(tmp_path / "t.h5").tables()}
    assert wall > 3.0                                    # the process did compile
    assert max(seconds.values()) < 0.25 * wall, (seconds, wall)


# -- 8. estimates before heavy work ------------------------------------------------------------------
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
    from irscale.scales.tables import estimate as estimate_module
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


# -- 5. build --rb for measures without recall base; exact zeros in the spacing table ------------------
def test_build_rb_for_measures_without_recall_base_is_refused(tmp_path):
    r = CliRunner().invoke(cli, ["build", "--measures", "P@6", "--rb", "3", "--out", str(tmp_path / "t.h5")])
    assert r.exit_code != 0 and "none of the measures given does" in r.output
    assert not (tmp_path / "t.h5").exists()


def test_spacing_prints_exact_zeros_for_equally_spaced_values(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@16,AP@8")
    r = CliRunner().invoke(cli, ["spacing", str(path)])
    assert r.exit_code == 0, r.output
    row = next(line.split() for line in r.output.splitlines() if line.startswith("P@16"))
    assert row[5:8] == ["0", "0", "0"] and row[-1] == "yes"
    rows = json.loads(CliRunner().invoke(cli, ["spacing", str(path), "--json"]).output)
    p = next(x for x in rows if x["measure"] == "P@16")
    assert p["gap_cv"] == 0.0 and p["gap_min"] == p["gap_max"] == float(Fraction(1, 16))
    ap = next(x for x in rows if x["measure"] == "AP@8")
    assert ap["gap_cv"] > 0.5


# -- 11. kernels compiled once per machine ----------------------------------------------------------
def test_every_numba_kernel_is_cached_on_disk():
    found = 0
    for path in ROOT.glob("**/*.py"):
        if ".venv" in path.parts or "tests" in path.parts:
            continue
        for line in path.read_text().splitlines():
            if re.match(r"\s*@(nb\.|numba\.)?n?jit\b", line):
                found += 1
                assert "cache=True" in line, f"{path.relative_to(ROOT)}: {line.strip()} (compile on every process)"
    assert found >= 40
