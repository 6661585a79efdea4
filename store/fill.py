"""build_store: build the tables a store lacks and commit each to the file atomically,
resumably (checkpoints of unfinished tables live next to the store)."""
from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

from irscale.enumerate.fanout import Fanout, dask_client
from irscale.errors import StoreError
from irscale.scales.measures.measure import Measure, RecallBaseRequest
from irscale.scales.measures.parse import parse_measures
from irscale.scales.tables.build import BuildOptions, build_tables, table_requests
from irscale.scales.tables.entry_build import safe_name
from irscale.store.format import table_name
from irscale.store.reader import Store
from irscale.store.writer import commit


def workdir_for(path: Path) -> Path:
    """Folder next to the store holding resumable checkpoints of unfinished tables."""
    return path.parent / f".{path.name}.build"


def build_store(path: str | os.PathLike, measures: str | Iterable[str | Measure],
                rbs: RecallBaseRequest | dict[str, RecallBaseRequest] = "all", n_jobs: int = 1,
                progress: bool = False, rebuild: bool = False, method: str = "auto", backend: str | None = None,
                scheduler: str | None = None, bucket_items: int | None = None,
                rb_counts: tuple[int, ...] | list[tuple[int, ...]] | dict[str, list[tuple[int, ...]]] | None = None
                ) -> Store:
    """Build the tables of ``measures`` (names or Measure objects; a comma-separated
    string works too) into the store at ``path``.

    One table per measure serves every recall base (``rbs``, a request or a dict from
    measure name to a request, is validated only), except
    for measures with a table per recall-base vector: graded RB-dependent measures
    (``nDCG(b=2,gains=(0,1,2))@10``, one table per capped per-grade count vector
    (c_1..c_G)) and measures defined per topic (Twist, CRP, OIE, Rprec: one table per
    topic's counts). Their tables are those listed in ``rb_counts`` (a tuple, a list of
    them, or a dict from measure name to such a list; e.g. the vectors of a qrels file,
    :func:`irscale.scales.runs.judging.qrels_table_rbs`; default: the all-runs vector
    (N, ..., N) of the ``common`` scale, where there is one). Tables already complete in
    the store are kept unless ``rebuild``. Each table is committed atomically as soon as
    it is built; long builds checkpoint finished buckets next to the store
    (``.NAME.build/``), so running the same call again after a crash or kill continues
    from the last finished bucket and gives bit-identical tables.

    ``backend``: joblib backend for the workers (``"loky"`` processes by default,
    ``"threading"``, or ``"dask"`` to run on a dask.distributed cluster whose scheduler
    address is ``scheduler``; without an address a local cluster is started).
    ``bucket_items``: work-unit size of the split enumerator (pairs per bucket).
    """
    path = Path(path)
    ms = parse_measures(measures)
    requests = {}
    for m in ms:
        given = rb_counts.get(str(m)) if isinstance(rb_counts, dict) else rb_counts
        asked = rbs.get(str(m), "all") if isinstance(rbs, dict) else rbs
        requests[str(m)] = given if m.per_grade_rb and given is not None else asked
    wanted = table_requests(ms, requests)
    existing = Store(path) if path.exists() else None
    if existing is not None and not rebuild:
        wanted = {m: [t for t in ts if not existing.has(m, t)] for m, ts in wanted.items()}
    todo = [m for m in ms if wanted[m]]
    wd = workdir_for(path)
    if todo and not path.parent.is_dir():
        raise StoreError(f"cannot write {path}: folder {path.parent} does not exist")
    client = dask_client(scheduler, n_jobs) if backend == "dask" and todo else None
    options = BuildOptions(fanout=Fanout(n_jobs, backend), method=method, progress=progress, workdir=wd,
                           bucket_items=bucket_items, concatenate=False)
    try:
        t0 = time.perf_counter()
        pending: list = []      # tables of one measure with a table per vector, committed together

        def flush():
            if pending:
                seconds = (time.perf_counter() - t0) / len(pending)
                commit(path, pending, {table_name(str(t.measure), t.table_rb): seconds for t in pending},
                       progress=progress)
                pending.clear()

        for table in build_tables(todo, {str(m): wanted[m] for m in todo}, options=options):
            if pending and pending[0].measure != table.measure:
                flush()
                t0 = time.perf_counter()
            pending.append(table)
            if table.table_rb is None:   # one table per measure: commit it now
                flush()
                sub = wd / safe_name(str(table.measure))
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
