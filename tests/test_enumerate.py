"""The enumerator: results independent of workers and chunking; kernels against the
plain-Python key reference; bounded chunks."""
import numpy as np
import pytest

from irscale.enumerate import all_runs, enumerate_distinct
from irscale.enumerate import kernels
from irscale.enumerate.generic import make_job
from irscale.scales import parse_measures

MEASURES = parse_measures("AP@12,RR@12,RBP(p=0.3)@12,DCG(b=2)@12,nDCG(b=10)@12,F1@12")


def _same(a, b):
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.counts, b.counts)
    assert (a.strata is None) == (b.strata is None)
    if a.strata is not None:
        assert np.array_equal(a.strata, b.strata)


def test_workers_and_chunks_do_not_change_results():
    ref = enumerate_distinct(MEASURES, n_jobs=1)
    small = enumerate_distinct(MEASURES, n_jobs=1, chunk_size=333)
    par = enumerate_distinct(MEASURES, n_jobs=2, chunk_size=512)
    for a, b, c in zip(ref, small, par):
        _same(a, b)
        _same(a, c)
        assert a.counts.sum() == 2 ** 12


@pytest.mark.parametrize("name", ["AP@9", "RR@9", "RBP(p=0.8)@9", "RBP(p=0.3)@21", "DCG(b=2)@9",
                                  "nDCG_trec@9", "P@9"])
def test_kernels_match_python_reference(name):
    from irscale import parse_measure
    from irscale.scales.measures.keys import words_to_ints
    m = parse_measure(name)
    spec = m.key_spec()
    job = make_job(m)
    rng = np.random.default_rng(0)
    runs = rng.integers(0, 2, size=(300, m.n)).astype(np.uint8)
    runs[0] = 0
    runs[1] = 1
    keys = kernels.score(job.kernel, job.words, job.weights, runs)
    assert words_to_ints(keys) == [spec.key_python(list(r)) for r in runs]


def test_strata_are_relevant_counts():
    [d] = enumerate_distinct(parse_measures("R@10"))
    assert d.strata.tolist() == list(range(11))
    assert d.keys[:, 0].tolist() == list(range(11))
    from math import comb
    assert d.counts.tolist() == [comb(10, r) for r in range(11)]


def test_all_runs_is_lexicographic():
    runs = all_runs(2, 3)
    assert runs.tolist() == [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0], [1, 1, 1]]


def test_a_new_measure_brings_its_own_kernel():
    """Extension point: a measure defined outside the package, with its own numba kernel,
    runs through the unchanged enumerator (here: 'last relevant rank', LR@N)."""
    from dataclasses import dataclass
    from fractions import Fraction

    import numba

    from irscale.scales.tables.build import table_from_distinct
    from irscale.scales.tables.scale import Scale
    from irscale.scales.measures.keys import LinearKey
    from irscale.scales.measures.measure import Measure

    @numba.njit
    def last_relevant(runs, weights, out):
        for i in range(runs.shape[0]):
            key = 0
            for k in range(runs.shape[1]):
                if runs[i, k] > 0:
                    key = k + 1
            out[i, 0] = key

    class LastKey(LinearKey):
        def key_python(self, run):
            return max([k + 1 for k, r in enumerate(run) if r] or [0])

    @dataclass(frozen=True, repr=False)
    class LR(Measure):
        name = "LR"

        def key_spec(self):
            return LastKey(kernel=last_relevant, weights=[[0, 0]], max_key=self.n, ordered=True,
                           scale=lambda rb: Fraction(1))

    [d] = enumerate_distinct([LR(n=8)])
    s = Scale(table_from_distinct(d))
    assert len(s) == 9 and s.counts.tolist() == [1] + [2 ** (k - 1) for k in range(1, 9)]
    assert s.rank_runs([[0, 0, 0, 1, 0, 0, 0, 0], [0] * 8]).tolist() == [5, 1]
