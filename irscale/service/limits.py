"""The limits and defaults of the lookup service (docs/service.md, "Limits"): those of
:func:`~irscale.service.create_app`, :func:`~irscale.service.serve` and ``irscale serve``."""
from __future__ import annotations

#: Validation problems listed in one error answer; characters of anything the client sent
#: quoted in a message (a longer one is cut).
MAX_DETAILS = 20
MAX_QUOTED = 40
#: Fields of one request (six are known); items of an ``rb`` list (one count per grade).
MAX_FIELDS = 64
MAX_RB_ITEMS = 10

DEFAULT_MAX_ITEMS = 1_000_000
DEFAULT_MAX_BODY_BYTES = 64 * 2 ** 20
#: Estimated seconds of one core a request may ask for (:func:`irscale.service.lookups.cost`);
#: beyond, 422 naming the limit before any work starts.
DEFAULT_MAX_SECONDS = 5.0
#: Threads answering requests (the fixed pool), open connections of ``irscale serve``.
DEFAULT_THREADS = 2
DEFAULT_MAX_CONNECTIONS = 1000
#: Largest request head (request line and headers) in bytes; seconds an idle keep-alive
#: connection stays open.
MAX_HEAD_BYTES = 16 * 1024
KEEP_ALIVE_SECONDS = 5

#: GET /v1/table: its parameters, most and default bins of consecutive ranks (``points``)
#: and of the gap histogram (``bins``).
VIEW_PARAMETERS = ("measure", "rb", "points", "bins", "gaps")
MAX_VIEW_POINTS = 10_000
DEFAULT_VIEW_POINTS = 1000
MAX_GAP_BINS = 500
DEFAULT_GAP_BINS = 40
