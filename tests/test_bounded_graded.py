"""Bounded scales of per-grade count vectors that bound two or more grades
(irscale.scales.tables.bounded_graded): count dimensions, brackets of kappa and mu, relaxed
grades with their corrections.

* the multi-index kernels against their plain-Python twins (tests/bounded_reference.py);
* at N = 8 (4 levels) the intervals and [K-, K+] contain the exact ranks and K of the tables,
  for random feasible runs, at vectors bounding 2 and 3 grades and with grades of count 0;
* at N = 20 (4 levels) the intervals contain the graded oracle's exact ranks of 10^5 random
  runs per vector (slow);
* the choice of dimensions (tight grades, relaxed ones) and the refusal past the budget.
"""
import bounded_reference as ref
import numpy as np
import pytest

import irscale
from irscale.errors import IrscaleWarning, RecallBaseError
from irscale.scales.tables import bounded_grid as bd
from irscale.scales.tables import bounded_kernels as bk
from irscale.scales.tables import bounded_problem as bp
from irscale.scales.tables.bounded import bounded_scale

GRADED8 = "nDCG_trec(gains=(0,1,2,3))@8"


def _feasible_runs(rng: np.random.Generator, n_runs: int, n: int, counts: tuple[int, ...]) -> np.ndarray:
    """Random runs over levels 0-3, the documents of a grade past its count turned to 0."""
    runs = rng.integers(0, len(counts) + 1, (n_runs, n)).astype(np.uint8)
    for g, c in enumerate(counts, start=1):
        runs = np.where((runs == g) & (np.cumsum(runs == g, axis=1) > c), 0, runs)
    return runs


@pytest.mark.parametrize("seed", range(6))
def test_multi_index_kernels_equal_their_twins(seed):
    rng = np.random.default_rng(seed)
    caps = tuple(int(x) for x in rng.integers(0, 3, int(rng.integers(2, 4))))
    radix = [c + 1 for c in caps]
    strides = np.array([int(np.prod(radix[i + 1:])) for i in range(len(radix))], np.int64)
    row_digits = np.array(list(np.ndindex(*radix)), np.int64)
    groups = []
    for _ in range(int(rng.integers(2, 6))):
        m = int(rng.integers(2, 6))
        shifts = np.concatenate([[0], rng.integers(0, 12, m - 1)]).astype(np.int64)
        digits = np.vstack([np.zeros(len(caps), np.int64), rng.integers(0, 3, (m - 1, len(caps)))])
        flat = digits @ strides
        o = np.lexsort((shifts, flat))
        groups.append((np.ascontiguousarray(shifts[o]), np.ascontiguousarray(flat[o]),
                       np.ascontiguousarray(digits[o])))
    rows = row_digits.shape[0]
    lo, hi = bd._start_spans(rows)
    for s, c, d in groups:
        lo, hi = bk.group_spans_md(lo, hi, s, c, row_digits, d)
    off = np.concatenate(([0], np.cumsum(np.maximum(hi - lo + 1, 0)))).astype(np.int64)
    flo, buf = lo.copy(), np.zeros(int(off[-1]))
    buf[0] = 1.0
    lo, hi = bd._start_spans(rows)
    hist = {((0,) * len(caps), 0): 1.0}
    for s, c, d in groups:
        q = 1.0 / len(s)
        bk.group_pass_md(buf, off, flo, lo, hi, s, c, row_digits, d, q)
        hist = ref.group_pass_md(hist, caps, s.tolist(), [tuple(x) for x in d.tolist()], q)
        for (vec, i), v in hist.items():
            row = int(np.dot(vec, strides))
            assert buf[off[row] - flo[row] + i] == pytest.approx(v, rel=1e-13, abs=0)
    out = np.zeros(int(hi.max()) + 1)
    bk.row_sums(buf, off, flo, lo, hi, out)
    np.testing.assert_allclose(out, ref.row_sums_md(hist, out.shape[0]), rtol=1e-13, atol=0)


@pytest.fixture
def brackets(monkeypatch):
    """Problems counted with kappa and mu's brackets (no antichain states)."""
    from irscale.scales.tables import bounded_states
    monkeypatch.setattr(bounded_states, "STATE_LIMIT", 1)
    bp.graded_problem.cache_clear()
    yield
    bp.graded_problem.cache_clear()


@pytest.mark.parametrize("method", ["states", "brackets"])
@pytest.mark.parametrize("counts", [(3, 2, 1), (5, 2, 0), (2, 2, 2), (1, 1, 7), (8, 3, 0), (2, 8, 1), (0, 4, 2)])
def test_intervals_contain_the_tables_ranks_at_n8(counts, method, request):
    if method == "brackets":
        request.getfixturevalue("brackets")
    ex = irscale.scale(GRADED8, rb=counts)
    b = bounded_scale(GRADED8, counts, error=1e-3)
    k_lo, k_hi = b.k_bounds
    assert k_lo <= ex.k <= k_hi and b.k == k_hi and b.k_exact == (k_lo == k_hi)
    if b.problem.graded.dims and len(b.problem.graded.dims) <= 1:
        assert b.k_exact                        # one dimension: kappa = mu, nothing relaxed at N = 8
    if method == "states" and len(b.problem.graded.dims) > 1:
        assert b.problem.method == "states" and b.k_exact and b.k == ex.k     # nothing relaxed at N = 8
    runs = _feasible_runs(np.random.default_rng(sum(counts)), 4000, 8, counts)
    assert all(ref.graded_feasible(r, counts) for r in runs[:50].tolist())
    r = ex.rank_runs(runs)
    lo, hi = b.rank_bounds_runs(runs)
    assert np.all((lo <= r) & (r <= hi))
    s = (r - 1) / (ex.k - 1)
    slo, shi = b.scaled_bounds_runs(runs)
    assert np.all((slo <= s) & (s <= shi))
    v = ex.values_of_ranks(r)
    vlo, vhi = b.rank_bounds(v)
    assert np.all((vlo <= r) & (r <= vhi))


def test_a_grade_of_count_zero_drops_and_one_bound_grade_left_is_exact():
    b = bounded_scale(GRADED8, (4, 0, 0), error=1e-3)
    assert b.problem.graded.dims == (1,) and b.k_exact
    assert b.k == irscale.scale(GRADED8, rb=(4, 0, 0)).k


def test_loose_grades_are_relaxed_and_corrected_at_n100():
    """(100, 57, 5) at N = 100: grade 3 is a dimension; grade 2 (57 of 100 ranks) is relaxed,
    its correction a tiny share of K."""
    m = "nDCG_trec(gains=(0,1,2,3))@100"
    b = bounded_scale(m, (100, 57, 5), error=1e-2)
    got = b.problem.graded
    assert got.dims == (3,) and [g for g, _ in got.relaxed] == [2]
    assert 0 < got.excess < 1e-6 * b.k and b.error_bound <= 1e-2


def test_every_bound_grade_relaxed_leaves_no_dimension():
    """(58, 52, 100) at N = 100: grades 1 and 2 seldom bind, no count dimension at all."""
    b = bounded_scale("nDCG_trec(gains=(0,1,2,3))@100", (58, 52, 100), error=1e-2)
    assert b.problem.graded.dims == () and b.problem.rows == 1 and b.error_bound <= 1e-2
    assert b.k_bounds[0] < b.k and b.k - b.k_bounds[0] < 1e-6 * b.k


def test_dimensions_past_the_budget_are_refused():
    with pytest.raises(RecallBaseError, match="rows"):
        bounded_scale("nDCG_trec(gains=(0,1,2,3))@100", (40, 30, 20), max_bytes=1 << 20)


@pytest.mark.slow
@pytest.mark.parametrize("counts", [(6, 3, 20), (5, 2, 3), (10, 4, 1), (20, 3, 0)])
def test_intervals_contain_the_graded_oracles_ranks_at_n20(counts):
    """10^5 random feasible runs per vector at N = 20 (levels 0-3)."""
    m = "nDCG_trec(gains=(0,1,2,3))@20"
    ex = irscale.scale(m, rb=counts)
    b = bounded_scale(m, counts, error=1e-3)
    assert b.k_bounds[0] <= ex.k <= b.k_bounds[1]
    if b.problem.method == "states" and not b.problem.graded.relaxed:
        assert b.k_exact and b.k == ex.k                    # antichain states: K exact
    runs = _feasible_runs(np.random.default_rng(sum(counts)), 100_000, 20, counts)
    r = ex.rank_runs(runs)
    lo, hi = b.rank_bounds_runs(runs)
    assert np.all((lo <= r) & (r <= hi))


def test_scored_intervals_hold_the_exact_scaled_values_with_k_bracketed(brackets):
    """The rows a transform writes (scoring._rank_rows): scaled_lo..scaled_hi hold the exact
    scaled value though K is only bracketed (its upper end divides by K- - 1, not K+ - 1), and
    no K is claimed."""
    from irscale.scales.runs.scoring import _rank_rows
    counts = (3, 2, 1)
    ex, b = irscale.scale(GRADED8, rb=counts), bounded_scale(GRADED8, counts, error=1e-3)
    assert not b.k_exact
    runs = _feasible_runs(np.random.default_rng(5), 3000, 8, counts)
    ideal = np.array([[3, 2, 2, 1, 1, 1, 0, 0]], np.uint8)
    runs = np.vstack([ideal, np.zeros((1, 8), np.uint8), runs])
    exact = ex.scaled(ex.rank_runs(runs))
    assert exact[0] == 1.0 and exact[1] == 0.0
    _, k, scaled, s_lo, s_hi, _, _ = _rank_rows(b, runs, np.full(runs.shape[0], 8), False)
    assert k == 0 and np.all((s_lo <= exact) & (exact <= s_hi)) and np.all((s_lo <= scaled) & (scaled <= s_hi))


@pytest.mark.parametrize("counts", [(3, 4, 2), (2, 1, 3), (5, 2, 1)])
def test_a_grid_counted_for_one_error_serves_another(counts):
    """A grid stored (or probed) for one error and refined for another answers for the same
    problem: its intervals still hold the exact ranks (N = 7, every feasible run)."""
    m = "nDCG_trec(gains=(0,1,2,3))@7"
    first = bounded_scale(m, counts, error=0.9)
    table = first.table
    table.stored[table.grid_key(first.rb)] = first.grid
    again = table.with_settings(error=1e-3).scale(counts)
    assert again.problem.graded.dims == first.problem.graded.dims
    runs = np.array(np.meshgrid(*[np.arange(4)] * 7, indexing="ij")).reshape(7, -1).T.astype(np.uint8)
    runs = runs[np.all(np.stack([(runs == g).sum(axis=1) for g in (1, 2, 3)], axis=1) <= counts, axis=1)]
    r = irscale.scale(m, rb=counts).rank_runs(runs)
    lo, hi = again.rank_bounds_runs(runs)
    assert np.all((lo <= r) & (r <= hi))


def test_a_store_of_multi_grade_grids_verifies(tmp_path):
    """A bounded build for a vector bounding three grades, then a verification of the store:
    the grid's error bound recomputed equals the one recorded."""
    from irscale.store import Store
    from irscale.store.fill import build_bounded
    m = "nDCG_trec(gains=(0,1,2,3))@45"
    build_bounded(tmp_path / "s", [m], rb_counts=[(35, 25, 2)])
    assert Store(tmp_path / "s").verify() == [f"{m} rb=(35,25,2)"]


def info_rows(path):
    """The rows ``irscale info`` prints for the tables of the store at ``path``, by column."""
    from irscale.commands import info
    return [dict(zip(info.HEADER, info._row(t))) for t in irscale.open_store(path).tables()]


def test_stored_grids_keep_the_way_they_were_counted(tmp_path, monkeypatch):
    """A grid counted over antichain states is stored as such; a grid counted with the
    brackets (as before states: its record without "counted") still answers where it reaches
    the width asked, with the bracketed problem it was counted for, as that problem's fresh
    scale does, and is counted again over states where it does not; both stores verify."""
    from irscale.scales.tables import bounded_states
    from irscale.store import Store
    from irscale.store.fill import build_bounded
    m, counts = "nDCG_trec(gains=(0,1,2,3))@45", (3, 2, 1)
    build_bounded(tmp_path / "states", [m], rb_counts=[counts], error=1e-2)
    monkeypatch.setattr(bounded_states, "STATE_LIMIT", 1)
    bp.graded_problem.cache_clear()
    build_bounded(tmp_path / "brackets", [m], rb_counts=[counts], error=1e-2)
    fresh = {"": bounded_scale(m, counts, error=1e-2)}
    monkeypatch.undo()
    bp.graded_problem.cache_clear()
    fresh["states"] = bounded_scale(m, counts, error=1e-2)
    x = np.linspace(0.0, 1.0, 101)
    for name, method in (("states", "states"), ("brackets", "")):
        assert Store(tmp_path / name).verify() == [f"{m} rb=(3,2,1)"]
        [row] = info_rows(tmp_path / name)                  # a bracketed K is an upper bound, said so
        assert row["distinct values"].startswith("<=") == (method == "")
        table = irscale.open_store(tmp_path / name).bounded_table(m, counts)
        grid = next(iter(table.stored.values()))
        assert grid.counted == method and table.grids_listed[0].get("counted", "") == method
        kept = table.with_settings(error=max(1e-2, table.recorded[counts])).scale(counts)
        assert kept.grid is grid and kept.problem.method == method and kept.k_exact == (method == "states")
        for a, b in zip(kept.rank_bounds(x), fresh[method].rank_bounds(x)):
            assert np.array_equal(a, b)
        if method == "":            # asked narrower than the old grid reached (its brackets): counted over states
            finer = table.with_settings(error=1e-2).scale(counts)
            assert table.recorded[counts] > 1e-2 and finer.problem.method == "states" and finer.k_exact
            assert finer.error_bound <= 1e-2


def test_antichain_states_scale_what_brackets_leave_far_too_wide():
    """(5, 4, 3) at N = 45: K exact over 2,004 states, within the width asked (its brackets:
    over TOO_WIDE times wider, next test)."""
    b = bounded_scale("nDCG_trec(gains=(0,1,2,3))@45", (5, 4, 3), error=1e-2)
    assert b.problem.method == "states" and b.k_exact and b.error_bound <= 1e-2


def test_scales_far_wider_than_asked_give_no_scale_and_say_so(recwarn, brackets):
    """A bracketed K that keeps a scale over TOO_WIDE times wider than the error asked leaves
    its topics unscaled (a midpoint that says next to nothing), with a warning naming it."""
    from irscale.scales.tables import bounded_scales as bs
    from irscale.scales.tables.closed import CLOSED_FORMS
    m = irscale.parse_measure("nDCG_trec(gains=(0,1,2,3))@45")
    assert bounded_scale(m, (5, 4, 3), error=1e-2).error_bound > bs.TOO_WIDE * 1e-2
    scales = bs.BoundedScales(CLOSED_FORMS, 1e-2)
    scales.prepare([(m, (5, 4, 3))])
    assert scales.scale(m, (5, 4, 3)) is None and (m, (5, 4, 3)) in scales.refused
    assert any(issubclass(w.category, IrscaleWarning) and "(5, 4, 3)" in str(w.message) for w in recwarn.list)
