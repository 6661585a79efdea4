"""RBP(p)@N: rank-biased precision, (1 - p) * sum_k p^(k-1) * g(r_k) / g(G) (Moffat and
Zobel; binary by default, g = (0, 1); graded e.g. ``RBP(gains=(0,1,2),p=0.8)@10``).

With p = a/c in lowest terms the exact key is ``sum_k g(r_k) * a^(k-1) * c^(N-k)`` and
RBP = key * (c - a) / (c^N * g(G)).

``norm`` chooses the divisor of graded gains: ``top`` (default) divides by the top gain
g(G) for every topic; ``topic`` is trec_eval's rule (``rbp``, trec_eval 10): the gains of a
topic are divided by the gain of the topic's highest judged grade t, and only when that
exceeds 1, i.e. by max(g(t), 1). Values, keys and tables are those of a topic with t = G
(the order of runs is the same for every topic); the transform multiplies a topic's
values by :meth:`RBP.topic_value_factor`, g(G) / max(g(t), 1). Binary RBP (or any gains
with g(G) = 1) is the same under both rules and is named with ``norm=top``.

Binary RBP with p <= 1/2 orders runs lexicographically with all values distinct
(p^(k-1) > sum_{j>k} p^(j-1)), so its table is the identity, rank = run id + 1, and is
stored as nothing (layout ``implicit``). Not graded RBP: with gains (0,1,2) and p = 1/2,
(0,2,2,...) beats (1,0,0,...).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from irscale.scales.measures.aliases import OtherName, Request
from irscale.scales.measures.groups import Grouping, per_rank_groups
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import AdditiveKey
from irscale.scales.measures.measure import Measure
from irscale.scales.measures.params import GAINS, PERSISTENCE, REQUIRED, Param

#: How graded gains are normalised: by the top gain, or by the topic's highest (trec_eval).
NORMS = ("top", "topic")
NORM = Param("norm", "choice", "divisor of the gains: top = the top gain g(G); topic = the gain of the topic's highest "
             "judged grade when above 1 (trec_eval's rbp)", default="top", choices=NORMS)


def _trec_eval_p(req: Request) -> str:
    """p of trec_eval's ``rbp`` (0.9 unless ``rbp.p=0.8``, printed ``rbp_p=0.8``)."""
    if req.arg is None:
        return "0.9"
    key, _, value = req.arg.partition("=")
    if key != "p" or not value or "," in value:
        req.fail("irscale reads trec_eval's rbp with its one parameter p (rbp.p=0.8, printed rbp_p=0.8); gains "
                 "given as parameters are not supported")
    return value


def _read_other(cls: type, req: Request) -> Measure:
    """ir_measures' RBP(rel=r,p=x)@k counts levels >= r as relevant: gains (0,..,0,1) of r + 1
    grades (levels above r fold into r); without rel ir_measures means graded RBP, which
    none of its providers computes at a cutoff, so only binary qrels read. trec_eval's
    ``rbp`` ranks the whole run, gains = the qrels' levels divided per topic (norm=topic)."""
    if req.tool == "trec_eval":
        p = _trec_eval_p(req)
        return cls(n=req.n(), p=p, gains=req.levels(), norm="topic")
    rel = req.params.get("rel")
    if rel is None:
        if req.top() > 1:
            req.fail(f"without rel=, ir_measures' RBP is graded RBP, which no ir_measures provider computes at a "
                     f"cutoff: write RBP(rel=1,p=0.8)@10 (levels >= 1 relevant) or irscale's "
                     f"RBP(gains=(0,1,..,{req.top()}),p=0.8)@10")
        return cls(n=req.n(), p=req.params["p"])
    rel = req.threshold()
    return cls(n=req.n(), p=req.params["p"], gains=(0,) * rel + (1,))


@dataclass(frozen=True, repr=False)
class RBP(KeyMeasure):
    name = "RBP"
    bounded_scales = True        # certified rank intervals past N = 40 (tables/bounded.py)
    params = (PERSISTENCE, GAINS, NORM)
    summary = "rank-biased precision with persistence p (graded with gains; norm=topic: trec_eval's per-topic gains)"
    p: Fraction = REQUIRED
    gains: tuple = (0, 1)
    norm: str = "top"
    other_names = (
        OtherName("ir_measures", "RBP", _read_other, "rank-biased precision; rel=r: levels >= r relevant (without "
                  "rel: graded, read on binary qrels only); without k: the whole ranking", "RBP(rel=2,p=0.8)@10",
                  "RBP(gains=(0,0,1),p=0.8)@10; RBP(p=0.8)@10 on binary qrels: RBP(p=0.8)@10",
                  {"p": 0.8, "rel": None}, cutoff="optional"),
        OtherName("trec_eval", "rbp", _read_other, "rank-biased precision of the whole ranking (p = 0.9 unless "
                  "rbp.p=..), gains = the qrels' levels divided by the topic's highest level when above 1",
                  "rbp_p=0.8", "RBP(gains=(0,1,..,T),norm=topic,p=0.8)@depth", cutoff="arg"),
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gains[-1] == 1:               # nothing to divide: one name for one measure
            object.__setattr__(self, "norm", "top")

    def topic_value_factor(self, top_grade: int) -> float:
        """Factor of the values of a topic whose highest judged grade (qrels levels folded
        to 0..G) is ``top_grade``: 1 for ``norm=top``; g(G) / max(g(top_grade), 1) for
        ``norm=topic`` (trec_eval divides a topic's gains by its highest gain when that
        exceeds 1)."""
        if self.norm == "top":
            return 1.0
        g = self.gains
        return g[-1] / max(g[min(max(int(top_grade), 0), len(g) - 1)], 1)

    def key_spec(self) -> AdditiveKey:
        a, c, n, g = self.p.numerator, self.p.denominator, self.n, self.gains
        weights = [[gain * a ** k * c ** (n - 1 - k) for gain in g] for k in range(n)]
        return AdditiveKey(weights=weights, max_key=sum(w[-1] for w in weights), ordered=True,
                           scale=lambda rb: Fraction(c - a, c ** n * g[-1]))

    @property
    def table_layout(self) -> str:
        return "implicit" if self.levels == 2 and self.p <= Fraction(1, 2) else "entries"

    @property
    def prefers_oracle(self) -> bool:
        """Tables of RBP with p > 1/2 hold a value per run: the oracle by default."""
        return self.table_layout != "implicit"

    def rank_grouping(self) -> Grouping | str:
        """One group per rank when the distinct gains are pairwise incongruent modulo c
        (p = a/c): the key then determines r_N modulo c, then r_(N-1), ..., so every
        assignment of gains has its own value (binary RBP always)."""
        c = self.p.denominator
        distinct = sorted(set(self.gains))
        clash = [(x, y) for i, x in enumerate(distinct) for y in distinct[i + 1:] if (y - x) % c == 0]
        if clash:
            x, y = clash[0]
            return (f"gains {x} and {y} differ by a multiple of c = {c} (p = {self.p}): two runs may share a value, "
                    f"so runs are not counted as values; build its table")
        spec = self.spec
        return Grouping(per_rank_groups(spec.weights, self.levels, self.n),
                        f"one group per rank: the key determines r_N modulo c = {c}, then r_(N-1), ... (gains "
                        f"pairwise incongruent modulo c)", True)

    def lexicographic_gap(self) -> Fraction:
        """Smallest gap between lexicographic neighbours x, x+1 of the implicit table:
        min over j of (1 - p)(p^j - sum_{k=j+1}^{N-1} p^k)."""
        p, n = self.p, self.n
        return min((1 - p) * (p ** j - sum(p ** k for k in range(j + 1, n))) for j in range(n))
