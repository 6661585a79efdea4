"""Disagreements between two measures over all runs of REL^N (SPEC_MEASURES section 6):
pairs of runs they order in strictly opposite directions, counted in O(R log R) with a
Fenwick tree, and how many of those pairs are comparable in the partial order
(:mod:`~irscale.scales.analysis.run_order`): none when both measures satisfy the axiom
(:func:`~irscale.scales.analysis.axioms.check_axiom`), which is the proof; for small
spaces all pairs are also enumerated. Conventions as in :mod:`irscale.scales.analysis.axioms`.
"""
from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from irscale.scales.analysis import axioms_kernels as ak
from irscale.scales.analysis.axioms import DEFAULT_LIMIT, MAX_EXAMPLES, _axiom_counts, _subject, _Valuer, fmt_value
from irscale.scales.analysis.run_order import AxiomLimitError, comparable, decode_ids, prefix_counts, run_string
from irscale.scales.measures.measure import Measure

#: Largest run space for which :func:`disagreements` enumerates all pairs by default
#: (2^14 runs: 1.3e8 pairs, about a second).
DEFAULT_PAIR_LIMIT = 2 ** 14


# -- 3. disagreements ----------------------------------------------------------------------------------
@dataclass
class DisagreementReport:
    """Result of :func:`disagreements` over all unordered pairs {a, b} of REL^N.

    ``discordant``: pairs the two measures order in strictly opposite directions (m1: a < b
    and m2: a > b, or the reverse); ``concordant``: strictly the same direction;
    ``tied_first`` / ``tied_second``: tied by that measure only; ``tied_both``.
    ``comparable_discordant``: discordant pairs that are comparable in the partial order
    (must be 0 when both measures satisfy the axiom; None when it could not be decided:
    a measure violates the axiom and the space is too large to enumerate);
    ``comparable_method``: ``"proof"`` (both satisfy the axiom, checked exhaustively),
    ``"enumeration"`` (all pairs enumerated), ``"proof+enumeration"``, or ``"undecided"``.
    ``examples``: up to 10 discordant pairs ``a``, ``b`` with m1(a) < m1(b) and
    m2(a) > m2(b), with exact values. ``comparable_examples``: comparable discordant pairs
    (``lower`` <= ``upper`` in the order).
    """

    first: str
    second: str
    n: int
    levels: int
    n_runs: int
    n_pairs: int
    discordant: int
    concordant: int
    tied_first: int
    tied_second: int
    tied_both: int
    axiom_first: bool
    axiom_second: bool
    comparable_discordant: int | None
    comparable_method: str
    examples: list = field(default_factory=list)
    comparable_examples: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def consistent(self) -> bool:
        """No comparable pair is ordered in opposite directions (known to hold)."""
        return self.comparable_discordant == 0

    @property
    def tau_b(self) -> float | None:
        """Kendall tau-b between the two measures over all runs (None if undefined)."""
        n0 = self.n_pairs
        d1 = n0 - self.tied_first - self.tied_both
        d2 = n0 - self.tied_second - self.tied_both
        if d1 <= 0 or d2 <= 0:
            return None
        return (self.concordant - self.discordant) / math.sqrt(d1 * d2)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.update(consistent=self.consistent, tau_b=self.tau_b)
        return d


def _tied_pairs(*arrays) -> int:
    """Pairs of runs equal in all given rank arrays: sum over groups of C(c, 2)."""
    if len(arrays) == 1:
        c = np.bincount(arrays[0])
    else:
        key = arrays[0] * (int(arrays[1].max()) + 1) + arrays[1]
        c = np.unique(key, return_counts=True)[1]
    c = c.astype(np.int64)
    return int((c * (c - 1) // 2).sum())


def discordant_pairs(r1: np.ndarray, r2: np.ndarray, max_examples: int = MAX_EXAMPLES
                     ) -> tuple[int, list[tuple[int, int]]]:
    """Number of pairs {a, b} with r1[a] < r1[b] and r2[a] > r2[b] (strictly opposite;
    ties in either do not count), in O(R log R): sort by (r1, r2) and count strict
    inversions of r2 (:func:`~irscale.scales.analysis.axioms_kernels.strict_inversions`).
    Returns ``(count, examples)``, examples being up to ``max_examples`` pairs ``(a, b)``
    of run ids with r1[a] < r1[b], r2[a] > r2[b], spread over the r1 order."""
    r1 = np.ascontiguousarray(r1, dtype=np.int64)
    r2 = np.ascontiguousarray(r2, dtype=np.int64)
    order = np.lexsort((r2, r1))
    x = np.ascontiguousarray(r2[order])
    per = np.empty(x.size, np.int64)
    total = int(ak.strict_inversions(x, int(x.max()) if x.size else 0, per))
    examples = []
    if total and max_examples:
        pos = np.flatnonzero(per > 0)
        pick = pos[np.unique(np.linspace(0, pos.size - 1, min(max_examples, pos.size)).round().astype(np.int64))]
        for j in pick:
            i = int(ak.partner_before(x, int(j)))
            examples.append((int(order[i]), int(order[j])))
    return total, examples


def disagreements(m1: str | Measure | np.ndarray | list[int] | tuple[int, ...],
                  m2: str | Measure | np.ndarray | list[int] | tuple[int, ...], n: int | None = None,
                  limit: int = DEFAULT_LIMIT, *, levels: int | None = None,
                  pair_limit: int = DEFAULT_PAIR_LIMIT, enumerate_pairs: bool | None = None,
                  max_examples: int = MAX_EXAMPLES) -> DisagreementReport:
    """Pairs of runs that two measures order in strictly opposite directions.

    Over all unordered pairs {a, b} of REL^N (C(levels^N, 2) of them: 5.2e5 at binary N =
    10, 5.5e11 at N = 20), counts discordant pairs (m1: a < b and m2: a > b, or the
    reverse; ties in either measure do not count) with an O(R log R) Fenwick-tree
    inversion count, plus concordant and tied pairs. Then decides how many discordant
    pairs are *comparable* in the partial order:

    * both measures are checked against the axiom (:func:`check_axiom`, exhaustive over
      the generating moves). If both satisfy it, no comparable pair can be discordant
      (a <= b implies m1(a) <= m1(b) and m2(a) <= m2(b)): the count is 0 by proof;
    * when ``levels**N <= pair_limit`` (default 2^14, binary N <= 14) every pair is
      also enumerated (O(R^2) numba kernel) and each discordant pair tested for
      comparability; if the proof and the enumeration disagree, a RuntimeError is raised
      (a bug, not a property of the measures). ``enumerate_pairs`` forces (True; refused
      beyond ``pair_limit``) or skips (False) the enumeration;
    * if a measure violates the axiom and the space is too large to enumerate, the count
      is None (``comparable_method == "undecided"``).

    ``m1``, ``m2``: measure names or Measures (RB-dependent ones at rb = N), or rank
    arrays over run ids (as in :func:`check_axiom`); both must live on the same REL^N.
    """
    t0 = time.perf_counter()
    s1 = _subject(m1, n, levels, limit)
    s2 = _subject(m2, n, levels, limit)
    if (s1.levels, s1.n) != (s2.levels, s2.n):
        raise AxiomLimitError(f"{s1.label} and {s2.label} live on different run spaces "
                              f"(levels {s1.levels}, N = {s1.n} vs levels {s2.levels}, N = {s2.n})")
    L, nn = s1.levels, s1.n
    R = s1.ranks.size
    r1, r2 = s1.ranks, s2.ranks
    disc, ex = discordant_pairs(r1, r2, max_examples)
    n_pairs = R * (R - 1) // 2
    t12 = _tied_pairs(r1, r2)
    t1 = _tied_pairs(r1) - t12
    t2 = _tied_pairs(r2) - t12
    conc = n_pairs - t1 - t2 - t12 - disc
    ax1 = _axiom_counts(r1, L, nn, 0)[0][1] == 0
    ax2 = _axiom_counts(r2, L, nn, 0)[0][1] == 0
    if enumerate_pairs is None:
        enumerate_pairs = R <= pair_limit
    elif enumerate_pairs and R > pair_limit:
        raise AxiomLimitError(f"enumerating all {n_pairs} pairs of {L}^{nn} runs is beyond pair_limit "
                              f"{pair_limit} runs")
    comp, method, comp_ex = None, "undecided", []
    if ax1 and ax2:
        comp, method = 0, "proof"
    if enumerate_pairs:
        runs = decode_ids(np.arange(R), L, nn)
        pref = np.ascontiguousarray(prefix_counts(runs, L))
        ea = np.zeros(max(max_examples, 1), np.int64)
        eb = np.zeros_like(ea)
        d_enum, c_enum, nex = ak.all_pairs_check(r1, r2, pref, max_examples, ea, eb)
        if int(d_enum) != disc:
            raise RuntimeError(f"{s1.label} vs {s2.label}: {disc} discordant pairs by inversion count, "
                               f"{int(d_enum)} by enumeration")
        if comp == 0 and c_enum:
            raise RuntimeError(f"{s1.label} vs {s2.label}: both satisfy the axiom but {int(c_enum)} comparable "
                               f"pairs are ordered in opposite directions")
        comp = int(c_enum)
        method = "proof+enumeration" if method == "proof" else "enumeration"
        comp_ex = [(int(ea[i]), int(eb[i])) for i in range(int(nex))]
    v1 = _Valuer(s1.measure, s1.rb) if s1.measure is not None else None
    v2 = _Valuer(s2.measure, s2.rb) if s2.measure is not None else None

    def describe(a, b, names=("a", "b")):
        ra, rbb = decode_ids([a, b], L, nn)
        d = {names[0]: run_string(ra), names[1]: run_string(rbb),
             "first_ranks": [int(r1[a]), int(r1[b])], "second_ranks": [int(r2[a]), int(r2[b])]}
        if v1 is not None:
            d["first_values"] = [fmt_value(v1.value(ra)), fmt_value(v1.value(rbb))]
        if v2 is not None:
            d["second_values"] = [fmt_value(v2.value(ra)), fmt_value(v2.value(rbb))]
        d["comparable"] = bool(comparable(ra, rbb))
        return d

    return DisagreementReport(
        s1.label, s2.label, nn, L, int(R), int(n_pairs), int(disc), int(conc), int(t1), int(t2), int(t12),
        bool(ax1), bool(ax2), comp, method, [describe(a, b) for a, b in ex],
        [describe(a, b, ("lower", "upper")) for a, b in comp_ex], round(time.perf_counter() - t0, 4))
