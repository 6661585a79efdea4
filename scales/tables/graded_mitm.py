"""Graded rank oracles for count vectors that bound several grades: meet in the middle with
Pareto-minimal count vectors.

The measure. A graded DCG with integer gains ``gains[0..G]`` and a logarithmic discount
(trec_eval's 1/log2(k + 1) of nDCG_trec, or the Jarvelin-Kekalainen discount of DCG(b) and
nDCG(b)) over runs of N grades, restricted to the runs *feasible* for a count vector
c = (c_1..c_G): at most c_g documents of grade g (c_g >= N bounds nothing). nDCG at c is
that DCG divided by a positive constant (the ideal DCG of c), so it has the same ranks.

Groups. The discount of rank k is ``coef_k * X_m`` with coef_k rational and
X_m = ln(base) / ln(m), m not a perfect power (X = 1 for the rational ranks:
:func:`~irscale.scales.measures.keys.log_discount`). The ranks of one m form a *group*
(trec, N = 20: {1, 3, 7, 15} (k + 1 = 2, 4, 8, 16), {2, 8} (3, 9) and 14 single ranks). With
L_i the lcm of the denominators of group i's coefficients, a run's *part* in group i is the
integer t_i = sum_{k in i} gains[r_k] * coef_k * L_i, and DCG = sum_i (X_{m_i} / L_i) t_i.
Under the independence assumption of docs/exactness.md (1 and the X_m linearly independent
over the rationals) two runs have equal values exactly when their tuples of parts are equal.
So the distinct feasible values are the distinct *feasible tuples*: the tuples t that at
least one feasible run realises, and the unq rank of a feasible run with tuple t_q is
1 + #{feasible tuples t : V(t) < V(t_q)}.

Feasibility with several realisations. A tuple may be realised by runs with different count
vectors (gains (0,1,2,3): grade 1 at rank 1 and grade 2 at rank 3 give the same part 12 in
the group {1, 3, 7, 15}); it is feasible when SOME realisation fits c, and is one value
however many fit. A grade with c_g = 0 is no option at all (its runs are infeasible, so every
realisation avoids it); of the others only the bounded grades matter (D: the g with
0 < c_g < N); a count vector is
over D, and box = {v : v <= c}. For an option t_i of group i let R_i(t_i) be the count
vectors of its realisations (assignments of grades to the group's ranks with part t_i) and
P_i(t_i) = min(R_i(t_i) & box), its Pareto-minimal elements in the box (an antichain).

Lemma 1. t is feasible iff there are v_i in P_i(t_i) with sum_i v_i <= c.
Proof. The groups partition the ranks, so a run realising t is one realisation rho_i of each
t_i, chosen independently, and its count vector is sum_i cnt(rho_i). If it fits c, every
cnt(rho_i) <= c (counts are >= 0) lies in R_i & box and dominates some v_i in P_i (finite
sets have minimal elements below each element); sum v_i <= sum cnt(rho_i) <= c. Conversely
each v_i is the count vector of a realisation rho_i, and the run of the rho_i fits c.

The sides. The groups are split into sides A and B; an *entry* of a side is a tuple of
options of its groups (a partial tuple), with P(e) = min((P_1(e_1) (+) P_2(e_2) (+) ...) & box)
((+): Minkowski sum), computed group by group as min((P (+) P_i) & box): equal to the
definition because the box is down-closed, so every element of X (+) Y in the box dominates
an element of min(X) (+) min(Y) that is in the box too. Entries with P(e) empty are
infeasible with anything and dropped. Each tuple t is exactly one pair (a, b), its
restrictions to the two sides, and by Lemma 1 (applied to the two sides as two groups) it is
feasible iff F(P(a), P(b)): some u in P(a) and v in P(b) have u + v <= c. F depends on the
two antichains only: entries are interned by antichain (*classes*), F is a matrix of classes,
and A's classes with equal rows of F share one *row*, with its feasible B entries counted per
block of B (sorted by value) so that a count below any bound is a block count and a short scan.

Counting once. K = sum over A entries of the number of B entries feasible for its row: every
feasible tuple is one pair (a, b) with F(a's row, b's class) = 1, counted once, since feasibility is a
predicate of the pair (whichever realisations witness it, however many count vectors they
have), never a sum over realisations. The rank of a feasible run counts, in the same way, the
pairs whose value is below its own.

Floats and ties (as :mod:`~irscale.scales.tables.oracle_form` decides them). Each option's
value (X_m / L) t is correctly rounded to float64, an entry's value is the float sum of its
options', and a pair's float value S = s_a + s_b lies within ``bound`` = 2 (q + 3) u s_max
of the exact V (q groups, u = 2^-53, s_max the largest |value|). A query (the run's own pair,
float y) counts the pairs with s_b < fl(y - M - s_a) as below and lists the pairs with
fl(y - M - s_a) <= s_b <= fl(y + M - s_a), ``M`` = 2 bound + 8 u s_max: the first are below
V_q and every pair in neither set is above it (the roundings of y -+ M and of the subtractions
err by at most 3 u s_max, and bound covers the errors of S and of y together). A
listed pair equal to the run's own is its tuple; any other is decided by its exact value in
:data:`~irscale.scales.measures.keys.MP_DIGITS` digits (a sum of integers times the X_m / L),
and two different tuples whose values agree to MP_DIGITS - 10 digits raise
:class:`~irscale.errors.CertificationError` (the independence assumption failing), never a
silent tie.

The split. Groups of several ranks go to A (they hold the several realisations), then single
ranks by decreasing span; A takes the fewest groups such that B has at most :data:`B_LIMIT`
entries and the rows' block counts (16 bytes per row and 64 entries of B) fit
:data:`ROW_BUDGET`, both counted from the classes before a side is built. A query visits
every A entry (sorted queries in chunks, :mod:`~irscale.scales.tables.graded_mitm_kernels`),
so the cost of ranking is about (queries) x |A| probes of B. At N = 20 with 4 levels, B holds
the 12 bottom single ranks (4^12 entries) and A the rest (about 11,000 entries for
c = (20, 20, 8)); with 6 levels A grows to about 1.6 * 10^7 entries and ranking slows down
in proportion (exact still).

Kernels: :mod:`irscale.scales.tables.graded_mitm_kernels` (sides are built sorted, a merge per group);
the sides' entries: :mod:`irscale.scales.tables.graded_mitm_sides`; plain-Python reference from the
definition (every run enumerated): tests/graded_reference.py.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import mpmath
import numpy as np

from irscale.enumerate.lazy import lazy_module
from irscale.errors import CertificationError, MeasureError, RunError
from irscale.scales.measures.keys import MP_DIGITS, U, log_discount
from irscale.scales.tables import graded_mitm_bases as bases
from irscale.scales.tables.graded_mitm_sides import Group, Side, classes_of, pareto

mk = lazy_module("irscale.scales.tables.graded_mitm_kernels")

#: Largest side B (entries, about 12 bytes each) a split may build ...
B_LIMIT = 1 << 24
#: ... and the most bytes the rows' block counts over B may take (16 bytes per row and block
#: of 64 entries).
ROW_BUDGET = 1 << 29
#: Entries of B per bucket of its index.
BUCKET_ENTRIES = 4
#: Largest side A (entries).
A_LIMIT = 1 << 25
#: Batches of fewer queries times A entries than this are scanned in one thread.
PARALLEL_WORK = 1 << 22
#: Band pairs a query keeps in its first scan (queries with more are scanned again).
CAP = 8

Discount = tuple[Fraction, "int | None"]
#: Correctly rounded option values by (base, m, part, L).
_FLOATS: dict[tuple, float] = {}


def trec_discounts(n: int) -> tuple[list[Discount], int]:
    """trec_eval's discount 1/log2(k + 1) of ranks 1..n in formal form, and its base (2)."""
    return [log_discount(2, k + 1) for k in range(1, n + 1)], 2


def jk_discounts(b: int, n: int) -> tuple[list[Discount], int]:
    """The Jarvelin-Kekalainen discount of base b (1 below rank b, ln b / ln k from b on)."""
    return [(Fraction(1), None) if k < b else log_discount(b, k) for k in range(1, n + 1)], b


def discounts_of_measure(measure: object) -> tuple[list[Discount], int]:
    """The formal discounts of a logarithmic irscale measure (DCG, nDCG, nDCG_trec), read from
    its exact key (:class:`~irscale.scales.measures.keys.FormalLogKey`): rank k's weight of
    grade g is gains[g] * (coef_k * denom) shifted into its coordinate's field."""
    spec, gains = measure.spec, tuple(measure.gains)
    top = next((g for g, x in enumerate(gains) if x), None)
    if top is None or not hasattr(spec, "coords"):
        raise MeasureError(f"{measure}: not a logarithmic measure with a nonzero gain")
    out = []
    for k in range(1, measure.n + 1):
        c = spec.coordinate_of_rank(k)
        unit = (spec.weights[k - 1][top] >> spec.offsets[c]) // gains[top]
        out.append((Fraction(unit, spec.denoms[c]), spec.coords[c]))
    return out, spec.base


class GradedMitm:
    """The rank oracle of a graded logarithmic DCG over the runs of N grades feasible for
    the count vector ``counts`` (c_1..c_G; see the module docstring). ``discounts``: per rank
    (coef, m) (:func:`trec_discounts`, :func:`jk_discounts`), with X_m = ln(base) / ln(m).
    ``b_limit``, ``row_budget``: the largest side B and the most bytes of block counts a split may
    take (the smallest side A within them is chosen); ``like``: an oracle of the same measure and
    vector (another split) whose groups and classes this one starts from."""

    def __init__(self, n: int, gains: Sequence[int], counts: Sequence[int], discounts: list[Discount], base: int,
                 *, b_limit: int = B_LIMIT, row_budget: int = ROW_BUDGET, like: GradedMitm | None = None):
        self.n, self.gains, self.base = n, tuple(int(g) for g in gains), base
        self.levels = len(self.gains)
        if len(counts) != self.levels - 1 or any(c < 0 for c in counts) or len(discounts) != n:
            raise MeasureError(f"counts {tuple(counts)} for {self.levels} levels, or {len(discounts)} discounts "
                               f"for N = {n}")
        self.counts = tuple(min(int(c), n) for c in counts)
        self.discounts = list(discounts)
        # the grades a run may hold (a count of 0 rules its grade out: no option has it), and
        # the bounded ones among them, the dimensions of the count vectors
        self.grades = [0] + [g for g in range(1, self.levels) if self.counts[g - 1] > 0]
        self.dims = [g for g in self.grades[1:] if self.counts[g - 1] < n]
        self.cap = tuple(self.counts[g - 1] for g in self.dims)
        if like is not None:                        # the same vector's classes and groups, copied
            if (like.gains, like.counts, like.base, like.discounts) != (self.gains, self.counts, base, discounts):
                raise ValueError("like: an oracle of another measure or count vector")
            self._ac, self._ac_id, self._comb = list(like._ac), dict(like._ac_id), dict(like._comb)
            self._sides, self.empty, self.zero = dict(like._sides), like.empty, like.zero
            self._x, self.groups = like._x, like.groups
        else:
            self._ac: list[tuple] = []
            self._ac_id: dict[tuple, int] = {}
            self._comb: dict[tuple[int, int], int] = {}
            self._sides: dict[tuple, dict[int, int]] = {}
            self.empty, self.zero = self._intern(()), self._intern((tuple(0 for _ in self.dims),))
            with mpmath.workdps(MP_DIGITS + 10):
                lb = mpmath.log(base)
                self._x = {m: (mpmath.mpf(1) if m is None else lb / mpmath.log(m))
                           for m in {m for _, m in discounts}}
            by_m: dict = {}
            for k, (coef, m) in enumerate(discounts, start=1):
                by_m.setdefault(m, []).append((k, coef))
            self.groups = [self._group(by_m[m], m) for m in sorted(by_m, key=lambda x: (x is not None, x or 0))]
        smax = sum(float(np.abs(g.floats).max()) for g in self.groups)
        self.smax = smax
        self.bound = 2 * (len(self.groups) + 3) * U * smax
        self.margin = 2 * self.bound + 8 * U * smax + 4 * np.nextafter(0, 1)
        self._split(b_limit, row_budget)

    # -- groups and antichains -------------------------------------------------------------
    def _intern(self, ac: tuple) -> int:
        got = self._ac_id.get(ac)
        if got is None:
            got = self._ac_id[ac] = len(self._ac)
            self._ac.append(ac)
        return got

    def _fits(self, v: tuple) -> bool:
        return all(a <= b for a, b in zip(v, self.cap))

    def _float(self, m: int | None, key: int, L: int) -> float:
        """(X_m / L) key correctly rounded (from MP_DIGITS + 10 digits; cached)."""
        got = _FLOATS.get((self.base, m, key, L))
        if got is None:
            with mpmath.workdps(MP_DIGITS + 10):
                got = _FLOATS[(self.base, m, key, L)] = float(self._x[m] * key / L)
        return got

    def _combine(self, i: int, j: int) -> int:
        """The class of min((P_i (+) P_j) & box)."""
        got = self._comb.get((i, j))
        if got is None:
            sums = {tuple(a + b for a, b in zip(u, v)) for u in self._ac[i] for v in self._ac[j]}
            got = self._comb[(i, j)] = self._intern(pareto({v for v in sums if self._fits(v)}))
        return got

    def _group(self, ranks: list[tuple[int, Fraction]], m: int | None) -> Group:
        """Options of a group: every assignment of grades to its ranks by a dynamic programme
        over them, merged by equal part, each with the Pareto-minimal count vectors (in the
        box) of its realisations."""
        L = math.lcm(*(coef.denominator for _, coef in ranks))
        weights = [int(coef * L) for _, coef in ranks]
        unit = [tuple(int(d == g) for d in self.dims) for g in range(self.levels)]
        states: dict[int, set] = {0: {tuple(0 for _ in self.dims)}}
        for w in weights:
            nxt: dict[int, set] = {}
            for key, vecs in states.items():
                for g in self.grades:
                    got = nxt.setdefault(key + self.gains[g] * w, set())
                    for v in vecs:
                        u = tuple(a + b for a, b in zip(v, unit[g]))
                        if self._fits(u):
                            got.add(u)
            states = {key: set(pareto(v)) for key, v in nxt.items()}
        keys = sorted(states)
        if max(abs(k) for k in keys) >= 1 << 62:
            raise MeasureError("gains too large for 64-bit parts")
        floats = np.array([self._float(m, key, L) for key in keys], np.float64)
        classes = np.array([self._intern(pareto(states[key])) for key in keys], np.int64)
        return Group([k for k, _ in ranks], m, weights, L, keys, floats, classes)

    # -- sides ------------------------------------------------------------------------------
    def _side(self, idx: list[int]) -> Side:
        """The entries of the groups ``idx``, group by group, kept sorted by value (each step a
        merge: :func:`~irscale.scales.tables.graded_mitm_kernels.side_step`)."""
        s, code, cls = np.zeros(1), np.zeros(1, np.int64), np.array([self.zero], np.int64)
        radices = []
        for i in idx:
            g = self.groups[i]
            m = len(g)
            table = np.full((len(self._ac), m), self.empty, np.int64)
            present = np.flatnonzero(np.bincount(cls))
            for a in present:
                table[a] = [self._combine(int(a), int(b)) for b in g.classes]
            per = np.bincount(cls, minlength=table.shape[0])
            size = int(per @ (table != self.empty).sum(axis=1))
            out = np.empty(size), np.empty(size, np.int64), np.empty(size, np.int64)
            if mk.side_step(s, code, cls, np.ascontiguousarray(g.floats), table, self.empty, *out) != size:
                raise RuntimeError("a side's merge wrote another number of entries than counted")
            s, code, cls = out
            radices.append(m)
        if math.prod(radices) >= 1 << 62:
            raise MeasureError(f"a side of {len(idx)} groups has more partial tuples than 64-bit codes hold")
        return Side(idx, radices, s, code, cls)

    def _order(self) -> list[int]:
        """Groups in the order sides take them: several ranks first (they hold the several
        realisations), then by decreasing span of values (B gets the narrow bottom ranks)."""
        spans = [float(g.floats.max() - g.floats.min()) for g in self.groups]
        return sorted(range(len(self.groups)), key=lambda i: (len(self.groups[i].ranks) == 1, -spans[i], i))

    def _side_classes(self, idx: list[int]) -> dict[int, int]:
        """The classes of a side's entries and how many entries have each, without building
        the side (a dynamic programme over its groups' options' classes; kept)."""
        got = self._sides.get(tuple(idx))
        if got is not None:
            return got
        counts = {self.zero: 1}
        for i in idx:
            per = np.bincount(self.groups[i].classes)
            nxt: dict[int, int] = {}
            for c, n in counts.items():
                for oc in np.flatnonzero(per):
                    new = self._combine(c, int(oc))
                    if new != self.empty:
                        nxt[new] = nxt.get(new, 0) + n * int(per[oc])
            counts = nxt
        self._sides[tuple(idx)] = counts
        return counts

    def _matrix(self, ua: np.ndarray, ub: np.ndarray) -> np.ndarray:
        """F (uint8 (A classes, B classes)): 1 where some u of the A class and v of the B class
        have u + v <= c (Lemma 1)."""
        vecs = [(j, v) for j, b in enumerate(ub) for v in self._ac[b]]
        V = np.array([v for _, v in vecs], np.int64).reshape(len(vecs), len(self.dims))
        owner = np.array([j for j, _ in vecs], np.int64)
        cap = np.array(self.cap, np.int64)
        F = np.zeros((ua.shape[0], ub.shape[0]), np.uint8)
        for i, a in enumerate(ua):
            for u in self._ac[a]:
                F[i, owner[(V + np.array(u, np.int64) <= cap).all(axis=1)]] = 1
        return F

    def _plan(self, ua: np.ndarray, ub: np.ndarray) -> tuple:
        """F of the sides' classes ``ua``, ``ub``, its distinct rows, the row of each A class
        and the rows' bases (:func:`~irscale.scales.tables.graded_mitm_bases.decompose`)."""
        rows, of_class = np.unique(self._matrix(ua, ub), axis=0, return_inverse=True)
        of_class = of_class.reshape(-1)
        rep: list = [None] * rows.shape[0]
        for a, r in zip(ua.tolist(), of_class.tolist()):
            if rep[r] is None or len(self._ac[a]) < len(rep[r]):
                rep[r] = self._ac[a]
        return (np.ascontiguousarray(rows, np.uint8), of_class,
                *bases.decompose(rows, rep, [self._ac[b] for b in ub], self.cap))

    def _split(self, b_limit: int, row_budget: int) -> None:
        """The split with the smallest side A whose B has at most ``b_limit`` entries and whose
        bases' block counts take at most ``row_budget`` bytes (sizes and bases counted from
        the classes before any side is built)."""
        order = self._order()
        for j in range(1, len(order) + 1):
            a_idx, b_idx = sorted(order[:j]), sorted(order[j:])
            cb = self._side_classes(b_idx)
            size_b = sum(cb.values())
            if size_b > b_limit and j < len(order):
                continue
            ca = self._side_classes(a_idx)
            if sum(ca.values()) > A_LIMIT:
                break
            ua, ub = np.array(sorted(ca), np.int64), np.array(sorted(cb), np.int64)
            plan = self._plan(ua, ub)
            if plan[2].shape[0] * ((size_b >> 6) + 1) * 16 > row_budget:
                continue
            self.A, self.B = self._side(a_idx), self._side(b_idx)
            if (len(self.A), len(self.B)) != (sum(ca.values()), size_b):
                raise RuntimeError("the sides' entries differ from their classes' counts")
            self._rows(ua, ub, plan)
            return
        raise MeasureError(f"no split of the {len(order)} groups fits {A_LIMIT} A entries and {row_budget} "
                           f"bytes of block counts")

    def _rows(self, ua: np.ndarray, ub: np.ndarray, plan: tuple) -> None:
        """The rows of the sides' classes, their bases' block counts over B, and per row its
        feasible B entries (``total``, checked against the classes' counts), their smallest
        and largest value."""
        ua_got, rowsel = classes_of(self.A.cls)
        ub_got, bsel = classes_of(self.B.cls)
        if not (np.array_equal(ua_got, ua) and np.array_equal(ub_got, ub)):
            raise RuntimeError("the sides' classes differ from those planned")
        self.F, of_class, G, self.tstart, self.tbase, self.tsign = plan
        n = len(self.B)
        self.rowA = of_class[rowsel.reshape(-1)].astype(np.int32)
        self.Bcls = bsel.reshape(-1).astype(np.uint16 if ub.shape[0] < 1 << 16 else np.int32)
        nbase = G.shape[0]
        self.cm = np.zeros((nbase, (n >> 6) + 1, 2), np.int64)
        btotal, bmin_, bmax_ = np.zeros(nbase, np.int64), np.zeros(nbase), np.zeros(nbase)
        fill = mk.block_counts if nbase * n >= PARALLEL_WORK else mk.block_counts_serial
        fill(self.B.s, self.Bcls, np.ascontiguousarray(G), self.cm, btotal, bmin_, bmax_)
        term_row = np.repeat(np.arange(self.F.shape[0]), np.diff(self.tstart))
        self.total = np.zeros(self.F.shape[0], np.int64)
        np.add.at(self.total, term_row, self.tsign * btotal[self.tbase])
        per_class = np.bincount(self.Bcls, minlength=ub.shape[0]).astype(np.int64)
        if not np.array_equal(self.total, self.F.astype(np.int64) @ per_class):
            raise RuntimeError("the bases' counts do not add up to the rows'")
        cmin, cmax = np.full(ub.shape[0], np.inf), np.full(ub.shape[0], -np.inf)
        np.minimum.at(cmin, self.Bcls, self.B.s)
        np.maximum.at(cmax, self.Bcls, self.B.s)
        live = self.total > 0
        self.rmin = np.where(live, np.where(self.F == 1, cmin, np.inf).min(axis=1, initial=np.inf), 0.0)
        self.rmax = np.where(live, np.where(self.F == 1, cmax, -np.inf).max(axis=1, initial=-np.inf), 0.0)
        self.Bidx, self.bmin, self.binv = mk.bucket_index(self.B.s, max(1, n // BUCKET_ENTRIES))
        self.users = mk.base_users(self.rowA, self.tstart, self.tbase, self.tsign, nbase)

    # -- answers -----------------------------------------------------------------------------
    @property
    def k(self) -> int:
        """The number of distinct values of the runs feasible for the count vector."""
        return int(mk.feasible_pairs(self.rowA, self.total))

    def parts(self, runs: np.ndarray) -> np.ndarray:
        """Option index in every group of each run (int64 (runs, groups)); raises
        :class:`~irscale.errors.RunError` for runs that are not feasible."""
        runs = np.asarray(runs)
        if runs.ndim != 2 or runs.shape[1] != self.n or (runs.size and (runs.min() < 0 or runs.max() >= self.levels)):
            raise RunError(f"runs must be grades 0..{self.levels - 1} of shape (runs, {self.n})")
        runs = runs.astype(np.int64)
        for g in range(1, self.levels):
            have = (runs == g).sum(axis=1)
            bad = np.flatnonzero(have > self.counts[g - 1])
            if bad.size:
                i = int(bad[0])
                raise RunError(f"run {i} has {int(have[i])} documents of grade {g}, more than the topic's "
                               f"{self.counts[g - 1]}: it cannot occur for this topic")
        gains = np.array(self.gains, np.int64)
        out = np.zeros((runs.shape[0], len(self.groups)), np.int64)
        for i, g in enumerate(self.groups):
            key = sum(gains[runs[:, k - 1]] * w for k, w in zip(g.ranks, g.weights))
            out[:, i] = np.searchsorted(g.keys, key)
        return out

    def _entries(self, side: Side, parts: np.ndarray) -> np.ndarray:
        code = np.zeros(parts.shape[0], np.int64)
        for j, i in enumerate(side.groups):
            code = code * side.radices[j] + parts[:, i]
        pos = side.find(code)
        if (pos < 0).any():
            raise RuntimeError("a feasible run's partial tuple is missing from its side")
        return pos

    def rank_runs(self, runs: np.ndarray) -> np.ndarray:
        """Unq ranks (1..K, int64) of feasible runs (uint8 (runs, N) of grades)."""
        parts = self.parts(runs)
        if parts.shape[0] == 0:
            return np.zeros(0, np.int64)
        return self.rank_pairs(self._entries(self.A, parts), self._entries(self.B, parts))

    def rank_pairs(self, qa: np.ndarray, qb: np.ndarray) -> np.ndarray:
        """Unq ranks (1..K) of the feasible tuples given as pairs (A entry, B entry)."""
        qa, qb = np.asarray(qa, np.int64), np.asarray(qb, np.int64)
        if qa.shape[0] == 0:
            return np.zeros(0, np.int64)
        y = self.A.s[qa] + self.B.s[qb]
        below, starts, pa, pb = self._scan(y - self.margin, y + self.margin)
        ranks = below + 1
        for q in range(y.shape[0]):
            seen = False
            for j in range(starts[q], starts[q + 1]):
                if pa[j] == qa[q] and pb[j] == qb[q]:
                    seen = True
                elif self._less(int(pa[j]), int(pb[j]), int(qa[q]), int(qb[q])):
                    ranks[q] += 1
            if not seen:
                raise RuntimeError(f"run {q}: its own value is missing from the band of its query")
        return ranks

    def _scan(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per query: the pairs counted below ``lo`` and the band pairs up to ``hi`` (module
        docstring), as (counts, starts, A entries, B entries) in the callers' order."""
        order = np.argsort(lo, kind="stable")
        los, his = np.ascontiguousarray(lo[order]), np.ascontiguousarray(hi[order])
        nq = los.shape[0]
        args = (self.A.s, self.rowA, self.B.s, self.Bcls, self.Bidx, self.bmin, self.binv, self.F, *self.users,
                self.cm, self.total, self.rmin, self.rmax, mk.TILE)
        counts, sizes = np.zeros(nq, np.int64), np.zeros(nq, np.int64)
        pa, pb = np.zeros(nq * CAP, np.int64), np.zeros(nq * CAP, np.int64)
        scan = mk.scan_many if nq * len(self.A) >= PARALLEL_WORK and nq > mk.CHUNK else mk.scan_serial
        scan(los, his, *args, CAP, counts, sizes, pa, pb)
        lists_a, lists_b = [], []
        redo = np.flatnonzero(sizes > CAP)
        extra = {}
        if redo.size:
            big = int(sizes[redo].max())
            c2, s2 = np.zeros(redo.size, np.int64), np.zeros(redo.size, np.int64)
            a2, b2 = np.zeros(redo.size * big, np.int64), np.zeros(redo.size * big, np.int64)
            scan(los[redo], his[redo], *args, big, c2, s2, a2, b2)
            extra = {int(q): (a2[j * big:j * big + s2[j]], b2[j * big:j * big + s2[j]]) for j, q in enumerate(redo)}
        out_counts = np.zeros(nq, np.int64)
        out_counts[order] = counts
        sizes_o = np.zeros(nq, np.int64)
        sizes_o[order] = sizes
        at = np.zeros(nq, np.int64)
        at[order] = np.arange(nq)
        for q in range(nq):
            j = int(at[q])
            if j in extra:
                lists_a.append(extra[j][0])
                lists_b.append(extra[j][1])
            else:
                n = int(sizes[j])
                lists_a.append(pa[j * CAP:j * CAP + n])
                lists_b.append(pb[j * CAP:j * CAP + n])
        starts = np.concatenate(([0], np.cumsum(sizes_o))).astype(np.int64)
        return out_counts, starts, np.concatenate(lists_a), np.concatenate(lists_b)

    def exact_value(self, a: int, b: int) -> mpmath.mpf:
        """The exact value of the pair (A entry a, B entry b) in MP_DIGITS digits."""
        return self._value(self._pair_keys(a, b))

    def _pair_keys(self, a: int, b: int) -> list[int]:
        keys = [0] * len(self.groups)
        for side, pos in ((self.A, a), (self.B, b)):
            for i, o in zip(side.groups, side.digits(np.array([pos]))[0]):
                keys[i] = int(self.groups[i].keys[o])
        return keys

    def _value(self, keys: list[int]) -> mpmath.mpf:
        with mpmath.workdps(MP_DIGITS):
            return mpmath.fsum(self._x[g.m] * key / g.L for g, key in zip(self.groups, keys))

    def _less(self, a: int, b: int, qa: int, qb: int) -> bool:
        """Whether the pair (a, b) has a smaller value than the pair (qa, qb) (different tuples)."""
        ka, kq = self._pair_keys(a, b), self._pair_keys(qa, qb)
        with mpmath.workdps(MP_DIGITS):
            diff = mpmath.fsum(self._x[g.m] * mpmath.mpf(x - z) / g.L for g, x, z in zip(self.groups, ka, kq) if x != z)
            if abs(diff) <= mpmath.mpf(10) ** (-(MP_DIGITS - 10)) * max(1.0, self.smax):
                raise CertificationError(f"tuples {ka} and {kq} have values equal to {MP_DIGITS - 10} digits: "
                                         f"cannot certify the rank")
            return bool(diff < 0)

    def rank_values(self, raw: np.ndarray, atol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Per raw value x (unnormalised DCG, float): the number of distinct feasible values
        below x - atol - margin, and how many lie within atol + margin of x (1: x is that
        value, unq rank = count + 1; 0: x is no value; more: ambiguous at this tolerance)."""
        x = np.asarray(raw, np.float64).reshape(-1)
        t = atol + self.margin
        below, starts, _, _ = self._scan(x - t, x + t)
        return below, np.diff(starts)

    def select(self, ranks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pairs (A entries, B entries) of the feasible tuples of unq ranks ``ranks``
        (1..K): per rank, the smallest float y with at least that many pair sums counted
        below it (a bisection over the bits of y, all ranks together), then of the pairs
        within a few margins of y the one whose exact rank (:meth:`rank_pairs`) it is."""
        q = np.asarray(ranks, np.int64).reshape(-1)
        lo = np.zeros(q.shape[0], np.int64)                      # the bits of 0.0: no sum is below it
        hi = np.full(q.shape[0], np.float64(self.smax * (1 + 1e-9) + 1.0).view(np.int64))
        while (open_ := np.flatnonzero(hi - lo > 1)).size:
            mid = lo[open_] + (hi[open_] - lo[open_]) // 2
            y = mid.view(np.float64)
            reached = self._scan(y, y)[0] >= q[open_]
            hi[open_[reached]] = mid[reached]
            lo[open_[~reached]] = mid[~reached]
        ys = hi.view(np.float64)
        out_a, out_b = np.zeros(q.shape[0], np.int64), np.zeros(q.shape[0], np.int64)
        for i, (r, y) in enumerate(zip(q.tolist(), ys.tolist())):
            for width in (4, 64, 4096):
                _, _, pa, pb = self._scan(np.array([y - width * self.margin]), np.array([y + width * self.margin]))
                hit = np.flatnonzero(self.rank_pairs(pa, pb) == r)
                if hit.size:
                    out_a[i], out_b[i] = pa[hit[0]], pb[hit[0]]
                    break
            else:
                raise RuntimeError(f"rank {r}: no tuple of that rank near {y!r}")
        return out_a, out_b

    def split_sizes(self) -> tuple[int, int, int, int]:
        """(|A|, |B|, rows, bytes of the bases' block counts) of the split chosen."""
        return len(self.A), len(self.B), int(self.F.shape[0]), int(self.cm.nbytes)


def oracle_of_measure(measure: object, counts: Sequence[int], **kwargs: object) -> GradedMitm:
    """The oracle of an irscale DCG, nDCG or nDCG_trec measure for the count vector ``counts``."""
    discounts, base = discounts_of_measure(measure)
    return GradedMitm(measure.n, measure.gains, counts, discounts, base, **kwargs)
