"""Bounded scales in a store (scales/tables/bounded_layout.py, store/fill_bounded.py): the
grids stored are the grids computed, a store's grids stand in for computing them, a later
build adds recall bases, damage is refused, and bounded scales stay opt-in."""
import json

import numpy as np
import pytest
from store_files import rewrite, table_file

import irscale
from irscale.cli import main
from irscale.errors import CorruptStoreError, IrscaleError
from irscale.scales.tables import bounded, bounded_grid
from irscale.scales.tables.bounded import bounded_scale
from irscale.scales.tables.bounded_scales import BoundedScales
from irscale.store.fill import BuildReport
from irscale.store.fill_bounded import build_bounded

NDCG = "nDCG(b=2)@42"           # past the rank oracles' N = 40: bounded scales only
ERROR = 1e-2


def _values(scale, n=200, seed=3):
    lo, hi = scale.value_range()
    return np.random.default_rng(seed).uniform(lo, hi, n)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("bounded") / "s"
    report = BuildReport()
    build_bounded(path, [NDCG, "RBP(p=0.5)@70"], rbs=[5, 42, 60], error=ERROR, report=report)
    assert sorted(report.built) == sorted([NDCG, "RBP(p=0.5)@70"]) and not report.found
    return path


def test_stored_grids_answer_as_computed_ones(store):
    s = irscale.open_store(store)
    table = s.bounded_table(NDCG)
    assert sorted(table.stored) == [5, 42]                    # rb = 60 > N shares rb = N's grid
    for rb in (5, 42, 60):
        fresh = bounded_scale(NDCG, rb, error=ERROR)
        kept = table.scale(rb)
        assert kept.grid is table.stored[min(rb, 42)]
        assert kept.error_bound == fresh.error_bound <= ERROR
        x = _values(fresh)
        for a, b in zip(kept.rank_bounds(x), fresh.rank_bounds(x)):
            assert np.array_equal(a, b)
        assert np.array_equal(kept.scaled_values(x), fresh.scaled_values(x))
    rbp = s.bounded_table("RBP(p=0.5)@70").scale()
    assert rbp.k == bounded_scale("RBP(p=0.5)@70", error=ERROR).k


def test_run_counts_past_int64_kept_exactly(store):
    meta = {t.name: t for t in irscale.open_store(store).tables()}["RBP(p=0.5)@70"]
    assert meta.n_runs == 2 ** 70 and meta.layout == "bounded"
    assert meta.to_json()["n_runs"] == str(2 ** 70)


def test_bounded_scales_are_opt_in(store):
    s = irscale.open_store(store)
    with pytest.raises(IrscaleError):
        s.scale(NDCG, rb=5)                  # no silent bounded scale where one is asked for plainly
    assert s.bounded_table("AP@10") is None


def test_a_store_saves_computing_its_grids(store, monkeypatch):
    def no_counting(*args, **kwargs):
        raise AssertionError("a grid was computed")
    scales = BoundedScales(irscale.open_store(store), error=ERROR)
    monkeypatch.setattr(bounded, "count_grid", no_counting)
    m = irscale.parse_measure(NDCG)
    assert scales.scale(m, 5).error_bound <= ERROR
    assert scales.scale(m, 100).k == scales.scale(m, 42).k
    with pytest.raises(AssertionError, match="computed"):
        scales.scale(m, 7)                                     # not stored: computed
    finer = BoundedScales(irscale.open_store(store), error=ERROR / 10)
    with pytest.raises(AssertionError, match="computed"):
        finer.scale(m, 5)                                      # stored, but coarser than asked for


def test_a_later_build_adds_recall_bases_and_keeps_the_others(store, tmp_path):
    path = tmp_path / "s"
    build_bounded(path, NDCG, rbs=[5], error=ERROR)
    first = irscale.open_store(path).bounded_table(NDCG).stored[5]
    report = BuildReport()
    build_bounded(path, NDCG, rbs=[5, 9], error=ERROR, report=report)
    assert report.built == [NDCG]
    table = irscale.open_store(path).bounded_table(NDCG)
    assert sorted(table.stored) == [5, 9]
    assert np.array_equal(table.stored[5].down, first.down)
    build_bounded(path, NDCG, rbs=[9], error=ERROR, report=report)
    assert report.found == [NDCG] and not report.built
    with pytest.raises(IrscaleError, match="exact"):
        build_bounded(path, "AP@10")


def _rewrite(path, name, change):
    """Change a table file's attributes and give it a valid checksum again (a crafted file)."""
    rewrite(table_file(path, name), change)


def test_crafted_grids_are_refused(tmp_path):
    path = tmp_path / "s"
    build_bounded(path, NDCG, rbs=[5], error=ERROR)

    def wrong_bound(f):
        grids = json.loads(f.attrs["grids"])
        grids[0]["error_bound"] /= 10                          # claims a certificate it has not
        f.attrs["grids"] = json.dumps(grids)
    _rewrite(path, NDCG, wrong_bound)
    assert irscale.open_store(path).bounded_table(NDCG) is not None    # opening trusts the checksum
    bad = dict(irscale.open_store(path).verify_each())
    assert "error bound" in bad[NDCG]

    def two_grids_one_rb(f):
        grids = json.loads(f.attrs["grids"])
        f.attrs["grids"] = json.dumps(grids + grids)
    path2 = tmp_path / "s2"
    build_bounded(path2, NDCG, rbs=[5], error=ERROR)
    _rewrite(path2, NDCG, two_grids_one_rb)
    with pytest.raises(CorruptStoreError):
        irscale.open_store(path2).bounded_table(NDCG)


def test_cli_builds_lists_and_looks_up_bounded_tables(tmp_path, capsys, monkeypatch):
    out = tmp_path / "s"

    def run(*args):
        capsys.readouterr()
        status = main(list(args))
        return status, capsys.readouterr()
    status, said = run("build", "-m", NDCG, "--rb", "4,8", "--layout", "bounded", "--error", str(ERROR), "--out",
                       str(out), "-q")
    assert status == 0, said.err
    info = json.loads(run("info", "--json", str(out))[1].out)
    grids = json.loads(json.dumps(info["tables"][0]["grids"]))
    assert sorted(g["rb"] for g in grids) == [4, 8] and all(g["error_bound"] <= ERROR for g in grids)
    assert run("info", "--verify", str(out))[0] == 0
    want = run("lookup", str(tmp_path / "none"), NDCG, "0.5", "--bounded", "--rb", "8", "--error", str(ERROR))
    monkeypatch.setattr(bounded, "count_grid", lambda *a, **k: 1 / 0)         # the store's grid, or a failure
    got = run("lookup", str(out), NDCG, "0.5", "--bounded", "--rb", "8", "--error", str(ERROR))
    assert got[0] == want[0] == 0 and got[1].out == want[1].out
    for bad in (["-m", "AP@10", "--layout", "bounded"], ["-m", NDCG, "--error", "0.1"]):
        status, said = run("build", *bad, "--out", str(tmp_path / "t"), "-q")
        assert status == 2 and said.err.strip() and "Traceback" not in said.err
    assert not (tmp_path / "t").exists()


def test_grids_stored_grow_with_precision():
    """The error shrinks as the grid grows, stored or not (the certificate is the grid's)."""
    coarse, fine = (bounded_scale(NDCG, 20, error=e) for e in (1e-2, 1e-3))
    assert fine.cells > coarse.cells and fine.error_bound < coarse.error_bound
    assert bounded_grid.LAYOUT == "bounded"
