"""The ``irscale`` command line.

``main(argv) -> int`` runs one command and returns its exit status: 0 on success, 2 on a
user error (printed as one line, ``irscale: error: ...``, never a traceback).

Each subcommand is a module of :mod:`irscale.commands`, imported only when it runs, so
``irscale --help`` and ``irscale measures`` answer without loading numba, pandas or h5py.

Ctrl-C exits with status 130 and one line, never a traceback, from the moment this module
is imported: while the command line starts (its imports, before :func:`main` runs) and
after it has run, SIGINT ends the process at once (:func:`_interrupted`); while
:func:`main` runs it raises KeyboardInterrupt, so that commands clean up and say what they
leave (a build: how to resume). Before that, in the interpreter's own start-up (its site
module, some milliseconds), Ctrl-C is Python's. When an interrupt hits the import of some
extension modules (code they run with ``PyRun_String``), Python ends the process on exit
by SIGINT rather than with status 130: the same 130 to a shell, after the same one line.
"""
from __future__ import annotations

import atexit
import os
import signal
import sys


def _interrupted(signum: int, frame: object) -> None:
    """SIGINT while the command line starts or ends: one line and exit 130 at once (there
    is nothing to clean up; a KeyboardInterrupt would print the traceback of an import)."""
    try:
        os.write(2, b"\nirscale: interrupted\n")
    finally:
        os._exit(130)


def _started_as_command() -> bool:
    """Whether this process is the ``irscale`` command (its console script or ``python -m
    irscale``), not a program importing this module, whose Ctrl-C is its own."""
    main_module = sys.modules.get("__main__")
    spec = getattr(main_module, "__spec__", None)
    if spec is not None and spec.name == "irscale.__main__":
        return True
    return os.path.basename(getattr(main_module, "__file__", None) or "").split(".")[0] in ("irscale",
                                                                                           "irscale-script")


if _started_as_command() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted)

import importlib  # noqa: E402 (after the SIGINT handler: Ctrl-C during the imports is one line too)
from collections.abc import Sequence  # noqa: E402

import click  # noqa: E402

from irscale.errors import IrscaleError  # noqa: E402

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


def _sigint(handler: object) -> object:
    """Set the SIGINT handler (where this thread may: the main thread), returning the one
    it replaces (None when none was set)."""
    try:
        return signal.signal(signal.SIGINT, handler)
    except ValueError:                   # not the main thread: signals are not its own
        return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 1 bug, 2 user error, 130 interrupted).
    Ctrl-C raises KeyboardInterrupt while it runs (the handler it replaces is put back on
    return), and its message is printed as one line."""
    before = _sigint(signal.default_int_handler)
    try:
        code = _main(argv)
    except KeyboardInterrupt:            # in an except clause of _main: still one line
        _sigint(_interrupted if before is _interrupted else signal.SIG_IGN)
        click.echo("irscale: interrupted", err=True)
        code = 130
    finally:
        if before is not None:
            _sigint(before)
    if code == 130 and before is _interrupted:       # the irscale command itself, interrupted
        _end_interrupted()
    return code


def _end_interrupted() -> None:
    """End the interrupted ``irscale`` command after its one line: Python's exit functions
    run (worker pools and temporary folders are cleaned up), but not the exit of the C++
    libraries, whose threads an interrupt can leave running ("terminate called without an
    active exception", SIGABRT)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    atexit._run_exitfuncs()
    os._exit(130)


def _cut_short_by_ctrl_c(error: BaseException | None) -> bool:
    """Whether ``error`` comes from a Ctrl-C: Python turns a KeyboardInterrupt within some
    calls (a class's ``__set_name__`` while a module is imported) into another exception,
    whose cause it is."""
    for _ in range(32):
        if error is None or isinstance(error, KeyboardInterrupt):
            return error is not None
        error = error.__cause__ or error.__context__
    return False


def _main(argv: Sequence[str] | None) -> int:
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
        said = ((cause.args[0] if cause.args else "interrupted") if isinstance(cause, KeyboardInterrupt)
                else "aborted")
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
    except Exception as e:
        if not _cut_short_by_ctrl_c(e):
            raise                        # a bug: its traceback
        click.echo("irscale: interrupted", err=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
