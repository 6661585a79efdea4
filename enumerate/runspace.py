"""The run space REL^N: sizes, run ids and chunking.

A judged run is a vector of N relevance degrees in {0, ..., levels-1}; rank 1 first.
Its id is the base-``levels`` number with rank 1 as the most significant digit, so for
binary runs the id is the N-bit integer whose highest bit is r_1, and id order is the
lexicographic order of runs (SPEC section 2).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction
from math import factorial
from typing import TYPE_CHECKING

import numpy as np

from irscale.enumerate.interpreted import tiered
from irscale.enumerate.lazy import lazy_module
from irscale.errors import RunError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

kernels = tiered(lazy_module("irscale.enumerate.kernels"))     # small calls run interpreted


def space_size(levels: int, n: int) -> int:
    """Number of judged runs of length n over ``levels`` relevance degrees."""
    return levels ** n


def id_dtype(levels: int, n: int) -> type[np.unsignedinteger]:
    """Smallest unsigned dtype holding every run id of REL^N."""
    return np.uint32 if levels ** n <= 2 ** 32 else np.uint64


def count_dtype(max_count: int) -> type[np.unsignedinteger]:
    """Smallest unsigned dtype holding run counts up to ``max_count``."""
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        if max_count <= np.iinfo(dt).max:
            return dt
    raise OverflowError(max_count)


def chunks(levels: int, n: int, chunk_size: int) -> Iterator[tuple[int, int]]:
    """(first run id, number of runs) for consecutive chunks covering the space."""
    total = space_size(levels, n)
    for start in range(0, total, chunk_size):
        yield start, min(chunk_size, total - start)


def runs_of_ids(ids: ArrayLike, levels: int, n: int) -> np.ndarray:
    """Runs (uint8 array, shape (len(ids), n)) with the given ids (any order; numba)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    out = np.empty((ids.shape[0], n), dtype=np.uint8)
    kernels.decode_ids(ids, levels, n, out)
    return out


def feasible_space_size(n: int, counts: Sequence[int]) -> int:
    """Number of runs of length n with at most c_g documents of each grade g
    (``counts = (c_1..c_G)``): the runs that can occur for a topic with those counts.
    Exact (Python integers): n! [x^n] e^x prod_g sum_{j <= c_g} x^j / j!."""
    poly = [Fraction(1, factorial(i)) for i in range(n + 1)]      # grade 0: any number
    for c in counts:
        c = min(int(c), n)
        term = [Fraction(1, factorial(j)) for j in range(c + 1)]
        poly = [sum(poly[i - j] * term[j] for j in range(min(c, i) + 1)) for i in range(n + 1)]
    return int(poly[n] * factorial(n))


def feasible_run_chunks(n: int, counts: Sequence[int], chunk: int = 1 << 18) -> Iterator[np.ndarray]:
    """The runs of length n feasible for the per-grade counts ``(c_1..c_G)`` (at most c_g
    documents of grade g), in run id order, as uint8 arrays of up to ``chunk`` rows."""
    caps = np.minimum(np.asarray(counts, dtype=np.int64), n)
    run = np.zeros(n, dtype=np.int64)
    run[0] = -1
    have = np.zeros(caps.shape[0] + 1, dtype=np.int64)
    pos = np.zeros(1, dtype=np.int64)
    while pos[0] >= 0:
        out = np.empty((chunk, n), dtype=np.uint8)
        rows = kernels.feasible_runs(n, caps, run, have, pos, out)
        if rows:
            yield out[:rows]


def all_feasible_runs(n: int, counts: Sequence[int]) -> np.ndarray:
    """Every run of length n feasible for the per-grade counts ``(c_1..c_G)``, in run id
    order (uint8 array (feasible_space_size, n); small spaces only)."""
    parts = list(feasible_run_chunks(n, counts))
    return np.concatenate(parts) if parts else np.zeros((0, n), np.uint8)


def all_runs(levels: int, n: int) -> np.ndarray:
    """Every run of the space, in id order (for small n)."""
    total = space_size(levels, n)
    out = np.empty((total, n), dtype=np.uint8)
    kernels.decode_runs(0, total, levels, n, out)
    return out


def ids_of_runs(runs: np.ndarray, levels: int) -> np.ndarray:
    """Run ids (uint64) of validated runs."""
    return kernels.encode_runs(np.ascontiguousarray(runs, dtype=np.uint8), levels)


def count_code_base(n: int) -> int:
    """Radix of the per-grade count codes of runs of length n (counts are 0..n)."""
    return n + 1


def decode_count_codes(codes: ArrayLike, n: int, grades: int) -> np.ndarray:
    """Per-grade counts (n_1..n_G), shape (len(codes), G), of the count codes written by
    :func:`irscale.enumerate.kernels.grade_count_codes`."""
    codes = np.asarray(codes, dtype=np.int64).reshape(-1)
    out = np.empty((codes.shape[0], grades), dtype=np.int64)
    base = count_code_base(n)
    for g in range(grades):
        out[:, g] = codes % base
        codes = codes // base
    return out


def grade_counts_of_runs(runs: np.ndarray, grades: int) -> np.ndarray:
    """Number of documents of each grade 1..G in each run, shape (m, G)."""
    runs = np.asarray(runs)
    return np.stack([(runs == g).sum(axis=1) for g in range(1, grades + 1)], axis=1).astype(np.int64)


def refuse_infeasible(have: np.ndarray, counts: Sequence[int], what: str = "run") -> None:
    """Raise :class:`~irscale.errors.RunError` for the first run holding more documents of
    a grade than the topic has: ``have`` (m, G) per-grade counts of the runs, ``counts``
    the topic's (c_1..c_G)."""
    c = np.asarray(counts, dtype=np.int64)
    bad = (np.asarray(have) > c).any(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        g = int(np.argmax(have[i] > c)) + 1
        raise RunError(f"{what} {i} has {int(have[i, g - 1])} documents of grade {g}, more than the topic's "
                       f"{counts[g - 1]} (per-grade counts {tuple(counts)}): it cannot occur for this topic")


def _first_bad_listed_run(runs: list, levels: int, n: int | None, label: str) -> None:
    """Raise RunError naming the first run of a Python list that is not a list of n
    integer degrees 0..levels-1."""
    for i, run in enumerate(runs):
        if not isinstance(run, (list, tuple, np.ndarray)):
            raise RunError(f"runs[{i}] must be a list of {n or 'N'} relevance degrees, got {short_repr(run)}")
        if n is not None and len(run) != n:
            raise RunError(f"runs[{i}] has length {len(run)}; runs of {label} have length N = {n}")
        for k, degree in enumerate(run):
            if not _is_integer(degree):
                raise RunError(f"runs[{i}][{k}]: relevance degrees must be integers, got {short_repr(degree)}")
            if not 0 <= degree < levels:
                raise RunError(f"runs[{i}]: relevance degree {degree} at rank {k + 1} is outside "
                               f"REL = {{0..{levels - 1}}}")
    if n is None and len({len(r) for r in runs}) > 1:
        raise RunError("runs must all have the same length")


def _is_integer(value) -> bool:
    """Whether a list item is an integer (booleans are not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def short_repr(value: object) -> str:
    """``repr`` of a value given by a user, numpy scalars as plain Python values, cut at 40
    characters (for error messages)."""
    text = repr(value.item() if isinstance(value, np.generic) else value)
    return text if len(text) <= 40 else text[:37] + "..."


def degree_array(arr: np.ndarray, levels: int, pad: int | None = None, check_range: bool = True) -> np.ndarray:
    """A 2-D array of relevance degrees given by a user, checked and returned as int64.

    Every item must be an integer: integer dtypes, floats holding integers (not NaN), or
    objects that are integers; booleans, strings, other floats and anything else raise
    :class:`~irscale.errors.RunError` naming the first such item (``runs[i][k]``). With
    ``check_range``, items must also be degrees 0..levels-1 (or ``pad``, the padding of
    truncated rankings, when given), else the first one outside REL is named."""
    if arr.dtype.kind not in "iuf":          # booleans, strings, objects, complex numbers, ...
        for (i, k), degree in np.ndenumerate(arr):
            if not _is_integer(degree):
                raise RunError(f"runs[{i}][{k}]: relevance degrees must be integers, got {short_repr(degree)}")
        if arr.dtype.kind != "O":             # no item at all
            return np.zeros(arr.shape, np.int64)
    elif arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            i, k = np.argwhere(bad)[0]
            raise RunError(f"runs[{i}][{k}]: relevance degrees must be integers, got {short_repr(arr[i, k])}")
    if check_range:
        inside = np.asarray((arr >= 0) & (arr < levels), dtype=bool)
        if pad is not None:
            inside |= np.asarray(arr == pad, dtype=bool)
        if not inside.all():
            i, k = np.argwhere(~inside)[0]
            raise RunError(f"runs[{i}]: relevance degree {arr[i, k]} at rank {k + 1} is outside REL = "
                           f"{{0..{levels - 1}}}")
    elif arr.dtype.kind in "uO":              # values beyond int64 become the largest int64
        arr = np.minimum(arr, np.iinfo(np.int64).max)
    return arr.astype(np.int64)


def validate_runs(runs: ArrayLike, levels: int, n: int | None, label: str = "this measure") -> np.ndarray:
    """Check judged runs given by a user and return them as a uint8 (m, n) array.

    Accepts one run (a sequence of n degrees), a list of runs, or an (m, n) array-like
    (any length when ``n`` is None). Raises :class:`~irscale.errors.RunError` naming the
    first bad run (``runs[i]``) for wrong lengths or shapes, items that are not integers
    (booleans, strings and non-integral floats; floats holding integers are accepted in
    arrays) or degrees outside {0, ..., levels-1}; ``label`` names the measure in messages.
    """
    if isinstance(runs, (list, tuple)):
        if runs and not isinstance(runs[0], (list, tuple, np.ndarray)) and \
                all(not isinstance(r, (list, tuple, np.ndarray)) for r in runs):
            runs = [runs]                       # one run
        _first_bad_listed_run(runs, levels, n, label)
        if not runs:
            return np.zeros((0, n or 0), dtype=np.uint8)
        return np.ascontiguousarray(np.array(runs, dtype=np.int64), dtype=np.uint8)
    try:
        arr = np.asarray(runs)
    except (ValueError, TypeError, OverflowError):
        raise RunError("runs must be a rectangular array of relevance degrees") from None
    if arr.ndim == 1 and arr.size == 0:   # no run at all
        return np.zeros((0, n or 0), dtype=np.uint8)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise RunError(f"runs must be an (n_runs, {n or 'N'}) array of relevance degrees, got "
                       + (f"shape {arr.shape}" if arr.ndim else short_repr(runs)))
    if n is not None and arr.shape[1] != n:
        raise RunError(f"runs must have length N = {n}, got length {arr.shape[1]}")
    return np.ascontiguousarray(degree_array(arr, levels), dtype=np.uint8)
