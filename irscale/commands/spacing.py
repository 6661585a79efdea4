"""``irscale spacing``: spacing statistics of a store's tables."""
from __future__ import annotations

import json

import click

from irscale.commands.options import cell, print_table
from irscale.scales.analysis.axioms import add_axioms
from irscale.scales.analysis.spacing import store_spacing
from irscale.scales.measures.parse import split_measures
from irscale.store.reader import open_store


@click.command("spacing")
@click.argument("path", type=click.Path())
@click.option("--measures", "-m", help="Comma-separated measures (default: every table).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--axioms/--no-axioms", default=True, show_default=True,
              help="Add the order-theoretic checks (axiom, balancing index B(N), exact equal spacing; "
                   "exhaustive up to 2^20 runs).")
def command(path: str, measures: str | None, as_json: bool, axioms: bool) -> None:
    """Spacing statistics of the tables in PATH: distinct values, gaps, coverage of the
    value range, distance from equal spacing (RB-dependent measures at RB = N)."""
    store = open_store(path)
    rows = store_spacing(store, split_measures(measures) if measures else None)
    if axioms:
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
              else f"{r.get(keys.get(h, h), float('nan')):.6g}" for h in header]
             + [cell(r.get(k)) for k in ("axiom_holds", "balancing_index", "equal_spacing") if axioms] for r in rows]
    print_table(header + extra, table)
    if axioms and any(r.get("axiom_holds") is None for r in rows):
        click.echo("axiom / equal: '-' where the run space exceeds 2^20 runs (checked exhaustively only up to it) "
                   "or the checks do not apply (truncated rankings, one table per topic)")
