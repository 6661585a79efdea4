"""The pydantic models of the lookup service: the request of POST /v1/rank, validated, and
every answer's shape, as the OpenAPI description (``/openapi.json``, ``/docs``) shows them."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class RankRequest(BaseModel):
    """Raw values of one measure, or judged runs, to map to unq ranks."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "values": [0.0, 0.25, 1.0]},
        {"measure": "DCG(b=2)@4", "runs": [[1, 0, 1, 0], [0, 0, 0, 1]]},
    ]})

    measure: str = Field(max_length=200, description="Measure name in ir_measures style, e.g. AP@30, RBP(p=0.8)@30, "
                                     "nDCG(b=2)@30 (answers use the canonical spelling).",
                         examples=["AP@30"])
    rb: int | list[int] | None = Field(
        None, description="Recall base of the topic (its number of relevant documents, >= 1): required for "
                          "RB-dependent measures, refused for the others. Graded RB-dependent measures "
                          "(gR, nDCG with gains) take the per-grade counts [c_1, ..., c_G] of the topic's "
                          "judged documents.",
        examples=[12, [3, 2]])
    values: list[FiniteFloat] | None = Field(
        None, fail_fast=True,  # one bad item is reported; a million of them would take seconds
        description="Raw measure values to rank (finite numbers). Give exactly one of values and runs.",
        examples=[[0.0, 0.25, 1.0]])
    runs: list[list[int]] | None = Field(
        None, description="Judged runs to rank exactly: each the list of N relevance degrees r_1..r_N, "
                          "r_1 the top document (measures over truncated rankings, e.g. RBPU: 0 to N "
                          "degrees). Give exactly one of values and runs.",
        examples=[[[1, 0, 1, 0]]])
    rtol: Tolerance | None = Field(None, description="Relative tolerance of value lookups (default 64 ulps).")
    atol: Tolerance | None = Field(None, description="Absolute tolerance of value lookups (default: the "
                                                     "table's certified float error bound).")
    decimals: int | None = Field(None, ge=0, le=17, description="Value lookups of rounded values: the values were "
                                 "rounded to this many decimals (trec_eval prints 4), and each ranks the nearest "
                                 "distinct value when it is the only one within half a unit of the last decimal "
                                 "(or atol, if larger).", examples=[4])


class _RankQuery(RankRequest):
    """:class:`RankRequest` as validated: runs are checked with numpy, not item by item
    (pydantic takes about 0.8 s per million runs of length 8)."""

    runs: list[Any] | None = None


class RankResponse(BaseModel):
    """Unq ranks of the request's values or runs, in request order."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "k": 1094, "rank": [1, 530, 1094], "scaled": [0.0, 0.48490393, 1.0],
         "scale": "exact: table"},
    ]})

    measure: str = Field(max_length=200, description="Canonical measure name.")
    rb: int | list[int] | None = Field(description="The recall base of the request (null for measures without "
                                                   "one; per-grade counts for graded RB-dependent measures).")
    k: int = Field(description="Number of distinct values K: ranks run from 1 to K.")
    rank: list[int] = Field(description="1-based unq rank of each value or run.")
    scaled: list[float] = Field(description="Ranks mapped to [0, 1]: (rank - 1) / (K - 1).")
    scale: str = Field(max_length=40, description="What answered: 'exact: table', 'exact: rank oracle' or "
                                                  "'exact: closed form' (P, R, F1, RR, Rprec at any N, no table "
                                                  "needed).")


class TableInfo(BaseModel):
    """Metadata of one table of the store."""

    measure: str = Field(max_length=200, description="Canonical measure name (use it in POST /v1/rank).")
    rb_counts: list[int] | None = Field(None, description="Graded RB-dependent measures: the per-grade counts "
                                                          "(c_1..c_G, each capped at N) this table serves; null "
                                                          "for the others.")
    family: str = Field(description="Measure family, e.g. AP.")
    params: dict[str, int | str | list[int]] = Field(
        description="Parameter values; probabilities as exact fractions ('4/5'), gains as lists.")
    n: int = Field(description="Cutoff N (run length).")
    rel: list[int] = Field(description="Relevance degrees REL.")
    rb_dependent: bool = Field(description="Whether lookups need the recall base rb.")
    runs: int = Field(description="Runs in the whole run space REL^N.")
    distinct: int = Field(description="Distinct values over the whole run space.")
    distinct_by_rb: list[int] | None = Field(description="Distinct values for rb = 1..N (rb > N as rb = N); "
                                                         "null for measures without recall base.")
    entries: int = Field(description="Stored entries (value, stratum) pairs.")
    implicit: bool = Field(description="Identity table that stores nothing (RBP with p <= 1/2).")
    tie_method: str = Field(description="How ties were decided, e.g. exact-integer, formal-log+mpmath60.")
    error_bound: float = Field(description="Proven float error bound of the computed values.")
    min_gap: float = Field(description="Smallest gap between neighbouring distinct values.")
    min_gap_exact: str = Field(description="The smallest gap: an exact fraction, or decimal digits when irrational.")
    redecided: int = Field(description="Neighbour pairs re-decided in high precision.")
    created: str = Field(description="Creation time of the table (ISO 8601).")
    build_seconds: float | None = Field(description="Build time in seconds (null when unknown).")
    irscale_version: str = Field(description="Version of irscale that built the table.")
    checksum: str = Field(description="sha256 of the table's datasets.")
    names: list[str] = Field(description="The names ir_measures and trec_eval give the measure (nDCG@10, "
                                         "ndcg_cut_10); empty for irscale's own measures.")


class StoreInfo(BaseModel):
    """The store file's format (never its location)."""

    format: str
    format_version: int
    created: str | None
    irscale_version: str | None = Field(description="Version of irscale that wrote the file.")


class TablesResponse(BaseModel):
    """Every table the service answers for."""

    store: StoreInfo
    tables: list[TableInfo]


class HealthResponse(BaseModel):
    """The service is up and answers for this many tables."""

    status: str = Field(examples=["ok"])
    tables: int = Field(description="Number of tables served.")


class ErrorDetail(BaseModel):
    """One request validation problem."""

    loc: str = Field(description="Where in the request, e.g. values[3] or runs[0][2].")
    message: str


class ErrorInfo(BaseModel):
    """What went wrong."""

    type: str = Field(description="Kind of error, e.g. MeasureError, RunError, RequestError.", examples=["RunError"])
    message: str = Field(description="What is wrong, naming the field or the index of the offending item.",
                         examples=["runs[2] has length 7; runs of AP@8 have length N = 8"])
    details: list[ErrorDetail] | None = Field(None, description="Request validation problems (at most 20).")


class ErrorResponse(BaseModel):
    """The shape of every error answer."""

    error: ErrorInfo


class GapHistogram(BaseModel):
    """Histogram of the gaps between consecutive distinct values (every gap, or those
    within windows of consecutive ranks for big scales: see :data:`VIEW_EXACT_VALUES`)."""

    scale: str = Field(description="'log' (bins equally wide in log10 of the gap) or 'linear' (from 0).")
    edges: list[float] = Field(description="Bin edges in value units (bins + 1 of them; empty without positive "
                                           "gaps).")
    counts: list[int] = Field(description="Positive gaps in each bin.")
    zero: int = Field(description="Gaps of 0: neighbouring distinct values float64 cannot tell apart.")
    used: int = Field(description="Gaps counted (zero ones included).")
    total: int = Field(description="Gaps of the scale: K - 1.")
    sampled: bool = Field(description="Whether only the gaps within evenly spaced windows of consecutive ranks "
                                      "were counted (tables too big to read whole for one answer).")
    min: float | None = Field(description="Smallest gap counted (null without gaps).")
    max: float | None = Field(description="Largest gap counted.")
    mean: float | None = Field(description="Mean gap counted.")
    median: float | None = Field(description="Median gap counted.")


class TableViewResponse(BaseModel):
    """A bounded view of one scale: its ranks 1..K cut into at most ``points`` bins of
    consecutive ranks, each with its smallest and largest value (the values at its first
    and last rank: values increase with rank), and a histogram of the gaps."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"measure": "P@4", "rb": None, "k": 5, "n_runs": 16, "points": 5, "exact": True,
         "rank_lo": [1, 2, 3, 4, 5], "rank_hi": [1, 2, 3, 4, 5], "value_lo": [0.0, 0.25, 0.5, 0.75, 1.0],
         "value_hi": [0.0, 0.25, 0.5, 0.75, 1.0],
         "gaps": {"scale": "log", "edges": [0.2228, 0.2805], "counts": [4], "zero": 0, "used": 4, "total": 4,
                  "sampled": False, "min": 0.25, "max": 0.25, "mean": 0.25, "median": 0.25}},
    ]})

    measure: str = Field(max_length=200, description="Canonical measure name.")
    rb: int | list[int] | None = Field(description="The recall base asked for (null for measures without one).")
    k: int = Field(description="Number of distinct values K.")
    n_runs: int = Field(description="Runs (feasible for rb) the scale covers.")
    points: int = Field(description="Bins of consecutive ranks: min(points asked, K).")
    exact: bool = Field(description="Every rank has a bin of its own (K <= points).")
    rank_lo: list[int] = Field(description="First rank of each bin.")
    rank_hi: list[int] = Field(description="Last rank of each bin.")
    value_lo: list[float] = Field(description="Smallest value of each bin (the value of rank_lo).")
    value_hi: list[float] = Field(description="Largest value of each bin (the value of rank_hi).")
    gaps: GapHistogram

