"""``irscale transform``: per-topic raw and interval-scaled scores of TREC runs."""
from __future__ import annotations

import click

from irscale.commands.options import (
    ManyValues,
    bounded_options,
    check_jobs,
    jobs_option,
    measure_names,
    say_scales,
    warnings_said,
)
from irscale.enumerate.lazy import lazy_module
from irscale.scales.measures.aliases import DEFAULT_NAMES, NAMES
from irscale.scales.runs.scores import check_output

transforms = lazy_module("irscale.scales.runs.transform")      # numba, when the command runs
scores_files = lazy_module("irscale.scales.runs.scores")
layouts = lazy_module("irscale.scales.tables.layouts")
parsing = lazy_module("irscale.scales.measures.parse")

EMPTY_TOPICS = ("zero", "skip")      # irscale.scales.runs.transform's, kept here: it loads numba and pandas
MISSING_TOPICS = ("zero", "skip")


@click.command("transform")
@click.option("--qrels", required=True, type=click.Path(dir_okay=False),
              help="Relevance judgments: topic iteration docno rel (gzip allowed).")
@click.option("--runs", "runs", required=True, multiple=True, cls=ManyValues,
              help="Run files (topic Q0 docno rank score tag; gzip allowed), or folders of run files.")
@click.option("--measures", "-m", help='Comma-separated measure names, e.g. "AP@30,nDCG(b=2)@30".')
@click.option("--preset", help="A named measure set instead of (or besides) --measures, e.g. 'paper'.")
@click.option("--depth", type=int, help="Cutoff N for --preset.")
@click.option("--store", "store_path", type=click.Path(),
              help="Table store to read scales from and build missing ones into (default: $IRSCALE_STORE, else "
                   "~/.cache/irscale/tables, shared by every project).")
@click.option("--out", "-o", required=True, type=click.Path(dir_okay=False),
              help="Scores file: .csv, .tsv, .parquet (.csv.gz, .tsv.gz); written atomically.")
@click.option("--rb-scale", type=click.Choice(["feasible", "common"]), default="feasible", show_default=True,
              help="Scale of RB-dependent measures: each topic's own recall base (feasible runs only), or "
                   "the one scale of RB >= N for every topic (the original paper).")
@click.option("--raw-only", is_flag=True, help="Raw scores only, even with --store.")
@click.option("--midranks", is_flag=True, help="Also write mid-ranks (for comparing tie strategies; one pass over "
                                                "each table's run counts).")
@click.option("--build-missing", is_flag=True, hidden=True, help="Kept for older scripts: building is the default.")
@click.option("--no-build", is_flag=True,
              help="Never build: a measure whose scale is missing gets raw scores only, with the build command. "
                   "By default missing scales estimated to build within a minute are built into the store.")
@click.option("--max-grade", type=click.IntRange(min=1), default=None,
              help="Fold qrels levels above this grade into it (graded measures fold levels above their own top "
                   "grade anyway; binary measures count levels >= 1 as relevant).")
@click.option("--empty-topics", type=click.Choice(EMPTY_TOPICS), default="zero", show_default=True,
              help="Topics judged without a relevant document: scored 0 and counted in means, as trec_eval does, "
                   "or left out with a warning.")
@click.option("--missing-topics", type=click.Choice(MISSING_TOPICS), default="zero", show_default=True,
              help="Topics a run has no ranking for: scored as the all-non-relevant run (trec_eval -c), or left "
                   "out (trec_eval without -c).")
@click.option("--rel-level", "-l", type=click.IntRange(min=1), default=None,
              help="trec_eval's -l: binary measures count levels >= this as relevant (graded measures read "
                   "levels as grades).")
@click.option("--max-docs", "-M", "run_depth", type=click.IntRange(min=1), default=None,
              help="trec_eval's -M: documents read per topic (default: all).")
@click.option("--names", "vocabulary", type=click.Choice(NAMES), default=DEFAULT_NAMES, show_default=True,
              help="Whose meaning a measure name has when irscale and ir_measures read it differently (ERR@20): "
                   "ir_measures' (default; names only irscale has, like nDCG(b=2)@10, stay irscale's) or "
                   "irscale's; irm:NAME, irscale:NAME, trec:NAME choose for one name. trec_eval's names (map, "
                   "P_10, ndcg_cut_10) are read as trec_eval's in any.")
@click.option("--run-names", type=click.Choice(["tag", "file"]), default="tag", show_default=True,
              help="Name runs by their run tag (runs whose tags repeat are named by file, with a warning) or by "
                   "file name.")
@click.option("--standardize", help="Also write per-topic standardisations of the raw scores over the runs given "
                                    "(they change when runs are added or removed, unlike 'scaled'): comma-separated "
                                    "zscore,zscore-cdf,std-linear,ecdf, or 'all'.")
@click.option("--reference", type=click.Path(dir_okay=False),
              help="Scores file of other runs to standardise against (default: the runs given).")
@click.option("--leave-one-out", is_flag=True, help="ECDF of each run without its own score (Urbano et al.).")
@bounded_options
@jobs_option("Workers building missing tables")
@click.option("--explain", is_flag=True,
              help="Say on stderr, per measure, what its scale is and why, at length (what the one-line warnings "
                   "leave out: the build limit, the plan of a bounded scale, the command that builds a table).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars and no warnings.")
def command(qrels: str, runs: tuple[str, ...], measures: str | None, preset: str | None, depth: int | None,
            store_path: str | None, out: str, rb_scale: str, raw_only: bool, midranks: bool, build_missing: bool,
            no_build: bool, max_grade: int | None, empty_topics: str, missing_topics: str, rel_level: int | None,
            run_depth: int | None, vocabulary: str,
            run_names: str, standardize: str | None, reference: str | None, leave_one_out: bool, bounded: bool | None,
            bound_error: float | None, jobs: int | None, explain: bool, quiet: bool) -> None:
    """Score TREC runs per topic and map the scores to their interval scales.

    Writes one row per (run, topic, measure): run, topic, measure, n, rb, raw, rank, k,
    scaled, scaled_lo and scaled_hi (with --bounded), midrank (with --midranks), n_runs,
    rb_scale, scale (what scaled the row). Ranks come from the judged runs
    (exact), following trec_eval's conventions (score descending, docno descending; cut at
    N; unjudged = non-relevant).
    """
    names = measure_names(measures, preset, depth)
    jobs = check_jobs(jobs)
    if build_missing and no_build:
        raise click.UsageError("--build-missing and --no-build contradict each other")
    check_output(out)
    if (reference or leave_one_out) and not standardize:
        raise click.UsageError("--reference and --leave-one-out go with --standardize")
    ref = scores_files.read_scores(reference) if reference else None
    with warnings_said(quiet):
        scores = transforms.transform(qrels, list(runs), names, store_path, raw_only=raw_only, rb_scale=rb_scale,
                           midranks=midranks, build=not no_build, max_grade=max_grade,
                           empty_topics=empty_topics, missing_topics=missing_topics, rel_level=rel_level,
                           depth=run_depth,
                           run_names=run_names, names=vocabulary, n_jobs=jobs, progress=not quiet,
                           standardize=standardize, reference=ref, leave_one_out=leave_one_out,
                           bounded=bounded, error=bound_error)
    if explain:
        say_scales(scores.attrs.get("scales", {}), scores.attrs.get("conventions"))
    scores_files.write_scores(scores, out)
    if raw_only:
        what = "raw scores"
    else:
        scaled = scores.groupby("measure", sort=False)["scaled"].apply(lambda x: x.notna().any())
        widths = {}
        if "scaled_hi" in scores:
            width = (scores["scaled_hi"] - scores["scaled_lo"]).groupby(scores["measure"], sort=False).max()
            widths = {parsing.parse_measure(m): float(w) for m, w in width.items()}
        kinds = layouts.describe_scales([parsing.parse_measure(m) for m in scaled.index[scaled.to_numpy()]], widths,
                                        scores.attrs.get("scale_kinds"))
        what = f"raw and scaled scores ({rb_scale}; {kinds})" if scaled.any() else "raw scores only"
        if scaled.any() and not scaled.all():
            what += f"; raw only (no scale): {', '.join(scaled.index[~scaled.to_numpy()])}"
    if standardize:
        what += ", standardised (" + ", ".join(c for c in ("zscore", "zscore_cdf", "std_linear", "ecdf")
                                               if c in scores.columns) + ")"
    click.echo(f"{out}: {len(scores)} rows, {scores['run'].nunique()} runs x {scores['topic'].nunique()} topics x "
               f"{scores['measure'].nunique()} measures, {what}; {scores.attrs.get('conventions', '')}")
