"""Long builds: SIGKILL or Ctrl-C at any point and the same call resumes from the last
finished bucket with bit-identical tables (a Ctrl-C saying what it keeps, the resumed
build counting the seconds of every segment); worker count and backends (threads, a dask
cluster) never change a table."""
import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import irscale
from irscale.enumerate import split
from irscale.store import fill

MEASURES = "AP@16,DCG(b=2)@16,nDCG(b=2)@16,RBP(p=0.8)@16,RR@16"
BUCKET = 3000  # pairs per bucket: dozens of buckets per table at N = 16


def _checksums(path):
    return {t["measure"]: t["checksum"] for t in irscale.open_store(path).tables()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "ref.h5"
    irscale.build_store(path, MEASURES, bucket_items=BUCKET, layout="table")
    return _checksums(path)


def test_kill_after_some_buckets_then_resume(tmp_path, reference):
    path = tmp_path / "t.h5"
    script = textwrap.dedent(f"""
        import os, signal
        import irscale
        from irscale.enumerate import split
        real = split.BucketResult.save
        saved = []
        def save(self, p):
            real(self, p)
            saved.append(p)
            if len(saved) == 7:             # in the middle of the first table
                os.kill(os.getpid(), signal.SIGKILL)
        split.BucketResult.save = save
        irscale.build_store({str(path)!r}, {MEASURES!r}, bucket_items={BUCKET}, layout="table", n_jobs=1)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    work = tmp_path / ".t.h5.build"
    finished = sorted(work.glob("*/bucket-*[0-9]"))
    assert len(finished) == 7
    # resume in-process, counting the buckets really computed
    calls = []
    real = split.process_bucket

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)
    split.process_bucket = counting
    try:
        irscale.build_store(path, MEASURES, bucket_items=BUCKET, layout="table", n_jobs=1)
        resumed = len(calls)
        calls.clear()
        irscale.build_store(tmp_path / "fresh.h5", MEASURES, bucket_items=BUCKET, layout="table", n_jobs=1)
        total = len(calls)
    finally:
        split.process_bucket = real
    assert resumed == total - 7      # the 7 finished buckets were reused, not recomputed
    assert _checksums(path) == reference
    assert not work.exists()         # checkpoints removed once the tables are committed



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

@pytest.mark.slow
def test_cli_killed_at_random_times_resumes_bit_identical(tmp_path, reference):
    path = tmp_path / "t.h5"
    cmd = [sys.executable, "-m", "irscale", "build", "-m", MEASURES, "--out", str(path), "-q",
           "--bucket-items", str(BUCKET), "--layout", "table"]
    for delay in (1.5, 0.8, 2.5):
        proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if path.exists():  # whatever is there is complete and verified
            irscale.open_store(path).verify()
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert _checksums(path) == reference


def test_workers_and_threads_give_identical_tables(tmp_path, reference):
    a = irscale.build_store(tmp_path / "a.h5", MEASURES, bucket_items=BUCKET, n_jobs=2, layout="table")
    b = irscale.build_store(tmp_path / "b.h5", MEASURES, bucket_items=BUCKET, n_jobs=2, backend="threading",
                            layout="table")
    assert _checksums(a.path) == reference == _checksums(b.path)


@pytest.mark.slow
def test_dask_cluster_gives_identical_tables(tmp_path, reference):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        from irscale.cli import main
        out = tmp_path / "d.h5"
        rc = main(["build", "-m", MEASURES, "--out", str(out), "-q", "--bucket-items", str(BUCKET), "--jobs", "2",
                   "--backend", "dask", "--scheduler", cluster.scheduler_address, "--layout", "table"])
        assert rc == 0
    assert _checksums(out) == reference
