"""The limits and defaults of the lookup service (docs/service.md, "Limits")."""
from __future__ import annotations

MAX_DETAILS = 20                    # validation problems listed in one error answer
MAX_QUOTED = 40                     # characters quoted of anything the client sent
MAX_FIELDS = 64                     # fields of one request (six are known)
MAX_RB_ITEMS = 10                   # items of an rb list (one count per grade)
DEFAULT_MAX_ITEMS = 1_000_000
DEFAULT_MAX_BODY_BYTES = 64 * 2 ** 20
DEFAULT_MAX_SECONDS = 5.0           # estimated seconds of one core per request (lookups.cost); beyond, 422
DEFAULT_THREADS = 2                 # the fixed pool of threads answering requests
DEFAULT_MAX_CONNECTIONS = 1000      # open connections of irscale serve
MAX_HEAD_BYTES = 16 * 1024          # request line and headers
KEEP_ALIVE_SECONDS = 5
#: GET /v1/table: its parameters, bins of consecutive ranks (points) and of the gap histogram (bins).
VIEW_PARAMETERS = ("measure", "rb", "points", "bins", "gaps")
MAX_VIEW_POINTS = 10_000
DEFAULT_VIEW_POINTS = 1000
MAX_GAP_BINS = 500
DEFAULT_GAP_BINS = 40
