"""Edge cases of the graded, per-topic and truncated-ranking measures: exact run counts of
huge feasible spaces, keys that would overflow, undefined topics (through the library,
transform, the CLI and the service), and the spacing command."""
import itertools
import json
import warnings
from math import factorial

import numpy as np
import pytest

import irscale
from irscale.cli import main
from irscale.enumerate.runspace import all_feasible_runs, feasible_space_size


def test_feasible_space_size_is_exact_at_any_size():
    for n, c in [(4, (1, 2)), (6, (1, 1, 1)), (5, (0, 3)), (7, (9, 0, 2))]:
        assert feasible_space_size(n, c) == len(all_feasible_runs(n, c))
    n, c = 32, (2, 2, 2, 2, 2, 2, 2, 1, 1)
    brute = sum(factorial(n) // (factorial(n - sum(v)) * np.prod([factorial(x) for x in v], dtype=object))
                for v in itertools.product(*[range(x + 1) for x in c]) if sum(v) <= n)
    assert feasible_space_size(n, c) == brute > 2 ** 64


def test_run_spaces_beyond_64_bit_ids_and_keys_are_refused():
    for name in ["Twist(grades=9)@32", "RBPU(grades=3,p=0.5)@32"]:
        with pytest.raises(irscale.MeasureError, match="64-bit run ids"):
            irscale.parse_measure(name)
    deep = irscale.parse_measure("DCG(b=2,gains=(0,1,2,3,4,5,6,7,8,9))@32")   # raw scores only: no scale
    assert not deep.has_scales
    with pytest.raises(irscale.MeasureError, match="64-bit run ids"):
        irscale.scale(deep)
    with pytest.raises(irscale.MeasureError, match="62 bits"):
        irscale.scale("DCGU(e=0.000000000000000001)@7")
    with pytest.raises(irscale.MeasureError, match="62 bits"):
        irscale.scale("OIE(beta=1.000000000000000001)@6", (3,))
    assert irscale.scale("OIE@3", (10 ** 12,)).k > 1            # a huge count is just a number
    with pytest.raises(irscale.MeasureError, match="split"):
        list(irscale.scales.tables.build.build_tables(["ERR(gains=(0,1,12))@5"], method="generic"))


def _qrels(tmp_path, grades):
    q = tmp_path / "qrels"
    q.write_text("".join(f"q{t} 0 d{d} {g}\n" for t, gs in enumerate(grades) for d, g in enumerate(gs)))
    run = tmp_path / "run"
    run.write_text("".join(f"q{t} Q0 d{d} 0 {10 - d} r\n" for t in range(len(grades)) for d in range(4)))
    return q, run


def test_undefined_normalised_topics_are_empty_not_errors(tmp_path):
    """gains (0,0,1): a topic whose judged documents are all of grade 1 has ideal DCG 0
    and total gain 0: gR and nDCG are undefined there, defined on the other topic."""
    q, run = _qrels(tmp_path, [[1, 1, 0, 0], [2, 1, 0, 0]])
    names = ["nDCG(b=2,gains=(0,0,1))@4", "gR(gains=(0,0,1))@4"]
    with pytest.warns(irscale.IrscaleWarning, match="undefined"):
        scores = irscale.transform(q, run, names, tmp_path / "u.h5", build_missing=True)
    assert scores[scores.topic == "q0"]["raw"].isna().all() and scores[scores.topic == "q0"]["rank"].isna().all()
    assert scores[scores.topic == "q1"]["rank"].notna().all()
    with pytest.raises(irscale.RecallBaseError, match="DCG 0"):
        irscale.scale(names[0], (2, 0))
    with pytest.raises(irscale.RecallBaseError, match="undefined"):
        irscale.open_store(tmp_path / "u.h5").scale(names[0], (2, 0))
    # build --qrels builds what transform needs and skips topics where Twist is undefined
    q2, _ = _qrels(tmp_path, [[1, 0, 0, 0], [1, 1, 1, 1, 2, 2]])
    assert main(["build", "-m", "Twist(grades=2)@6", "--qrels", str(q2), "--out", str(tmp_path / "t.h5"), "-q"]) == 0
    assert [t["rb_counts"] for t in irscale.open_store(tmp_path / "t.h5").tables()] == [(1, 0)]


def test_service_answers_422_for_undefined_topics(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from fastapi.testclient import TestClient
    from irscale.service import create_app
    path = tmp_path / "t.h5"
    irscale.build_store(path, ["Twist@6"], rb_counts=[(2,)])
    client = TestClient(create_app(path))
    r = client.post("/v1/rank", json={"measure": "Twist@6", "rb": 4, "values": [0.5]})
    assert r.status_code == 422 and "N >= 2 RB" in r.json()["error"]["message"]


def test_spacing_command_columns_and_held_tables(tmp_path, capsys):
    path = tmp_path / "s.h5"
    assert main(["build", "-m", "gR(gains=(0,1,3))@4,P@4", "--rb", "(1,1),(2,0)", "--out", str(path), "-q"]) == 0
    capsys.readouterr()
    assert main(["spacing", str(path), "--no-axioms"]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "gR(gains=(0,1,3))@4 rb=(1,1)" in out and "gR(gains=(0,1,3))@4 rb=(2,0)" in out
    assert main(["build", "-m", "RBPU(p=0.5)@4", "--out", str(path), "-q"]) == 0
    capsys.readouterr()
    assert main(["spacing", str(path), "-m", "RBPU(p=0.5)@4", "--json"]) == 0   # tables held in memory too
    [row] = json.loads(capsys.readouterr().out)
    s = irscale.scale("RBPU(p=0.5)@4")
    assert row["n_distinct"] == s.k and row["n_runs"] == s.n_runs == 31
    assert row["min"] == s.values[0] and row["max"] == s.values[-1]
    assert row["axiom_holds"] is None and row["balancing_index"] is None    # truncated rankings: not applicable
