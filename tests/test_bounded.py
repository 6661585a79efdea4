"""Bounded scales (irscale.scales.tables.bounded): certified intervals of unq ranks.

* the kernels against their plain-Python twins (tests/bounded_reference.py), and the whole
  programmes against brute force over every tuple (exact integer counts);
* at N <= 40 the intervals contain the exact ranks of the rank oracles, for runs drawn
  uniformly among the distinct values, random runs and extreme runs, ranked from their
  exact keys and from their float values, for RBP, DCG, nDCG at several recall bases and
  graded nDCG_trec at several count vectors; K and the runs counted agree;
* the bounds shrink as the grid grows; past N = 40 they agree with Monte Carlo estimates
  within the DKW bound;
* the scale interface (midpoints, scaled values, values of ranks) and its refusals.
"""
import itertools
import math
from fractions import Fraction

import bounded_reference as ref
import numpy as np
import pytest

import irscale
from irscale.errors import BuildTooLargeError, MeasureError, OracleListError, RecallBaseError, RunError
from irscale.scales.tables import bounded_grid as bd
from irscale.scales.tables import bounded_kernels as bk
from irscale.scales.tables import bounded_problem as bp
from irscale.scales.tables.bounded import bounded_scale

RNG = np.random.default_rng(20240601)


# -- kernels and their twins ------------------------------------------------------------------------------
def _ragged(lows, counts, rows, scale):
    """Run group_pass over all groups but the last, then last_group; return both results
    and the twin's (kernel order: options sorted by count then shift)."""
    options = []
    for x, c in zip(lows, counts):
        s = np.floor(x * scale).astype(np.int64)
        o = np.lexsort((s, c))
        options.append((np.ascontiguousarray(s[o]), np.ascontiguousarray(c[o])))
    lo, hi = bd._start_spans(rows)
    for s, c in options[:-1]:
        want = ref.group_spans(lo.tolist(), hi.tolist(), s.tolist(), c.tolist())
        lo, hi = bk.group_spans(lo, hi, s, c)
        assert (lo.tolist(), hi.tolist()) == want
    off = np.concatenate(([0], np.cumsum(np.maximum(hi - lo + 1, 0)))).astype(np.int64)
    flo = lo.copy()
    buf = np.zeros(int(off[-1]))
    buf[0] = 1.0
    lo, hi = bd._start_spans(rows)
    hist = {(0, 0): 1.0}
    for s, c in options[:-1]:
        q = 1.0 / len(s)
        bk.group_pass(buf, off, flo, lo, hi, s, c, q)
        hist = ref.group_pass(hist, rows, s.tolist(), c.tolist(), q)
        for (row, i), v in hist.items():
            assert buf[off[row] - flo[row] + i] == pytest.approx(v, rel=1e-13, abs=0)
        assert sum(v for v in hist.values()) == pytest.approx(buf.sum(), rel=1e-13)
    s, c = options[-1]
    width = int(hi.max()) + 1
    out = np.zeros(width + int(s.max()))
    bk.last_group(buf, off, flo, lo, hi, s, c, 1.0 / len(s), np.zeros(width), out)
    want = ref.last_group(hist, rows, s.tolist(), c.tolist(), 1.0 / len(s), out.shape[0])
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rows", [1, 2, 4])
def test_group_kernels_equal_their_twins(seed, rows):
    rng = np.random.default_rng(seed)
    lows, _, counts = ref.random_groups(rng, int(rng.integers(1, 6)), rows)
    if rows == 1:
        counts = [np.zeros_like(c) for c in counts]
    _ragged(lows, counts, rows, 8)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("up", [False, True])
def test_geometric_stage_equals_its_twin(seed, up):
    rng = np.random.default_rng(seed)
    a, c = sorted(rng.choice(np.arange(1, 12), 2, replace=False).tolist())
    n_old = int(rng.integers(1, 60))
    old = np.where(rng.random(n_old) < 0.3, 0.0, rng.random(n_old))
    shifts = np.array(sorted({0, *rng.integers(1, 30, 2).tolist()}), np.int64)
    size = -(-a * n_old // c) + int(shifts.max()) + 2
    new = np.zeros(size)
    got = bk.geometric_stage(old, n_old, new, a, c, shifts, 1.0 / len(shifts), up)
    want, top = ref.geometric_stage(old.tolist(), n_old, a, c, shifts.tolist(), 1.0 / len(shifts), up, size)
    assert got == top
    np.testing.assert_allclose(new, want, rtol=1e-14, atol=0)


def _cumulative(grid: bd.Grid, cells: int) -> tuple[list, list]:
    """Exact counts read from a grid's masses, assuming they are within its error bounds."""
    def counts(arr):
        ext = np.concatenate([arr, np.full(max(cells - arr.shape[0], 0), arr[-1])])[:cells]
        return [round(Fraction(float(s)) / grid.weight) for s in ext.tolist()]
    return counts(grid.down), counts(grid.up)


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("rows", [1, 3])
def test_group_programmes_count_what_brute_force_counts(seed, rows):
    rng = np.random.default_rng(100 + seed)
    lows, highs, counts = ref.random_groups(rng, 4, rows)
    if rows == 1:
        counts = [np.zeros_like(c) for c in counts]
    prob = bp.Problem(None, None, rows, 0, (1.0, 1.0), 1.0, lows, highs, counts)
    scale = int(rng.integers(2, 9))
    grid = bd.count_grid(prob, scale, threads=1)
    rounding = bd.rounding(prob, scale)
    offsets = [Fraction(bd.group_offset(x * float(scale))) for x in lows]
    cells = max(grid.down.shape[0], grid.up.shape[0]) + 2
    upper, lower, (low, high), (tlow, thigh) = ref.tuple_counts(lows, highs, counts, rows, scale, cells, offsets)
    assert (rounding.low, rounding.high) == (low, high)
    assert _cumulative(grid, cells) == (upper, lower)
    assert low <= tlow and thigh <= high                                  # every tuple's error within the bounds
    assert grid.gamma < 1e-12 and grid.eta < 1e-300


@pytest.mark.parametrize("seed", range(20))
def test_group_offsets_make_the_narrowest_errors(seed):
    rng = np.random.default_rng(300 + seed)
    scale = int(rng.integers(2, 50))
    x = np.concatenate([[0.0], rng.random(int(rng.integers(1, 8))) * 3])
    y = [Fraction(v) * scale for v in x.tolist()]
    t = Fraction(bd.group_offset(x * float(scale)))
    e = [math.floor(v + t) - v for v in y]
    assert 0 <= t < 1 and max(e) - min(e) <= ref.best_spread(y) + Fraction(1, 10 ** 9)


@pytest.mark.parametrize("p,gains,n,scale", [(Fraction(4, 5), (0, 1), 9, 3), (Fraction(1, 2), (0, 1), 8, 4),
                                             (Fraction(3, 10), (0, 1), 7, 50), (Fraction(4, 5), (0, 1, 3), 6, 5),
                                             (Fraction(9, 10), (0, 1), 10, 200)])
def test_geometric_programme_counts_what_brute_force_counts(p, gains, n, scale):
    prob = bp.Problem(None, None, 1, len(gains) ** n, (1.0, 1.0), 1.0,
                      geometric=(p.numerator, p.denominator, gains))
    prob.grouping = type("G", (), {"groups": [None] * n})()
    grid = bd.count_grid(prob, scale, threads=1)
    grids = bd._stage_grids(p, gains[-1], n, scale)
    cells = max(grid.down.shape[0], grid.up.shape[0]) + 2
    assert _cumulative(grid, cells) == ref.geometric_counts(p, gains, n, grids, cells)


# -- containment of exact ranks ---------------------------------------------------------------------------
def _runs(b, ex, rng, n):
    """Runs feasible for the scale: uniform among distinct values, uniform runs made
    feasible, extreme runs."""
    m, rb = ex.measure, ex.rb
    runs = [b.sample_runs(n, rng), rng.integers(0, m.levels, (n, m.n)).astype(np.uint8),
            np.zeros((1, m.n), np.uint8), np.full((1, m.n), m.levels - 1, np.uint8),
            np.eye(m.n, dtype=np.uint8) * (m.levels - 1)]
    runs = np.concatenate(runs)
    if isinstance(rb, tuple):
        for g, c in enumerate(rb, start=1):
            runs = np.where((runs == g) & (np.cumsum(runs == g, axis=1) > c), 0, runs).astype(np.uint8)
    elif rb is not None:
        runs = (runs * (np.cumsum(runs != 0, axis=1) <= rb)).astype(np.uint8)
    return runs


CASES = [("RBP(p=0.8)@12", None), ("RBP(p=0.8)@30", None), ("RBP(p=0.5)@20", None), ("RBP(p=0.95)@20", None),
         ("RBP(p=0.3)@20", None), ("RBP(gains=(0,1,3),p=0.8)@12", None), ("DCG(b=2)@12", None),
         ("DCG(b=2)@30", None), ("DCG(b=10)@20", None), ("nDCG(b=2)@12", 4), ("nDCG(b=2)@20", 1),
         ("nDCG(b=2)@20", 10), ("nDCG(b=2)@30", 15), ("nDCG(b=2)@20", 27), ("nDCG_trec@20", 6),
         ("nDCG_trec(gains=(0,1,2))@12", (12, 12)), ("nDCG_trec(gains=(0,1,2))@12", (12, 3)),
         ("nDCG_trec(gains=(0,1,2))@12", (2, 20)), ("nDCG_trec(gains=(0,1,2))@16", (16, 5)),
         ("DCG(b=2,gains=(0,1,3))@10", None)]


@pytest.mark.parametrize("name,rb", CASES)
def test_intervals_contain_the_oracles_exact_ranks(name, rb):
    ex = irscale.scale(name, rb=rb, layout="oracle")
    b = bounded_scale(name, rb, error=2e-3)
    assert (b.k, b.n_runs) == (ex.k, ex.n_runs)
    assert b.error_bound <= max(2e-3, bd.FEW_RANKS / (b.k - 1))
    runs = _runs(b, ex, np.random.default_rng(len(name) + 7 * ex.measure.n), 2000)
    exact = ex.rank_runs(runs)
    lo, hi = b.rank_bounds_runs(runs)
    assert np.all((lo <= exact) & (exact <= hi))
    values = ex.measure.values_of_ids(ex.measure.ids_of_runs(runs), ex.rb)
    lo_v, hi_v = b.rank_bounds(values)
    assert np.all((lo_v <= exact) & (exact <= hi_v))
    s_lo, s_hi = b.scaled_bounds(values)
    scaled = ex.scaled(exact)
    assert np.all((s_lo <= scaled) & (scaled <= s_hi))
    assert np.max(s_hi - s_lo) <= b.error_bound
    mid = b.rank(values)
    assert np.all((lo_v <= mid) & (mid <= hi_v))
    assert np.all(np.abs(b.scaled_values(values) - scaled) <= b.error_bound / 2)


@pytest.mark.parametrize("name,rb", [("RBP(p=0.8)@12", None), ("RBP(p=0.3)@12", None), ("RBP(p=0.95)@12", None),
                                     ("RBP(gains=(0,1,3),p=0.8)@7", None), ("DCG(b=2)@12", None),
                                     ("nDCG(b=2)@12", 3), ("nDCG_trec(gains=(0,1,2))@7", (7, 2))])
def test_every_run_on_coarse_and_fine_grids(name, rb):
    """Every feasible run, on grids from far coarser than any error target (a cell or two
    per raw unit) to fine ones: cell edges everywhere."""
    ex = irscale.scale(name, rb=rb, layout="oracle")
    m = ex.measure
    runs = np.array(list(itertools.product(range(m.levels), repeat=m.n)), np.uint8)
    if isinstance(rb, tuple):
        runs = runs[np.all([(runs == g).sum(axis=1) <= c for g, c in enumerate(rb, start=1)], axis=0)]
    elif rb is not None:
        runs = runs[(runs != 0).sum(axis=1) <= rb]
    exact = ex.rank_runs(runs)
    values = m.values_of_ids(m.ids_of_runs(runs), ex.rb)
    for cells in (1, 7, 64, 333, 4096):
        b = bounded_scale(name, rb, cells=cells)
        lo, hi = b.rank_bounds_runs(runs)
        assert np.all((lo <= exact) & (exact <= hi)), cells
        lo, hi = b.rank_bounds(values)
        assert np.all((lo <= exact) & (exact <= hi)), cells
        s_lo, s_hi = b.scaled_bounds(values)
        assert np.all((s_lo <= ex.scaled(exact)) & (ex.scaled(exact) <= s_hi)) and np.max(s_hi - s_lo) <= b.error_bound


def test_intervals_at_n40_and_through_run_ids():
    ex = irscale.scale("RBP(p=0.8)@40")
    b = bounded_scale("RBP(p=0.8)@40", error=1e-5)
    assert b.k == ex.k == 2 ** 40 and b.error_bound <= 1e-5
    ids = np.random.default_rng(5).integers(0, 2 ** 40, 3000)
    exact = ex.rank_ids(ids)
    lo, hi = b.rank_bounds_runs(ex.measure.runs_of_ids(ids))
    assert np.all((lo <= exact) & (exact <= hi))
    assert np.all(np.abs(b.rank_ids(ids) - exact) <= b.error_bound * b.k)


def test_bounds_shrink_as_the_grid_grows():
    for name, rb in [("RBP(p=0.8)@30", None), ("nDCG(b=2)@30", 12)]:
        bounds = [bounded_scale(name, rb, cells=cells).error_bound for cells in (1 << 8, 1 << 10, 1 << 12, 1 << 14)]
        assert all(b2 < b1 / 2.5 for b1, b2 in zip(bounds, bounds[1:])), bounds
        ex = irscale.scale(name, rb=rb)
        runs = bounded_scale(name, rb, cells=1 << 8).sample_runs(500, np.random.default_rng(1))
        exact = ex.rank_runs(runs)
        widths = []
        for cells in (1 << 8, 1 << 12):
            lo, hi = bounded_scale(name, rb, cells=cells).rank_bounds_runs(runs)
            assert np.all((lo <= exact) & (exact <= hi))
            widths.append(float(np.mean(hi - lo)))
        assert widths[1] < widths[0] / 8


# -- past the oracles: Monte Carlo -------------------------------------------------------------------------
def _dkw(values, scaled_lo, scaled_hi, k, alpha=1e-6):
    """Sampled uniformly among distinct values, the ranks' empirical distribution is within
    eps of the uniform with probability 1 - alpha (Dvoretzky-Kiefer-Wolfowitz)."""
    n = scaled_lo.shape[0]
    eps = math.sqrt(math.log(2 / alpha) / (2 * n)) + 2 / k
    order = np.argsort(values, kind="stable")
    ecdf = np.arange(1, n + 1) / n
    assert np.all(scaled_lo[order] - eps <= ecdf) and np.all(ecdf - 1 / n <= scaled_hi[order] + eps)


@pytest.mark.parametrize("name,rb", [("DCG(b=2)@100", None), ("nDCG(b=2)@100", 50), ("RBP(p=0.8)@1000", None),
                                     ("nDCG_trec(gains=(0,1,2))@100", (100, 30))])
def test_monte_carlo_agrees_within_the_dkw_bound(name, rb):
    b = bounded_scale(name, rb, error=1e-3)
    m = b.measure
    runs = b.sample_runs(3000, np.random.default_rng(11))
    values = m.values_of_judged(runs, np.full(runs.shape[0], m.n), b.rb)     # the measure's own values
    lo, hi = b.scaled_bounds(values)
    _dkw(values, lo, hi, b.k)
    lo_r, hi_r = b.scaled_bounds_runs(runs)
    assert np.all(lo_r <= hi) and np.all(lo <= hi_r)


# -- interface and refusals --------------------------------------------------------------------------------
def test_interface_at_n1000():
    b = bounded_scale("RBP(p=0.8)@1000", cells=1 << 14)
    assert b.k == 2 ** 1000 and b.n_runs == 2 ** 1000 and b.k > 2 ** 63
    lo, hi = b.rank_bounds([0.0, 0.1, 0.2, float("nan")])
    assert lo.dtype == object and lo[0] == 1 and all(x <= y for x, y in zip(lo, hi))
    assert (lo[3], hi[3]) == (0, 0)
    r = b.rank([0.0, 0.1, 0.2])
    s = b.scaled(r)
    assert s[0] < 1e-3 and 0 < s[1] < s[2] < 1
    with pytest.raises(irscale.errors.ValueNotInScaleError):
        b.rank([1.5])
    v_lo, v_hi = b.value_bounds_of_ranks([r[1]])
    assert v_lo[0] <= 0.1 <= v_hi[0]
    rounded = b.rank([0.1234, 0.1234], decimals=[4, np.nan])          # rounded values: wider intervals
    lo4, hi4 = b.rank_bounds([0.1234], decimals=4)
    assert lo4[0] <= rounded[0] <= hi4[0] and hi4[0] - lo4[0] > 10 ** 90
    found = b.lookup([0.1, 2.0])
    assert found.status.tolist() == [0, 1] and abs(found.matched[0] - 0.1) < 1e-3
    for attr in ("values", "counts", "representatives"):
        with pytest.raises(OracleListError):
            getattr(b, attr)
    with pytest.raises(RunError):
        b.rank_ids([1])


def test_values_of_ranks_enclose_the_oracles_values():
    ex = irscale.scale("nDCG(b=2)@20", rb=8)
    b = bounded_scale("nDCG(b=2)@20", 8, error=1e-3)
    ranks = np.random.default_rng(2).integers(1, ex.k + 1, 200)
    lo, hi = b.value_bounds_of_ranks(ranks)
    v = ex.values_of_ranks(ranks)
    assert np.all((lo <= v) & (v <= hi))


def test_refusals():
    with pytest.raises(MeasureError):
        bounded_scale("AP@100", 5)
    with pytest.raises(RecallBaseError):           # count dimensions past the memory budget
        bounded_scale("nDCG_trec(gains=(0,1,2))@100", (40, 30), max_bytes=1 << 20)
    with pytest.raises(BuildTooLargeError):
        bounded_scale("DCG(b=2)@100", error=1e-4, max_bytes=1 << 20)
    b = bounded_scale("nDCG(b=2)@20", 3, error=1e-2)
    with pytest.raises(RunError):
        b.rank_bounds_runs([[1] * 4 + [0] * 16])


def test_opt_in_through_irscale_scale_and_said_where_no_exact_scale_exists():
    """Never a default: the measure's reason names the opt-in, irscale.scale(layout="bounded")
    gives it, and outputs say it is bounded."""
    from irscale.scales.tables.layouts import kind_of_scale
    m = irscale.parse_measure("DCG(b=2)@60")
    assert not m.has_scales and 'layout="bounded"' in m.scales_reason()
    with pytest.raises(irscale.MeasureError):
        irscale.scale(m)
    s = irscale.scale(m, layout="bounded")
    assert type(s).__name__ == "BoundedScale" and s.error_bound <= bp.DEFAULT_ERROR
    assert kind_of_scale(s).startswith("bounded")
    assert irscale.parse_measure("AP@60").scales_reason().startswith("no exact or bounded scale exists for AP")
