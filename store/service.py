"""The HTTP lookup service: a store's tables behind a small JSON API (FastAPI + uvicorn).

Run it with ``irscale serve --store tables.h5 [--host 127.0.0.1 --port 8000]``; the
OpenAPI description is at ``/openapi.json`` and interactive docs at ``/docs`` (Swagger
UI) and ``/redoc`` (ReDoc), which work offline: their scripts, style sheet and icon are
served by the service itself under ``/docs-assets/`` (the files of the fastapi-offline
package), never from a CDN. The service is read-only: it opens every table of the store
once at start-up (memory maps, nothing is read whole) and answers from that snapshot; it
never accepts or returns a filesystem path (error messages name "this store", never its
file).

Endpoints
---------
``POST /v1/rank``
    Body ``{"measure": "AP@30", "rb": 12, "values": [0.0, 0.25]}`` or
    ``{"measure": "AP@30", "rb": 12, "runs": [[1, 0, ...], ...]}`` (exactly one of
    ``values`` and ``runs``). ``rb`` is the topic's recall base, required for
    RB-dependent measures and refused for the others. Value lookups accept optional
    ``rtol`` / ``atol`` (finite, >= 0; defaults: 64 ulps and the table's float error
    bound, see :meth:`irscale.scales.Scale.rank`). Answer
    ``{"measure": canonical name, "rb": rb or null, "k": K, "rank": [...], "scaled": [...],
    "scale": what answered}`` (``exact: table``, ``exact: rank oracle``, or ``exact: closed
    form`` for P, R, F1, RR and Rprec, which need no table).
``GET /v1/tables``
    The store's format and version, and every table's metadata (measure, N, recall base
    dependence, runs, distinct values overall and per recall base, tie method, error
    bound, smallest gap, implicit, creation time, irscale version, checksum).
``GET /v1/table?measure=AP@30&rb=12&points=1000&bins=40&gaps=log``
    A bounded view of one scale, for plotting (whatever its size, the answer has at
    most ``points`` <= 10^4 bins and ``bins`` <= 500 histogram bins): the ranks 1..K cut
    into ``min(points, K)`` bins of consecutive ranks, each with its first and last rank
    and their values (``rank_lo``, ``rank_hi``, ``value_lo``, ``value_hi``: the smallest
    and largest value of the bin, values increasing with rank), and ``gaps``, a histogram
    of the gaps between consecutive distinct values (bins equally wide in log10 of the
    gap, or linear from 0; gaps of 0 counted apart), over every gap of scales of at most
    2^18 values or tables of at most 2^22 entries, else over the gaps within 64 evenly
    spaced windows of 4096 consecutive ranks (``sampled``). ``rb`` as in POST /v1/rank
    (per-grade counts written ``3,2``).
``GET /healthz``
    ``{"status": "ok", "tables": number of tables}``.
``GET /``
    A page for research use (HTML and plain JavaScript, nothing loaded from elsewhere,
    :mod:`irscale.store.page`): the store's tables; for a chosen table and recall base, a
    plot of the values against their unq ranks and a histogram of the gaps (from GET
    /v1/table); a run typed as relevance boxes, or a value, ranked with POST /v1/rank and
    marked on the plot.

Conventions
-----------
Ranks are the 1-based unq ranks 1..K (K distinct values; tied values share a rank);
``scaled = (rank - 1) / (K - 1)`` (0 when K = 1). A judged run is the list of relevance
degrees ``[r_1, ..., r_N]``, ``r_1`` being the top document, each an integer 0..G (JSON
``true``/``false`` and ``-1`` are not degrees); measures over truncated rankings (RBPU,
DCGU, OIE, ...) take rankings of 0 to N degrees. Runs are ranked exactly, values within
tolerance; a value below the smallest or above the largest value of the measure by more
than the tolerance is not a value of it.

Errors
------
Every error is JSON of one shape, ``{"error": {"type": ..., "message": ...}}``, the
message naming the problem (the field, the index of the offending value or run).
Request validation errors add ``"details": [{"loc": "values[3]", "message": ...}, ...]``
(at most 20). Status codes: 400 malformed JSON; 404 table not in the store (the message
lists the tables) or unknown path; 405 wrong method; 408 request body not received in
time; 413 body, list or batch too large, or a request beyond its time or memory budget;
422 anything else the request got wrong (measure name, rb, types, NaN or infinite values,
values that are not values of the measure or are ambiguous, run length, degrees outside
REL, infeasible runs, both or neither of values and runs, too many fields, lists nested
too deeply); 503 too many requests at once (``Retry-After``); 500 a bug in irscale (the
connection stays usable).

Limits
------
Every request's cost is bounded before its JSON is parsed: a scan of the raw bytes (one
pass, no objects built, stopping at the first limit passed) refuses bodies nesting
deeper than an object of lists of lists (422), with more than :data:`MAX_FIELDS` fields
(422), a ``values`` or ``runs`` list of more than ``max_items`` items (default 10^6), an
``rb`` list of more than :data:`MAX_RB_ITEMS` per-grade counts, another list of more
than :data:`MAX_OTHER_ITEMS` items or an inner list (a run) of more than N_max =
:data:`MAX_RUN_LENGTH` items (413), or a number of more than :data:`MAX_TOKEN`
characters (422). Request bodies have at most ``max_body_bytes`` (default 64 MiB,
checked against Content-Length and by counting the bytes of streamed uploads as they
arrive); both answer 413. Runs written as plain lists of small integers are read by a
kernel straight from the bytes (a big batch never becomes Python lists); any other runs
are parsed and checked in bulk (numpy), stopping at the first bad run. A body must
arrive within ``body_timeout`` seconds, with no pause longer than ``idle_timeout``
seconds (408, defaults 60 and 10). The service holds at most
``max_buffered_bytes`` of request bodies at once (default four bodies of the largest
size), counted as they arrive, and at most ``max_pending`` received requests waiting for
or being answered (default 32); beyond either, 503 with ``Retry-After`` (a slow client
holds only what it has sent, so it blocks no one).

``irscale serve`` (:func:`serve`) parses and ranks in ``workers`` worker processes
(default 2), never on the event loop nor under its interpreter lock, so ``/healthz`` and
the other endpoints answer while the heaviest request is being worked on; a request
waits at most ``queue_timeout`` seconds for a free worker (503), and a worker that works
on one request longer than ``time_budget`` seconds (default 30) or whose anonymous
memory passes ``memory_budget`` bytes (default 2 GiB) is killed and replaced, the request
answering 413 (split the batch). :func:`create_app` without ``workers`` (tests, embedding)
answers in threads of the application's process, without the time and memory budget.
Connections: a client must send a complete request head within ``header_timeout``
seconds (default 10) of connecting or of the end of the previous answer, else the
connection is closed (slow or half-open clients); idle keep-alive connections close after
5 s; request heads are at most 16 KiB; beyond ``max_connections`` open connections
(default 10^4, and at most what the limit of open files allows, which the server raises
to its hard limit) the connection that has waited longest (at least 1 s) for a request
head is closed, else the new one.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import multiprocessing
import os
import resource
import signal
import socket
import time
import warnings
from http import HTTPStatus
from pathlib import Path
from typing import Annotated, Any

import numba
import numpy as np
import pydantic_core
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.staticfiles import StaticFiles

from irscale.errors import (
    CorruptStoreError,
    IrscaleError,
    IrscaleWarning,
    MeasureError,
    RunError,
    StoreError,
    TableNotFoundError,
    ValueNotInScaleError,
)
from irscale.scales.measures.measure import MAX_N, Measure
from irscale.scales.measures.params import MAX_LEVELS
from irscale.scales.measures.parse import parse_measure
from irscale.scales.measures.user_names import names_of, read_stored
from irscale.scales.tables.layouts import kind_of_scale
from irscale.scales.tables.scale import RTOL
from irscale.store.page import page_html
from irscale.store.reader import Store, open_store
from irscale.version import __version__

log = logging.getLogger("irscale.service")

#: Scales (one per measure and recall base) kept ready between requests.
SCALE_CACHE_SIZE = 128
#: Validation problems listed in one error answer.
MAX_DETAILS = 20
#: Where the files of the interactive docs (Swagger UI, ReDoc, icon) are served.
DOCS_ASSETS = "/docs-assets"
#: The package (and its folder) that ships those files: no page of the service loads
#: anything from a CDN, so the docs work offline.
_DOCS_ASSETS_PACKAGE = ("fastapi_offline", "static")

# -- limits checked on the raw bytes of a request, before it is parsed ---------------------
#: Fields of one request (the known ones are six; unknown ones are refused, the first
#: :data:`MAX_DETAILS` of them named).
MAX_FIELDS = 64
#: Nesting: the request object (1), a list in a field (2), a run in ``runs`` (3).
MAX_DEPTH = 3
#: Items of an inner list (a run): the largest cutoff N any measure has.
MAX_RUN_LENGTH = MAX_N
#: Items of an ``rb`` list: one count per grade (at most G + 1 <= |REL|max).
MAX_RB_ITEMS = MAX_LEVELS
#: Items of a list in any other field (none takes one: pydantic then names the problem).
MAX_OTHER_ITEMS = 64
#: Characters of one number or literal (a float needs at most 25).
MAX_TOKEN = 400
#: Field names whose lists are limited by ``max_items`` (index 1, 2) and by
#: :data:`MAX_RB_ITEMS` (index 3); other fields: index 0.
_LIST_FIELDS = ("values", "runs", "rb")
_FIELD_BYTES = np.zeros((len(_LIST_FIELDS), 8), np.uint8)
for _i, _name in enumerate(_LIST_FIELDS):
    _FIELD_BYTES[_i, :len(_name)] = np.frombuffer(_name.encode(), np.uint8)
_FIELD_LENGTHS = np.array([len(name) for name in _LIST_FIELDS], np.int64)

#: Defaults of the service (see the module docstring).
DEFAULT_MAX_ITEMS = 1_000_000
DEFAULT_MAX_BODY_BYTES = 64 * 2 ** 20
DEFAULT_WORKERS = 2
DEFAULT_TIME_BUDGET = 30.0
DEFAULT_MEMORY_BUDGET = 2 * 2 ** 30
DEFAULT_QUEUE_TIMEOUT = 30.0
DEFAULT_MAX_PENDING = 32
DEFAULT_BODY_TIMEOUT = 60.0
DEFAULT_IDLE_TIMEOUT = 10.0
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 10_000
#: Seconds a connection waiting for its request head is safe from being closed to make
#: room for a new one.
EVICTION_GRACE = 1.0
#: Largest request head (request line and headers) in bytes.
MAX_HEAD_BYTES = 16 * 1024
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE_SECONDS = 5

# -- the table view (GET /v1/table) -------------------------------------------------------
#: Most bins of consecutive ranks in one view (``points``), and the default.
MAX_VIEW_POINTS = 10_000
DEFAULT_VIEW_POINTS = 1000
#: Most bins of the gap histogram (``bins``), and the default.
MAX_GAP_BINS = 500
DEFAULT_GAP_BINS = 40
#: Scales of at most GAP_WINDOWS * GAP_WINDOW values (each located in the table), or of
#: tables of at most VIEW_EXACT_VALUES entries (streamed once), have every gap counted;
#: the others, the gaps within :data:`GAP_WINDOWS` windows of :data:`GAP_WINDOW`
#: consecutive ranks, evenly spaced over the ranks.
VIEW_EXACT_VALUES = 1 << 22
GAP_WINDOWS = 64
GAP_WINDOW = 4096
#: Views kept ready (their JSON) between requests.
VIEW_CACHE_SIZE = 16
#: The parameters of GET /v1/table.
VIEW_PARAMETERS = ("measure", "rb", "points", "bins", "gaps")


# -- errors ----------------------------------------------------------------------------
class RequestError(IrscaleError, ValueError):
    """A lookup request that is valid JSON but not a valid request (HTTP 422);
    ``details`` lists validation problems as ``{"loc": ..., "message": ...}``."""

    def __init__(self, message: str, details: list | None = None):
        super().__init__(message)
        self.details = details


class InvalidJSONError(RequestError):
    """The request body is not JSON (HTTP 400)."""


class PayloadTooLargeError(IrscaleError):
    """A request with more items than the service answers at once, or one that needs
    more time or memory than its budget (HTTP 413)."""


class RequestTimeoutError(IrscaleError):
    """The request body did not arrive in time (HTTP 408)."""


class ServiceBusyError(IrscaleError):
    """Too many requests at once (HTTP 503, retry later)."""


_STATUS = ((InvalidJSONError, 400), (TableNotFoundError, 404), (RequestTimeoutError, 408),
           (PayloadTooLargeError, 413), (ServiceBusyError, 503), (CorruptStoreError, 500))


def status_of(error: IrscaleError) -> int:
    """HTTP status of an error: 400, 404, 408, 413 or 503 for the kinds above, 500 for a
    damaged table (the server's problem, not the request's), else 422."""
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 422


def error_body(kind: str, message: str, details: list | None = None) -> bytes:
    """The JSON of an error answer (see the module docstring)."""
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    return pydantic_core.to_json({"error": error})


def _json_response(payload: bytes, status: int = 200, headers: dict | None = None) -> Response:
    return Response(payload, status_code=status, media_type="application/json", headers=headers)


# -- the scan of the raw request ----------------------------------------------------------
_OK, _MALFORMED, _TOO_DEEP, _TOO_MANY, _TOO_LONG, _NOT_OBJECT = range(6)


@numba.njit(cache=True, nogil=True)
def _scan_json(a, names, name_lengths, field_limits, max_depth, max_fields, max_inner, max_token):
    """One pass over the bytes ``a`` of a JSON request, building nothing: stops at the
    first nesting deeper than ``max_depth`` or token longer than ``max_token``; a
    container with more items than its limit (``max_fields`` for the request object,
    ``field_limits[key]`` for a list in a field whose name is ``names[key - 1]`` (key 0:
    another field), ``max_inner`` for lists in those) is counted to its end, then
    reported. Returns (code, position, depth, items, key, key start, key end, index of
    the inner list in its field); for a request within the limits (code 0): (0, start and
    end of the list of the last ``runs`` field (-1: none), number of ``runs`` lists, ...).
    Malformed JSON is only noticed, for the parser to describe."""
    n = a.shape[0]
    opener = np.zeros(max_depth + 1, np.int64)
    where = np.zeros(max_depth + 1, np.int64)
    commas = np.zeros(max_depth + 1, np.int64)
    limit = np.zeros(max_depth + 1, np.int64)
    depth = 0
    key = 0
    key_start = -1
    key_end = -1
    index = -1
    over = 0
    run = 0
    started = False
    runs_open = -1
    runs_close = -1
    runs_lists = 0
    in_runs = False
    i = 0
    while i < n:
        c = a[i]
        if c == 32 or c == 10 or c == 13 or c == 9:
            run = 0
        elif c == 34:                                   # a string
            if depth == 0:
                return (_MALFORMED if started else _NOT_OBJECT), i, 0, 0, key, key_start, key_end, index
            start = i
            i += 1
            while i < n and a[i] != 34:
                i += 2 if a[i] == 92 else 1
            if i >= n:
                return _MALFORMED, start, depth, 0, key, key_start, key_end, index
            run = 0
            if depth == 1 and over == 0:                # a field name (or a string value)
                key = 0
                length = i - start - 1
                for k in range(names.shape[0]):
                    if name_lengths[k] == length:
                        same = True
                        for j in range(length):
                            if a[start + 1 + j] != names[k, j]:
                                same = False
                                break
                        if same:
                            key = k + 1
                            break
                key_start = start + 1
                key_end = i
        elif c == 91 or c == 123:                       # [ {
            if depth == 0:
                if started:
                    return _MALFORMED, i, 0, 0, key, key_start, key_end, index
                if c == 91:
                    return _NOT_OBJECT, i, 0, 0, key, key_start, key_end, index
                started = True
            if depth == 2:
                index = commas[2]
            if depth == 1 and key == 2:
                runs_open = i
                runs_lists += 1
                in_runs = True
            depth += 1
            if depth > max_depth:
                return _TOO_DEEP, i, depth, 0, key, key_start, key_end, index
            opener[depth] = c
            where[depth] = i
            commas[depth] = 0
            if depth == 1:
                limit[depth] = max_fields
            elif depth == 2:
                limit[depth] = field_limits[key]
            else:
                limit[depth] = max_inner
            run = 0
        elif c == 93 or c == 125:                       # ] }
            if depth == 0 or opener[depth] != c - 2:
                return _MALFORMED, i, depth, 0, key, key_start, key_end, index
            if over == depth:
                return _TOO_MANY, where[depth], depth, commas[depth] + 1, key, key_start, key_end, index
            if depth == 2 and in_runs:
                runs_close = i
                in_runs = False
            depth -= 1
            run = 0
        elif c == 44:                                   # ,
            if depth == 0:
                return _MALFORMED, i, 0, 0, key, key_start, key_end, index
            commas[depth] += 1
            if over == 0 and commas[depth] + 1 > limit[depth]:
                over = depth                            # count it to its end, then report it
            run = 0
        elif c == 58:                                   # :
            run = 0
        else:                                           # numbers, true, false, null (or junk)
            if depth == 0:
                return (_MALFORMED if started else _NOT_OBJECT), i, 0, 0, key, key_start, key_end, index
            run += 1
            if run > max_token:
                return _TOO_LONG, i - run + 1, depth, run, key, key_start, key_end, index
        i += 1
    if depth != 0 or not started:
        return _MALFORMED, n, depth, 0, key, key_start, key_end, index
    return _OK, runs_open, runs_close, runs_lists, key, key_start, key_end, index


@numba.njit(cache=True, nogil=True)
def _parse_runs(a, start, end, n, top, truncated):
    """The runs of a ``runs`` list (the bytes ``a[start:end + 1]``, brackets included) as
    (True, int8 (m, n) array padded with -1, lengths, -1) when every run is a list of at
    most ``n`` (exactly ``n`` unless ``truncated``) plain integers 0..``top``; (False,
    ..., position of the first run that is not (-1: not found)) at the first thing that
    is not, for the slow path to name (every run before it passed)."""
    m = 0
    for i in range(start + 1, end):
        if a[i] == 91:
            m += 1
    out = np.full((m, n), -1, np.int8)
    lengths = np.zeros(m, np.int64)
    r = -1
    here = -1
    i = start + 1
    while True:
        while i < end and (a[i] == 32 or a[i] == 10 or a[i] == 13 or a[i] == 9):
            i += 1
        if i >= end:
            break                                       # the closing bracket of the list
        if a[i] != 91:
            return False, out, lengths, -1
        r += 1
        here = i
        i += 1
        j = 0
        while True:
            while a[i] == 32 or a[i] == 10 or a[i] == 13 or a[i] == 9:
                i += 1
            if a[i] == 93 and j == 0:
                break
            if a[i] < 48 or a[i] > 57 or j >= n:        # not a digit, or one degree too many
                return False, out, lengths, here
            v = 0
            digits = 0
            while 48 <= a[i] <= 57:
                v = v * 10 + (a[i] - 48)
                digits += 1
                if digits > 3:
                    return False, out, lengths, here
                i += 1
            if v > top or (digits > 1 and a[i - digits] == 48):
                return False, out, lengths, here
            out[r, j] = v
            j += 1
            while a[i] == 32 or a[i] == 10 or a[i] == 13 or a[i] == 9:
                i += 1
            if a[i] == 44:
                i += 1
            elif a[i] == 93:
                break
            else:
                return False, out, lengths, here
        if not truncated and j != n:
            return False, out, lengths, here
        lengths[r] = j
        i += 1                                          # past the run's ]
        while i < end and (a[i] == 32 or a[i] == 10 or a[i] == 13 or a[i] == 9):
            i += 1
        if i < end:
            if a[i] != 44:
                return False, out, lengths, -1
            i += 1
    return r + 1 == m, out, lengths, -1


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
    """Refuse a request body whose shape passes a limit (see Limits in the module
    docstring), before it is parsed: one pass over the bytes, no object built. Returns
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


# -- models (validation and OpenAPI) ----------------------------------------------------
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class RankRequest(BaseModel):
    """Raw values of one measure, or judged runs, to map to unq ranks."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "values": [0.0, 0.25, 1.0]},
        {"measure": "DCG(b=2)@4", "runs": [[1, 0, 1, 0], [0, 0, 0, 1]]},
    ]})

    measure: str = Field(max_length=200, description="Measure name in ir_measures style, e.g. AP@30, RBP(p=0.8)@30, "
                                     "nDCG(b=2)@30 (answers use the canonical spelling).",
                         examples=["AP@30"])
    rb: int | list[int] | None = Field(
        None, description="Recall base of the topic (its number of relevant documents, >= 1): required for "
                          "RB-dependent measures, refused for the others. Graded RB-dependent measures "
                          "(gR, nDCG with gains) take the per-grade counts [c_1, ..., c_G] of the topic's "
                          "judged documents.",
        examples=[12, [3, 2]])
    values: list[FiniteFloat] | None = Field(
        None, fail_fast=True,  # one bad item is reported; a million of them would take seconds
        description="Raw measure values to rank (finite numbers). Give exactly one of values and runs.",
        examples=[[0.0, 0.25, 1.0]])
    runs: list[list[int]] | None = Field(
        None, description="Judged runs to rank exactly: each the list of N relevance degrees r_1..r_N, "
                          "r_1 the top document (measures over truncated rankings, e.g. RBPU: 0 to N "
                          "degrees). Give exactly one of values and runs.",
        examples=[[[1, 0, 1, 0]]])
    rtol: Tolerance | None = Field(None, description="Relative tolerance of value lookups (default 64 ulps).")
    atol: Tolerance | None = Field(None, description="Absolute tolerance of value lookups (default: the "
                                                     "table's certified float error bound).")
    decimals: int | None = Field(None, ge=0, le=17, description="Value lookups of rounded values: the values were "
                                 "rounded to this many decimals (trec_eval prints 4), and each ranks the nearest "
                                 "distinct value when it is the only one within half a unit of the last decimal "
                                 "(or atol, if larger).", examples=[4])


class _RankQuery(RankRequest):
    """:class:`RankRequest` as validated: runs are checked with numpy, not item by item
    (pydantic takes about 0.8 s per million runs of length 8)."""

    runs: list[Any] | None = None


class RankResponse(BaseModel):
    """Unq ranks of the request's values or runs, in request order."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "k": 1094, "rank": [1, 530, 1094], "scaled": [0.0, 0.48490393, 1.0],
         "scale": "exact: table"},
    ]})

    measure: str = Field(max_length=200, description="Canonical measure name.")
    rb: int | list[int] | None = Field(description="The recall base of the request (null for measures without "
                                                   "one; per-grade counts for graded RB-dependent measures).")
    k: int = Field(description="Number of distinct values K: ranks run from 1 to K.")
    rank: list[int] = Field(description="1-based unq rank of each value or run.")
    scaled: list[float] = Field(description="Ranks mapped to [0, 1]: (rank - 1) / (K - 1).")
    scale: str = Field(max_length=40, description="What answered: 'exact: table', 'exact: rank oracle' or "
                                                  "'exact: closed form' (P, R, F1, RR, Rprec at any N, no table "
                                                  "needed).")


class TableInfo(BaseModel):
    """Metadata of one table of the store."""

    measure: str = Field(max_length=200, description="Canonical measure name (use it in POST /v1/rank).")
    rb_counts: list[int] | None = Field(None, description="Graded RB-dependent measures: the per-grade counts "
                                                          "(c_1..c_G, each capped at N) this table serves; null "
                                                          "for the others.")
    family: str = Field(description="Measure family, e.g. AP.")
    params: dict[str, int | str | list[int]] = Field(
        description="Parameter values; probabilities as exact fractions ('4/5'), gains as lists.")
    n: int = Field(description="Cutoff N (run length).")
    rel: list[int] = Field(description="Relevance degrees REL.")
    rb_dependent: bool = Field(description="Whether lookups need the recall base rb.")
    runs: int = Field(description="Runs in the whole run space REL^N.")
    distinct: int = Field(description="Distinct values over the whole run space.")
    distinct_by_rb: list[int] | None = Field(description="Distinct values for rb = 1..N (rb > N as rb = N); "
                                                         "null for measures without recall base.")
    entries: int = Field(description="Stored entries (value, stratum) pairs.")
    implicit: bool = Field(description="Identity table that stores nothing (RBP with p <= 1/2).")
    tie_method: str = Field(description="How ties were decided, e.g. exact-integer, formal-log+mpmath60.")
    error_bound: float = Field(description="Proven float error bound of the computed values.")
    min_gap: float = Field(description="Smallest gap between neighbouring distinct values.")
    min_gap_exact: str = Field(description="The smallest gap: an exact fraction, or decimal digits when irrational.")
    redecided: int = Field(description="Neighbour pairs re-decided in high precision.")
    created: str = Field(description="Creation time of the table (ISO 8601).")
    build_seconds: float | None = Field(description="Build time in seconds (null when unknown).")
    irscale_version: str = Field(description="Version of irscale that built the table.")
    checksum: str = Field(description="sha256 of the table's datasets.")
    names: list[str] = Field(description="The names ir_measures and trec_eval give the measure (nDCG@10, "
                                         "ndcg_cut_10); empty for irscale's own measures.")


class StoreInfo(BaseModel):
    """The store file's format (never its location)."""

    format: str
    format_version: int
    created: str | None
    irscale_version: str | None = Field(description="Version of irscale that wrote the file.")


class TablesResponse(BaseModel):
    """Every table the service answers for."""

    store: StoreInfo
    tables: list[TableInfo]


class HealthResponse(BaseModel):
    """The service is up and answers for this many tables."""

    status: str = Field(examples=["ok"])
    tables: int = Field(description="Number of tables served.")


class ErrorDetail(BaseModel):
    """One request validation problem."""

    loc: str = Field(description="Where in the request, e.g. values[3] or runs[0][2].")
    message: str


class ErrorInfo(BaseModel):
    """What went wrong."""

    type: str = Field(description="Kind of error, e.g. MeasureError, RunError, RequestError.", examples=["RunError"])
    message: str = Field(description="What is wrong, naming the field or the index of the offending item.",
                         examples=["runs[2] has length 7; runs of AP@8 have length N = 8"])
    details: list[ErrorDetail] | None = Field(None, description="Request validation problems (at most 20).")


class ErrorResponse(BaseModel):
    """The shape of every error answer."""

    error: ErrorInfo


class GapHistogram(BaseModel):
    """Histogram of the gaps between consecutive distinct values (every gap, or those
    within windows of consecutive ranks for big scales: see :data:`VIEW_EXACT_VALUES`)."""

    scale: str = Field(description="'log' (bins equally wide in log10 of the gap) or 'linear' (from 0).")
    edges: list[float] = Field(description="Bin edges in value units (bins + 1 of them; empty without positive "
                                           "gaps).")
    counts: list[int] = Field(description="Positive gaps in each bin.")
    zero: int = Field(description="Gaps of 0: neighbouring distinct values float64 cannot tell apart.")
    used: int = Field(description="Gaps counted (zero ones included).")
    total: int = Field(description="Gaps of the scale: K - 1.")
    sampled: bool = Field(description="Whether only the gaps within evenly spaced windows of consecutive ranks "
                                      "were counted (tables too big to read whole for one answer).")
    min: float | None = Field(description="Smallest gap counted (null without gaps).")
    max: float | None = Field(description="Largest gap counted.")
    mean: float | None = Field(description="Mean gap counted.")
    median: float | None = Field(description="Median gap counted.")


class TableViewResponse(BaseModel):
    """A bounded view of one scale: its ranks 1..K cut into at most ``points`` bins of
    consecutive ranks, each with its smallest and largest value (the values at its first
    and last rank: values increase with rank), and a histogram of the gaps."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"measure": "P@4", "rb": None, "k": 5, "n_runs": 16, "points": 5, "exact": True,
         "rank_lo": [1, 2, 3, 4, 5], "rank_hi": [1, 2, 3, 4, 5], "value_lo": [0.0, 0.25, 0.5, 0.75, 1.0],
         "value_hi": [0.0, 0.25, 0.5, 0.75, 1.0],
         "gaps": {"scale": "log", "edges": [0.2228, 0.2805], "counts": [4], "zero": 0, "used": 4, "total": 4,
                  "sampled": False, "min": 0.25, "max": 0.25, "mean": 0.25, "median": 0.25}},
    ]})

    measure: str = Field(max_length=200, description="Canonical measure name.")
    rb: int | list[int] | None = Field(description="The recall base asked for (null for measures without one).")
    k: int = Field(description="Number of distinct values K.")
    n_runs: int = Field(description="Runs (feasible for rb) the scale covers.")
    points: int = Field(description="Bins of consecutive ranks: min(points asked, K).")
    exact: bool = Field(description="Every rank has a bin of its own (K <= points).")
    rank_lo: list[int] = Field(description="First rank of each bin.")
    rank_hi: list[int] = Field(description="Last rank of each bin.")
    value_lo: list[float] = Field(description="Smallest value of each bin (the value of rank_lo).")
    value_hi: list[float] = Field(description="Largest value of each bin (the value of rank_hi).")
    gaps: GapHistogram


# -- the lookups -------------------------------------------------------------------------
def _loc(loc: tuple) -> str:
    """('runs', 0, 2) -> 'runs[0][2]'."""
    return "".join(f"[{part}]" if isinstance(part, int) else (f".{part}" if i else str(part))
                   for i, part in enumerate(loc)) or "body"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _validation_error(error: ValidationError) -> RequestError:
    """A pydantic validation error as a RequestError whose message names the first
    problem; ``details`` lists the first :data:`MAX_DETAILS`."""
    fields = ", ".join(RankRequest.model_fields)
    details = []
    problems, count = [], 0
    for problem in error.errors():
        if problem["loc"][:1] == ("rb",) and len(problem["loc"]) > 1 and problem["loc"][1] in ("int", "list[int]"):
            # one message for both branches of rb's type (an integer, or a list of per-grade counts)
            if any(p["loc"] == ("rb",) for p in problems):
                continue
            problem = {"loc": ("rb",), "type": "rb", "input": problem["input"],
                       "msg": "Input should be a valid integer (or, for graded measures, a list of per-grade counts)"}
        problems.append(problem)
    count = len(problems)
    for problem in problems[:MAX_DETAILS]:
        loc = _loc(problem["loc"])
        if problem["type"] == "extra_forbidden":
            message = f"unknown field {loc!r} (the fields are {fields})"
        elif problem["type"] == "missing":
            message = "field required"
        else:
            message = f"{problem['msg']}, got {_short(problem['input'])}"
        details.append({"loc": loc, "message": message})
    more = count - 1
    first = details[0]
    return RequestError(f"{first['loc']}: {first['message']}"
                        + (f" (and {more} more problem{'s' * (more > 1)})" if more else ""), details)


def _table_info(meta: dict) -> dict:
    measure = parse_measure(meta["measure"])
    build_seconds = meta.get("build_seconds", -1)
    return {
        "measure": str(measure), "rb_counts": None if meta.get("rb_counts") is None else list(meta["rb_counts"]),
        "family": measure.name, "params": pydantic_core.from_json(meta.get("params", "{}")),
        "n": measure.n, "rel": pydantic_core.from_json(meta["rel"]), "rb_dependent": measure.rb_dependent,
        "runs": meta["n_runs"], "distinct": meta["n_distinct"],
        "distinct_by_rb": pydantic_core.from_json(meta["distinct_by_rb"]) or None,
        "entries": meta["n_entries"], "implicit": bool(meta.get("implicit", False)),
        "tie_method": meta["tie_method"], "error_bound": meta["error_bound"], "min_gap": meta["min_gap"],
        "min_gap_exact": str(meta["min_gap_exact"]), "redecided": meta.get("redecided", 0),
        "created": meta["created"], "build_seconds": build_seconds if build_seconds >= 0 else None,
        "irscale_version": meta["generator_version"], "checksum": meta["checksum"],
        "names": names_of(measure),
    }


def runs_array(runs: list, measure: Measure, first: int = 0) -> np.ndarray:
    """Judged runs of a request (a list of lists, as parsed from JSON) as the array
    :meth:`~irscale.scales.tables.scale.Scale.rank_runs` takes, checked in bulk and
    stopping at the first bad run: every run a list, of length N (at most N for
    measures over truncated rankings, which are padded here with their end marker),
    every degree an integer in 0..G (booleans, floats, strings and negative numbers
    refused). Raises :class:`~irscale.errors.RunError` naming the run (and item), ``runs[i
    + first]`` for the run at index i of ``runs``."""
    n, top = measure.n, measure.levels - 1
    truncated = measure.run_space == "truncated"
    m = len(runs)
    if m == 0:
        return np.zeros((0, n), np.uint8)
    if set(map(type, runs)) != {list}:
        i = next(i for i, r in enumerate(runs) if type(r) is not list)
        raise RunError(f"runs[{i + first}] must be a list of relevance degrees, got {_short(runs[i])}")
    lengths = np.fromiter(map(len, runs), np.int64, m)
    bad = np.flatnonzero(lengths > n if truncated else lengths != n)
    if bad.size:
        i = int(bad[0])
        if truncated:
            raise RunError(f"runs[{i + first}] has {lengths[i]} degrees; rankings of {measure} have at most N = {n}")
        raise RunError(f"runs[{i + first}] has length {lengths[i]}; runs of {measure} have length N = {n}")
    total = int(lengths.sum())
    if set(map(type, itertools.chain.from_iterable(runs))) - {int}:
        for i, run in enumerate(runs):
            for j, g in enumerate(run):
                if type(g) is not int:
                    raise RunError(f"runs[{i + first}][{j}]: relevance degrees must be integers, got {_short(g)}")
    try:
        flat = np.fromiter(itertools.chain.from_iterable(runs), np.int64, total)
    except OverflowError:       # an integer beyond 64 bits: certainly outside REL
        flat = np.fromiter((g if -1 <= g <= top + 1 else -1 for g in itertools.chain.from_iterable(runs)),
                           np.int64, total)
    bad = np.flatnonzero((flat < 0) | (flat > top))
    if bad.size:
        k = int(bad[0])
        ends = np.cumsum(lengths)
        i = int(np.searchsorted(ends, k, side="right"))
        j = k - int(ends[i] - lengths[i])
        g = runs[i][j]
        raise RunError(f"runs[{i + first}]: degree {_short(g)} at rank {j + 1} is outside REL = {{0..{top}}}"
                       + (" (a ranking ends where its list ends)" if truncated and g < 0 else ""))
    if not truncated:
        return flat.astype(np.uint8).reshape(m, n)
    out = np.full((m, n), -1, np.int8)              # -1: after the end of a ranking (irscale's marker)
    out[np.arange(n)[None, :] < lengths[:, None]] = flat
    return out


def _resident_anonymous_bytes(pid: int) -> int | None:
    """Anonymous resident memory of a process (heap, not mapped table pages), from
    /proc (None where there is none)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class LookupService:
    """The lookups behind the HTTP API, on a snapshot of a store's tables.

    Parameters
    ----------
    store : str, path or Store
        The table file (opened read-only) or an open store.
    max_items : int
        Most values or runs answered in one request.

    Every table is opened (memory-mapped) and its lookup structures prepared here, so
    requests never touch the file system (tables per recall-base vector excepted) and the
    first one is as fast as the others. Methods are thread-safe; scales are cached per
    (measure, rb).
    """

    def __init__(self, store: str | os.PathLike | Store, max_items: int = DEFAULT_MAX_ITEMS):
        self.store = store if isinstance(store, Store) else open_store(store)
        self.max_items = int(max_items)
        self.tables: dict[str, dict] = {}
        for meta in self.store.tables():
            try:
                info = _table_info(meta)
            except MeasureError as e:  # a family this irscale does not know
                log.warning("skipping table %s: %s", meta["measure"], e)
                continue
            self.tables[meta["name"]] = info
        self.measures = {info["measure"] for info in self.tables.values()}
        if not self.tables:
            raise StoreError(f"{self.store.path} holds no table to serve; build some with 'irscale build'")
        attrs = self.store.attrs
        self.store_info = {"format": attrs.get("format"), "format_version": attrs.get("format_version"),
                           "created": attrs.get("created"), "irscale_version": attrs.get("generator_version")}
        path = Path(self.store.path)
        #: what must never appear in an answer: the store's location (longest first)
        secrets = {str(path.resolve()), str(path.resolve().parent) + os.sep}
        if os.sep in str(path):     # a bare file name is no location (and may be a word of a message)
            secrets |= {str(path), str(path.parent) + os.sep}
        self._secrets = sorted(secrets - {os.sep}, key=len, reverse=True)
        self.scale = functools.lru_cache(maxsize=SCALE_CACHE_SIZE)(self._open_scale)
        self.view = functools.lru_cache(maxsize=VIEW_CACHE_SIZE)(self._view)
        for info in self.tables.values():
            rb = info["rb_counts"] if info["rb_counts"] is not None else (1 if info["rb_dependent"] else None)
            self.scale(info["measure"], tuple(rb) if isinstance(rb, list) else rb)
        prescan(b"{}", self.max_items)      # compiles (or loads) the scan before the first request

    def _open_scale(self, measure: str, rb):
        with warnings.catch_warnings():     # a name read as the store's table: the answer names the measure
            warnings.simplefilter("ignore", IrscaleWarning)
            m = read_stored(measure, self.measures, rb)
        if str(m) not in self.measures and m.closed_form() is None:    # closed forms need no table
            raise TableNotFoundError(f"this store has no table {m}; available tables: {', '.join(self.tables)}")
        try:
            return self.store.scale(m, rb)
        except TableNotFoundError:      # a table per recall-base vector (the reader's message names the file)
            try:
                vec = "(" + ",".join(map(str, m.table_rb(m.check_rb(rb)))) + ")"
            except (IrscaleError, TypeError, ValueError):
                vec = str(rb)
            have = ", ".join("(" + ",".join(map(str, info["rb_counts"])) + ")" for info in self.tables.values()
                             if info["measure"] == str(m) and info["rb_counts"] is not None)
            raise TableNotFoundError(
                f"this store has no table {m} for the per-grade counts {vec}"
                + (f" (it has {m} for {have})" if have else "")
                + f"; create it with: irscale build --measures \"{m}\" --rb \"{vec}\" --out STORE") from None

    def scrub(self, message: str) -> str:
        """``message`` without the store's location (its path becomes "this store")."""
        for secret in self._secrets:
            message = message.replace(secret, "" if secret.endswith(os.sep) else "this store")
        return message

    def answer(self, body: bytes) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a POST /v1/rank body: the answer, or the error of a bad
        request, or a 500 error (logged) for a bug; never raises."""
        return self._guarded(lambda: self.rank_body(body), "POST /v1/rank", "the request", "split the batch")

    def _guarded(self, work, route: str, what: str, advice: str) -> tuple[int, bytes]:
        """(HTTP status, JSON) of ``work()``: 200 and its JSON, the error of a bad request,
        413 when it runs out of memory, or a 500 error (logged) for a bug; never raises."""
        try:
            return 200, work()
        except IrscaleError as e:
            return status_of(e), error_body(type(e).__name__, self.scrub(str(e)), getattr(e, "details", None))
        except MemoryError:
            return 413, error_body("PayloadTooLargeError", f"{what} needs more memory than this service has; {advice}")
        except Exception:
            log.exception(f"internal error answering {route}")
            return 500, error_body("InternalError", "internal server error (a bug in irscale)")

    def rank_body(self, body: bytes) -> bytes:
        """Answer a POST /v1/rank body (JSON bytes) with the JSON of a RankResponse;
        raises an IrscaleError for a bad request (see :meth:`answer`)."""
        if not body.strip():
            raise InvalidJSONError("the request body is empty; send a JSON object like "
                                   '{"measure": "AP@10", "rb": 5, "values": [0.5]}')
        span = prescan(body, self.max_items)
        # the runs (nearly all of a big request) are read by a kernel straight from the bytes
        # when they are plain lists of small integers; anything else takes the slow path,
        # which names the problem
        fast = span is not None and span[1] - span[0] > 1024
        try:
            request = pydantic_core.from_json(body[:span[0]] + b"[]" + body[span[1] + 1:] if fast else body)
        except ValueError as e:
            raise InvalidJSONError(f"the request body is not valid JSON: {e}") from None
        if not isinstance(request, dict):
            raise _not_an_object()
        if fast:
            runs = self._fast_runs(body, span, request)
            if runs is not None:
                return self._answer(request, runs)
            request = pydantic_core.from_json(body)
        return self._answer(request, None)

    def _fast_runs(self, body: bytes, span: tuple[int, int], request: dict) -> np.ndarray | RunError | None:
        """The runs of ``body`` read by :func:`_parse_runs` for the measure of ``request``;
        the RunError naming the first bad run; or None when the kernel cannot tell (the
        slow path then parses and checks them all)."""
        measure = request.get("measure")
        if not isinstance(measure, str) or measure.strip() == "":
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IrscaleWarning)
                m = read_stored(measure, self.measures, request.get("rb") if isinstance(request.get("rb"),
                                                                                        (int, list)) else None)
        except (IrscaleError, TypeError, ValueError):
            return None
        ok, out, lengths, bad = _parse_runs(np.frombuffer(body, np.uint8), span[0], span[1], m.n, m.levels - 1,
                                            m.run_space == "truncated")
        if not ok:
            return self._first_bad_run(body, span[0], bad, m)
        if out.shape[0] > self.max_items:
            raise PayloadTooLargeError(f"{out.shape[0]} runs in one request; this service answers at most "
                                       f"{self.max_items} per request: split the batch")
        return out if m.run_space == "truncated" else out.view(np.uint8)

    @staticmethod
    def _first_bad_run(body: bytes, opening: int, start: int, measure: Measure) -> RunError | None:
        """The RunError of the run whose list starts at byte ``start`` of the ``runs`` list
        opened at byte ``opening`` (every run before it passed the kernel, so each is one
        flat list), found by the slow checks on that run alone; None when that run cannot
        be isolated or passes them (the slow path then checks every run)."""
        if start < 0:
            return None
        end = body.find(b"]", start)
        try:
            run = pydantic_core.from_json(body[start:end + 1])
        except ValueError:
            return None
        index = body.count(b"[", opening + 1, start)
        try:
            runs_array([run], measure, first=index)
        except RunError as e:
            return e
        return None

    def _answer(self, request: dict, runs: np.ndarray | RunError | None) -> bytes:
        """The answer to a parsed request (``runs``: already read as an array, or the
        error of its first bad run; its ``runs`` field then holds an empty list)."""
        for field in ("values", "runs"):  # checked by the scan already; kept for direct callers
            items = request.get(field)
            if isinstance(items, list) and len(items) > self.max_items:
                raise PayloadTooLargeError(f"{len(items)} {field} in one request; this service answers at most "
                                           f"{self.max_items} per request: split the batch")
        try:
            query = _RankQuery.model_validate(request)
        except ValidationError as e:
            raise _validation_error(e) from None
        if (query.values is None) == (query.runs is None):
            raise RequestError("give exactly one of values (raw measure values) and runs (judged runs)")
        if query.runs is not None and (query.rtol is not None or query.atol is not None or query.decimals is not None):
            raise RequestError("rtol, atol and decimals apply to value lookups only; runs are ranked exactly")
        scale = self.scale(query.measure, tuple(query.rb) if isinstance(query.rb, list) else query.rb)
        if query.values is not None:
            ranks = self._rank_values(scale, np.array(query.values, dtype=np.float64), query.rtol, query.atol,
                                      query.decimals)
        elif isinstance(runs, RunError):
            raise runs
        elif runs is not None:
            ranks = scale.rank_runs(runs) if runs.shape[0] else np.zeros(0, np.int64)
        elif query.runs:
            ranks = scale.rank_runs(runs_array(query.runs, scale.measure))
        else:
            ranks = np.zeros(0, np.int64)
        rb = list(scale.rb) if isinstance(scale.rb, tuple) else scale.rb
        return pydantic_core.to_json({"measure": str(scale.measure), "rb": rb, "k": scale.k,
                                      "rank": ranks.tolist(), "scaled": scale.scaled(ranks).tolist(),
                                      "scale": kind_of_scale(scale)})

    @staticmethod
    def _rank_values(scale, values: np.ndarray, rtol: float | None, atol: float | None,
                     decimals: int | None = None) -> np.ndarray:
        """Ranks of a batch of values; ValueNotInScaleError names the first rejected index.
        Values below the smallest or above the largest value of the scale by more than the
        tolerance are refused here too (whatever the layout's lookup makes of them)."""
        rtol = RTOL if rtol is None else rtol
        ranks = scale.rank(values, rtol=rtol, atol=atol, errors="zero", decimals=decimals)
        if values.size:
            lo, hi = (float(v) for v in scale.values_of_ranks(np.array([1, scale.k])))
            tol = (scale._default_atol() if atol is None else atol) + rtol * np.abs(values)
            if decimals is not None:
                tol = np.maximum(tol, 0.5 * 10.0 ** -decimals)
            ranks = np.where((values < lo - tol) | (values > hi + tol), 0, ranks)
        rejected = np.flatnonzero(ranks == 0)
        if rejected.size:
            i = int(rejected[0])
            x = float(values[i])
            if x < lo - tol[i] or x > hi + tol[i]:
                side, end = ("below", "smallest") if x < lo else ("above", "largest")
                raise ValueNotInScaleError(f"values[{i}]: {x!r} is not a value of {scale._label()} ({side} its "
                                           f"{end} value {lo if x < lo else hi!r})")
            try:
                scale.rank(values[i:i + 1], rtol=rtol, atol=atol, decimals=decimals)
            except ValueNotInScaleError as e:
                hint = ("" if decimals is not None or "ambiguous" in str(e) else
                        "; a value rounded as trec_eval prints it (0.3333) ranks with decimals: 4")
                raise ValueNotInScaleError(f"values[{i}]: {e}{hint}") from None
            raise ValueNotInScaleError(f"values[{i}]: {values[i]!r} is not a value of {scale.measure}")
        return ranks

    # -- GET /v1/table ------------------------------------------------------------------
    def answer_view(self, query: bytes) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a GET /v1/table whose parameters, checked by
        :func:`view_params`, are the JSON object ``query``: the view, or the error of a
        bad request, or a 500 error (logged) for a bug; never raises."""
        def work() -> bytes:
            params = pydantic_core.from_json(query)
            rb = params["rb"]
            return self.view(params["measure"], tuple(rb) if isinstance(rb, list) else rb, params["points"],
                             params["bins"], params["gaps"])
        return self._guarded(work, "GET /v1/table", "the view", "ask for fewer points")

    def _view(self, measure: str, rb, points: int, bins: int, gaps: str) -> bytes:
        """The JSON of a :class:`TableViewResponse` (cached by :attr:`view`): the values at
        the first and last rank of ``min(points, K)`` bins of consecutive ranks, read with
        :meth:`~irscale.scales.tables.scale.Scale.values_of_ranks` (a few pages of the
        table per rank), and the histogram of the gaps (:meth:`_gap_histogram`)."""
        scale = self.scale(measure, rb)
        k = int(scale.k)
        m = min(points, k)
        cuts = (np.arange(m + 1, dtype=np.int64) * k) // m      # bin i: ranks cuts[i] + 1 .. cuts[i + 1]
        lo, hi = cuts[:-1] + 1, cuts[1:]
        values = scale.values_of_ranks(np.concatenate([lo, hi]))
        rb = list(scale.rb) if isinstance(scale.rb, tuple) else scale.rb
        return pydantic_core.to_json({
            "measure": str(scale.measure), "rb": rb, "k": k, "n_runs": int(scale.n_runs), "points": m,
            "exact": m == k, "rank_lo": lo.tolist(), "rank_hi": hi.tolist(), "value_lo": values[:m].tolist(),
            "value_hi": values[m:].tolist(), "gaps": self._gap_histogram(scale, bins, gaps)})

    @staticmethod
    def _gap_histogram(scale, bins: int, kind: str) -> dict:
        """The histogram of the gaps between consecutive distinct values of ``scale`` (see
        :class:`GapHistogram`). Every gap when K <= :data:`GAP_WINDOWS` *
        :data:`GAP_WINDOW` (each value located with
        :meth:`~irscale.scales.tables.scale.Scale.values_of_ranks`) or when the table has
        at most :data:`VIEW_EXACT_VALUES` entries (streamed once with
        :meth:`~irscale.scales.tables.scale.Scale.value_blocks`; the table of a small
        recall base may hold few values among many entries), else the gaps within
        :data:`GAP_WINDOWS` evenly spaced windows of :data:`GAP_WINDOW` consecutive ranks."""
        k = int(scale.k)
        sampled = False
        if k <= GAP_WINDOWS * GAP_WINDOW:
            gaps = np.diff(scale.values_of_ranks(np.arange(1, k + 1, dtype=np.int64)))
        elif int(scale.table.n_entries) > VIEW_EXACT_VALUES:
            sampled = True
            starts = np.linspace(1, k - GAP_WINDOW + 1, GAP_WINDOWS).astype(np.int64)
            ranks = (starts[:, None] + np.arange(GAP_WINDOW, dtype=np.int64)[None, :]).reshape(-1)
            gaps = np.diff(scale.values_of_ranks(ranks).reshape(GAP_WINDOWS, GAP_WINDOW), axis=1).reshape(-1)
        else:
            parts, last = [], None
            for block, _ in scale.value_blocks():
                if block.size:
                    parts.append(np.diff(block) if last is None else np.diff(block, prepend=last))
                    last = block[-1]
            gaps = np.concatenate(parts) if parts else np.zeros(0)
        positive = gaps[gaps > 0]
        edges: np.ndarray = np.zeros(0)
        counts: np.ndarray = np.zeros(0, np.int64)
        if positive.size:
            if kind == "log":
                a, b = float(np.log10(positive.min())), float(np.log10(positive.max()))
                if b - a < 1e-3:        # (nearly) equal gaps: one decade-tenth around them
                    a, b = (a + b) / 2 - 0.05, (a + b) / 2 + 0.05
                counts, log_edges = np.histogram(np.log10(positive), bins=bins, range=(a, b))
                edges = 10.0 ** log_edges
            else:
                counts, edges = np.histogram(positive, bins=bins, range=(0.0, float(positive.max())))
        stats = ((float(gaps.min()), float(gaps.max()), float(gaps.mean()), float(np.median(gaps)))
                 if gaps.size else (None, None, None, None))
        return {"scale": kind, "edges": edges.tolist(), "counts": counts.tolist(),
                "zero": int(gaps.size - positive.size), "used": int(gaps.size), "total": k - 1, "sampled": sampled,
                **dict(zip(("min", "max", "mean", "median"), stats))}


def _view_integer(name: str, text: str, lo: int, hi: int) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or not lo <= int(text) <= hi:
        raise RequestError(f"{name} must be an integer {lo}..{hi}, got {_short(text)}",
                           [{"loc": name, "message": f"an integer {lo}..{hi}"}])
    return int(text)


def view_params(items: list[tuple[str, str]]) -> dict:
    """The parameters of GET /v1/table (query items ``(name, value)``) checked and typed:
    ``measure`` (required), ``rb`` (``5``, or per-grade counts ``3,2``; brackets or
    parentheses allowed), ``points`` (2..:data:`MAX_VIEW_POINTS`), ``bins``
    (1..:data:`MAX_GAP_BINS`), ``gaps`` (``log`` or ``linear``). Raises
    :class:`RequestError` (422) naming the first bad parameter: unknown or repeated,
    missing measure, a value of the wrong kind or range."""
    given: dict[str, str] = {}
    for name, value in items:
        if name not in VIEW_PARAMETERS:
            raise RequestError(f"unknown parameter {_short(name)} (the parameters are {', '.join(VIEW_PARAMETERS)})",
                               [{"loc": name[:40], "message": "unknown parameter"}])
        if name in given:
            raise RequestError(f"parameter {name!r} given twice", [{"loc": name, "message": "given twice"}])
        given[name] = value
    measure = given.get("measure", "").strip()
    if not measure:
        raise RequestError("measure: parameter required, e.g. /v1/table?measure=AP@10&rb=5",
                           [{"loc": "measure", "message": "parameter required"}])
    if len(measure) > 200:
        raise RequestError("measure: at most 200 characters", [{"loc": "measure", "message": "too long"}])
    rb: int | list[int] | None = None
    text = given.get("rb", "").strip()
    if text:
        inner = text[1:-1] if text[:1] + text[-1:] in ("()", "[]") else text
        parts = [part.strip() for part in inner.split(",")]
        if parts[-1] == "" and len(parts) > 1:      # "(3,)"
            parts.pop()
        if len(parts) > MAX_RB_ITEMS or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
            raise RequestError(f"rb must be an integer (the topic's recall base) or per-grade counts like 3,2; "
                               f"got {_short(text)}", [{"loc": "rb", "message": "an integer or counts like 3,2"}])
        counts = [int(p) for p in parts]
        rb = counts if len(counts) > 1 or inner != text else counts[0]
    gaps = given.get("gaps", "log")
    if gaps not in ("log", "linear"):
        raise RequestError(f"gaps must be 'log' or 'linear', got {_short(gaps)}",
                           [{"loc": "gaps", "message": "'log' or 'linear'"}])
    return {"measure": measure, "rb": rb,
            "points": _view_integer("points", given.get("points", str(DEFAULT_VIEW_POINTS)), 2, MAX_VIEW_POINTS),
            "bins": _view_integer("bins", given.get("bins", str(DEFAULT_GAP_BINS)), 1, MAX_GAP_BINS),
            "gaps": gaps}


# -- HTTP --------------------------------------------------------------------------------
class _BodyTooLarge(Exception):  # noqa: N818  (a signal inside the middleware, never shown)
    """Raised into the application when a streamed body passes the limit."""


class BodySizeLimit:
    """Pure ASGI middleware answering 413 to HTTP requests whose body is larger than
    ``max_body_bytes``: by the Content-Length header before the body is read, and by
    counting the bytes of a streamed (chunked) body as the application receives it."""

    def __init__(self, app, max_body_bytes: int):
        self.app = app
        self.max_body_bytes = int(max_body_bytes)

    async def _refuse(self, send) -> None:
        payload = error_body("PayloadTooLargeError",
                             f"the request body is larger than this service accepts "
                             f"({self.max_body_bytes} bytes); split the batch")
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(payload)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": payload})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._refuse(send)
            return
        received = 0
        started = False

        async def counting_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise _BodyTooLarge
            return message

        async def watching_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except _BodyTooLarge:
            if started:
                raise
            await self._refuse(send)


# -- where the work is done: worker processes, or threads of this process ------------------
#: Seconds a worker process may take to start (import, open the store, prepare scales).
WORKER_START_SECONDS = 120.0
#: How often the time and memory of a working worker are checked, in seconds.
_WATCH_SECONDS = 0.05
#: What a worker is asked (the first of the two messages of a request): a POST /v1/rank
#: body, or the checked parameters of a GET /v1/table (JSON, :func:`view_params`).
_RANK, _VIEW = b"rank", b"view"


def _worker_main(conn, store_path: str, max_items: int) -> None:
    """A worker process: opens the store, says it is ready, then answers requests (each
    two messages: :data:`_RANK` or :data:`_VIEW`, then the body or the view's parameters)
    with the status as 2 bytes, then the JSON, until its pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # the server stops its workers itself
    try:
        service = LookupService(store_path, max_items=max_items)
    except BaseException as e:  # reported to the parent, which raises it
        conn.send_bytes(b"E" + str(e).encode())
        return
    conn.send_bytes(b"R")
    while True:
        try:
            kind = conn.recv_bytes()
            body = conn.recv_bytes()
        except (EOFError, OSError):
            return
        status, payload = service.answer_view(body) if kind == _VIEW else service.answer(body)
        try:
            conn.send_bytes(status.to_bytes(2, "big") + payload)
        except OSError:
            return


class _Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, ctx, args: tuple):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker_main, args=(child, *args), daemon=True, name="irscale-worker")
        self.process.start()
        child.close()

    def send(self, kind: bytes, body: bytes) -> None:
        self.conn.send_bytes(kind)
        self.conn.send_bytes(body)

    def wait_ready(self, timeout: float) -> None:
        if not self.conn.poll(timeout):
            self.kill()
            raise StoreError(f"a worker process of the service did not start within {timeout:.0f} s")
        try:
            message = self.conn.recv_bytes()
        except (EOFError, OSError):
            message = b"Ea worker process of the service exited while starting"
        if message != b"R":
            self.kill()
            raise StoreError(message[1:].decode("utf-8", "replace"))

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


class _Overrun(Exception):  # noqa: N818  (turned into a 413 answer)
    """A worker passed the time or memory budget of its request."""


class WorkerPool:
    """Worker processes that parse and rank request bodies, so that the server's event
    loop (and its interpreter lock) stays free for other requests; each request has a
    time and memory budget, beyond which its worker is killed and replaced.

    Parameters
    ----------
    store_path : path
        The store each worker opens.
    size : int
        Number of worker processes (requests worked on at once).
    max_items : int
        Most values or runs in one request.
    time_budget : float
        Seconds a worker may work on one request.
    memory_budget : int
        Anonymous resident memory (bytes) a worker may reach.
    queue_timeout : float
        Seconds a request may wait for a free worker (then 503).
    """

    def __init__(self, store_path: str | os.PathLike, size: int = DEFAULT_WORKERS, max_items: int = DEFAULT_MAX_ITEMS,
                 time_budget: float = DEFAULT_TIME_BUDGET, memory_budget: int = DEFAULT_MEMORY_BUDGET,
                 queue_timeout: float = DEFAULT_QUEUE_TIMEOUT):
        self._ctx = multiprocessing.get_context("spawn")
        self._args = (str(store_path), int(max_items))
        self.time_budget, self.memory_budget, self.queue_timeout = time_budget, memory_budget, queue_timeout
        self._closed = False
        self._tasks: set = set()
        workers = [_Worker(self._ctx, self._args) for _ in range(max(1, int(size)))]
        try:
            for worker in workers:
                worker.wait_ready(WORKER_START_SECONDS)
        except BaseException:
            for worker in workers:
                worker.kill()
            raise
        self._idle = workers
        self._all = set(workers)
        self._slots = asyncio.Semaphore(len(workers))

    def _start(self) -> _Worker:
        worker = _Worker(self._ctx, self._args)
        worker.wait_ready(WORKER_START_SECONDS)
        return worker

    async def _replace(self) -> None:
        """Start a worker for one that was killed, then free its slot."""
        loop = asyncio.get_running_loop()
        try:
            while not self._closed:
                try:
                    worker = await loop.run_in_executor(None, self._start)
                except Exception:
                    log.exception("cannot start a worker process; trying again")
                    await asyncio.sleep(1)
                    continue
                if self._closed:
                    worker.kill()
                else:
                    self._all.add(worker)
                    self._idle.append(worker)
                return
        finally:
            self._slots.release()

    async def answer(self, body: bytes, kind: bytes = _RANK) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a POST /v1/rank body (or, ``kind`` :data:`_VIEW`, of the
        parameters of a GET /v1/table), worked on by a worker process.

        Raises
        ------
        ServiceBusyError
            No worker became free within ``queue_timeout`` seconds.
        PayloadTooLargeError
            The request passed its time or memory budget.
        """
        try:
            await asyncio.wait_for(self._slots.acquire(), self.queue_timeout)
        except asyncio.TimeoutError:
            raise ServiceBusyError(f"every worker of this service has been busy for {self.queue_timeout:g} s; "
                                   f"retry later") from None
        worker = self._idle.pop()
        try:
            result = await self._exchange(worker, body, kind)
        except BaseException as e:
            self._all.discard(worker)
            worker.kill()
            task = asyncio.get_running_loop().create_task(self._replace())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            if isinstance(e, _Overrun):
                raise PayloadTooLargeError(str(e) if kind == _RANK else
                                           str(e).replace("split the batch", "ask for fewer points")) from None
            if isinstance(e, (EOFError, OSError)):
                log.error("a worker process died while answering a request (exit code %s)", worker.process.exitcode)
                return 500, error_body("InternalError", "internal server error (a worker process died; a bug in "
                                                        "irscale)")
            raise
        self._idle.append(worker)
        self._slots.release()
        return result

    async def _exchange(self, worker: _Worker, body: bytes, kind: bytes = _RANK) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        start = time.monotonic()
        await loop.run_in_executor(None, worker.send, kind, body)
        ready = asyncio.Event()
        fd = worker.conn.fileno()
        loop.add_reader(fd, ready.set)
        try:
            while not ready.is_set():
                try:
                    await asyncio.wait_for(ready.wait(), _WATCH_SECONDS)
                    break
                except asyncio.TimeoutError:
                    pass
                if time.monotonic() - start > self.time_budget:
                    raise _Overrun(f"the request took more than {self.time_budget:g} s, the time budget of one "
                                   f"request of this service: split the batch")
                used = _resident_anonymous_bytes(worker.process.pid)
                if used is not None and used > self.memory_budget:
                    raise _Overrun(f"the request needed more than {self.memory_budget / 2 ** 20:.0f} MiB, the "
                                   f"memory budget of one request of this service: split the batch")
        finally:
            loop.remove_reader(fd)
        data = await loop.run_in_executor(None, worker.conn.recv_bytes)
        return int.from_bytes(data[:2], "big"), data[2:]

    def close(self) -> None:
        """Stop every worker (idle ones end when their pipe closes)."""
        self._closed = True
        for worker in list(self._all):
            worker.conn.close()
        for worker in list(self._all):
            worker.process.join(2)
            worker.kill()
        self._all.clear()


class _Threads:
    """Answers in threads of this process (no budget; :func:`create_app` without workers)."""

    def __init__(self, service: LookupService, size: int = DEFAULT_WORKERS):
        self.service = service
        self._slots = asyncio.Semaphore(size)

    async def answer(self, body: bytes, kind: bytes = _RANK) -> tuple[int, bytes]:
        async with self._slots:
            return await run_in_threadpool(self.service.answer_view if kind == _VIEW else self.service.answer, body)

    def close(self) -> None:
        pass


class _Intake:
    """Request bodies held at once: at most ``max_bytes`` bytes (received, waiting or being
    answered), and at most ``max_pending`` whole bodies waiting or being answered; beyond
    either, ServiceBusyError (503). A slow client holds only what it has sent."""

    def __init__(self, max_bytes: int, max_pending: int):
        self.max_bytes, self.max_pending = max_bytes, max_pending
        self.bytes = 0
        self.pending = 0

    def take(self, size: int) -> None:
        if self.bytes + size > self.max_bytes:
            raise ServiceBusyError(f"this service is holding {self.max_bytes // 2 ** 20} MiB of requests already; "
                                   f"retry later")
        self.bytes += size


async def _read_body(request: Request, intake: _Intake, total: float, idle: float) -> bytes:
    """The request body, counted against ``intake`` as it arrives (the caller gives the
    bytes back); it must arrive within ``total`` seconds with no pause longer than
    ``idle`` (else RequestTimeoutError)."""
    deadline = time.monotonic() + total
    chunks = []
    stream = request.stream().__aiter__()
    while True:
        wait = min(idle, deadline - time.monotonic())
        try:
            if wait <= 0:
                raise asyncio.TimeoutError
            chunk = await asyncio.wait_for(stream.__anext__(), wait)
        except StopAsyncIteration:
            return b"".join(chunks)
        except asyncio.TimeoutError:
            raise RequestTimeoutError(f"the request body did not arrive in time (this service waits {total:g} s "
                                      f"for a body, {idle:g} s for each part of it)") from None
        intake.take(len(chunk))
        request.state.held = getattr(request.state, "held", 0) + len(chunk)
        chunks.append(chunk)


_ERRORS = {status: {"model": ErrorResponse} for status in (400, 404, 408, 413, 422, 503)}
_VIEW_OPENAPI_PARAMETERS = [
    {"name": "measure", "in": "query", "required": True, "schema": {"type": "string", "maxLength": 200},
     "description": "Measure name, e.g. AP@30 (as listed by GET /v1/tables).", "example": "AP@10"},
    {"name": "rb", "in": "query", "required": False, "schema": {"type": "string"},
     "description": "Recall base: required for RB-dependent measures, refused for the others; per-grade counts "
                    "as 3,2 for graded RB-dependent measures."},
    {"name": "points", "in": "query", "required": False,
     "schema": {"type": "integer", "minimum": 2, "maximum": MAX_VIEW_POINTS, "default": DEFAULT_VIEW_POINTS},
     "description": "Bins of consecutive ranks (each answered with its smallest and largest value)."},
    {"name": "bins", "in": "query", "required": False,
     "schema": {"type": "integer", "minimum": 1, "maximum": MAX_GAP_BINS, "default": DEFAULT_GAP_BINS},
     "description": "Bins of the gap histogram."},
    {"name": "gaps", "in": "query", "required": False,
     "schema": {"type": "string", "enum": ["log", "linear"], "default": "log"},
     "description": "Gap histogram bins equally wide in log10 of the gap, or linear from 0."},
]


def create_app(store: str | os.PathLike | Store, max_items: int = DEFAULT_MAX_ITEMS,
               max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, *, workers: int = 0,
               time_budget: float = DEFAULT_TIME_BUDGET, memory_budget: int = DEFAULT_MEMORY_BUDGET,
               queue_timeout: float = DEFAULT_QUEUE_TIMEOUT, max_pending: int = DEFAULT_MAX_PENDING,
               max_buffered_bytes: int | None = None, body_timeout: float = DEFAULT_BODY_TIMEOUT,
               idle_timeout: float = DEFAULT_IDLE_TIMEOUT) -> FastAPI:
    """The lookup service as an ASGI application (see the module docstring).

    Parameters
    ----------
    store : str, path or Store
        Table file to serve (read-only) or an open store.
    max_items : int
        Most values or runs in one request (more: 413).
    max_body_bytes : int
        Largest request body in bytes (more: 413).
    workers : int
        Worker processes that parse and rank (0: threads of this process, without the
        time and memory budget; :func:`serve` uses 2).
    time_budget, memory_budget : float, int
        Seconds and bytes of anonymous memory a worker may spend on one request (413).
    queue_timeout : float
        Seconds a request may wait for a free worker (503).
    max_pending : int
        Rank requests waiting for or being answered at once (more: 503).
    max_buffered_bytes : int
        Request body bytes held at once, received or not yet answered (default: four
        bodies of the largest size; more: 503).
    body_timeout, idle_timeout : float
        Seconds to receive a whole body, and longest pause within it (408).

    Raises
    ------
    StoreError
        The file is missing, not a store, or holds no table.
    """
    service = LookupService(store, max_items=max_items)
    runner: WorkerPool | _Threads = (
        WorkerPool(service.store.path, workers, max_items, time_budget, memory_budget, queue_timeout)
        if workers > 0 else _Threads(service))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        runner.close()

    app = FastAPI(title="irscale lookup service", version=__version__,
                  description="Unq interval-scale ranks of IR evaluation measure values and judged runs, "
                              "from exact precomputed tables. Every error answers "
                              '`{"error": {"type": ..., "message": ...}}`.',
                  docs_url=None, redoc_url=None, lifespan=lifespan)  # docs: replaced below by pages without CDN
    app.state.service = service
    app.state.runner = runner
    app.add_middleware(BodySizeLimit, max_body_bytes=max_body_bytes)
    _add_docs(app)
    intake = _Intake(max_buffered_bytes or 4 * max_body_bytes, max_pending)

    @app.exception_handler(IrscaleError)
    async def user_error(request: Request, error: IrscaleError) -> Response:
        status = status_of(error)
        headers = {"Retry-After": "1"} if status == 503 else ({"Connection": "close"} if status == 408 else None)
        return _json_response(error_body(type(error).__name__, service.scrub(str(error)),
                                         getattr(error, "details", None)), status, headers)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> Response:
        kind = HTTPStatus(error.status_code).phrase.replace(" ", "")
        message = f"{error.detail}: {request.method} {request.url.path} (the API is described at /docs)"
        return _json_response(error_body(kind, message), error.status_code, error.headers)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, error: Exception) -> Response:
        return _json_response(error_body("InternalError", "internal server error (a bug in irscale)"), 500)

    @app.post("/v1/rank", response_model=RankResponse, responses=_ERRORS, summary="Rank values or judged runs",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/json": {"schema": RankRequest.model_json_schema()}}}})
    async def rank(request: Request) -> Response:
        """Map raw values of a measure (within tolerance) or judged runs (exactly) to their
        1-based unq ranks and to [0, 1]."""
        request.state.held = 0
        try:
            body = await _read_body(request, intake, body_timeout, idle_timeout)
            if intake.pending >= intake.max_pending:
                raise ServiceBusyError(f"this service has {intake.max_pending} requests to answer already; "
                                       f"retry later")
            intake.pending += 1
            try:
                status, payload = await runner.answer(body)
            finally:
                intake.pending -= 1
        except (IrscaleError, _BodyTooLarge):
            raise       # answered by user_error, or by BodySizeLimit (413)
        except Exception:
            # answered here: an exception reaching the server would make it drop the connection
            log.exception("internal error answering POST /v1/rank")
            status, payload = 500, error_body("InternalError", "internal server error (a bug in irscale)")
        finally:
            intake.bytes -= request.state.held
        return _json_response(payload, status)

    @app.get("/v1/tables", response_model=TablesResponse, summary="List the tables")
    def tables() -> dict:
        """The store's format and the metadata of every table served."""
        return {"store": service.store_info, "tables": list(service.tables.values())}

    @app.get("/v1/table", response_model=TableViewResponse, responses=_ERRORS, summary="View one scale",
             openapi_extra={"parameters": _VIEW_OPENAPI_PARAMETERS})
    async def table_view(request: Request) -> Response:
        """A bounded view of the scale of one measure (and recall base) for plotting: the
        values at the first and last rank of at most ``points`` bins of consecutive ranks,
        and a histogram of the gaps between consecutive distinct values. Worked on like a
        rank request (worker processes, time and memory budget), whatever the table's size."""
        query = pydantic_core.to_json(view_params(request.query_params.multi_items()))
        if intake.pending >= intake.max_pending:
            raise ServiceBusyError(f"this service has {intake.max_pending} requests to answer already; retry later")
        intake.pending += 1
        try:
            status, payload = await runner.answer(query, _VIEW)
        except IrscaleError:
            raise       # answered by user_error
        except Exception:
            log.exception("internal error answering GET /v1/table")
            status, payload = 500, error_body("InternalError", "internal server error (a bug in irscale)")
        finally:
            intake.pending -= 1
        return _json_response(payload, status)

    @app.get("/", include_in_schema=False)
    def page(request: Request) -> HTMLResponse:
        """The page for research use: the store's tables, a plot of a scale's values
        against their ranks, a histogram of its gaps, and runs or values ranked."""
        return HTMLResponse(page_html(request.scope.get("root_path", "").rstrip("/")))

    @app.get("/healthz", response_model=HealthResponse, summary="Liveness")
    async def healthz() -> dict:
        """The service is up; the number of tables it answers for (answered on the event
        loop itself, never behind a lookup)."""
        return {"status": "ok", "tables": len(service.tables)}

    return app


def _add_docs(app: FastAPI) -> None:
    """Serve ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) with their assets mounted at
    :data:`DOCS_ASSETS`, so that the pages reference no external URL and work offline.
    URLs are prefixed with the ASGI ``root_path``, as FastAPI's own docs pages do."""
    app.mount(DOCS_ASSETS, StaticFiles(packages=[_DOCS_ASSETS_PACKAGE]), name="docs-assets")

    def prefix(request: Request) -> str:
        return request.scope.get("root_path", "").rstrip("/")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui(request: Request) -> HTMLResponse:
        root = prefix(request)
        return get_swagger_ui_html(openapi_url=root + app.openapi_url, title=app.title + " - Swagger UI",
                                   swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
                                   # no badge fetched from the online validator
                                   swagger_ui_parameters={"validatorUrl": None})

    @app.get("/redoc", include_in_schema=False)
    def redoc(request: Request) -> HTMLResponse:
        root = prefix(request)
        return get_redoc_html(openapi_url=root + app.openapi_url, title=app.title + " - ReDoc",
                              redoc_js_url=f"{root}{DOCS_ASSETS}/redoc.standalone.js",
                              redoc_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png", with_google_fonts=False)


def _check_can_listen(host: str, port: int) -> None:
    """Raise IrscaleError when ``host:port`` cannot be bound (in use, unknown host), so
    that the command line reports it as one line instead of uvicorn exiting."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as e:
            raise IrscaleError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None


def _guarded_h11(header_timeout: float, max_connections: int) -> type:
    """uvicorn's h11 protocol with a deadline for request heads and a cap on connections:
    a connection must deliver a complete request head within ``header_timeout`` seconds
    of opening or of the end of its previous answer (uvicorn itself never times out a
    connection that sends part of a request, nor one that trickles bytes after an
    answer), and beyond ``max_connections`` open connections the one that has waited
    longest for a request head is closed, if it has waited :data:`EVICTION_GRACE`
    seconds (a client that has just connected has had no time to send its request),
    else the new one."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    waiting: dict = {}      # connections waiting for a request head -> since when, longest first

    class GuardedH11Protocol(H11Protocol):
        _head_timer = None
        _awaited = None

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._await_head()
            if len(self.connections) > max_connections:
                victim, since = next(iter(waiting.items()))
                if victim is self or self.loop.time() - since < EVICTION_GRACE:
                    victim = self
                log.debug("%d connections open: closing one that waits for a request head", len(self.connections))
                victim._close()

        def _await_head(self) -> None:
            self._cancel_head()
            waiting[self] = self.loop.time()
            self._awaited = self.cycle
            self._head_timer = self.loop.call_later(header_timeout, self._head_timeout)

        def _cancel_head(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None
            waiting.pop(self, None)

        def _head_timeout(self) -> None:
            self._head_timer = None
            if self.cycle is self._awaited or self.cycle.response_complete:
                self._close()

        def _close(self) -> None:
            self._cancel_head()
            if not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self._head_timer is not None and self.cycle is not self._awaited and not self.cycle.response_complete:
                self._cancel_head()     # a request head arrived: the application's deadlines apply

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.cycle.response_complete:
                self._await_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._cancel_head()
            super().connection_lost(exc)

    return GuardedH11Protocol


def _raise_file_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit (at most 65536);
    returns the soft limit in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
    if soft != resource.RLIM_INFINITY and soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
            soft = want
        except (ValueError, OSError):
            pass
    return 65536 if soft == resource.RLIM_INFINITY else soft


def serve(store_path: str | os.PathLike, host: str = "127.0.0.1", port: int = 8000,
          max_items: int = DEFAULT_MAX_ITEMS, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, log_level: str = "info",
          *, workers: int = DEFAULT_WORKERS, time_budget: float = DEFAULT_TIME_BUDGET,
          memory_budget: int = DEFAULT_MEMORY_BUDGET, header_timeout: float = DEFAULT_HEADER_TIMEOUT,
          max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
    """Serve the tables of ``store_path`` over HTTP until interrupted, parsing and ranking
    in ``workers`` worker processes with a time and memory budget per request, and
    guarding connections (see Limits in the module docstring).

    The store is opened and the address checked before the server starts, so a missing
    or foreign file raises :class:`~irscale.errors.StoreError` and a busy port
    :class:`~irscale.errors.IrscaleError` (the command line prints one line, exit 2).
    """
    import uvicorn

    store = open_store(store_path)
    _check_can_listen(host, port)
    files = _raise_file_limit()
    max_connections = max(1, min(int(max_connections), files - 64 - 8 * workers))
    app = create_app(store, max_items=max_items, max_body_bytes=max_body_bytes, workers=workers,
                     time_budget=time_budget, memory_budget=memory_budget)
    uvicorn.run(app, host=host, port=port, log_level=log_level, http=_guarded_h11(header_timeout, max_connections),
                timeout_keep_alive=KEEP_ALIVE_SECONDS, h11_max_incomplete_event_size=MAX_HEAD_BYTES, backlog=1024)
