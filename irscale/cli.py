"""The ``irscale`` command line.

``main(argv) -> int`` runs one command and returns its exit status: 0 on success, 2 on a
user error (printed as one line, ``irscale: error: ...``, never a traceback).
"""
from __future__ import annotations

import json
import sys

import click

from irscale.errors import IrscaleError


def _parse_rbs(text: str):
    """'all', a list of recall bases ``1,5,10``, or per-grade count vectors ``(3,2),(0,4)``."""
    import re
    if text.strip().lower() == "all":
        return "all"
    if "(" in text:
        groups = re.findall(r"\(([^()]*)\)", text)
        rest = re.sub(r"\(([^()]*)\)", "", text).replace(",", "").replace(";", "").strip()
        try:
            vectors = [tuple(int(x) for x in g.split(",") if x.strip()) for g in groups]
        except ValueError:
            vectors = []
        if rest or not vectors or any(not v or min(v) < 0 or sum(v) < 1 for v in vectors):
            raise click.BadParameter(f"expected per-grade counts like (3,2) or (3,2),(0,5): non-negative integers, "
                                     f"at least one positive per vector; got {text!r}")
        return vectors
    try:
        rbs = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected 'all', a comma-separated list of integers, or per-grade counts like "
                                 f"(3,2), got {text!r}") from None
    if not rbs or any(r < 1 for r in rbs):
        raise click.BadParameter(f"recall bases must be integers >= 1, got {text!r}")
    return rbs


class _ManyValues(click.Option):
    """An option taking every following argument up to the next option
    (``--runs a.gz b.gz c.gz``), as well as repeated use (``--runs a.gz --runs b.gz``)."""

    def add_to_parser(self, parser, ctx):
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = parser._long_opt.get(name) or parser._short_opt.get(name)
            if opt is None:
                continue
            original = opt.process

            def process(value, state, original=original):
                values = [value]
                while state.rargs and not state.rargs[0].startswith("-"):
                    values.append(state.rargs.pop(0))
                for v in values:
                    original(v, state)

            opt.process = process


def _measure_names(measures, preset, depth) -> list[str]:
    """Measure names from --measures and/or --preset/--depth."""
    from irscale.presets import preset_measures
    from irscale.scales.measures.parse import split_measures
    names = []
    if preset:
        if depth is None:
            raise click.UsageError("--preset needs --depth N")
        names += preset_measures(preset, depth)
    elif depth is not None:
        raise click.UsageError("--depth goes with --preset")
    if measures:
        names += split_measures(measures)
    if not names:
        raise click.UsageError("give --measures or --preset")
    return names


def _print_warnings(caught) -> None:
    for w in caught:
        click.echo(f"irscale: warning: {w.message}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="irscale", prog_name="irscale")
def cli():
    """Interval scales for IR evaluation measures: build exact unq rank tables,
    inspect them and look values up."""


@cli.command()
@click.option("--measures", "-m", help='Comma-separated measure names, e.g. "AP@10,DCG(b=2)@10".')
@click.option("--preset", help="A named measure set instead of (or besides) --measures: 'paper' "
              "(P, R, AP, RR, RBP p=0.3/0.5/0.8, DCG and nDCG b=2/10).")
@click.option("--depth", type=int, help="Cutoff N for --preset.")
@click.option("--rb", "rb_text", default="all", show_default=True,
              help="Recall bases wanted for RB-dependent measures: 'all' (1..N) or a list like 1,5,10 (validated; "
                   "one table serves every recall base). Graded RB-dependent measures (gR, nDCG with gains) get one "
                   "table per per-grade count vector: give vectors like '(3,2),(0,5)' ('all': the all-runs vector "
                   "(N,...,N) of the common scale).")
@click.option("--qrels", type=click.Path(dir_okay=False),
              help="Also build the tables of graded RB-dependent measures for the per-grade counts of every topic "
                   "of this qrels file (what 'transform' needs for it).")
@click.option("--max-grade", type=click.IntRange(min=1), default=None,
              help="With --qrels: fold qrels levels above this grade into it (as transform --max-grade).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False), help="Table file (HDF5) to create or extend.")
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help="Parallel workers (joblib; -1: all cores).")
@click.option("--rebuild", is_flag=True, help="Rebuild tables already in the file.")
@click.option("--backend", type=click.Choice(["loky", "threading", "dask"]), default=None,
              help="Where workers run: local processes (loky, default), threads, or a dask.distributed cluster.")
@click.option("--scheduler", help="Address of the dask scheduler (tcp://host:port) for --backend dask; "
              "without it a local cluster is started.")
@click.option("--method", type=click.Choice(["auto", "split", "generic"]), default="auto", show_default=True,
              help="Enumeration: split (prefix/suffix merge), generic (score every run; the reference).")
@click.option("--bucket-items", type=click.IntRange(min=1000), default=None,
              help="Work-unit size (prefix/suffix pairs per bucket) of the split method; smaller saves memory.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def build(measures, preset, depth, rb_text, qrels, max_grade, out, jobs, rebuild, backend, scheduler, method,
          bucket_items, quiet):
    """Enumerate every run of length N and write the measures' tables to OUT."""
    from irscale.scales import parse_measures
    from irscale.store import build_store

    names = _measure_names(measures, preset, depth)
    if jobs == 0 or jobs < -1:
        raise click.BadParameter("--jobs must be a positive number or -1", param_hint="--jobs")
    ms = parse_measures(names)
    rbs = _parse_rbs(rb_text)
    if scheduler and backend != "dask":
        raise click.UsageError("--scheduler goes with --backend dask")
    if max_grade is not None and qrels is None:
        raise click.UsageError("--max-grade goes with --qrels")
    graded = [m for m in ms if m.counts_keyed]
    vectors = {}
    if isinstance(rbs, list) and rbs and isinstance(rbs[0], tuple):
        if not graded:
            raise click.BadParameter("per-grade count vectors are for graded RB-dependent measures "
                                     "(gR, nDCG or nDCG_trec with gains); give integers", param_hint="--rb")
        for m in graded:
            bad = [v for v in rbs if len(v) != m.levels - 1]
            if bad:
                raise click.BadParameter(f"{m} has grades 1..{m.levels - 1}: give {m.levels - 1} counts per vector, "
                                         f"got {bad[0]}", param_hint="--rb")
            vectors[str(m)] = list(rbs)
        rbs = "all"
    if qrels is not None:
        from irscale.scales.runs.trec import qrels_count_vectors, read_qrels
        if not graded:
            raise click.UsageError("--qrels gives per-grade counts for graded RB-dependent measures "
                                   "(gR, nDCG or nDCG_trec with gains); none was given")
        q = read_qrels(qrels)
        for m in graded:
            vectors[str(m)] = vectors.get(str(m), []) + qrels_count_vectors(q, m, max_grade)
    store = build_store(out, ms, rbs=rbs, n_jobs=jobs, progress=not quiet, rebuild=rebuild, backend=backend,
                        scheduler=scheduler, method=method, bucket_items=bucket_items, rb_counts=vectors or None)
    done = [t for t in store.tables() if t["measure"] in {str(m) for m in ms}]
    click.echo(f"{out}: {len(done)} tables for {len(ms)} measure(s) ({len(store.tables())} tables in the file)")


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
@click.option("--by-rb", "by_rb", is_flag=True, help="Also list distinct values per recall base.")
@click.option("--verify", is_flag=True, help="Recompute every table's checksum (reads whole tables).")
def info(path, as_json, by_rb, verify):
    """List the tables in PATH with their metadata and tie certificates."""
    from irscale.store import open_store
    store = open_store(path)
    if verify:
        store.verify()
    tables = store.tables()
    if as_json:
        click.echo(json.dumps({"file": store.attrs, "tables": tables}, indent=2, default=str))
        return
    a = store.attrs
    click.echo(f"{path}: {a.get('format')} v{a.get('format_version')}, written by irscale "
               f"{a.get('generator_version')} on {a.get('created')}; {len(tables)} tables")
    header = ["measure", "runs", "distinct", "entries", "ties", "error_bound", "min_gap", "seconds"]
    rows = [[t["name"], str(t["n_runs"]), str(t["n_distinct"]),
             str(t["n_entries"]) + (" (implicit)" if t.get("implicit") else ""),
             t["tie_method"], f"{t['error_bound']:.2g}", t["min_gap_exact"],
             f"{t['build_seconds']:.1f}" if t.get("build_seconds", -1) >= 0 else "-"] for t in tables]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    for r in [header] + rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if by_rb:
        click.echo("")
        click.echo("distinct values per recall base (rb = 1..N; rb > N as rb = N):")
        for t in tables:
            counts = json.loads(t.get("distinct_by_rb", "[]"))
            if counts:
                click.echo(f"  {t['measure']}: " + " ".join(str(c) for c in counts))


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("path", type=click.Path(dir_okay=False))
@click.argument("measure")
@click.argument("values", nargs=-1, required=True)
@click.option("--rb", "rb_text", help="Recall base of the topic (RB-dependent measures): an integer, or for graded "
                                      "measures the per-grade counts like '(3,2)'.")
def lookup(path, measure, values, rb_text):
    """Print the unq rank of each raw VALUE of MEASURE, from the tables in PATH."""
    from irscale.store import open_store
    from irscale.errors import ValueNotInScaleError
    rb = None
    if rb_text is not None:
        parsed = _parse_rbs(rb_text)
        if parsed == "all" or len(parsed) != 1:
            raise click.BadParameter(f"give one recall base, got {rb_text!r}", param_hint="--rb")
        rb = parsed[0]
    nums = []
    for v in values:
        try:
            nums.append(float(v))
        except ValueError:
            raise ValueNotInScaleError(f"{v!r} is not a number") from None
    store = open_store(path)
    scale = store.scale(measure, rb)
    ranks = scale.rank(nums)
    scaled = scale.scaled(ranks)
    click.echo("value\trank\tk\tscaled")
    for v, r, s in zip(values, ranks, scaled):
        click.echo(f"{v}\t{r}\t{scale.k}\t{s:.10g}")


@cli.command()
@click.option("--qrels", required=True, type=click.Path(dir_okay=False),
              help="Relevance judgments: topic iteration docno rel (gzip allowed).")
@click.option("--runs", "runs", required=True, multiple=True, cls=_ManyValues,
              help="Run files (topic Q0 docno rank score tag; gzip allowed), or folders of run files.")
@click.option("--measures", "-m", help='Comma-separated measure names, e.g. "AP@30,nDCG(b=2)@30".')
@click.option("--preset", help="A named measure set instead of (or besides) --measures, e.g. 'paper'.")
@click.option("--depth", type=int, help="Cutoff N for --preset.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False),
              help="Table file with a table for every measure; without it only raw scores are written.")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="Scores file: .csv, .tsv, .parquet (.csv.gz, .tsv.gz); written atomically.")
@click.option("--rb-scale", type=click.Choice(["feasible", "common"]), default="feasible", show_default=True,
              help="Scale of RB-dependent measures: each topic's own recall base (feasible runs only), or "
                   "the one scale of RB >= N for every topic (the original paper).")
@click.option("--raw-only", is_flag=True, help="Raw scores only, even with --store.")
@click.option("--midranks", is_flag=True, help="Also write mid-ranks (for comparing tie strategies; one pass over "
                                                "each table's run counts).")
@click.option("--build-missing", is_flag=True, help="Build tables missing from --store on the fly (up to 2^24 runs: binary N <= 24).")
@click.option("--max-grade", type=click.IntRange(min=1), default=None,
              help="Fold qrels levels above this grade into it (graded measures fold levels above their own top "
                   "grade anyway; binary measures count levels >= 1 as relevant).")
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help="Workers building missing tables.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars and no warnings.")
def transform(qrels, runs, measures, preset, depth, store_path, out, rb_scale, raw_only, midranks, build_missing,
              max_grade, jobs, quiet):
    """Score TREC runs per topic and map the scores to their interval scales.

    Writes one row per (run, topic, measure): run, topic, measure, n, rb, raw, rank, k,
    scaled, midrank (with --midranks), n_runs, rb_scale. Ranks come from the judged runs (exact), following trec_eval's
    conventions (score descending, docno descending; cut at N; unjudged = non-relevant).
    """
    import warnings

    from irscale.scales.runs.transform import check_output, transform as transform_scores, write_scores
    names = _measure_names(measures, preset, depth)
    if jobs == 0 or jobs < -1:
        raise click.BadParameter("--jobs must be a positive number or -1", param_hint="--jobs")
    if store_path is None and build_missing:
        raise click.UsageError("--build-missing needs --store (the file to build the tables into)")
    check_output(out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = transform_scores(qrels, list(runs), names, None if raw_only else store_path, rb_scale=rb_scale,
                                  midranks=midranks, build_missing=build_missing, max_grade=max_grade, n_jobs=jobs,
                                  progress=not quiet)
    if not quiet:
        _print_warnings(caught)
    write_scores(scores, out)
    what = "raw scores" if raw_only or store_path is None else f"raw and scaled scores ({rb_scale})"
    click.echo(f"{out}: {len(scores)} rows, {scores['run'].nunique()} runs x {scores['topic'].nunique()} topics x "
               f"{scores['measure'].nunique()} measures, {what}")


@cli.command()
@click.argument("scores", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Folder for report.md, the CSV/JSON tables and the figures.")
@click.option("--stores", "stores", multiple=True, cls=_ManyValues, type=click.Path(dir_okay=False),
              help="Table files of the measures: adds spacing statistics and value-distribution figures.")
@click.option("--tests", help="Comma-separated significance tests (default: all): "
                              "sign,ranksum,signrank,ttest,anova1,anova2,kruskal,friedman; 'none' skips them.")
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help="Worker processes.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def analyze(scores, out, stores, tests, jobs, quiet):
    """Kendall tau and significance analyses of SCORES (files written by 'irscale transform'
    with --store; several files are concatenated), with a markdown report."""
    import pandas as pd

    from irscale.scales.analysis.analyze import analyze as run_analysis
    from irscale.scales.analysis.report import write_report
    from irscale.scales.runs.transform import read_scores
    from irscale.store import open_store
    if jobs == 0 or jobs < -1:
        raise click.BadParameter("--jobs must be a positive number or -1", param_hint="--jobs")
    opened = [open_store(p) for p in stores]
    table = pd.concat([read_scores(p) for p in scores], ignore_index=True)
    chosen = None if tests is None else ([] if tests.strip().lower() == "none" else
                                         [t.strip() for t in tests.split(",") if t.strip()])
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_analysis(table, tests=chosen, n_jobs=jobs, progress=not quiet)
    _print_warnings(caught)
    result.save(out)
    spacing, figures = _spacing_and_figures(opened, sorted(table["n"].unique()), out)
    path = write_report(result, out, spacing=spacing, figures=figures)
    click.echo(f"{path}: {len(result.tau_scaled)} measure rows, {len(result.significance)} test rows, "
               f"{result.seconds:.0f} s")


def _spacing_and_figures(stores, ns, out):
    """Spacing rows of the stores' tables and the report's figures (PNG and SVG in out)."""
    from pathlib import Path

    from irscale.scales import parse_measure
    from irscale.scales.analysis.figures import plot_hasse, plot_runs_length4, plot_value_distributions
    from irscale.scales.analysis.spacing import store_spacing
    out = Path(out)
    from irscale.scales.analysis.axioms import add_axioms
    spacing = add_axioms([row for s in stores for row in store_spacing(s)])
    by_name = {t["measure"]: s for s in stores for t in s.tables()}
    figures = []

    def scale_of(name):
        m = parse_measure(name)
        if str(m) not in by_name:
            raise KeyError(name)
        return by_name[str(m)].scale(m, m.common_rb())

    wanted = ("P", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "RR", "DCG(b=2)", "DCG(b=10)")
    covered = tuple(n for n in ns if all(f"{w}@{n}" in by_name for w in wanted))
    if covered:
        paths = plot_value_distributions(scale_of, measures=wanted, ns=covered, out_prefix=out / "value-distributions")
        figures.append((f"Values against the fraction of runs, N = {', '.join(map(str, covered))}",
                        _png(paths)))
    figures.append(("Ordering and spacing of the 16 runs of length 4", _png(plot_runs_length4(out / "runs-length4"))))
    figures.append(("Hasse diagram of the partial order of binary runs of length 4", _png(plot_hasse(out / "hasse4"))))
    return spacing, figures


def _png(paths) -> str:
    from pathlib import Path
    return Path([p for p in paths if str(p).endswith(".png")][0]).name


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--measures", "-m", help="Comma-separated measures (default: every table).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--axioms/--no-axioms", default=True, show_default=True,
              help="Add the order-theoretic checks (axiom, balancing index B(N), exact equal spacing; "
                   "exhaustive up to 2^20 runs).")
def spacing(path, measures, as_json, axioms):
    """Spacing statistics of the tables in PATH: distinct values, gaps, coverage of the
    value range, distance from equal spacing (RB-dependent measures at RB = N)."""
    from irscale.scales.measures.parse import split_measures
    from irscale.scales.analysis.spacing import store_spacing
    from irscale.store import open_store
    store = open_store(path)
    rows = store_spacing(store, split_measures(measures) if measures else None)
    if axioms:
        from irscale.scales.analysis.axioms import add_axioms
        add_axioms(rows)
    if as_json:
        click.echo(json.dumps(rows, indent=2, default=float))
        return
    header = ["measure", "distinct", "runs", "min", "max", "gap_cv", "uncovered", "max_deviation"]
    keys = {"measure": "table", "distinct": "n_distinct", "runs": "n_runs"}   # column -> key of the row
    for r in rows:
        r.setdefault("table", r["measure"])
    extra = ["axiom", "B", "equal"] if axioms else []
    table = [[str(r.get(keys.get(h, h), "")) if isinstance(r.get(keys.get(h, h)), (int, str))
              else f"{r.get(keys.get(h, h), float('nan')):.6g}" for h in header] + [_cell(r.get(k)) for k in ("axiom_holds", "balancing_index", "equal_spacing")
                                  if axioms] for r in rows]
    _print_table(header + extra, table)
    if axioms and any(r.get("axiom_holds") is None for r in rows):
        click.echo("axiom / equal: '-' where the run space exceeds 2^20 runs (checked exhaustively only up to it)")


@cli.command()
@click.option("--measures", "-m", help='Comma-separated measure names, e.g. "AP@10,DCG(b=2)@10".')
@click.option("--preset", help="A named measure set instead of (or besides) --measures, e.g. 'paper'.")
@click.option("--depth", type=int, help="Cutoff N for --preset.")
@click.option("--limit", type=click.IntRange(min=2), default=2 ** 20, show_default=True,
              help="Largest run space (levels^N runs) checked exhaustively; beyond it only the balancing "
                   "index is computed.")
@click.option("--pairs", is_flag=True, help="Also count, for every two measures on the same run space, the "
                                            "pairs of runs they order in opposite directions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def axioms(measures, preset, depth, limit, pairs, as_json):
    """Order-theoretic checks over all runs of length N: the axiom (a run that is better
    in the partial order never scores lower: violations and ties over the generating
    moves), the balancing index B(N) and exact equal spacing. RB-dependent measures at
    RB = N (every run feasible). Exhaustive up to --limit runs."""
    from irscale.scales import parse_measures
    from irscale.scales.analysis.axioms import axioms_summary, disagreements
    ms = parse_measures(_measure_names(measures, preset, depth))
    rows = [axioms_summary(m, limit=limit) for m in ms]
    pair_rows = []
    if pairs:
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                if (a.n, a.levels) == (b.n, b.levels) and a.levels ** a.n <= limit:
                    pair_rows.append(disagreements(a, b, limit=limit).to_dict())
    if as_json:
        click.echo(json.dumps({"measures": rows, "pairs": pair_rows}, indent=2, default=str))
        return
    header = ["measure", "runs", "axiom", "moves", "violations", "ties", "B", "equal", "distinct", "gaps",
              "seconds"]
    keys = ["measure", "runs", "axiom_holds", "moves_checked", "violations", "ties", "balancing_index",
            "equal_spacing", "distinct_values", "distinct_gaps", "seconds"]
    _print_table(header, [[_cell(r[k]) for k in keys] for r in rows])
    for r in rows:
        if r["violation_examples"]:
            click.echo(f"{r['measure']}: {r['violations']} violations, e.g. " + ", ".join(r["violation_examples"]))
        if not r["exhaustive"]:
            click.echo(f"{r['measure']}: {r['runs']} runs > --limit {limit}: axiom and spacing not checked")
    for p in pair_rows:
        share = 100.0 * p["discordant"] / p["n_pairs"] if p["n_pairs"] else 0.0
        tau = "-" if p["tau_b"] is None else f"{p['tau_b']:.4f}"
        click.echo(f"{p['first']} vs {p['second']}: {p['discordant']} of {p['n_pairs']} pairs ordered oppositely "
                   f"({share:.2f}%), comparable among them: {_cell(p['comparable_discordant'])} "
                   f"({p['comparable_method']}); tau_b {tau}")


def _cell(v) -> str:
    return "-" if v is None else "yes" if v is True else "no" if v is False else str(v)


def _print_table(header, rows) -> None:
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


@cli.command()
@click.option("--store", "store_path", required=True, type=click.Path(dir_okay=False),
              help="Table file (HDF5) to serve, read-only.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--max-items", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Largest number of values (or runs) in one request; more gets 413.")
@click.option("--max-body-mb", default=64, show_default=True, type=click.IntRange(min=1),
              help="Largest request body in MiB; more gets 413.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def serve(store_path, host, port, max_items, max_body_mb, log_level):
    """Serve the tables of STORE over HTTP (JSON lookup API; docs at /docs)."""
    from irscale.store.service import serve as run_service
    run_service(store_path, host=host, port=port, max_items=max_items,
                max_body_bytes=max_body_mb * 2 ** 20, log_level=log_level)


@cli.command("measures")
def list_measures():
    """List the known measure families."""
    from irscale.scales import families
    for name, cls in families().items():
        rb = "needs --rb" if cls.rb_dependent else ""
        click.echo(f"{cls.example():22s} {cls.summary}  {rb}".rstrip())


def main(argv=None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 bug, 2 user error)."""
    try:
        cli.main(args=argv, prog_name="irscale", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        msg = e.format_message().replace("\n", " ")
        click.echo(f"irscale: error: {msg}", err=True)
        return 2
    except click.exceptions.Abort:
        click.echo("irscale: aborted", err=True)
        return 130
    except IrscaleError as e:
        click.echo(f"irscale: error: {e}", err=True)
        return 2
    except KeyboardInterrupt:
        click.echo("irscale: interrupted", err=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
