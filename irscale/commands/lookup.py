"""``irscale lookup``: unq ranks of raw values from a store."""
from __future__ import annotations

import click

from irscale.commands.options import parse_rbs
from irscale.errors import ValueNotInScaleError
from irscale.store.reader import open_store


@click.command("lookup", context_settings={"ignore_unknown_options": True})
@click.argument("path", type=click.Path(dir_okay=False))
@click.argument("measure")
@click.argument("values", nargs=-1, required=True)
@click.option("--rb", "rb_text", help="Recall base of the topic (RB-dependent measures): an integer, or for graded "
                                      "measures the per-grade counts like '(3,2)'.")
def command(path: str, measure: str, values: tuple[str, ...], rb_text: str | None) -> None:
    """Print the unq rank of each raw VALUE of MEASURE, from the tables in PATH."""
    rb = None
    if rb_text is not None:
        parsed = parse_rbs(rb_text)
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
