"""Conventions other tools fix and irscale offers as measure parameters: ERR's grade
normalisation (``max_grade``: gdeval's R = (2^g - 1)/2^4) and graded RBP's normalisation
(``norm=topic``: trec_eval's per-topic divisor). Exact brute force at small N against
independent fractions, and the real tools on TREC data: ir_measures' ERR@20 (gdeval) and
trec_eval 10.0's ``rbp`` (10.0-rc3, built from source), on three TREC-COVID round 5 runs
by default and on all 73 official runs with --runslow (a few minutes)."""
import collections
import gzip
import itertools
import shutil
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np
import pytest

import irscale
from irscale import MeasureError, parse_measure
from irscale.scales.tables.build import build_tables

COVID_RUNS = ["r5.rf", "uab.base", "BioInfo-run1"]


# -- ERR(max_grade) -------------------------------------------------------------------------------
def err_reference(run, gains, m):
    """ERR with R = (2^g - 1)/2^m, exact (Chapelle et al.; gdeval with m = 4)."""
    value, stay = Fraction(0), Fraction(1)
    for k, r in enumerate(run, start=1):
        stop = Fraction(2 ** gains[r] - 1, 2 ** m)
        value += stay * stop / k
        stay *= 1 - stop
    return value


@pytest.mark.parametrize("gains,m,n", [((0, 1), 4, 5), ((0, 1), 2, 6), ((0, 1, 2), 4, 4), ((0, 1, 2), 3, 4),
                                       ((0, 1, 3), 5, 3), ((0, 1, 2, 3, 4), 4, 3)])
def test_err_max_grade_exact_against_brute_force(gains, m, n):
    name = f"ERR(gains={'(' + ','.join(map(str, gains)) + ')'},max_grade={m})@{n}"
    measure = parse_measure(name)
    runs = [list(r) for r in itertools.product(range(len(gains)), repeat=n)]
    exact = [err_reference(r, gains, m) for r in runs]
    assert [measure.exact_value(r) for r in runs] == exact
    floats = measure.values_of_ids(measure.ids_of_runs(np.array(runs, dtype=np.uint8)))
    assert np.array_equal(floats, np.array([float(v) for v in exact]))   # correctly rounded
    distinct = sorted(set(exact))
    for method in ("generic", "split"):
        [table] = list(build_tables([measure], method=method))
        s = table.scale()
        assert len(s) == len(distinct)                                    # ties decided exactly
        ranks = s.rank_runs(np.array(runs, dtype=np.uint8)).tolist()
        assert ranks == [distinct.index(v) + 1 for v in exact]


def test_err_max_grade_raw_values_beyond_scales():
    """Raw scores exist at any cutoff: ERR@100's exact key has 538 bits, more than tables
    take, and its values are still exact."""
    rng = np.random.default_rng(14)
    m = parse_measure("ERR(gains=(0,1,2),max_grade=4)@100")
    for run in rng.integers(0, 3, size=(5, 100)).tolist():
        assert m.exact_value(run) == err_reference(run, (0, 1, 2), 4)


def test_err_max_grade_changes_values_and_order():
    default, gdeval = parse_measure("ERR(gains=(0,1,2))@3"), parse_measure("ERR(gains=(0,1,2),max_grade=4)@3")
    assert default.exact_value([2, 0, 0]) == Fraction(3, 4) and gdeval.exact_value([2, 0, 0]) == Fraction(3, 16)
    # normalised by 2^2 a top document stops 3/4 of the users, by 2^4 only 3/16: (1, 2, 2) then beats (2, 0, 0)
    assert default.exact_value([1, 2, 2]) < default.exact_value([2, 0, 0])
    assert gdeval.exact_value([1, 2, 2]) > gdeval.exact_value([2, 0, 0])


def test_err_max_grade_default_is_the_top_gain_and_names_are_canonical():
    assert str(parse_measure("ERR@10")) == "ERR@10"
    assert parse_measure("ERR(max_grade=1)@10") == parse_measure("ERR@10")
    assert str(parse_measure("ERR(gains=(0,1,2),max_grade=2)@10")) == "ERR(gains=(0,1,2))@10"
    assert str(parse_measure("ERR(max_grade=4,gains=(0,1,2))@20")) == "ERR(gains=(0,1,2),max_grade=4)@20"
    for text in ["ERR(max_grade=4)@10", "ERR(gains=(0,1,2),max_grade=4)@20", "ERR(gains=(0,1,3),max_grade=7)@5"]:
        assert str(parse_measure(text)) == text and parse_measure(str(parse_measure(text))) == parse_measure(text)
    assert parse_measure("ERR(gains=(0,1,2,3,4))@10") == parse_measure("ERR(gains=(0,1,2,3,4),max_grade=4)@10")


@pytest.mark.parametrize("text,match", [("ERR(gains=(0,1,2),max_grade=1)@10", "below the top gain 2"),
                                        ("ERR(gains=(0,1,5),max_grade=4)@10", "below the top gain 5"),
                                        ("ERR(max_grade=0)@10", "integer from 1 to 31"),
                                        ("ERR(max_grade=32)@10", "integer from 1 to 31"),
                                        ("ERR(max_grade=2.5)@10", "integer from 1 to 31"),
                                        ("ERR(max_grade=high)@10", "must be a number")])
def test_err_max_grade_refused(text, match):
    with pytest.raises(MeasureError, match=match):
        parse_measure(text)


def _covid(shared_data):
    folder = shared_data / "trec-covid5"
    if not folder.is_dir():
        pytest.skip(f"TREC-COVID round 5 data not found at {folder}")
    return folder / "qrels" / "qrels.covid-round5.txt", [folder / "runs" / f"{r}.gz" for r in COVID_RUNS]


def _raw(qrels, runs, measure):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        df = irscale.transform(str(qrels), [str(r) for r in runs], [measure], raw_only=True)
    return {(r.run, str(r.topic)): r.raw for r in df.itertuples()}


def test_err_gdeval_normalisation_equals_ir_measures_err20(shared_data):
    ir_measures = pytest.importorskip("ir_measures")
    if shutil.which("perl") is None:
        pytest.skip("no perl: ir_measures computes ERR with gdeval.pl")
    qrels, runs = _covid(shared_data)
    ours = _raw(qrels, runs, "ERR(gains=(0,1,2),max_grade=4)@20")
    theirs_default = _raw(qrels, runs, "ERR(gains=(0,1,2))@20")
    qrel_list = list(ir_measures.read_trec_qrels(str(qrels)))
    compared = differ = 0
    for path, tag in zip(runs, COVID_RUNS):
        run = list(ir_measures.read_trec_run(gzip.open(path, "rt").read()))
        for metric in ir_measures.iter_calc([ir_measures.ERR @ 20], qrel_list, run):
            # gdeval prints 5 decimals: equal within half a unit of the last one
            assert abs(ours[tag, metric.query_id] - metric.value) <= 5e-6 + 1e-12, (tag, metric)
            differ += abs(theirs_default[tag, metric.query_id] - metric.value) > 1e-3
            compared += 1
    assert compared == 50 * len(runs)
    assert differ > 0.9 * compared          # irscale's default normalisation is another measure


# -- RBP(norm) ------------------------------------------------------------------------------------
def test_rbp_norm_topic_factor_and_names():
    m = parse_measure("RBP(gains=(0,1,2),norm=topic,p=0.8)@10")
    assert str(m) == "RBP(gains=(0,1,2),norm=topic,p=0.8)@10" and parse_measure(str(m)) == m
    assert [m.topic_value_factor(t) for t in (1, 2)] == [2.0, 1.0]
    g = parse_measure("RBP(gains=(0,1,3,4),norm=topic,p=0.5)@5")
    assert [g.topic_value_factor(t) for t in (1, 2, 3)] == [4.0, 4 / 3, 1.0]
    assert parse_measure("RBP(gains=(0,1,2),p=0.8)@10").topic_value_factor(1) == 1.0     # norm=top
    # nothing to divide with a top gain of 1: one name
    assert parse_measure("RBP(norm=topic,p=0.8)@10") == parse_measure("RBP(p=0.8)@10")
    assert str(parse_measure("RBP(gains=(0,0,1),norm=topic,p=0.8)@10")) == "RBP(gains=(0,0,1),p=0.8)@10"
    assert str(parse_measure("RBP(gains=(0,1,2),norm=top,p=0.8)@10")) == "RBP(gains=(0,1,2),p=0.8)@10"
    with pytest.raises(MeasureError, match="top, topic"):
        parse_measure("RBP(gains=(0,1,2),norm=trec,p=0.8)@10")


def test_rbp_norm_topic_brute_force():
    """value on a topic with top grade t = (1 - p) sum p^(k-1) g(r_k) / max(g(t), 1), exact."""
    gains, p, n = (0, 1, 3), Fraction(3, 4), 4
    m = parse_measure("RBP(gains=(0,1,3),norm=topic,p=0.75)@4")
    for t in (1, 2):
        factor = Fraction(gains[-1], max(gains[t], 1))
        assert m.topic_value_factor(t) == float(factor)
        for run in itertools.product(range(t + 1), repeat=n):   # a topic with top grade t has nothing above it
            want = (1 - p) * sum(p ** k * gains[r] for k, r in enumerate(run)) / max(gains[t], 1)
            assert m.exact_value(list(run)) * factor == want


def _top_n_run(src, dst, n):
    """The top n documents of each topic of a run in trec_eval's order (score descending,
    docno descending), so that measures of the whole ranking are measures cut at n."""
    rows = collections.defaultdict(list)
    with gzip.open(src, "rt") as f:
        for line in f:
            cols = line.split()
            rows[cols[0]].append((float(cols[4]), cols[2], line))
    with open(dst, "w") as out:
        for docs in rows.values():
            out.writelines(line for _, _, line in sorted(docs, reverse=True)[:n])
    return dst


def _trec_eval(binary, qrels, run, measure):
    done = subprocess.run([binary, "-q", "-m", measure, str(qrels), str(run)], capture_output=True, text=True,
                          check=True)
    return {cols[1]: float(cols[2]) for cols in map(str.split, done.stdout.splitlines()) if cols[1] != "all"}


def test_graded_rbp_norm_topic_equals_trec_eval_rbp(shared_data, trec_eval_bin, tmp_path):
    """trec_eval's rbp ranks the whole run, so runs cut at N in its own order make it RBP@N.
    RAG 2024 (levels 0..3; 10 of its 30 judged topics have no level-3 document) tells the two
    rules apart; TREC-COVID round 5 (levels 0..2) checks three more runs."""
    n = 20
    cases = []
    rag = shared_data / "rag24"
    if rag.is_dir():
        cases.append((rag / "qrels.rag24.txt", [rag / "run.rag24.gz"], 3))
    covid = shared_data / "trec-covid5"
    if covid.is_dir():
        cases.append((covid / "qrels" / "qrels.covid-round5.txt", [covid / "runs" / f"{r}.gz" for r in COVID_RUNS], 2))
    if not cases:
        pytest.skip(f"no graded TREC data under {shared_data}")
    below_top = 0
    for qrels, runs, top in cases:
        gains = "(" + ",".join(map(str, range(top + 1))) + ")"
        cut = [_top_n_run(r, tmp_path / f"{r.name}.top{n}", n) for r in runs]
        topic_rule = _raw(qrels, cut, f"RBP(gains={gains},norm=topic,p=0.8)@{n}")
        top_rule = _raw(qrels, cut, f"RBP(gains={gains},p=0.8)@{n}")
        top_level = collections.Counter()
        for line in open(qrels):
            t, _, _, level = line.split()
            top_level[t] = max(top_level[t], int(level))
        for run in cut:
            tag = _run_tag(run)
            trec = _trec_eval(trec_eval_bin, qrels, run, "rbp.p=0.8")
            mine = {t: v for (r, t), v in topic_rule.items() if r == tag}
            assert set(mine) <= set(trec) and len(mine) >= 25
            for t, v in mine.items():
                assert abs(v - trec[t]) <= 5e-5 + 1e-12, (run, t, v, trec[t])        # printed to 4 decimals
                if 0 < top_level[t] < top:                    # (a topic without a relevant one: 0 by both)
                    below_top += 1
                    assert abs(top_rule[tag, t] - trec[t]) > 1e-3                  # the other rule differs there
    if rag.is_dir():
        assert below_top >= 10


def _run_tag(path):
    with open(path) as f:
        return f.readline().split()[5]


# -- all 73 official TREC-COVID round 5 runs (graded qrels, levels 0..2) ----------------------------
def _covid_all_runs(shared_data):
    folder = shared_data / "trec-covid5"
    if not folder.is_dir():
        pytest.skip(f"TREC-COVID round 5 data not found at {folder}")
    runs = sorted((folder / "runs").glob("*.gz"))
    assert len(runs) == 73
    return folder / "qrels" / "qrels.covid-round5.txt", runs


def _raw_by_file(qrels, runs, measure):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        df = irscale.transform(qrels, runs, [measure], run_names="file", raw_only=True)
    return {(r.run, str(r.topic)): r.raw for r in df.itertuples()}


@pytest.mark.slow
def test_err_with_gdeval_normalisation_equals_ir_measures_on_all_runs(shared_data):
    ir_measures = pytest.importorskip("ir_measures")
    if shutil.which("perl") is None:
        pytest.skip("no perl: ir_measures computes ERR with gdeval.pl")
    qrels, runs = _covid_all_runs(shared_data)
    ours = _raw_by_file(qrels, runs, "irm:ERR@20")
    qrel_list = list(ir_measures.read_trec_qrels(str(qrels)))

    def gdeval(path):        # gdeval.pl in a child process: two runs at a time (CI has two cores)
        run = list(ir_measures.read_trec_run(gzip.open(path, "rt").read()))
        return list(ir_measures.iter_calc([ir_measures.ERR @ 20], qrel_list, run))

    compared = 0
    with ThreadPoolExecutor(2) as pool:
        theirs = list(pool.map(gdeval, runs))
    for path, metrics in zip(runs, theirs):
        name = path.name.removesuffix(".gz")
        for metric in metrics:
            assert abs(ours[name, metric.query_id] - metric.value) <= 5e-6 + 1e-12, (name, metric)   # 5 decimals
            compared += 1
    assert compared == 73 * 50


@pytest.mark.slow
def test_graded_rbp_with_trec_eval_rule_equals_trec_eval_rbp_on_all_runs(shared_data, trec_eval_bin, tmp_path):
    """Runs of at most 1000 documents: trec_eval's whole-ranking ``rbp`` is RBP@1000."""
    qrels, runs = _covid_all_runs(shared_data)
    ours = _raw_by_file(qrels, runs, "RBP(gains=(0,1,2),norm=topic,p=0.8)@1000")

    def trec_eval(path):     # two runs at a time (CI has two cores)
        plain = tmp_path / path.name.removesuffix(".gz")
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        # rbp alone: beside other measures trec_eval 10.0-rc3 reads uninitialised variables
        done = subprocess.run([trec_eval_bin, "-q", "-m", "rbp.p=0.8", str(qrels), str(plain)],
                              capture_output=True, text=True, check=True)
        plain.unlink()
        return done.stdout

    compared = 0
    with ThreadPoolExecutor(2) as pool:
        printed = list(pool.map(trec_eval, runs))
    for path, stdout in zip(runs, printed):
        name = path.name.removesuffix(".gz")
        for line in stdout.splitlines():
            _measure, topic, value = line.split()
            if topic == "all":
                continue
            assert abs(ours[name, topic] - float(value)) <= 5e-5 + 1e-12, (name, topic, ours[name, topic], value)
            compared += 1
    assert compared == 73 * 50
