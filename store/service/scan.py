"""The scan of a request's raw bytes before it is parsed (:func:`prescan`): a body whose shape
passes a limit (docs/service.md, "Limits") is refused having built no object."""
from __future__ import annotations

import numpy as np
import pydantic_core

from irscale.errors import RunError
from irscale.store.service.errors import InvalidJSONError, PayloadTooLargeError, RequestError
from irscale.store.service.limits import (
    MAX_DEPTH,
    MAX_FIELDS,
    MAX_OTHER_ITEMS,
    MAX_RB_ITEMS,
    MAX_RUN_LENGTH,
    MAX_TOKEN,
)
from irscale.store.service.models import RankRequest
from irscale.store.service.scan_kernels import _MALFORMED, _NOT_OBJECT, _OK, _TOO_DEEP, _TOO_LONG, _scan_json

#: Field names whose lists are limited by ``max_items`` (index 1, 2) and by
#: :data:`MAX_RB_ITEMS` (index 3); other fields: index 0.
_LIST_FIELDS = ("values", "runs", "rb")
_FIELD_BYTES = np.zeros((len(_LIST_FIELDS), 8), np.uint8)
for _i, _name in enumerate(_LIST_FIELDS):
    _FIELD_BYTES[_i, :len(_name)] = np.frombuffer(_name.encode(), np.uint8)
_FIELD_LENGTHS = np.array([len(name) for name in _LIST_FIELDS], np.int64)


def _parse_error(body: bytes) -> InvalidJSONError:
    """The parser's description of malformed JSON (the scan found where it breaks; the
    parser stops there too, having built only what passed the limits)."""
    try:
        pydantic_core.from_json(body)
    except ValueError as e:
        return InvalidJSONError(f"the request body is not valid JSON: {e}")
    return InvalidJSONError("the request body is not valid JSON")


def _not_an_object() -> RequestError:
    return RequestError("the request body must be a JSON object with the fields " + ", ".join(RankRequest.model_fields))


def prescan(body: bytes, max_items: int) -> tuple[int, int] | None:
    """Refuse a request body whose shape passes a limit (see Limits in
    docs/service.md), before it is parsed: one pass over the bytes, no object built. Returns
    the span (first and last byte) of the list of its ``runs`` field when it has exactly
    one, else None.

    Raises
    ------
    RequestError
        Nested too deeply, too many fields, a number too long, not an object (422).
    RunError
        A list where a relevance degree belongs (``runs: [[[1]]]``, 422).
    PayloadTooLargeError
        A list with more items than its limit (413).
    InvalidJSONError
        Malformed JSON (400).
    """
    a = np.frombuffer(body, np.uint8)
    limits = np.array([MAX_OTHER_ITEMS, max_items, max_items, MAX_RB_ITEMS], np.int64)
    code, pos, depth, count, key, start, end, index = _scan_json(
        a, _FIELD_BYTES, _FIELD_LENGTHS, limits, MAX_DEPTH, MAX_FIELDS, MAX_RUN_LENGTH, MAX_TOKEN)
    if code == _OK:
        return (pos, depth) if count == 1 and pos >= 0 and depth > pos else None
    field = body[start:end].decode("utf-8", "replace") if start >= 0 else ""
    if code == _NOT_OBJECT:
        if body[pos:pos + 1] in (b"[", b'"', b"-", b"t", b"f", b"n") or body[pos:pos + 1].isdigit():
            raise _not_an_object()
        raise _parse_error(body)
    if code == _MALFORMED:
        raise _parse_error(body)
    if code == _TOO_LONG:
        raise RequestError(f"a number or literal of more than {MAX_TOKEN} characters at byte {pos} (in {field!r})")
    if code == _TOO_DEEP:
        if key == 2:
            raise RunError(f"runs[{index}] holds a list where a relevance degree belongs: a run is a flat list "
                           f"of integers, e.g. [1, 0, 1]")
        raise RequestError(f"{field or 'the request'}: lists nested {depth - 1} deep at byte {pos}; a request is "
                           f"an object whose fields hold numbers, lists of numbers (values, rb) or lists of "
                           f"runs (runs)")
    # _TOO_MANY
    if depth == 1:
        raise RequestError(f"the request has {count} fields, at most {MAX_FIELDS} are read; the fields are "
                           + ", ".join(RankRequest.model_fields))
    if depth == 2 and key in (1, 2):
        raise PayloadTooLargeError(f"{count} {field} in one request; this service answers at most {max_items} "
                                   f"per request: split the batch")
    if depth == 2 and key == 3:
        raise PayloadTooLargeError(f"rb has {count} items; per-grade counts have at most {MAX_RB_ITEMS} "
                                   f"(one per grade)")
    if depth == 2:
        raise PayloadTooLargeError(f"{field!r} holds a list of {count} items; only values and runs take more than "
                                   f"{MAX_OTHER_ITEMS}")
    raise PayloadTooLargeError(f"{field}[{index}] has {count} items; runs have at most N = {MAX_RUN_LENGTH} "
                               f"degrees (the largest cutoff)")
