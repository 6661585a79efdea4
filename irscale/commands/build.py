"""``irscale build``: enumerate every run of length N and write the measures' tables.

One build writes a table at a time: a build of a table another build is writing waits for
it (``--wait SECONDS`` sets a limit; by default it waits as long as it takes, and says so),
then builds what is still missing; builds of different tables go on together. A full disk or a file-size limit
stops the build with one line saying where (exit status 2), keeping earlier tables."""
from __future__ import annotations

import warnings

import click

from irscale.commands.options import check_jobs, jobs_option, measure_names, parse_rbs, warnings_said
from irscale.enumerate.lazy import lazy_module
from irscale.scales.measures.aliases import DEFAULT_NAMES, NAMES
from irscale.scales.measures.user_names import parse_user_measures
from irscale.store import fill_bounded
from irscale.store.fill import BuildReport, build_store

# qrels files are read with pandas: imported only when a build reads one (--qrels)
qrels_module = lazy_module("irscale.scales.runs.qrels")
judging = lazy_module("irscale.scales.runs.judging")


@click.command("build")
@click.option("--measures", "-m", help='Comma-separated measure names, e.g. "AP@10,DCG(b=2)@10".')
@click.option("--preset", help="A named measure set instead of (or besides) --measures: 'paper' "
              "(P, R, AP, RR, RBP p=0.3/0.5/0.8, DCG and nDCG b=2/10).")
@click.option("--depth", type=int, help="Cutoff N for --preset.")
@click.option("--rb", "rb_text", default="all", show_default=True,
              help="Recall bases wanted for RB-dependent measures: 'all' (1..N) or a list like 1,5,10 (validated; "
                   "one table serves every recall base). Measures with a table per recall-base vector (gR, nDCG "
                   "with gains; Twist, CRP, OIE per topic) take vectors like '(3,2),(0,5)' ('all': the all-runs "
                   "vector (N,...,N) of the common scale).")
@click.option("--qrels", type=click.Path(dir_okay=False),
              help="Also build the tables of measures with a table per recall-base vector for the per-grade "
                   "counts of every topic of this qrels file (what 'transform' needs for it); its highest level "
                   "completes ir_measures' names (irm:nDCG@10: gains = the levels).")
@click.option("--max-grade", type=click.IntRange(min=1), default=None,
              help="With --qrels: fold qrels levels above this grade into it (as transform --max-grade).")
@click.option("--out", "-o", required=True, type=click.Path(),
              help="Store to create or add to: a folder of table files (a new folder, or one irscale made).")
@jobs_option("Parallel workers; small tables are built in this process whatever it says")
@click.option("--rebuild", is_flag=True, help="Rebuild tables already in the store.")
@click.option("--backend", type=click.Choice(["loky", "threading", "dask"]), default=None,
              help="Where workers run: local processes (loky, default), threads, or a dask.distributed cluster.")
@click.option("--scheduler", help="Address of the dask scheduler (tcp://host:port) for --backend dask; "
              "without it a local cluster is started.")
@click.option("--method", type=click.Choice(["auto", "split", "generic"]), default="auto", show_default=True,
              help="Enumeration: split (prefix/suffix merge), generic (score every run; the reference).")
@click.option("--layout", type=click.Choice(["auto", "table", "oracle", "bounded"]), default="auto",
              show_default=True,
              help="auto: a rank oracle (a few attributes, ranks counted on demand, N up to 40) for RBP with "
                   "p > 1/2, DCG and nDCG, a table for the others (and for every measure with --method split or "
                   "generic); table: full tables (spacing statistics and figures of big scales read them); "
                   "oracle: rank oracles (P, R, F1, RR, RBP, DCG, nDCG); bounded: the grids of bounded scales of "
                   "RBP, DCG, nDCG and nDCG_trec past N = 40 (what --bounded uses, computed once; docs/bounded.md).")
@click.option("--error", "bound_error", default=None, type=click.FloatRange(min=0, max=1, min_open=True,
                                                                            max_open=True),
              help="With --layout bounded: widest scaled interval of the scales stored (default 1e-4).")
@click.option("--bucket-items", type=click.IntRange(min=1000), default=None,
              help="Work-unit size (prefix/suffix pairs per bucket) of the split method; smaller saves memory.")
@click.option("--wait", "wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="When another build is writing OUT, wait at most this long for it to finish (0: fail at once). "
                   "Default: wait as long as it takes (the build says which process it waits for), then build "
                   "what is still missing.")
@click.option("--names", "vocabulary", type=click.Choice(NAMES), default=DEFAULT_NAMES, show_default=True,
              help="Whose meaning a measure name has when irscale and ir_measures read it differently (ERR@20): "
                   "ir_measures' (default) or irscale's; irm:NAME, irscale:NAME, trec:NAME choose for one name; "
                   "trec_eval's names are read as trec_eval's in any.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def command(measures: str | None, preset: str | None, depth: int | None, rb_text: str, qrels: str | None,
            max_grade: int | None, out: str, jobs: int | None, rebuild: bool, backend: str | None,
            scheduler: str | None, method: str, layout: str, bucket_items: int | None, wait: float | None,
            vocabulary: str, quiet: bool, bound_error: float | None = None) -> None:
    """Enumerate every run of length N and write the measures' tables to OUT."""
    names = measure_names(measures, preset, depth)
    jobs = check_jobs(jobs)
    q = qrels_module.read_qrels(qrels) if qrels is not None else None
    request = parse_rbs(rb_text)
    with warnings_said():
        ms = _read_names(names, vocabulary, q, max_grade, request)
    closed = [m for m in ms if m.layout == "closed"]
    if closed:
        ms = [m for m in ms if m not in closed]
        what = "its scale is a closed form" if len(closed) == 1 else "their scales are closed forms"
        click.echo(f"irscale: {', '.join(map(str, closed))}: no table to build; {what}, exact at any N, used "
                   f"without a store", err=True)
        if not ms:
            return
    if scheduler and backend != "dask":
        raise click.UsageError("--scheduler goes with --backend dask")
    if max_grade is not None and qrels is None:
        raise click.UsageError("--max-grade goes with --qrels")
    per_vector = [m for m in ms if m.per_grade_rb]
    vectors: dict = {}
    rbs = "all"
    if isinstance(request, list) and isinstance(request[0], tuple):
        if not per_vector:
            raise click.BadParameter("per-grade count vectors are for measures with a table per recall-base vector "
                                     "(gR, nDCG or nDCG_trec with gains; Twist, CRP, OIE); give integers",
                                     param_hint="--rb")
        for m in per_vector:
            bad = [v for v in request if len(v) != m.levels - 1]
            if bad:
                raise click.BadParameter(f"{m} has grades 1..{m.levels - 1}: give {m.levels - 1} counts per vector, "
                                         f"got {bad[0]}", param_hint="--rb")
            vectors[str(m)] = list(request)
    elif isinstance(request, list):
        if not any(m.rb_dependent and not m.per_grade_rb for m in ms):
            raise click.BadParameter("recall bases are for binary measures that depend on them (R, F1, AP, nDCG, "
                                     "...); none of the measures given does", param_hint="--rb")
        rbs = request
    if q is not None:                 # the per-grade counts of its topics (and, above, the top level of names)
        for m in per_vector:
            vectors[str(m)] = vectors.get(str(m), []) + judging.qrels_table_rbs(q, m, max_grade)
    report = BuildReport()
    if layout == "bounded":
        store = _build_bounded(out, ms, request, q, max_grade, bound_error, rebuild, wait, quiet, report)
    else:
        if bound_error is not None:
            raise click.UsageError("--error goes with --layout bounded")
        store = build_store(out, ms, rbs=rbs, n_jobs=jobs, progress=not quiet, rebuild=rebuild, backend=backend,
                            scheduler=scheduler, method=method, bucket_items=bucket_items,
                            rb_counts=vectors or None, wait=wait, layout=layout, report=report)
    tables = store.tables()                 # listed once: each table file's metadata checked
    in_file = _count(len(tables), "table")
    built, found = len(report.built), len(report.found)
    if found and not built:
        what = f"the table of {report.found[0]} is" if found == 1 else f"all {found} tables"
        click.echo(f"{out}: {what} already built ({in_file} in the store)")
    elif found:
        click.echo(f"{out}: {_count(built, 'table')} built, {found} already built ({in_file} in the store)")
    else:
        done = [t for t in tables if t.measure in {str(m) for m in ms}]
        click.echo(f"{out}: {_count(len(done), 'table')} for {_count(len(ms), 'measure')} ({in_file} in the store)")


def _build_bounded(out: str, ms: list, request, q, max_grade: int | None, error: float | None, rebuild: bool,
                   wait: float | None, quiet: bool, report: BuildReport):
    """``--layout bounded``: the grids of the recall bases asked for (--rb), or of the
    topics of --qrels."""
    rbs, vectors = ("all", None) if request == "all" else (request, request)
    if q is not None:
        rbs = {str(m): judging.qrels_rbs(q, m, max_grade) for m in ms if not m.per_grade_rb}
        vectors = {str(m): judging.qrels_rbs(q, m, max_grade) for m in ms if m.per_grade_rb}
    return fill_bounded.build_bounded(out, ms, rbs=rbs, rb_counts=vectors, error=error, rebuild=rebuild, wait=wait,
                                      progress=not quiet, report=report)


def _read_names(names: list[str], vocabulary: str, q, max_grade: int | None, request) -> list:
    """The measures named: names whose meaning depends on the qrels' levels (ir_measures'
    nDCG@10 is ndcg_cut_10 with the levels as gains) take them from --qrels, else from
    per-grade count vectors given with --rb, else they are read on binary qrels, saying so."""
    if q is not None:
        return parse_user_measures(names, vocabulary, top_level=q.names_top_level(max_grade))
    if isinstance(request, list) and isinstance(request[0], tuple):
        return parse_user_measures(names, vocabulary, top_level=max(len(v) for v in request))
    ms = parse_user_measures(names, vocabulary, top_level=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        binary = [name for name in names if parse_user_measures([name], vocabulary, top_level=1)
                  != parse_user_measures([name], vocabulary, top_level=2)]
    if binary:
        read = ", ".join(f"{name} as {parse_user_measures([name], vocabulary, top_level=1)[0]}" for name in binary)
        click.echo(f"irscale: {read}: read on binary qrels (relevance levels 0 and 1); give --qrels (or --rb "
                   f"per-grade counts) for the levels of graded qrels", err=True)
    return ms


def _count(k: int, noun: str) -> str:
    """``1 table``, ``2 tables``."""
    return f"{k} {noun}" + ("" if k == 1 else "s")
