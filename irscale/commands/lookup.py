"""``irscale lookup``: unq ranks of raw values from a store.

Values are given as text, and negative numbers (``-1``, ``-0.5``, ``-inf``) are values,
not options: :class:`_ValuesCommand` sets the positional arguments apart before click
parses the options, so options parse wherever they stand and an unknown option is a usage
error.

``--nearest`` takes each value as rounded to the decimals it is written with (trec_eval
prints 4): its tolerance becomes at least half a unit of its last decimal (``0.3333``:
0.00005; ``0.25``: 0.005; ``0.5000``: 0.00005), and it ranks the nearest distinct value
when that is the only one within the tolerance (:meth:`Scale.rank` with ``decimals``).
``--errors skip|zero`` reports rejected values one warning each instead of stopping.
"""
from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal, InvalidOperation
from pathlib import Path

import click

from irscale.commands.options import bounded_options, parse_rbs, warnings_said
from irscale.enumerate.lazy import lazy_module
from irscale.errors import IrscaleError, RecallBaseError, ValueNotInScaleError, warn
from irscale.scales.measures.user_names import read_stored
from irscale.scales.tables import units
from irscale.scales.tables.build_options import MAX_BUILD_SECONDS
from irscale.scales.tables.closed import closed_scale
from irscale.scales.tables.scale import RTOL
from irscale.store.location import default_store
from irscale.store.reader import open_store

bounded_scales = lazy_module("irscale.scales.tables.bounded_scales")   # mpmath: when a bounded scale is used
bounded_plan = lazy_module("irscale.scales.tables.bounded_plan")
preflight = lazy_module("irscale.scales.runs.preflight")


def _outward(x: float, rounding: str) -> str:
    """``x`` to 10 significant digits rounded down (``ROUND_FLOOR``) or up: a printed
    interval still holds what the certified one holds."""
    if x != x or x in (math.inf, -math.inf):
        return f"{x:.10g}"
    d = Context(prec=10, rounding=rounding).create_decimal(x).normalize()
    return f"{d:f}" if -7 <= d.adjusted() < 10 else f"{d:e}"


def _unaffordable(m, rb, store) -> str | None:
    """Why a bounded scale stands in for the exact scale of ``m`` for ``rb`` (None: it does
    not): the store lacks its table, and building it would take over the build limit."""
    try:
        t = m.table_rb(m.check_rb(rb))
    except IrscaleError:
        return None                                     # said by the scale
    if store is not None and store.has(m, t):
        return None
    seconds = preflight.plan_build({m: [t]}, None)[0]
    if seconds > MAX_BUILD_SECONDS:                     # (a quick build is the exact scale's, even with --bounded)
        return f"its table is not in the store, and building it would take about {units.duration(seconds)}"
    return None


def _looks_like_number(arg: str) -> bool:
    """A negative number (or a malformed one, which the value check names), not an option."""
    if arg[1:2].isdigit() or arg[1:2] == ".":
        return True
    try:
        float(arg)
    except ValueError:
        return False
    return True


class _ValuesCommand(click.Command):
    """A command whose positional arguments may start with '-' when they are numbers.

    Before click parses, the options (with the value of each option that takes one) are
    kept in place and every other argument is moved after ``--``, in order; an argument
    starting with '-' is an option unless it reads as a number, so ``--atol 1e-4`` parses,
    ``-1`` is a value and ``--foo`` is reported as an unknown option."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        takes_value = {}
        for p in self.get_params(ctx):
            if isinstance(p, click.Option):
                for name in (*p.opts, *p.secondary_opts):
                    takes_value[name] = not (p.is_flag or p.count)
        options, positional = [], []
        rest = iter(args)
        for arg in rest:
            if arg == "--":
                positional.extend(rest)
            elif len(arg) < 2 or arg[0] != "-" or _looks_like_number(arg):
                positional.append(arg)
            else:
                options.append(arg)
                value = next(rest, None) if "=" not in arg and takes_value.get(arg) else None
                if value is not None:
                    options.append(value)
        return super().parse_args(ctx, [*options, "--", *positional])


def _looks_like_value(text: str) -> bool:
    """Whether a positional argument is a value (a number, nan, inf), which no measure name is."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _decimals(text: str) -> float:
    """Decimals a number is written with (``0.3333`` 4, ``0.5000`` 4, ``1.5e-3`` 4, ``12``
    0, ``1e5`` -5); NaN for infinities and NaN."""
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except (InvalidOperation, ValueError):
        return math.nan
    return -exponent if isinstance(exponent, int) else math.nan


def _tolerance(value: float | None, name: str) -> float | None:
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"must be a finite number >= 0, got {value!r}", param_hint=name)
    return value


@click.command("lookup", cls=_ValuesCommand)
@click.argument("path", type=click.Path())
@click.argument("measure", required=False)
@click.argument("values", nargs=-1)
@click.option("--rb", "rb_text", help="Recall base of the topic (RB-dependent measures): an integer, or for graded "
                                      "measures the per-grade counts like '(3,2)'.")
@click.option("--atol", type=float, default=None,
              help="Absolute tolerance of each value (default: the table's certified float error bound).")
@click.option("--rtol", type=float, default=None, help="Relative tolerance of each value (default: 64 ulps).")
@click.option("--nearest", is_flag=True,
              help="Values are rounded to the decimals they are written with (trec_eval prints 4): rank the "
                   "nearest distinct value when it is the only one within half a unit of the last decimal (or "
                   "--atol, if larger); prints the distinct value matched in a column 'matched'.")
@click.option("--errors", type=click.Choice(["raise", "skip", "zero"]), default="raise", show_default=True,
              help="A value that is not a number, NaN, not a value of the measure or ambiguous: stop with an error "
                   "(raise), or warn and leave its row out (skip) or print it with rank 0 (zero).")
@bounded_options
def command(path: str, measure: str | None, values: tuple[str, ...], rb_text: str | None, atol: float | None,
            rtol: float | None, nearest: bool, errors: str, bounded: bool | None,
            bound_error: float | None) -> None:
    """Print the unq rank of each raw VALUE of MEASURE, from the tables in PATH (P, R,
    F1, RR and Rprec need none: their scales are closed forms, PATH may not exist; nor do
    bounded scales, past N = 40, where they fit the build limit or with --bounded: their
    columns scaled_lo and scaled_hi hold the exact scaled value, rank and scaled are the
    midpoints). Without PATH (``irscale lookup
    MEASURE VALUE...``: a measure is never a number) the default store every command
    uses ($IRSCALE_STORE, else ~/.cache/irscale/tables)."""
    if measure is None:
        raise click.UsageError("give the measure and the values to look up: irscale lookup [STORE] MEASURE VALUE...")
    if _looks_like_value(measure):                     # no PATH: MEASURE VALUE..., the default store
        path, measure, values = str(default_store()), path, (measure, *values)
    if not values:
        raise click.UsageError("give the values to look up: irscale lookup [STORE] MEASURE VALUE...")
    rb = None
    if rb_text is not None:
        parsed = parse_rbs(rb_text)
        if parsed == "all" or len(parsed) != 1:
            raise click.BadParameter(f"give one recall base, got {rb_text!r}", param_hint="--rb")
        rb = parsed[0]
    atol, rtol = _tolerance(atol, "--atol"), _tolerance(rtol, "--rtol")
    nums, problems = [], {}
    for i, v in enumerate(values):
        try:
            nums.append(float(v))
        except ValueError:
            problems[i] = f"{v!r} is not a number"
            nums.append(math.nan)
    store = open_store(path) if Path(path).exists() else None
    with warnings_said():
        m = read_stored(measure, [] if store is None else [t["measure"] for t in store.tables()], rb)
    auto = bounded is None and bound_error is None
    stand_in = (None if bounded is False or m.bounded_only or not m.bounded_scales or m.closed_form() is not None
                else _unaffordable(m, rb, store))
    shown = bounded is True or bound_error is not None or (auto and (m.bounded_only or stand_in is not None))
    bounded = bounded is not False and (m.bounded_only or stand_in is not None)
    if bounded and nearest:
        raise click.UsageError("--nearest matches distinct values, which bounded scales do not list; without it, "
                               "scaled_lo..scaled_hi holds the scaled value of every value within the tolerance "
                               "(--atol)")
    if not bounded:
        m.check_scales()                                # no exact scale: why, and --bounded where it helps
    if store is None and m.closed_form() is None and not bounded:
        open_store(path)                                # its error: no such file
    if bounded:
        provider = bounded_scales.BoundedScales(store, bound_error)     # a store's grids when it has them
        if stand_in is not None:
            provider.stand_in(m, [rb])
            with warnings_said():
                warn(f"{m}: a bounded scale stands in for the exact one ({stand_in}; docs/bounded.md)")
        if auto:                                        # within the build limit, planned before it starts
            plan = bounded_plan.plan_bounded(provider, {m: [rb]}, MAX_BUILD_SECONDS)[m]
            if plan.error is None:
                why = stand_in or f"no exact scale exists at N = {m.n}"
                raise IrscaleError(f"{m}: {why}, and {plan.reason} (limit {MAX_BUILD_SECONDS:.0f} s); --bounded "
                                   f"--error E computes it whatever it takes")
            if plan.wider(str(m)) is not None:
                with warnings_said():
                    warn(plan.wider(str(m)))
        scale = provider.scale(m, rb)
        if scale is None:
            raise RecallBaseError(next(iter(provider.refused.values())))
    else:
        scale = closed_scale(m, rb) if store is None else store.scale(m, rb)
    found = scale.lookup(nums, rtol=RTOL if rtol is None else rtol, atol=atol,
                         decimals=[_decimals(v) for v in values] if nearest else None)
    problems = {**found.messages, **problems}
    if not nearest:                    # a value as trec_eval prints it (0.3333) is rounded: say how to rank it
        for i in problems:
            if i not in found.messages or "ambiguous" in problems[i] or not 0 < _decimals(values[i]) < 16:
                continue
            problems[i] += (f"; if it is rounded to the {int(_decimals(values[i]))} decimals it is written with (as "
                            f"trec_eval prints values), add --nearest to rank the nearest value")
    if errors == "raise" and problems:
        raise ValueNotInScaleError(problems[min(problems)])
    ranks, scaled = found.ranks, scale.scaled(found.ranks)
    if shown:                             # exact scales: the interval is the value itself
        lo, hi = (scale.scaled_bounds(nums, rtol=RTOL if rtol is None else rtol, atol=atol,
                                      decimals=[_decimals(v) for v in values] if nearest else None)
                  if bounded else (scaled, scaled))
        if not scale.k_exact:             # K bracketed (several bound grades): the interval's midpoint
            scaled = (lo + hi) / 2
    k_shown = scale.k if scale.k_exact else "{}..{}".format(*scale.k_bounds)
    click.echo("value\trank\tk\tscaled" + ("\tscaled_lo\tscaled_hi" if shown else "")
               + ("\tmatched" if nearest else ""))
    for i, v in enumerate(values):
        if i in problems:
            click.echo(f"irscale: warning: {problems[i]}; {'row left out' if errors == 'skip' else 'rank 0'}",
                       err=True)
            if errors == "skip":
                continue
            row = f"{v}\t0\t{k_shown}\t-" + ("\t-\t-" if shown else "") + ("\t-" if nearest else "")
        else:
            matched = f"\t{float(found.matched[i])!r}" if nearest else ""
            bounds = f"\t{_outward(lo[i], ROUND_FLOOR)}\t{_outward(hi[i], ROUND_CEILING)}" if shown else ""
            row = f"{v}\t{ranks[i]}\t{k_shown}\t{scaled[i]:.10g}{bounds}{matched}"
        click.echo(row)
    if nearest:
        moved = sum(1 for i, x in enumerate(nums) if i not in problems and float(found.matched[i]) != x)
        if moved:
            what = f"{scale.measure}" + ("" if scale.rb is None else f" with rb={scale.rb}")
            click.echo(f"irscale: {moved} of {len(values)} values matched to the nearest value of {what} within "
                       f"tolerance (column matched)", err=True)
