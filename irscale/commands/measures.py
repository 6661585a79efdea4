"""``irscale measures``: the known measure families, and how ir_measures' and trec_eval's
names read as irscale measures."""
from __future__ import annotations

import click

from irscale.scales.measures.aliases import mapping_rows
from irscale.scales.measures.registry import families


@click.command("measures")
def command() -> None:
    """List the known measure families and the names of ir_measures and trec_eval they read."""
    for _name, cls in families().items():
        rb = "needs --rb" if cls.rb_dependent else ""
        click.echo(f"{cls.example():22s} {cls.summary}  {rb}".rstrip())
    click.echo("")
    click.echo("Names of ir_measures and trec_eval, which every command reads as they mean them (irscale: before a "
               "name, or --names irscale, for irscale's own reading; T = the qrels' highest relevance level, "
               "depth = the runs' ranking length):")
    rows = mapping_rows()
    width = max(len(example) for _, example, _, _ in rows)
    for tool, example, maps_to, _meaning in rows:
        click.echo(f"  {tool:12s} {example:{width}s} -> {maps_to}")
    click.echo("trec_eval's names also read as its -m option writes them (P.10, ndcg_cut.10, rbp.p=0.8); ir_measures' "
               "rel=r >= 2 on P, R, AP, Rprec is a threshold on the qrels (trec_eval's -l), not a measure parameter.")
