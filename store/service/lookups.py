"""The lookups behind the HTTP API (:class:`LookupService`): a store's tables opened once, and
the answers to POST /v1/rank and GET /v1/table as (HTTP status, JSON), never raising."""
from __future__ import annotations

import functools
import logging
import os
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pydantic_core

from irscale.errors import (
    IrscaleError,
    IrscaleWarning,
    MeasureError,
    StoreError,
    TableNotFoundError,
    ValueNotInScaleError,
)
from irscale.scales.measures.parse import parse_measure
from irscale.scales.measures.user_names import names_of, read_stored
from irscale.scales.tables.layouts import kind_of_scale
from irscale.scales.tables.scale import RTOL
from irscale.store.format import TableInfo
from irscale.store.reader import Store, open_store
from irscale.store.service.errors import RequestError, error_body, status_of
from irscale.store.service.limits import DEFAULT_MAX_ITEMS, SCALE_CACHE_SIZE, VIEW_CACHE_SIZE
from irscale.store.service.validation import parse_request, runs_array
from irscale.store.service.views import table_view

log = logging.getLogger("irscale.service")


def _table_info(meta: TableInfo) -> dict:
    measure = parse_measure(meta.measure)
    return {
        "measure": str(measure), "rb_counts": None if meta.rb_counts is None else list(meta.rb_counts),
        "family": measure.name, "params": meta.params, "n": measure.n, "rel": list(meta.rel),
        "rb_dependent": measure.rb_dependent, "runs": meta.n_runs, "distinct": meta.n_distinct,
        "distinct_by_rb": list(meta.distinct_by_rb) or None, "entries": meta.n_entries, "implicit": meta.implicit,
        "tie_method": meta.tie_method, "error_bound": meta.error_bound, "min_gap": meta.min_gap,
        "min_gap_exact": meta.min_gap_exact, "redecided": meta.redecided, "created": meta.created,
        "build_seconds": meta.build_seconds, "irscale_version": meta.generator_version, "checksum": meta.checksum,
        "names": names_of(measure),
    }


class LookupService:
    """The lookups behind the HTTP API, on a snapshot of a store's tables.

    Parameters
    ----------
    store : str, path or Store
        The table file (opened read-only) or an open store.
    max_items : int
        Most values or runs answered in one request.

    Every table is opened (memory-mapped) and its lookup structures prepared here, so
    requests never touch the file system (tables per recall-base vector excepted) and the
    first one is as fast as the others. Methods are thread-safe; scales and views are
    cached per (measure, rb).
    """

    def __init__(self, store: str | os.PathLike | Store, max_items: int = DEFAULT_MAX_ITEMS):
        self.store = store if isinstance(store, Store) else open_store(store)
        self.max_items = int(max_items)
        self.tables: dict[str, dict] = {}
        for meta in self.store.tables(screened=True):     # parsed in a child first: a damaged file cannot hang us
            try:
                info = _table_info(meta)
            except MeasureError as e:  # a family this irscale does not know
                log.warning("skipping table %s: %s", meta["measure"], e)
                continue
            self.tables[meta["name"]] = info
        self.measures = {info["measure"] for info in self.tables.values()}
        if not self.tables:
            raise StoreError(f"{self.store.path} holds no table to serve; build some with 'irscale build'")
        attrs = self.store.attrs
        self.store_info = {"format": attrs.get("format"), "format_version": attrs.get("format_version"),
                           "created": attrs.get("created"), "irscale_version": attrs.get("generator_version")}
        path = Path(self.store.path)
        #: what must never appear in an answer: the store's location (longest first)
        secrets = {str(path.resolve()), str(path.resolve().parent) + os.sep}
        if os.sep in str(path):     # a bare file name is no location (and may be a word of a message)
            secrets |= {str(path), str(path.parent) + os.sep}
        self._secrets = sorted(secrets - {os.sep}, key=len, reverse=True)
        self.scale = functools.lru_cache(maxsize=SCALE_CACHE_SIZE)(self._open_scale)
        self.view = functools.lru_cache(maxsize=VIEW_CACHE_SIZE)(
            lambda measure, rb, points, bins, gaps: table_view(self.scale(measure, rb), points, bins, gaps))
        for info in self.tables.values():
            rb = info["rb_counts"] if info["rb_counts"] is not None else (1 if info["rb_dependent"] else None)
            scale = self.scale(info["measure"], tuple(rb) if isinstance(rb, list) else rb)
        scale.values_of_ranks(np.array([1]))    # numba loads its registries (about 1 s) here, not in a request

    def _open_scale(self, measure: str, rb):
        with warnings.catch_warnings():     # a name read as the store's table: the answer names the measure
            warnings.simplefilter("ignore", IrscaleWarning)
            m = read_stored(measure, self.measures, rb)
        if str(m) not in self.measures and m.closed_form() is None:    # closed forms need no table
            raise TableNotFoundError(f"this store has no table {m}; available tables: {', '.join(self.tables)}")
        try:
            return self.store.scale(m, rb)
        except TableNotFoundError:      # a table per recall-base vector (the reader's message names the file)
            try:
                vec = "(" + ",".join(map(str, m.table_rb(m.check_rb(rb)))) + ")"
            except (IrscaleError, TypeError, ValueError):
                vec = str(rb)
            have = ", ".join("(" + ",".join(map(str, info["rb_counts"])) + ")" for info in self.tables.values()
                             if info["measure"] == str(m) and info["rb_counts"] is not None)
            raise TableNotFoundError(
                f"this store has no table {m} for the per-grade counts {vec}"
                + (f" (it has {m} for {have})" if have else "")
                + f"; create it with: irscale build --measures \"{m}\" --rb \"{vec}\" --out STORE") from None

    def scrub(self, message: str) -> str:
        """``message`` without the store's location (its path becomes "this store")."""
        for secret in self._secrets:
            message = message.replace(secret, "" if secret.endswith(os.sep) else "this store")
        return message

    def answer(self, body: bytes) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a POST /v1/rank body: the answer, or the error of a bad
        request, or a 500 error (logged) for a bug; never raises."""
        return self._guarded(lambda: self.rank_body(body), "POST /v1/rank", "the request", "split the batch")

    def answer_view(self, query: dict) -> tuple[int, bytes]:
        """(HTTP status, JSON) of a GET /v1/table whose parameters (``measure``, ``rb``,
        ``points``, ``bins``, ``gaps``), checked by its route, are ``query`` (as :meth:`answer`)."""
        rb = tuple(query["rb"]) if isinstance(query["rb"], list) else query["rb"]
        return self._guarded(lambda: self.view(query["measure"], rb, query["points"], query["bins"], query["gaps"]),
                             "GET /v1/table", "the view", "ask for fewer points")

    def _guarded(self, work: Callable[[], bytes], route: str, what: str, advice: str) -> tuple[int, bytes]:
        """(HTTP status, JSON) of ``work()``: 200 and its JSON, the error of a bad request,
        413 when it runs out of memory, or a 500 error (logged) for a bug; never raises."""
        try:
            return 200, work()
        except IrscaleError as e:
            return status_of(e), error_body(type(e).__name__, self.scrub(str(e)), getattr(e, "details", None))
        except MemoryError:
            return 413, error_body("PayloadTooLargeError", f"{what} needs more memory than this service has; {advice}")
        except Exception:
            log.exception(f"internal error answering {route}")
            return 500, error_body("InternalError", "internal server error (a bug in irscale)")

    def rank_body(self, body: bytes) -> bytes:
        """Answer a POST /v1/rank body (JSON bytes) with the JSON of a RankResponse;
        raises an IrscaleError for a bad request (see :meth:`answer`)."""
        query = parse_request(body, self.max_items)
        if (query.values is None) == (query.runs is None):
            raise RequestError("give exactly one of values (raw measure values) and runs (judged runs)")
        if query.runs is not None and (query.rtol is not None or query.atol is not None or query.decimals is not None):
            raise RequestError("rtol, atol and decimals apply to value lookups only; runs are ranked exactly")
        scale = self.scale(query.measure, tuple(query.rb) if isinstance(query.rb, list) else query.rb)
        if query.values is not None:
            ranks = self._rank_values(scale, np.array(query.values, dtype=np.float64), query.rtol, query.atol,
                                      query.decimals)
        else:
            runs = runs_array(query.runs, scale.measure, maybe_bools=b"true" in body or b"false" in body)
            ranks = scale.rank_runs(runs) if runs.shape[0] else np.zeros(0, np.int64)
        rb = list(scale.rb) if isinstance(scale.rb, tuple) else scale.rb
        return pydantic_core.to_json({"measure": str(scale.measure), "rb": rb, "k": scale.k,
                                      "rank": ranks.tolist(), "scaled": scale.scaled(ranks).tolist(),
                                      "scale": kind_of_scale(scale)})

    @staticmethod
    def _rank_values(scale, values: np.ndarray, rtol: float | None, atol: float | None,
                     decimals: int | None = None) -> np.ndarray:
        """Ranks of a batch of values (Scale.rank: a value beyond the ends of the scale by more
        than its tolerance is none of its values); ValueNotInScaleError names the first
        rejected index, with a hint to send ``decimals`` for a value within the range."""
        rtol = RTOL if rtol is None else rtol
        ranks = scale.rank(values, rtol=rtol, atol=atol, errors="zero", decimals=decimals)
        rejected = np.flatnonzero(ranks == 0)
        if rejected.size:
            i = int(rejected[0])
            try:
                scale.rank(values[i:i + 1], rtol=rtol, atol=atol, decimals=decimals)
            except ValueNotInScaleError as e:
                lo, hi = scale.values_of_ranks(np.array([1, scale.k]))
                hint = ("; a value rounded as trec_eval prints it (0.3333) ranks with decimals: 4"
                        if decimals is None and "ambiguous" not in str(e) and lo <= values[i] <= hi else "")
                raise ValueNotInScaleError(f"values[{i}]: {e}{hint}") from None
            raise ValueNotInScaleError(f"values[{i}]: {values[i]!r} is not a value of {scale.measure}")
        return ranks
