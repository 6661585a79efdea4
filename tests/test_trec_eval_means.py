"""The leaderboard's numbers are trec_eval's: every raw mean of ``compare`` against the
``all`` line of NIST's trec_eval 10 (built from ../shared/tools), run with exactly the
command line the leaderboard says its raw scores equal; every scaled mean against the
pandas mean of ``transform``'s ``scaled`` column. On TREC-8 (binary qrels, with one
topic's judgments set to 0: trec_eval counts it as 0 in every mean) and TREC-COVID round
5 (levels 0-2, ``-l 2``: two topics have nothing at level 2 in some runs' view).

Every run of both (slow: trec_eval is built, tables too), and a few COVID runs at trec_eval's
default level (``-l 1``). A few runs of a case that every run checks too would check nothing
more: those are left out. trec_eval runs two at a time (CI has two cores).
"""
import gzip
import re
import shlex
import subprocess
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import irscale

#: irscale's name -> trec_eval's measure (-m) and the name it prints.
TREC8 = {"AP@10": ("map_cut.10", "map_cut_10"), "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10"),
         "P@10": ("P.10", "P_10"), "RR": ("recip_rank", "recip_rank"), "map": ("map", "map"),
         "R@10": ("recall.10", "recall_10"), "Rprec": ("Rprec", "Rprec")}
COVID = {"nDCG@10": ("ndcg_cut.10", "ndcg_cut_10"), "P@5": ("P.5", "P_5"), "RR": ("recip_rank", "recip_rank"),
         "AP@10": ("map_cut.10", "map_cut_10"), "map": ("map", "map")}


def _zero_topic(src, dst, topic):
    """A copy of the qrels ``src`` with every judgment of ``topic`` set to 0."""
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            fields = line.split()
            if fields and fields[0] == topic:
                fields[3] = "0"
            out.write(" ".join(fields) + "\n")
    return dst


def _trec_eval_means(binary, command, qrels, run_file, measures, tmp_path):
    """{trec_eval name: printed mean} of trec_eval run as ``command`` says (its options)."""
    options = shlex.split(command)[1:]
    assert options == [o for o in options if o in ("-c",) or o.startswith("-l") or o.startswith("-M")
                       or o.isdigit()], command
    plain = tmp_path / f"run-{Path(run_file).name}.txt"
    with gzip.open(run_file, "rt") as f, open(plain, "w") as out:
        out.write(f.read())
    args = [binary, *options]
    for flag, _ in measures.values():
        args += ["-m", flag]
    done = subprocess.run([*args, str(qrels), str(plain)], capture_output=True, text=True, check=True)
    plain.unlink()
    out = {}
    for line in done.stdout.splitlines():
        name, topic, value = line.split()
        if topic == "all":
            out[name] = float(value)
    return out


def _check(binary, qrels, runs, measures, tmp_path, **conventions):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irscale.IrscaleWarning)
        board = irscale.compare(qrels, runs, ",".join(measures), **conventions)
        scores = irscale.transform(qrels, runs, ",".join(measures), **conventions)
    command = re.search(r"raw = (trec_eval[^:(]*)", board.conventions).group(1).strip()
    assert [s.label for s in board.measures] == list(measures)          # in the order typed, every one shown
    checked = 0
    with ThreadPoolExecutor(2) as pool:
        printed = list(pool.map(lambda r: _trec_eval_means(binary, command, qrels, r, measures, tmp_path), runs))
    for run_file, want in zip(runs, printed):
        with gzip.open(run_file, "rt") as f:
            tag = f.readline().split()[5]
        rows = board.table[board.table["run"] == tag]
        assert len(rows) == len(measures), tag
        for s in board.measures:
            row = rows[rows["measure"] == s.measure].iloc[0]
            printed = want[measures[s.label][1]]
            assert abs(row["raw_mean"] - printed) <= 5e-5 + 1e-12, (tag, s.label, row["raw_mean"], printed)
            assert row["topics"] == scores["topic"].nunique(), (tag, s.label)
            if s.scaled:
                mine = scores[(scores["run"] == tag) & (scores["measure"] == s.measure)]["scaled"]
                assert mine.notna().all() and row["scaled_mean"] == pytest.approx(mine.mean(), abs=1e-12)
            checked += 1
    assert checked == len(runs) * len(measures)


def _trec8_runs(shared_data, n):
    runs = sorted((shared_data / "trec8" / "runs").glob("input.*.gz"))
    return runs if n is None else runs[::len(runs) // n][:n]


def _covid_runs(shared_data, n):
    runs = sorted((shared_data / "trec-covid5" / "runs").glob("*.gz"))
    return runs if n is None else runs[::len(runs) // n][:n]


@pytest.mark.slow      # builds trec_eval and the tables of the qrels
def test_covid_means_equal_trec_eval(shared_data, trec_eval_bin, tmp_path):
    """At trec_eval's default level (test_every_covid_run_equals_trec_eval: -l 2)."""
    qrels = shared_data / "trec-covid5" / "qrels" / "qrels.covid-round5.txt"
    _check(trec_eval_bin, qrels, _covid_runs(shared_data, 4), COVID, tmp_path, rel_level=None)


@pytest.mark.slow      # every run with the qrels of topic 401 set to 0 (4 runs of it would check nothing more)
def test_every_trec8_run_equals_trec_eval(shared_data, trec_eval_bin, tmp_path):
    qrels = _zero_topic(shared_data / "trec8" / "qrels.trec8.adhoc.txt", tmp_path / "q.txt", "401")
    _check(trec_eval_bin, qrels, _trec8_runs(shared_data, None), TREC8, tmp_path)


@pytest.mark.slow
def test_every_covid_run_equals_trec_eval(shared_data, trec_eval_bin, tmp_path):
    qrels = shared_data / "trec-covid5" / "qrels" / "qrels.covid-round5.txt"
    _check(trec_eval_bin, qrels, _covid_runs(shared_data, None), COVID, tmp_path, rel_level=2)
