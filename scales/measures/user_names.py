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
* a name no vocabulary has raises a MeasureError with the closest whole names, each one
  that reads (``P5``: ``P@5``; ``ndcg10``: ``nDCG@10``; ``nDCG@``: ``nDCG@10``).

Names are read whatever their case (``ndcg@10``, ``p@5``, ``Map``, ``NDCG_CUT_10``; the
prefixes too), in every vocabulary and in :func:`read_stored`: a name that a vocabulary
has as typed keeps that meaning (``rbp`` is trec_eval's, ``RBP`` ir_measures'); another is
read as the names it matches regardless of case when they are one measure, and is an
error naming them when they are not (``Rbp``), whatever the data.

With ``names="irscale"`` irscale's meaning wins instead (the ecosystem's reading is named
in a warning, and a name only ir_measures has is refused with both readings);
``"trec_eval"`` reads as the default.

:func:`read_stored` reads a name among the tables of a store (lookups know no qrels),
:func:`user_name` writes the name that reads back as a measure (for suggested commands),
:func:`names_of` lists the names other tools give a measure.
"""
from __future__ import annotations

import difflib
import functools
import re
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from irscale.errors import IrscaleWarning, MeasureError
from irscale.scales.measures.aliases import (
    DEFAULT_NAMES,
    NAMES,
    PREFIXES,
    MissingFactError,
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


def _prefixed(item: str) -> tuple[str, str | None, str]:
    """(prefix as written, its vocabulary or None, the name after it) of a user's name;
    prefixes are read whatever their case (``IRM:``)."""
    for prefix, vocabulary in PREFIXES.items():
        if item[:len(prefix)].lower() == prefix:
            return item[:len(prefix)], vocabulary, item[len(prefix):].strip()
    return "", None, item


#: The measure name at the start of a name in ir_measures' (and irscale's) syntax.
_HEAD = re.compile(r"\s*([A-Za-z_]\w*)")


@functools.cache
def _spellings_of(vocabulary: str | None) -> tuple[str, ...]:
    """The measure names of a vocabulary (None: every one) in ir_measures' syntax, the
    preferred spelling of a text first: ir_measures' names, irscale's families, then
    ir_measures' synonyms (``MAP``, ``NDCG``)."""
    irm = other_names("ir_measures") if vocabulary in (None, "ir_measures") else []
    own = list(families()) if vocabulary in (None, "irscale") else []
    return tuple(dict.fromkeys([o.name for _, o in irm] + own + [s for _, o in irm for s in o.synonyms]))


def _trec_syntax(text: str) -> bool:
    return "@" not in text and "(" not in text


def _exactly_named(text: str, vocabulary: str | None) -> bool:
    """Whether ``text`` names, as spelled, a measure of the vocabulary (None: of any):
    then it is read as written, whatever names differ from it only by case."""
    if vocabulary in (None, "trec_eval") and _trec_syntax(text) and _read_trec_eval(text.strip(), None, None).known:
        return True
    head = _HEAD.match(text)
    return head is None or vocabulary != "trec_eval" and head.group(1) in _spellings_of(vocabulary)


def _case_variants(text: str, vocabulary: str | None) -> list[str]:
    """``text`` with its measure name spelled as a vocabulary spells it, where they differ
    only by case (``ndcg@10``: ``nDCG@10``, ``NDCG@10``; ``NDCG_CUT_10``: ``ndcg_cut_10``),
    preferred spellings first: trec_eval's (read alike in every vocabulary), then
    ir_measures' and irscale's."""
    out = []
    if vocabulary in (None, "trec_eval") and _trec_syntax(text):
        low = text.strip().lower()
        for _, other in sorted(other_names("trec_eval"), key=lambda co: -len(co[1].name)):
            name = other.name
            if low == name.lower():
                out.append(name)
            elif low[:len(name) + 1] in (name.lower() + "_", name.lower() + "."):
                out.append(name + low[len(name):])
    head = _HEAD.match(text)
    if head is not None and vocabulary != "trec_eval":
        typed = head.group(1).lower()
        out += [text[:head.start(1)] + name + text[head.end(1):] for name in _spellings_of(vocabulary)
                if name.lower() == typed]
    return [v for v in dict.fromkeys(out) if v != text and _exactly_named(v, vocabulary)]


def _spelled(item: str, reads: list[Callable[[str, int | None, int | None], Measure]],
             facts: list[tuple[int | None, int | None]]) -> str:
    """The spelling of ``item`` to read: ``item`` itself when a vocabulary has its measure
    name as typed (exact case wins: ``rbp`` is trec_eval's, ``RBP`` ir_measures'), else the
    name that differs from it only by case (``ndcg@10``: ``nDCG@10``).

    Where several spellings could be meant, the first that ``reads[0](spelling,
    top_level, depth)`` reads with the first facts is taken, or the first spelling (whose
    reading then says what is wrong). When two spellings read as different measures by
    one of ``reads`` (the caller's vocabulary, the default one) with any of ``facts`` (the
    data's, and stand-ins), the name is ambiguous whatever the data: a MeasureError names
    both (``Rbp``: ir_measures' ``RBP`` or trec_eval's ``rbp``)."""
    prefix, vocabulary, text = _prefixed(item)
    if _exactly_named(text, vocabulary):
        return item
    variants = [prefix + v for v in _case_variants(text, vocabulary)]
    if len(variants) < 2:
        return variants[0] if variants else item
    chosen = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, read in enumerate(reads):
            for top_level, depth in dict.fromkeys(facts):
                read_as = {}
                for v in variants:
                    try:
                        read_as[v] = read(v, top_level, depth)
                    except MeasureError:
                        continue
                meanings = list(dict.fromkeys(read_as.values()))
                if len(meanings) > 1:
                    (a, ma), (b, mb) = [next((v, m) for v, m in read_as.items() if m == x) for x in meanings[:2]]
                    raise MeasureError(f"{item!r} is, but for case, the name of different measures: {a} ({ma}) and "
                                       f"{b} ({mb}); write the one you mean as spelled here")
                if i == 0:
                    chosen = chosen or next(iter(read_as), None)
    return chosen or variants[0]


def _stand_ins(top_level: int | None, depth: int | None) -> list[tuple[int | None, int | None]]:
    """The facts a name is read with (the data's first), then binary and graded qrels and
    (when the runs' depth is not known) runs of 1000 documents: spellings that read as
    different measures on any data are ambiguous on all."""
    return [(top_level, depth)] + [(t, 1000 if depth is None else depth) for t in (1, 2)]


def _read_one(item: str, names: str, top_level: int | None, depth: int | None, exact: bool = False) -> Measure:
    """The measure a user's name means (``exact``: as spelled, without suggestions: for
    trying spellings)."""
    if not exact:
        reads = [lambda v, t, d, vocabulary=vocabulary: _read_one(v, vocabulary, t, d, exact=True)
                 for vocabulary in dict.fromkeys([names, DEFAULT_NAMES])]
        item = _spelled(item, reads, _stand_ins(top_level, depth))
    prefix, vocabulary, text = _prefixed(item)
    if vocabulary == "irscale":
        return parse_measure(text)
    if vocabulary is not None:
        return (from_ir_measures if vocabulary == "ir_measures" else from_trec_eval)(text, top_level, depth)
    if is_trec_eval_name(text):
        return from_trec_eval(text, top_level, depth)

    def valid(v: str) -> Measure:
        try:
            return _read_one(v, names, top_level, depth, True)
        except MissingFactError:        # a name the data complete: read with stand-ins, to tell measures apart
            return _read_one(v, names, top_level or 2, depth or 1000, True)

    def unknown(mine_error: str) -> MeasureError:
        return _unknown(text, mine_error, None if exact else valid)

    try:
        mine, mine_error = parse_measure(text), ""
    except MeasureError as e:
        mine, mine_error = None, str(e)
    irm = _read_ir_measures(text, top_level, depth)
    if names != "irscale":                  # the ecosystem's meaning first (the default)
        if irm.measure is not None:
            if mine is not None and mine != irm.measure:
                warnings.warn(f"{text} is read as ir_measures reads it, as {irm.measure}; irscale's own {text} is "
                              f"another measure, {mine} ({mine.summary}): write irscale:{text} for that one, or "
                              f"irm:{text} for this one without this warning", IrscaleWarning, stacklevel=3)
            return irm.measure
        if mine is not None and not irm.known:
            return mine                     # only irscale has the name
        if mine is not None and irm.fact is None:    # ir_measures means a measure irscale cannot compute here
            warnings.warn(f"{text} is read as irscale's {mine}: irscale cannot compute ir_measures' reading here "
                          f"({irm.error}); write irscale:{text} to say this is meant", IrscaleWarning, stacklevel=3)
            return mine
        if irm.known:
            irm.raise_error()
        raise unknown(mine_error)
    if mine is not None:
        if irm.measure is None and irm.known and top_level is None:
            irm = _read_ir_measures(text, 1, depth)     # the qrels are not known: their binary reading
            binary = " (on binary qrels)"
        else:
            binary = ""
        if irm.measure is None or irm.measure == mine:
            return mine                     # no other reading ir_measures can compute, or the same measure
        warnings.warn(f"{text} is read as irscale's {mine} ({mine.summary}); ir_measures' {text}{binary} is "
                      f"another measure, {irm.measure}. Write irm:{text} for ir_measures' meaning (the default), "
                      f"or irscale:{text} for irscale's without this warning", IrscaleWarning, stacklevel=3)
        return mine
    if not irm.known:
        raise unknown(mine_error)
    if irm.measure is None and mine_error and mine_error in (irm.error or ""):
        raise MeasureError(mine_error)      # both fail alike
    head = _HEAD.match(text)
    if head is not None and head.group(1) not in families():
        mine_error = f"no measure {head.group(1)}"      # what irscale lacks, without its list of every measure
    mine_error = mine_error.split("; ")[0]     # what is wrong, without irscale's list of what it has
    if irm.measure is None and irm.fact is None:    # irm:NAME would fail too: say why each fails
        raise MeasureError(f"{text!r} has no reading here: irscale: {mine_error}; "
                           f"ir_measures: {irm.error.removeprefix(f'ir_measures measure {text!r}: ')}")
    says, same = (str(irm.measure), f" or {irm.measure}") if irm.measure is not None else (_NEEDS[irm.fact], "")
    raise MeasureError(f"{text!r} is an ir_measures name, not an irscale one (irscale: {mine_error}; ir_measures: "
                       f"{says}): write irm:{text} for ir_measures' meaning (the default){same}")


#: What a reading lacks, by :class:`MissingFactError`'s fact.
_NEEDS = {"depth": "needs the runs' depth", "top_level": "needs the qrels' highest level"}


def _base_name(text: str) -> str:
    """The measure name of a text, without parameters and cutoff (``nDGC`` of ``nDGC@10``,
    ``ndcg_cutt`` of ``ndcg_cutt_10``)."""
    base = re.split(r"[(@]", text, maxsplit=1)[0].strip()
    return re.sub(r"[_.]([0-9]+|p=.*)$", "", base) if "@" not in text else base


_CUTOFF = re.compile(r"[1-9][0-9]*")
#: A guess at a cutoff, for a name typed without its number (``nDCG@``).
_GUESSED_CUTOFF = 10


def _repairs(text: str, vocabulary: str | None, close: bool, guess: bool) -> list[str]:
    """Whole names a mistyped ``text`` may have meant, closest first: its measure name
    respelled as a name of the vocabulary (None: every one) that differs from it only by
    case, or with ``close`` as a close name (difflib), with the parameters and
    cutoff typed (``nDGC(b=2)@10``: ``nDCG(b=2)@10``), a cutoff glued to the name set apart
    (``P5``: ``P@5``, ``P_5``; ``ndcg10``: ``nDCG@10``), a cutoff where ``@`` has none
    (``nDCG@``: ``nDCG@10``) and, with ``guess``, where none was typed (``map_cut``:
    ``map_cut_10``)."""
    typed = re.match(r"\s*([A-Za-z_][\w.=]*)\s*(\(.*\))?\s*(@.*)?$", text, flags=re.S)
    if typed is None:
        return []
    head, params, at = typed.group(1), typed.group(2) or "", typed.group(3)
    known = {n.lower() for n in _spellings_of(None)} | {o.name.lower() for _, o in other_names("trec_eval")}
    base, number, arg = head, None, None           # arg: trec_eval's after _ or . (p=0.8)
    if at is not None:
        number = at[1:].strip()
        if not _CUTOFF.fullmatch(number):
            number = str(_GUESSED_CUTOFF)          # the name wants a cutoff: nDCG@, nDCG@ten
    elif not params and head.lower() not in known:
        glued = re.fullmatch(r"(.+?)[_.]?([1-9][0-9]*)", head) or re.fullmatch(r"(.+?)[_.](p=.*)", head)
        if glued is not None:
            base, rest = glued.groups()
            number, arg = (rest, None) if _CUTOFF.fullmatch(rest) else (None, rest)
    guessed = number is None and guess
    if guessed:
        number = str(_GUESSED_CUTOFF)
    trec = [(o.name, o.cutoff) for _, o in other_names("trec_eval")] if vocabulary in (None, "trec_eval") else []
    irm = [(name, "") for name in _spellings_of(vocabulary)] if vocabulary != "trec_eval" else []
    pool = list(dict.fromkeys(irm + trec))

    def closeness(name: str) -> tuple[float, float]:
        return (difflib.SequenceMatcher(None, base.lower(), name.lower()).ratio(),
                difflib.SequenceMatcher(None, base, name).ratio())

    if close:
        ranked = sorted((p for p in pool if 0.6 <= closeness(p[0])[0] < 1), key=lambda p: (-closeness(p[0])[0],
                                                                                            -closeness(p[0])[1]))
    else:
        ranked = [p for p in pool if p[0].lower() == base.lower()]
    out = []
    for name, trec_cutoff in ranked:
        if not trec_cutoff:                         # ir_measures' syntax, irscale's too
            if arg is None:
                out.append(f"{name}{params}@{number}" if number is not None else f"{name}{params}")
            if guess and arg is None and not params and name in families():    # its parameters too: nDCG(b=2)@10
                out.append(re.sub(r"@[0-9]+$", f"@{number}", families()[name].example()))
        elif not params:                            # trec_eval's names take no parameters
            if trec_cutoff == "required" and number is not None:
                out.append(f"{name}_{number}")
            elif trec_cutoff == "none" and (number is None or guessed) and arg is None:
                out.append(name)
            elif trec_cutoff == "arg" and (number is None or guessed):
                out.append(f"{name}_{arg}" if arg is not None else name)
    return [r for r in dict.fromkeys(out) if r != text]


def _suggest(text: str, valid: Callable[[str], Measure]) -> list[str]:
    """Up to three whole names close to ``text`` that ``valid`` reads, each a different
    measure (``valid`` raises MeasureError for the others): names that differ from its measure
    name only by case first, close names when none of those reads, and a guessed cutoff
    only when nothing without one reads."""
    prefix, vocabulary, rest = _prefixed(text)
    seen: dict[Measure, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for close in (False, True):
            for guess in (False, True):
                for candidate in _repairs(rest, vocabulary, close, guess):
                    try:
                        key = valid(prefix + candidate)
                    except MeasureError:
                        continue
                    seen.setdefault(key, prefix + candidate)
                    if len(seen) == 3:
                        return list(seen.values())
                if seen:
                    return list(seen.values())
    return []


def _unknown(text: str, mine_error: str, valid: Callable[[str], Measure] | None = None) -> MeasureError:
    """The error of a name no vocabulary reads: irscale's own message for a measure name a
    vocabulary has (a bad parameter, a missing cutoff), else "unknown measure"; each with
    the closest whole names that ``valid`` reads, when it is given."""
    close = _suggest(text, valid) if valid is not None else []
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    base = _base_name(_prefixed(text)[2])
    if not base or base in _spellings_of(None) or _read_trec_eval(base, None, None).known:
        new = [c for c in close if not re.search(rf"(?<![\w.:]){re.escape(c)}(?![\w@(])", mine_error)]
        if new and "did you mean" not in mine_error:
            return MeasureError(f"{mine_error} (did you mean {' or '.join(new)}?)")
        return MeasureError(mine_error)
    return MeasureError(f"unknown measure {text!r}{hint}; irscale reads ir_measures' names (nDCG@10, AP@10, P@5, RR, "
                        f"...), trec_eval's (map, ndcg_cut_10, P_5, ...) and its own (DCG(b=2)@10, RBP(p=0.8)@10, "
                        f"...): `irscale measures` lists them")


def parse_user_measures(text: str | Iterable[str | Measure], names: str = DEFAULT_NAMES, top_level: int | None = None,
                        depth: int | None = None) -> list[Measure]:
    """Measures named by a user: a comma-separated string or a list of names (or
    measures, irscale's or ir_measures' objects, ``ir_measures.nDCG@10``, which mean what
    they mean in ir_measures). Names are read whatever their case where that is not
    ambiguous (module docstring). ``names`` is the vocabulary (``"irscale"``, ``"ir_measures"``,
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
        elif type(item).__module__.split(".")[0] == "ir_measures":     # ir_measures.nDCG@10: its meaning
            m = from_ir_measures(item, top_level, depth)
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
    text = _spelled(text, [lambda v, t, d: _read_stored(v, available, rb, False)], [(None, None)])
    return _read_stored(text, available, rb, True)


def _read_stored(text: str, available: set[str], rb: Any, suggest: bool) -> Measure:
    """:func:`read_stored` of a name as spelled (``suggest``: whether an unknown name's
    error suggests names, which trying spellings does not need)."""
    if isinstance(rb, (tuple, list)) and rb and all(isinstance(c, int) and not isinstance(c, bool) for c in rb):
        tops = [len(rb)] if 1 <= len(rb) < MAX_LEVELS else [1]
    else:
        tops = [1] if rb is not None else list(range(1, MAX_LEVELS))
    _, vocabulary, name = _prefixed(text)
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
                          f"{mine}, another measure: write irscale:{name} for that one", IrscaleWarning, stacklevel=3)
        return hits[0]
    if mine is not None and (str(mine) in available or not eco):
        if eco and mine not in eco:
            warnings.warn(f"{name} is read as irscale's {mine} ({mine.summary}), the table this store has; "
                          f"ir_measures' {name} is another measure ({', '.join(map(str, eco))}), which it lacks",
                          IrscaleWarning, stacklevel=3)
        return mine
    if eco:
        return eco[0]
    if first is not None and first.known:
        first.raise_error()
    if mine is None and not vocabulary:
        raise _unknown(name, str(mine_error), (lambda v: _read_stored(v, available, rb, False)) if suggest else None)
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
