"""Rank groupings: a measure's exact key as a sum of independent parts, what rank oracles count.

A measure with a *grouping* (:meth:`~irscale.scales.measures.keyed.KeyMeasure.grouping`)
writes the exact key of every run of REL^N as a sum over disjoint groups of ranks,

    key(run) = sum_g part_g(the run's degrees at the ranks of group g),

such that two runs have equal values exactly when their tuples of parts are equal. Each
group lists its distinct parts (its *options*), so the distinct values of the measure are
the tuples of options, K = the product of the groups' numbers of options, and the unq rank
of a value is the number of tuples whose value is at most it: a count that the rank oracles
(:mod:`irscale.scales.tables.oracles`) answer by meet-in-the-middle without a table.

The groupings irscale knows (each family says why its tuples are distinct values, and the
reason goes into the oracle's certificate):

* binary RBP with p = a/c in lowest terms: one group per rank. The key
  ``sum_k r_k a^(k-1) c^(N-k)`` determines r_N modulo c (gcd(a, c) = 1), then r_(N-1), ...:
  every run has its own value. Graded RBP the same when its distinct gains are pairwise
  incongruent modulo c (else two runs may share a key: (0, 2) and (1, 0) with gains
  (0, 1, 2) and p = 1/2).
* DCG, nDCG, nDCG_trec: the ranks whose discounts are rational multiples of one logarithm
  ratio ln b / ln m (m not a perfect power) form a group; distinct tuples of group sums are
  distinct values as long as 1 and the ratios are linearly independent over the rationals,
  the assumption the tables state and certify by separating every pair of neighbours
  (:mod:`irscale.scales.measures.keys`); the oracles re-decide every close pair they meet in
  :data:`~irscale.scales.measures.keys.MP_DIGITS`-digit arithmetic.
* P, R, F1: one group of all ranks, parts 0..N (the number of relevant documents).
* RR: one group whose options are the rank of the first relevant document (its key).

Conventions: ranks are 1-based; a run's id is ``sum_k r_k * levels^(N-k)``; the *count* of
a run is its number of relevant documents (nonzero degrees), what a recall base bounds, or,
in a grouping *counting grade g* (graded measures whose topics' per-grade counts bound one
grade, :func:`subset_group` with ``counted=g``), its number of documents of grade g.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

#: Largest number of entries of one side of a rank oracle (about sqrt(K) each).
SIDE_LIMIT = 1 << 24


@dataclass(frozen=True)
class RankGroup:
    """The distinct parts of one group of ranks.

    ``keys``: the part of the exact key of each option (distinct Python integers);
    ``runs``: per option, how many realisations (assignments of degrees to the group's
    ranks) give it, by their count of relevant documents (``{count: realisations}``);
    ``first``: per option, the realisation with the fewest relevant documents and, among
    those, the smallest run id, as ``(count, id part)`` (the id part is
    ``sum_k r_k * levels^(N-k)`` over the group's ranks); ``min_id``: per option, the
    smallest id part of all its realisations."""

    keys: tuple[int, ...]
    runs: tuple[dict[int, int], ...]
    first: tuple[tuple[int, int], ...]
    min_id: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def min_counts(self) -> tuple[int, ...]:
        return tuple(c for c, _ in self.first)


@dataclass(frozen=True)
class Grouping:
    """A measure's groups (see the module docstring): ``groups`` partition the ranks;
    ``reason`` says why distinct tuples of parts are distinct values (certificate text);
    ``proven`` whether that is a theorem (integer keys) or the independence assumption of
    logarithms that every close pair met is re-decided against."""

    groups: tuple[RankGroup, ...]
    reason: str
    proven: bool

    @property
    def k(self) -> int:
        """Distinct values over all runs: the product of the groups' numbers of options."""
        out = 1
        for g in self.groups:
            out *= len(g)
        return out


def subset_group(ranks: list[int], weights: list[list[int]], levels: int, n: int,
                 counted: int | None = None) -> RankGroup:
    """The options of the ranks ``ranks`` (1-based) of a key that is the sum of per-rank
    weights ``weights[k - 1][degree]``: every assignment of degrees to these ranks, merged by
    equal partial key (a dynamic programme over the ranks: groups of equal weights, such as
    P's 40 ranks, have few options however many assignments). The counts of
    :class:`RankGroup` are of relevant documents (nonzero degrees), or of documents of
    degree ``counted`` when it is given."""
    states: dict[int, list] = {0: [{0: 1}, (0, 0), 0]}       # key -> [runs by count, first, min id]
    for k in ranks:
        place = levels ** (n - k)
        nxt: dict[int, list] = {}
        for key, (runs, (c0, i0), m0) in states.items():
            for degree in range(levels):
                new = key + weights[k - 1][degree]
                bump = int(degree == counted) if counted else int(degree != 0)
                first, low = (c0 + bump, i0 + degree * place), m0 + degree * place
                got = nxt.get(new)
                if got is None:
                    got = nxt[new] = [{}, first, low]
                else:
                    got[1], got[2] = min(got[1], first), min(got[2], low)
                for c, m in runs.items():
                    got[0][c + bump] = got[0].get(c + bump, 0) + m
        states = nxt
    keys = sorted(states)
    return RankGroup(tuple(keys), tuple(states[k][0] for k in keys), tuple(states[k][1] for k in keys),
                     tuple(states[k][2] for k in keys))


def per_rank_groups(weights: list[list[int]], levels: int, n: int) -> tuple[RankGroup, ...]:
    """One group per rank (RBP)."""
    return tuple(subset_group([k], weights, levels, n) for k in range(1, n + 1))


def first_relevant_group(n: int) -> RankGroup:
    """RR's one group: option j = 0..N is the key N + 1 - (rank of the first relevant
    document), 0 when there is none; 2^(j-1) runs have option j >= 1 (the ranks after
    the first relevant one are free), C(j - 1, c - 1) of them with c relevant documents."""
    keys = tuple(range(n + 1))
    runs = ({0: 1},) + tuple({c: comb(j - 1, c - 1) for c in range(1, j + 1)} for j in range(1, n + 1))
    first = ((0, 0),) + tuple((1, 2 ** (j - 1)) for j in range(1, n + 1))
    return RankGroup(keys, runs, first, tuple(i for _, i in first))
