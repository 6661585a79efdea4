"""``irscale analyze``: Kendall tau and significance analyses of scores files, transforms
compared, with a markdown report (and, with --stores, spacing statistics and figures)."""
from __future__ import annotations

import warnings
from pathlib import Path

import click

from irscale.commands.options import ManyValues, check_jobs, jobs_option, print_warnings, show_every_warning
from irscale.errors import IrscaleError, IrscaleWarning, warn
from irscale.scales.analysis.analyze import analyze, load_scores
from irscale.scales.analysis.axioms import add_axioms
from irscale.scales.analysis.figures import (
    length4_figures,
    measure_in_scores,
    plot_transforms,
    plot_value_distributions,
)
from irscale.scales.analysis.leaderboard import leaderboard
from irscale.scales.analysis.report import write_report
from irscale.scales.analysis.spacing import store_spacing
from irscale.scales.measures.parse import parse_measure
from irscale.scales.tables.scale import Scale
from irscale.store.reader import Store, open_store


@click.command("analyze")
@click.argument("scores", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--out", "-o", required=True, type=click.Path(file_okay=False),
              help="Folder for report.md, the CSV/JSON tables and the figures.")
@click.option("--stores", "stores", multiple=True, cls=ManyValues, type=click.Path(),
              help="Table files of the measures: adds spacing statistics and the figures (values against the "
                   "fraction of runs, runs of length 4, Hasse diagram).")
@click.option("--tests", help="Comma-separated significance tests (default: all): "
                              "sign,ranksum,signrank,ttest,anova1,anova2,kruskal,friedman; 'none' skips them.")
@click.option("--transforms", help="Transforms compared (default: every one the scores allow): comma-separated "
                                   "raw,unq,midrank,zscore,zscore-cdf,std-linear,ecdf; 'none' skips the comparison.")
@click.option("--reference", "reference", multiple=True, cls=ManyValues, type=click.Path(dir_okay=False),
              help="Scores files of other runs to standardise against (default: the runs analysed).")
@click.option("--leave-one-out", is_flag=True, help="ECDF of each run without its own score (Urbano et al.).")
@click.option("--baseline", help="A run: corrections over the comparisons with it only, and Glass's delta.")
@click.option("--permutations", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Permutations of the randomised Tukey HSD test (0 skips it).")
@click.option("--resamples", default=1000, show_default=True, type=click.IntRange(min=0),
              help="Bootstrap resamples of the confidence intervals of mean differences (0 skips them).")
@click.option("--confidence", default=0.95, show_default=True,
              type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="Level of the bootstrap confidence intervals.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Seed of the permutations and bootstrap resamples.")
@click.option("--remove-run", help="The run removed to show which transforms depend on the set of runs "
                                   "(default: the best by raw mean of each measure).")
@click.option("--figure-measure", help="Measure of the figure of per-topic scores under every transform "
                                       "(default: the first analysed).")
@click.option("--pair-tables/--no-pair-tables", default=True, show_default=True,
              help="Write the per-pair tables (conclusion_pairs.parquet, inference_pairs.parquet; large for "
                   "hundreds of runs).")
@click.option("--title", help="Title of report.md (default: the scores files, numbers of runs and topics).")
@jobs_option("Worker processes of the analyses")
@click.option("--quiet", "-q", is_flag=True, help="No progress bars.")
def command(scores: tuple[str, ...], out: str, stores: tuple[str, ...], tests: str | None, transforms: str | None,
            reference: tuple[str, ...], leave_one_out: bool, baseline: str | None, permutations: int,
            resamples: int, confidence: float, seed: int, remove_run: str | None, figure_measure: str | None,
            pair_tables: bool, title: str | None, jobs: int | None, quiet: bool) -> None:
    """Kendall tau and significance analyses of SCORES (files written by 'irscale transform'
    with --store; several files are concatenated), with a markdown report. Measures without
    scaled values (no scale at their N, such as map) are left out of the raw-vs-scaled
    analyses and compared under raw and the standardisations, with a warning.

    Also compares transforms (raw, unq, midrank, zscore, zscore-cdf, std-linear, ecdf):
    which decisions of every test survive every transform, what removing a run changes,
    and under each transform Holm/BH corrections, randomised Tukey HSD, Cohen's d and
    paired bootstrap intervals."""
    jobs = check_jobs(jobs)
    opened = [open_store(p) for p in stores]
    table = load_scores(scores)
    chosen = None if tests is None else ([] if tests.strip().lower() == "none" else
                                         [t.strip() for t in tests.split(",") if t.strip()])
    if figure_measure is not None:
        measure_in_scores(table, figure_measure)         # fail before the work, not after
    with warnings.catch_warnings(record=True) as caught:
        show_every_warning()
        result = analyze(table, tests=chosen, n_jobs=jobs, progress=not quiet,
                         sources=[Path(p).name for p in scores], transforms=transforms,
                         reference=list(reference) or None, leave_one_out=leave_one_out, baseline=baseline,
                         permutations=permutations, resamples=resamples, confidence=confidence, seed=seed,
                         remove_run=remove_run, pair_tables=pair_tables)
    print_warnings(caught)
    result.save(out)
    measures = result.meta.get("measures") or list(dict.fromkeys(result.tau_scaled["measure"]))
    spacing, figures = _spacing_and_figures(opened, measures, out)
    with warnings.catch_warnings(record=True) as caught:
        show_every_warning()
        figures = _transform_figure(table, result, figure_measure, list(reference), out) + figures
    print_warnings(caught)
    preamble = _leaderboard(table, baseline, out)
    path = write_report(result, out, spacing=spacing, figures=figures, title=title, preamble=preamble)
    click.echo(f"{path}: {len(result.tau_scaled)} measure rows, {len(result.significance)} test rows, "
               f"{result.seconds:.0f} s")


def _leaderboard(table, baseline: str | None, out: str | Path) -> str:
    """Write the leaderboard of the scores (``leaderboard.md`` and ``.csv`` in ``out``: the
    systems, best first, raw and scaled means, significance against ``baseline`` or every
    pair, as ``irscale compare`` prints it) and return the report's paragraph linking it.
    Scores of several scaling modes give the leaderboard of the ``feasible`` one."""
    modes = list(dict.fromkeys(table["rb_scale"].astype(str))) if "rb_scale" in table.columns else []
    mode = "feasible" if "feasible" in modes else (modes[0] if modes else None)
    rows = table if mode is None else table[table["rb_scale"].astype(str) == mode]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        board = leaderboard(rows, baseline=baseline)
    board.save(Path(out) / "leaderboard.md")
    board.save(Path(out) / "leaderboard.csv")
    return (f"Which systems are best, by how much and which beat {'the baseline' if baseline else 'which'}: "
            f"[leaderboard.md](leaderboard.md) ({'scales ' + mode if mode else 'raw scores'}; also "
            f"leaderboard.csv). `irscale compare` gives it from qrels and runs in one command.")


def _canonical(name: str) -> str | None:
    try:
        return str(parse_measure(name))
    except IrscaleError:
        return None


def _spacing_and_figures(stores: list[Store], measures: list[str], out: str | Path) -> tuple[list[dict], list[tuple]]:
    """Spacing rows of the stores' tables and the report's figures (PNG and SVG in out),
    nothing without stores. The value distribution shows the analysed measures that have a
    table in the stores (every table of the stores when none has); the runs of length 4
    and the Hasse diagram show the analysed measures at length 4
    (:func:`~irscale.scales.analysis.figures.length4_figures`)."""
    if not stores:
        return [], []
    out = Path(out)
    spacing = add_axioms([row for s in stores for row in store_spacing(s)])
    by_name = {t["measure"]: s for s in stores for t in s.tables()}

    def scale_of(name: str) -> Scale | None:
        m = parse_measure(name)
        try:
            return by_name[str(m)].scale(m, m.common_rb())
        except (KeyError, IrscaleError):    # no table, or none at the common recall base
            return None

    analysed = [c for c in map(_canonical, measures) if c in by_name]
    drawn = [m for m in dict.fromkeys(analysed or by_name) if scale_of(m) is not None]
    figures = []
    if drawn:
        families = list(dict.fromkeys(m.rsplit("@", 1)[0] for m in drawn))
        ns = sorted({int(m.rsplit("@", 1)[1]) for m in drawn})
        paths = plot_value_distributions(lambda name: scale_of(name) if name in drawn else None,
                                         measures=families, ns=ns, out_prefix=out / "value-distributions")
        figures.append((f"Values against the fraction of runs ({', '.join(families)}; "
                        f"N = {', '.join(map(str, ns))})", _png(paths)))
    return spacing, figures + length4_figures(measures, out)


def _transform_figure(table, result, measure: str | None, reference: list[str], out: str | Path
                      ) -> list[tuple[str, str]]:
    """The figure of one measure's per-topic scores under every transform compared."""
    transforms = result.meta.get("transforms")
    if not transforms:
        return []
    ref = load_scores(reference) if reference else None
    try:
        name, paths = plot_transforms(table, measure, transforms, Path(out) / "transforms", reference=ref,
                                      leave_one_out=bool(result.meta.get("leave_one_out")))
    except IrscaleError as exc:
        if measure is not None:     # asked for by name: say why not
            raise
        warn(f"no figure of the transforms: {exc}")
        return []
    return [(f"{name}: per-topic scores under every transform against the raw scores, for a few topics",
             _png(paths))]


def _png(paths: list[str]) -> str:
    return Path([p for p in paths if str(p).endswith(".png")][0]).name
