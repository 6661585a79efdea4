"""How real qrels and runs are read: trec_eval's conventions in one object.

Every entry point (``transform``, ``compare``, ``Scaled``, PyTerrier, the CLI) takes the
same :class:`Conventions`, with the same defaults: trec_eval's. The raw scores they give
equal trec_eval's for every measure trec_eval has, and :meth:`Conventions.trec_eval`
names the command line they equal:

``rel_level``
    trec_eval's ``-l``: binary measures count levels >= it as relevant (default 1, every
    positive level); graded measures read the levels as gains and ignore it.
``empty_topics``
    a topic judged in the qrels without a relevant document (at ``rel_level``):
    ``"zero"`` (default), as trec_eval counts it: every measure is 0 there and the topic
    counts in every mean; ``"skip"``: left out of every mean (trec_eval has no option for
    it). Its scaled value: the all-non-relevant run is the only run of a recall base of 0
    and the worst run of every scale, so its scaled value is 0, the scaled value of a raw 0
    on any of the measure's scales; raw and scaled means use the same topics.
``missing_topics``
    a topic judged in the qrels that a run does not answer: ``"zero"`` (default) scores
    it as the all-non-relevant run, as ``trec_eval -c`` does (ir_measures users ask for
    it: ir_measures #2); ``"skip"``: left out of that run's means, as trec_eval without
    ``-c``.
``max_grade``
    fold qrels levels above it into it first (None: keep the levels).
``depth``
    trec_eval's ``-M``: documents read per topic of a run; names without a cutoff
    (``map``, ``RR``) rank that many. None (default): the whole ranking, as trec_eval.
``rb_scale``
    the scale of recall-base dependent measures: each topic's own recall base
    (``"feasible"``, default) or the one of RB >= N (``"common"``, the original paper);
    it changes scaled values only.
"""
from __future__ import annotations

import dataclasses

from irscale.errors import IrscaleError

RB_SCALES = ("feasible", "common")
#: What ``empty_topics`` takes: topics without relevant documents scored 0 (trec_eval), or left out.
EMPTY_TOPICS = ("zero", "skip")
#: What ``missing_topics`` takes: topics a run does not answer scored 0 (trec_eval -c), or left out.
MISSING_TOPICS = ("zero", "skip")


def _positive(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise IrscaleError(f"{name} must be an integer >= 1, got {value!r}")


@dataclasses.dataclass(frozen=True)
class Conventions:
    """trec_eval's conventions of reading qrels and runs (module docstring); every field
    is checked when the object is made."""

    rel_level: int | None = None
    empty_topics: str = "zero"
    missing_topics: str = "zero"
    max_grade: int | None = None
    depth: int | None = None
    rb_scale: str = "feasible"

    def __post_init__(self) -> None:
        for name, allowed in (("empty_topics", EMPTY_TOPICS), ("missing_topics", MISSING_TOPICS),
                              ("rb_scale", RB_SCALES)):
            value = getattr(self, name)
            if value not in allowed:
                raise IrscaleError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
        for name in ("rel_level", "max_grade", "depth"):
            _positive(name, getattr(self, name))
        if self.rel_level == 1:
            object.__setattr__(self, "rel_level", None)      # trec_eval's default: one spelling of it

    def trec_eval(self) -> str:
        """The trec_eval command line whose numbers the raw scores equal (``trec_eval -c``,
        ``-l 2``, ``-M 100``), with what differs from trec_eval in parentheses."""
        words = ["trec_eval"]
        if self.missing_topics == "zero":
            words.append("-c")
        if self.rel_level is not None:
            words.append(f"-l {self.rel_level}")
        if self.depth is not None:
            words.append(f"-M {self.depth}")
        text = " ".join(words)
        unlike = []
        if self.empty_topics == "skip":
            unlike.append("topics without a relevant document left out")
        if self.max_grade is not None:
            unlike.append(f"qrels levels above {self.max_grade} read as {self.max_grade}")
        return text + (f" (unlike trec_eval: {'; '.join(unlike)})" if unlike else "")

    def describe(self) -> str:
        """One line for outputs: the trec_eval command line the raw means equal and which
        topics count in them."""
        empty = ("a judged topic without a relevant document counts 0" if self.empty_topics == "zero"
                 else "a judged topic without a relevant document is left out")
        missing = ("a topic a run does not answer counts 0" if self.missing_topics == "zero"
                   else "a topic a run does not answer is left out of its means")
        return f"raw = {self.trec_eval()}: the means trec_eval prints; {empty}; {missing}"


__all__ = ["Conventions", "EMPTY_TOPICS", "MISSING_TOPICS", "RB_SCALES"]
