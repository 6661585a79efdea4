"""Exact feasibility over several count dimensions of a bounded graded scale: antichain states.

With two or more count dimensions D (:mod:`~irscale.scales.tables.bounded_graded`), an option's
realisations may have several Pareto-minimal count vectors over D, P_D(o) (projections of
P(o), vectors above the counts c_D dropped: an option left with none never occurs). A partial
tuple of options is feasible exactly when some choice of one vector per option sums to at most
c_D, and all the groups still to come need of it is the antichain of the minimal such sums:

    state(t + o) = min { s + p : s in state(t), p in P_D(o), s + p <= c_D }   (empty: infeasible)

Counting with antichains for rows (instead of kappa's and mu's multi-indices) counts the
feasible set on D exactly, so that K is exact and nothing is bracketed (relaxed grades keep
a correction, :func:`relaxed_groups`). After each group a state is *clamped*: a count below
c_d minus the most the groups left can add in d never binds, so it is raised to that floor
(states no completion tells apart become one: RAG 2024's (100, 45, 4) at N = 100 takes 593
states instead of 3,875). Options of one group with the same P_D form a *class*; the class
{0} keeps a state unless clamping moves it, every other class adds a nonzero vector to each
element; either way a move shrinks the state's up-set, so the moves are acyclic and states
in a topological order let the kernels (``group_pass_states``) add a group in place, rows
from the last state down. The states are enumerated group by group in the order the
programmes add the groups (:func:`antichain_states`), at most :data:`STATE_LIMIT` of them;
past that the caller keeps the brackets. See docs/bounded.md.
"""
from __future__ import annotations

import dataclasses
import functools
import graphlib
import operator

import numpy as np

#: Antichain states a problem may take for rows (past it: kappa and mu's brackets).
STATE_LIMIT = 8192

Vector = tuple[int, ...]
Antichain = tuple[Vector, ...]


def minimal(vectors: list[Vector]) -> Antichain:
    """The Pareto-minimal vectors of ``vectors`` (sorted, without repeats): in lexicographic
    order a vector's dominators come before it."""
    kept: list[Vector] = []
    for v in sorted(set(vectors)):
        if not any(all(map(operator.le, w, v)) for w in kept):
            kept.append(v)
    return tuple(kept)


@dataclasses.dataclass(frozen=True)
class States:
    """The antichain states of one problem and the moves between them.

    ``antichains``: per state (0 the start {0}, in increasing order of the smallest coordinate
    sum), its vectors. Per group (by group index): ``classes`` (int64, the class of each
    option; class 0 is {0}, the last class options that never occur), ``sizes`` (options per
    class), ``kept`` (uint8 per state: 1 where the class {0} keeps it as it is) and ``moves``:
    per destination state c, the (source state, class) pairs leading to it from the states
    the group may meet, at ``start[c]:start[c + 1]`` of ``source`` and ``cls`` (the class {0}
    listed where clamping moves a state it does not keep)."""

    antichains: tuple[Antichain, ...]
    classes: tuple[np.ndarray, ...]
    sizes: tuple[tuple[int, ...], ...]
    moves: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]
    kept: tuple[np.ndarray, ...]

    @property
    def n(self) -> int:
        return len(self.antichains)

    @property
    def terms(self) -> int:
        """Over the groups, the most terms one cell of a pass sums (options of the class
        keeping the state plus every move's class into the same state, or on row sums every
        option of the group), plus its weight: the rounding depth the groups add (the row
        sums' own are the caller's, one per state)."""
        out = 0
        for (start, _, cls), sizes in zip(self.moves, self.sizes):
            into = np.zeros(self.n, np.int64)
            np.add.at(into, np.repeat(np.arange(self.n), np.diff(start)), np.array(sizes, np.int64)[cls])
            out += max(sizes[0] + int(into.max(initial=0)), sum(sizes)) + 1     # (+ 1: the weight q)
        return out

    @functools.cached_property
    def levels(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """Per group, its states by level of its moves (a state reached by no move: 0, else one
        more than the highest of the states it is reached from), highest level first, and
        where each level starts (a trailing end): states of one level read none of each
        other's rows while the group is added, so a level's rows may be taken at once."""
        out = []
        for start, source, _ in self.moves:
            level = np.zeros(self.n, np.int64)
            for c in np.flatnonzero(np.diff(start)).tolist():
                level[c] = level[source[start[c]:start[c + 1]]].max() + 1
            rows = np.argsort(-level, kind="stable").astype(np.int64)
            ends = np.flatnonzero(np.diff(level[rows])) + 1
            out.append((rows, np.concatenate(([0], ends, [self.n])).astype(np.int64)))
        return tuple(out)

    def feasible(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Per class k of group g, the states from which it moves (every state for the class
        keeping them; none for options that never occur): at ``start[k]:start[k + 1]``."""
        start, source, cls = self.moves[g]
        per: list[np.ndarray] = [np.arange(self.n, dtype=np.int64) if self.sizes[g][0] else np.zeros(0, np.int64)]
        for k in range(1, len(self.sizes[g])):
            per.append(np.unique(source[cls == k]))
        begin = np.concatenate(([0], np.cumsum([p.shape[0] for p in per]))).astype(np.int64)
        return begin, np.concatenate(per).astype(np.int64)

    def count(self, order: list[int]) -> int:
        """The feasible tuples (exact: Python integers over the states)."""
        ways = [0] * self.n
        ways[0] = 1
        for g in order:
            start, source, cls = self.moves[g]
            keep, kept = self.sizes[g][0], self.kept[g]
            new = [w * keep if kept[c] else 0 for c, w in enumerate(ways)]
            for c in range(self.n):
                for j in range(int(start[c]), int(start[c + 1])):
                    new[c] += ways[int(source[j])] * self.sizes[g][int(cls[j])]
            ways = new
        return sum(ways)


def _classes(pareto: tuple, dims: list[int], caps: Vector) -> tuple[np.ndarray, list[Antichain]]:
    """Per option its class (0: {0}; the last: never occurs) and the classes' antichains."""
    zero = tuple(0 for _ in dims)
    index: dict[Antichain, int] = {(zero,): 0}
    of: list[Antichain | None] = []
    for p in pareto:
        got = minimal([tuple(v[d] for d in dims) for v in p])
        got = tuple(v for v in got if all(a <= c for a, c in zip(v, caps)))
        of.append(got or None)
        if got and got not in index:
            index[got] = len(index)
    dead = len(index)
    cls = np.array([dead if a is None else index[a] for a in of], np.int64)
    return cls, list(index)


def _clamp(state: Antichain, low: Vector) -> Antichain:
    """The state as the groups still to come see it: a count below ``low`` (c minus the most
    they can add) can never bind, so it is raised to ``low``."""
    if all(x <= 0 for x in low):
        return state
    return minimal([tuple(max(a, b) for a, b in zip(v, low)) for v in state])


def antichain_states(pareto: list[tuple], dims: list[int], caps: Vector, order: list[int],
                     limit: int | None = None) -> States | None:
    """The states of the groups' options (``pareto``: per group, per option, P(o) over the
    bound grades; ``dims``: indices of the count dimensions among them, ``caps`` their
    counts), the groups added in ``order``; None past ``limit`` states (default
    :data:`STATE_LIMIT`). After each group the states are clamped (:func:`_clamp`) to what
    the groups left can still add, so that states which no completion tells apart are one."""
    limit = STATE_LIMIT if limit is None else limit
    per = {g: _classes(pareto[g], dims, caps) for g in order}
    most = {g: tuple(max((v[d] for a in anti for v in a), default=0) for d in range(len(dims)))
            for g, (_, anti) in per.items()}
    left = [tuple(sum(most[h][d] for h in order[j:]) for d in range(len(dims))) for j in range(len(order) + 1)]
    low = [tuple(c - x for c, x in zip(caps, rest)) for rest in left]
    start = _clamp((tuple(0 for _ in dims),), low[0])
    seen: dict[Antichain, None] = {start: None}
    reach = [start]
    steps: dict[int, tuple] = {}
    sums: dict[tuple, Antichain] = {}           # (state, class antichain) -> their minimal sums within caps
    clamped: dict[tuple, Antichain] = {}        # (antichain, low) -> clamped (groups alike meet the same states)
    for j, g in enumerate(order):
        cls, antichains = per[g]
        present = sorted(set(cls.tolist()) - {len(antichains)} - ({0} if not (cls == 0).any() else set()))
        arrows = []
        nxt: dict[Antichain, None] = {}
        keep: set[Antichain] = set()
        fresh = 0
        for s in reach:
            for k in present:
                got = sums.get((s, antichains[k]))
                if got is None:
                    got = sums[s, antichains[k]] = minimal([w for u in s for v in antichains[k]
                                                            if all(map(operator.le, w := tuple(map(operator.add, u, v)),
                                                                       caps))])
                if not got:
                    continue
                if (got, low[j + 1]) not in clamped:
                    clamped[got, low[j + 1]] = _clamp(got, low[j + 1])
                got = clamped[got, low[j + 1]]
                if k == 0 and got == s:
                    keep.add(s)
                else:
                    arrows.append((s, k, got))
                if got not in nxt and got not in seen:
                    fresh += 1
                nxt[got] = None
            if len(seen) + fresh > limit:
                return None
        for a in nxt:
            seen[a] = None
        sizes = np.bincount(cls, minlength=len(antichains) + 1)
        steps[g] = (cls, tuple(int(x) for x in sizes), arrows, keep)
        reach = list(nxt)
    # every move shrinks the up-set of a state (each of its vectors is above one of the source's),
    # so the moves are acyclic: a topological order, the start first
    graph: dict[Antichain, set] = {a: set() for a in seen}
    for _, _, arrows, _ in steps.values():
        for src, _, dst in arrows:
            graph[dst].add(src)
    states = list(graphlib.TopologicalSorter(graph).static_order())
    if states[0] != start:
        raise RuntimeError("the start is not the first antichain state")
    at = {a: i for i, a in enumerate(states)}
    classes, sizes, moves, kept = [], [], [], []
    for g in range(len(pareto)):
        cls, size, arrows, keep = steps[g]
        arrows = sorted((at[d], at[s], k) for s, k, d in arrows)
        if any(src >= dst for dst, src, _ in arrows):
            raise RuntimeError("a move to an earlier antichain state")
        dst = np.array([a[0] for a in arrows], np.int64)
        begin = np.searchsorted(dst, np.arange(len(states) + 1)).astype(np.int64)
        moves.append((begin, np.array([a[1] for a in arrows], np.int64), np.array([a[2] for a in arrows], np.int64)))
        classes.append(cls)
        sizes.append(size)
        flags = np.zeros(len(states), np.uint8)
        flags[[at[a] for a in keep]] = 1
        kept.append(flags)
    return States(tuple(states), tuple(classes), tuple(sizes), tuple(moves), tuple(kept))


def relaxed_groups(groups: list, dims: list[int]) -> list:
    """The groups with kappa replaced by (mu on the dimensions, the largest count of every other
    grade over P(o)): a tuple feasible on the dimensions but not for a relaxed grade g has
    sum of mu over the dimensions <= c_D and sum of those largest counts of g > c_g, so that
    :func:`~irscale.scales.tables.bounded_graded.excess` of these groups bounds the tuples the
    states count on the dimensions but which are not feasible."""
    out = []
    for g in groups:
        kappa = tuple(tuple(m[d] if d in dims else max(v[d] for v in p) for d in range(len(m)))
                      for m, p in zip(g.mu, g.pareto))
        out.append(dataclasses.replace(g, kappa=kappa))
    return out


__all__ = ["STATE_LIMIT", "States", "antichain_states", "minimal", "relaxed_groups"]
