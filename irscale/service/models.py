"""The pydantic models of the lookup service: the request of POST /v1/rank, validated, and
every answer's shape, as the OpenAPI description (``/openapi.json``, ``/docs``) shows them."""
from __future__ import annotations

from typing import Annotated, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from irscale.store.format import TableInfo

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
RB = "The recall base (null for measures without one; per-grade counts for graded RB-dependent measures)."


class RankRequest(BaseModel):
    """Raw values of one measure, or judged runs, to map to unq ranks."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "values": [0.0, 0.25, 1.0]}, {"measure": "DCG(b=2)@4", "runs": [[1, 0, 1, 0]]}]})

    measure: str = Field(max_length=200, examples=["AP@30"], description=(
        "Measure name in ir_measures style, e.g. AP@30, RBP(p=0.8)@30 (answers use the canonical spelling)."))
    rb: int | list[int] | None = Field(None, examples=[12, [3, 2]], description=(
        "Recall base of the topic (>= 1): required for RB-dependent measures, refused for the others; graded "
        "RB-dependent measures (gR, nDCG with gains) take the per-grade counts [c_1, ..., c_G]."))
    values: list[FiniteFloat] | None = Field(  # fail_fast: one bad item reported (a million would take seconds)
        None, fail_fast=True, examples=[[0.0, 0.25, 1.0]],
        description="Raw measure values to rank (finite numbers). Give exactly one of values and runs.")
    runs: list[list[int]] | None = Field(None, examples=[[[1, 0, 1, 0]]], description=(
        "Judged runs to rank exactly: each the list of N relevance degrees r_1..r_N, r_1 the top document "
        "(measures over truncated rankings, e.g. RBPU: 0 to N degrees). Give exactly one of values and runs."))
    rtol: Tolerance | None = Field(None, description="Relative tolerance of value lookups (default 64 ulps).")
    atol: Tolerance | None = Field(None, description="Absolute tolerance of value lookups (default: the table's "
                                                     "certified float error bound).")
    decimals: int | None = Field(None, ge=0, le=17, examples=[4], description=(
        "The values were rounded to this many decimals (trec_eval prints 4): each ranks the nearest distinct value "
        "when it is the only one within half a unit of the last decimal (or atol, if larger)."))


class _RankQuery(RankRequest):
    """:class:`RankRequest` as validated: runs are read with numpy, not item by item
    (pydantic takes about 0.8 s per million runs of length 8)."""

    runs: list[Any] | None = None


class RankResponse(BaseModel):
    """Unq ranks of the request's values or runs, in request order."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "k": 1094, "rank": [1, 530, 1094], "scaled": [0.0, 0.48490393, 1.0],
         "scale": "exact: table"}]})

    measure: str = Field(description="Canonical measure name.")
    rb: int | list[int] | None = Field(description=RB)
    k: int = Field(description="Number of distinct values K: ranks run from 1 to K.")
    rank: list[int] = Field(description="1-based unq rank of each value or run.")
    scaled: list[float] = Field(description="Ranks mapped to [0, 1]: (rank - 1) / (K - 1).")
    scale: str = Field(description="What answered: 'exact: table', 'exact: rank oracle' or 'exact: closed form'.")


def _as_json(name: str, hint: Any) -> Any:
    """The type of a TableInfo field as ``to_json`` writes it (tuples as lists, integers past
    2^53 as text, non-finite floats as null)."""
    return int | str if hint is int and name.startswith("n_") else float | None if hint is float else hint


#: Metadata of one table of the store: the fields of ``irscale info --json``
#: (:meth:`irscale.store.format.TableInfo.to_json`, one object for every reader), with the
#: names ir_measures and trec_eval give the measure and whether lookups need the recall base.
TableModel = create_model(
    "TableModel", __doc__="Metadata of one table: the fields of irscale info --json, with names and rb_dependent.",
    **{name: (_as_json(name, hint), ...) for name, hint in get_type_hints(TableInfo).items() if name != "attrs"},
    names=(list[str], Field(description="The names ir_measures and trec_eval give the measure (ndcg_cut_10).")),
    rb_dependent=(bool, Field(description="Whether lookups need the recall base rb.")))


class StoreInfo(BaseModel):
    """The store's format (never its location)."""

    format: str
    format_version: int
    created: str | None
    generator_version: str | None = Field(description="Version of irscale that wrote the store.")


class TablesResponse(BaseModel):
    """Every table the service answers for."""

    store: StoreInfo
    tables: list[TableModel]


class HealthResponse(BaseModel):
    """The service is up and answers for this many tables."""

    status: str = Field(examples=["ok"])
    tables: int


class ErrorDetail(BaseModel):
    """One request validation problem."""

    loc: str = Field(description="Where in the request, e.g. values[3] or runs[0][2].")
    message: str


class ErrorInfo(BaseModel):
    """What went wrong."""

    type: str = Field(examples=["RunError"], description="Kind of error, e.g. MeasureError, RunError, RequestError.")
    message: str = Field(examples=["runs[2] has length 7; runs of AP@8 have length N = 8"],
                         description="What is wrong, naming the field or the index of the offending item.")
    details: list[ErrorDetail] | None = Field(None, description="Request validation problems (at most 20).")


class ErrorResponse(BaseModel):
    """The shape of every error answer."""

    error: ErrorInfo


class GapHistogram(BaseModel):
    """Histogram of the gaps between consecutive distinct values (every gap, or those within
    windows of consecutive ranks for big scales)."""

    scale: str = Field(description="'log' (bins equally wide in log10 of the gap) or 'linear' (from 0).")
    edges: list[float] = Field(description="Bin edges in value units (none without positive gaps).")
    counts: list[int] = Field(description="Positive gaps in each bin.")
    zero: int = Field(description="Gaps of 0: neighbouring distinct values float64 cannot tell apart.")
    used: int = Field(description="Gaps counted (zero ones included).")
    total: int = Field(description="Gaps of the scale: K - 1.")
    sampled: bool = Field(description="Whether only the gaps within windows of consecutive ranks were counted.")
    min: float | None
    max: float | None
    mean: float | None
    median: float | None


class TableViewResponse(BaseModel):
    """A bounded view of one scale: its ranks 1..K cut into at most ``points`` bins of
    consecutive ranks, each with its smallest and largest value, and a histogram of the gaps."""

    measure: str = Field(description="Canonical measure name.")
    rb: int | list[int] | None = Field(description=RB)
    k: int = Field(description="Number of distinct values K.")
    n_runs: int = Field(description="Runs (feasible for rb) the scale covers.")
    points: int = Field(description="Bins of consecutive ranks: min(points asked, K).")
    exact: bool = Field(description="Every rank has a bin of its own (K <= points).")
    rank_lo: list[int] = Field(description="First rank of each bin.")
    rank_hi: list[int] = Field(description="Last rank of each bin.")
    value_lo: list[float] = Field(description="Smallest value of each bin (the value of rank_lo).")
    value_hi: list[float] = Field(description="Largest value of each bin (the value of rank_hi).")
    gaps: GapHistogram
