"""What a build does not spend on small tables: workers (tables of fewer than FANOUT_ITEMS
pairs are built in-process), checkpoints (tables whose entries fit in memory keep their
buckets there), and commits (a commit is a rename per table, the other tables' files untouched)."""
from __future__ import annotations

import numpy as np
import pytest

import irscale
from irscale.enumerate import split
from irscale.enumerate.fanout import Fanout
from irscale.store import fill


@pytest.fixture
def fanouts(monkeypatch):
    """The n_jobs of every Fanout.map call."""
    seen = []
    real = Fanout.map

    def recording(self, fn, items, n_items, ordered=True):
        seen.append(self.n_jobs)
        return real(self, fn, items, n_items, ordered)
    monkeypatch.setattr(Fanout, "map", recording)
    return seen


def _entries(parts):
    return [np.concatenate([np.asarray(getattr(p, name)) for p in parts]) for name in ("ids", "counts")]


def test_small_tables_are_built_in_process_in_memory(tmp_path, fanouts):
    sf = irscale.parse_measure("AP@12").split_form()
    wd = tmp_path / "wd"
    parts = split.split_enumerate(sf, Fanout(2, "threading"), workdir=wd)
    assert fanouts == [1]                                  # no workers for 4096 runs
    assert not wd.exists() or not any(wd.iterdir())       # no checkpoints
    assert all(isinstance(p, split.BucketResult) for p in parts)
    # an explicit work unit: the fan-out and checkpoints asked for, the same entries
    fanouts.clear()
    saved = split.split_enumerate(sf, Fanout(2, "threading"), workdir=wd, target=1000)
    assert fanouts == [2]
    assert len(list(wd.glob("bucket-*"))) == len(saved) > 1
    for a, b in zip(_entries(parts), _entries(saved)):
        assert (a == b).all()


def test_checkpoints_when_memory_is_short(tmp_path, monkeypatch):
    sf = irscale.parse_measure("AP@12").split_form()
    assert not split.checkpoints_worth(sf, 1 << 12)
    assert split.checkpoints_worth(sf, 1 << 12, explicit=True)
    assert split.checkpoints_worth(sf, split.CHECKPOINT_ITEMS)
    monkeypatch.setattr(split, "available_memory", lambda: 1 << 10)
    assert split.checkpoints_worth(sf, 1 << 12)
    wd = tmp_path / "wd"
    split.split_enumerate(sf, workdir=wd)
    assert list(wd.glob("bucket-*"))


@pytest.fixture
def commits(monkeypatch):
    """The tables of every commit of a build."""
    seen = []
    real = fill.commit_checked

    def recording(path, tables, build_seconds, progress=False):
        seen.append(sorted(str(t.measure) + ("" if t.table_rb is None else str(t.table_rb)) for t in tables))
        return real(path, tables, build_seconds, progress)
    monkeypatch.setattr(fill, "commit_checked", recording)
    return seen


def _build_seconds(path):
    return {t["name"]: float(t["build_seconds"]) for t in irscale.open_store(path).tables()}


def test_each_table_is_committed_as_it_is_built(tmp_path, commits):
    """A commit is a rename per table: each table is committed once built, so a kill loses
    at most the table being built; every table records a build time."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8,RR@8,AP@8,nDCG_trec(gains=(0,1,2))@5", rb_counts=[(2, 1), (5, 5)])
    assert sorted(len(c) for c in commits) == [1] * 5
    seconds = _build_seconds(path)
    assert len(seconds) == 5 and all(s >= 0 for s in seconds.values())
    assert len(irscale.open_store(path).tables()) == 5


def test_a_kill_keeps_the_tables_committed_before(tmp_path, monkeypatch):
    """Tables committed before an interruption stay; the same build finishes the rest."""
    path = tmp_path / "t.h5"
    real = fill.commit_checked
    calls = []

    def stop_at_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)
    monkeypatch.setattr(fill, "commit_checked", stop_at_second)
    with pytest.raises(KeyboardInterrupt, match="1 table"):
        irscale.build_store(path, "P@8,AP@8")
    assert len(irscale.open_store(path).tables()) == 1
    monkeypatch.setattr(fill, "commit_checked", real)
    assert len(irscale.build_store(path, "P@8,AP@8").tables()) == 2


def test_a_commit_replaces_only_its_tables_files(tmp_path):
    """A commit renames each of its tables' files into place: a replaced table is a new
    file (a memory map of the old one stays valid), the other tables' files stay the same
    files, and nothing else is left in the store folder."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@6,RR@6,AP@8", layout="table")
    before = {p.name: p.stat().st_ino for p in path.glob("*.h5")}
    old = irscale.open_store(path).table("AP@8")
    ids = np.array(old.ids)
    irscale.build_store(path, "AP@8", rebuild=True, layout="table")
    after = {p.name: p.stat().st_ino for p in path.glob("*.h5")}
    assert after.keys() == before.keys() and after["AP@8.h5"] != before["AP@8.h5"]
    assert {k: v for k, v in after.items() if k != "AP@8.h5"} == {k: v for k, v in before.items() if k != "AP@8.h5"}
    assert np.array_equal(np.asarray(old.ids), ids)                     # the old file, still mapped
    assert sorted(irscale.open_store(path).verify_each()) == [("AP@8", None), ("P@6", None), ("RR@6", None)]
    assert sorted(p.name for p in path.iterdir() if not p.name.startswith(".")) == [
        "AP@8.h5", "P@6.h5", "RR@6.h5", "irscale-store.json"]


def test_one_pool_of_workers_per_build():
    """Tables fanned out to loky workers reuse the same workers (the pool starts once)."""
    from joblib.externals.loky import reusable_executor

    from irscale.scales.tables.build import build_tables
    seen = []
    for _ in build_tables(["AP@12", "DCG(b=2)@12", "RBP(p=0.8)@12"], n_jobs=2, layout="table", bucket_items=1000,
                          concatenate=False):
        ex = reusable_executor._executor
        seen.append((id(ex), tuple(sorted(ex._processes))))
    assert len(seen) == 3 and len(set(seen)) == 1 and len(seen[0][1]) == 2


def test_a_failing_build_keeps_the_tables_it_finished(tmp_path, monkeypatch):
    """A table that fails to build (an error, Ctrl-C) does not take the quick tables built
    before it down with it: they are committed before the error goes on."""
    real = fill.build_tables

    def failing(measures, rbs, options):
        for table in real(measures, rbs, options=options):
            yield table
            raise RuntimeError("the second table failed")
    monkeypatch.setattr(fill, "build_tables", lambda ms, rbs, options: failing(ms, rbs, options))
    path = tmp_path / "t.h5"
    with pytest.raises(RuntimeError, match="second table"):
        irscale.build_store(path, "P@6,RR@6")
    assert len(irscale.open_store(path).tables()) == 1
