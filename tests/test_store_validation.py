"""Stores damaged in one place give one clear error naming the table, never a crash, a
traceback or a wrong answer.

Each damage is made on a freshly built store: an edited ``n_entries``, a
run id word set to 0xFFFFFF00, a flipped strata byte, an edited ``index_cum``, flipped
bytes in the HDF5 metadata. Tables are validated when opened (small ones verified whole,
big ones structurally: simulated here by setting the size limit of whole verification to
0), lookup kernels check the stored run ids they use, and ``irscale info --verify`` finds
every one. Lookups that could crash the interpreter run in a subprocess. Crafted files
(a valid checksum, but objects irscale does not write: external storage or links to a
FIFO, chunked or virtual datasets, forged shapes) are refused before any data is read.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
import time

import h5py
import numpy as np
import pytest
from store_files import build_packed, rewrite, table_file

import irscale
from irscale.errors import CorruptStoreError
from irscale.store.format import UNCOVERED, decode_attrs, table_path


def run_python(code: str, cwd) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (a segfault shows as a negative return code)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def _outcome(path, tmp_path, lookups: str, big: bool = False) -> dict:
    """Open the store in a subprocess (``big``: no table verified whole on opening, as for
    tables of 64 MiB or more) and run ``lookups`` (code computing ``result``); returns
    {"rc", "kind": "ok" | error class name, "message", "result"}."""
    code = f"""
        import json, sys
        import numpy as np
        import irscale
        from irscale.store import reader
        if {big!r}:
            reader.VERIFY_ON_OPEN_BYTES = 0
        out = {{"kind": "ok", "message": "", "result": None}}
        try:
            store = irscale.open_store({str(path)!r})
{textwrap.indent(textwrap.dedent(lookups), " " * 12)}
            out["result"] = result
        except Exception as e:
            out["kind"], out["message"] = type(e).__name__, str(e)
            out["store_error"] = isinstance(e, irscale.StoreError)
        print(json.dumps(out, default=lambda v: np.asarray(v).tolist()))
    """
    proc = run_python(code, tmp_path)
    if proc.returncode != 0:
        return {"rc": proc.returncode, "kind": "crash", "message": proc.stderr[-2000:], "result": None}
    return {"rc": 0, **json.loads(proc.stdout.strip().splitlines()[-1])}


MEASURES = "AP@11,DCG(b=2)@8,RBP(p=0.5)@8,Twist@6"
RB_COUNTS = {"Twist@6": [(2,)]}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A packed store of the tables of MEASURES: {"v4": path}."""
    folder = tmp_path_factory.mktemp("validation")
    return {"v4": build_packed(folder / "v4.h5", MEASURES, n_jobs=1, rb_counts=RB_COUNTS, layout="table")}


#: What every damaged store is asked, in the subprocess: AP@11 for rb = 3 and 11, every
#: feasible run by id and every value (as the intact store ranks them), and k.
LOOKUPS = """
    result = {}
    for rb in (3, 11):
        s = store.scale("AP@11", rb)
        ids = [i for i in range(2 ** 11) if bin(i).count("1") <= rb]
        result[rb] = [int(s.k), s.rank_ids(ids).tolist(), s.rank(VALUES[rb]).tolist()]
"""


def _reference(path) -> tuple[dict, dict]:
    """(values of AP@11 per rb, the answers of LOOKUPS) of an intact store."""
    store = irscale.open_store(path)
    values, result = {}, {}
    for rb in (3, 11):
        s = store.scale("AP@11", rb)
        ids = [i for i in range(2 ** 11) if bin(i).count("1") <= rb]
        values[rb] = s.values.tolist()
        result[str(rb)] = [int(s.k), s.rank_ids(ids).tolist(), list(range(1, s.k + 1))]
    return values, result


def _copy(built, version, tmp_path, name="d.h5"):
    path = tmp_path / name
    shutil.copyfile(built[version], path)
    return path


def _damage(path, what: str) -> None:
    """The damages, on AP@11 (2,074 entries in three blocks)."""
    with h5py.File(path, "a") as f:
        g = f[table_path("AP@11")]
        if what == "n_entries":
            g.attrs["n_entries"] = int(g.attrs["n_entries"]) - 1
        elif what == "ids":
            g["ids"][1500] = 0xFFFFFF00
        elif what == "strata":
            g["strata"][1500] ^= 0x01
        elif what == "index_cum":
            g["index_cum"][-1, :] += 100            # k becomes 100 more
        elif what == "index_cum_mid":
            g["index_cum"][1, 6:] += 1
        elif what == "counts":
            g["counts"][1500] += 1
        else:
            raise ValueError(what)


DAMAGES = ["n_entries", "ids", "strata", "index_cum", "index_cum_mid", "counts"]


#: The batch run in one subprocess: per job, open the store (``big``: no table verified
#: whole on opening, as for tables of 64 MiB or more), run LOOKUPS when given values,
#: and run the command lines ``argv`` (in-process: exit code, stdout, stderr, or the
#: exception that escaped). One JSON line per job; a crash ends the output early; last, the
#: batch's peak resident memory (KiB): VmHWM of its own memory, not ru_maxrss, which Linux
#: carries over an exec from the process that started it (this test session, gigabytes
#: after a whole run: the 2-3.7 GB "peaks" once seen here were the session's, not the batch's).
BATCH = """
import contextlib, io, json, sys
import numpy as np
import irscale
from irscale.cli import main
from irscale.store import reader
limit = reader.VERIFY_ON_OPEN_BYTES
for job in json.loads(open(sys.argv[1]).read()):
    reader.VERIFY_ON_OPEN_BYTES = 0 if job["big"] else limit
    out = {"kind": "ok", "message": "", "result": None, "cli": []}
    if job.get("values") is not None:
        VALUES = {int(k): v for k, v in job["values"].items()}
        try:
            store = irscale.open_store(job["path"])
@LOOKUPS@
            out["result"] = result
        except Exception as e:
            out["kind"], out["message"] = type(e).__name__, str(e)
    for argv in job["argv"]:
        so, se = io.StringIO(), io.StringIO()
        try:
            with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
                rc = main(argv)
        except BaseException as e:
            rc = f"raised {type(e).__name__}: {e}"
        out["cli"].append([rc, so.getvalue(), se.getvalue()])
    print(json.dumps(out), flush=True)
print("maxrss", next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")),
      flush=True)
""".replace("@LOOKUPS@", textwrap.indent(textwrap.dedent(LOOKUPS).strip("\n"), " " * 12))


def _batch(jobs: list[dict], tmp_path) -> list[dict]:
    """Results of :data:`BATCH` on ``jobs``; fails the test on a crash."""
    spec = tmp_path / "jobs.json"
    spec.write_text(json.dumps(jobs))
    script = tmp_path / "batch.py"
    script.write_text(BATCH)
    proc = subprocess.run([sys.executable, str(script), str(spec)], capture_output=True, text=True, cwd=tmp_path,
                          timeout=600)
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    _batch.maxrss = int(next((line.split()[1] for line in proc.stdout.splitlines() if line.startswith("maxrss ")), -1))
    assert proc.returncode == 0, f"crash (rc {proc.returncode}) at job {len(results)}: {jobs[len(results)]}" \
                                 f"\n{proc.stderr[-2000:]}"
    return results


@pytest.mark.slow      # about 4 s
def test_issue_damages(built, tmp_path):
    """Each damage, on each format, the table read as a small one (verified
    whole on opening) and as a big one (not): lookups end in one CorruptStoreError naming
    the table and the command that rebuilds it, never in a crash or a wrong answer.
    ``irscale info --verify`` flags every one: exit
    status 2, one line naming the table, a CORRUPT verdict for it."""
    jobs, meta = [], []
    for version in ("v4",):
        values, want = _reference(built[version])
        for what in DAMAGES:
            path = _copy(built, version, tmp_path, f"{version}-{what}.h5")
            _damage(path, what)
            for big in (False, True):
                jobs.append({"path": str(path), "big": big, "values": values,
                             "argv": [["info", str(path), "--verify"]] if big else []})
                meta.append((version, what, big, want))
    for out, (version, what, big, _) in zip(_batch(jobs, tmp_path), meta):
        case = f"{version} {what} {'big' if big else 'small'}"
        assert out["kind"] == "CorruptStoreError", (case, out)
        assert "table AP@11 is corrupt" in out["message"] and "--rebuild" in out["message"], (case, out)
        for rc, stdout, stderr in out["cli"]:
            err = stderr.strip().splitlines()
            assert rc == 2 and len(err) == 1 and err[0].startswith("irscale: error: ") and "AP@11" in err[0], \
                (case, rc, stderr)
            assert re.search(r"^\s*CORRUPT\s+AP@11: ", stdout, re.M), (case, stdout)


def test_issue_damages_fail_on_opening_a_small_table(built, tmp_path):
    """Tables under the size limit are verified whole the first time they are opened: the
    damage is found before any lookup (the digests)."""
    for version in ("v4",):
        for what in DAMAGES:
            path = _copy(built, version, tmp_path, f"{version}-{what}.h5")
            _damage(path, what)
            store = irscale.open_store(path)
            with pytest.raises(CorruptStoreError, match=r"table AP@11 is corrupt") as e:
                store.table("AP@11")
            assert "rebuild it with: irscale build --measures \"AP@11\" --rebuild --out" in str(e.value)
            assert len(store.scale("DCG(b=2)@8").rank_ids([0, 255])) == 2        # the other tables serve on


@pytest.mark.slow
def test_damaged_hdf5_metadata_gives_one_line(built, tmp_path):
    """Bytes flipped in the HDF5 structures (superblock, object headers, attributes): info,
    info --verify and lookups end in one line naming the problem, never a traceback."""
    size = built["v4"].stat().st_size
    with h5py.File(built["v4"], "r") as f:
        data = [(ds.id.get_offset(), ds.id.get_offset() + ds.nbytes) for g in f["tables"].values()
                for ds in g.values() if ds.id.get_offset() is not None]
    meta = [p for p in range(size) if not any(a <= p < b for a, b in data)]
    rng = np.random.default_rng(7)
    jobs = []
    for i, pos in enumerate(rng.choice(meta, 40, replace=False).tolist() + [0, 8, 100]):
        path = _copy(built, "v4", tmp_path, f"meta-{i}.h5")
        with open(path, "r+b") as fh:
            fh.seek(pos)
            b = fh.read(1)[0]
            fh.seek(pos)
            fh.write(bytes([b ^ 0x5A]))
        jobs.append({"path": str(path), "big": False, "argv": [
            ["info", str(path)], ["info", str(path), "--verify"],
            ["lookup", str(path), "AP@11", "--rb", "3", "0.1"], ["lookup", str(path), "Twist@6", "--rb", "2", "0.5"]]})
    codes = set()
    for job, out in zip(jobs, _batch(jobs, tmp_path)):
        for argv, (rc, _, stderr) in zip(job["argv"], out["cli"]):
            assert rc in (0, 2), (argv, rc, stderr)
            if rc == 2:
                assert len(stderr.strip().split("\n")) == 1 and stderr.startswith("irscale: error: "), (argv, stderr)
            codes.add(rc)
    assert codes == {0, 2}


@pytest.mark.slow      # about 6 s
def test_kernels_never_index_with_a_stored_value(tmp_path):
    """The lookup kernels on a table whose run ids lie outside the run space (0xFFFFFF00)
    and whose strata bytes exceed N: a status or a sentinel, never a crash (in a
    subprocess: the kernels before issue 13 crashed the interpreter or read past their
    arrays)."""
    out = _outcome(tmp_path / "none.h5", tmp_path, "", big=False)
    assert out["kind"] == "StoreError"          # the helper itself works (no such file)
    code = """
        import json
        import numpy as np
        from irscale.scales.measures.parse import parse_measure
        from irscale.scales.tables import lookup_kernels as lk
        m = parse_measure("AP@11")
        sf = m.split_form()
        E = 3000
        ids = np.arange(E, dtype=np.uint32)
        ids[1500] = 0xFFFFFF00
        strata = np.full(E, 0x81, np.uint8)
        counts = np.ones(E, np.uint8)
        nr = 12
        raw, cum = lk.build_index(np.arange(E, dtype=np.uint32), False, E, strata, sf.A, sf.state, sf.B, sf.S, nr)
        xs = np.sort(sf.raw_of_ids(np.arange(1400, 1600)))
        st = np.zeros(xs.size, np.int8)
        lk.rank_raw(xs, np.full(xs.size, 1e9), 11, 0.0, ids, False, E, strata, sf.A, sf.state, sf.B, sf.S, raw, cum,
                    np.zeros(xs.size, np.int64), st, lk.NO_SEEN)
        q = np.arange(1400, 1600, dtype=np.int64)
        st2 = np.zeros(q.size, np.int8)
        lk.rank_ids(q, 11, sf.exact, 0.0, ids, False, E, strata, sf.A, sf.state, sf.B, sf.S, raw, cum,
                    np.zeros((q.size, 1), np.uint64), np.zeros((1, 1), np.uint64), np.zeros((1, 1, 1), np.uint64),
                    2, 11, np.zeros(q.size, np.int64), st2, lk.NO_SEEN)
        k, lead = lk.present_raw(ids, False, 0, E, strata, counts, 11, sf.A, sf.state, sf.B, sf.S,
                                 np.zeros(E), np.zeros(E, np.int64))
        bad = strata.copy()
        bad[2000] = 0xFF                                   # stratum 127 > N
        _, cum2 = lk.build_index(np.arange(E, dtype=np.uint32), False, E, bad, sf.A, sf.state, sf.B, sf.S, nr)
        runs = lk.build_run_index(counts, bad, E, nr)
        ent = np.zeros(2, np.int64)
        cum3 = cum.copy()
        cum3[-1] += 10 ** 6                                 # ranks beyond the entries
        lk.entries_of_ranks(np.array([1, cum3[-1, 11]], np.int64), 11, strata, cum3, E, ent, lk.NO_SEEN)
        mid = np.zeros(1)
        lk.midranks_of_ranks(np.array([cum3[-1, 11]], np.int64), 11, counts, strata, E, cum3, cum, mid, lk.NO_SEEN)
        print(json.dumps({"rank_raw": sorted(set(st.tolist())), "rank_ids": sorted(set(st2.tolist())), "present": k,
                          "index": int(cum2[0, 0]), "runs": int(runs[0, 0]), "entries": ent.tolist(),
                          "mid": str(mid[0])}))
    """
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert 4 in got["rank_raw"] and 4 in got["rank_ids"]
    assert got["present"] == -1 and got["index"] == -1 and got["runs"] == -1
    assert got["entries"] == [0, -1] and got["mid"] == "nan"


@pytest.mark.slow      # about 8 s
def test_checksum_covers_every_deciding_attribute(built, tmp_path):
    """The checksum of a format-4 table covers every attribute but when and by what it was
    written: editing any other is found when the table is opened."""
    with h5py.File(built["v4"], "r") as f:
        names = {t: sorted(f[table_path(t, rb)].attrs) for t, rb in (("AP@11", None), ("Twist@6", (2,)),
                                                                        ("RBP(p=0.5)@8", None))}
    for (measure, rb), attrs in zip((("AP@11", None), ("Twist@6", (2,)), ("RBP(p=0.5)@8", None)), names.values()):
        for key in attrs:
            if key in ("checksum", "complete"):
                continue
            path = _copy(built, "v4", tmp_path, "attr.h5")
            with h5py.File(path, "a") as f:
                g = f[table_path(measure, rb)]
                v = g.attrs[key]
                g.attrs[key] = (not v) if isinstance(v, (bool, np.bool_)) else (
                    v + 1 if isinstance(v, (int, float, np.number)) else np.bytes_(bytes(v) + b" "))
            store = irscale.open_store(path)
            if key in UNCOVERED:
                store.table(measure, table_rb=rb)
                continue
            with pytest.raises(irscale.StoreError, match="upgrade" if key == "format_version" else "corrupt"):
                store.table(measure, table_rb=rb)


@pytest.mark.slow
def test_big_tables_are_checked_where_lookups_read(built, tmp_path):
    """Tables over the size limit are opened without reading their entries: a damaged
    run id far from what a lookup reads does not stop it (right answers), one it reads
    gives the error (the block sums)."""
    want = irscale.open_store(built["v4"]).scale("AP@11", 11).rank_ids([0, 1, 2]).tolist()
    for version in ("v4",):
        path = _copy(built, version, tmp_path, f"{version}.h5")
        with h5py.File(path, "a") as f:
            ids = f[table_path("AP@11")]["ids"]
            j = ids.shape[0] - 10                           # a large value, in the last block
            run = int(ids[j])
            ids[j] = 0xFFFFFF00
        near = _outcome(path, tmp_path, "result = store.scale('AP@11', 11).rank_ids([0, 1, 2]).tolist()", big=True)
        assert near == {"rc": 0, "kind": "ok", "message": "", "result": want}, near
        far = _outcome(path, tmp_path, f"result = store.scale('AP@11', 11).rank_ids([{run}]).tolist()", big=True)
        assert far["kind"] == "CorruptStoreError" and "AP@11" in far["message"], far


def test_format_4_records_every_dataset(built):
    """Every dataset of a format-4 table has its digest, and the checksum is that of the
    attributes (an independent sha256 over the datasets' bytes)."""
    with h5py.File(built["v4"], "r") as f:
        for g in f["tables"].values():
            digests = json.loads(g.attrs["digests"])
            assert set(digests) == set(g)
            for name, (dtype, shape, digest) in digests.items():
                arr = g[name][()]
                assert (arr.dtype.str, list(arr.shape)) == (dtype, shape)
                assert hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest() == digest
            if decode_attrs(g.attrs)["layout"] == "entries":
                assert "block_sums" in digests and "index_cum" in digests and "index_raw" in digests


def _craft(path, how: str, fifo) -> None:
    """A crafted table AP@6 (its checksum valid again): its dataset ``counts`` replaced."""
    def change(g):
        counts = g["counts"][()]
        del g["counts"]
        if how == "external storage":
            g.create_dataset("counts", shape=counts.shape, dtype=counts.dtype, external=[(str(fifo), 0, 1 << 20)])
        elif how == "external link":
            g["counts"] = h5py.ExternalLink(str(fifo), "/counts")
        elif how == "soft link":
            g["counts"] = h5py.SoftLink("/ids")
        elif how == "chunked":
            g.create_dataset("counts", data=counts, chunks=True, compression="gzip")
        elif how == "virtual":
            layout = h5py.VirtualLayout(shape=counts.shape, dtype=counts.dtype)
            layout[:] = h5py.VirtualSource(str(fifo), "counts", shape=counts.shape)
            g.create_virtual_dataset("counts", layout)
        elif how == "extra object":
            g["counts"] = counts
            g.create_group("more")
        elif how in ("forged shape", "forged shape and digest"):
            g.create_dataset("counts", shape=(1 << 28,), dtype=counts.dtype)      # 2 GB said, never written
            if how == "forged shape and digest":
                digests = json.loads(g.attrs["digests"])
                digests["counts"][1] = [1 << 28]
                g.attrs["digests"] = json.dumps(digests)
        else:
            raise ValueError(how)
    rewrite(table_file(path, "AP@6"), change)


CRAFTS = ["external storage", "external link", "soft link", "chunked", "virtual", "extra object", "forged shape",
          "forged shape and digest"]


def test_crafted_files_are_refused_before_any_data_is_read(tmp_path):
    """Objects irscale does not write, behind a valid checksum: lookups, info --verify and
    pack refuse the table in one line, reading nothing (a FIFO would hang a read; a
    forged shape would read gigabytes), in a few seconds; the other tables serve on."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    pristine = tmp_path / "pristine"
    irscale.build_store(pristine, "AP@6,AP@5", n_jobs=1, layout="table")
    jobs = []
    for i, how in enumerate(CRAFTS):
        path = tmp_path / f"s{i}"
        shutil.copytree(pristine, path)
        _craft(path, how, fifo)
        jobs.append({"path": str(path), "big": False, "argv": [
            ["lookup", str(path), "AP@6", "--rb", "3", "0.5"], ["info", str(path), "--verify"],
            ["pack", str(path), str(tmp_path / f"p{i}.h5")]]})
    t0 = time.perf_counter()
    results = _batch(jobs, tmp_path)
    assert time.perf_counter() - t0 < 120
    for how, out in zip(CRAFTS, results):
        for rc, _, stderr in out["cli"]:
            assert rc == 2 and len(stderr.strip().splitlines()) == 1 and "AP@6" in stderr, (how, rc, stderr)
            assert "rebuild" in stderr, (how, stderr)
    assert not list(tmp_path.glob("p*.h5"))
    want = irscale.open_store(pristine).scale("AP@5", 3).rank_ids([0, 7, 21]).tolist()
    for i in range(len(CRAFTS)):
        assert irscale.open_store(tmp_path / f"s{i}").scale("AP@5", 3).rank_ids([0, 7, 21]).tolist() == want
    assert 0 < _batch.maxrss < 1 << 20, f"the batch's peak was {_batch.maxrss} KiB: a forged shape read?"


def test_a_table_replaced_while_it_is_read_is_read_from_one_file(tmp_path):
    """A --rebuild that changes a table's layout renames a new file into place while
    readers open it: each read sees the old file or the new one, whole (one descriptor,
    mapped), never a mix of the two."""
    a, b = tmp_path / "a", tmp_path / "b"
    irscale.build_store(a, "RBP(p=0.8)@10", layout="table", n_jobs=1)
    irscale.build_store(b, "RBP(p=0.8)@10", layout="oracle", n_jobs=1)
    name = table_file(a, "RBP(p=0.8)@10").name
    want = irscale.open_store(a).scale("RBP(p=0.8)@10").rank_ids([0, 5, 100, 1023]).tolist()
    assert irscale.open_store(b).scale("RBP(p=0.8)@10").rank_ids([0, 5, 100, 1023]).tolist() == want
    path = tmp_path / "s"
    shutil.copytree(a, path)
    stop = threading.Event()

    def replacing():
        while not stop.is_set():
            for src in (a, b):
                os.link(src / name, path / ".next.h5")
                os.replace(path / ".next.h5", path / name)
    thread = threading.Thread(target=replacing, daemon=True)
    thread.start()
    try:
        answers = [irscale.open_store(path).scale("RBP(p=0.8)@10").rank_ids([0, 5, 100, 1023]).tolist()
                   for _ in range(120)]
    finally:
        stop.set()
        thread.join()
    assert answers == [want] * 120
