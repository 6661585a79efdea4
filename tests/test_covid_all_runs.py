"""The issue's checks on all 73 official TREC-COVID round 5 runs (graded qrels, levels
0..2): ERR with gdeval's normalisation equals ir_measures' ``ERR@20`` (gdeval), and graded
RBP with trec_eval's per-topic rule equals trec_eval's own ``rbp`` (10.0-rc3, built from
source; runs of at most 1000 documents, so its whole-ranking ``rbp`` is RBP@1000).
Slow: a few minutes in all; the default run checks three runs (test_measure_conventions.py).
"""
import gzip
import shutil
import subprocess
import warnings

import pytest

import irscale

pytestmark = pytest.mark.slow


def _covid(shared_data):
    folder = shared_data / "trec-covid5"
    if not folder.is_dir():
        pytest.skip(f"TREC-COVID round 5 data not found at {folder}")
    runs = sorted((folder / "runs").glob("*.gz"))
    assert len(runs) == 73
    return folder / "qrels" / "qrels.covid-round5.txt", runs


def _raw(qrels, runs, measure):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        df = irscale.transform(qrels, runs, [measure], run_names="file")
    return {(r.run, str(r.topic)): r.raw for r in df.itertuples()}


def test_err_with_gdeval_normalisation_equals_ir_measures_on_all_runs(shared_data):
    ir_measures = pytest.importorskip("ir_measures")
    if shutil.which("perl") is None:
        pytest.skip("no perl: ir_measures computes ERR with gdeval.pl")
    qrels, runs = _covid(shared_data)
    ours = _raw(qrels, runs, "irm:ERR@20")
    qrel_list = list(ir_measures.read_trec_qrels(str(qrels)))
    compared = 0
    for path in runs:
        name = path.name.removesuffix(".gz")
        run = list(ir_measures.read_trec_run(gzip.open(path, "rt").read()))
        for metric in ir_measures.iter_calc([ir_measures.ERR @ 20], qrel_list, run):
            assert abs(ours[name, metric.query_id] - metric.value) <= 5e-6 + 1e-12, (name, metric)   # 5 decimals
            compared += 1
    assert compared == 73 * 50


def test_graded_rbp_with_trec_eval_rule_equals_trec_eval_rbp_on_all_runs(shared_data, trec_eval_bin, tmp_path):
    qrels, runs = _covid(shared_data)
    ours = _raw(qrels, runs, "RBP(gains=(0,1,2),norm=topic,p=0.8)@1000")
    compared = 0
    for path in runs:
        name = path.name.removesuffix(".gz")
        plain = tmp_path / name
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        # rbp alone: beside other measures trec_eval 10.0-rc3 reads uninitialised variables
        done = subprocess.run([trec_eval_bin, "-q", "-m", "rbp.p=0.8", str(qrels), str(plain)],
                              capture_output=True, text=True, check=True)
        for line in done.stdout.splitlines():
            _measure, topic, value = line.split()
            if topic == "all":
                continue
            assert abs(ours[name, topic] - float(value)) <= 5e-5 + 1e-12, (name, topic, ours[name, topic], value)
            compared += 1
        plain.unlink()
    assert compared == 73 * 50
