"""``irscale axioms``: order-theoretic checks over all runs of length N."""
from __future__ import annotations

import json

import click

from irscale.commands.options import cell, measure_names, print_table
from irscale.scales.analysis.axioms import axioms_summary
from irscale.scales.analysis.disagreements import disagreements
from irscale.scales.measures.parse import parse_measures


@click.command("axioms")
@click.option("--measures", "-m", help='Comma-separated measure names, e.g. "AP@10,DCG(b=2)@10".')
@click.option("--preset", help="A named measure set instead of (or besides) --measures, e.g. 'paper'.")
@click.option("--depth", type=int, help="Cutoff N for --preset.")
@click.option("--limit", type=click.IntRange(min=2), default=2 ** 20, show_default=True,
              help="Largest run space (levels^N runs) checked exhaustively; beyond it only the balancing "
                   "index is computed.")
@click.option("--pairs", is_flag=True, help="Also count, for every two measures on the same run space, the "
                                            "pairs of runs they order in opposite directions.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def command(measures: str | None, preset: str | None, depth: int | None, limit: int, pairs: bool, as_json: bool
            ) -> None:
    """Order-theoretic checks over all runs of length N: the axiom (a run that is better
    in the partial order never scores lower: violations and ties over the generating
    moves), the balancing index B(N) and exact equal spacing. RB-dependent measures at
    RB = N (every run feasible). Exhaustive up to --limit runs."""
    ms = parse_measures(measure_names(measures, preset, depth))
    rows = [axioms_summary(m, limit=limit) for m in ms]
    pair_rows = []
    if pairs:
        for i, a in enumerate(ms):
            for b in ms[i + 1:]:
                if (a.n, a.levels) == (b.n, b.levels) and a.levels ** a.n <= limit and rows[i]["applicable"] \
                        and rows[i + 1 + ms[i + 1:].index(b)]["applicable"]:
                    pair_rows.append(disagreements(a, b, limit=limit).to_dict())
    if as_json:
        click.echo(json.dumps({"measures": rows, "pairs": pair_rows}, indent=2, default=str))
        return
    header = ["measure", "runs", "axiom", "moves", "violations", "ties", "B", "equal", "distinct", "gaps",
              "seconds"]
    keys = ["measure", "runs", "axiom_holds", "moves_checked", "violations", "ties", "balancing_index",
            "equal_spacing", "distinct_values", "distinct_gaps", "seconds"]
    print_table(header, [[cell(r[k]) for k in keys] for r in rows])
    for r in rows:
        if r["violation_examples"]:
            click.echo(f"{r['measure']}: {r['violations']} violations, e.g. " + ", ".join(r["violation_examples"]))
        if not r["applicable"]:
            click.echo(f"{r['measure']}: the checks apply to measures over the runs of REL^N with a scale of all "
                       f"runs (not truncated rankings, not one table per topic)")
        elif not r["exhaustive"]:
            click.echo(f"{r['measure']}: {r['runs']} runs > --limit {limit}: axiom and spacing not checked")
    for p in pair_rows:
        share = 100.0 * p["discordant"] / p["n_pairs"] if p["n_pairs"] else 0.0
        tau = "-" if p["tau_b"] is None else f"{p['tau_b']:.4f}"
        click.echo(f"{p['first']} vs {p['second']}: {p['discordant']} of {p['n_pairs']} pairs ordered oppositely "
                   f"({share:.2f}%), comparable among them: {cell(p['comparable_discordant'])} "
                   f"({p['comparable_method']}); tau_b {tau}")
