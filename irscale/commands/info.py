"""``irscale info``: the tables of a store, their metadata and tie certificates.

The text output is meant to be read: columns named in words, a legend under the table
that explains every tie method it shows and what the smallest gap and the float error
bound are, and a note on what the distinct values of recall-base-dependent measures
count. ``--json`` gives the same metadata with lists and objects as JSON values (the
store keeps some of them as JSON text), ``--verify`` a verdict per table.
"""
from __future__ import annotations

import json
import math
import re
import shlex
import textwrap

import click

from irscale.errors import StoreError
from irscale.store.format import TableInfo
from irscale.store.location import default_store
from irscale.store.reader import Store, open_store

#: What each tie method of a certificate means (``formal-log+mpmathD`` for any D digits:
#: :func:`tie_method_text`).
TIE_METHODS = {
    "exact-integer":
        "exact integer keys whose order is the value order (value = key times a positive constant, or "
        "RR's rank key): ties and order decided in integer arithmetic, no rounding.",
    "exact-integer+float-order":
        "exact integer keys too large for float64: values enumerated as float sums with a proven error "
        "bound, and neighbours closer than twice that bound tied or ordered by their exact integer keys.",
    "exact-integer+implicit-lexicographic":
        "every run has a value of its own and value order is the lexicographic order of the runs (proven "
        "from the measure's weights): the table is the identity and stores no entries.",
    "oracle:exact-integer":
        "a rank oracle: no table is stored; ranks are counted on demand over the measure's groups of ranks "
        "(one distinct value per tuple of group options), pairs within the float error of a query decided "
        "with exact integer keys.",
    "exact-fraction":
        "each run's value computed as an exact fraction (integer numerator and denominator): ties and "
        "order decided in exact rational arithmetic.",
}
_FORMAL_LOG = re.compile(r"formal-log\+mpmath(\d+)")
_ORACLE_LOG = re.compile(r"oracle:formal-log\+mpmath(\d+)")

#: The column headers of the text table, in order.
HEADER = ["table", "runs", "distinct values", "stored entries", "how ties were decided", "float error bound",
          "smallest gap", "build s"]
_RIGHT = {"runs", "distinct values", "stored entries", "float error bound", "build s"}

#: Longest exact fraction shown next to the smallest gap (longer ones: --json, min_gap_exact).
_SHORT_FRACTION = 16
_WIDTH = 100


def tie_method_text(method: str) -> str:
    """What the tie method ``method`` of a table certificate means, in a sentence or two."""
    if method in TIE_METHODS:
        return TIE_METHODS[method]
    if method == "bounded:grid-dp":
        return ("a bounded scale: no values are listed; dynamic programmes over the measure's groups of ranks "
                "count the tuples of group sums below a value on a grid of cells, with certified rounding errors, "
                "and give an interval "
                "that holds the exact unq rank (the grids and their error bounds are listed below; docs/bounded.md).")
    match = _ORACLE_LOG.fullmatch(method)
    if match:
        return ("a rank oracle: no table is stored; ranks are counted on demand over the measure's groups of ranks, "
                "one distinct value per tuple of group sums as long as 1 and the logarithm ratios are linearly "
                "independent over the rationals (assumed, as the tables do; tables check every pair of neighbouring "
                "values, an oracle the pairs near each query); pairs within the float error of a query are decided "
                f"by their exact keys and mpmath at {match.group(1)} digits.")
    match = _FORMAL_LOG.fullmatch(method)
    if match:
        return (f"values are rational combinations of fixed logarithms (DCG discounts, OIE, ...): equal "
                f"exact integer coefficient keys are equal values, which decides ties; order by float64, "
                f"with neighbours closer than twice the proven float error re-decided with mpmath at "
                f"{match.group(1)} digits.")
    return "not described by this version of irscale."


def _json_value(value: object) -> object:
    """An attribute as a JSON value: JSON text of a list or an object decoded (the store
    keeps params, rel, distinct_by_rb, coords, ... as JSON text), tuples as lists,
    non-finite floats as null."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _gap(table: TableInfo) -> str:
    gap, exact = table.min_gap, table.min_gap_exact
    if table.layout in ("oracle", "bounded"):
        return "not enumerated"
    if not math.isfinite(gap):
        return "none (1 value)"
    text = f"{gap:.3g}"
    if re.fullmatch(r"\d+(/\d+)?", exact) and len(exact) <= _SHORT_FRACTION:
        text += f" = {exact}"
    return text


def _row(t: TableInfo) -> list[str]:
    ties = t.tie_method + (f", {t.redecided} re-decided" if t.redecided else "")
    seconds = t.build_seconds
    bracketed = t.layout == "bounded" and not t.attrs.get("k_exact", True)     # K+: at most this many
    return [t.name, str(t.n_runs), f"<= {t.n_distinct}" if bracketed else str(t.n_distinct),
            f"0 ({t.layout})" if t.layout in ("oracle", "bounded") else
            str(t.n_entries) + (" (implicit)" if t.implicit else ""),
            ties, f"{t.error_bound:.2g}", _gap(t), "-" if seconds is None else f"{seconds:.1f}"]


def _wrapped(label: str, text: str, indent: int) -> list[str]:
    """``label`` (padded to ``indent`` columns) and ``text``, wrapped at :data:`_WIDTH`
    with continuation lines indented by ``indent``."""
    head = label.ljust(indent) if len(label) < indent else label + " "
    return textwrap.wrap(head + text, _WIDTH, subsequent_indent=" " * indent, break_on_hyphens=False,
                         break_long_words=False)


def _legend(tables: list[TableInfo], by_rb: bool) -> list[str]:
    """The lines under the table: what the columns mean and every tie method shown."""
    out = []
    union = [t.name for t in tables if t.attrs.get("rb_dependent") and t.distinct_by_rb]
    if union:
        out += _wrapped("distinct values:", f"for {', '.join(union)} (they depend on the recall base) over all "
                        f"runs, as for a topic whose recall base is N or more; the scale of a topic with a "
                        f"smaller recall base rb has fewer (the values of runs with at most rb relevant "
                        f"documents): "
                        + ("listed below." if by_rb else "see --by-rb."), 2)
    if any(t.rb_counts is not None for t in tables):
        out += _wrapped("rb=(c_1,...):", "the table of topics with these per-grade counts of relevant "
                        "documents: its runs and values are those feasible for them.", 2)
    if any(t.implicit for t in tables):
        out += _wrapped("stored entries:", "(implicit): none stored, entry i is run i.", 2)
    out += _wrapped("float error bound:", "proven bound on |float64 value - exact value| of every value.", 2)
    out += _wrapped("smallest gap:", "exact difference between the two closest neighbouring distinct values "
                    "(= the exact fraction when short). Where it exceeds twice the error bound, float values "
                    "keep neighbours apart; where not, look runs up rather than values.", 2)
    methods = list(dict.fromkeys(t.tie_method for t in tables))
    out.append("how ties were decided:")
    indent = 2 + max(len(m) for m in methods) + 2
    for m in methods:
        out += _wrapped(f"  {m}", tie_method_text(m), indent)
    for t in tables:
        if t.layout == "bounded":
            grids = json.loads(t.attrs.get("grids", "[]"))
            out += _wrapped(f"grids of {t.name}:", "; ".join(
                f"rb={'all' if g['rb'] is None else g['rb']}: {g['cells']:,} cells, scaled within "
                f"{g['error_bound']:.2g}" for g in grids) + ".", 2)
    if any(t.redecided for t in tables):
        out += _wrapped("  N re-decided:", "N clusters of neighbouring values too close to order in float64 "
                        "were ordered in high precision.", 4)
    return out


def _by_rb_lines(tables: list[TableInfo]) -> list[str]:
    rows = [(t.name, list(t.distinct_by_rb)) for t in tables if t.distinct_by_rb]
    if not rows:
        return _wrapped("distinct values per recall base:", "none in this file (tables of measures that depend "
                        "on the recall base and serve every rb at once have them).", 2)
    out = _wrapped("distinct values per recall base:", "a topic with recall base rb has this many values "
                   "on its scale (the k of 'irscale lookup'; rb > N counts as rb = N):", 2)
    indent = 2 + max(len(name) for name, _ in rows) + 2
    for name, counts in rows:
        items = [f"rb={r}: {c}" for r, c in enumerate(counts, start=1)]
        line, first = f"  {name}".ljust(indent), True
        for item in items:
            piece = item if first else ", " + item
            if not first and len(line) + len(piece) > _WIDTH:
                out.append(line + ",")
                line, piece = " " * indent, item
            line += piece
            first = False
        out.append(line)
    return out


def _verify(store: Store) -> tuple[list[str], list[tuple[str, str]], list[str]]:
    """(tables that passed, (table, problem) of those that failed, lines to print: a
    verdict per table in the order of the listing, then a summary)."""
    ok, bad = [], []
    lines = ["checksums and consistency (every table read whole):"]
    for name, problem in store.verify_each():
        if problem is None:
            ok.append(name)
            lines.append(f"  ok       {name}")
        else:
            bad.append((name, problem))
            damaged = "upgrade irscale" not in problem     # else a table this version cannot read
            lines.append(f"  {'CORRUPT' if damaged else 'FAILED '}  {name}: {problem}")
    total = len(ok) + len(bad)
    if bad:
        lines.append(f"{len(bad)} of {total} tables failed verification: " + ", ".join(n for n, _ in bad))
    else:
        lines.append(f"all {total} tables ok")
    return ok, bad, lines


def _rebuild_commands(path: str, store: Store, bad: list[str]) -> str:
    """The ``irscale build --rebuild`` commands that rebuild the tables ``bad``."""
    meta = {t.name: t for t in store.tables(skip_damaged=True)}
    plain: list[str] = []
    vectors: dict[str, list[str]] = {}
    for n in bad:
        if n in meta:
            measure, counts = meta[n].measure, meta[n].rb_counts
            vec = None if counts is None else "(" + ",".join(map(str, counts)) + ")"
        else:               # not listed (incomplete): its name says what it is
            measure, _, vec = n.partition(" rb=")
        if vec:
            vectors.setdefault(measure, []).append(vec)
        elif measure not in plain:
            plain.append(measure)
    out = shlex.quote(str(path))
    cmds = [f'irscale build --measures "{",".join(plain)}" --rebuild --out {out}'] if plain else []
    cmds += [f'irscale build --measures "{m}" --rb "{",".join(v)}" --rebuild --out {out}' for m, v in vectors.items()]
    return "; ".join(cmds)


@click.command("info")
@click.argument("path", type=click.Path(), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print metadata as JSON.")
@click.option("--by-rb", "by_rb", is_flag=True, help="Also list distinct values per recall base.")
@click.option("--verify", is_flag=True, help="Recompute every table's checksum and check its consistency (reads "
                                             "whole tables) and print a verdict per table; exit status 2 when one "
                                             "fails.")
def command(path: str | None, as_json: bool, by_rb: bool, verify: bool) -> None:
    """List the tables in PATH with their metadata and tie certificates (without PATH: the
    default store every command uses, $IRSCALE_STORE, else ~/.cache/irscale/tables)."""
    if path is None:
        path = str(default_store())
    store = open_store(path)
    tables = store.tables(skip_damaged=verify)    # --verify reports tables whose metadata are damaged
    bad: list[tuple[str, str]] = []
    if as_json:
        doc = {"file": {k: _json_value(v) for k, v in store.attrs.items()},
               "tables": [t.to_json() for t in tables]}
        if verify:
            ok, bad, _ = _verify(store)
            doc["verify"] = {"ok": ok, "failed": dict(bad)}
        click.echo(json.dumps(doc, indent=2, default=str, allow_nan=False))
    else:
        a = store.attrs
        click.echo(f"{path}: {a.get('format')} v{a.get('format_version')}, written by irscale "
                   f"{a.get('generator_version')} on {a.get('created')}; {len(tables)} tables")
        if tables:
            rows = [_row(t) for t in tables]
            widths = [max(len(r[i]) for r in rows + [HEADER]) for i in range(len(HEADER))]
            for r in [HEADER] + rows:
                cells = [c.rjust(w) if h in _RIGHT else c.ljust(w) for c, w, h in zip(r, widths, HEADER)]
                click.echo("  ".join(cells).rstrip())
            click.echo("")
            for line in _legend(tables, by_rb):
                click.echo(line)
        if by_rb:
            click.echo("")
            for line in _by_rb_lines(tables):
                click.echo(line)
        if verify:
            click.echo("")
            ok, bad, lines = _verify(store)
            for line in lines:
                click.echo(line)
    if bad:
        names = [n for n, _ in bad]
        raise StoreError(f"{path}: {len(bad)} of {len(ok) + len(bad)} tables failed verification ({', '.join(names)}); "
                         f"rebuild with: {_rebuild_commands(path, store, names)}")
