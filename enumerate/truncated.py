"""The truncated run space: every ranking of length 0..N, the empty one included
(SPEC_MEASURES section 5, seed "Ranking Interruptus").

A ranking of its own length n <= N is a row of grades 0..G padded with :data:`PAD` (-1)
after its end. Its id orders rankings by length, then by their base-``levels`` number
(r_1 the most significant digit, as for fixed-length runs, SPEC section 2):
``id(r) = sum_{m<n} levels^m + sum_k r_k levels^(n-k)``. The id does not depend on N, so
the space of cutoff N is exactly the ids ``0 .. truncated_space_size(levels, N) - 1``
(id 0 is the empty ranking).
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from irscale.enumerate.runspace import degree_array, short_repr
from irscale.errors import RunError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: Padding cell after the end of a ranking in (n_rankings, N) arrays.
PAD = -1


def truncated_space_size(levels: int, n: int) -> int:
    """Number of rankings of length 0..n over ``levels`` grades."""
    return sum(levels ** m for m in range(n + 1))


def _offsets(levels: int, n: int) -> np.ndarray:
    """Id of the first ranking of each length 0..n (int64 (n + 1,))."""
    return np.array([truncated_space_size(levels, m - 1) if m else 0 for m in range(n + 1)], dtype=np.int64)


def validate_rankings(runs: ArrayLike, levels: int, lengths: ArrayLike | None = None, n: int | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Check truncated rankings given as an (m, N) integer array, each row padded with -1
    after its end (or with explicit ``lengths``, then padding cells may hold anything);
    returns (grades int64 with padding cells set to 0, mask of the cells inside each
    ranking). Raises :class:`~irscale.errors.RunError` for padding inside a ranking,
    grades outside {0..levels-1}, items that are not integers (booleans, strings,
    non-integral floats; floats holding integers are accepted), wrong shapes or lengths
    (``n``: the required N)."""
    try:
        arr = np.asarray(runs)
    except (ValueError, TypeError, OverflowError):
        raise RunError(f"rankings must be an (n_runs, {n or 'N'}) integer array padded with {PAD}") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or (n is not None and arr.shape[1] != n):
        raise RunError(f"rankings must be an (n_runs, {n or 'N'}) integer array padded with {PAD}, got shape "
                       f"{arr.shape}")
    arr = degree_array(arr, levels, pad=PAD, check_range=lengths is None)
    cols = np.arange(arr.shape[1])
    if lengths is None:
        valid = arr != PAD
        lengths = valid.sum(axis=1)
        if (valid != (cols[None, :] < lengths[:, None])).any():
            raise RunError(f"padding ({PAD}) must only follow the end of a ranking")
    else:
        lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
        if lengths.shape[0] != arr.shape[0] or (lengths < 0).any() or (lengths > arr.shape[1]).any():
            raise RunError("lengths must give one length 0..N per ranking")
    valid = cols[None, :] < lengths[:, None]
    bad = valid & ((arr < 0) | (arr >= levels))
    if bad.any():
        i, k = np.argwhere(bad)[0]
        raise RunError(f"grade {arr[i, k]} at rank {k + 1} of ranking {i} is outside REL = {{0..{levels - 1}}}")
    return np.where(valid, arr, 0), valid


def truncated_ids(rankings: np.ndarray, levels: int) -> np.ndarray:
    """Ids of rankings given as an (m, N) array padded with -1 after their end (validated)."""
    arr = np.asarray(rankings, dtype=np.int64)
    lengths = (arr != PAD).sum(axis=1)
    number = np.zeros(arr.shape[0], dtype=np.int64)
    for k in range(arr.shape[1]):
        inside = k < lengths
        number = np.where(inside, number * levels + np.where(inside, arr[:, k], 0), number)
    return _offsets(levels, arr.shape[1])[lengths] + number


def truncated_rankings_of_ids(ids: ArrayLike, levels: int, n: int) -> np.ndarray:
    """Rankings (int8 (m, n), padded with -1) of the given truncated ids (any order)."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    starts = _offsets(levels, n + 1)
    lengths = np.searchsorted(starts, ids, side="right") - 1
    number = ids - starts[lengths]
    out = np.full((ids.shape[0], n), PAD, dtype=np.int8)
    for k in range(n - 1, -1, -1):       # digit of rank k + 1 is at position length - 1 - k from the end
        pos = lengths - 1 - k            # how many digits follow rank k + 1
        inside = pos >= 0
        digit = (number // np.power(levels, np.where(inside, pos, 0))) % levels
        out[:, k] = np.where(inside, digit, PAD)
    return out


def truncated_ranking_chunks(levels: int, n: int, chunk: int = 1 << 18) -> Iterator[np.ndarray]:
    """Every ranking of length 0..n in id order, as int8 arrays (rows padded with -1) of
    up to ``chunk`` rows."""
    total = truncated_space_size(levels, n)
    for start in range(0, total, chunk):
        yield truncated_rankings_of_ids(np.arange(start, min(total, start + chunk)), levels, n)


def pad_rankings(runs: ArrayLike, n: int, what: str = "rankings", levels: int | None = None) -> ArrayLike:
    """Rankings given as Python lists of their own lengths (one ranking, or a list of
    them) padded with -1 to length n; arrays are returned as they are (their padding is
    checked by :func:`validate_rankings`). Raises :class:`~irscale.errors.RunError` for a
    ranking longer than n or items that are not lists of integer grades; with ``levels``,
    for grades outside REL = {0..levels-1} (-1 included: in a list, a ranking ends where
    the list ends)."""
    if isinstance(runs, (list, tuple)) and (not runs or not isinstance(runs[0], (list, tuple, np.ndarray))):
        runs = [runs]
    if not isinstance(runs, (list, tuple)):
        return runs
    out = []
    for i, r in enumerate(runs):
        if not isinstance(r, (list, tuple, np.ndarray)):
            raise RunError(f"runs[{i}] must be a list of grades, got {short_repr(r)}")
        if len(r) > n:
            raise RunError(f"runs[{i}] has {len(r)} documents; {what} have at most N = {n}")
        for k, g in enumerate(r):
            if isinstance(g, (bool, np.bool_)) or not isinstance(g, (int, np.integer)):
                raise RunError(f"runs[{i}][{k}]: grades must be integers, got {short_repr(g)}")
            if levels is not None and not 0 <= g < levels:
                raise RunError(f"runs[{i}]: relevance degree {g} at rank {k + 1} is outside REL = "
                               f"{{0..{levels - 1}}} (a ranking ends where its list ends)")
            if g < 0:
                raise RunError(f"runs[{i}]: grades must be >= 0 (a ranking ends where its list ends)")
        out.append(list(r) + [PAD] * (n - len(r)))
    return out
