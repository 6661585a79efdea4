"""The lookups behind the HTTP API (:class:`LookupService`) on a snapshot of a store, the work
of every request estimated before it starts (:func:`cost`), and the views of GET /v1/table."""
from __future__ import annotations

import functools
import logging
import os
import shlex
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pydantic_core

import irscale
from irscale.errors import IrscaleWarning, MeasureError, StoreError, TableNotFoundError, ValueNotInScaleError
from irscale.scales.analysis import spacing
from irscale.scales.measures.user_names import names_of, read_stored
from irscale.scales.tables.layouts import kind_of_scale
from irscale.service import DEFAULT_MAX_ITEMS, DEFAULT_MAX_SECONDS
from irscale.service.models import RankQuery, RequestError, StoreInfo, TableModel, parse_request, runs_array

log = logging.getLogger("irscale.service")



def unit_cost(scale: irscale.Scale) -> float:
    """Estimated microseconds of one value, run or view rank of ``scale`` (measured on 2 cores)."""
    n, layout = scale.measure.n, getattr(scale.table, "layout", "")
    return max(2.0, 2 ** ((n - 26) / 2)) if layout == "oracle" else 2.0 + n / 50 * (layout == "closed")


def cost(scale: irscale.Scale, items: int = 0, points: int | None = None, listed: bool = False,
         windows: int | None = None) -> float:
    """Estimated seconds of one core to rank ``items`` values or runs of ``scale`` (``listed``:
    runs checked list by list), or to compute its view of ``points`` bins."""
    if points is None:
        return items * (unit_cost(scale) + listed * (3 + 0.7 * scale.measure.n)) * 1e-6
    plan, read = spacing.gap_plan(scale, windows)
    k, n, closed = int(scale.k), scale.measure.n, getattr(scale.table, "layout", "") == "closed"
    ranks = 2 * min(points, k) + (read / 20 if plan == "stream" else read)
    return (ranks * unit_cost(scale) + 2.5e-5 * k * n * n * closed) * 1e-6     # a closed form counts its runs


class LookupService:
    """The lookups on the snapshot of ``store`` (a path, or an open Store) taken here: at most ``max_items``
    values or runs and ``max_seconds`` of estimated work (:func:`cost`) per request; thread-safe."""

    def __init__(self, store: Any, max_items: int = DEFAULT_MAX_ITEMS, max_seconds: float = DEFAULT_MAX_SECONDS):
        self.store = store if isinstance(store, irscale.Store) else irscale.open_store(store)
        self.max_items, self.max_seconds = int(max_items), float(max_seconds)
        self.tables: dict[str, dict] = {}
        for info in self.store.tables():
            try:
                m = irscale.parse_measure(info.measure)
            except MeasureError as e:  # a family this irscale does not know
                log.warning("skipping table %s: %s", info.name, e)
                continue
            record = info.to_json() | {"names": names_of(m), "rb_dependent": m.rb_dependent}
            self.tables[info.name] = {key: record.get(key) for key in TableModel.model_fields}
        if not self.tables:
            raise StoreError(f"{self.store.path} holds no table to serve; build some with 'irscale build'")
        self.measures = {t["measure"] for t in self.tables.values()}
        store = {key: self.store.attrs.get(key) for key in StoreInfo.model_fields}
        self.tables_json = pydantic_core.to_json({"store": store, "tables": list(self.tables.values())})
        path = Path(self.store.path)        # never in an answer; a bare file name is no location (and may be a word)
        paths = [path.resolve()] + ([path] if os.sep in str(path) else [])
        secrets = {str(p) for p in paths} | {str(p.parent) + os.sep for p in paths}
        self._secrets = sorted(secrets - {os.sep}, key=len, reverse=True)
        self.scale = functools.lru_cache(maxsize=256)(self._open_scale)
        for t in self.tables.values():
            rb = tuple(t["rb_counts"]) if t["rb_counts"] else (1 if t["rb_dependent"] else None)
            scale = self.scale(t["measure"], rb)
        scale.values_of_ranks(np.array([1]))    # numba loads its registries (about 1 s) here, not in a request

    def _open_scale(self, measure: str, rb: Any) -> irscale.Scale:
        with warnings.catch_warnings():     # a name read as the store's table: the answer names the measure
            warnings.simplefilter("ignore", IrscaleWarning)
            m = read_stored(measure, self.measures, rb)
        if str(m) not in self.measures and m.closed_form() is None:    # closed forms need no table
            raise TableNotFoundError(f"this store has no table {m}; available tables: {', '.join(self.tables)}")
        try:
            return self.store.scale(m, rb)
        except TableNotFoundError as e:      # a table per recall-base vector: those the store has
            have = ", ".join("(" + ",".join(map(str, t["rb_counts"])) + ")" for t in self.tables.values()
                             if t["measure"] == str(m) and t["rb_counts"] is not None)
            raise TableNotFoundError(f"{e}" + (f" (it has {m} for {have})" if have else "")) from None

    def scrub(self, message: str) -> str:
        """``message`` without the store's location (its path becomes "this store"; in a
        command, STORE)."""
        for secret in self._secrets:
            message = message.replace(f"--out {shlex.quote(secret)}", "--out STORE")
            message = message.replace(secret, "" if secret.endswith(os.sep) else "this store")
        return message

    def _check_cost(self, scale: irscale.Scale, need: float, what: str, advice: str) -> None:
        if need > self.max_seconds:
            raise RequestError(f"{what} of {scale.measure} ({kind_of_scale(scale)}) would take about {need:.3g} s "
                               f"of work; this service does at most {self.max_seconds:g} s per request: {advice}")

    def rank(self, body: bytes) -> bytes:
        """The JSON answer (RankResponse) to a POST /v1/rank body."""
        query = parse_request(body, self.max_items)
        if (query.values is None) == (query.runs is None):
            raise RequestError("give exactly one of values (raw measure values) and runs (judged runs)")
        if query.runs is not None and (query.rtol is not None or query.atol is not None or query.decimals is not None):
            raise RequestError("rtol, atol and decimals apply to value lookups only; runs are ranked exactly")
        scale = self.scale(query.measure, tuple(query.rb) if isinstance(query.rb, list) else query.rb)
        items = query.values if query.values is not None else runs_array(
            query.runs, scale.measure, maybe_bools=b"true" in body or b"false" in body)
        each = cost(scale, 1, listed=query.runs is not None and isinstance(items, list))
        self._check_cost(scale, len(items) * each, f"{len(items)} {'values' if query.runs is None else 'runs'}",
                         f"send at most {int(self.max_seconds / each)} per request")
        ranks = _rank_values(scale, query) if query.values is not None else (
            scale.rank_runs(items) if len(items) else np.zeros(0, np.int64))
        answer = {"measure": str(scale.measure), "rb": scale.rb, "k": scale.k, "rank": ranks.tolist()}
        return pydantic_core.to_json(answer | {"scaled": scale.scaled(ranks).tolist(), "scale": kind_of_scale(scale)})

    @functools.lru_cache(maxsize=16)  # noqa: B019  (one service per process, the cache of its views)
    def view(self, measure: str, rb: Any, points: int, bins: int, gaps: str) -> bytes:
        """The JSON answer (TableViewResponse) to GET /v1/table, its work estimated first: the values at
        the first and last rank of ``min(points, K)`` bins of consecutive ranks, and the gap histogram."""
        scale = self.scale(measure, rb)
        # slow scales (rank oracles at large N) have their gaps sampled in fewer windows
        windows = max(1, min(spacing.GAP_WINDOWS, int(self.max_seconds * 5e5 / spacing.GAP_WINDOW / unit_cost(scale))))
        self._check_cost(scale, cost(scale, points=points, windows=windows), "the view",
                         "ask for fewer points, or rank values and runs with POST /v1/rank")
        k = int(scale.k)
        m = min(points, k)
        cuts = (np.arange(m + 1, dtype=np.int64) * k) // m      # bin i: ranks cuts[i] + 1 .. cuts[i + 1]
        lo, hi = cuts[:-1] + 1, cuts[1:]
        values = scale.values_of_ranks(np.concatenate([lo, hi]))
        return pydantic_core.to_json({
            "measure": str(scale.measure), "rb": scale.rb, "k": k, "n_runs": int(scale.n_runs), "points": m,
            "exact": m == k, "rank_lo": lo.tolist(), "rank_hi": hi.tolist(), "value_lo": values[:m].tolist(),
            "value_hi": values[m:].tolist(), "gaps": spacing.gap_histogram(scale, bins, gaps, windows)})


def _rank_values(scale: irscale.Scale, query: RankQuery) -> np.ndarray:
    """Ranks of the values of ``query`` (Scale.rank); ValueNotInScaleError names the first
    rejected index, with a hint to send ``decimals`` for a value within the range."""
    values, decimals = np.array(query.values, dtype=np.float64), query.decimals
    tolerances = {"atol": query.atol, "decimals": decimals} | ({} if query.rtol is None else {"rtol": query.rtol})
    ranks = scale.rank(values, errors="zero", **tolerances)
    bad = np.flatnonzero(ranks == 0)
    if not bad.size:
        return ranks
    i = int(bad[0])
    try:                                     # the first rejected value alone, for its message
        scale.rank(values[i:i + 1], **tolerances)
        raise ValueNotInScaleError(f"{values[i]!r} is not a value of {scale.measure}")
    except ValueNotInScaleError as e:
        lo, hi = scale.values_of_ranks(np.array([1, scale.k]))
        hint = ("; a value rounded as trec_eval prints it (0.3333) ranks with decimals: 4"
                if decimals is None and "ambiguous" not in str(e) and lo <= values[i] <= hi else "")
        raise ValueNotInScaleError(f"values[{i}]: {e}{hint}") from None
