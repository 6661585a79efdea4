"""``irscale compare``: the leaderboard of runs, raw and interval-scaled, in one command.

Everything a user can get wrong (names, files, the store, the baseline, output paths) is
checked before any run is read. Missing scales are built into the store with every core;
builds estimated above a minute ask first on a terminal (``--yes`` builds without asking,
elsewhere the command stops and names the ``irscale build`` command).
"""
from __future__ import annotations

import sys

import click

from irscale.commands.options import (
    ManyValues,
    bounded_options,
    check_jobs,
    jobs_option,
    say_scales,
    warnings_said,
)
from irscale.enumerate.lazy import lazy_module
from irscale.scales.measures.aliases import DEFAULT_NAMES, NAMES

# loaded when the command runs (pandas, scipy, numba), not for --help
output = lazy_module("irscale.scales.analysis.leaderboard_output")
comparing = lazy_module("irscale.scales.analysis.compare")
plotting = lazy_module("irscale.scales.analysis.leaderboard_plot")

#: Kept here, not imported, so that ``irscale compare --help`` loads nothing heavy
#: (tests/test_leaderboard_cli.py checks that they equal the library's).
TESTS = ("ttest", "signrank", "sign", "ranksum", "randomisation", "tukey-hsd")
CORRECTIONS = ("holm", "bh", "none")
DEFAULT_MEASURES = "nDCG@10,AP@10,P@10,RR@10"
#: Builds estimated to take longer ask first on a terminal and are refused elsewhere.
MAX_BUILD_SECONDS = 60.0


@click.command("compare")
@click.option("--qrels", required=True, type=click.Path(dir_okay=False),
              help="Relevance judgments: topic iteration docno rel (gzip allowed).")
@click.option("--runs", "runs", required=True, multiple=True, cls=ManyValues,
              help="Run files (topic Q0 docno rank score tag; gzip allowed), or folders of run files.")
@click.option("--measures", "-m", default=DEFAULT_MEASURES, show_default=True,
              help="Comma-separated names as ir_measures and trec_eval write them (nDCG@10, P@5, RR, map, "
                   "ndcg_cut_10) or irscale's own (nDCG(b=2)@10, RBP(p=0.8)@10).")
@click.option("--baseline", "-b", help="The run (by name) every other is tested against; without it, every pair.")
@click.option("--store", "store_path", type=click.Path(),
              help="Table store to read scales from and build missing ones into (default: $IRSCALE_STORE, else "
                   "~/.cache/irscale/tables, shared by every project).")
@click.option("--test", type=click.Choice(TESTS), default="ttest", show_default=True,
              help="Paired test of each comparison (randomisation: Fisher's paired randomisation test; tukey-hsd: "
                   "randomised Tukey HSD, corrected by itself).")
@click.option("--correction", type=click.Choice(CORRECTIONS), default="holm", show_default=True,
              help="Multiple-comparison correction over the comparisons (with the baseline, or every pair).")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Significance level.")
@click.option("--confidence", type=float, default=0.95, show_default=True,
              help="Level of the confidence interval of each scaled mean.")
@click.option("--out", "-o", "outs", multiple=True, type=click.Path(dir_okay=False),
              help="Also write the leaderboard to this file: .csv, .md, .tex, .json or .txt (repeatable).")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Also draw the systems' scaled means with their intervals beside the raw ones: .png, .pdf, .svg.")
@click.option("--yes", "-y", is_flag=True, help="Build missing scales without asking, however long the estimate.")
@click.option("--no-build", is_flag=True,
              help="Never build: a measure whose scale is missing shows raw scores only, with the build command.")
@click.option("--rb-scale", type=click.Choice(["feasible", "common"]), default="feasible", show_default=True,
              help="Scale of RB-dependent measures: each topic's own recall base, or the one of RB >= N.")
@click.option("--names", "vocabulary", type=click.Choice(NAMES), default=DEFAULT_NAMES, show_default=True,
              help="Whose meaning a name has when irscale and ir_measures read it differently (ERR@20); "
                   "irm:NAME, irscale:NAME, trec:NAME choose for one name.")
@click.option("--midranks", is_flag=True, help="Count mid-ranks among the transforms that decide scale-freeness.")
@click.option("--max-grade", type=click.IntRange(min=1), default=None,
              help="Fold qrels levels above this grade into it.")
@click.option("--rel-level", "-l", type=click.IntRange(min=1), default=None,
              help="trec_eval's -l: binary measures count levels >= this as relevant.")
@click.option("--empty-topics", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="Topics judged without a relevant document: scored 0 and counted, as trec_eval does, or left out.")
@click.option("--missing-topics", type=click.Choice(["zero", "skip"]), default="zero", show_default=True,
              help="Topics a run does not answer: scored as the all-non-relevant run (trec_eval -c), or left out.")
@click.option("--max-docs", "-M", "depth", type=click.IntRange(min=1), default=None,
              help="trec_eval's -M: documents read per topic (default: all).")
@click.option("--run-names", type=click.Choice(["tag", "file"]), default="tag", show_default=True,
              help="Name runs by their run tag or by file name.")
@click.option("--permutations", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Permutations of --test randomisation and tukey-hsd.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of --test randomisation and tukey-hsd.")
@bounded_options
@jobs_option("Workers building missing scales")
@click.option("--explain", is_flag=True,
              help="Say on stderr, per measure, what its scale is and why, at length (what the one-line warnings "
                   "leave out: the build limit, the plan of a bounded scale, the command that builds a table).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars and no warnings (the table is printed).")
def command(qrels: str, runs: tuple[str, ...], measures: str, baseline: str | None, store_path: str | None,
            test: str, correction: str, alpha: float, confidence: float, outs: tuple[str, ...], plot_path: str | None,
            yes: bool,
            no_build: bool, rb_scale: str, vocabulary: str, midranks: bool, max_grade: int | None,
            rel_level: int | None, empty_topics: str, missing_topics: str, depth: int | None, run_names: str,
            permutations: int,
            seed: int, bounded: bool | None, bound_error: float | None, jobs: int | None, explain: bool,
            quiet: bool) -> None:
    """The leaderboard of RUNS: per measure, the systems' raw and interval-scaled means, their
    ranks, a confidence interval of the scaled mean, significance against --baseline (or
    between every pair) with a correction, and marks where the conclusion depends on the
    scale (†: raw and scaled differ; ~: not scale-free).

    \b
    irscale compare --qrels qrels.txt --runs runs/ -m "nDCG@10,P@5,RR,AP@10" --baseline bm25 -o board.md
    """
    jobs = check_jobs(jobs)
    for name, level in (("--alpha", alpha), ("--confidence", confidence)):
        if not 0 < level < 1:
            raise click.BadParameter(f"must lie between 0 and 1, got {level}", param_hint=name)
    if yes and no_build:
        raise click.UsageError("--yes and --no-build contradict each other")
    for out in outs:
        output.check_path(out)
    if plot_path is not None:
        plotting.check_plot_path(plot_path)
    if baseline is not None:
        comparing.early_baseline_check(list(runs), baseline, run_names)
    asking = sys.stdin.isatty() and sys.stderr.isatty()

    def confirm(what: str) -> bool:
        if yes:
            return True
        if not asking:
            return False
        click.echo(f"irscale: {what}", err=True)
        return click.confirm("Build them now?", default=True, err=True)

    with warnings_said(quiet):
        board = comparing.compare(
            qrels, list(runs), measures, baseline, store_path, test=test, correction=correction, alpha=alpha,
            confidence=confidence, rb_scale=rb_scale, names=vocabulary, build=not no_build,
            max_build_seconds=None if yes else MAX_BUILD_SECONDS, confirm=confirm, n_jobs=jobs,
            empty_topics=empty_topics, missing_topics=missing_topics, rel_level=rel_level, max_grade=max_grade,
            depth=depth, run_names=run_names, midranks=midranks, permutations=permutations, seed=seed,
            progress=not quiet,
            bounded=bounded, error=bound_error)
    if explain:
        say_scales(board.scales, board.conventions)
    for out in outs:                         # files first: a reader of stdout that leaves early loses none
        board.save(out)
        click.echo(f"{out}: written", err=True)
    if plot_path is not None:
        board.plot(plot_path)
        click.echo(f"{plot_path}: written", err=True)
    output.render(board)
