"""Fast paths against the generic reference path (every run scored): bit-identical
tables at N <= 20, implicit tables answering exactly like materialised ones."""
import numpy as np
import pytest

import irscale
from irscale.enumerate.runspace import all_runs
from irscale.scales.tables.build import build_tables

PAPER = ["P", "R", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)", "DCG(b=2)", "DCG(b=10)", "nDCG(b=2)",
         "nDCG(b=10)"]
EXTRA = ["F1", "nDCG_trec", "RBP(p=0.7)", "DCG(b=3)"]


def _arrays(t):
    return [None if a is None else np.asarray(a) for a in (t.ids, t.counts, t.strata)]


@pytest.mark.parametrize("n", [13, pytest.param(20, marks=pytest.mark.slow)])
def test_split_path_is_bit_identical_to_generic(n, tmp_path):
    names = [f"{m}@{n}" for m in PAPER + EXTRA if not m.startswith("RBP(p=0.3)") and not m.startswith("RBP(p=0.5)")]
    generic = list(build_tables(names, method="generic"))
    split = list(build_tables(names, method="split"))
    for g, s in zip(generic, split):
        assert str(g.measure) == str(s.measure)
        for a, b in zip(_arrays(g), _arrays(s)):
            assert (a is None) == (b is None), g.measure
            if a is not None:
                assert a.dtype == b.dtype and np.array_equal(a, b), g.measure
        assert g.certificate == s.certificate, g.measure
    # and through the store: identical checksums
    sg = irscale.build_store(tmp_path / "g.h5", names[:4], method="generic")
    ss = irscale.build_store(tmp_path / "s.h5", names[:4], method="split")
    assert [t["checksum"] for t in sg.tables()] == [t["checksum"] for t in ss.tables()]


@pytest.mark.parametrize("p", ["0.3", "0.5", "0.25"])
def test_implicit_tables_answer_like_materialised(p):
    n = 20
    name = f"RBP(p={p})@{n}"
    [implicit] = build_tables([name], method="split")
    [materialised] = build_tables([name], method="generic")
    assert implicit.implicit and not materialised.implicit
    assert np.array_equal(np.asarray(materialised.ids), np.arange(2 ** n))  # the theorem, checked
    si, sm = implicit.scale(), materialised.scale()
    assert len(si) == len(sm) == 2 ** n
    runs = all_runs(2, n)
    assert np.array_equal(si.rank_runs(runs), sm.rank_runs(runs))
    assert np.array_equal(si.values, sm.values)
    assert np.array_equal(si.counts, sm.counts)
    vals = sm.values[::37]
    assert np.array_equal(si.rank(vals, rtol=1e-13), sm.rank(vals, rtol=1e-13))
    with pytest.raises(irscale.ValueNotInScaleError):
        si.rank([(vals[1] + vals[2]) / 2], rtol=1e-13)
    assert implicit.certificate.min_gap_exact == materialised.certificate.min_gap_exact
