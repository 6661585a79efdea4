"""The table layouts, by name: how a measure's tables are built, written and read.

A measure names its layout (:attr:`irscale.scales.measures.measure.Measure.layout`); a
stored table records it (attr ``layout``; stores written before this attribute existed
hold ``entries`` tables, or ``implicit`` ones with attr ``implicit``). Each layout is one
module of this package with a ``LAYOUT`` object that has:

``name``
    the layout's name;
``build(measures, rbs, options)``
    the tables of the measures (``rbs[measure]``: the table recall bases wanted), as an
    iterator of :class:`~irscale.scales.tables.scale.Table`;
``write(table, sink)``
    the table's datasets and attributes, through a sink with
    ``dataset(name, dtype, shape, pieces)`` (written piece by piece), ``array(name, data)``
    (written whole) and ``attrs(**attrs)``; the store's checksum covers every dataset and
    attribute (:mod:`irscale.store.format`);
``read(source, **common)``
    the table from a source with ``attrs``, ``has(name)``, ``mapped(name)`` (memory-mapped
    for random access) and ``read(name)``; ``common`` holds the fields every table has;
``validate(table, source, deep)``
    raise :class:`~irscale.errors.CorruptStoreError` (the problem in a few words; the
    reader names the table) unless the table read is sound: structural checks that read
    O(1) or O(index) when ``deep`` is false, the whole table when it is true;
    ``source.scan(name)`` maps a dataset for one sequential pass;
``checksummed``
    the datasets the checksum of a format-3 table covers, in order;
``lazy``
    the datasets a reader need not verify when it opens a big table (lookups check what
    they read: :class:`~irscale.scales.tables.entry_scale.BlockGuard`);
``max_runs``
    the largest run space it builds a table from (None: no limit but memory and disk);
``seconds_per_run``, ``seconds_per_entry``
    core-seconds a build spends per run of the space and per table entry (estimates,
    :mod:`irscale.scales.tables.estimate`).

Adding a layout is adding its module and one line here.
"""
from __future__ import annotations

from irscale.errors import MeasureError, StoreError
from irscale.scales.measures.measure import MAX_N, Measure
from irscale.scales.tables import bounded_layout, entries, formal, fraction, implicit, oracles
from irscale.scales.tables.build_options import LAYOUT_CHOICES

LAYOUTS = {layout.name: layout for layout in (entries.LAYOUT, implicit.LAYOUT, fraction.LAYOUT, formal.LAYOUT,
                                              oracles.LAYOUT, bounded_layout.LAYOUT)}


Layout = (entries.EntriesLayout | implicit.ImplicitLayout | fraction.FractionLayout | formal.FormalLayout
          | oracles.OracleLayout | bounded_layout.BoundedLayout)


def layout_of(measure: Measure, choice: str = "auto", method: str = "auto") -> Layout:
    """The layout of a measure's scales: ``"auto"`` its default (its table when an
    enumeration ``method`` other than ``"auto"`` is named), ``"table"`` its table layout,
    ``"oracle"`` its rank oracle (raises :class:`~irscale.errors.MeasureError` saying why
    when the measure has no such layout)."""
    if choice not in LAYOUT_CHOICES:
        raise MeasureError(f"layout must be one of {', '.join(LAYOUT_CHOICES)}, got {choice!r}")
    layouts = tuple(name for name in measure.layouts if name != "closed")
    if not layouts:
        raise MeasureError(f"{measure} needs no table: its scale is a closed form, exact at any N, which every "
                           f"lookup and transform uses without a store")
    if choice == "auto" and method != "auto" and any(name != "oracle" for name in layouts):
        choice = "table"
    if choice == "auto":
        return LAYOUTS[layouts[0]]
    if choice == "oracle":
        if "oracle" not in layouts:
            raise MeasureError(f"{measure} has no rank oracle: {measure.oracle_reason()}")
        if method != "auto":
            raise MeasureError(f"{measure}: --method {method} chooses how tables are enumerated; a rank oracle "
                               f"enumerates nothing (leave --method out, or build tables: --layout table)")
        return LAYOUTS["oracle"]
    tables = [name for name in layouts if name != "oracle"]
    if not tables:
        raise MeasureError(f"{measure} has no table: tables exist up to N = {MAX_N}; its rank oracle serves it")
    return LAYOUTS[tables[0]]


def stored_layout(attrs: dict) -> Layout:
    """The layout of a stored table, from its attributes."""
    name = attrs.get("layout") or ("implicit" if attrs.get("implicit") else "entries")
    layout = LAYOUTS.get(name)
    if layout is None:
        raise StoreError(f"table {attrs.get('measure')} has layout {name!r}, which this irscale does not know; "
                         f"upgrade irscale")
    return layout


def scale_kind(measure: Measure, width: float | None = None) -> str | None:
    """What a measure's scale is, as outputs say it: ``"exact: closed form"`` (P, R, F1,
    RR, Rprec: :mod:`irscale.scales.tables.closed`), ``"exact: rank oracle"``,
    ``"exact: table"``; with ``width`` (the widest scaled interval of scores that used
    bounded scales) ``"bounded: scaled within 9.2e-04"`` for a measure whose bounded scale
    stands in for an exact one; None when it has no scale (:meth:`Measure.scales_reason`
    says why)."""
    if not measure.has_scales:
        return f"bounded: scaled within {width:.1e}" if width is not None and measure.bounded_scales else None
    if measure.closed_form() is not None:
        return "exact: closed form"
    return "exact: rank oracle" if measure.layout == "oracle" else "exact: table"


def describe_scales(measures: list[Measure], widths: dict[Measure, float] | None = None,
                    known: dict[str, str] | None = None) -> str:
    """One phrase naming the kind of scale of each measure that has one, grouped by kind
    (``exact: closed form for P@1000, RR@1000; exact: table for AP@10``); ``widths``: the
    widest scaled interval of each measure scaled by a bounded scale; ``known``: the kind of
    a measure by name where it is not one (rank oracles and tables, ``scale_kinds`` of
    :func:`irscale.transform`'s scores)."""
    kinds: dict[str, list[str]] = {}
    widths, known = widths or {}, known or {}
    widest = max((w for m, w in widths.items() if scale_kind(m) is None), default=None)
    for m in measures:                          # bounded scales: one phrase, their widest interval
        kind = known.get(str(m))
        kind = (with_width(kind, widths.get(m)) if kind is not None else  # bounded scales standing in for exact ones
                scale_kind(m) or scale_kind(m, widest if m in widths else None))
        if kind is not None:
            kinds.setdefault(kind, []).append(str(m))
    return "; ".join(f"{kind} for {', '.join(names)}" for kind, names in kinds.items())


def with_width(kind: str, width: float | None) -> str:
    """``kind`` (``bounded (3 of 5 count vectors) and exact: table (2)``) with the widest
    scaled interval of its bounded scales, where it has them and ``width`` is known."""
    if not kind.startswith("bounded") or width is None or width != width:
        return kind
    return f"bounded: scaled within {width:.1e}{kind.removeprefix('bounded')}"


def kind_of_scale(scale: object) -> str:
    """What answered a lookup, as outputs say it (see :func:`scale_kind`): the layout of
    the scale's table (its ``kind``; a bounded scale's with its width)."""
    kind = getattr(getattr(scale, "table", None), "kind", "exact: table")
    return f"{kind}: scaled values within {scale.error_bound:.1e}" if kind == "bounded" else kind
