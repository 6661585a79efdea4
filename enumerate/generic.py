"""Exhaustive enumeration: score every run of REL^N and reduce to distinct keys.

The space is cut into chunks of consecutive run ids. Each chunk is decoded, scored by
the numba kernel of every requested measure and reduced to sorted distinct
(stratum, key) pairs with run counts, in-process or in joblib workers; the parent merges
chunk results as they arrive. Memory is bounded by a few chunks plus the distinct
output, never by |REL|^N.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irscale.enumerate import kernels
from irscale.enumerate.reduce import Accumulator, KeyCodec, distinct_counts
from irscale.enumerate.runspace import chunks, space_size

DEFAULT_CHUNK = 1 << 20


@dataclass(frozen=True)
class ScoringJob:
    """Everything a worker needs to score one measure (picklable, measure-agnostic)."""

    kernel: str
    words: int
    weights: np.ndarray
    codec: KeyCodec
    by_grade: bool = False   # strata are per-grade count codes (graded RB-dependent measures)


@dataclass
class Distinct:
    """Distinct exact keys of one measure over the whole run space.

    ``keys`` is a (K, W) uint64 array sorted by (stratum, key); ``strata`` holds the
    number of relevant documents of the runs behind each row, or for graded measures the
    code of their per-grade counts (:func:`~irscale.enumerate.runspace.decode_count_codes`),
    None for measures that do not depend on the recall base; ``counts`` is the number of runs per row and sums to
    ``n_runs``; ``minids`` is the smallest run id behind each row.
    """

    measure: object
    keys: np.ndarray
    strata: np.ndarray | None
    counts: np.ndarray
    minids: np.ndarray
    n_runs: int


def make_job(measure) -> ScoringJob:
    """The scoring job of a measure. Binary RB-dependent measures are stratified by the
    number of relevant documents of each run; graded ones by the code of its per-grade
    counts (:func:`irscale.enumerate.kernels.grade_count_codes`)."""
    spec = measure.key_spec()
    kernel, words, weights = spec.kernel_arrays()
    stratum_bits = 8
    if measure.counts_keyed:
        stratum_bits = max(8, ((measure.n + 1) ** (measure.levels - 1)).bit_length())
    codec = KeyCodec(words=words, key_bits=max(1, int(spec.max_key).bit_length()),
                     stratified=measure.rb_dependent, stratum_bits=stratum_bits)
    return ScoringJob(kernel, words, weights, codec, measure.counts_keyed)


def score_chunk(start: int, count: int, n: int, levels: int, jobs: list[ScoringJob]):
    """Score runs start..start+count-1 for every job; returns one (packed, counts) per job."""
    runs = np.empty((count, n), dtype=np.uint8)
    kernels.decode_runs(start, count, levels, n, runs)
    relevant = codes = None
    if any(j.codec.stratified and not j.by_grade for j in jobs):
        relevant = kernels.relevant_counts(runs)
    if any(j.by_grade for j in jobs):
        codes = kernels.grade_count_codes(runs, levels)
    out = []
    for job in jobs:
        keys = kernels.score(job.kernel, job.words, job.weights, runs)
        strata = (codes if job.by_grade else relevant) if job.codec.stratified else None
        packed = job.codec.encode(keys, strata)
        out.append(distinct_counts(packed, base=start))
    return out


def warm_up(jobs: list[ScoringJob], n: int, levels: int) -> None:
    """Compile (or load from numba's cache) every kernel once before fanning out."""
    score_chunk(0, 1, n, levels, jobs)


def enumerate_distinct(measures, n_jobs: int = 1, chunk_size: int = DEFAULT_CHUNK,
                       progress: bool = False, desc: str | None = None, backend: str | None = None) -> list[Distinct]:
    """Enumerate REL^N once for measures sharing one N and REL; one :class:`Distinct` each.

    ``n_jobs`` is joblib's (1: in-process; -1: all cores). Results never depend on
    ``n_jobs`` or ``chunk_size``.
    """
    measures = list(measures)
    n, levels = measures[0].n, measures[0].levels
    if any(m.n != n or m.levels != levels for m in measures):
        raise ValueError("measures enumerated together must share N and REL")
    jobs = [make_job(m) for m in measures]
    total = space_size(levels, n)
    chunk_size = max(1, min(chunk_size, total))
    work = list(chunks(levels, n, chunk_size))
    warm_up(jobs, n, levels)
    accs = [Accumulator() for _ in jobs]

    if n_jobs == 1 or len(work) == 1:
        results = (score_chunk(s, c, n, levels, jobs) for s, c in work)
    else:
        from joblib import Parallel, delayed, parallel_config
        with parallel_config(**({"backend": backend} if backend else {})):
            results = Parallel(n_jobs=n_jobs, return_as="generator")(
                delayed(score_chunk)(s, c, n, levels, jobs) for s, c in work)

    from tqdm.auto import tqdm
    bar = tqdm(total=total, unit="run", unit_scale=True, desc=desc or f"enumerate {levels}^{n}",
               disable=not progress, leave=False)
    try:
        for (start, count), res in zip(work, results):
            for acc, part in zip(accs, res):
                acc.add(*part)
            bar.update(count)
    finally:
        bar.close()

    out = []
    for m, job, acc in zip(measures, jobs, accs):
        packed, cnt, minids = acc.result()
        keys, strata = job.codec.decode(packed)
        out.append(Distinct(m, keys, strata, cnt, minids, total))
    return out
