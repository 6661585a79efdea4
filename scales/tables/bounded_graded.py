"""Bounded scales of per-grade count vectors that bound two or more grades (graded nDCG past
the oracles): count dimensions, brackets and relaxed grades.

A grade g is *bound* by the count vector c = (c_1..c_L) when c_g < N; a tuple of group options
is feasible when some realisation of each option (an assignment of grades to the group's
ranks giving its value) makes the run hold at most c_g documents of every grade g. Per option,
P(o) is the set of Pareto-minimal count vectors of its realisations over the bound grades B.

1. A grade with c_g = 0 drops every realisation using it (options left with none vanish):
   exact, no dimension.
2. Brackets. kappa(o), the lexicographically smallest vector of P(o), is realised: the tuples
   with sum kappa <= c (F-) are feasible. mu(o), the componentwise minimum of P(o), is below
   every realisation: the feasible tuples have sum mu <= c (F+). F- within F within F+; they
   are equal when every P(o) has one element (always so with one dimension).
3. Relaxed grades. Only the *dimension grades* D of B get a count dimension in the grid
   programmes (rows: the flattened multi-indices, prod (c_g + 1) of them); a grade g of
   B \\ D is relaxed. Counting F+ on D alone over-counts (an upper bound still); counting F-
   on D alone over-counts F- by at most E = sum_g E_g, E_g the tuples with sum_D kappa <= c_D
   whose kappa-count of g exceeds c_g (:func:`excess`: a programme over D and one "above
   c_g" bucket of g, float masses rounded up). So, for every value v,

       R-_up(v) - E  <=  rank(v)  <=  R+_down(v),      K- - E  <=  K  <=  K+,

   K- and K+ exact integers (count polynomials over D, kappa and mu). A grade is relaxed
   (tightest first, each E computed under the dimensions chosen so far and again under the
   final ones) while the E's together, as shares of |F-| on the dimensions, stay below a
   quarter of :data:`~irscale.scales.tables.bounded_problem.DEFAULT_ERROR` (whatever width is
   asked: the problem, and the grids a store keeps of it, depend on the measure and the count
   vector alone); else it becomes a dimension. Vectors whose dimensions would take more than the memory
   budget even on a coarse grid are refused (:class:`~irscale.errors.RecallBaseError`).

The assumption is the oracles' (distinct tuples are distinct values); the float masses are
bounded as in :mod:`irscale.scales.tables.bounded_grid`. See docs/bounded.md.
"""
from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np

from irscale.errors import RecallBaseError
from irscale.scales.measures.groups import Grouping, RankGroup
from irscale.scales.measures.measure import Measure

#: Cells per row a refused count vector is judged by (the coarsest grids' width at N = 100).
COARSE_CELLS = 1 << 12
#: The share of the width target the relaxed grades' corrections may take together.
RELAX_SHARE = 0.25
U = Fraction(1, 1 << 53)
TINY = 2.0 ** -1074


@dataclasses.dataclass(frozen=True)
class GradedGroup:
    """One group's options under a count vector: ``keys`` (exact key parts, increasing),
    ``kappa`` and ``mu`` (per option, tuples over the bound grades), ``pareto`` (per option,
    P(o)) and ``many`` (options whose P(o) has more than one vector)."""

    keys: tuple[int, ...]
    kappa: tuple[tuple[int, ...], ...]
    mu: tuple[tuple[int, ...], ...]
    many: int
    pareto: tuple[tuple[tuple[int, ...], ...], ...] = ()

    def with_kappa(self, first: list[int]) -> GradedGroup:
        """kappa(o) the smallest vector of P(o) in the order of the grades ``first`` (indices
        into the bound grades) first, then the others."""
        def key(v: tuple[int, ...]) -> tuple:
            return tuple(v[i] for i in first) + v
        return dataclasses.replace(self, kappa=tuple(min(p, key=key) for p in self.pareto))


def _pareto(vectors: set) -> set:
    return {v for v in vectors if not any(w != v and all(a <= b for a, b in zip(w, v)) for w in vectors)}


def graded_groups(measure: Measure, bound: tuple[int, ...], dropped: tuple[int, ...]) -> list[GradedGroup]:
    """The groups of ``measure`` (its logarithmic coordinates) with per-option minimal count
    vectors over the grades ``bound``, realisations using a grade of ``dropped`` removed."""
    spec, n, levels = measure.spec, measure.n, measure.levels
    by: dict[int, list[int]] = {}
    for k in range(1, n + 1):
        by.setdefault(spec.coordinate_of_rank(k), []).append(k)
    unit = [tuple(int(d == g) for g in bound) for d in range(levels)]
    out = []
    for _, ranks in sorted(by.items()):
        states: dict[int, set] = {0: {tuple(0 for _ in bound)}}
        for k in ranks:
            nxt: dict[int, set] = {}
            for key, vecs in states.items():
                for d in range(levels):
                    if d in dropped:
                        continue
                    got = nxt.setdefault(key + spec.weights[k - 1][d], set())
                    got.update(tuple(a + b for a, b in zip(v, unit[d])) for v in vecs)
            states = {key: _pareto(v) for key, v in nxt.items()}
        keys = tuple(sorted(states))
        minimal = [sorted(states[key]) for key in keys]
        out.append(GradedGroup(keys, tuple(p[0] for p in minimal),
                               tuple(tuple(min(c) for c in zip(*p)) for p in minimal),
                               sum(len(p) > 1 for p in minimal), tuple(tuple(p) for p in minimal)))
    return out


def exact_count(groups: list[GradedGroup], dims: list[int], caps: tuple[int, ...], upper: bool) -> int:
    """Tuples with sum of mu (``upper``) or kappa over the dimensions ``dims`` (indices into
    the bound grades) at most ``caps``: a count polynomial over the dimensions (Python integers)."""
    if not dims:
        return math.prod(len(g.keys) for g in groups)
    poly = np.zeros(tuple(c + 1 for c in caps), object)
    poly[(0,) * len(dims)] = 1
    for g in groups:
        mult: dict[tuple, int] = {}
        for v in (g.mu if upper else g.kappa):
            w = tuple(v[d] for d in dims)
            if all(a <= c for a, c in zip(w, caps)):
                mult[w] = mult.get(w, 0) + 1
        new = np.zeros(poly.shape, object)
        for w, m in mult.items():
            dst = tuple(slice(a, None) for a in w)
            src = tuple(slice(0, c + 1 - a) for a, c in zip(w, caps))
            new[dst] += m * poly[src]
        poly = new
    return int(poly.sum())


def excess(groups: list[GradedGroup], dims: list[int], caps: tuple[int, ...], g: int, cap_g: int
           ) -> tuple[int, float]:
    """(an upper bound of E_g, the computed share E_g / |F-_D|): the tuples with sum of kappa
    over ``dims`` at most ``caps`` and kappa-count of the bound grade ``g`` above ``cap_g``.
    Float masses (each option fl(1/m)) over (dimensions, g capped at cap_g + 1), rounded up
    rigorously: the exact mass is at most (computed + eta) / (1 - gamma) and one tuple's is
    the product of the weights."""
    shape = tuple(c + 1 for c in caps) + (cap_g + 2,)
    mass = np.zeros(shape)
    mass[(0,) * len(shape)] = 1.0
    weight, depth, mults = Fraction(1), 0, 0
    for grp in groups:
        q = 1.0 / len(grp.keys)
        weight *= Fraction(q)
        mult: dict[tuple, int] = {}
        for v in grp.kappa:
            w = tuple(v[d] for d in dims) + (min(v[g], cap_g + 1),)
            if all(a <= c for a, c in zip(w, caps)):
                mult[w] = mult.get(w, 0) + 1
        new = np.zeros(shape)
        for w, m in mult.items():
            dst = tuple(slice(a, None) for a in w[:-1])
            src = tuple(slice(0, c + 1 - a) for a, c in zip(w[:-1], caps))
            old, a = mass[src], w[-1]
            if a == 0:
                new[dst] += (m * q) * old
            else:
                new[dst + (slice(a, cap_g + 1),)] += (m * q) * old[..., :cap_g + 1 - a]
                new[dst + (cap_g + 1,)] += (m * q) * old[..., cap_g + 1 - a:].sum(axis=-1)
        mass = new
        depth += 2 * len(mult) + shape[-1] + 2
        mults += mass.size * (len(mult) + 1)
    gamma = depth * U / (1 - depth * U)
    eta = Fraction(2 * (mults + 8)) * Fraction(TINY)
    above, total = float(mass[..., cap_g + 1].sum()), float(mass.sum())
    bound = (Fraction(above) * (1 + 2 * U * shape[-1] * mass.size) + eta) / (1 - gamma)
    return math.floor(bound / weight), above / total if total > 0 else 0.0


@dataclasses.dataclass
class GradedCounts:
    """How a count vector is counted: ``bound`` grades (1-based) of kappa/mu, ``dims`` the
    dimension grades (1-based), ``caps`` their counts, ``relaxed`` (grade, E_g) pairs,
    K bounds ``k_lo`` (K- - E) and ``k_hi`` (K+), the groups, options with several minimal
    vectors (``many``)."""

    groups: list[GradedGroup]
    bound: tuple[int, ...]
    dims: tuple[int, ...]
    caps: tuple[int, ...]
    relaxed: tuple[tuple[int, int], ...]
    k_lo: int
    k_hi: int
    many: int

    @property
    def excess(self) -> int:
        return sum(e for _, e in self.relaxed)


_GROUPS: dict = {}


def graded_counts(measure: Measure, capped: tuple[int, ...], error: float, max_bytes: int) -> GradedCounts:
    """Choose the dimensions of the count vector ``capped`` (module docstring) and count K's
    bounds; raises :class:`~irscale.errors.RecallBaseError` when the dimensions need more
    than ``max_bytes`` even at :data:`COARSE_CELLS` cells per row."""
    n = measure.n
    dropped = tuple(g for g, c in enumerate(capped, 1) if c == 0)
    bound = tuple(g for g, c in enumerate(capped, 1) if 0 < c < n)
    key = (str(measure), bound, dropped)
    if key not in _GROUPS:
        _GROUPS[key] = graded_groups(measure, bound, dropped)
    groups = _GROUPS[key]
    share = RELAX_SHARE * error
    order = sorted(range(len(bound)), key=lambda i: (capped[bound[i] - 1], i))
    dims: list[int] = []
    relaxed: list[int] = []
    used = 0.0
    for i in order:
        caps = tuple(capped[bound[d] - 1] for d in dims)
        groups = [g.with_kappa(dims) for g in groups]
        _, part = excess(groups, dims, caps, i, capped[bound[i] - 1])
        if used + part < share:
            relaxed.append(i)
            used += part
        else:
            dims.append(i)
    groups = [g.with_kappa(dims) for g in groups]    # kappa: smallest on the dimensions first
    dims.sort()
    caps = tuple(capped[bound[d] - 1] for d in dims)
    rows = math.prod(c + 1 for c in caps)
    if 2 * 8 * rows * COARSE_CELLS > max_bytes:
        raise RecallBaseError(f"{measure}: the per-grade counts {capped} need count dimensions for the grades "
                              f"{[bound[d] for d in dims]} ({rows:,} rows, about "
                              f"{2 * 8 * rows * COARSE_CELLS / 2 ** 30:.1f} GiB even on a coarse grid, more than "
                              f"max_bytes = {max_bytes / 2 ** 30:.1f} GiB): no bounded scale")
    corrections = tuple((bound[i], excess(groups, dims, caps, i, capped[bound[i] - 1])[0]) for i in relaxed)
    k_hi = exact_count(groups, dims, caps, True)
    k_lo = max(exact_count(groups, dims, caps, False) - sum(e for _, e in corrections), 1)
    return GradedCounts(groups, bound, tuple(bound[d] for d in dims), caps, corrections, k_lo, k_hi,
                        sum(g.many for g in groups))


def as_grouping(counts: GradedCounts) -> Grouping:
    """A :class:`Grouping` of the options (keys; the other fields from kappa, for display)."""
    out = []
    for g in counts.groups:
        first = tuple((sum(v), 0) for v in g.kappa)
        out.append(RankGroup(g.keys, tuple({c: 1} for c, _ in first), first, tuple(0 for _ in g.keys)))
    return Grouping(tuple(out), "graded options (bounded scale)", False)


def digits(counts: GradedCounts) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """Per group, the options' digits over the dimensions (mu, kappa: int64 (options, D)),
    the rows' digits (rows, D) and the strides of the flattened multi-index."""
    dims = [counts.bound.index(g) for g in counts.dims]
    radix = [c + 1 for c in counts.caps]
    strides = np.array([math.prod(radix[i + 1:]) for i in range(len(radix))], np.int64)
    rows = np.array(list(np.ndindex(*radix)), np.int64).reshape(math.prod(radix), len(radix))
    mu = [np.array([[v[d] for d in dims] for v in g.mu], np.int64).reshape(len(g.keys), len(dims))
          for g in counts.groups]
    kappa = [np.array([[v[d] for d in dims] for v in g.kappa], np.int64).reshape(len(g.keys), len(dims))
             for g in counts.groups]
    return mu, kappa, rows, strides


__all__ = ["GradedCounts", "GradedGroup", "as_grouping", "digits", "exact_count", "excess", "graded_counts",
           "graded_groups"]
