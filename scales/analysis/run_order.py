"""Runs of REL^N as the order-theoretic checks (:mod:`irscale.scales.analysis.axioms`)
see them, and their partial order (SPEC_MEASURES section 6).

Runs
----
* REL = {0, 1, ..., G}, ``levels = G + 1`` (binary: ``levels = 2``). A judged run is
  r = (r_1, ..., r_N), r_1 the top-ranked document; ranks k are 1-based.
* Run ids (SPEC section 2): the base-``levels`` number with r_1 the most significant
  digit (:mod:`irscale.enumerate.runspace`). Arrays of runs are ``uint8`` of shape
  (m, N), column 0 being rank 1.
* Relevance strings write a run as its degrees r_1 .. r_N: ``"1010"`` has relevant
  documents at ranks 1 and 3 (for ``levels`` > 10 the degrees are comma-separated).

The partial order
-----------------
r <= s ("s dominates r") when for every rank k = 1..N and every grade t = 1..G, r has no
more documents of grade >= t in its top k than s has. :func:`dominates` tests it with
prefix counts per grade threshold. It is generated (reflexive-transitive closure) by the
*generating moves* (:func:`generating_moves`), each of which leads to a greater run:

* binary: ``swap k,k+1`` turns an adjacent "0 1" at ranks k, k+1 into "1 0" (a relevant
  document moves up one rank) and ``raise N`` turns r_N = 0 into 1; these are exactly the
  covers of the order;
* graded (levels > 2): ``swap i,j`` (i < j, not only adjacent) turns grades
  (lower, higher) at ranks i, j into (higher, lower), and ``raise k`` raises the grade of
  the document at rank k by one (k = 1..N). Adjacent swaps do not suffice: "021" <
  "120" (a grade-1 document moves from rank 3 to rank 1 over a grade-2 document) is no
  chain of adjacent swaps and raises: every adjacent swap or raise applied to "021"
  gives a run ("201", "121", "022") that is not <= "120". Raises at ranks other
  than N are needed too ("10" < "20"). The tests check that the closure of these moves
  is the order (binary N <= 5; ternary N <= 4; four grades N <= 3).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from irscale.enumerate.runspace import runs_of_ids
from irscale.errors import IrscaleError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


class AxiomLimitError(IrscaleError, ValueError):
    """The run space is larger than the exhaustive limit of a check (or the input of a
    check is malformed: rank arrays of the wrong size, mismatched measures)."""


# -- runs, strings, ids ----------------------------------------------------------------
def run_string(run: Sequence[int] | np.ndarray) -> str:
    """Relevance string of a run: degrees r_1..r_N, e.g. ``"1010"`` (comma-separated when
    a degree has more than one digit)."""
    degs = [int(x) for x in run]
    if all(d < 10 for d in degs):
        return "".join(str(d) for d in degs)
    return ",".join(str(d) for d in degs)


def parse_run_string(text: str) -> np.ndarray:
    """Inverse of :func:`run_string` (``"1010"`` or ``"1,0,10"``) -> uint8 array."""
    parts = text.split(",") if "," in text else list(text)
    return np.array([int(p) for p in parts], dtype=np.uint8)


#: Runs (uint8, shape (len(ids), n)) of run ids: the run space's own decoder.
decode_ids = runs_of_ids


# -- the partial order -------------------------------------------------------------------
def prefix_counts(runs: ArrayLike, levels: int | None = None) -> np.ndarray:
    """Prefix counts per grade threshold: ``out[..., t - 1, k - 1]`` = number of documents
    of grade >= t among ranks 1..k, for t = 1..G (G = levels - 1, or the largest grade
    present when ``levels`` is None). Shape ``runs.shape[:-1] + (G, N)``, int16."""
    r = np.asarray(runs)
    G = (levels - 1) if levels is not None else int(r.max(initial=0))
    G = max(G, 1)
    out = np.empty(r.shape[:-1] + (G, r.shape[-1]), dtype=np.int16)
    for t in range(1, G + 1):
        np.cumsum(r >= t, axis=-1, dtype=np.int16, out=out[..., t - 1, :])
    return out


def dominates(a_runs: ArrayLike, b_runs: ArrayLike) -> np.ndarray | np.bool_:
    """Whether each run of ``a_runs`` dominates (is >= in the partial order) the
    corresponding run of ``b_runs``.

    ``b <= a`` when for every rank k and grade t >= 1 the top k of b holds no more
    documents of grade >= t than the top k of a (SPEC_MEASURES section 6). Arguments are
    runs (last axis = ranks 1..N, degrees as integers) and broadcast against each other
    over the leading axes, e.g. ``dominates(runs[:, None], runs[None, :])`` is the
    whole order as a matrix. Returns a bool array of the broadcast leading shape (a
    numpy bool for two single runs).
    """
    a = np.asarray(a_runs)
    b = np.asarray(b_runs)
    if a.shape[-1] != b.shape[-1]:
        raise AxiomLimitError(f"runs of different lengths ({a.shape[-1]} and {b.shape[-1]}) are not comparable")
    G = max(int(a.max(initial=0)), int(b.max(initial=0)), 1)
    ok = np.ones(np.broadcast_shapes(a.shape[:-1], b.shape[:-1]), dtype=bool)
    for t in range(1, G + 1):
        ca = np.cumsum(a >= t, axis=-1, dtype=np.int16)
        cb = np.cumsum(b >= t, axis=-1, dtype=np.int16)
        ok &= np.all(ca >= cb, axis=-1)
    return ok[()] if ok.ndim == 0 else ok


def comparable(a_runs: ArrayLike, b_runs: ArrayLike) -> np.ndarray | np.bool_:
    """Whether runs are comparable in the partial order (either dominates the other)."""
    return dominates(a_runs, b_runs) | dominates(b_runs, a_runs)


@dataclass(frozen=True)
class Move:
    """A generating move of the order. ``kind`` ``"swap"``: the documents at ranks
    ``rank`` < ``other`` (1-based) swap when the lower-ranked one (at ``other``) is more
    relevant; ``"raise"``: the grade at ``rank`` goes up by one (``other`` unused)."""

    kind: str
    rank: int
    other: int = 0

    @property
    def label(self) -> str:
        return f"swap {self.rank},{self.other}" if self.kind == "swap" else f"raise {self.rank}"


def generating_moves(levels: int, n: int) -> list[Move]:
    """The generating moves of the order on REL^N (module docstring): binary: adjacent
    swaps (k, k+1), k = 1..N-1, and the raise at rank N; graded: swaps (i, j) for all
    1 <= i < j <= N, then raises at every rank."""
    if levels < 2 or n < 1:
        raise AxiomLimitError(f"need levels >= 2 and N >= 1, got levels={levels}, N={n}")
    if levels == 2:
        return [Move("swap", k, k + 1) for k in range(1, n)] + [Move("raise", n)]
    swaps = [Move("swap", i, j) for i in range(1, n) for j in range(i + 1, n + 1)]
    return swaps + [Move("raise", k) for k in range(1, n + 1)]


def apply_move(move: Move, ids: ArrayLike, levels: int, n: int, digits: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Apply one move to runs given by id.

    Returns ``(mask, after)``: ``mask[i]`` says whether the move applies to run ``ids[i]``
    (swap: grade at rank i < grade at rank j; raise: grade < G) and ``after`` holds the
    ids of the moved runs (for the runs where it applies, in order). ``digits``: the runs
    of ``ids`` (:func:`decode_ids`) when already at hand.
    """
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)

    def digit(k0):                                 # grades at 0-based rank k0
        if digits is None:
            return (ids // levels ** (n - 1 - k0)) % levels
        return digits[:, k0].astype(np.int64)

    i = move.rank - 1
    place_i = levels ** (n - 1 - i)                # weight of rank i in the run id
    d_i = digit(i)
    if move.kind == "raise":
        mask = d_i < levels - 1
        return mask, ids[mask] + place_i
    j = move.other - 1
    d_j = digit(j)
    mask = d_i < d_j
    return mask, ids[mask] + (d_j - d_i)[mask] * (place_i - levels ** (n - 1 - j))


def move_pairs(levels: int, n: int) -> Iterator[tuple[Move, np.ndarray, np.ndarray]]:
    """Every (run, move) pair of REL^N: yields ``(move, before_ids, after_ids)``."""
    ids = np.arange(levels ** n, dtype=np.int64)
    digits = decode_ids(ids, levels, n)
    for mv in generating_moves(levels, n):
        mask, after = apply_move(mv, ids, levels, n, digits)
        yield mv, ids[mask], after

