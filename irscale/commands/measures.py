"""``irscale measures``: the known measure families."""
from __future__ import annotations

import click

from irscale.scales.measures.registry import families


@click.command("measures")
def command() -> None:
    """List the known measure families."""
    for _name, cls in families().items():
        rb = "needs --rb" if cls.rb_dependent else ""
        click.echo(f"{cls.example():22s} {cls.summary}  {rb}".rstrip())
