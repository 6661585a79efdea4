"""The store: round trip, metadata (build seconds without the numba compile), the bytes a
table says it stores equal to those written, atomicity under crashes, file checks (a store
folder of table files; packed stores read as they are; older formats refused)."""
import os
import shlex
import signal
import subprocess
import sys
import textwrap
import time

import h5py
import numpy as np
import pytest
from store_files import build_packed, rewrite, table_file

import irscale
from irscale import CorruptStoreError, StoreError, TableNotFoundError
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.build import build_tables
from irscale.store.format import FORMAT_VERSION
from irscale.store.writer import commit

MEASURES = "AP@8,DCG(b=2)@8,RBP(p=0.8)@8,RR@8,nDCG_trec@8"
META = {"measure", "family", "params", "rel", "n", "rb_dependent", "implicit", "n_entries", "n_runs", "n_distinct",
        "distinct_by_rb", "tie_method", "error_bound", "min_gap", "min_gap_exact", "redecided", "generator_version",
        "created", "build_seconds", "checksum", "complete"}


def _arrays(t):
    """The entry arrays of a table (None each for layouts without them, e.g. rank oracles)."""
    return tuple(None if a is None else np.array(a) for a in (getattr(t, name, None) for name in ("ids", "counts",
                                                                                                 "strata")))


def _snapshot(path):
    """measure -> (arrays, checksum), every table verified against its checksum."""
    store = irscale.open_store(path)
    return {meta["measure"]: (_arrays(store.table(meta["measure"], verify=True)), meta["checksum"])
            for meta in store.tables()}


def _same_arrays(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and np.array_equal(x, y))
               for x, y in zip(a, b))


def test_round_trip(tmp_path):
    path = tmp_path / "t.h5"
    store = irscale.build_store(path, MEASURES + ",RBP(p=0.5)@8", layout="table")
    tables = store.tables()
    assert [t["measure"] for t in tables] == sorted(MEASURES.split(",") + ["RBP(p=0.5)@8"])
    assert store.attrs["format"] == "irscale-store" and store.attrs["format_version"] == 1
    assert "generator_version" in store.attrs and "created" in store.attrs
    for name in [t["name"] for t in tables]:                  # one file per table, format 4 inside
        with h5py.File(table_file(path, name)) as f:
            assert f.attrs["format_version"] == FORMAT_VERSION and f.attrs["measure"] == name.encode()
            # text in the attributes' own (checksummed) messages, none in HDF5's global heap
            for key in f.attrs:
                kind = h5py.check_string_dtype(f.attrs.get_id(key).dtype)
                assert kind is None or kind.length is not None, key
    reopened = irscale.open_store(path)
    for meta in tables:
        assert META <= set(meta)
        m = irscale.parse_measure(meta["measure"])
        mem_table = irscale.scales.tables.build._table(m, None, "table")
        disk_table = reopened.table(m, verify=True)
        assert _same_arrays(_arrays(mem_table), _arrays(disk_table))
        assert isinstance(disk_table.ids, (np.memmap, type(None))) or disk_table.n_entries == 0
        for rb in ([1, 3, 8, 11] if m.rb_dependent else [None]):
            mem, disk = irscale.scale(m, rb=rb, layout="table"), reopened.scale(m, rb=rb)
            assert np.array_equal(mem.values, disk.values)
            assert np.array_equal(mem.counts, disk.counts)
            assert mem.k == disk.k
        assert meta["n_runs"] == 2 ** 8
        assert meta["tie_method"] == mem_table.certificate.method
        assert meta["min_gap_exact"] == mem_table.certificate.min_gap_exact
        assert meta.n == 8 and meta.rel == (0, 1)
        if m.rb_dependent:
            assert meta.distinct_by_rb == tuple(len(irscale.scale(m, rb=r)) for r in range(1, 9))
    assert reopened.tables()[-1]["implicit"] is False
    assert {t["measure"]: t["implicit"] for t in tables}["RBP(p=0.5)@8"] is True
    # rb > N served by the rb = N order with values for the actual rb
    s = reopened.scale("AP@8", rb=11)
    assert s.values[-1] == pytest.approx(8 / 11)


def test_older_formats_and_foreign_files_are_refused_in_one_line(tmp_path):
    """Version-3 tables, packed files of version 3, files of an older HDF5 format: one
    line saying to rebuild (the store is a rebuildable cache)."""
    path = tmp_path / "s"
    irscale.build_store(path, "AP@6,P@5")
    rewrite(table_file(path, "AP@6"), lambda f: f.attrs.__setitem__("format_version", 3))
    with pytest.raises(StoreError) as refused:
        irscale.open_store(path).table("AP@6")
    assert "--rebuild" in str(refused.value) and "\n" not in str(refused.value)
    with h5py.File(table_file(path, "P@5")) as f, h5py.File(tmp_path / "old.h5", "w") as old:   # HDF5 defaults
        for k, v in f.attrs.items():
            old.attrs[k] = v
        for k in f:
            old[k] = f[k][()]
    os.replace(tmp_path / "old.h5", table_file(path, "P@5"))
    with pytest.raises(StoreError, match="older format.*--rebuild"):
        irscale.open_store(path).table("P@5")
    assert dict(irscale.open_store(path).verify_each()).keys() == {"AP@6", "P@5"}
    packed = build_packed(tmp_path / "p.h5", "P@4")
    with h5py.File(packed, "a") as f:
        f.attrs["format_version"] = 3
    with pytest.raises(StoreError, match="version 3.*rebuild"):
        irscale.open_store(packed)


def test_rebuild_keeps_existing_tables(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@6")
    before = _snapshot(path)
    stamp = os.stat(path).st_mtime_ns
    irscale.build_store(path, "P@6")  # nothing to do
    assert os.stat(path).st_mtime_ns == stamp
    irscale.build_store(path, "RR@6")
    after = _snapshot(path)
    assert set(after) == set(before) | {"RR@6"}
    for k in before:
        assert _same_arrays(before[k][0], after[k][0]) and before[k][1] == after[k][1]


def test_missing_table_names_the_build_command(tmp_path):
    path = tmp_path / "t.h5"
    store = irscale.build_store(path, "P@6")
    with pytest.raises(TableNotFoundError) as e:
        store.scale("AP@6", rb=3)
    message = str(e.value)
    assert "AP@6" in message and str(path) in message and "irscale build" in message
    from irscale.cli import main
    suggested = shlex.split("irscale build" + message.split("irscale build", 1)[1])
    assert main([*suggested[1:], "-q"]) == 0                  # the command given builds the table
    assert len(irscale.open_store(path).scale("AP@6", rb=3)) == len(irscale.scale("AP@6", rb=3))


def test_incomplete_table_is_refused(tmp_path):
    """A commit is a rename of a whole file: a table file not marked complete is damage."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@6,AP@6")
    with h5py.File(table_file(path, "AP@6"), "a") as f:
        f.attrs["complete"] = False
    store = irscale.open_store(path)
    assert [t["measure"] for t in store.tables(skip_damaged=True)] == ["P@6"]
    with pytest.raises(CorruptStoreError, match="incomplete"):
        store.scale("AP@6", rb=2)
    assert dict(store.verify_each())["AP@6"].startswith("incomplete")


def test_corrupt_table_detected(tmp_path):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@6")
    with h5py.File(table_file(path, "P@6"), "a") as f:
        f["counts"][0] = 99
    with pytest.raises(StoreError, match="checksum"):
        irscale.open_store(path).table("P@6", verify=True)
    from irscale.cli import main
    assert main(["info", str(path), "--verify"]) == 2


def test_foreign_and_unreadable_files(tmp_path):
    with pytest.raises(StoreError, match="no such file or folder"):
        irscale.open_store(tmp_path / "missing.h5")
    (tmp_path / "folder").mkdir()
    with pytest.raises(StoreError, match="not an irscale store"):
        irscale.open_store(tmp_path / "folder")
    (tmp_path / "folder" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="not an irscale store"):            # nothing written into it
        irscale.build_store(tmp_path / "folder", "P@4")
    assert [p.name for p in (tmp_path / "folder").iterdir()] == ["notes.txt"]
    (tmp_path / "empty").mkdir()
    assert irscale.build_store(tmp_path / "empty", "P@4").tables()        # an empty folder becomes a store
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(StoreError, match="not a regular file"):              # never opened: no hang
        irscale.open_store(tmp_path / "fifo")
    (tmp_path / "text.h5").write_text("hello")
    with pytest.raises(StoreError, match="not an HDF5 file"):
        irscale.open_store(tmp_path / "text.h5")
    with h5py.File(tmp_path / "foreign.h5", "w", libver="latest") as f:
        f["x"] = [1, 2]
    with pytest.raises(StoreError, match="not an irscale store.*rebuild"):
        irscale.open_store(tmp_path / "foreign.h5")
    with h5py.File(tmp_path / "old.h5", "w") as f:
        f["x"] = [1, 2]
    with pytest.raises(StoreError, match="older format.*rebuild"):
        irscale.open_store(tmp_path / "old.h5")
    with h5py.File(tmp_path / "future.h5", "w", libver="latest") as f:
        f.attrs["format"] = np.bytes_(b"irscale-tables")
        f.attrs["format_version"] = FORMAT_VERSION + 1
    with pytest.raises(StoreError, match="upgrade irscale"):
        irscale.open_store(tmp_path / "future.h5")
    with pytest.raises(StoreError, match="does not exist"):
        irscale.build_store(tmp_path / "nodir" / "t.h5", "P@4")


def test_write_failure_keeps_old_store(tmp_path, monkeypatch):
    """Disk full (or any I/O error) while writing: clear error, earlier tables intact."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@6")
    before = _snapshot(path)
    from irscale.store import writer
    real = writer.write_table

    def failing(f, table, *args):
        real(f, table, *args)
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(writer, "write_table", failing)
    with pytest.raises(StoreError, match="No space left on device.*unchanged"):
        irscale.build_store(path, "RR@6")
    assert _snapshot(path).keys() == before.keys()
    assert not list(path.glob(".tmp-*"))
    assert not list(tmp_path.glob(".t.h5.build/*.npz"))


@pytest.mark.parametrize("rebuild", [False, True])
def test_sigkill_in_the_middle_of_writing_a_table(tmp_path, rebuild):
    """A writer killed (SIGKILL) halfway through a table's datasets leaves the store as it
    was (its table file half-written in its private temporary folder); the next build
    completes it and removes what the dead writer left."""
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@6")
    before = _snapshot(path)
    measures = "P@6,RR@6,AP@6" if rebuild else "RR@6,AP@6"
    script = textwrap.dedent(f"""
        import os, signal
        import irscale
        from irscale.store import writer
        real = writer.write_table
        def dying(f, table, *args):
            if str(table.measure) == "AP@6":          # die after its first dataset
                f.create_dataset("ids", data=table.parts[0].ids)
                f.flush()
                os.kill(os.getpid(), signal.SIGKILL)
            real(f, table, *args)
        writer.write_table = dying
        irscale.build_store({str(path)!r}, {measures!r}, rebuild={rebuild!r})
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert list(path.glob(".tmp-*/AP@6.h5")), "the killed writer should have left its temporary file"
    after = _snapshot(path)
    assert set(after) == set(before) | {"RR@6"}          # RR@6 was committed before AP@6 was written
    for k in before:
        assert before[k][1] == after[k][1]
    store = irscale.build_store(path, "RR@6,AP@6")
    assert len(store.tables()) == 3
    assert not list(path.glob(".tmp-*"))
    assert len(store.scale("AP@6", rb=3)) == len(irscale.scale("AP@6", rb=3))


@pytest.mark.slow
def test_cli_build_killed_at_random_time_leaves_only_complete_tables(tmp_path):
    path = tmp_path / "t.h5"
    proc = subprocess.Popen([sys.executable, "-m", "irscale", "build", "--preset", "paper", "--depth", "16",
                             "--out", str(path), "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path)
    deadline = time.time() + 60
    while not path.exists() and time.time() < deadline:  # first measure committed
        time.sleep(0.01)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if path.exists():
        snap = _snapshot(path)  # every listed table loads and verifies its checksum
        for _measure, (arrays, _) in snap.items():
            counts = arrays[1]
            assert counts is None or counts.sum() == 2 ** 16
    # the same command again finishes the job
    r = subprocess.run([sys.executable, "-m", "irscale", "build", "--preset", "paper", "--depth", "16",
                        "--out", str(path), "-q"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(irscale.open_store(path).tables()) == 11
    measures = {t["measure"] for t in irscale.open_store(path).tables()}
    assert len(measures) == 11


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


@pytest.mark.parametrize("name", ["AP@8", "P@8", "RBP(p=0.5)@8", "RBP(p=0.8)@8", "DCG(b=2)@8", "Rprec@6",
                                  "DCGU@4"])
def test_stored_bytes_are_the_bytes_the_store_writes(tmp_path, name):
    """What progress bars and disk estimates count is what the writer writes."""
    m = parse_measure(name)
    [table] = build_tables([m], {str(m): [m.table_rbs("all")[0]]})
    path = tmp_path / "t.h5"
    commit(path, [table])
    store = irscale.open_store(path)
    with store.raw(store.tables()[0]) as (_, arrays):
        written = sum(a.nbytes for d, a in arrays.items() if d not in ("index_raw", "index_cum"))
    assert table.stored_bytes() == written

@pytest.mark.slow      # about 8 s
def test_stored_block_index_equals_recomputed(tmp_path):
    """The index written with a table (streamed over buckets) equals the one computed from
    the whole arrays, so lazy lookups need not read a table to index it."""
    from irscale.scales.tables import lookup_kernels as lk
    path = tmp_path / "t.h5"
    store = irscale.build_store(path, "AP@13,DCG(b=2)@13,nDCG(b=10)@13", bucket_items=1500, layout="table")
    for meta in store.tables():
        t = store.table(meta["measure"])
        assert t.index is not None and t.n_entries > 2 * lk.BLOCK or meta["measure"] == "nDCG(b=10)@13"
        sf = t.measure.split_form()
        ids, strata = t.arrays_for_kernels()
        nr = t.measure.n + 1 if t.strata is not None else 1
        raw, cum = lk.build_index(np.asarray(ids), False, t.n_entries, np.asarray(strata),
                                  sf.A, sf.state, sf.B, sf.S, nr)
        assert np.array_equal(raw, t.index[0]) and np.array_equal(cum, t.index[1])


def test_disk_full_while_checkpointing(tmp_path, monkeypatch):
    path = tmp_path / "t.h5"
    irscale.build_store(path, "P@8")
    before = _snapshot(path)
    from irscale.enumerate import split

    def full(self, p):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(split.BucketResult, "save", full)
    with pytest.raises(StoreError, match="No space left on device"):
        irscale.build_store(path, "AP@8", bucket_items=1000)    # an explicit work unit: checkpoints
    assert _snapshot(path).keys() == before.keys()


@pytest.mark.parametrize("sizes", [[5000], [1, 1023, 1, 2047, 0, 1024, 3000, 7], [300] * 20, [1024, 1024, 2]])
def test_streaming_index_of_any_pieces(sizes):
    """The block index streamed over pieces of any sizes (smaller than a block, empty,
    ending inside a block) equals the one of the whole arrays."""
    from irscale.scales.tables import lookup_kernels as lk
    from irscale.scales.tables.entry_table import streaming_index
    table = irscale.scale("AP@13", rb=13, layout="table").table
    ids, strata = table.arrays_for_kernels()
    ids, strata = np.asarray(ids), np.asarray(strata)
    cuts = np.cumsum([0] + sizes)
    cuts = cuts[cuts <= ids.shape[0]]
    bounds = list(cuts) + ([ids.shape[0]] if cuts[-1] < ids.shape[0] else [])

    class Pieces:
        measure, stratified = table.measure, True

        def id_strata_pieces(self):
            for a, b in zip(bounds, bounds[1:]):
                yield ids[a:b], strata[a:b]
    sf = table.measure.split_form()
    want = lk.build_index(ids.astype(np.int64), False, ids.shape[0], strata, sf.A, sf.state, sf.B, sf.S,
                          table.measure.n + 1)
    got = streaming_index(Pieces())
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_a_stratified_table_with_an_empty_bucket_is_written(tmp_path):
    """An empty bucket (possible where inexact bucket edges move past a bucket's values)
    is written as nothing: counts per recall base as without it."""
    from irscale.enumerate.split import BucketResult, group_split, plan_buckets, process_bucket
    from irscale.scales.tables.entry_build import table_from_buckets
    from irscale.store.writer import commit
    m = irscale.parse_measure("AP@8")
    sf = m.split_form()
    g = group_split(sf)
    edges = plan_buckets(g, sf, 64)
    parts = [process_bucket(sf, g, lo, hi) for lo, hi in zip(edges, edges[1:])]
    empty = BucketResult(parts[0].ids[:0], parts[0].counts[:0], parts[0].strata[:0], parts[0].first[:0],
                         float("inf"), 0)
    with_empty = table_from_buckets(m, sf, parts[:1] + [empty] + parts[1:], concatenate=False)
    commit(tmp_path / "t.h5", [with_empty])
    stored = irscale.open_store(tmp_path / "t.h5")
    [meta] = stored.tables()
    whole = table_from_buckets(m, sf, parts, concatenate=True)
    assert meta["n_distinct"] == len(irscale.scale("AP@8", rb=8, layout="table"))
    assert stored.table("AP@8").n_entries == whole.n_entries == with_empty.n_entries
