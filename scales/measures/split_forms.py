"""Split form of a measure: a run's value from its prefix and its suffix.

Write a run id as ``p * S + s`` where ``p`` is the id of the first ``h`` ranks (the
prefix) and ``s`` the id of the last ``N - h`` ranks (the suffix), ``S = levels**(N-h)``.
Every built-in measure has a *raw* value (its exact key, or a float approximation of its
unnormalised value) of the form

    raw(p, s) = A[p] + B[state[p], s]

where ``state[p]`` is a small summary of the prefix (the number of relevant documents for
AP, whether a relevant document was seen for RR, nothing for sums over ranks). Two tables
of 2**15 entries each then give the raw value of any of the 2**30 runs of length 30 with
two memory reads and one addition. The fast enumerator (:mod:`irscale.enumerate.split`)
merges prefix and suffix lists in value order instead of scoring runs one by one, and the
lazy lookups of big tables compute values from representative run ids the same way.

``exact``: raw values are exact integers below 2**53 whose order is the value order (AP,
RR, P, R, F1, RBP while its key fits). Otherwise raw values carry an absolute error of at
most ``bound`` and ties and order of close raw values are decided with the exact keys
``KA[p] + KB[state[p], s]`` (multi-word integers; formal coefficient vectors for log
discounts, whose order between distinct keys is decided in high precision).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from irscale.enumerate.runspace import all_runs
from irscale.scales.measures.keys import FormalLogKey, LinearKey, ReciprocalRankKey, U

EXACT_LIMIT = 2 ** 53


@dataclass
class SplitForm:
    """Prefix/suffix tables of one measure (see the module docstring)."""

    n: int
    levels: int
    h: int
    A: np.ndarray            # float64 (P,)
    state: np.ndarray        # int64 (P,)
    B: np.ndarray            # float64 (n_states, S)
    exact: bool
    bound: float             # absolute bound on raw errors (0 when exact)
    KA: np.ndarray           # uint64 (P, W) exact prefix keys (empty when exact)
    KB: np.ndarray           # uint64 (n_states, S, W)
    ordered_keys: bool       # exact key order is value order

    @property
    def S(self) -> int:
        return self.levels ** (self.n - self.h)

    @property
    def P(self) -> int:
        return self.levels ** self.h

    @property
    def words(self) -> int:
        return self.KA.shape[1] if self.KA.ndim == 2 else 0

    def raw_of_ids(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        p, s = ids // self.S, ids % self.S
        return self.A[p] + self.B[self.state[p], s]


def default_h(n: int) -> int:
    return n // 2


def _padded(levels: int, n: int, h: int, prefix: bool) -> np.ndarray:
    """All prefixes (suffixes) as full-length runs with zeros elsewhere."""
    part = all_runs(levels, h if prefix else n - h)
    runs = np.zeros((part.shape[0], n), dtype=np.uint8)
    if prefix:
        runs[:, :h] = part
    else:
        runs[:, h:] = part
    return runs


def split_form(measure, h: int | None = None) -> SplitForm:
    """The split form of a built-in measure (raises TypeError for measures without one)."""
    from irscale.enumerate import kernels

    spec = measure.key_spec()
    n, levels = measure.n, measure.levels
    h = default_h(n) if h is None else h
    pre, suf = _padded(levels, n, h, True), _padded(levels, n, h, False)
    empty_k = np.zeros((0, 0), dtype=np.uint64)

    if isinstance(spec, ReciprocalRankKey):
        _, _, warr = spec.kernel_arrays()      # the relevance threshold (graded RR)
        ka = kernels.score("rr", 1, warr, pre)[:, 0].astype(np.float64)
        kb = kernels.score("rr", 1, warr, suf)[:, 0].astype(np.float64)
        state = (ka > 0).astype(np.int64)
        B = np.stack([kb, np.zeros_like(kb)])
        return SplitForm(n, levels, h, ka, state, B, True, 0.0, empty_k, empty_k, True)

    if isinstance(spec, LinearKey) and spec.kernel == "ap":
        if spec.max_key >= EXACT_LIMIT:
            raise TypeError("AP key too large for the split form")
        w = np.array([row[1] for row in spec.weights], dtype=np.int64)  # lcm / k
        pr = pre[:, :h].astype(np.int64)
        cum = np.cumsum(pr, axis=1)
        A = (pr * cum * w[:h]).sum(axis=1).astype(np.float64)
        state = pr.sum(axis=1)
        sr = suf[:, h:].astype(np.int64)
        W = (sr * w[h:]).sum(axis=1)                       # sum of lcm/k over relevant suffix ranks
        T = (sr * np.cumsum(sr, axis=1) * w[h:]).sum(axis=1)
        B = np.stack([(c * W + T).astype(np.float64) for c in range(h + 1)])
        return SplitForm(n, levels, h, A, state, B, True, 0.0, empty_k, empty_k, True)

    from irscale.scales.measures.families.err import ERRKey
    if isinstance(spec, ERRKey):
        return err_split_form(measure, spec, h)
    if spec.kernel != "additive":
        # No structure known: h = 0, the "suffix" is the whole run (small N only).
        if not (spec.ordered and spec.max_key < EXACT_LIMIT) or levels ** n > 2 ** 26:
            raise TypeError(f"{measure} has no split form")
        kernel, words, warr = spec.kernel_arrays()
        keys = kernels.score(kernel, words, warr, all_runs(levels, n))[:, -1].astype(np.float64)
        return SplitForm(n, levels, 0, np.zeros(1), np.zeros(1, np.int64), keys[None, :], True, 0.0,
                         empty_k, empty_k, True)
    kernel, words, warr = spec.kernel_arrays()
    KA = kernels.score(kernel, words, warr, pre)
    KB = kernels.score(kernel, words, warr, suf)
    state = np.zeros(KA.shape[0], dtype=np.int64)
    if isinstance(spec, LinearKey) and spec.max_key < EXACT_LIMIT:
        A = KA[:, -1].astype(np.float64)
        B = KB[:, -1].astype(np.float64)[None, :]
        return SplitForm(n, levels, h, A, state, B, True, 0.0, empty_k, empty_k, True)
    # float raw values: per-rank float weights summed in rank order
    if isinstance(spec, FormalLogKey):
        from irscale.scales.measures.keys import ints_to_words
        wf = np.zeros((n, levels))
        for k in range(n):
            for g in range(levels):
                wf[k, g] = spec.raw_float(ints_to_words([spec.weights[k][g]], spec.words))[0] if spec.weights[k][g] else 0.0
        ordered = False
    else:
        wf = np.array([[float(w) for w in row] for row in spec.weights])
        ordered = True
    A = np.zeros(pre.shape[0])
    for k in range(h):
        A = A + wf[k][pre[:, k]]
    Bv = np.zeros(suf.shape[0])
    for k in range(h, n):
        Bv = Bv + wf[k][suf[:, k]]
    top = float(A.max() + Bv.max())
    bound = 2 * (n + 4) * U * top
    return SplitForm(n, levels, h, A, state, Bv[None, :], False, bound, KA, KB[None, :, :], ordered)


def _mul_small(words: np.ndarray, factor: int) -> np.ndarray:
    """Multi-word unsigned integers (rows of uint64 words, most significant first) times a
    factor below 2^32, exactly (32-bit limbs, carries propagated)."""
    assert 0 < factor < 2 ** 32
    w = words.shape[1]
    limbs = np.empty((words.shape[0], 2 * w), dtype=np.uint64)     # least significant limb first
    for i in range(w):
        word = words[:, w - 1 - i]
        limbs[:, 2 * i] = word & np.uint64(0xFFFFFFFF)
        limbs[:, 2 * i + 1] = word >> np.uint64(32)
    carry = np.zeros(words.shape[0], dtype=np.uint64)
    f = np.uint64(factor)
    for j in range(2 * w):
        v = limbs[:, j] * f + carry          # < 2^32 * 2^32: no overflow
        limbs[:, j] = v & np.uint64(0xFFFFFFFF)
        carry = v >> np.uint64(32)
    if carry.any():
        raise OverflowError("product does not fit the key words")
    out = np.empty_like(words)
    for i in range(w):
        out[:, w - 1 - i] = limbs[:, 2 * i] | (limbs[:, 2 * i + 1] << np.uint64(32))
    return out


def err_split_form(measure, spec, h: int) -> SplitForm:
    """Split form of ERR: key(p, s) = KA[p] + prod(p) * KS[s], with KA the prefix's own
    key, prod(p) = prod_{j<=h} (2^m + 1 - 2^g(r_j)) and KS the suffix's key computed from
    rank h + 1 on; the state of a prefix is the index of its product, and
    KB[state, s] = product * KS[s]. Raw values are exact integers while keys stay below
    2^53, float64 (error bound 4 u max_key) with multi-word exact keys beyond."""
    from irscale.scales.measures.keys import ints_to_words
    n, levels = measure.n, measure.levels
    W, f = spec.weights, spec.factors
    words = spec.words
    pre = all_runs(levels, h)
    ka, prods, factors = [], [], {}
    for run in pre.tolist():
        key, prod = 0, 1
        for k, r in enumerate(run):
            key += W[k][r] * prod
            prod *= f[r]
        ka.append(key)
        prods.append(prod)
        factors.setdefault(prod, [f[r] for r in run if f[r] != 1])   # each factor < 2^32
    ks = []
    for run in all_runs(levels, n - h).tolist():
        key, prod = 0, 1
        for k, r in enumerate(run, start=h):
            key += W[k][r] * prod
            prod *= f[r]
        ks.append(key)
    uniq = sorted(set(prods))
    index = {v: i for i, v in enumerate(uniq)}
    state = np.array([index[v] for v in prods], dtype=np.int64)
    KA = ints_to_words(ka, words)
    KS = ints_to_words(ks, words)
    KB = np.stack([functools.reduce(_mul_small, factors[v], KS) for v in uniq])
    empty_k = np.zeros((0, 0), dtype=np.uint64)
    if spec.max_key < EXACT_LIMIT:
        A = np.array(ka, dtype=np.float64)
        B = np.stack([np.array([v * x for x in ks], dtype=np.float64) for v in uniq])
        return SplitForm(n, levels, h, A, state, B, True, 0.0, empty_k, empty_k, True)
    from irscale.scales.measures.keys import words_to_float
    A = np.array([float(v) for v in ka])
    B = np.stack([words_to_float(KB[i]) for i in range(len(uniq))])
    return SplitForm(n, levels, h, A, state, B, False, 4 * U * float(spec.max_key), KA, KB, True)


@functools.lru_cache(maxsize=64)
def cached_split_form(measure) -> SplitForm:
    """:func:`split_form` with the default split, cached per measure (prefix and suffix
    tables of 2**15 entries at N = 30 are reused by every lookup and transform)."""
    return split_form(measure)


def values_of_ids(measure, ids, rb: int | None = None) -> np.ndarray:
    """Float64 values of the runs with ids ``ids`` for recall base ``rb``.

    Values come from each run's exact key, scored by the enumerator's kernel (correctly
    rounded for rational measures; for log discounts within the measure's stated error
    bound), never from a float sum in another order.
    """
    from irscale.enumerate import kernels
    from irscale.enumerate.runspace import runs_of_ids
    rb = measure.check_rb(rb)
    ids = np.asarray(ids, dtype=np.int64).reshape(-1)
    if measure.value_kind != "key":   # exact values per run (Twist, CRP, utilities, OIE)
        return measure.values_many(measure.runs_of_ids(ids), rb)
    spec = measure.key_spec()
    runs = runs_of_ids(ids, measure.levels, measure.n)
    if spec.words > 1 and not (spec.kernel == "additive"):   # ERR beyond 64 bits: exact keys in Python
        from irscale.scales.measures.keys import ints_to_words
        keys = ints_to_words([spec.key_python(r) for r in runs.tolist()], spec.words)
    else:                              # the enumerator's own kernel on each run (no split form needed)
        keys = kernels.score(*spec.kernel_arrays(), runs)
    return spec.float_values(keys, measure, rb)
