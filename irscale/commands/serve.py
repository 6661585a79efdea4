"""``irscale serve``: the HTTP lookup service over a store."""
from __future__ import annotations

import click

from irscale.store.service import serve


@click.command("serve")
@click.option("--store", "store_path", required=True, type=click.Path(dir_okay=False),
              help="Table file (HDF5) to serve, read-only.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--max-items", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="Largest number of values (or runs) in one request; more gets 413.")
@click.option("--max-body-mb", default=64, show_default=True, type=click.IntRange(min=1),
              help="Largest request body in MiB; more gets 413.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def command(store_path: str, host: str, port: int, max_items: int, max_body_mb: int, log_level: str) -> None:
    """Serve the tables of STORE over HTTP (JSON lookup API; docs at /docs)."""
    serve(store_path, host=host, port=port, max_items=max_items, max_body_bytes=max_body_mb * 2 ** 20,
          log_level=log_level)
