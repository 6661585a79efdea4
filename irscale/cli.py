"""The ``irscale`` command line.

``main(argv) -> int`` runs one command and returns its exit status: 0 on success, 2 on a
user error (printed as one line, ``irscale: error: ...``, never a traceback).

Each subcommand is a module of :mod:`irscale.commands`, imported only when it runs, so
``irscale --help`` and ``irscale measures`` answer without loading numba, pandas or h5py.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

import click

from irscale.errors import IrscaleError

#: name -> (module of irscale.commands, one-line help shown by ``irscale --help``)
COMMANDS = {
    "build": ("build", "Enumerate every run of length N and write the measures' tables to OUT."),
    "info": ("info", "List the tables in PATH with their metadata and tie certificates."),
    "lookup": ("lookup", "Print the unq rank of each raw VALUE of MEASURE, from the tables in PATH."),
    "compare": ("compare", "Leaderboard of runs: raw and interval-scaled means, ranks, significance vs a baseline."),
    "transform": ("transform", "Score TREC runs per topic and map the scores to their interval scales."),
    "analyze": ("analyze", "Kendall tau and significance analyses of SCORES, with a markdown report."),
    "spacing": ("spacing", "Spacing statistics of the tables in PATH."),
    "axioms": ("axioms", "Order-theoretic checks over all runs of length N."),
    "serve": ("serve", "Serve the tables of STORE over HTTP (JSON lookup API; docs at /docs)."),
    "pack": ("pack", "Write the tables of the store folder STORE into one file OUT, for sharing."),
    "unpack": ("pack", "Make the store folder STORE of the single-file store FILE (packed, or of an older irscale)."),
    "measures": ("measures", "List the known measure families."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported when they run (the click recipe for
    lazily loaded subcommands); ``--help`` lists them from :data:`COMMANDS` alone."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(f"irscale.commands.{COMMANDS[cmd_name][0]}")
        return getattr(module, f"{cmd_name}_command", None) or module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, help_text) for name, (_, help_text) in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="irscale", prog_name="irscale")
def cli() -> None:
    """Interval scales for IR evaluation measures: build exact unq rank tables,
    inspect them and look values up."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 bug, 2 user error)."""
    try:
        cli.main(args=argv, prog_name="irscale", standalone_mode=False)
    except click.exceptions.Exit as e:
        return e.exit_code
    except click.ClickException as e:
        msg = e.format_message().replace("\n", " ")
        click.echo(f"irscale: error: {msg}", err=True)
        return 2
    except click.exceptions.Abort as e:  # click turns KeyboardInterrupt into Abort; keep its message
        cause = e.__cause__
        said = cause.args[0] if isinstance(cause, KeyboardInterrupt) and cause.args else "aborted"
        click.echo(f"irscale: {said}", err=True)
        return 130
    except IrscaleError as e:
        click.echo(f"irscale: error: {e}", err=True)
        return 2
    except KeyboardInterrupt as e:
        click.echo(f"irscale: {e.args[0] if e.args else 'interrupted'}", err=True)
        return 130
    except BrokenPipeError:              # the reader of stdout left (| head): stop quietly, as cat does
        sys.stderr.close()
        return 141
    return 0


if __name__ == "__main__":
    sys.exit(main())
