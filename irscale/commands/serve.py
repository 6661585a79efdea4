"""``irscale serve``: the HTTP lookup service over a store."""
from __future__ import annotations

import click

from irscale.store.location import default_store
from irscale.store.service import limits, serve


@click.command("serve")
@click.option("--store", "store_path", type=click.Path(),
              help="Table store to serve, read-only (default: $IRSCALE_STORE, else ~/.cache/irscale/tables, the "
                   "store every command builds into).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="TCP port.")
@click.option("--max-items", default=limits.DEFAULT_MAX_ITEMS, show_default=True, type=click.IntRange(min=1),
              help="Largest number of values (or runs) in one request; more gets 413.")
@click.option("--max-body-mb", default=limits.DEFAULT_MAX_BODY_BYTES // 2 ** 20, show_default=True,
              type=click.IntRange(min=1), help="Largest request body in MiB; more gets 413.")
@click.option("--workers", default=limits.DEFAULT_WORKERS, show_default=True, type=click.IntRange(min=1),
              help="Worker processes that parse and rank requests (requests worked on at once).")
@click.option("--time-budget", default=limits.DEFAULT_TIME_BUDGET, show_default=True, type=click.FloatRange(min=0.1),
              help="Seconds a worker may spend on one request; beyond, it is stopped and the request gets 413.")
@click.option("--memory-budget-mb", default=limits.DEFAULT_MEMORY_BUDGET // 2 ** 20, show_default=True,
              type=click.IntRange(min=64),
              help="Memory (MiB, anonymous resident) a worker may reach on one request; beyond: 413.")
@click.option("--header-timeout", default=limits.DEFAULT_HEADER_TIMEOUT, show_default=True,
              type=click.FloatRange(min=0.1),
              help="Seconds a connection has to send a complete request head; slower ones are closed.")
@click.option("--max-connections", default=limits.DEFAULT_MAX_CONNECTIONS, show_default=True,
              type=click.IntRange(min=1),
              help="Open connections at most (uvicorn's limit_concurrency); beyond, requests get 503.")
@click.option("--log-level", default="info", show_default=True,
              type=click.Choice(["critical", "error", "warning", "info", "debug"]))
def command(store_path: str, host: str, port: int, max_items: int, max_body_mb: int, workers: int,
            time_budget: float, memory_budget_mb: int, header_timeout: float, max_connections: int,
            log_level: str) -> None:
    """Serve the tables of STORE over HTTP (JSON lookup API; docs at /docs)."""
    store_path = store_path if store_path is not None else str(default_store())
    serve(store_path, host=host, port=port, max_items=max_items, max_body_bytes=max_body_mb * 2 ** 20,
          log_level=log_level, workers=workers, time_budget=time_budget, memory_budget=memory_budget_mb * 2 ** 20,
          header_timeout=header_timeout, max_connections=max_connections)
