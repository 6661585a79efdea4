"""Per-topic standardisations (irscale.scales.runs.standardize) against plain pandas,
SciPy and Python-loop references: z-scores (Webber et al.), their normal CDF, Sakai's
std-linear, Urbano et al.'s ECDF with and without leave-one-out, against the systems
themselves and against a reference of other runs; the DataFrame level, the monotonicity
properties with hypothesis, and the errors."""
import math
import statistics
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from irscale.errors import IrscaleError, IrscaleWarning
from irscale.scales.runs import standardize as S

METHODS = ("zscore", "zscore-cdf", "std-linear", "ecdf")


def _matrix(rng, n=9, k=6, grid=None):
    x = rng.normal(0, 0.15, (n, 1)) + rng.normal(0.5, 0.2, (n, k)) + np.linspace(0, 0.2, k)
    return np.round(x * grid) / grid if grid else x


# ------------------------------------------------------------------- references


def _pandas_z(x):
    df = pd.DataFrame(x)                            # rows = topics, columns = systems
    return df.sub(df.mean(axis=1), axis=0).div(df.std(axis=1), axis=0).to_numpy()


def _reference(x, method):
    """Standardisation against the systems themselves, in plain pandas / SciPy."""
    if method == "ecdf":
        return pd.DataFrame(x).rank(axis=1, method="max", pct=True).to_numpy()
    z = _pandas_z(x)
    if method == "zscore":
        return z
    if method == "zscore-cdf":
        return stats.norm.cdf(z)
    return 0.15 * z + 0.5


def _ecdf_loop(x, ref=None, own=None):
    """F(x) = #(reference scores <= x) / #(reference) per topic, in Python loops.
    ``ref`` None: the other systems of x (leave-one-out when own is True); else the
    reference matrix, leaving out column own[i] (>= 0) for system i."""
    rows, cols = len(x), len(x[0])
    out = [[0.0] * cols for _ in range(rows)]
    for t in range(rows):
        for i in range(cols):
            if ref is None:
                others = [x[t][j] for j in range(cols) if not (own and j == i)]
            else:
                others = [ref[t][j] for j in range(len(ref[t])) if own is None or j != own[i]]
            out[t][i] = sum(1 for v in others if v <= x[t][i]) / len(others)
    return np.array(out)


def _z_loop(x, ref):
    """(x - mean) / stdev of each reference row (statistics: n - 1, exact sums)."""
    out = []
    for row, r in zip(x, ref):
        m, s = statistics.mean(r), statistics.stdev(r)
        out.append([0.0 if s == 0 else (v - m) / s for v in row])
    return np.array(out)


# ------------------------------------------------------------ standardize_matrix


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("grid", [None, 8, 3])
def test_against_the_systems_themselves(method, grid):
    rng = np.random.default_rng(1)
    x = _matrix(rng, grid=grid)
    spread = x.std(axis=1) > 0
    got = S.standardize_matrix(x, method)
    assert got.shape == x.shape
    np.testing.assert_allclose(got[spread], _reference(x, method)[spread], rtol=1e-12, atol=1e-14)
    if method != "ecdf":
        np.testing.assert_allclose(S.standardize_matrix(x, "zscore"), _z_loop(x.tolist(), x.tolist()),
                                   rtol=1e-12, atol=1e-14)
    else:
        np.testing.assert_array_equal(got, _ecdf_loop(x.tolist()))


def test_ecdf_leave_one_out_against_python_loop():
    rng = np.random.default_rng(2)
    for grid in (None, 4, 2):                     # coarse grids: many ties with the left-out score
        x = _matrix(rng, n=7, k=5, grid=grid)
        got = S.standardize_matrix(x, "ecdf", leave_one_out=True)
        np.testing.assert_allclose(got, _ecdf_loop(x.tolist(), own=True), rtol=0, atol=1e-15)
        assert (got >= 0).all() and (got <= 1).all()
        assert not np.allclose(got, S.standardize_matrix(x, "ecdf"))
    # two systems: each is standardised by the other alone
    y = np.array([[0.1, 0.2], [0.3, 0.3], [0.5, 0.4]])
    np.testing.assert_array_equal(S.standardize_matrix(y, "ecdf", leave_one_out=True), [[0, 1], [1, 1], [1, 0]])


def test_against_an_external_reference():
    rng = np.random.default_rng(3)
    x = _matrix(rng, n=8, k=4, grid=10)
    r = _matrix(rng, n=8, k=7, grid=10)
    r[:, 2] = x[:, 1]                             # reference run 2 is system 1
    r[:, 5] = x[:, 3]                             # reference run 5 is system 3
    same = np.array([-1, 2, -1, 5])
    z = _z_loop(x.tolist(), r.tolist())
    np.testing.assert_allclose(S.standardize_matrix(x, "zscore", r), z, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(S.standardize_matrix(x, "zscore-cdf", r), stats.norm.cdf(z), rtol=1e-12)
    np.testing.assert_allclose(S.standardize_matrix(x, "std-linear", r), 0.15 * z + 0.5, rtol=1e-12)
    np.testing.assert_allclose(S.standardize_matrix(x, "ecdf", r), _ecdf_loop(x.tolist(), r.tolist()), atol=1e-15)
    loo = S.standardize_matrix(x, "ecdf", r, leave_one_out=True, same=same)
    np.testing.assert_allclose(loo, _ecdf_loop(x.tolist(), r.tolist(), own=same.tolist()), atol=1e-15)
    np.testing.assert_array_equal(loo[:, [0, 2]], S.standardize_matrix(x, "ecdf", r)[:, [0, 2]])
    # without `same`, no system is in the reference: leave-one-out leaves nothing out
    np.testing.assert_array_equal(S.standardize_matrix(x, "ecdf", r, leave_one_out=True),
                                  S.standardize_matrix(x, "ecdf", r))
    # the systems themselves given as an external reference, with same = identity, equal the default
    ident = np.arange(4)
    np.testing.assert_array_equal(S.standardize_matrix(x, "ecdf", x.copy(), leave_one_out=True, same=ident),
                                  S.standardize_matrix(x, "ecdf", leave_one_out=True))
    for method in METHODS:
        np.testing.assert_allclose(S.standardize_matrix(x, method, x.copy()), S.standardize_matrix(x, method),
                                   rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("value", [0.0, 0.5, 0.25, 1.0])
@pytest.mark.parametrize("k", [2, 3, 7, 15])
def test_topics_without_spread(value, k):
    rng = np.random.default_rng(4)
    x = _matrix(rng, n=5, k=k)
    x[2] = value
    expected = {"zscore": 0.0, "zscore-cdf": 0.5, "std-linear": 0.5, "ecdf": 1.0}
    for method in METHODS:
        got = S.standardize_matrix(x, method)
        np.testing.assert_array_equal(got[2], expected[method])
        assert np.isfinite(got).all()
    np.testing.assert_array_equal(S.standardize_matrix(x, "ecdf", leave_one_out=True)[2], 1.0)


@pytest.mark.parametrize(("value", "k"), [(0.1, 7), (0.7, 3), (1 / 3, 15)])
def test_topics_without_spread_values_not_exact_in_binary(value, k):
    x = np.vstack([np.linspace(0, 1, k), np.full(k, value)])
    assert _z_loop(x.tolist(), x.tolist())[1].tolist() == [0.0] * k        # the exact reference
    np.testing.assert_array_equal(S.standardize_matrix(x, "zscore")[1], 0.0)


def test_flat_external_reference_warns_when_the_systems_differ():
    x = np.array([[0.1, 0.4, 0.4], [0.2, 0.3, 0.6]])
    r = np.array([[0.25, 0.25, 0.25, 0.25], [0.1, 0.2, 0.5, 0.6]])
    for method, flat in (("zscore", 0.0), ("zscore-cdf", 0.5), ("std-linear", 0.5)):
        with pytest.warns(IrscaleWarning, match="1 topic"):
            got = S.standardize_matrix(x, method, r)
        np.testing.assert_array_equal(got[0], flat)
        np.testing.assert_allclose(got[1], _reference_external(x, r, method)[1], rtol=1e-12)
    y = x.copy()
    y[0] = 0.3                                     # the systems agree too: nothing to say
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(S.standardize_matrix(y, "zscore", r)[0], 0.0)


def _reference_external(x, r, method):
    z = _z_loop(x.tolist(), r.tolist())
    return {"zscore": z, "zscore-cdf": stats.norm.cdf(z), "std-linear": 0.15 * z + 0.5}[method]


def test_flat_external_reference_not_exact_in_binary():
    x = np.array([[0.0, 0.1, 0.5], [0.1, 0.2, 0.3]])
    r = np.array([[0.1] * 7, [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]])
    with pytest.warns(IrscaleWarning):
        got = S.standardize_matrix(x, "zscore", r)
    np.testing.assert_array_equal(got[0], 0.0)


def test_matrix_errors():
    x = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]])
    calls = {
        "loo zscore": (lambda: S.standardize_matrix(x, "zscore", leave_one_out=True), "leave-one-out"),
        "loo zscore-cdf ref": (lambda: S.standardize_matrix(x, "zscore-cdf", x, leave_one_out=True, same=[0, 1, 2]),
                               "leave-one-out"),
        "loo std-linear": (lambda: S.standardize_matrix(x, "std-linear", leave_one_out=True), "leave-one-out"),
        "unknown": (lambda: S.standardize_matrix(x, "minmax"), "zscore, zscore-cdf, std-linear, ecdf"),
        "1-D": (lambda: S.standardize_matrix(x[0], "zscore"), "matrix"),
        "NaN": (lambda: S.standardize_matrix(np.where(x > 0.25, np.nan, x), "ecdf"), "finite"),
        "inf ref": (lambda: S.standardize_matrix(x, "ecdf", np.full((2, 3), np.inf)), "finite"),
        "ref topics": (lambda: S.standardize_matrix(x, "zscore", np.ones((3, 3))), "2 topics"),
        "one ref system": (lambda: S.standardize_matrix(x, "zscore", x[:, :1]), "at least 2"),
        "one system": (lambda: S.standardize_matrix(x[:, :1], "std-linear"), "at least 2"),
        "loo one system": (lambda: S.standardize_matrix(x[:, :1], "ecdf", leave_one_out=True), "no system"),
        "same shape": (lambda: S.standardize_matrix(x, "ecdf", x, leave_one_out=True, same=[0, 1]), "same"),
        "same range": (lambda: S.standardize_matrix(x, "ecdf", x, leave_one_out=True, same=[0, 1, 3]), "same"),
    }
    for name, (call, words) in calls.items():
        with pytest.raises(IrscaleError, match=words):
            call()
        assert name


# ------------------------------------------------------------------- properties


_grid = st.integers(0, 12).map(lambda v: v / 12)          # values like a measure's: 1/12 is not binary-exact


def _sorted_pairs(row, out):
    """(values, outputs) of one topic ordered by value."""
    order = np.argsort(row, kind="stable")
    return row[order], out[order]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.integers(2, 6).flatmap(
    lambda k: st.lists(st.lists(_grid, min_size=k, max_size=k), min_size=n, max_size=n))))
def test_strictly_increasing_on_observed_scores(rows):
    x = np.array(rows)
    for method, loo in [(m, False) for m in METHODS] + [("ecdf", True)]:
        out = S.standardize_matrix(x, method, leave_one_out=loo)
        for t in range(x.shape[0]):
            v, o = _sorted_pairs(x[t], out[t])
            up = np.diff(v) > 0
            assert (np.diff(o)[up] > 0).all(), (method, loo, x[t], out[t])
            assert (np.diff(o)[~up] == 0).all(), (method, loo, x[t], out[t])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3).flatmap(lambda n: st.tuples(
    st.lists(st.lists(_grid, min_size=5, max_size=5), min_size=n, max_size=n),
    st.integers(2, 5).flatmap(lambda r: st.lists(st.lists(_grid, min_size=r, max_size=r), min_size=n, max_size=n)))))
def test_non_decreasing_against_a_reference(data):
    x, r = np.array(data[0]), np.array(data[1])
    for method in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrscaleWarning)
            out = S.standardize_matrix(x, method, r)
        for t in range(x.shape[0]):
            v, o = _sorted_pairs(x[t], out[t])
            assert (np.diff(o) >= 0).all(), (method, x[t], r[t], out[t])
            assert (np.diff(o)[np.diff(v) == 0] == 0).all()
        if method == "ecdf":
            np.testing.assert_allclose(out, _ecdf_loop(x.tolist(), r.tolist()), atol=1e-15)


# ------------------------------------------------------------------ DataFrames


RUNS = [f"run{i}" for i in range(6)]
TOPICS = [401, 402, 403, 404, 405, 406, 407]
MEASURES = ["AP@8", "P@8"]


def _table(runs, seed, undefined=None):
    """A scores table like 'irscale transform' (long: one row per run, topic, measure),
    rows shuffled, integer topics; ``undefined`` (measure, topic): NaN for every run."""
    rng = np.random.default_rng(seed)
    rows = []
    for m, measure in enumerate(MEASURES):
        for t in TOPICS:
            base = rng.uniform(0.1, 0.6)
            for run in runs:
                raw = np.round(base + rng.uniform(0, 0.4), 3) if m == 0 else rng.integers(0, 9) / 8
                if undefined == (measure, t):
                    raw = np.nan
                rows.append({"run": run, "topic": t, "measure": measure, "n": 8, "raw": raw,
                             "scaled": np.nan if np.isnan(raw) else raw / 2, "rb_scale": "feasible"})
    df = pd.DataFrame(rows)
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def _wide(df, measure, column="raw"):
    """topics x runs of one measure, rows and columns in sorted order, by hand."""
    sub = df[df["measure"] == measure]
    topics = sorted({str(t) for t in sub["topic"]})
    runs = sorted(set(sub["run"]))
    cell = {(str(t), r): v for t, r, v in zip(sub["topic"], sub["run"], sub[column])}
    return topics, runs, np.array([[cell[(t, r)] for r in runs] for t in topics])


def _expected(df, method, ref=None, loo=False):
    """standardize_matrix measure by measure on hand-built matrices, back in df's rows."""
    out = pd.Series(np.nan, index=df.index)
    for measure in MEASURES:
        topics, runs, x = _wide(df, measure)
        keep = ~np.isnan(x).all(axis=1)
        r = same = None
        if ref is not None:
            rtopics, rruns, rx = _wide(ref, measure)
            r = rx[[rtopics.index(t) for t, k in zip(topics, keep) if k]]
            same = np.array([rruns.index(run) if run in rruns else -1 for run in runs])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IrscaleWarning)
            values = S.standardize_matrix(x[keep], method, r, loo and method == "ecdf", same)
        kept = [t for t, k in zip(topics, keep) if k]
        lookup = {(t, run): values[a, b] for a, t in enumerate(kept) for b, run in enumerate(runs)}
        for idx, row in df[df["measure"] == measure].iterrows():
            out[idx] = lookup.get((str(row["topic"]), row["run"]), np.nan)
    return out.to_numpy()


def test_standardize_equals_the_matrix_function_per_measure():
    df = _table(RUNS, seed=1, undefined=("AP@8", 404))
    out = S.standardize(df)
    assert list(out.columns) == list(df.columns) + ["zscore", "zscore_cdf", "std_linear", "ecdf"]
    pd.testing.assert_frame_equal(out[df.columns], df)                     # inputs untouched, same rows
    for method in METHODS:
        col = out[S.column_name(method)].to_numpy()
        np.testing.assert_allclose(col, _expected(df, method), rtol=1e-12, atol=1e-15, err_msg=method)
    nan_rows = df["raw"].isna()
    assert nan_rows.sum() == len(RUNS)
    assert out.loc[nan_rows, ["zscore", "zscore_cdf", "std_linear", "ecdf"]].isna().all().all()
    assert out.loc[~nan_rows, ["zscore", "zscore_cdf", "std_linear", "ecdf"]].notna().all().all()
    # the z-scores of a measure: pandas' own groupby formula on the long table
    ok = df[~nan_rows]
    g = ok.groupby(["measure", "topic"])["raw"]
    np.testing.assert_allclose(out.loc[~nan_rows, "zscore"], (ok["raw"] - g.transform("mean")) / g.transform("std"),
                               rtol=1e-12, atol=1e-14)
    # another column, a subset of methods, and leave-one-out
    only = S.standardize(df, ["ecdf"], column="scaled", leave_one_out=True)
    assert "zscore" not in only.columns
    half = df.assign(raw=df["scaled"])
    np.testing.assert_allclose(only["ecdf"], _expected(half, "ecdf", loo=True), atol=1e-15)
    assert S.standardize(df, "ecdf")["ecdf"].equals(out["ecdf"])


def test_standardize_against_a_reference_table():
    df = _table(RUNS[:3], seed=2, undefined=("P@8", 406))
    ref = _table(["run1", "other1", "other2", "other3", "run2"], seed=3)
    out = S.standardize(df, reference=ref, leave_one_out=True)
    for method in METHODS:
        np.testing.assert_allclose(out[S.column_name(method)], _expected(df, method, ref, loo=True),
                                   rtol=1e-12, atol=1e-15, err_msg=method)
    plain = S.standardize(df, "ecdf", reference=ref)
    np.testing.assert_allclose(plain["ecdf"], _expected(df, "ecdf", ref), atol=1e-15)
    # leave-one-out by run name: run0 is not in the reference, run1 and run2 are
    diff = ~np.isclose(out["ecdf"].to_numpy(), plain["ecdf"].to_numpy(), rtol=0, atol=0, equal_nan=True)
    assert not diff[(df["run"] == "run0").to_numpy()].any()
    assert diff[df["run"].isin(["run1", "run2"]).to_numpy()].any()
    assert out.loc[df["raw"].isna(), "ecdf"].isna().all()


def test_standardize_reference_missing_a_topic_names_it():
    df = _table(RUNS[:3], seed=4)
    ref = _table(["a", "b", "c"], seed=5)
    ref = ref[~((ref["measure"] == "P@8") & (ref["topic"] == 403))]
    with pytest.raises(IrscaleError, match=r"P@8.*403"):
        S.standardize(df, reference=ref)
    # the topic being undefined in the scores too: no reference needed there
    out = S.standardize(df.assign(raw=np.where((df["measure"] == "P@8") & (df["topic"] == 403), np.nan, df["raw"])),
                        "ecdf", reference=ref)
    assert out["ecdf"].isna().sum() == 3


def test_standardize_errors():
    df = _table(RUNS[:3], seed=6)
    with pytest.raises(IrscaleError, match="bogus") as info:
        S.standardize(df, ["zscore", "bogus"])
    for name in METHODS:
        assert name in str(info.value)
    with pytest.raises(IrscaleError, match="raw"):                 # 'raw' is a transform, not a standardisation
        S.standardize(df, ["raw"])
    with pytest.raises(IrscaleError):
        S.standardize(df.to_dict(), "zscore")
    with pytest.raises(IrscaleError, match="raw"):
        S.standardize(df.drop(columns="raw"))
    with pytest.raises(IrscaleError, match="every run"):           # one run lacks a score where others have one
        S.standardize(df.assign(raw=np.where((df["run"] == "run1") & (df["topic"] == 402), np.nan, df["raw"])))
    with pytest.raises(IrscaleError, match="several"):
        S.standardize(pd.concat([df, df.iloc[:1]]))
    with pytest.raises(IrscaleError, match="column"):
        S.standardize(df, reference=df.drop(columns="raw"))


def test_check_transforms_and_column_names():
    assert S.check_transforms(["zscore", "raw", "zscore", " ecdf "]) == ("zscore", "raw", "ecdf")
    assert S.check_transforms("unq, std-linear,,midrank") == ("unq", "std-linear", "midrank")
    assert S.check_transforms([]) == ()
    with pytest.raises(IrscaleError, match="nope") as info:
        S.check_transforms("raw,nope")
    assert all(t in str(info.value) for t in S.TRANSFORMS)
    with pytest.raises(IrscaleError, match="unq"):
        S.check_transforms(["unq"], S.STANDARDISATIONS)
    assert [S.column_name(t) for t in S.TRANSFORMS] == ["raw", "scaled", "midrank", "zscore", "zscore_cdf",
                                                         "std_linear", "ecdf"]
    assert set(S.TRANSFORMS) == set(S.DEPENDS_ON_SYSTEMS) == set(S.REFERENCES)
    assert [t for t in S.TRANSFORMS if S.DEPENDS_ON_SYSTEMS[t]] == list(METHODS)
    assert math.isclose(S.STD_LINEAR_A, 0.15) and math.isclose(S.STD_LINEAR_B, 0.5)
