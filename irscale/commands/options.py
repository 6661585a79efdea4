"""What several subcommands share: parsing ``--rb``, options taking many values, measure
names from ``--measures``/``--preset``, printing warnings and tables."""
from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Literal

import click

from irscale.enumerate.jobs import available_cores
from irscale.presets import preset_measures
from irscale.scales.measures.parse import split_measures

if TYPE_CHECKING:
    from click.parser import _OptionParser


def parse_rbs(text: str) -> Literal["all"] | list[int] | list[tuple[int, ...]]:
    """'all', a list of recall bases ``1,5,10``, or per-grade count vectors ``(3,2),(0,4)``."""
    if text.strip().lower() == "all":
        return "all"
    if "(" in text:
        groups = re.findall(r"\(([^()]*)\)", text)
        rest = re.sub(r"\(([^()]*)\)", "", text).replace(",", "").replace(";", "").strip()
        try:
            vectors = [tuple(int(x) for x in g.split(",") if x.strip()) for g in groups]
        except ValueError:
            vectors = []
        if rest or not vectors or any(not v or min(v) < 0 or sum(v) < 1 for v in vectors):
            raise click.BadParameter(f"expected per-grade counts like (3,2) or (3,2),(0,5): non-negative integers, "
                                     f"at least one positive per vector; got {text!r}")
        return vectors
    try:
        rbs = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise click.BadParameter(f"expected 'all', a comma-separated list of integers, or per-grade counts like "
                                 f"(3,2), got {text!r}") from None
    if not rbs or any(r < 1 for r in rbs):
        raise click.BadParameter(f"recall bases must be integers >= 1, got {text!r}")
    return rbs


class ManyValues(click.Option):
    """An option taking every following argument up to the next option
    (``--runs a.gz b.gz c.gz``), as well as repeated use (``--runs a.gz --runs b.gz``)."""

    def add_to_parser(self, parser: _OptionParser, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        for name in self.opts:
            opt = parser._long_opt.get(name) or parser._short_opt.get(name)
            if opt is None:
                continue
            original = opt.process

            def process(value, state, original=original):
                values = [value]
                while state.rargs and not state.rargs[0].startswith("-"):
                    values.append(state.rargs.pop(0))
                for v in values:
                    original(v, state)

            opt.process = process


def measure_names(measures: str | None, preset: str | None, depth: int | None) -> list[str]:
    """Measure names from --measures and/or --preset/--depth."""
    names = []
    if preset:
        if depth is None:
            raise click.UsageError("--preset needs --depth N")
        names += preset_measures(preset, depth)
    elif depth is not None:
        raise click.UsageError("--depth goes with --preset")
    if measures:
        names += split_measures(measures)
    if not names:
        raise click.UsageError("give --measures or --preset")
    return names


def jobs_option(what: str = "Parallel workers") -> Callable:
    """The ``--jobs``/``-j`` option (``what`` it counts starts its help): an integer, -1 for
    all cores (joblib's count), or by default None, which :func:`check_jobs` turns into the
    number of cores this process may use (:func:`~irscale.enumerate.jobs.available_cores`,
    shown in the help)."""
    return click.option("--jobs", "-j", default=None, type=int, metavar="N",
                        help=f"{what} (joblib; -1: all cores). Default: the cores this process may use "
                             f"({available_cores()} here).")


def bounded_options(command: Callable) -> Callable:
    """``--bounded`` and ``--error`` (transform, compare): bounded scales of RBP, DCG, nDCG
    and nDCG_trec past N = 40 (and below, where exact ones are not affordable), and the
    widest scaled interval they may have."""
    command = click.option("--error", "bound_error", default=None,
                           type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
                           help="Widest scaled interval of a bounded scale (default 1e-4; implies --bounded); "
                                "narrower takes longer.")(command)
    return click.option("--bounded/--no-bounded", default=None,
                        help="RBP, DCG, nDCG and nDCG_trec past N = 40, where no exact scale exists (and below, "
                             "where tables are too costly and no oracle counts), have bounded scales: certified "
                             "intervals of the scaled values (scores files: columns scaled_lo, "
                             "scaled_hi; rank and scaled their midpoints; no store needed). By default they are "
                             "taken where they fit the build limit, within 1e-4, 1e-3 or 1e-2 (planned before "
                             "they start); --bounded: always, to --error, whatever it takes; --no-bounded: never "
                             "(docs/bounded.md).")(command)


def check_jobs(jobs: int | None) -> int:
    """The workers ``--jobs`` asks for: its value, checked (a positive number or -1), or
    without it the cores this process may use."""
    if jobs is None:
        return available_cores()
    if jobs == 0 or jobs < -1:
        raise click.BadParameter("--jobs must be a positive number or -1", param_hint="--jobs")
    return jobs


#: Warnings Python keeps quiet by default (meant for developers, not for users of a
#: command): they stay quiet when a command shows every other warning.
DEVELOPER_WARNINGS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def show_every_warning() -> None:
    """Within ``warnings.catch_warnings()``: every warning is shown (each time it is given),
    but those Python keeps quiet by default (:data:`DEVELOPER_WARNINGS`: an unclosed file
    of an import cut short by Ctrl-C, a library's deprecation)."""
    warnings.simplefilter("always")
    for category in DEVELOPER_WARNINGS:
        warnings.simplefilter("ignore", category)


def print_warnings(caught: Iterable[warnings.WarningMessage]) -> None:
    for w in caught:
        click.echo(f"irscale: warning: {w.message}", err=True)


@contextlib.contextmanager
def warnings_said(quiet: bool = False) -> Iterator[None]:
    """Print every warning as ``irscale: warning: ...`` on stderr the moment it is given
    (a warning about the inputs comes before minutes of work, not after), each text once;
    ``quiet``: print none."""
    said: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message)
        if not quiet and text not in said:
            said.add(text)
            click.echo(f"irscale: warning: {text}", err=True)

    with warnings.catch_warnings():
        show_every_warning()
        warnings.showwarning = show
        yield


def cell(v: str | int | float | bool | None) -> str:
    return "-" if v is None else "yes" if v is True else "no" if v is False else str(v)


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    for row in [header] + rows:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())


def say_scales(scales: dict[str, str], conventions: str | None) -> None:
    """``--explain``: the conventions, then per measure what its scale is and why, on stderr."""
    if conventions:
        click.echo(f"irscale: {conventions}", err=True)
    for name, what in scales.items():
        click.echo(f"irscale: scale of {name}: {what}", err=True)
