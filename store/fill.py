"""build_store: build the tables a store lacks and commit each to the store folder
atomically (:mod:`irscale.store.folder`), resumably (checkpoints of unfinished tables live
next to the store), one build per table at a time (a lock per table: builds of different
tables go on together), with a full disk or a file-size limit reported as
:class:`~irscale.errors.DiskFullError` and no temporary file left."""
from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import shutil
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from irscale.enumerate.fanout import Fanout, dask_client
from irscale.enumerate.jobs import available_cores
from irscale.enumerate.split import checkpoint_status, disk_error, remove_partial
from irscale.errors import BuildTooLargeError, DiskFullError, StoreError
from irscale.scales.measures.measure import Measure, RecallBaseRequest
from irscale.scales.measures.parse import parse_measures
from irscale.scales.tables.build import BuildOptions, build_tables, table_requests
from irscale.scales.tables.entry_build import safe_name
from irscale.scales.tables.estimate import Estimate, duration, estimate, size
from irscale.scales.tables.layouts import layout_of
from irscale.store import folder
from irscale.store.format import table_name
from irscale.store.reader import Store
from irscale.store.writer import check_takes_tables, commit, commit_size

#: Builds estimated below this many bytes of tables and checkpoints skip the disk check.
SMALL_BUILD_BYTES = 64 << 20


def workdir_for(path: Path) -> Path:
    """Folder next to the store holding resumable checkpoints of unfinished tables."""
    return path.parent / f".{path.name}.build"


def build_store(path: str | os.PathLike, measures: str | Iterable[str | Measure],
                rbs: RecallBaseRequest | dict[str, RecallBaseRequest] = "all", n_jobs: int | None = None,
                progress: bool = False, rebuild: bool = False, method: str = "auto", backend: str | None = None,
                scheduler: str | None = None, bucket_items: int | None = None,
                rb_counts: tuple[int, ...] | list[tuple[int, ...]] | dict[str, list[tuple[int, ...]]] | None = None,
                wait: float | None = None, layout: str = "auto", report: BuildReport | None = None) -> Store:
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
    the store are kept unless ``rebuild``. Tables are committed atomically as they are
    built: a table as soon as it is built once the tables waiting took
    :data:`COMMIT_SECONDS` (30 s) to build or hold :data:`COMMIT_BYTES` (1 GiB), quick
    tables together, the rest at the end.
    Tables are committed as they are built, each one a file of the store folder renamed
    into place (:mod:`irscale.store.folder`).
    Big tables (2^31 pairs or more, entries beyond half the memory available, or an
    explicit ``bucket_items``: :func:`irscale.enumerate.split.checkpoints_worth`)
    checkpoint finished buckets next to the store
    (``.NAME.build/``), so running the same call again after a crash or kill continues
    from the last finished bucket and gives bit-identical tables. A kill loses the tables
    built since the last commit (about 30 s of work, or the one table being built); a
    build that fails or is interrupted (Ctrl-C) while building a table commits the tables
    it finished before stopping.

    **One build per table at a time.** A build holds a lock on each table it writes
    (:class:`~irscale.store.folder.TableLocks`) from start to end, checkpoints included:
    builds of different tables go on together, and a build of a table another build is
    writing waits for it (it says so once on stderr), then looks at the store again and
    builds only the tables still missing (two identical builds: the second finds its
    tables built and returns). ``wait``: seconds to wait at most (None, the default: as
    long as it takes; 0: not at all), after which :class:`~irscale.errors.StoreBusyError`
    says so. The kernel releases the locks of a killed build. Readers take no lock: they
    see each table as it was before a commit or after it.

    **Disk full.** When the disk fills up or a file-size limit (``ulimit -f``) is reached
    anywhere in a build (a table, a new copy of the store, a checkpoint), the build stops with
    :class:`~irscale.errors.DiskFullError` ("disk full while writing PATH (N GB free on
    FOLDER)" or "file size limit reached writing PATH"), leaves no temporary file, keeps
    the tables committed before and the finished checkpoints (free some space and run
    the same build again to resume). Before each commit the free space and the size limit
    are checked against what it writes and the store's new size, so a commit that cannot
    fit is refused before it starts writing.

    ``n_jobs``: workers (joblib's count: -1 all cores); None, the default: the cores
    this process may use (:func:`~irscale.enumerate.jobs.available_cores`). Small tables
    are built in-process whatever it says.
    ``backend``: joblib backend for the workers (``"loky"`` processes by default,
    ``"threading"``, or ``"dask"`` to run on a dask.distributed cluster whose scheduler
    address is ``scheduler``; without an address a local cluster is started). Local worker
    processes end when the building process dies, however it dies.
    ``bucket_items``: work-unit size of the split enumerator (pairs per bucket).

    ``layout``: ``"auto"`` (each measure's default: a rank oracle for RBP with p > 1/2,
    DCG and nDCG, a few attributes and no datasets, :mod:`irscale.scales.tables.oracles`;
    a table for the others, and for every measure when ``method`` names an enumerator),
    ``"table"`` (tables; spacing statistics and figures of big scales read them) or
    ``"oracle"``. A stored entry of another layout than the one asked for explicitly is
    replaced.

    ``report``: a :class:`BuildReport` to fill with what the build did (the tables it
    wrote, those it found built), for a message.
    """
    path = Path(path)
    if n_jobs is None:
        n_jobs = available_cores()
    ms = parse_measures(measures)
    for m in ms:
        m.check_scales()       # tables exist up to N = MAX_N, oracles to MAX_ORACLE_N (raw scores beyond)
    chosen = {m: layout_of(m, layout, method).name for m in ms}      # refuses a layout a measure lacks
    requests = {}
    for m in ms:
        given = rb_counts.get(str(m)) if isinstance(rb_counts, dict) else rb_counts
        asked = rbs.get(str(m), "all") if isinstance(rbs, dict) else rbs
        requests[str(m)] = given if m.per_grade_rb and given is not None else asked
    requested = table_requests(ms, requests)
    if (path / folder.MANIFEST).is_file():
        folder.remove_stale(path)          # what killed writers left, even when nothing is to be built
    wanted = _missing(path, requested, rebuild, chosen if layout != "auto" else None)
    if any(wanted.values()):
        check_takes_tables(path)
        if not path.parent.is_dir():
            raise StoreError(f"cannot write {path}: folder {path.parent} does not exist")
        existed = path.exists()
        folder.create(path)
        locks = folder.TableLocks(path, [table_name(str(m), t) for m, ts in wanted.items() for t in ts], wait=wait,
                                  notify=lambda message: print(f"irscale: {message}", file=sys.stderr, flush=True))
        try:
            locks.__enter__()
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted while waiting for another build to finish writing {path}: "
                                    f"this build wrote nothing") from None
        try:
            with _writes_fail_with_efbig():
                if not rebuild:   # the build we may have waited for has written some of them
                    wanted = _missing(path, requested, rebuild, chosen if layout != "auto" else None)
                _build(path, ms, wanted, n_jobs, progress, method, backend, scheduler, bucket_items, layout, existed)
        finally:
            locks.__exit__()
            if not existed:
                folder.remove_if_unused(path)
    if report is not None:
        report.built = [table_name(str(m), t) for m, ts in wanted.items() for t in ts]
        built = set(report.built)
        report.found = [name for m, ts in requested.items() for t in ts if (name := table_name(str(m), t)) not in built]
    return Store(path)


@dataclasses.dataclass
class BuildReport:
    """What :func:`build_store` did (it fills the one it is given): the tables asked for,
    by table name (``AP@10``, ``nDCG(b=2,gains=(0,1,2))@10 rb=(3,2)``), that it wrote
    (``built``) and those it found built in the store (``found``)."""

    built: list[str] = dataclasses.field(default_factory=list)
    found: list[str] = dataclasses.field(default_factory=list)


def _missing(path: Path, requested: dict, rebuild: bool, layouts: dict | None = None) -> dict:
    """The requested tables that the store lacks (all of them with ``rebuild``; with
    ``layouts``, measure -> layout asked for, also those stored in another layout)."""
    if rebuild or not path.exists() or path.is_dir() and not (path / folder.MANIFEST).exists():
        return dict(requested)
    existing = Store(path)

    def stored(m, t):
        if not existing.has(m, t):
            return False
        return layouts is None or existing.layout_of(m, t) == layouts[m]
    return {m: [t for t in ts if not stored(m, t)] for m, ts in requested.items()}


@contextlib.contextmanager
def _writes_fail_with_efbig() -> Iterator[None]:
    """Ignore SIGXFSZ while building, so that a write beyond the file-size limit fails with
    EFBIG (reported as DiskFullError) instead of killing the process with a core dump.
    CPython ignores it already; an embedding program may not. Main thread only."""
    try:
        before = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    except (ValueError, AttributeError, OSError):   # not the main thread, or no SIGXFSZ
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGXFSZ, before)


def _build(path: Path, ms: list[Measure], wanted: dict, n_jobs: int, progress: bool, method: str,
           backend: str | None, scheduler: str | None, bucket_items: int | None, layout: str = "auto",
           existed: bool = True) -> None:
    """Build and commit the ``wanted`` tables (the caller holds their locks). When it
    stops early (a full disk, Ctrl-C), its error says what this build kept: the tables it
    committed, counted as they are committed and, for tables the store lacked before,
    also found in the store (so that a Ctrl-C just after a commit still counts it)."""
    todo = [m for m in ms if wanted[m]]
    if not todo:
        return
    wd = workdir_for(path)
    pairs = [(m, t) for m in todo for t in wanted[m]]
    before = _in_store(path, pairs)           # tables replaced (--rebuild, another layout)
    done: list[str] = []                      # tables committed (a Ctrl-C just after a commit included)
    try:
        _build_and_commit(path, todo, wanted, pairs, done, n_jobs, progress, method, backend, scheduler,
                          bucket_items, layout)
    except DiskFullError as e:
        _remove_partial_checkpoints(wd)
        kept = _kept(path, pairs, done, before)
        raise DiskFullError(f"{e}; {kept_message(path, wd, len(kept), str(e), existed)}") from None
    except OSError as e:  # work folder or checkpoint not writable
        full = disk_error(e, e.filename or wd, path.parent)
        if full is not None:
            _remove_partial_checkpoints(wd)
            kept = _kept(path, pairs, done, before)
            raise DiskFullError(f"{full}; {kept_message(path, wd, len(kept), str(full), existed)}") from None
        raise StoreError(f"cannot write {path} or its work folder {wd}: {e.strerror or e}; "
                         f"tables already in the store are unchanged") from None
    except KeyboardInterrupt:
        kept = _kept(path, pairs, done, before)
        raise KeyboardInterrupt(interrupted_message(path, wd, len(kept), existed, len(pairs) - len(kept))) from None
    if wd.exists() and not any(wd.iterdir()):
        wd.rmdir()


def _build_and_commit(path: Path, todo: list[Measure], wanted: dict, pairs: list, done: list[str], n_jobs: int,
                      progress: bool, method: str, backend: str | None, scheduler: str | None,
                      bucket_items: int | None, layout: str) -> None:
    """The work of :func:`_build`: estimates, then each table committed as soon as it is
    built (a commit is a rename: a kill loses at most the table being built). Its build
    time is the time since the table before (of tables that come from one enumeration
    pass, the first carries the pass), plus for a measure's first table the seconds of its
    checkpoints, which are deleted once its tables are committed."""
    wd = workdir_for(path)
    fanout = Fanout(n_jobs, backend)
    # estimates first: they refuse what cannot fit on disk
    plans = [estimate(m, t, fanout.workers, method, layout) for m, t in pairs]
    if bucket_items is not None:     # an explicit work unit checkpoints every table it builds
        plans = [dataclasses.replace(p, checkpoints=int(p.stored * 1.4)) for p in plans]
    check_disk(path, wd, plans)
    if progress:
        announce(plans, wd)
    before = {str(m): status.seconds for m in todo
              if (status := checkpoint_status(wd / safe_name(str(m)))) is not None}
    client = dask_client(scheduler, n_jobs) if backend == "dask" else None
    options = BuildOptions(fanout=fanout, method=method, progress=progress, workdir=wd,
                           bucket_items=bucket_items, concatenate=False, layout=layout)
    try:
        stored = {m: sum(p.stored for p, (mm, _) in zip(plans, pairs) if mm is m) for m in todo}
        # what stores nothing (oracles, implicit tables) first: they are committed at once;
        # one call per group, so that generic tables of one run space share an enumeration pass
        groups = [[m for m in todo if not stored[m]], [m for m in todo if stored[m]]]
        tables = (t for g in groups if g for t in build_tables(g, {str(m): wanted[m] for m in g}, options=options))
        t0 = time.perf_counter()
        for table in tables:
            name = table_name(str(table.measure), table.table_rb)
            seconds = time.perf_counter() - t0 + before.pop(str(table.measure), 0.0)
            commit_checked(path, [table], {name: seconds}, progress=progress)
            done.append(name)
            if table.table_rb is None:
                _forget_checkpoints(wd, str(table.measure))
            t0 = time.perf_counter()
        for m in todo:
            _forget_checkpoints(wd, str(m))
    finally:
        if client is not None:
            client.close()


def _in_store(path: Path, pairs: list) -> set[str]:
    """The names of the tables ``pairs`` ((measure, table recall base)) complete in the
    store at ``path`` (none when it cannot be read)."""
    if not path.exists():
        return set()
    try:
        store = Store(path)
        return {table_name(str(m), t) for m, t in pairs if store.has(m, t)}
    except Exception:           # a store that cannot be read keeps nothing this build could count
        return set()


def _kept(path: Path, pairs: list, done: list[str], before: set[str]) -> set[str]:
    """The tables of ``pairs`` this build committed: those it counted (``done``), and those
    not in the store before (``before``) that are there now."""
    return set(done) | (_in_store(path, pairs) - before)


def _forget_checkpoints(wd: Path, measure: str) -> None:
    """Delete the checkpoints of a measure whose tables are committed."""
    sub = wd / safe_name(measure)
    if sub.exists():
        shutil.rmtree(sub, ignore_errors=True)


def _remove_partial_checkpoints(wd: Path) -> None:
    """Half-written checkpoint files of workers stopped with the build (we hold the lock)."""
    if wd.is_dir():
        for sub in wd.iterdir():
            remove_partial(sub)


def check_room(path: Path, tables: list) -> None:
    """Refuse (DiskFullError) a commit whose table files cannot fit on the disk or exceed
    the process's file-size limit: HDF5 does not survive a failed write well (an exception
    from the middle of the library, or a crash), so such a commit must not start."""
    sizes = [commit_size([t]) for t in tables]
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    if limit != resource.RLIM_INFINITY and sizes and max(sizes) > limit:
        raise DiskFullError(f"file size limit reached writing {path}: file too large (a table file takes about "
                            f"{size(max(sizes))}, and this process may write files of at most {size(limit)}, "
                            f"ulimit -f)")
    where = path if path.is_dir() else path.parent
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return
    if sum(sizes) > free:
        raise DiskFullError(f"disk full while writing {path} ({size(free)} free on {where}; the new tables need "
                            f"about {size(sum(sizes))})")


def commit_checked(path: Path, tables: list, build_seconds: dict, progress: bool = False) -> None:
    """:func:`~irscale.store.writer.commit` after :func:`check_room`, with a full disk or
    a file-size limit met while writing reported as DiskFullError (h5py raises RuntimeError
    or OSError); a failed commit leaves no temporary file."""
    check_room(path, tables)
    try:
        commit(path, tables, build_seconds, progress=progress)
    except (StoreError, OSError, RuntimeError) as e:
        cause = e.__context__ if isinstance(e, StoreError) and e.__context__ is not None else e
        full = disk_error(cause, path, path.parent)
        if full is not None:
            raise full from None
        raise


def check_disk(path: Path, wd: Path, plans: list[Estimate]) -> None:
    """Refuse a build whose estimated peak disk use exceeds the free space of the store's
    folder: checkpoints of the table being built and the tables."""
    if not plans or sum(p.stored + p.checkpoints for p in plans) < SMALL_BUILD_BYTES:
        return
    stored, peak = 0, 0
    for p in plans:
        stored += p.stored
        peak = max(peak, p.checkpoints + stored)
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
            f"), but {folder} has "
            f"{size(free)} free; free some space or build fewer or smaller tables at a time")


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


def _unchanged(path: Path, existed: bool) -> str:
    """What a build that committed nothing left of the store."""
    return f"{path} is unchanged" if existed else f"nothing was written ({path} was not created)"


def kept_message(path: Path, wd: Path, committed: int, why: str = "", existed: bool = True) -> str:
    """What a build stopped by a full disk (or a file-size limit, when ``why`` says so)
    keeps, and how to go on (``existed``: whether the store existed when it started)."""
    kept = f"{committed} table(s) committed to {path} by this run are kept" if committed else \
        _unchanged(path, existed)
    held = sum(f.stat().st_size for f in wd.rglob("*") if f.is_file()) if wd.exists() else 0
    saved = f"; finished checkpoints in {wd} ({size(held)}) are kept" if held else ""
    fix = "raise the file-size limit (ulimit -f)" if "file size limit" in why else "free some space"
    again = "run the same build again to resume" if committed or held else "run the build again"
    return f"{kept}{saved}; {fix} and {again}"


def interrupted_message(path: Path, wd: Path, committed: int, existed: bool = True, left: int = 1) -> str:
    """What an interrupted build leaves and, when it leaves something to resume from
    (committed tables, finished checkpoints) and tables to build (``left``), how to resume
    it. ``existed``: whether the store existed when the build started."""
    kept = f"{committed} table(s) committed to {path} by this run are kept" if committed else \
        _unchanged(path, existed)
    parts = []
    if wd.exists():
        for sub in sorted(wd.iterdir()):
            status = checkpoint_status(sub)
            if status is not None and status.done:
                parts.append(f"{status.label}: {status.done} of {status.total} buckets, {size(status.bytes)}")
    saved = f"; checkpoints in {wd} ({'; '.join(parts)})" if parts else ""
    resume = "; run the same build again to resume" if (committed or parts) and left else ""
    return f"interrupted: {kept}{saved}{resume}"
