"""The store folder (irscale.store.folder) and packed files (irscale.store.pack): readers
write nothing (a read-only store reads and serves, also after an interrupted commit), a
writer killed at random moments never leaves a store that fails to open or verify, eight
builds of different tables at once keep every table, a damaged manifest is refused and
never rewritten, and pack/unpack carry tables whole (a damaged one refused, by name)."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import h5py
import pytest
from store_files import table_file

import irscale
from irscale.errors import CorruptStoreError, StoreError
from irscale.store import folder
from irscale.store.pack import pack, unpack

PY = sys.executable


def _snapshot(path: Path) -> dict:
    """Every entry of the folder with its inode, size and modification time."""
    return {p.name: (p.stat().st_ino, p.stat().st_size, p.stat().st_mtime_ns) for p in path.iterdir()}


def _create_app():
    """The service's app factory, wherever the service lives (it is moving to irscale.service)."""
    try:
        from irscale.service import create_app
    except ImportError:
        from irscale.store.service import create_app
    return create_app


def _ranks(path) -> list:
    store = irscale.open_store(path)
    return [store.scale("AP@8", rb=3).rank([0.5, 1.0]).tolist(), store.scale("RR@8").rank([0.25]).tolist()]


def test_readers_write_nothing(tmp_path):
    path = tmp_path / "s"
    irscale.build_store(path, "AP@8,RR@8")
    (path / ".tmp-999999-left").mkdir()               # what an interrupted commit leaves
    (path / ".tmp-999999-left" / "AP@8.h5").write_bytes(b"half a table")
    before = _snapshot(path)
    want = _ranks(path)
    store = irscale.open_store(path)
    store.verify()
    _create_app()(path)
    assert _ranks(path) == want and _snapshot(path) == before


@pytest.mark.slow      # about 10 s
def test_a_read_only_store_reads_and_serves(tmp_path):
    """The store's files readable and nothing writable by the reader: a child that cannot
    write (another user when the tests run as root, else the folder made read-only)."""
    if os.geteuid() == 0 and not all(os.stat(p).st_mode & 0o001 for p in Path(sys.prefix).resolve().parents):
        pytest.skip(f"the reader runs as another user, who cannot reach this Python's packages under {sys.prefix}")
    base = Path(tempfile.mkdtemp(prefix="irscale-ro-"))
    try:
        os.chmod(base, 0o755)
        path = base / "s"
        irscale.build_store(path, "AP@8,RR@8")
        (path / ".tmp-999999-left").mkdir()
        want = _ranks(path)
        for p in [path, *path.iterdir()]:
            os.chmod(p, 0o555 if p.is_dir() else 0o444)
        drop = "os.setgid(65534); os.setuid(65534)" if os.geteuid() == 0 else "pass"
        code = textwrap.dedent(f"""
            import json, os
            import irscale
            try:
                from irscale.service import create_app
            except ImportError:
                from irscale.store.service import create_app
            from fastapi.testclient import TestClient

            def read():
                store = irscale.open_store({str(path)!r})
                store.verify()
                ranks = [store.scale("AP@8", rb=3).rank([0.5, 1.0]).tolist(),
                         store.scale("RR@8").rank([0.25]).tolist()]
                client = TestClient(create_app({str(path)!r}))
                r = client.post("/v1/rank", json={{"measure": "AP@8", "rb": 3, "values": [0.5, 1.0]}})
                return [ranks, r.status_code, r.json()["rank"]]
            read()                    # modules and kernels loaded while the interpreter may read its files
            {drop}
            print(json.dumps(read()))
        """)
        done = subprocess.run([PY, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=300,
                              cwd=base, env={**os.environ, "NUMBA_CACHE_DIR": str(base / "numba")})
        assert done.returncode == 0, done.stderr
        import json
        ranks, status, served = json.loads(done.stdout.strip().splitlines()[-1])
        assert ranks == want and status == 200 and served == want[0]
    finally:
        for p in base.rglob("*"):
            if p.is_dir():
                os.chmod(p, 0o755)
        shutil.rmtree(base, ignore_errors=True)


def _killed_builds(path: Path, rounds: int, seed: int) -> None:
    """Start a build of several tables and SIGKILL it after a random delay, ``rounds`` times;
    after each kill the store opens and every table verifies."""
    rng = random.Random(seed)
    measures = "AP@11,RR@9,P@9,DCG(b=2)@11,nDCG(b=2,gains=(0,1,2))@6,R@9"
    script = f"import irscale; irscale.build_store({str(path)!r}, {measures!r}, rebuild=True, n_jobs=1)"
    for _ in range(rounds):
        p = subprocess.Popen([PY, "-c", script], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 2.0))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if path.exists() and (path / folder.MANIFEST).exists():
            store = irscale.open_store(path)
            assert [problem for _, problem in store.verify_each() if problem] == []


@pytest.mark.slow      # about 8 s
def test_a_writer_killed_at_random_moments_never_damages_the_store(tmp_path):
    path = tmp_path / "s"
    irscale.build_store(path, "P@4")
    _killed_builds(path, 6, seed=1)
    store = irscale.build_store(path, "AP@11,RR@9")
    assert {"AP@11", "RR@9", "P@4"} <= {t["measure"] for t in store.tables()}
    assert len(store.verify()) == len(store.tables())
    assert not list(path.glob(".tmp-*"))                # the dead writers' temporary folders are gone


@pytest.mark.slow
def test_a_writer_killed_at_many_random_moments(tmp_path):
    path = tmp_path / "s"
    irscale.build_store(path, "P@4")
    _killed_builds(path, 40, seed=2)
    assert irscale.build_store(path, "AP@11").verify()


@pytest.mark.slow      # about 18 s
def test_eight_builds_of_different_tables_at_once(tmp_path):
    path = tmp_path / "s"
    irscale.build_store(path, "P@4")
    go = tmp_path / "go"
    names = [f"RR@{n}" for n in range(5, 9)] + [f"AP@{n}" for n in range(5, 9)]
    script = """
        import os, sys, time, irscale
        irscale.scale("AP@4", rb=4)
        while not os.path.exists({go!r}):
            time.sleep(0.005)
        irscale.build_store({path!r}, sys.argv[1], n_jobs=1)
    """
    procs = [subprocess.Popen([PY, "-c", textwrap.dedent(script.format(go=str(go), path=str(path))), name],
                              stderr=subprocess.PIPE, text=True) for name in names]
    time.sleep(1.0)
    go.touch()
    for p in procs:
        _, err = p.communicate(timeout=180)
        assert p.returncode == 0, err
    store = irscale.open_store(path)
    assert {t["measure"] for t in store.tables()} == set(names) | {"P@4"}
    assert len(store.verify()) == 9


@pytest.mark.parametrize("damage", ["garbage", "missing", "fifo", "huge", "future"])
def test_a_damaged_manifest_is_refused_and_never_rewritten(tmp_path, damage):
    path = tmp_path / "s"
    irscale.build_store(path, "P@4")
    manifest = path / folder.MANIFEST
    manifest.unlink()
    if damage == "garbage":
        manifest.write_bytes(b"\x00\xffnot json")
    elif damage == "fifo":
        os.mkfifo(manifest)
    elif damage == "huge":
        manifest.write_text('{"format": "irscale-store", "format_version": 1, "x": "' + "a" * 100_000 + '"}')
    elif damage == "future":
        manifest.write_text('{"format": "irscale-store", "format_version": 99}')
    t0 = time.perf_counter()
    with pytest.raises(StoreError) as info:
        irscale.open_store(path)
    assert time.perf_counter() - t0 < 5
    assert str(path) in str(info.value)
    with pytest.raises(StoreError):
        irscale.build_store(path, "RR@4")
    assert not table_file(path, "RR@4").exists()
    if damage != "missing":
        assert manifest.exists() and not (damage != "fifo" and manifest.read_bytes() == b"")


def test_table_files_that_are_not_regular_files_are_not_read(tmp_path):
    path = tmp_path / "s"
    irscale.build_store(path, "P@4")
    os.mkfifo(path / folder.file_of("AP@6"))                # a FIFO named like a table: never opened
    (path / folder.file_of("RR@6")).mkdir()
    t0 = time.perf_counter()
    store = irscale.open_store(path)
    assert [t["measure"] for t in store.tables()] == ["P@4"] and not store.has("AP@6")
    assert time.perf_counter() - t0 < 5


def test_pack_and_unpack_carry_tables_whole(tmp_path):
    path = tmp_path / "s"
    irscale.build_store(path, "AP@8,RR@8,nDCG(b=2,gains=(0,1,2))@5", rb_counts=[(2, 1)])
    packed = tmp_path / "s.h5"
    assert pack(path, packed) == 3
    assert _ranks(packed) == _ranks(path) and len(irscale.open_store(packed).verify()) == 3
    back = tmp_path / "back"
    assert unpack(packed, back) == 3
    assert _ranks(back) == _ranks(path)
    assert sorted(t["checksum"] for t in irscale.open_store(back).tables()) == \
        sorted(t["checksum"] for t in irscale.open_store(path).tables())
    with pytest.raises(StoreError, match="exists"):
        pack(path, packed)
    with h5py.File(table_file(path, "RR@8"), "a") as f:      # damage a table: refused, by name, nothing written
        f["counts"][0] = f["counts"][0] + 1
    with pytest.raises(CorruptStoreError, match="RR@8"):
        pack(path, tmp_path / "other.h5")
    assert not (tmp_path / "other.h5").exists() and not list(tmp_path.glob(".other.h5.tmp-*"))
    from irscale.cli import main
    assert main(["unpack", str(packed), str(tmp_path / "cli")]) == 0
    assert main(["pack", str(tmp_path / "cli"), str(tmp_path / "cli.h5")]) == 0
    assert _ranks(tmp_path / "cli.h5") == _ranks(packed)


@pytest.mark.parametrize("value", [".", "/", "  ", "..", "~/.."])
def test_a_default_store_that_names_no_folder_is_one_line(tmp_path, monkeypatch, capsys, value):
    from irscale.cli import main
    from irscale.store.location import default_store
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IRSCALE_STORE", value)
    with pytest.raises(StoreError, match="IRSCALE_STORE"):
        default_store()
    assert main(["info"]) == 2
    err = capsys.readouterr().err
    assert "IRSCALE_STORE" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("IRSCALE_STORE", str(tmp_path / "mine"))
    assert default_store() == tmp_path / "mine"
    monkeypatch.delenv("IRSCALE_STORE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_store() == tmp_path / "irscale" / "tables"


def test_a_store_is_never_packed_into_itself(tmp_path):
    path = tmp_path / "pk"
    irscale.build_store(path, "P@4")
    (path / "sub").mkdir()
    for out in (path / "backup.h5", path / "sub" / "backup.h5"):
        with pytest.raises(StoreError, match="inside the store"):
            pack(path, out)
        assert not out.exists()
    link = tmp_path / "link"
    link.symlink_to(path)
    with pytest.raises(StoreError, match="inside the store"):
        pack(link, path / "x.h5")
    (path / "sub").rmdir()
    assert irscale.open_store(path).verify() == ["P@4"]


def test_a_table_held_open_for_writing_elsewhere_is_not_called_damaged(tmp_path):
    """Another HDF5 program holding a table file open for writing (HDF5's flag in the
    superblock): readers take no lock and read it (what it writes would fail the checks)."""
    path = tmp_path / "s"
    irscale.build_store(path, "AP@6", n_jobs=1)
    want = irscale.open_store(path).scale("AP@6", rb=3).rank([0.5])
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, h5py
        f = h5py.File({str(table_file(path, "AP@6"))!r}, "r+")
        print("open", flush=True)
        sys.stdin.read()
        f.close()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        assert irscale.open_store(path).scale("AP@6", rb=3).rank([0.5]) == want
    finally:
        holder.communicate("", timeout=30)
    assert irscale.open_store(path).scale("AP@6", rb=3).rank([0.5]) == want
