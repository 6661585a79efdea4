"""``irscale analyze``: Kendall tau and significance analyses of scores files, with a
markdown report (and, with --stores, spacing statistics and figures)."""
from __future__ import annotations

import warnings
from pathlib import Path

import click
import pandas as pd

from irscale.commands.options import ManyValues, check_jobs, print_warnings
from irscale.scales.analysis.analyze import analyze
from irscale.scales.analysis.axioms import add_axioms
from irscale.scales.analysis.figures import plot_hasse, plot_runs_length4, plot_value_distributions
from irscale.scales.analysis.report import write_report
from irscale.scales.analysis.spacing import store_spacing
from irscale.scales.measures.parse import parse_measure
from irscale.scales.runs.scores import read_scores
from irscale.store.reader import open_store


@click.command("analyze")
@click.argument("scores", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Folder for report.md, the CSV/JSON tables and the figures.")
@click.option("--stores", "stores", multiple=True, cls=ManyValues, type=click.Path(dir_okay=False),
              help="Table files of the measures: adds spacing statistics and value-distribution figures.")
@click.option("--tests", help="Comma-separated significance tests (default: all): "
                              "sign,ranksum,signrank,ttest,anova1,anova2,kruskal,friedman; 'none' skips them.")
@click.option("--jobs", "-j", default=1, show_default=True, type=int, help="Worker processes.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def command(scores: tuple[str, ...], out: str, stores: tuple[str, ...], tests: str | None, jobs: int, quiet: bool
            ) -> None:
    """Kendall tau and significance analyses of SCORES (files written by 'irscale transform'
    with --store; several files are concatenated), with a markdown report."""
    check_jobs(jobs)
    opened = [open_store(p) for p in stores]
    table = pd.concat([read_scores(p) for p in scores], ignore_index=True)
    chosen = None if tests is None else ([] if tests.strip().lower() == "none" else
                                         [t.strip() for t in tests.split(",") if t.strip()])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = analyze(table, tests=chosen, n_jobs=jobs, progress=not quiet)
    print_warnings(caught)
    result.save(out)
    spacing, figures = _spacing_and_figures(opened, sorted(table["n"].unique()), out)
    path = write_report(result, out, spacing=spacing, figures=figures)
    click.echo(f"{path}: {len(result.tau_scaled)} measure rows, {len(result.significance)} test rows, "
               f"{result.seconds:.0f} s")


def _spacing_and_figures(stores, ns, out):
    """Spacing rows of the stores' tables and the report's figures (PNG and SVG in out)."""
    out = Path(out)
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
    return Path([p for p in paths if str(p).endswith(".png")][0]).name
