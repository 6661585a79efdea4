"""The enumerator: results independent of workers and chunking; kernels against the
plain-Python key reference; bounded chunks."""
from dataclasses import dataclass
from fractions import Fraction
from math import comb

import numba
import numpy as np
import pytest

from irscale import parse_measure, parse_measures
from irscale.enumerate.fanout import Fanout
from irscale.enumerate.generic import enumerate_distinct
from irscale.enumerate.jobs import score
from irscale.enumerate.runspace import all_runs
from irscale.enumerate.words import words_to_ints
from irscale.scales.measures.keyed import KeyMeasure
from irscale.scales.measures.keys import LinearKey
from irscale.scales.tables.build import build_tables

MEASURES = parse_measures("AP@12,RR@12,RBP(p=0.3)@12,DCG(b=2)@12,nDCG(b=10)@12,F1@12")


def _distinct(measures, **kw):
    return enumerate_distinct([m.scoring_job() for m in measures], measures[0].n, measures[0].levels, **kw)


def _same(a, b):
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.counts, b.counts)
    assert (a.strata is None) == (b.strata is None)
    if a.strata is not None:
        assert np.array_equal(a.strata, b.strata)


def test_workers_and_chunks_do_not_change_results():
    ref = _distinct(MEASURES)
    small = _distinct(MEASURES, chunk_size=333)
    par = _distinct(MEASURES, fanout=Fanout(2), chunk_size=512)
    for a, b, c in zip(ref, small, par):
        _same(a, b)
        _same(a, c)
        assert a.counts.sum() == 2 ** 12


@pytest.mark.parametrize("name", ["AP@9", "RR@9", "RBP(p=0.8)@9", "RBP(p=0.3)@21", "DCG(b=2)@9",
                                  "nDCG_trec@9", "P@9"])
def test_kernels_match_python_reference(name):
    m = parse_measure(name)
    spec = m.key_spec()
    job = m.scoring_job()
    rng = np.random.default_rng(0)
    runs = rng.integers(0, 2, size=(300, m.n)).astype(np.uint8)
    runs[0] = 0
    runs[1] = 1
    keys = score(job.kernel, job.words, job.weights, runs)
    assert words_to_ints(keys) == [spec.key_python(list(r)) for r in runs]


def test_strata_are_relevant_counts():
    [d] = _distinct(parse_measures("R@10"))
    assert d.strata.tolist() == list(range(11))
    assert d.keys[:, 0].tolist() == list(range(11))
    assert d.counts.tolist() == [comb(10, r) for r in range(11)]


def test_all_runs_is_lexicographic():
    runs = all_runs(2, 3)
    assert runs.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]


def test_a_new_measure_brings_its_own_kernel():
    """Extension point: a measure defined outside the package, with its own numba kernel,
    runs through the unchanged enumerator and tables (here: 'last relevant rank', LR@N)."""
    @numba.njit
    def last_relevant(runs, weights, out):
        for i in range(runs.shape[0]):
            key = 0
            for k in range(runs.shape[1]):
                if runs[i, k] > 0:
                    key = k + 1
            out[i, 0] = key

    @dataclass(kw_only=True)
    class LastKey(LinearKey):
        def key_python(self, run):
            return max([k + 1 for k, r in enumerate(run) if r] or [0])

    @dataclass(frozen=True, repr=False)
    class LR(KeyMeasure):
        name = "LR"

        def key_spec(self):
            return LastKey(kernel=last_relevant, weights=[[0, 0]], max_key=self.n, ordered=True,
                           scale=lambda rb: Fraction(1))

    [t] = build_tables([LR(n=8)])
    s = t.scale()
    assert len(s) == 9 and s.counts.tolist() == [1] + [2 ** (k - 1) for k in range(1, 9)]
    assert s.rank_runs([[0, 0, 0, 1, 0, 0, 0, 0], [0] * 8]).tolist() == [5, 1]
