"""``irscale info``: the tables of a store, their metadata and tie certificates."""
from __future__ import annotations

import json

import click

from irscale.store.reader import open_store


@click.command("info")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
@click.option("--by-rb", "by_rb", is_flag=True, help="Also list distinct values per recall base.")
@click.option("--verify", is_flag=True, help="Recompute every table's checksum (reads whole tables).")
def command(path: str, as_json: bool, by_rb: bool, verify: bool) -> None:
    """List the tables in PATH with their metadata and tie certificates."""
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
