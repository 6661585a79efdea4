"""``irscale pack`` and ``irscale unpack``: a store folder as one file for sharing, and back."""
from __future__ import annotations

import click

from irscale.store.pack import pack, unpack


@click.command("pack")
@click.argument("store", type=click.Path())
@click.argument("out", type=click.Path(dir_okay=False))
def pack_command(store: str, out: str) -> None:
    """Write every table of the store folder STORE into the new file OUT (one HDF5 file, read
    directly by every command; every table verified first)."""
    n = pack(store, out)
    click.echo(f"{out}: {n} table{'s' * (n != 1)} packed from {store}")


@click.command("unpack")
@click.argument("file", type=click.Path(dir_okay=False))
@click.argument("store", type=click.Path())
def unpack_command(file: str, store: str) -> None:
    """Make the store folder STORE (new, or one to add to) of the tables of the single-file
    store FILE (written by irscale pack); every table is verified first, FILE is left as it
    is."""
    n = unpack(file, store)
    click.echo(f"{store}: {n} table{'s' * (n != 1)} unpacked from {file}")
