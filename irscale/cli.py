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

A reader of stdout that leaves (``irscale info STORE | head -1``) ends nothing: as Python's
note on SIGPIPE advises, devnull takes the place of the closed pipe and the command goes on
into it (the files it writes are written), exiting 0 with nothing said on stderr.

The ``irscale`` command itself (not a program calling :func:`main`, which gets the exit
status back) ends every way it ends (0, 2, 130, a bug's traceback) as the interpreter would
up to its exit functions, then with ``os._exit`` (:func:`_end`): the threads of C++
libraries (numba's TBB, pyarrow) that may still run at exit cannot abort it ("terminate
called without an active exception", SIGABRT) after its last line.
"""
from __future__ import annotations

import atexit
import contextlib
import io
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


#: Whether this process is the ``irscale`` command (:func:`main` then ends it, :func:`_end`).
_COMMAND = _started_as_command()

if _COMMAND and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
    signal.signal(signal.SIGINT, _interrupted)

import importlib  # noqa: E402 (after the SIGINT handler: Ctrl-C during the imports is one line too)
import select  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from typing import NoReturn  # noqa: E402

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
    "unpack": ("pack", "Make the store folder STORE of the single-file store FILE (written by irscale pack)."),
    "measures": ("measures", "List the known measure families."),
}


class _OutputClosedError(Exception):
    """A BrokenPipeError of a command, carried past click, which would end the command with
    status 1 for it; :func:`_main` tells whether the reader of stdout (or stderr) left."""


class LazyGroup(click.Group):
    """A click group whose subcommands are imported when they run (the click recipe for
    lazily loaded subcommands); ``--help`` lists them from :data:`COMMANDS` alone."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: object) -> click.Context:
        try:                             # --help and --version print while the arguments are parsed
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError as e:
            raise _OutputClosedError() from e

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError as e:
            raise _OutputClosedError() from e

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
    return), and its message is printed as one line. The ``irscale`` command itself does
    not return: it ends with its exit status (:func:`_end`)."""
    if _COMMAND:
        _readers_may_leave()
    before = _sigint(signal.default_int_handler)
    try:
        code = _main(argv)
    except KeyboardInterrupt:            # in an except clause of _main: still one line
        _sigint(_interrupted if before is _interrupted else signal.SIG_IGN)
        click.echo("irscale: interrupted", err=True)
        code = 130
    except BaseException as e:           # a bug (its traceback), or sys.exit in a command
        if not _COMMAND:
            raise
        _sigint(_interrupted if before is _interrupted else signal.SIG_IGN)
        code = _status_of(e)
    finally:
        if before is not None:
            _sigint(before)
    if _COMMAND:
        _end(code)
    return code


def _status_of(error: BaseException) -> int:
    """The exit status the interpreter would give for ``error`` escaping the command, its
    traceback (or the message of a SystemExit) printed as the interpreter prints it."""
    if isinstance(error, SystemExit):
        if error.code is None or isinstance(error.code, int):
            return error.code or 0
        print(error.code, file=sys.stderr)
        return 1
    sys.excepthook(type(error), error, error.__traceback__)
    return 1


def _end(code: int) -> NoReturn:
    """End the ``irscale`` command with status ``code`` as the interpreter ends a program,
    up to its exit functions: the non-daemon threads are joined, Python's exit functions
    run (worker pools and temporary folders are cleaned up) and stdout and stderr are
    flushed; but not the exit of the C++ libraries, whose threads can still be running
    (after an interrupt, or an error while pyarrow or numba's TBB pool are at work) and
    abort the process ("terminate called without an active exception", SIGABRT)."""
    written = _flush_std()
    shutdown = getattr(sys.modules.get("threading"), "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    written = _flush_std() and written
    os._exit(code & 0xFF if written else 120)


def _flush_std() -> bool:
    """Flush stdout and stderr; one whose reader has left (a closed pipe) gets devnull in
    its place, as :func:`_readers_may_leave` gives it. False when stdout could not be
    written otherwise (a full disk), which is said on stderr: the interpreter's exit
    status 120 then."""
    written = True
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except BrokenPipeError:
            _devnull_onto(stream)
        except ValueError:                # closed
            pass
        except OSError as e:
            if stream is sys.stdout:
                written = False
                with contextlib.suppress(OSError):
                    os.write(2, f"irscale: error: cannot write stdout: {e.strerror or e}\n".encode())
    return written


def _devnull_onto(stream: object) -> bool:
    """Put devnull in place of the file descriptor of ``stream`` (Python's recipe for a
    reader of stdout that left, docs.python.org, "Note on SIGPIPE") and flush what the
    stream still holds into it; whether it could."""
    try:
        fd = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (AttributeError, OSError, ValueError):
        return False
    try:
        os.dup2(null, fd)
    except OSError:
        return False
    finally:
        os.close(null)
    try:
        stream.flush()
    except (OSError, ValueError):
        pass
    return True


def _reader_left(stream: object) -> bool:
    """Whether ``stream`` writes to a pipe (or socket) whose reader has left."""
    try:
        fd = stream.fileno()
        poll = select.poll()
    except (AttributeError, OSError, ValueError):   # no descriptor, or no poll (Windows)
        return False
    poll.register(fd, select.POLLOUT)
    try:
        events = poll.poll(0)
    except OSError:
        return False
    return any(mask & (select.POLLERR | select.POLLHUP) for _, mask in events)


def _quiet_closed_outputs() -> bool:
    """Whether stdout or stderr lost its reader: devnull is put in the place of each that
    did (:func:`_devnull_onto`)."""
    closed = [stream for stream in (sys.stdout, sys.stderr) if stream is not None and _reader_left(stream)]
    for stream in closed:
        _devnull_onto(stream)
    return bool(closed)


class _ReaderMayLeave(io.FileIO):
    """The file descriptor of stdout or stderr written as :class:`io.FileIO` writes it, but
    when the reader of its pipe has left (EPIPE), devnull takes its place and the write
    goes on into it: the command does not stop (the files it writes are written) and says
    nothing."""

    def write(self, data: bytes) -> int | None:
        try:
            return super().write(data)
        except BrokenPipeError:
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, self.fileno())
            finally:
                os.close(null)
            return super().write(data)


def _readers_may_leave() -> None:
    """Make ``sys.stdout`` and ``sys.stderr`` streams that go on when their reader leaves
    (:class:`_ReaderMayLeave`), as they were otherwise (encoding, errors, buffering);
    streams already replaced, or not over a file descriptor, are kept."""
    if os.name != "posix":
        return
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if (stream is None or stream is not getattr(sys, f"__{name}__") or type(stream) is not io.TextIOWrapper
                or isinstance(getattr(stream.buffer, "raw", stream.buffer), _ReaderMayLeave)):
            continue
        try:
            stream.flush()
            raw = _ReaderMayLeave(stream.fileno(), "w", closefd=False)
        except (OSError, ValueError):
            continue
        buffered = isinstance(stream.buffer, io.BufferedWriter)
        new = io.TextIOWrapper(io.BufferedWriter(raw) if buffered else raw, encoding=stream.encoding,
                               errors=stream.errors, newline="\n", line_buffering=stream.line_buffering,
                               write_through=stream.write_through)
        new.mode = stream.mode
        setattr(sys, name, new)


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
    except (_OutputClosedError, BrokenPipeError) as e:
        if not _quiet_closed_outputs():  # not the reader of stdout or stderr that left: a bug
            error = e.__cause__ if isinstance(e, _OutputClosedError) else e
            raise error.with_traceback(error.__traceback__) from None
        return 0                         # the reader of stdout left (| head -1): nothing went wrong
    except Exception as e:
        if not _cut_short_by_ctrl_c(e):
            raise                        # a bug: its traceback
        click.echo("irscale: interrupted", err=True)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
