"""Slow, obviously correct reference implementations (the test oracles).

Rational measures are computed in exact rational arithmetic (fractions.Fraction) straight
from their definitions (SPEC section 3); measures with logarithms in 50-digit mpmath,
with values closer than 1e-40 counted as equal. Nothing here uses irscale's own code.
"""
from __future__ import annotations

import functools
import itertools
from fractions import Fraction

import mpmath

DIGITS = 50
EQ_EPS = mpmath.mpf(10) ** -40


def all_runs(n):
    return [tuple(r) for r in itertools.product((0, 1), repeat=n)]


def P(run, rb=None):
    return Fraction(sum(run), len(run))


def R(run, rb):
    return Fraction(sum(run), rb)


def F1(run, rb):
    p, r = P(run), R(run, rb)
    return Fraction(0) if p + r == 0 else 2 * p * r / (p + r)


def AP(run, rb):
    total, seen = Fraction(0), 0
    for k, rel in enumerate(run, start=1):
        if rel:
            seen += 1
            total += Fraction(seen, k)
    return total / rb


def RR(run, rb=None):
    for k, rel in enumerate(run, start=1):
        if rel:
            return Fraction(1, k)
    return Fraction(0)


def RBP(p):
    p = Fraction(p)

    def f(run, rb=None):
        return (1 - p) * sum(p ** (k - 1) * rel for k, rel in enumerate(run, start=1))
    return f


def _jk(b, k):
    return mpmath.mpf(1) if k < b else 1 / mpmath.log(k, b)


@functools.cache
def DCG(b):
    @functools.cache
    def f(run, rb=None):
        with mpmath.workdps(DIGITS):
            return mpmath.fsum(rel * _jk(b, k) for k, rel in enumerate(run, start=1))
    return f


def nDCG(b):
    def f(run, rb):
        n = len(run)
        ideal = [1] * min(rb, n) + [0] * (n - min(rb, n))
        with mpmath.workdps(DIGITS):
            return DCG(b)(tuple(run)) / DCG(b)(tuple(ideal))
    return f


@functools.cache
def _dcg_trec(run):
    with mpmath.workdps(DIGITS):
        return mpmath.fsum(rel / mpmath.log(k + 1, 2) for k, rel in enumerate(run, start=1))


def nDCG_trec(run, rb):
    n = len(run)
    dcg = _dcg_trec
    with mpmath.workdps(DIGITS):
        ideal = [1] * min(rb, n) + [0] * (n - min(rb, n))
        return dcg(tuple(run)) / dcg(tuple(ideal))


def unq_ranks(values):
    """Distinct values (sorted) and the 1-based unq rank of every input value."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    distinct, ranks = [], [0] * len(values)
    for i in order:
        v = values[i]
        if not distinct or not _equal(distinct[-1], v):
            distinct.append(v)
        ranks[i] = len(distinct)
    return distinct, ranks


def _equal(a, b):
    if isinstance(a, Fraction) and isinstance(b, Fraction):
        return a == b
    with mpmath.workdps(DIGITS):
        return abs(mpmath.mpf(a) - mpmath.mpf(b)) <= EQ_EPS * max(1, abs(mpmath.mpf(a)))


def oracle(fn, n, rb=None):
    """(feasible runs, their exact values, distinct values, unq ranks) for rb (None: all)."""
    runs = [r for r in all_runs(n) if rb is None or sum(r) <= rb]
    vals = [fn(r, rb) for r in runs]
    distinct, ranks = unq_ranks(vals)
    return runs, vals, distinct, ranks


#: measure name -> reference function(run, rb)
REFERENCES = {
    "P": P, "R": R, "F1": F1, "AP": AP, "RR": RR,
    "RBP(p=0.3)": RBP("0.3"), "RBP(p=0.5)": RBP("0.5"), "RBP(p=0.8)": RBP("0.8"), "RBP(p=0.7)": RBP("0.7"),
    "DCG(b=2)": DCG(2), "DCG(b=10)": DCG(10), "DCG(b=3)": DCG(3),
    "nDCG(b=2)": nDCG(2), "nDCG(b=10)": nDCG(10), "nDCG_trec": nDCG_trec,
    "ERR": lambda run, rb=None: gERR((0, 1))(run),
}
RB_DEPENDENT = {"R", "F1", "AP", "nDCG(b=2)", "nDCG(b=10)", "nDCG_trec"}


# -- graded measures (REL = {0..G}, gains g) ------------------------------------------------
def graded_runs(levels, n):
    return [tuple(r) for r in itertools.product(range(levels), repeat=n)]


def gP(gains):
    def f(run, rb=None):
        return Fraction(sum(gains[r] for r in run), len(run) * gains[-1])
    return f


def gRBP(p, gains):
    p = Fraction(p)

    def f(run, rb=None):
        return (1 - p) * sum(p ** (k - 1) * gains[r] for k, r in enumerate(run, start=1)) / gains[-1]
    return f


def gDCG(b, gains):
    def f(run, rb=None):
        with mpmath.workdps(DIGITS):
            return mpmath.fsum(gains[r] * _jk(b, k) for k, r in enumerate(run, start=1))
    return f


def gERR(gains):
    """ERR with R(g) = (2^gain - 1) / 2^top gain (Chapelle et al.), exact."""
    def f(run, rb=None):
        m = gains[-1]
        value, stay = Fraction(0), Fraction(1)
        for k, r in enumerate(run, start=1):
            grade = Fraction(2 ** gains[r] - 1, 2 ** m)
            value += stay * grade / k
            stay *= 1 - grade
        return value
    return f


def gRR(threshold):
    """1 / rank of the first document with grade >= threshold, 0 if none."""
    def f(run, rb=None):
        for k, r in enumerate(run, start=1):
            if r >= threshold:
                return Fraction(1, k)
        return Fraction(0)
    return f


def gR(gains):
    """Graded recall: total gain retrieved / total gain of the judged documents, the
    topic's per-grade counts c = (c_1..c_G) given as rb."""
    def f(run, c):
        return Fraction(sum(gains[r] for r in run), sum(cg * gains[g] for g, cg in enumerate(c, start=1)))
    return f


def _ideal(c, n):
    """The ideal graded run of per-grade counts c: grades in decreasing order, cut at n."""
    grades = [g for g in range(len(c), 0, -1) for _ in range(c[g - 1])]
    return tuple((grades + [0] * n)[:n])


def gnDCG(b, gains):
    """Graded nDCG with the J-K discount of base b; ideal run from the counts c."""
    dcg = gDCG(b, gains)

    def f(run, c):
        with mpmath.workdps(DIGITS):
            return dcg(run) / dcg(_ideal(c, len(run)))
    return f


def gnDCG_trec(gains):
    """trec_eval's ndcg_cut with graded gains: discount 1/log2(k+1) at every rank."""
    def dcg(run):
        return mpmath.fsum(gains[r] / mpmath.log(k + 1, 2) for k, r in enumerate(run, start=1))

    def f(run, c):
        with mpmath.workdps(DIGITS):
            return dcg(run) / dcg(_ideal(c, len(run)))
    return f


def feasible_oracle(fn, levels, n, c):
    """(runs feasible for per-grade counts c, exact values, distinct values, unq ranks):
    runs with at most c_g documents of grade g."""
    runs = [r for r in graded_runs(levels, n) if all(r.count(g) <= c[g - 1] for g in range(1, levels))]
    vals = [fn(r, c) for r in runs]
    distinct, ranks = unq_ranks(vals)
    return runs, vals, distinct, ranks


#: graded RB-dependent measure name (without cutoff) -> (reference(run, counts), levels)
GRADED_RB = {
    "gR(gains=(0,1,2))": (gR((0, 1, 2)), 3),
    "gR(gains=(0,1,3,4))": (gR((0, 1, 3, 4)), 4),
    "nDCG(b=2,gains=(0,1,2))": (gnDCG(2, (0, 1, 2)), 3),
    "nDCG(b=3,gains=(0,1,1,4))": (gnDCG(3, (0, 1, 1, 4)), 4),
    "nDCG_trec(gains=(0,1,2))": (gnDCG_trec((0, 1, 2)), 3),
    "nDCG_trec(gains=(0,1,3,7))": (gnDCG_trec((0, 1, 3, 7)), 4),
}


def graded_oracle(fn, levels, n):
    """(all runs of {0..levels-1}^n, exact values, distinct values, unq ranks)."""
    runs = graded_runs(levels, n)
    vals = [fn(r) for r in runs]
    distinct, ranks = unq_ranks(vals)
    return runs, vals, distinct, ranks


#: graded measure name (without cutoff) -> (reference, levels)
GRADED = {
    "gP(gains=(0,1,2))": (gP((0, 1, 2)), 3),
    "gP(gains=(0,1,3,4))": (gP((0, 1, 3, 4)), 4),
    "RBP(gains=(0,1,2),p=0.5)": (gRBP("0.5", (0, 1, 2)), 3),
    "RBP(gains=(0,1,2),p=0.8)": (gRBP("0.8", (0, 1, 2)), 3),
    "RBP(gains=(0,2,3,7),p=0.3)": (gRBP("0.3", (0, 2, 3, 7)), 4),
    "DCG(b=2,gains=(0,1,2))": (gDCG(2, (0, 1, 2)), 3),
    "DCG(b=2,gains=(0,1,3))": (gDCG(2, (0, 1, 3)), 3),
    "DCG(b=3,gains=(0,1,1,4))": (gDCG(3, (0, 1, 1, 4)), 4),
    "ERR(gains=(0,1,2))": (gERR((0, 1, 2)), 3),
    "ERR(gains=(0,1,2,3))": (gERR((0, 1, 2, 3)), 4),
    "RR(gains=(0,1,2),rel=2)": (gRR(2), 3),
    "RR(gains=(0,1,2,3),rel=2)": (gRR(2), 4),
    "RR(gains=(0,1,2))": (gRR(1), 3),
}


# -- Twist and CRP (SPEC_MEASURES sections 3 and 4), written from the text ------------------
def _rp(run, c):
    """Relative positions: 0 inside the grade's ideal interval, k - lo before, k - hi after."""
    G, rb = len(c), sum(c)
    lo, hi = {}, {}
    for g in range(1, G + 1):
        above = sum(c[h - 1] for h in range(g + 1, G + 1))
        lo[g], hi[g] = 1 + above, above + c[g - 1]
    lo[0], hi[0] = rb + 1, len(run)
    out = []
    for k, r in enumerate(run, start=1):
        out.append(k - lo[r] if k < lo[r] else k - hi[r] if k > hi[r] else 0)
    return out


def _crp(run, c):
    return list(itertools.accumulate(_rp(run, c)))


def twist(crossing="impl"):
    """Twist tau = (rho + sigma) / 2 with the crossing rule of the spec (run feasible, N >= 2RB)."""
    def f(run, c):
        n, rb = len(run), sum(c)
        if not any(run):
            return Fraction(0)
        crp = _crp(run, c)
        j = None
        for i in range(n - 1):
            a, b = crp[i], crp[i + 1]
            hit = ((a <= 0) != (b <= 0)) if crossing == "impl" else ((a <= 0 and b >= 0) or (a >= 0 and b <= 0))
            if hit:
                j = i + 1
                break
        if j is None:
            rho = Fraction(1) if all(x == 0 for x in crp) else Fraction(0)
        else:
            rho = Fraction(rb, max(rb, j))
        rp = _rp(run, c)
        s_plus, s_minus = sum(x for x in rp if x > 0), -sum(x for x in rp if x < 0)
        fs_minus = Fraction(rb * (rb + 1), 2)
        fs_plus = rb * (n - rb) + Fraction(rb - sum(x * x for x in c), 2)
        sp, sm = 1 - s_plus / fs_plus, 1 - s_minus / fs_minus
        sigma = Fraction(0) if sp + sm == 0 else 2 * sp * sm / (sp + sm)
        return (rho + sigma) / 2
    return f


def _worst(c, n):
    return tuple([0] * (n - sum(c)) + [g for g in range(1, len(c) + 1) for _ in range(c[g - 1])])


def _balance(crp, rb):
    start = crp.index(min(crp))
    for k in range(start, len(crp)):
        if crp[k] >= 0:
            return max(k + 1, rb)
    return None


def crp_indicator(ind):
    """CRP indicators of section 4 (CRP_min against min CRP_w, as printed); None = -inf."""
    def f(run, c):
        n, rb = len(run), sum(c)
        crp, crp_w = _crp(run, c), _crp(_worst(c, n), c)
        b_r, b_w = _balance(crp, rb), _balance(crp_w, rb)
        if ind == "rho":
            return Fraction(rb, b_r) if b_r else Fraction(0)
        if ind == "b_ratio":
            return 1 - Fraction(b_r, b_w) if b_r else None
        if ind == "min":
            return 1 - Fraction(min(crp), min(crp_w))
        return 1 - Fraction(crp[-1], crp_w[-1])
    return f


# -- utilities with effort over truncated rankings (SPEC_MEASURES section 5) -----------------
def utility(kind, p=None, e=Fraction(1, 20), grades=1):
    """RBPU, FlatU (gain g/G) and ERRU, RBU (cascade gain rel_k prod_{j<k}(1 - rel_j),
    rel = (2^g - 1)/2^G) of a ranking of its own length, exact."""
    p = None if p is None else Fraction(p)

    def f(ranking, rb=None):
        total, stay = Fraction(0), Fraction(1)
        for k, g in enumerate(ranking, start=1):
            if kind in ("RBPU", "FlatU"):
                gain = Fraction(g, grades)
            else:
                rel = Fraction(2 ** g - 1, 2 ** grades)
                gain = rel * stay
                stay *= 1 - rel
            disc = {"RBPU": (1 - p) * p ** (k - 1) if p is not None else None, "FlatU": 1,
                    "ERRU": Fraction(1, k), "RBU": (1 - p) * p ** (k - 1) if p is not None else None}[kind]
            total += disc * (gain - e)
        return total
    return f


def cascade_rbp(p, grades=1):
    """The base measure of RBU: (1 - p) sum p^(k-1) rel_k prod_{j<k} (1 - rel_j)."""
    return utility("RBU", p, Fraction(0), grades)


def dcgu(e=Fraction(1, 20), grades=1):
    """DCGU(e) = sum_{k<=n} (g_k/G - e) / log2(k + 1), mpmath."""
    def f(ranking, rb=None):
        with mpmath.workdps(DIGITS):
            return mpmath.fsum((mpmath.mpf(Fraction(g, grades).numerator) / Fraction(g, grades).denominator
                                - mpmath.mpf(e.numerator) / e.denominator) / mpmath.log(k + 1, 2)
                               for k, g in enumerate(ranking, start=1))
    return f


def oie(d=20000, beta=Fraction(105, 100)):
    """OIE = H(S) + H(G) - beta H(S,G) of a ranking for per-grade counts c, from the text of
    SPEC_MEASURES section 5 (natural logarithms; D * H terms divided by D)."""
    def f(ranking, c):
        with mpmath.workdps(DIGITS):
            D = mpmath.mpf(d)
            m = {v: sum(c[v - 1:]) for v in range(1, len(c) + 1)}
            hs = mpmath.fsum(mpmath.log(D / i) for i in range(1, len(ranking) + 1))
            hg = mpmath.fsum(c[v - 1] * mpmath.log(D / m[v]) for v in m if c[v - 1])
            ci = [sum(1 for h in ranking[:i] if h >= ranking[i - 1]) for i in range(1, len(ranking) + 1)]
            hsg = mpmath.fsum(mpmath.log(D / x) for x in ci)
            hsg += mpmath.fsum((c[v - 1] - ranking.count(v)) * mpmath.log(D / m[v]) for v in m if c[v - 1])
            b = mpmath.mpf(Fraction(beta).numerator) / Fraction(beta).denominator
            return (hs + hg - b * hsg) / D
    return f


# -- the truncated run space (rankings of length 0..N; SPEC_MEASURES section 5) -------------------
#: Padding cell after the end of a ranking in (n_runs, N) arrays.
PAD = -1


def truncated_space_size(levels: int, n: int) -> int:
    """Number of rankings of length 0..n over ``levels`` grades."""
    return sum(levels ** m for m in range(n + 1))


def truncated_offset(levels: int, length: int) -> int:
    """Id of the first ranking of the given length (all shorter rankings come first)."""
    return truncated_space_size(levels, length - 1) if length > 0 else 0


def truncated_id(ranking, levels: int) -> int:
    """Id of a ranking: by length, then base-levels number with r_1 most significant."""
    rid = 0
    for g in ranking:
        if not 0 <= int(g) < levels:
            raise ValueError(f"grade {g} is outside 0..{levels - 1}")
        rid = rid * levels + int(g)
    return truncated_offset(levels, len(ranking)) + rid


def truncated_ranking(rid: int, levels: int) -> tuple:
    """The ranking with the given id (inverse of :func:`truncated_id`)."""
    length = 0
    while rid >= levels ** length:
        rid -= levels ** length
        length += 1
    digits = []
    for _ in range(length):
        rid, d = divmod(rid, levels)
        digits.append(d)
    return tuple(reversed(digits))


def truncated_rankings(levels: int, n: int) -> list:
    """Every ranking of length 0..n as tuples, in id order."""
    return [r for m in range(n + 1) for r in itertools.product(range(levels), repeat=m)]


def truncated_runs(levels: int, n: int):
    """Every ranking of length 0..n in id order: (int8 (size, n) padded with PAD, lengths)."""
    import numpy as np
    rankings = truncated_rankings(levels, n)
    runs = np.full((len(rankings), n), PAD, dtype=np.int8)
    lengths = np.fromiter((len(r) for r in rankings), dtype=np.int64, count=len(rankings))
    for i, r in enumerate(rankings):
        runs[i, :len(r)] = r
    return runs, lengths
