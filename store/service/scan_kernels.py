"""The numba kernels that read a request's raw bytes (:mod:`.scan` drives them): the scan of
its shape against the limits, and the runs of a ``runs`` list of plain small integers."""
from __future__ import annotations

import numba
import numpy as np

#: What :func:`_scan_json` found (its first result).
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
