"""The pydantic models of the lookup service: the request of POST /v1/rank and the shape of
every answer, as ``/openapi.json`` and ``/docs`` show them."""
from __future__ import annotations

from typing import Annotated, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from irscale.store.format import TableInfo

Finite = Annotated[float, Field(allow_inf_nan=False)]
Tolerance = Annotated[float, Field(ge=0, allow_inf_nan=False)]
RB = "The recall base (null for measures without one; per-grade counts for graded RB-dependent measures)."
ONE_OF = "Give exactly one of values and runs."


class RankRequest(BaseModel):
    """Raw values of one measure, or judged runs, to map to unq ranks."""

    model_config = ConfigDict(strict=True, extra="forbid", json_schema_extra={"examples": [
        {"measure": "AP@10", "rb": 5, "values": [0.0, 0.25, 1.0]}, {"measure": "DCG(b=2)@4", "runs": [[1, 0, 1, 0]]}]})

    measure: str = Field(max_length=200, examples=["AP@30"], description=(
        "Measure name in ir_measures style, e.g. AP@30, RBP(p=0.8)@30 (answers use the canonical spelling)."))
    rb: int | list[int] | None = Field(None, examples=[12, [3, 2]], description=(
        "Recall base of the topic (>= 1): required for RB-dependent measures, refused for the others; graded "
        "RB-dependent measures (gR, nDCG with gains) take the per-grade counts [c_1, ..., c_G]."))
    values: list[Finite] | None = Field(  # fail_fast: one bad item reported (a million would take seconds)
        None, fail_fast=True, examples=[[0.0, 0.25, 1.0]], description=f"Raw measure values to rank. {ONE_OF}")
    runs: list[list[int]] | None = Field(None, examples=[[[1, 0, 1, 0]]], description=(
        "Judged runs to rank exactly: each the list of N relevance degrees r_1..r_N, r_1 the top document "
        f"(measures over truncated rankings, e.g. RBPU: 0 to N degrees). {ONE_OF}"))
    rtol: Tolerance | None = Field(None, description="Relative tolerance of value lookups (default 64 ulps).")
    atol: Tolerance | None = Field(None, description="Absolute tolerance of value lookups (default: the table's "
                                                     "certified float error bound).")
    decimals: int | None = Field(None, ge=0, le=17, examples=[4], description=(
        "The values were rounded to this many decimals (trec_eval prints 4): each ranks the nearest distinct value "
        "when it is the only one within half a unit of the last decimal (or atol, if larger)."))


class RankQuery(RankRequest):
    """A RankRequest as validated: its runs are checked with numpy, not item by item."""

    runs: list[Any] | None = None


RankResponse = create_model("RankResponse", __doc__=(
    "Unq ranks of the request's values or runs, in request order: measure (canonical name), rb, k (K distinct "
    "values: ranks run from 1 to K), rank (1-based), scaled ((rank - 1) / (K - 1)) and scale ('exact: table', "
    "'exact: rank oracle' or 'exact: closed form')."),
    measure=(str, ...), rb=(int | list[int] | None, Field(description=RB)), k=(int, ...), rank=(list[int], ...),
    scaled=(list[float], ...), scale=(str, ...))


def _as_json(name: str, hint: Any) -> Any:
    """A TableInfo field's type as ``to_json`` writes it (integers past 2^53 as text, non-finite floats null)."""
    return int | str if hint is int and name.startswith("n_") else float | None if hint is float else hint


#: One table of GET /v1/tables: TableInfo's fields (``irscale info --json``), with names and rb_dependent.
TableModel = create_model(
    "TableModel", __doc__="Metadata of one table: the fields of irscale info --json, with names and rb_dependent.",
    **{name: (_as_json(name, hint), ...) for name, hint in get_type_hints(TableInfo).items() if name != "attrs"},
    names=(list[str], Field(description="The names ir_measures and trec_eval give the measure (ndcg_cut_10).")),
    rb_dependent=(bool, Field(description="Whether lookups need the recall base rb.")))
StoreInfo = create_model("StoreInfo", __doc__="The store's format (never its location).", format=(str, ...),
                         format_version=(int, ...), created=(str | None, ...), generator_version=(str | None, ...))
TablesResponse = create_model("TablesResponse", __doc__="Every table the service answers for.",
                              store=(StoreInfo, ...), tables=(list[TableModel], ...))
HealthResponse = create_model("HealthResponse", __doc__="The service is up and answers for this many tables.",
                              status=(str, Field(examples=["ok"])), tables=(int, ...))


class ErrorInfo(BaseModel):
    """What went wrong."""

    type: str = Field(examples=["RunError"], description="Kind of error, e.g. MeasureError, RunError, RequestError.")
    message: str = Field(examples=["runs[2] has length 7; runs of AP@8 have length N = 8"],
                         description="What is wrong, naming the field or the index of the offending item.")
    details: list[dict[str, str]] | None = Field(None, description=(
        "Request validation problems (at most 20): where (loc, e.g. values[3] or runs[0][2]) and the message."))


ErrorResponse = create_model("ErrorResponse", __doc__="The shape of every error answer.", error=(ErrorInfo, ...))
GapHistogram = create_model(
    "GapHistogram", __doc__=(
        "Histogram of the gaps between consecutive distinct values (every gap, or those within windows of "
        "consecutive ranks for big scales: sampled): scale ('log', bins equally wide in log10 of the gap, or "
        "'linear' from 0), edges (in value units; none without positive gaps), counts (positive gaps per bin), "
        "zero (gaps of 0: values float64 cannot tell apart), used (gaps counted), total (K - 1), and the min, "
        "max, mean and median of the gaps counted."),
    scale=(str, ...), edges=(list[float], ...), counts=(list[int], ...), zero=(int, ...), used=(int, ...),
    total=(int, ...), sampled=(bool, ...), **dict.fromkeys(("min", "max", "mean", "median"), (float | None, ...)))
TableViewResponse = create_model(
    "TableViewResponse", __doc__=(
        "A bounded view of one scale (K distinct values of n_runs runs): its ranks 1..K cut into points = min(points "
        "asked, K) bins of consecutive ranks (exact: one bin per rank), each with its first and last rank (rank_lo, "
        "rank_hi) and their values (value_lo, value_hi), and a histogram of the gaps."),
    measure=(str, ...), rb=(int | list[int] | None, Field(description=RB)), k=(int, ...), n_runs=(int, ...),
    points=(int, ...), exact=(bool, ...), rank_lo=(list[int], ...), rank_hi=(list[int], ...),
    value_lo=(list[float], ...), value_hi=(list[float], ...), gaps=(GapHistogram, ...))
