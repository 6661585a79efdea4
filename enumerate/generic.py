"""The generic enumerator: score every run of REL^N and reduce to distinct keys.

The space is cut into chunks of consecutive run ids. Each chunk is decoded, scored by
the numba kernel of every :class:`ScoringJob` and reduced to sorted distinct
(stratum, key) pairs with run counts, in-process or in joblib workers
(:class:`~irscale.enumerate.fanout.Fanout`); the parent merges chunk results as they
arrive. Memory is bounded by a few chunks plus the distinct output, never by |REL|^N.
It is the reference the split enumerator is tested against, and the path of every
measure without a split form. :func:`enumerate_feasible_distinct` scores only the runs
feasible for one per-grade count vector (graded tables of a vector whose runs are a small
part of the space).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irscale.enumerate.fanout import Fanout
from irscale.enumerate.interpreted import compiled, tiered
from irscale.enumerate.jobs import ScoringJob, score
from irscale.enumerate.lazy import lazy_module
from irscale.enumerate.progress import progress_bar
from irscale.enumerate.reduce import Accumulator, distinct_counts
from irscale.enumerate.runspace import chunks, feasible_run_chunks, feasible_space_size, ids_of_runs, space_size

kernels = tiered(lazy_module("irscale.enumerate.kernels"))     # small calls run interpreted

DEFAULT_CHUNK = 1 << 20
@dataclass
class Distinct:
    """Distinct exact keys of one scoring job over the whole run space.

    ``keys`` is a (K, W) uint64 array sorted by (stratum, key); ``strata`` holds per row
    the number of relevant documents of the runs behind it, or the code of their
    per-grade counts (:func:`~irscale.enumerate.runspace.decode_count_codes`), None for
    jobs without strata; ``counts`` is the number of runs per row and sums to
    ``n_runs``; ``minids`` is the smallest run id behind each row.
    """

    keys: np.ndarray
    strata: np.ndarray | None
    counts: np.ndarray
    minids: np.ndarray
    n_runs: int


def score_chunk(start: int, count: int, n: int, levels: int, jobs: list[ScoringJob]
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Score runs start..start+count-1 for every job; returns one (packed, counts, minids)
    per job."""
    runs = np.empty((count, n), dtype=np.uint8)
    kernels.decode_runs(start, count, levels, n, runs)
    return [distinct_counts(packed, base=start) for packed in score_runs(runs, levels, jobs)]


def score_runs(runs: np.ndarray, levels: int, jobs: list[ScoringJob]) -> list[np.ndarray]:
    """The packed (stratum, key) of every run (uint8 (m, N)) for every job."""
    strata = {}
    if any(j.strata == "relevant" for j in jobs):
        strata["relevant"] = kernels.relevant_counts(runs)
    if any(j.strata == "grade_codes" for j in jobs):
        strata["grade_codes"] = kernels.grade_count_codes(runs, levels)
    return [job.codec.encode(score(job.kernel, job.words, job.weights, runs), strata.get(job.strata)) for job in jobs]


def _results(jobs: list[ScoringJob], accs: list[Accumulator], total: int) -> list[Distinct]:
    """One :class:`Distinct` per job from its merged chunk reductions."""
    out = []
    for job, acc in zip(jobs, accs):
        packed, cnt, minids = acc.result()
        keys, strata = job.codec.decode(packed)
        out.append(Distinct(keys, strata, cnt, minids, total))
    return out


def enumerate_distinct(jobs: list[ScoringJob], n: int, levels: int, fanout: Fanout = Fanout(),
                       chunk_size: int = DEFAULT_CHUNK, progress: bool = False, desc: str | None = None
                       ) -> list[Distinct]:
    """Enumerate REL^N (``levels`` degrees, runs of length ``n``) once for several scoring
    jobs; one :class:`Distinct` per job. Results never depend on the fan-out or on
    ``chunk_size``."""
    total = space_size(levels, n)
    chunk_size = max(1, min(chunk_size, total))
    work = list(chunks(levels, n, chunk_size))
    if len(work) > 1 and fanout.workers > 1:
        with compiled():                          # compile (or load from numba's cache) once, before fanning out
            score_chunk(0, 1, n, levels, jobs)
    accs = [Accumulator() for _ in jobs]
    results = fanout.map(score_chunk, ((s, c, n, levels, jobs) for s, c in work), len(work))
    bar = progress_bar(total=total, unit="run", unit_scale=True, desc=desc or f"enumerate {levels}^{n}",
                       disable=not progress, leave=False)
    try:
        for (_start, count), res in zip(work, results):
            for acc, part in zip(accs, res):
                acc.add(*part)
            bar.update(count)
    finally:
        bar.close()
    return _results(jobs, accs, total)


def enumerate_feasible_distinct(jobs: list[ScoringJob], n: int, levels: int, counts: tuple[int, ...],
                                chunk_size: int = DEFAULT_CHUNK, progress: bool = False, desc: str | None = None
                                ) -> list[Distinct]:
    """As :func:`enumerate_distinct`, over the runs of length ``n`` with at most
    ``counts[g - 1]`` documents of each grade g only (in run id order, generated in one
    process: :func:`~irscale.enumerate.runspace.feasible_run_chunks`); ``n_runs`` is
    their number and ``minids`` are true run ids."""
    total = feasible_space_size(n, counts)
    accs = [Accumulator() for _ in jobs]
    bar = progress_bar(total=total, unit="run", unit_scale=True,
                       desc=desc or f"enumerate {levels}^{n} with counts {counts}", disable=not progress, leave=False)
    try:
        for runs in feasible_run_chunks(n, counts, max(1, min(chunk_size, total))):
            ids = ids_of_runs(runs, levels).astype(np.int64)
            for acc, packed in zip(accs, score_runs(runs, levels, jobs)):
                acc.add(*distinct_counts(packed, np.ones(ids.shape[0], np.int64), ids))
            bar.update(runs.shape[0])
    finally:
        bar.close()
    return _results(jobs, accs, total)
