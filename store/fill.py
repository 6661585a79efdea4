"""Filling a store: :func:`build_store` builds the tables a store lacks, :func:`build_bounded` its bounded
scales (``irscale build --layout bounded``); each table is committed as soon as it is built (a rename:
:mod:`irscale.store.folder`), resumably, one build per table at a time (a lock per table), a full disk or a
file-size limit reported as DiskFullError."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import shutil
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from irscale.enumerate.disk import disk_error
from irscale.enumerate.fanout import Fanout, dask_client
from irscale.enumerate.jobs import available_cores
from irscale.enumerate.progress import progress_bar
from irscale.enumerate.split import checkpoint_status, remove_partial
from irscale.errors import BuildTooLargeError, DiskFullError, MeasureError, StoreError
from irscale.scales.measures.parse import parse_measures
from irscale.scales.tables.bounded import bounded_table
from irscale.scales.tables.build import BuildOptions, build_tables, table_requests
from irscale.scales.tables.estimate import Estimate, duration, estimate, size
from irscale.scales.tables.layouts import layout_of
from irscale.store import folder
from irscale.store.reader import Store, table_name
from irscale.store.writer import commit, table_bytes

if TYPE_CHECKING:
    from irscale.scales.measures.measure import Measure, RecallBaseRequest

#: Builds estimated below this many bytes of tables and checkpoints skip the disk check.
SMALL_BUILD_BYTES = 64 << 20


def workdir_for(path: Path) -> Path:
    """Folder next to the store holding resumable checkpoints of unfinished tables."""
    return path.parent / f".{path.name}.build"


@dataclasses.dataclass
class BuildReport:
    """The tables a build was asked for, by name (``AP@10``, ``nDCG(b=2)@10 rb=(3,2)``): written or found built."""

    built: list[str] = dataclasses.field(default_factory=list)
    found: list[str] = dataclasses.field(default_factory=list)


def _of(request: object, m: Measure) -> object:
    """What ``request`` (one request, or a dict from measure name to requests) asks of ``m``."""
    return request.get(str(m)) if isinstance(request, dict) else request


def _names(tables: dict) -> list[str]:
    return [table_name(str(m), t) for m, ts in tables.items() for t in ts]


def build_store(path: str | os.PathLike, measures: str | Iterable[str | Measure],
                rbs: RecallBaseRequest | dict[str, RecallBaseRequest] = "all", n_jobs: int | None = None,
                progress: bool = False, rebuild: bool = False, method: str = "auto", backend: str | None = None,
                scheduler: str | None = None, bucket_items: int | None = None,
                rb_counts: tuple[int, ...] | list[tuple[int, ...]] | dict[str, list[tuple[int, ...]]] | None = None,
                wait: float | None = None, layout: str = "auto", report: BuildReport | None = None) -> Store:
    """Build the tables of ``measures`` (names, Measure objects, or a comma-separated string) that the store
    folder at ``path`` lacks (all with ``rebuild``); returns the store. One table per measure serves every recall
    base (``rbs`` is validated only), but measures with a table per recall-base vector get one per vector of
    ``rb_counts`` (a tuple, a list, or a dict from measure name to a list; default the all-runs vector). Big
    tables checkpoint in :func:`workdir_for` (the same call resumes, bit-identically); a table another build is
    writing is waited for (``wait`` seconds, then StoreBusyError; None: as long as it takes); a full disk or
    file-size limit is DiskFullError saying what was kept. ``n_jobs``, ``backend`` (loky, threading, dask at
    ``scheduler``), ``method`` (auto, split, generic), ``layout`` (auto, table, oracle: a table stored in another
    layout than one asked for is replaced); ``report``: a BuildReport to fill."""
    path = Path(path)
    ms = parse_measures(measures)
    for m in ms:
        m.check_scales()       # tables exist up to N = MAX_N, oracles to MAX_ORACLE_N (raw scores beyond)
    chosen = {m: layout_of(m, layout, method).name for m in ms}      # refuses a layout a measure lacks
    asked = chosen if layout != "auto" else {}
    requests = {str(m): _of(rbs, m) for m in ms}
    requests.update({str(m): _of(rb_counts, m) for m in ms if m.per_grade_rb and _of(rb_counts, m) is not None})
    requested = table_requests(ms, requests)
    store = Store(path) if (path / folder.MANIFEST).is_file() else None      # the one open of the store

    def missing() -> dict:       # (with a layout asked for: also the tables stored in another one)
        if rebuild or store is None:
            return dict(requested)
        return {m: [t for t in ts if (found := store.layout_of(m, t)) is None or found != asked.get(m, found)]
                for m, ts in requested.items()}
    wanted = missing()
    if any(wanted.values()):
        existed = path.exists()
        with contextlib.ExitStack() as stack:
            stack.enter_context(folder.writing(path, _names(wanted), wait))
            # a write beyond the file-size limit fails with EFBIG (DiskFullError) instead of killing the process
            with contextlib.suppress(ValueError, AttributeError, OSError):   # not the main thread, or no SIGXFSZ
                stack.callback(signal.signal, signal.SIGXFSZ, signal.signal(signal.SIGXFSZ, signal.SIG_IGN))
            store = store or Store(path)
            if not rebuild:   # the build we may have waited for has written some of them
                wanted = missing()
            _build(store, wanted, existed, n_jobs=available_cores() if n_jobs is None else n_jobs, progress=progress,
                   method=method, backend=backend, scheduler=scheduler, bucket_items=bucket_items, layout=layout)
    elif store is not None:
        folder.remove_stale(path)          # what killed writers left, even when nothing is to be built
    if report is not None:
        report.built = _names(wanted)
        report.found = [name for name in _names(requested) if name not in set(report.built)]
    return store or Store(path)


def _build(store: Store, wanted: dict, existed: bool, n_jobs: int, progress: bool, method: str, backend: str | None,
           scheduler: str | None, bucket_items: int | None, layout: str) -> None:
    """Build and commit the ``wanted`` tables (the caller holds their locks), each as soon as it is built; its
    build time is the time since the table before, plus for a measure's first table its checkpoints' seconds.
    Stopped early (a full disk, Ctrl-C), its error says what it kept: the tables it committed, or that the store
    gained (a Ctrl-C just after a commit)."""
    todo = [m for m, ts in wanted.items() if ts]
    if not todo:
        return
    path, wd = store.path, workdir_for(store.path)
    pairs = [(m, t) for m in todo for t in wanted[m]]
    in_store = lambda: {table_name(str(m), t) for m, t in pairs if store.layout_of(m, t) is not None}
    before = in_store()                       # tables replaced (--rebuild, another layout)
    done: list[str] = []                      # tables committed

    def kept() -> tuple[int, str]:
        n = len(set(done) | (in_store() - before))
        unchanged = f"{path} is unchanged" if existed else f"nothing was written ({path} was not created)"
        return n, f"{n} table(s) committed to {path} by this run are kept" if n else unchanged
    try:
        fanout = Fanout(n_jobs, backend)
        plans = [estimate(m, t, fanout.workers, method, layout) for m, t in pairs]     # they refuse what cannot fit
        if bucket_items is not None:     # an explicit work unit checkpoints every table it builds
            plans = [dataclasses.replace(p, checkpoints=int(p.stored * 1.4)) for p in plans]
        check_disk(path, wd, plans)
        if progress:
            announce(plans, wd)
        seconds = {label: status.seconds for label, (_, status) in _checkpoints(wd).items()}
        options = BuildOptions(fanout=fanout, method=method, progress=progress, workdir=wd,
                               bucket_items=bucket_items, concatenate=False, layout=layout)
        stored = {m: sum(p.stored for p, (mm, _) in zip(plans, pairs) if mm is m) for m in todo}
        # what stores nothing (oracles, implicit tables) first; one call per group, so that generic tables of
        # one run space share an enumeration pass
        groups = [g for g in ([m for m in todo if not stored[m]], [m for m in todo if stored[m]]) if g]
        with dask_client(scheduler, n_jobs) if backend == "dask" else contextlib.nullcontext():
            t0 = time.perf_counter()
            for table in (t for g in groups for t in build_tables(g, {str(m): wanted[m] for m in g}, options=options)):
                name = table_name(str(table.measure), table.table_rb)
                spent = time.perf_counter() - t0 + seconds.pop(str(table.measure), 0.0)
                commit_checked(path, [table], {name: spent}, progress=progress)
                done.append(name)
                if table.table_rb is None:
                    _forget_checkpoints(wd, str(table.measure))
                t0 = time.perf_counter()
        for m in todo:
            _forget_checkpoints(wd, str(m))
    except (DiskFullError, OSError) as e:
        full = e if isinstance(e, DiskFullError) else disk_error(e, e.filename or wd, path.parent)
        if full is None:                       # a work folder or checkpoint that cannot be written
            raise StoreError(f"cannot write {path} or its work folder {wd}: {e.strerror or e}; "
                             f"tables already in the store are unchanged") from None
        if wd.is_dir():                        # half-written checkpoints of stopped workers
            for sub in wd.iterdir():
                remove_partial(sub)
        (n, what), held = kept(), _bytes_in(wd)
        saved = f"; finished checkpoints in {wd} ({size(held)}) are kept" if held else ""
        fix = "raise the file-size limit (ulimit -f)" if "file size limit" in str(full) else "free some space"
        again = "run the same build again to resume" if n or held else "run the build again"
        raise DiskFullError(f"{full}; {what}{saved}; {fix} and {again}") from None
    except KeyboardInterrupt:
        n, what = kept()
        parts = [f"{status.label}: {status.done} of {status.total} buckets, {size(status.bytes)}"
                 for _, status in _checkpoints(wd).values() if status.done]
        saved = f"; checkpoints in {wd} ({'; '.join(parts)})" if parts else ""
        resume = "; run the same build again to resume" if (n or parts) and n < len(pairs) else ""
        raise KeyboardInterrupt(f"interrupted: {what}{saved}{resume}") from None
    if wd.exists() and not any(wd.iterdir()):
        wd.rmdir()


def _checkpoints(wd: Path) -> dict:
    """The checkpoint folders of the work folder ``wd``: {measure name: (folder, status)}."""
    found = ((sub, checkpoint_status(sub)) for sub in sorted(wd.iterdir()) if sub.is_dir()) if wd.is_dir() else ()
    return {status.label: (sub, status) for sub, status in found if status is not None}


def _forget_checkpoints(wd: Path, measure: str) -> None:
    """Delete the checkpoints of a measure whose tables are committed."""
    sub = _checkpoints(wd).get(measure)
    if sub is not None:
        shutil.rmtree(sub[0], ignore_errors=True)


def commit_checked(path: Path, tables: list, build_seconds: dict, progress: bool = False) -> None:
    """:func:`~irscale.store.writer.commit`, refused (DiskFullError) when the table files cannot fit on the disk
    or exceed the file-size limit; a full disk met while writing is DiskFullError."""
    sizes = [table_bytes(t) for t in tables]
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and sizes and max(sizes) > limit:
        raise DiskFullError(f"file size limit reached writing {path}: file too large (a table file takes about "
                            f"{size(max(sizes))}, and this process may write files of at most {size(limit)}, "
                            f"ulimit -f)")
    with contextlib.suppress(OSError):
        free = shutil.disk_usage(path).free
        if sum(sizes) > free:
            raise DiskFullError(f"disk full while writing {path} ({size(free)} free on {path}; the new tables need "
                                f"about {size(sum(sizes))})")
    try:
        commit(path, tables, build_seconds, progress=progress)
    except (StoreError, OSError, RuntimeError) as e:
        cause = e.__context__ if isinstance(e, StoreError) and e.__context__ is not None else e
        full = disk_error(cause, path, path.parent)
        if full is not None:
            raise full from None
        raise


def check_disk(path: Path, wd: Path, plans: list[Estimate]) -> None:
    """Refuse a build whose estimated peak disk use (tables, checkpoints) exceeds the free space."""
    if not plans or sum(p.stored + p.checkpoints for p in plans) < SMALL_BUILD_BYTES:
        return
    stored, peak = 0, 0
    for p in plans:
        stored += p.stored
        peak = max(peak, p.checkpoints + stored)
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return
    if peak > free + _bytes_in(wd):
        raise BuildTooLargeError(
            f"building {len(plans)} table(s) into {path} needs about {size(peak)} of disk at its peak (the store "
            f"grows by about {size(stored)}, checkpoints in {wd} take up to {size(max(p.checkpoints for p in plans))}"
            f"), but {path.parent} has {size(free)} free; free some space or build fewer or smaller tables at a time")


def _bytes_in(wd: Path) -> int:
    return sum(f.stat().st_size for f in wd.rglob("*") if f.is_file()) if wd.exists() else 0


def announce(plans: list[Estimate], wd: Path) -> None:
    """Print the estimates of the tables worth announcing (stderr)."""
    heavy = [p for p in plans if p.heavy]
    for p in heavy:
        print(f"irscale: {p.describe()}", file=sys.stderr)
    if len(heavy) > 1:
        saved = f"; checkpoints in {wd}" if any(p.checkpoints for p in plans) else ""
        print(f"irscale: in all about {duration(sum(p.seconds for p in plans))} and "
              f"{size(sum(p.stored for p in plans))} in the store{saved}", file=sys.stderr)
    elif heavy and heavy[0].checkpoints:
        print(f"irscale: checkpoints in {wd}; an interrupted build resumes when run again", file=sys.stderr)


def bounded_needs(ms: list[Measure], rbs: object, rb_counts: object) -> dict[tuple[Measure, tuple | None], list]:
    """The grids a build is asked for, by table ((measure, table recall base)): ``rbs`` (``"all"``, a list of
    integers, or a dict from measure name to either; ``"all"``: 1..N) for binary measures that depend on the
    recall base, ``rb_counts`` (a vector, a list of them, or a dict from measure name to a list; default: the
    all-runs vector) for measures with per-grade counts, the one scale of the others."""
    for m in ms:
        if not m.bounded_only:
            raise MeasureError(f"{m}: bounded tables are stored only for measures without an exact scale (RBP, "
                               f"DCG, nDCG, nDCG_trec past N = 40); {m} has an exact one: build it without "
                               f"--layout bounded")
    needs: dict = {}
    for m in ms:
        if m.per_grade_rb:
            given = _of(rb_counts, m)
            given = [given] if isinstance(given, tuple) else given
            wanted = [m.check_rb(tuple(v)) for v in given] if given else [m.common_rb()]
        elif m.rb_dependent:
            asked = _of(rbs, m)
            wanted = list(range(1, m.n + 1)) if asked in ("all", None) else [min(m.check_rb(r), m.n) for r in asked]
        else:
            wanted = [None]
        for rb in dict.fromkeys(wanted):
            needs.setdefault((m, m.table_rb(rb)), []).append(rb)
    return needs


def build_bounded(path: str | os.PathLike, measures: str | Iterable[str | Measure], rbs: object = "all",
                  rb_counts: object = None, error: float | None = None, rebuild: bool = False,
                  wait: float | None = None, progress: bool = False, report: BuildReport | None = None) -> Store:
    """Compute the bounded scales of ``measures`` (for the recall bases of :func:`bounded_needs`), each of at most
    ``error`` in scaled units (default :data:`~irscale.scales.tables.bounded_problem.DEFAULT_ERROR`), and store them
    in the store folder at ``path`` (``report``: filled with the tables written and those found complete). Only
    measures without an exact scale have bounded tables (:mod:`irscale.scales.tables.bounded_layout`); a later
    build adds the recall bases a table lacks (and computes again the grids coarser than ``error``), replacing
    its file with one holding them all."""
    path = Path(path)
    needs = bounded_needs(parse_measures(measures), rbs, rb_counts)
    names = {key: table_name(str(key[0]), key[1]) for key in needs}
    built, found = [], []
    with folder.writing(path, list(names.values()), wait):
        store = Store(path)
        for (m, trb), rbs in needs.items():
            old = None if rebuild else store.bounded_table(m, trb)
            table = bounded_table(m, trb, error=error) if old is None else old.with_settings(error=error)
            t0, computed = time.perf_counter(), 0
            with progress_bar(total=len(rbs), desc=f"bounded {names[(m, trb)]}", unit="scale",
                              disable=not progress) as bar:
                for rb in rbs:               # a stored grid fine enough for error is taken as it is
                    grid = table.scale(rb).grid
                    computed += old is None or grid is not old.stored.get(table.grid_key(rb))
                    bar.update()
            if computed:
                for rb in old.stored if old is not None else ():
                    table.scale(rb)                        # the grids kept
                commit_checked(path, [table], {names[(m, trb)]: time.perf_counter() - t0})
            (built if computed else found).append(names[(m, trb)])
    if report is not None:
        report.built, report.found = built, found
    return Store(path)
