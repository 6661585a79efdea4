"""Raw scores at any cutoff and for run spaces beyond 64-bit run ids.

Measures with exact keys (AP, P, R, RR, nDCG, nDCG_trec, DCG, RBP, ERR, F1, gP, gR) have
raw values at every cutoff up to MAX_RAW_N: each judged ranking's exact key in Python
integers; so has Rprec (exact fractions of the rankings). Scales stay limited to
N <= MAX_N and 2^63 runs; where none exists the rank and scaled columns are empty and one
warning says why.

References: trec_eval's own output of all 129 TREC-8 runs (``map``, ``map_cut_1000``,
``P_100``, ``P_1000``, ``recall_1000``, ``ndcg_cut_100``, ``recip_rank``), exact
fractions in plain Python, and trec_eval 10.0-rc3 built from source for graded runs of
TREC-COVID round 5.
"""
import gzip
import subprocess
import warnings
from fractions import Fraction

import numpy as np
import pytest

import irscale
from irscale import IrscaleWarning, MeasureError, parse_measure, transform
from irscale.scales.measures.measure import MAX_N

#: trec_eval measure -> irscale measure; TREC-8 runs hold at most 1000 documents per topic,
#: so trec_eval's uncut ``map`` and ``recip_rank`` are AP@1000 and RR@1000.
TREC_EVAL = {"map": "AP@1000", "map_cut_1000": "AP@1000", "P_100": "P@100", "P_1000": "P@1000",
             "recall_1000": "R@1000", "ndcg_cut_100": "nDCG_trec@100", "ndcg_cut_1000": "nDCG_trec@1000",
             "recip_rank": "RR@1000", "Rprec": "Rprec@1000"}


def _printed(folder, runs=None):
    """(run, topic, trec_eval measure) -> the value trec_eval printed."""
    out = {}
    for path in sorted(folder.glob("eval.*.gz")):
        run = path.name[len("eval."):-len(".gz")]
        if runs is not None and run not in runs:
            continue
        with gzip.open(path, "rt") as f:
            for line in f:
                name, topic, value = line.split()
                if name == "runid":
                    run = value
                elif name in TREC_EVAL and topic != "all":
                    out[(run, topic, name)] = value
    return out


def _agrees(raw: float, printed: str) -> bool:
    """raw rounds to trec_eval's 4 printed decimals (or lies half-way, where trec_eval's
    float sum may round either way)."""
    if f"{raw:.4f}" == printed:
        return True
    return abs(Fraction(raw) - Fraction(printed)) <= Fraction(1, 20000) + Fraction(1, 10 ** 12)


def _check_trec8(shared_data, run_files):
    trec8 = shared_data / "trec8"
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # raw only: no warning expected
        scores = transform(trec8 / "qrels.trec8.adhoc.txt", run_files, sorted(set(TREC_EVAL.values())),
                           raw_only=True)
    names = set(scores["run"])
    printed = _printed(trec8 / "trec_eval")
    raw = {(r.run, r.topic, r.measure): r.raw for r in scores.itertuples()}
    checked = 0
    for (run, topic, name), value in printed.items():
        if run not in names:
            continue
        got = raw[(run, topic, TREC_EVAL[name])]
        assert _agrees(got, value), (run, topic, name, got, value)
        checked += 1
    assert checked == len(names) * 50 * len(TREC_EVAL)
    return scores


def test_trec_eval_map_and_deep_cutoffs_on_a_few_runs(shared_data):
    runs = sorted((shared_data / "trec8" / "runs").iterdir())[:6]
    _check_trec8(shared_data, runs)


@pytest.mark.slow
def test_trec_eval_map_and_deep_cutoffs_on_all_129_runs(shared_data):
    scores = _check_trec8(shared_data, shared_data / "trec8" / "runs")
    assert scores["run"].nunique() == 129 and scores["topic"].nunique() == 50


def _ap_exact(run, rb):
    seen, total = 0, Fraction(0)
    for k, r in enumerate(run, start=1):
        if r:
            seen += 1
            total += Fraction(seen, k)
    return total / rb


def _rbp_exact(run, p, gains):
    return (1 - p) * sum(p ** k * gains[r] for k, r in enumerate(run)) / gains[-1]


def test_deep_values_are_exact_fractions_correctly_rounded():
    rng = np.random.default_rng(7)
    runs = (rng.random((40, 500)) < 0.03).astype(np.uint8)
    ap = parse_measure("AP@500")
    got = ap.values_of_judged(runs, np.full(40, 500), 37)
    assert got.tolist() == [float(_ap_exact(r, 37)) for r in runs.tolist()]
    graded = rng.integers(0, 3, (20, 200)).astype(np.uint8) * (rng.random((20, 200)) < 0.1)
    rbp = parse_measure("RBP(gains=(0,1,2),p=0.8)@200")
    got = rbp.values_of_judged(graded.astype(np.uint8), np.full(20, 200), None)
    want = [float(_rbp_exact(r, Fraction(4, 5), (0, 1, 2))) for r in graded.tolist()]
    assert got.tolist() == want


def test_below_max_n_the_deep_path_equals_the_run_id_path():
    """At N <= MAX_N the run-id path is used; the Python-key path gives the same floats."""
    rng = np.random.default_rng(3)
    runs = (rng.random((200, 20)) < 0.3).astype(np.uint8)
    for name, rb in [("AP@20", 9), ("nDCG_trec@20", 6), ("ERR@20", None), ("RBP(p=0.8)@20", None)]:
        m = parse_measure(name)
        spec = m.spec
        deep = spec.values_of_python_keys([spec.key_python(r) for r in runs.tolist()], m.check_rb(rb))
        assert np.array_equal(deep, m.values_of_ids(m.ids_of_runs(runs), rb)), name


def test_graded_raw_scores_beyond_64_bit_run_ids_equal_trec_eval(shared_data, trec_eval_bin, tmp_path):
    """nDCG_trec(gains=(0,1,2,3,4))@30 has 5^30 > 2^63 runs: no scale, raw scores exact.
    With levels 0..2 in the qrels, gains = levels: trec_eval's ndcg_cut.30."""
    covid = shared_data / "trec-covid5"
    qrels = covid / "qrels" / "qrels.covid-round5.txt"
    runs = sorted((covid / "runs").iterdir())[:3]
    m = parse_measure("nDCG_trec(gains=(0,1,2,3,4))@30")
    assert not m.has_scales and m.id_count() >= 2 ** 63
    scores = transform(qrels, runs, [m], raw_only=True)
    got = {(r.run, r.topic): r.raw for r in scores.itertuples()}
    checked = 0
    for path in runs:
        plain = tmp_path / path.name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        done = subprocess.run([trec_eval_bin, "-q", "-m", "ndcg_cut.30", str(qrels), str(plain)],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        run = next(r for (r, _t) in got if plain.name.startswith(r) or r == plain.name)
        for line in done.stdout.splitlines():
            name, topic, value = line.split()
            if topic == "all":
                continue
            assert _agrees(got[(run, topic)], value), (run, topic, got[(run, topic)], value)
            checked += 1
    assert checked == 3 * 50


def test_no_scale_leaves_ranks_empty_and_says_why_once(tmp_path, shared_data):
    trec8 = shared_data / "trec8"
    runs = sorted((trec8 / "runs").iterdir())[:2]
    store = tmp_path / "t.h5"
    irscale.build_store(store, "AP@8", n_jobs=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = transform(trec8 / "qrels.trec8.adhoc.txt", runs, ["AP@8", "AP@1000", "AP@100", "P@100"], store)
    notes = [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]
    assert len(notes) == 1 and "AP@1000, AP@100" in notes[0] and f"N > {MAX_N}" in notes[0], notes
    assert scores.loc[scores["measure"] == "P@100", "scaled"].notna().all()      # a closed form: any N
    deep = scores[scores["measure"].isin(["AP@1000", "AP@100"])]
    assert deep["rank"].isna().all() and deep["scaled"].isna().all() and deep["raw"].notna().all()
    assert scores.loc[scores["measure"] == "AP@8", "rank"].notna().all()


NO_AP = f"no exact or bounded scale exists for AP at N > {MAX_N}"


@pytest.mark.parametrize("build,reason", [
    (lambda: irscale.scale("AP@40", rb=5), NO_AP),
    (lambda: irscale.build_store("/nonexistent/x.h5", "AP@100"), NO_AP),
    (lambda: irscale.build_store("/nonexistent/x.h5", "P@100"), "needs no table: its scale is a closed form")])
def test_tables_beyond_max_n_are_refused_with_the_reason(build, reason):
    with pytest.raises(MeasureError, match=reason):
        build()


def test_measures_without_exact_keys_keep_the_table_limit():
    with pytest.raises(MeasureError, match=f"between 1 and {MAX_N}"):
        parse_measure(f"Twist@{MAX_N + 1}")
