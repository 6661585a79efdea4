"""Per-topic standardisations of scores: the transforms that put every topic on a common
footing by comparing a system with other systems, beside irscale's interval scales.

A *transform* maps a measure's per-topic score to another number. irscale's own
transforms, ``unq`` (the ``scaled`` column: rank of the value among the measure's
distinct values, mapped to [0, 1]) and ``midrank``, depend on the score alone: adding or
removing a system changes nobody else's numbers. The standardisations below depend on
the *reference set* of systems, by default the systems being compared themselves:

``zscore`` (Webber, Moffat and Zobel, "Score standardization for inter-collection
    comparison of retrieval systems", SIGIR 2008)
    ``z = (x - m_t) / s_t``, with ``m_t`` and ``s_t`` the mean and the standard deviation
    (``ddof=1``, as pandas' ``std``) of the reference systems' scores on topic t.
``zscore-cdf`` (the same paper)
    ``Phi(z)``, the standard normal CDF of the z-score, in (0, 1).
``std-linear`` (Sakai, "A simple and effective approach to score standardisation",
    ICTIR 2016)
    ``0.15 z + 0.5``; not clipped (values outside [0, 1] are rare: ``|z| > 3.33``).
``ecdf`` (Urbano, Lima and Hanjalic, "A new perspective on score standardization",
    SIGIR 2019)
    ``F_t(x) = #(reference scores on topic t <= x) / #(reference systems)``, the
    empirical CDF of the reference scores, in (0, 1] (in [0, 1] with leave-one-out).
    With ``leave_one_out`` a system is never standardised by its own score: on every
    topic its own column is left out of the reference (the column of the same run when
    the reference is another set of runs), as Urbano et al. standardise a system with
    the scores of the others.

A topic on which every reference system scores the same has no spread: its z-scores are
0 for every system (``zscore-cdf`` and ``std-linear`` 0.5), a warning says so when the
systems themselves differ there (a reference of other runs).

Every transform here is non-decreasing in the score on each topic. With the systems
themselves as reference it is strictly increasing on the scores that occur (two
different scores of a topic keep their order and stay different), so the sign test and
Friedman's test, which use only the order of the scores within each topic, give the
same decisions as on raw scores. Two exceptions: a reference of other runs can map
different scores to the same value (ECDF: two scores between the same reference
scores), and ``zscore-cdf`` rounds to exactly 1 in double precision beyond z = 8.3,
which two systems of one topic can both reach only with more than about 140 systems
(the squares of a topic's z-scores sum to k - 1). The analyses check the order on the
data (:func:`irscale.scales.analysis.transforms_compared.keeps_topic_order`).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from irscale.errors import IrscaleError, warn

#: Standardisations computed from the raw scores, in the order of the report.
STANDARDISATIONS = ("zscore", "zscore-cdf", "std-linear", "ecdf")
#: irscale's transforms, read from a scores table's columns (``scaled`` is unq).
SCALE_TRANSFORMS = ("raw", "unq", "midrank")
#: Every transform the analyses compare.
TRANSFORMS = SCALE_TRANSFORMS + STANDARDISATIONS
#: Transforms whose values depend on the scaling mode (``rb_scale``: the table used); the
#: others are computed from the raw scores, the same in every mode.
DEPENDS_ON_SCALING = ("unq", "midrank")
#: Whether a transform's value of a score depends on the set of systems it is computed with.
DEPENDS_ON_SYSTEMS = {"raw": False, "unq": False, "midrank": False,
                      "zscore": True, "zscore-cdf": True, "std-linear": True, "ecdf": True}
#: Where each transform comes from (the report cites it).
REFERENCES = {
    "raw": "the measure's own score",
    "unq": "rank among the measure's distinct values, (rank - 1) / (k - 1) (Ferrante et al.)",
    "midrank": "mid-rank of the value among all runs of length N, (midrank - 1) / (n_runs - 1)",
    "zscore": "Webber, Moffat and Zobel (SIGIR 2008): (x - mean) / sd over the reference systems per topic",
    "zscore-cdf": "Webber, Moffat and Zobel (SIGIR 2008): normal CDF of the z-score",
    "std-linear": "Sakai (ICTIR 2016): 0.15 z + 0.5",
    "ecdf": "Urbano, Lima and Hanjalic (SIGIR 2019): empirical CDF of the reference systems' scores per topic",
}
#: Sakai's constants of std-linear (A z + B).
STD_LINEAR_A, STD_LINEAR_B = 0.15, 0.5


def column_name(transform: str) -> str:
    """Column of a scores table holding ``transform`` (``unq`` is ``scaled``; dashes become
    underscores: ``zscore-cdf`` -> ``zscore_cdf``)."""
    return {"unq": "scaled"}.get(transform, transform.replace("-", "_"))


def check_transforms(names: Iterable[str], allowed: tuple[str, ...] = TRANSFORMS) -> tuple[str, ...]:
    """The transforms named, in order, duplicates dropped; an unknown name is an
    :class:`~irscale.errors.IrscaleError` listing the known ones."""
    if isinstance(names, str):
        names = [n for n in names.split(",")]
    elif not isinstance(names, Iterable):
        raise IrscaleError(f"transforms must be names (a list or a comma-separated string), got {names!r}")
    out = tuple(dict.fromkeys(str(n).strip() for n in names if str(n).strip()))
    unknown = [n for n in out if n not in allowed]
    if unknown:
        raise IrscaleError(f"unknown transform(s) {', '.join(unknown)}; known: {', '.join(allowed)}")
    return out


def _zscores(x: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z-scores of x against ref per row, rows without spread)."""
    mean = ref.mean(axis=1, keepdims=True)
    sd = ref.std(axis=1, ddof=1, keepdims=True) if ref.shape[1] > 1 else np.zeros_like(mean)
    # no spread: all reference scores equal (their float mean and sd need not be exact)
    flat = np.ptp(ref, axis=1) == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (x - mean) / sd
    z[flat] = 0.0
    return z, flat


def _ecdf(x: np.ndarray, ref: np.ndarray, own: np.ndarray | None) -> np.ndarray:
    """#(ref <= x) / R per row; ``own`` (same shape as x, NaN for none): a reference
    score left out of each system's count (leave-one-out)."""
    srt = np.sort(ref, axis=1)
    count = np.empty(x.shape)
    for t in range(x.shape[0]):
        count[t] = np.searchsorted(srt[t], x[t], side="right")
    size = np.full(x.shape, float(ref.shape[1]))
    if own is not None:
        has = ~np.isnan(own)
        count -= has & (own <= x)
        size -= has
    with np.errstate(divide="ignore", invalid="ignore"):
        return count / size


def standardize_matrix(scores: np.ndarray, method: str, reference: np.ndarray | None = None,
                       leave_one_out: bool = False, same: np.ndarray | None = None) -> np.ndarray:
    """Standardise a topics x systems matrix of scores, topic by topic (rows).

    Parameters
    ----------
    scores : array, shape (n_topics, n_systems)
        Raw per-topic scores, finite.
    method : str
        One of :data:`STANDARDISATIONS`.
    reference : array, shape (n_topics, n_reference), optional
        The reference systems' scores on the same topics (same row order); default:
        ``scores`` itself.
    leave_one_out : bool
        ``ecdf`` only: leave each system's own score out of its reference (column i of
        ``scores`` when ``reference`` is None, else column ``same[i]`` of ``reference``).
    same : array of int, shape (n_systems,), optional
        With a reference and ``leave_one_out``: the reference column of the same run as
        each system, -1 when the reference does not hold it.

    Returns
    -------
    numpy.ndarray, shape (n_topics, n_systems)
        The standardised scores.
    """
    try:
        x = np.asarray(scores, dtype=np.float64)
        ref = x if reference is None else np.asarray(reference, dtype=np.float64)
    except (TypeError, ValueError):
        raise IrscaleError("scores and reference must be numeric matrices") from None
    if x.ndim != 2:
        raise IrscaleError(f"scores must be a topics x systems matrix, got {x.ndim} dimension(s)")
    if method not in STANDARDISATIONS:
        raise IrscaleError(f"unknown standardisation {method!r}; known: {', '.join(STANDARDISATIONS)}")
    if ref.ndim != 2 or ref.shape[0] != x.shape[0]:
        raise IrscaleError(f"the reference must hold the same {x.shape[0]} topics as the scores, "
                           f"got shape {ref.shape}")
    if not (np.isfinite(x).all() and np.isfinite(ref).all()):
        raise IrscaleError("scores and reference must be finite (a measure undefined on a topic has no z-score)")
    if leave_one_out and method != "ecdf":
        raise IrscaleError(f"leave-one-out applies to ecdf (Urbano et al.), not {method}: a z-score against the "
                           "other systems is infinite on a topic where only the left-out system differs")
    if method == "ecdf":
        own = None
        if leave_one_out:
            if reference is None:
                own = x.copy()
            else:
                idx = np.full(x.shape[1], -1) if same is None else np.asarray(same, dtype=np.int64)
                if idx.shape != (x.shape[1],) or (idx >= ref.shape[1]).any() or (idx < -1).any():
                    raise IrscaleError("same must give, for each system, a reference column or -1")
                own = np.where(idx >= 0, ref[:, np.maximum(idx, 0)], np.nan)
        if ref.shape[1] - (1 if own is not None else 0) < 1:
            raise IrscaleError("the reference holds no system to compare with")
        return _ecdf(x, ref, own)
    if ref.shape[1] < 2:
        raise IrscaleError(f"{method} needs at least 2 reference systems (a standard deviation), got {ref.shape[1]}")
    z, flat = _zscores(x, ref)
    if reference is not None and flat.any() and (np.ptp(x[flat], axis=1) > 0).any():
        warn(f"{int(flat.sum())} topic(s) where every reference system scores the same: z-scores set to 0 "
                      "there, although the systems differ")
    if method == "zscore":
        return z
    if method == "zscore-cdf":
        from scipy import special  # 0.2 s to import: only when asked for

        return special.ndtr(z)
    return STD_LINEAR_A * z + STD_LINEAR_B


def reference_matrix(reference: pd.DataFrame, measure: str, topics: list, systems: list, column: str = "raw"
                     ) -> tuple[np.ndarray, np.ndarray]:
    """(reference scores, topics x reference runs in the order of ``topics``; for each of
    ``systems`` the reference column of the run of the same name, or -1) of one measure,
    from a scores table of reference runs (run and topic names compared as strings)."""
    missing = [c for c in ("run", "topic", "measure", column) if c not in reference.columns]
    if missing:
        raise IrscaleError(f"the reference scores have no column {', '.join(missing)}; give scores of "
                           "'irscale transform' (raw scores suffice)")
    rows = reference[reference["measure"].astype(str) == measure]
    if rows.empty:
        raise IrscaleError(f"the reference runs have no scores of {measure}")
    rows = rows.assign(run=rows["run"].astype(str), topic=rows["topic"].astype(str))
    r = rows.drop_duplicates(["run", "topic"]).pivot(index="topic", columns="run", values=column)
    wanted = [str(t) for t in topics]
    lacking = [t for t in wanted if t not in r.index]
    if lacking:
        raise IrscaleError(f"{measure}: the reference runs have no scores on topic(s) {', '.join(lacking[:5])}"
                           + (" ..." if len(lacking) > 5 else ""))
    r = r.loc[wanted]
    if r.isna().any().any():
        raise IrscaleError(f"{measure}: some reference run has no {column} score on a topic")
    names = list(r.columns)
    same = np.array([names.index(str(s)) if str(s) in names else -1 for s in systems], dtype=np.int64)
    return r.to_numpy(dtype=np.float64), same


def standardize(scores: pd.DataFrame, methods: str | Iterable[str] = STANDARDISATIONS,
                reference: pd.DataFrame | None = None, leave_one_out: bool = False,
                column: str = "raw") -> pd.DataFrame:
    """Add standardised scores to a scores table (one column per method, named by
    :func:`column_name`: ``zscore``, ``zscore_cdf``, ``std_linear``, ``ecdf``).

    Each measure (and cutoff, and ``rb_scale`` mode) is standardised topic by topic over
    the runs of ``scores`` (:func:`standardize_matrix`), or against the runs of
    ``reference`` (a scores table of other runs, matched by measure name and topic).
    Rows without a ``column`` value (a measure undefined on a topic) get NaN.
    ``leave_one_out`` applies to ``ecdf`` (each run left out of its own reference, by
    run name when the reference is another table); the z-scores always use the whole
    reference.

    >>> out = standardize(scores, ["zscore", "ecdf"])          # doctest: +SKIP
    >>> out.groupby("run").zscore.mean()                        # doctest: +SKIP
    """
    if not isinstance(scores, pd.DataFrame):
        raise IrscaleError(f"scores must be a DataFrame of 'irscale transform', got {type(scores).__name__}")
    methods = check_transforms(methods, STANDARDISATIONS)
    missing = [c for c in ("run", "topic", "measure", column) if c not in scores.columns]
    if missing:
        raise IrscaleError(f"scores have no column {', '.join(missing)}")
    if reference is not None and not isinstance(reference, pd.DataFrame):
        raise IrscaleError(f"reference must be a DataFrame of 'irscale transform', got {type(reference).__name__}")
    out = scores.copy()
    for method in methods:
        out[column_name(method)] = np.nan
    keys = [c for c in ("n", "rb_scale", "measure") if c in scores.columns]
    for _, rows in scores.groupby(keys, sort=False, dropna=False):
        measure = str(rows["measure"].iat[0])
        table = rows.assign(run=rows["run"].astype(str), topic=rows["topic"].astype(str))
        if table.duplicated(["run", "topic"]).any():
            raise IrscaleError(f"{measure}: a (run, topic) pair has several scores")
        wide = table.pivot(index="topic", columns="run", values=column)
        defined = wide.notna().all(axis=1)
        if not defined.any():
            continue
        if (wide[defined.values].isna()).any().any() or (wide.notna().any(axis=1) & ~defined).any():
            raise IrscaleError(f"{measure}: some run has no {column} score on a topic where others have one; "
                               "standardisation needs every run on every topic")
        x = wide[defined.values]
        ref_matrix = same = None
        if reference is not None:
            ref_matrix, same = reference_matrix(reference, measure, list(x.index), list(x.columns), column)
        for method in methods:
            with warnings.catch_warnings():
                warnings.simplefilter("default")
                values = standardize_matrix(x.to_numpy(dtype=np.float64), method, ref_matrix,
                                            leave_one_out and method == "ecdf", same)
            cell = pd.DataFrame(values, index=x.index, columns=x.columns).stack()
            cell.name = "value"
            idx = pd.MultiIndex.from_arrays([table["topic"], table["run"]])
            out.loc[rows.index, column_name(method)] = cell.reindex(idx).to_numpy()
    return out


__all__ = ["DEPENDS_ON_SCALING", "DEPENDS_ON_SYSTEMS", "REFERENCES", "SCALE_TRANSFORMS", "STANDARDISATIONS",
           "TRANSFORMS", "check_transforms", "column_name", "reference_matrix", "standardize", "standardize_matrix"]
