"""Measure names as users type them, in every entry point (transform, compare, build,
lookup, the service, ``Scaled``): ir_measures' and trec_eval's names mean what they mean
there, irscale's own names (``nDCG(b=2)@10``, ``RBP(p=0.8)@10``) stay irscale's. The
readers of each tool's names are :mod:`irscale.scales.measures.aliases`.

:func:`parse_user_measures` reads the names given with the data at hand (the qrels'
highest level, the runs' depth). ``names`` says whose meaning wins where irscale and
ir_measures read a text differently; a prefix ``irscale:``, ``irm:`` (or
``ir_measures:``) or ``trec:`` (or ``trec_eval:``) chooses for one name. With the default,
``"ir_measures"``:

* a name ir_measures has reads as ir_measures means it (``nDCG@10``: trec_eval's
  ``ndcg_cut_10``, the qrels' levels as gains; ``RR``: the whole run; ``ERR@20``:
  gdeval's); when irscale's own name of the same text is another measure (``ERR@20``), an
  :class:`~irscale.errors.IrscaleWarning` says so once and how to choose (``irscale:ERR@20``);
* trec_eval's names (``P_10``, ``map``, ``ndcg_cut_10``) read as trec_eval's, in every
  vocabulary;
* names only irscale has (``nDCG(b=2)@10``, ``DCG(b=2)@10``, ``Twist@10``) read as
  irscale's, quietly; a name ir_measures means but irscale cannot compute on these
  qrels (graded ``RBP(p=0.8)@10``) reads as irscale's, with a warning;
* a name no vocabulary has raises a MeasureError with the closest names.

With ``names="irscale"`` irscale's meaning wins instead (the ecosystem's reading is named
in a warning, and a name only ir_measures has is refused with both readings);
``"trec_eval"`` reads as the default.

:func:`read_stored` reads a name among the tables of a store (lookups know no qrels),
:func:`user_name` writes the name that reads back as a measure (for suggested commands),
:func:`names_of` lists the names other tools give a measure.
"""
from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Iterable
from typing import Any

from irscale.errors import IrscaleWarning, MeasureError
from irscale.scales.measures.aliases import (
    DEFAULT_NAMES,
    NAMES,
    PREFIXES,
    _check_facts,
    _measure_of,
    _read_ir_measures,
    _read_trec_eval,
    _Reading,
    _text_of,
    from_ir_measures,
    from_trec_eval,
    is_trec_eval_name,
    other_names,
)
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.params import MAX_LEVELS
from irscale.scales.measures.parse import parse_measure, split_measures
from irscale.scales.measures.registry import families


def _describe(reading: _Reading) -> str:
    """What a reading means, in words: the tool's meaning and the irscale measure, or why
    there is none."""
    if reading.measure is None:
        return reading.error
    meaning = f"{reading.other.meaning}: " if reading.other is not None else ""
    return f"{meaning}irscale's {reading.measure}"


def _read_one(item: str, names: str, top_level: int | None, depth: int | None) -> Measure:
    for prefix, vocabulary in PREFIXES.items():
        if item.startswith(prefix):
            text = item[len(prefix):].strip()
            if vocabulary == "irscale":
                return parse_measure(text)
            return (from_ir_measures if vocabulary == "ir_measures" else from_trec_eval)(text, top_level, depth)
    text = item
    if is_trec_eval_name(text):
        return from_trec_eval(text, top_level, depth)
    try:
        mine, mine_error = parse_measure(text), ""
    except MeasureError as e:
        mine, mine_error = None, str(e)
    irm = _read_ir_measures(text, top_level, depth)
    if names != "irscale":                  # the ecosystem's meaning first (the default)
        if irm.measure is not None:
            if mine is not None and mine != irm.measure:
                warnings.warn(f"{text} is read as ir_measures reads it ({_describe(irm)}); irscale's own {text} is "
                              f"another measure, {mine} ({mine.summary}): write irscale:{text} for that one, or "
                              f"irm:{text} to keep this reading without this warning", IrscaleWarning, stacklevel=3)
            return irm.measure
        if mine is not None and not irm.known:
            return mine                     # only irscale has the name
        if mine is not None and irm.fact is None:    # ir_measures means a measure irscale cannot compute here
            warnings.warn(f"{text} is read as irscale's {mine} ({mine.summary}): ir_measures' {text} cannot be "
                          f"computed by irscale here ({irm.error}); write irscale:{text} to say this is meant",
                          IrscaleWarning, stacklevel=3)
            return mine
        if irm.known:
            irm.raise_error()
        raise _unknown(text, mine_error)
    if mine is not None:
        if irm.measure is None and irm.known and top_level is None:
            irm = _read_ir_measures(text, 1, depth)     # the qrels are not known: their binary reading
            binary = " (on binary qrels)"
        else:
            binary = ""
        if irm.measure is None or irm.measure == mine:
            return mine                     # no other reading ir_measures can compute, or the same measure
        warnings.warn(f"{text} is read as irscale's {mine} ({mine.summary}); ir_measures' {text}{binary} is "
                      f"another measure: {_describe(irm)}. Write irm:{text} for ir_measures' meaning (the "
                      f"default), or irscale:{text} to keep irscale's without this warning",
                      IrscaleWarning, stacklevel=3)
        return mine
    if not irm.known:
        raise _unknown(text, mine_error)
    if irm.measure is None and mine_error and mine_error in (irm.error or ""):
        raise MeasureError(mine_error)      # both fail alike
    raise MeasureError(f"{text!r} is an ir_measures name, not an irscale one; the two readings: irscale: {mine_error}; "
                       f"ir_measures: {_describe(irm)}. Choose: irm:{text} for ir_measures' meaning (the default "
                       f"vocabulary), or write the irscale name")


def _base_name(text: str) -> str:
    """The measure name of a text, without parameters and cutoff (``nDGC`` of ``nDGC@10``,
    ``ndcg_cutt`` of ``ndcg_cutt_10``)."""
    base = re.split(r"[(@]", text, maxsplit=1)[0].strip()
    return re.sub(r"[_.]([0-9]+|p=.*)$", "", base) if "@" not in text else base


def _unknown(text: str, mine_error: str) -> MeasureError:
    """The error of a name no vocabulary reads: irscale's own message for a family irscale
    has (a bad parameter, a missing cutoff), else "unknown measure" with the closest names
    of every vocabulary."""
    base = _base_name(text)
    if base in families() or not base:
        return MeasureError(mine_error)
    known = {o.name for _, o in other_names()} | {s for _, o in other_names() for s in o.synonyms} | set(families())
    if "@" in text or "(" in text:            # trec_eval's names take neither
        known -= {o.name for _, o in other_names("trec_eval")} - {o.name for _, o in other_names("ir_measures")}
    synonyms = {s for _, o in other_names() for s in o.synonyms}
    lower = {k.lower(): k for k in sorted(known, key=lambda k: (k not in synonyms, k))}   # names over synonyms
    close = ([lower[base.lower()]] if base.lower() in lower
             else difflib.get_close_matches(base, sorted(known), n=3, cutoff=0.6))
    hint = f" (did you mean {' or '.join(text.replace(base, c, 1) for c in close)}?)" if close else ""
    return MeasureError(f"unknown measure {text!r}{hint}; irscale reads ir_measures' names (nDCG@10, AP@10, P@5, RR, "
                        f"ERR@20, ...), trec_eval's (map, ndcg_cut_10, P_5, recip_rank, ...) and its own "
                        f"(DCG(b=2)@10, RBP(p=0.8)@10, Twist@10, ...): `irscale measures` lists them")


def parse_user_measures(text: str | Iterable[str | Measure], names: str = DEFAULT_NAMES, top_level: int | None = None,
                        depth: int | None = None) -> list[Measure]:
    """Measures named by a user: a comma-separated string or a list of names (or
    measures). ``names`` is the vocabulary (``"irscale"``, ``"ir_measures"``,
    ``"trec_eval"``; module docstring) and a prefix ``irscale:``, ``irm:``, ``trec:``
    chooses it for one name; ``top_level`` (the qrels' highest relevance level) and
    ``depth`` (the runs' ranking length) complete names that depend on them. Duplicates
    (the same irscale measure) are dropped; the result holds irscale's measures, whose
    ``str`` is the canonical name.

    Raises :class:`~irscale.errors.MeasureError`, for a name that reads differently in
    irscale and ir_measures with both readings; warns
    (:class:`~irscale.errors.IrscaleWarning`) when an irscale name means another measure
    in ir_measures.
    """
    if names not in NAMES:
        raise MeasureError(f"names must be one of {', '.join(NAMES)}, got {names!r}")
    _check_facts(top_level, depth)
    items = split_measures(text) if isinstance(text, str) else list(text)
    if not items:
        raise MeasureError("no measure given")
    out: list[Measure] = []
    for item in items:
        if isinstance(item, Measure):
            m = item
        elif not isinstance(item, str) or not item.strip():
            raise MeasureError(f"not a measure name: {item!r}")
        else:
            m = _read_one(item.strip(), names, top_level, depth)
        if m not in out:
            out.append(m)
    return out


def user_name(measure: Measure) -> str:
    """The name that reads as ``measure`` in the default vocabulary, for commands that
    messages suggest: its canonical name, or ``irscale:`` and it where ir_measures reads
    that text as another measure on some qrels (``irscale:ERR@20``).

    >>> user_name(parse_measure("ERR@20")), user_name(parse_measure("AP@10"))
    ('irscale:ERR@20', 'AP@10')
    """
    text = str(measure)
    for top in range(1, MAX_LEVELS):
        other = _read_ir_measures(text, top, measure.n).measure
        if other is not None and other != measure:
            return "irscale:" + text
    return text


def read_stored(text: str, available: Iterable[str], rb: Any = None) -> Measure:
    """The measure a user's name means among the tables of a store (``available``: their
    canonical measure names), for lookups, which know no qrels and no runs.

    ir_measures' and trec_eval's names mean what they mean there; those whose meaning
    depends on the qrels' levels (``nDCG@10``, ``ERR@20``) take the levels from ``rb``
    when it is a per-grade count vector (its length is the top level), binary qrels when
    it is an integer, and otherwise the table the store has (several: the error names
    them). A table of irscale's own measure of the same name serves when the store has no
    table of the ecosystem's meaning, with a warning naming both. Names that rank the
    whole run (``map``, ``RR``) need their cutoff here. When no reading is in the store,
    the ecosystem's reading (on binary qrels, or the vector's) is returned: opening its
    table then says what to build. Prefixes (``irscale:``, ``irm:``, ``trec:``) choose.
    """
    available = set(available)
    text = text.strip() if isinstance(text, str) else _text_of(text)
    if isinstance(rb, (tuple, list)) and rb and all(isinstance(c, int) and not isinstance(c, bool) for c in rb):
        tops = [len(rb)] if 1 <= len(rb) < MAX_LEVELS else [1]
    else:
        tops = [1] if rb is not None else list(range(1, MAX_LEVELS))
    vocabulary, name = "", text
    for prefix, v in PREFIXES.items():
        if text.startswith(prefix):
            vocabulary, name = v, text[len(prefix):].strip()
            break
    if vocabulary == "irscale":
        return parse_measure(name)
    trec = vocabulary == "trec_eval" or (not vocabulary and is_trec_eval_name(name))
    read = _read_trec_eval if trec else _read_ir_measures
    eco: list[Measure] = []
    first: _Reading | None = None
    for top in tops:
        reading = read(name, top, None)
        if reading.fact == "depth":
            deep = read(name, top, 1000).measure
            family = [a for a in sorted(available) if deep is not None and _base_name(a) == deep.name]
            example = f", e.g. {deep} for runs of 1000 documents" if deep else ""
            raise MeasureError(f"{name!r} ranks the whole run, whose length a lookup does not know: write the "
                               f"measure with its cutoff{example}"
                               + (f"; this store has {', '.join(family)}" if family else ""))
        first = first or reading
        if reading.measure is not None and reading.measure not in eco:
            eco.append(reading.measure)
    if vocabulary == "ir_measures" or trec:
        mine = None
    else:
        try:
            mine = parse_measure(name)
        except MeasureError as e:
            mine, mine_error = None, e
    hits = [m for m in eco if str(m) in available]
    if len(hits) > 1:
        raise MeasureError(f"{name!r} reads as {' or '.join(map(str, hits))} depending on the qrels' relevance "
                           f"levels, and this store has both: give the per-grade counts as rb, or the name of one")
    if hits:
        if mine is not None and mine != hits[0] and str(mine) in available:
            warnings.warn(f"{name} is read as ir_measures reads it, {hits[0]}; this store also has irscale's own "
                          f"{mine}, another measure: write irscale:{name} for that one", IrscaleWarning, stacklevel=2)
        return hits[0]
    if mine is not None and (str(mine) in available or not eco):
        if eco and mine not in eco:
            warnings.warn(f"{name} is read as irscale's {mine} ({mine.summary}), the table this store has; "
                          f"ir_measures' {name} is another measure ({', '.join(map(str, eco))}), which it lacks",
                          IrscaleWarning, stacklevel=2)
        return mine
    if eco:
        return eco[0]
    if first is not None and first.known:
        first.raise_error()
    if mine is None and not vocabulary:
        raise _unknown(name, str(mine_error))
    (first or _Reading(error=f"not a measure name: {name!r}")).raise_error()


def names_of(measure: Measure) -> list[str]:
    """The names ir_measures and trec_eval give ``measure`` (``nDCG@10`` and ``ndcg_cut_10``
    for ``nDCG_trec(gains=(0,1,2))@10`` on qrels of levels 0..2), for lists that show users
    the names they know; empty for measures of irscale alone."""
    top = max(measure.levels - 1, 1)
    out: list[str] = []
    for _, other in other_names():
        if other.tool == "ir_measures" and other.cutoff != "none":
            text = f"{other.name}@{measure.n}"
        elif other.tool == "trec_eval" and other.cutoff == "required":
            text = f"{other.name}_{measure.n}"
        else:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                m = _measure_of(_read_ir_measures if other.tool == "ir_measures" else _read_trec_eval, text, top,
                                None)
            except MeasureError:
                continue
        if m == measure and text not in out:
            out.append(text)
    return out


__all__ = ["parse_user_measures", "read_stored", "user_name", "names_of"]
