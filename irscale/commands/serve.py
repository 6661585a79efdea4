"""``irscale serve``: the HTTP lookup service over a store."""
from __future__ import annotations

import click

import irscale.service as service
from irscale.store.location import default_store


@click.command("serve")
@click.option("--store", "store_path", type=click.Path(),
              help="Table store to serve, read-only (default: $IRSCALE_STORE, else ~/.cache/irscale/tables, the "
                   "store every command builds into).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--max-items", default=service.DEFAULT_MAX_ITEMS, show_default=True, type=click.IntRange(min=1),
              help="Largest number of values (or runs) in one request; more gets 413.")
@click.option("--max-body-mb", default=service.DEFAULT_MAX_BODY_BYTES // 2 ** 20, show_default=True,
              type=click.IntRange(min=1), help="Largest request body in MiB; more gets 413.")
@click.option("--threads", default=service.DEFAULT_THREADS, show_default=True, type=click.IntRange(min=1),
              help="Threads answering requests (requests worked on at once; the others wait their turn).")
@click.option("--max-seconds", default=service.DEFAULT_MAX_SECONDS, show_default=True,
              type=click.FloatRange(min=0.001),
              help="Estimated seconds of work one request may ask for; more gets 422 before any work starts.")
@click.option("--max-connections", default=service.DEFAULT_MAX_CONNECTIONS, show_default=True,
              type=click.IntRange(min=1),
              help="Open connections at most (uvicorn's limit_concurrency); beyond, requests get 503.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def command(store_path: str, host: str, port: int, max_items: int, max_body_mb: int, threads: int,
            max_seconds: float, max_connections: int, log_level: str) -> None:
    """Serve the tables of STORE over HTTP (JSON lookup API; docs at /docs)."""
    store_path = store_path if store_path is not None else str(default_store())
    service.serve(store_path, host=host, port=port, log_level=log_level, max_connections=max_connections,
                  max_items=max_items, max_body_bytes=max_body_mb * 2 ** 20, threads=threads, max_seconds=max_seconds)
