"""``irscale lookup`` with tolerances, rounded values and per-value errors, and the API
behind it (``Scale.rank(decimals=...)``, ``Scale.lookup``).

References are independent of irscale: the distinct values are exact fractions from
tests/naive.py (every one of the 2^6 runs scored with fractions.Fraction), the rank of a
value is 1 + the number of distinct values smaller, and which distinct values a rounded
value may stand for is decided in exact arithmetic."""
import math
import re
from fractions import Fraction

import naive
import numpy as np
import pytest
from click.testing import CliRunner

import irscale
from irscale import ValueNotInScaleError
from irscale.cli import main
from irscale.scales.tables.scale import AMBIGUOUS, FOUND, NOT_A_NUMBER, NOT_A_VALUE

MEASURES = "AP@6,P@6,RBP(p=0.8)@6"
#: measure -> (reference function, recall base)
REFERENCE = {"AP@6": (naive.AP, 3), "P@6": (naive.P, None), "RBP(p=0.8)@6": (naive.RBP("0.8"), None)}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("lookup_tol") / "t.h5"
    irscale.build_store(path, MEASURES, n_jobs=1)
    return str(path)


def run(argv):
    """(exit status, stdout, stderr) of the console entry point ``irscale.cli:main``."""
    try:
        runner = CliRunner(mix_stderr=False)          # click < 8.2
    except TypeError:
        runner = CliRunner()
    with runner.isolation() as streams:
        code = main([str(a) for a in argv])
    return code, streams[0].getvalue().decode(), streams[1].getvalue().decode()


def distinct(measure):
    fn, rb = REFERENCE[measure]
    return sorted(set(naive.oracle(fn, 6, rb)[2]))


def rank_of(values, v):
    return 1 + sum(1 for w in values if w < v)


def rb_args(measure):
    rb = REFERENCE[measure][1]
    return [] if rb is None else ["--rb", rb]


def rows(out):
    lines = out.strip().splitlines()
    return lines[0].split("\t"), [line.split("\t") for line in lines[1:]]


def one_error_line(code, err):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("irscale: error: ") and "Traceback" not in err, err
    return lines[0]


def candidates(values, text, decimals):
    """Distinct values within half a unit of the last decimal of ``text`` (exactly)."""
    half = Fraction(1, 2 * 10 ** decimals)
    return [w for w in values if abs(w - Fraction(text)) <= half]


def floats_in(message):
    return [float(m) for m in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", message)]


# -- item 6: options among values ------------------------------------------------------------------------
def test_atol_and_rtol_parse_as_options(store):
    ap = distinct("AP@6")
    want = str(rank_of(ap, Fraction(1, 2)))
    for argv in (["--rb", 3, "--atol", "1e-4", "0.5"], ["--rb", 3, "0.5", "--atol", "1e-4"],
                 ["--atol=1e-4", "--rb=3", "0.5"], ["--rb", 3, "--rtol", "1e-9", "--atol", "0", "0.5"]):
        code, out, err = run(["lookup", store, "AP@6", *argv])
        assert code == 0, err
        header, body = rows(out)
        assert header == ["value", "rank", "k", "scaled"] and body == [["0.5", want, str(len(ap)), body[0][3]]]
    # --atol widens the tolerance (no --nearest): 0.3333 is 1/3 within 1e-4, and not within the default
    code, out, err = run(["lookup", store, "AP@6", "--rb", 3, "--atol", "1e-4", "0.3333"])
    assert code == 0, err
    assert rows(out)[1][0][1] == str(rank_of(ap, Fraction(1, 3)))
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "0.3333"])[::2])
    assert "0.3333 is not a value of AP@6 with rb=3" in line


def test_bad_tolerances_and_unknown_options_are_usage_errors(store):
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "--foo", "0.5"])[::2])
    assert "No such option" in line and "--foo" in line and "not a number" not in line
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "0.5", "--bar=1"])[::2])
    assert "No such option" in line and "--bar" in line
    for bad in ("-1", "nan", "inf", "x"):
        line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "--atol", bad, "0.5"])[::2])
        assert "--atol" in line and "not a number" not in line.split("--atol", 1)[0]
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "--errors", "ignore", "0.5"])[::2])
    assert "--errors" in line


def test_negative_numbers_are_values(store):
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "-0.5"])[::2])
    assert "-0.5 is not a value of AP@6 with rb=3" in line
    ap = distinct("AP@6")
    code, out, err = run(["lookup", store, "AP@6", "-0.25", "--rb", 3, "--errors", "zero", "0.5", "-1e-3", "-inf",
                          "--atol", "0", "-1"])
    assert code == 0, err
    _, body = rows(out)
    assert [r[:2] for r in body] == [["-0.25", "0"], ["0.5", str(rank_of(ap, Fraction(1, 2)))], ["-1e-3", "0"],
                                     ["-inf", "0"], ["-1", "0"]]
    warnings = err.strip().splitlines()
    assert len(warnings) == 4 and all(w.startswith("irscale: warning: ") for w in warnings)
    assert "-0.25 is not a value of AP@6" in warnings[0] and "-inf is not a value" in warnings[2]


# -- item 7: rounded values ---------------------------------------------------------------------------------
@pytest.mark.parametrize("measure", ["P@6", "AP@6", "RBP(p=0.8)@6"])
def test_nearest_ranks_four_decimal_values(store, measure):
    """trec_eval's 4 decimals of every distinct value: ranked as the true value when it is
    the only distinct value within 0.00005 (always, for P@6 and AP@6), ambiguous otherwise."""
    values = distinct(measure)
    texts = [f"{float(v):.4f}" for v in values]
    code, out, err = run(["lookup", store, measure, *rb_args(measure), "--nearest", "--errors", "zero", *texts])
    assert code == 0, err
    header, body = rows(out)
    assert header == ["value", "rank", "k", "scaled", "matched"]
    assert [r[0] for r in body] == texts
    ambiguous = 0
    for v, text, row in zip(values, texts, body):
        near = candidates(values, text, 4)
        assert v in near
        if len(near) == 1:
            assert row[1] == str(rank_of(values, v)), (text, row)
            assert float(row[4]) == float(v) and row[4] == repr(float(row[4]))
            assert float(row[3]) == pytest.approx((rank_of(values, v) - 1) / (len(values) - 1), abs=1e-10)
        else:
            ambiguous += 1
            assert row[1:] == ["0", str(len(values)), "-", "-"]
            assert any(f"{text} is ambiguous" in line or f"{float(text)!r} is ambiguous" in line
                       for line in err.splitlines())
    assert ambiguous == (2 if measure.startswith("RBP") else 0)   # the oracle's count, printed for the record
    moved = sum(1 for v, t in zip(values, texts) if len(candidates(values, t, 4)) == 1 and Fraction(t) != v)
    label = measure + ("" if REFERENCE[measure][1] is None else f" with rb={REFERENCE[measure][1]}")
    note = f"irscale: {moved} of {len(texts)} values matched to the nearest value of {label} within tolerance " \
           f"(column matched)"
    assert moved > 0 and note in err.splitlines()


def test_nearest_without_rounding_changes_nothing(store):
    """Values given with all their digits rank as without --nearest, with no note."""
    p = distinct("P@6")
    texts = [repr(float(v)) for v in p]
    code, out, err = run(["lookup", store, "P@6", "--nearest", *texts])
    assert code == 0 and err == "", err
    assert [r[1] for r in rows(out)[1]] == [str(i) for i in range(1, len(p) + 1)]
    assert [r[4] for r in rows(out)[1]] == texts


def _ambiguous_two_decimals():
    ap = distinct("AP@6")
    for v in ap:
        text = f"{float(v):.2f}"
        near = candidates(ap, text, 2)
        if len(near) >= 2:
            return ap, text, near
    raise AssertionError("no ambiguous rounding")


def test_ambiguous_rounding_names_the_candidates(store):
    ap, text, near = _ambiguous_two_decimals()
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "--nearest", text])[::2])
    assert "is ambiguous for AP@6 with rb=3" in line and "give more decimals" in line and "rank" in line
    named = floats_in(line.split("ambiguous", 1)[1])[:2]
    nearest_two = sorted(sorted(near, key=lambda w: abs(w - Fraction(text)))[:2])
    assert named == pytest.approx([float(w) for w in nearest_two], abs=1e-15)
    # more decimals of the same value are not ambiguous
    v = next(w for w in near if f"{float(w):.2f}" == text)
    code, out, err = run(["lookup", store, "AP@6", "--rb", 3, "--nearest", f"{float(v):.4f}"])
    assert code == 0 and rows(out)[1][0][1] == str(rank_of(ap, v)), err
    # --atol larger than half a unit widens the tolerance further; smaller leaves it
    code, _, err = run(["lookup", store, "AP@6", "--rb", 3, "--nearest", "--atol", "0.1", f"{float(v):.4f}"])
    assert code == 2 and "ambiguous" in err
    code, out, err = run(["lookup", store, "AP@6", "--rb", 3, "--nearest", "--atol", "1e-9", f"{float(v):.4f}"])
    assert code == 0, err


# -- item 7: per-value errors -------------------------------------------------------------------------------
BATCH = ["0.5", "abc", "nan", "0.123", "-1", "0.3333", "1"]


def test_errors_raise_names_the_first_bad_value(store):
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, *BATCH])[::2])
    assert "'abc' is not a number" in line
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "--errors", "raise", "0.123", "abc"])[::2])
    assert "0.123 is not a value of AP@6 with rb=3" in line
    line = one_error_line(*run(["lookup", store, "AP@6", "--rb", 3, "0.5", "nan"])[::2])
    assert "nan is not a value of AP@6 with rb=3 (NaN)" in line


@pytest.mark.parametrize("mode", ["zero", "skip"])
def test_errors_zero_and_skip(store, mode):
    ap = distinct("AP@6")
    code, out, err = run(["lookup", store, "AP@6", "--rb", 3, "--errors", mode, *BATCH])
    assert code == 0, err
    _, body = rows(out)
    good = {"0.5": rank_of(ap, Fraction(1, 2)), "1": len(ap)}
    want = [[t, str(good.get(t, 0)), str(len(ap))] for t in BATCH if mode == "zero" or t in good]
    assert [r[:3] for r in body] == want
    assert all(r[3] == "-" for r in body if r[1] == "0")
    warnings = err.strip().splitlines()
    assert len(warnings) == 5 and all(w.startswith("irscale: warning: ") for w in warnings), err
    tail = "; row left out" if mode == "skip" else "; rank 0"
    assert all(w.endswith(tail) for w in warnings)
    assert "'abc' is not a number" in warnings[0]
    assert "nan is not a value of AP@6 with rb=3 (NaN)" in warnings[1]
    assert "0.123 is not a value of AP@6 with rb=3" in warnings[2]
    assert "-1.0 is not a value" in warnings[3] and "0.3333 is not a value" in warnings[4]
    # with --nearest, 0.3333 is 1/3 and an ambiguous rounding is a warning of its own
    _, text, _ = _ambiguous_two_decimals()
    code, out, err = run(["lookup", store, "AP@6", "--rb", 3, "--errors", mode, "--nearest", *BATCH, text])
    assert code == 0, err
    ranks = {r[0]: r[1] for r in rows(out)[1]}
    assert ranks["0.3333"] == str(rank_of(ap, Fraction(1, 3)))
    assert (text in ranks) == (mode == "zero")
    assert any("is ambiguous" in w and w.endswith(tail) for w in err.splitlines())


def test_all_values_rejected_still_exits_zero(store):
    code, out, err = run(["lookup", store, "P@6", "--errors", "skip", "abc", "0.3"])
    assert code == 0 and out.strip() == "value\trank\tk\tscaled" and len(err.strip().splitlines()) == 2


# -- the API ------------------------------------------------------------------------------------------------
def test_rank_with_decimals(store):
    s = irscale.open_store(store).scale("AP@6", rb=3)
    ap = distinct("AP@6")
    third = rank_of(ap, Fraction(1, 3))
    with pytest.raises(ValueNotInScaleError, match="0.3333 is not a value"):
        s.rank([0.3333])
    assert s.rank([0.3333, 0.5], decimals=4).tolist() == [third, rank_of(ap, Fraction(1, 2))]
    assert s.rank([[0.3333], [0.33]], decimals=[[4], [2]]).tolist() == [[third], [third]]
    assert s.rank([0.3333], atol=1e-4).tolist() == [third]
    _, text, near = _ambiguous_two_decimals()
    with pytest.raises(ValueNotInScaleError, match="ambiguous") as e:
        s.rank([float(text)], decimals=2)
    assert len(floats_in(str(e.value).split("ambiguous", 1)[1])) >= 2
    assert s.rank([float(text), 0.3333], decimals=2, errors="zero").tolist() == [0, third]
    assert s.rank([0.3333], decimals=np.nan, errors="zero").tolist() == [0]        # NaN: not rounded


def test_lookup_reports_each_value(store):
    s = irscale.open_store(store).scale("AP@6", rb=3)
    ap = distinct("AP@6")
    _, text, _ = _ambiguous_two_decimals()
    x = [0.3333, float(text), math.nan, 0.123, 0.5, math.inf]
    got = s.lookup(x, decimals=[4, 2, 4, 4, 4, 4])
    assert got.status.tolist() == [FOUND, AMBIGUOUS, NOT_A_NUMBER, NOT_A_VALUE, FOUND, NOT_A_VALUE]
    assert got.found.tolist() == [True, False, False, False, True, False]
    assert got.ranks.tolist() == [rank_of(ap, Fraction(1, 3)), 0, 0, 0, rank_of(ap, Fraction(1, 2)), 0]
    assert got.matched[[0, 4]].tolist() == [1 / 3, 0.5] and np.isnan(got.matched[[1, 2, 3, 5]]).all()
    assert sorted(got.messages) == [1, 2, 3, 5]
    assert "ambiguous" in got.messages[1] and "(NaN)" in got.messages[2] and "0.123 is not" in got.messages[3]
    assert s.values_of_ranks([1, len(ap)]).tolist() == [0.0, 1.0]
    assert s.values_of_ranks(np.arange(1, len(ap) + 1)).tolist() == [float(v) for v in ap]
    # the service's use: rtol/atol as before, ranks of values within the default tolerance unchanged
    assert s.rank([1 / 3, 0.5], rtol=1e-12, atol=0.0).tolist() == got.ranks[[0, 4]].tolist()


def test_held_tables_match_nearest_values_too():
    """Layout ``fraction`` (R-precision at rb = 3: 0, 1/3, 2/3, 1)."""
    s = irscale.scale("Rprec@6", rb=3)
    assert s.values.tolist() == [0.0, 1 / 3, 2 / 3, 1.0]
    got = s.lookup([0.3333, 0.67, 0.5, 0.5, 0.0, 0.0], decimals=[4, 2, 1, 0, 4, 0])
    assert got.ranks.tolist() == [2, 3, 0, 0, 1, 0]
    assert got.status.tolist() == [FOUND, FOUND, NOT_A_VALUE, AMBIGUOUS, FOUND, AMBIGUOUS]
    assert "0.3333333333333333 and 0.6666666666666666" in got.messages[3]
    assert s.rank([0.0, 1.0, 2 / 3]).tolist() == [1, 4, 3]
    with pytest.raises(ValueNotInScaleError, match="ambiguous"):
        s.rank([0.5], atol=0.2)
