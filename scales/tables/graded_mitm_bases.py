"""Bases of the graded meet-in-the-middle oracle (:mod:`irscale.scales.tables.graded_mitm`):
every row's set of feasible B classes as a signed sum of a few shared class sets.

A row of F is the set R of B classes feasible with its A entries: with P the antichain of
one of them, R = X_1 | ... | X_k, X_u the classes b with some v in P(b) and u + v <= c
(u in P; Lemma 1 of graded_mitm). By inclusion and exclusion, as indicator functions over
the classes,

    1_R = sum over nonempty S of P of (-1)^(|S| + 1) 1_(intersection of X_u, u in S),

an identity of sets, whatever the classes are. The intersections are *bases*, shared by the
rows (at N = 20 with 4 levels a few hundred bases stand for thousands of rows, about six
terms a row); the count of a row's feasible B entries below a position is the signed sum of
its bases' counts there, an exact integer. A base holds block counts over B (16 bytes per 64
entries), so B may be many times larger than with block counts per row. A row whose
antichain has more than :data:`IE_MAX` elements is its own base (one term).

Each decomposition is checked as it is made: the signed sum of its bases' indicators, class
by class, must be the row (else RuntimeError).
"""
from __future__ import annotations

import numpy as np

#: Antichains of at most this many elements are decomposed (2^IE_MAX - 1 subsets at most).
IE_MAX = 8


def _bits(row: np.ndarray) -> int:
    """The class set of a 0/1 row as an int (bit j: class j)."""
    return int.from_bytes(np.packbits(row.astype(bool), bitorder="little").tobytes(), "little")


def _terms(sets: list[int]) -> dict[int, int]:
    """Inclusion and exclusion over ``sets`` (class sets as ints): the nonzero signed
    coefficients of the intersections (empty intersections and their supersets left out)."""
    out: dict[int, int] = {}

    def visit(start: int, inter: int, size: int) -> None:
        for i in range(start, len(sets)):
            x = inter & sets[i]
            if not x:
                continue
            out[x] = out.get(x, 0) + (1 if size % 2 == 0 else -1)
            visit(i + 1, x, size + 1)

    visit(0, -1, 0)                           # -1: every bit set, the intersection of none
    return {x: c for x, c in out.items() if c}


def decompose(rows: np.ndarray, antichains: list[tuple], ub_vectors: list[tuple], cap: tuple
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bases of ``rows`` (uint8 (rows, B classes), distinct): ``antichains[r]`` is the
    antichain of an A class of row r, ``ub_vectors[j]`` the antichain of B class j, ``cap``
    the box c. Returns (G, start, base, sign): G (uint8 (bases, B classes)) the bases' class
    sets; row r's terms at start[r]:start[r + 1] of ``base`` (int32) and ``sign`` (int64)."""
    nb = rows.shape[1]
    vecs = [(j, v) for j, b in enumerate(ub_vectors) for v in b]
    V = np.array([v for _, v in vecs], np.int64).reshape(len(vecs), len(cap))
    owner = np.array([j for j, _ in vecs], np.int64)
    capv = np.array(cap, np.int64)
    x_of: dict[tuple, int] = {}
    index: dict[int, int] = {}
    bases: list[int] = []
    start, base, sign = [0], [], []
    for r in range(rows.shape[0]):
        want = _bits(rows[r])
        P = antichains[r]
        if want == 0:
            terms: dict[int, int] = {}
        elif len(P) > IE_MAX:
            terms = {want: 1}
        else:
            sets = []
            for u in P:
                if u not in x_of:
                    hit = np.zeros(nb, np.uint8)
                    hit[owner[(V + np.array(u, np.int64) <= capv).all(axis=1)]] = 1
                    x_of[u] = _bits(hit)
                sets.append(x_of[u])
            terms = _terms(sets)
        check = np.zeros(nb, np.int64)
        for x, c in terms.items():
            if x not in index:
                index[x] = len(bases)
                bases.append(x)
            base.append(index[x])
            sign.append(c)
            check += c * _unbits(x, nb).astype(np.int64)
        if not np.array_equal(check, rows[r].astype(np.int64)):
            raise RuntimeError(f"row {r}: its bases do not add up to its classes")
        start.append(len(base))
    G = np.array([_unbits(x, nb) for x in bases], np.uint8).reshape(len(bases), nb)
    return G, np.array(start, np.int64), np.array(base, np.int32), np.array(sign, np.int64)


def _unbits(x: int, nb: int) -> np.ndarray:
    """The 0/1 row (uint8, nb classes) of a class set given as an int."""
    raw = np.frombuffer(x.to_bytes((nb + 7) // 8, "little"), np.uint8)
    return np.unpackbits(raw, bitorder="little")[:nb]
