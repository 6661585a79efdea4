"""Measure names: canonical strings, parsing and its errors."""
import pytest

from irscale import MeasureError, RecallBaseError, parse_measure, parse_measures, scale
from irscale.scales.measures.measure import MAX_N, MAX_RAW_N


@pytest.mark.parametrize("text,canonical", [
    ("AP@10", "AP@10"), (" AP @ 10 ", "AP@10"), ("RBP(p=0.80)@30", "RBP(p=0.8)@30"),
    ("RBP(p=.5)@5", "RBP(p=0.5)@5"), ("nDCG(b=2)@10", "nDCG(b=2)@10"), ("DCG(b=10.0)@5", "DCG(b=10)@5"),
    ("nDCG_trec@30", "nDCG_trec@30"), ("F1@7", "F1@7"), ("RR@1", "RR@1"),
])
def test_canonical_round_trip(text, canonical):
    m = parse_measure(text)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m
    assert hash(parse_measure(str(m))) == hash(m)


def test_rbp_p_is_exact():
    from fractions import Fraction
    assert parse_measure("RBP(p=0.3)@10").p == Fraction(3, 10)


@pytest.mark.parametrize("text,needle", [
    ("RBP(p=1.5)@10", "p must be a number in (0, 1)"),
    ("RBP(p=0)@10", "p must be a number in (0, 1)"),
    ("RBP@10", "needs parameter p"),
    ("AP", "needs a cutoff"),
    ("AP@0", "between 1 and"),
    (f"AP@{MAX_RAW_N + 1}", "between 1 and"),
    (f"Twist@{MAX_N + 1}", "between 1 and"),
    ("AP@10.5", "cutoff after @ must be a positive integer"),
    ("XYZ@10", "unknown measure 'XYZ'"),
    ("ap@10", "did you mean AP"),
    ("DCG(b=1)@10", "integer >= 2"),
    ("DCG(b=2.5)@10", "integer >= 2"),
    ("DCG(q=2)@10", "has no parameter 'q'"),
    ("RBP(p=__import__('os'))@10", "plain non-negative number"),
    ("RBP(0.8)@10", "must be named"),
    ("AP@@10", "cannot parse"),
    ("", "empty measure name"),
])
def test_parse_errors(text, needle):
    with pytest.raises(MeasureError) as e:
        parse_measure(text)
    assert needle in str(e.value)


def test_unknown_lists_known():
    with pytest.raises(MeasureError) as e:
        parse_measure("Foo@3")
    for known in ("AP@10", "RBP(p=0.8)@10", "nDCG(b=2)@10"):
        assert known in str(e.value)


def test_parse_list():
    ms = parse_measures("AP@10, DCG(b=2)@10,RBP(p=0.8)@5,AP@10")
    assert [str(m) for m in ms] == ["AP@10", "DCG(b=2)@10", "RBP(p=0.8)@5"]


def test_rb_rules():
    with pytest.raises(RecallBaseError, match="depends on the recall base"):
        scale("AP@5")
    with pytest.raises(RecallBaseError, match="does not depend"):
        scale("P@5", rb=3)
    with pytest.raises(RecallBaseError, match=">= 1"):
        scale("AP@5", rb=0)
