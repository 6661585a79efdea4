"""build_store: build the tables a store lacks and commit each to the file atomically,
resumably (checkpoints of unfinished tables live next to the store)."""
from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from irscale.enumerate.fanout import Fanout, dask_client
from irscale.enumerate.split import checkpoint_status
from irscale.errors import BuildTooLargeError, StoreError
from irscale.scales.measures.measure import Measure, RecallBaseRequest
from irscale.scales.measures.parse import parse_measures
from irscale.scales.tables.build import BuildOptions, build_tables, table_requests
from irscale.scales.tables.entry_build import safe_name
from irscale.scales.tables.estimate import Estimate, duration, estimate, size
from irscale.store.format import table_name
from irscale.store.reader import Store
from irscale.store.writer import commit

#: Builds estimated below this many bytes of tables and checkpoints skip the disk check.
SMALL_BUILD_BYTES = 64 << 20


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
    fanout = Fanout(n_jobs, backend)
    # estimates first: they refuse what cannot fit on disk, and their small probe builds
    # compile the kernels, so that compile time is not counted as the first table's
    plans = [estimate(m, t, fanout.workers, method) for m in todo for t in wanted[m]]
    check_disk(path, wd, plans)
    if progress:
        announce(plans, wd)
    before = {str(m): status.seconds for m in todo
              if (status := checkpoint_status(wd / safe_name(str(m)))) is not None}
    client = dask_client(scheduler, n_jobs) if backend == "dask" and todo else None
    options = BuildOptions(fanout=fanout, method=method, progress=progress, workdir=wd,
                           bucket_items=bucket_items, concatenate=False)
    committed = 0
    try:
        t0 = time.perf_counter()
        pending: list = []      # tables of one measure with a table per vector, committed together

        def flush():
            nonlocal committed
            if pending:
                seconds = (time.perf_counter() - t0) / len(pending) + before.get(str(pending[0].measure), 0.0)
                commit(path, pending, {table_name(str(t.measure), t.table_rb): seconds for t in pending},
                       progress=progress)
                committed += len(pending)
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
    except KeyboardInterrupt:
        raise KeyboardInterrupt(interrupted_message(path, wd, committed)) from None
    finally:
        if client is not None:
            client.close()
    if wd.exists() and not any(wd.iterdir()):
        wd.rmdir()
    return Store(path)


def check_disk(path: Path, wd: Path, plans: list[Estimate]) -> None:
    """Refuse a build whose estimated peak disk use exceeds the free space of the store's
    folder: checkpoints of the table being built, plus each commit's new copy of the store
    (the old store stays until the copy is renamed over it)."""
    if not plans or sum(p.stored + p.checkpoints for p in plans) < SMALL_BUILD_BYTES:
        return
    old = path.stat().st_size if path.exists() else 0
    stored, peak = 0, 0
    for p in plans:
        stored += p.stored
        peak = max(peak, p.checkpoints + old + stored)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return
    held = sum(f.stat().st_size for f in wd.rglob("*") if f.is_file()) if wd.exists() else 0
    if peak > free + held:
        raise BuildTooLargeError(
            f"building {len(plans)} table(s) into {path} needs about {size(peak)} of disk at its peak (the store "
            f"grows by about {size(stored)}, checkpoints in {wd} take up to {size(max(p.checkpoints for p in plans))}"
            f", and each commit writes a new copy of the store), but {folder} has {size(free)} free; free some "
            f"space or build fewer or smaller tables at a time")


def announce(plans: list[Estimate], wd: Path) -> None:
    """Print the estimates of the tables worth announcing (stderr)."""
    heavy = [p for p in plans if p.heavy]
    for p in heavy:
        print(f"irscale: {p.describe()}", file=sys.stderr)
    if len(heavy) > 1:
        print(f"irscale: in all about {duration(sum(p.seconds for p in plans))} and "
              f"{size(sum(p.stored for p in plans))} in the store; checkpoints in {wd}", file=sys.stderr)
    elif heavy:
        print(f"irscale: checkpoints in {wd}; an interrupted build resumes when run again", file=sys.stderr)


def interrupted_message(path: Path, wd: Path, committed: int) -> str:
    """What an interrupted build leaves and how to resume it."""
    kept = f"{committed} table(s) committed to {path} by this run are kept" if committed else \
        f"{path} is unchanged"
    parts = []
    if wd.exists():
        for sub in sorted(wd.iterdir()):
            status = checkpoint_status(sub)
            if status is not None and status.done:
                parts.append(f"{status.label}: {status.done} of {status.total} buckets, {size(status.bytes)}")
    saved = f"; checkpoints in {wd} ({'; '.join(parts)})" if parts else ""
    return f"interrupted: {kept}{saved}; run the same build again to resume"
