"""build_store: build measures' tables and commit them to a store file."""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from irscale.store.reader import Store
from irscale.store.writer import commit


def workdir_for(path: Path) -> Path:
    """Folder next to the store holding resumable checkpoints of unfinished tables."""
    return path.parent / f".{path.name}.build"


def build_store(path: str | os.PathLike, measures, rbs="all", n_jobs: int = 1, progress: bool = False,
                rebuild: bool = False, method: str = "auto", backend: str | None = None,
                scheduler: str | None = None, bucket_items: int | None = None, rb_counts=None) -> Store:
    """Build the tables of ``measures`` (names or Measure objects; a comma-separated
    string works too) into the store at ``path``.

    One table per measure serves every recall base (``rbs`` is validated only), except
    for graded RB-dependent measures (``nDCG(b=2,gains=(0,1,2))@10``): they get one table
    per capped per-grade count vector (c_1..c_G), those listed in ``rb_counts`` (a tuple,
    a list of them, or a dict from measure name to such a list; e.g. the vectors of a qrels
    file, :func:`irscale.scales.runs.trec.qrels_count_vectors`; default: the all-runs vector
    (N, ..., N) of the ``common`` scale). Tables
    already complete in the store are kept unless ``rebuild``. Each table is committed
    atomically as soon as it is built; long builds checkpoint finished buckets next to
    the store (``.NAME.build/``), so running the same call again after a crash or kill
    continues from the last finished bucket and gives bit-identical tables.

    ``backend``: joblib backend for the workers (``"loky"`` processes by default,
    ``"threading"``, or ``"dask"`` to run on a dask.distributed cluster whose scheduler
    address is ``scheduler``; without an address a local cluster is started).
    ``bucket_items``: work-unit size of the split enumerator (pairs per bucket).
    """
    from irscale.scales import parse_measures
    from irscale.scales.tables.build import build_tables, table_rbs

    path = Path(path)
    ms = parse_measures(measures)
    vectors = {}
    for m in ms:
        given = rb_counts.get(str(m)) if isinstance(rb_counts, dict) else rb_counts
        wanted = table_rbs(m, rbs if not m.counts_keyed or given is None else given)
        if m.counts_keyed:
            vectors[str(m)] = wanted
    existing = Store(path) if path.exists() else None
    if existing is not None and not rebuild:
        vectors = {name: [c for c in vs if not existing.has(name, c)] for name, vs in vectors.items()}
    todo = [m for m in ms if (vectors.get(str(m)) if m.counts_keyed else
                               rebuild or existing is None or not existing.has(m))]
    wd = workdir_for(path)
    if todo and not path.parent.is_dir():
        from irscale.errors import StoreError
        raise StoreError(f"cannot write {path}: folder {path.parent} does not exist")
    client = _dask_client(scheduler, n_jobs) if backend == "dask" and todo else None
    from irscale.errors import StoreError
    try:
        t0 = time.perf_counter()
        pending: list = []      # tables of one graded RB-dependent measure, committed together

        def flush():
            if pending:
                from irscale.store.format import table_name
                seconds = (time.perf_counter() - t0) / len(pending)
                commit(path, pending, {table_name(str(t.measure), t.rb_counts): seconds for t in pending},
                       progress=progress)
                pending.clear()

        for table in build_tables(todo, n_jobs=n_jobs, progress=progress, workdir=wd, backend=backend,
                                  concatenate=False, method=method, bucket_items=bucket_items, rb_counts=vectors):
            if pending and pending[0].measure != table.measure:
                flush()
                t0 = time.perf_counter()
            pending.append(table)
            if table.rb_counts is None:   # one table per measure: commit it now
                flush()
                sub = wd / _sub(str(table.measure))
                if sub.exists():
                    shutil.rmtree(sub, ignore_errors=True)
                t0 = time.perf_counter()
        flush()
    except OSError as e:  # work folder or checkpoint not writable, disk full
        raise StoreError(f"cannot write {path} or its work folder {wd}: {e.strerror or e}; "
                         f"tables already in the store are unchanged") from None
    finally:
        if client is not None:
            client.close()
    if wd.exists() and not any(wd.iterdir()):
        wd.rmdir()
    return Store(path)


def _dask_client(scheduler: str | None, n_jobs: int):
    """Connect to a dask.distributed scheduler (or start a local cluster) for joblib's
    dask backend."""
    from irscale.errors import IrscaleError
    try:
        from distributed import Client
    except ImportError:
        raise IrscaleError("the dask backend needs dask.distributed: pip install 'irscale[dask]'") from None
    try:
        if scheduler:
            return Client(scheduler, timeout="20s")
        return Client(n_workers=max(1, n_jobs if n_jobs > 0 else os.cpu_count() or 1), threads_per_worker=1,
                      dashboard_address=None)
    except OSError as e:
        raise IrscaleError(f"cannot reach the dask scheduler {scheduler}: {e}") from None


def _sub(name: str) -> str:
    from irscale.scales.tables.build import _safe
    return _safe(name)
