"""The limits and defaults of the lookup service (docs/service.md, "Limits").

A request's cost is bounded before its JSON is parsed (:mod:`.scan`), while its body
arrives (:mod:`.intake`), while it is worked on (:mod:`.workers`) and on its connection
(:mod:`.server`); the numbers are here, with the defaults of
:func:`~irscale.store.service.create_app`, :func:`~irscale.store.service.serve` and
``irscale serve``."""
from __future__ import annotations

from irscale.scales.measures.measure import MAX_N
from irscale.scales.measures.params import MAX_LEVELS

#: Scales (one per measure and recall base) kept ready between requests.
SCALE_CACHE_SIZE = 128
#: Validation problems listed in one error answer.
MAX_DETAILS = 20

# -- limits checked on the raw bytes of a request, before it is parsed ---------------------
#: Fields of one request (the known ones are six; unknown ones are refused, the first
#: :data:`MAX_DETAILS` of them named).
MAX_FIELDS = 64
#: Nesting: the request object (1), a list in a field (2), a run in ``runs`` (3).
MAX_DEPTH = 3
#: Items of an inner list (a run): the largest cutoff N any measure has.
MAX_RUN_LENGTH = MAX_N
#: Items of an ``rb`` list: one count per grade (at most G + 1 <= |REL|max).
MAX_RB_ITEMS = MAX_LEVELS
#: Items of a list in any other field (none takes one: pydantic then names the problem).
MAX_OTHER_ITEMS = 64
#: Characters of one number or literal (a float needs at most 25).
MAX_TOKEN = 400

#: Defaults of the service (see docs/service.md).
DEFAULT_MAX_ITEMS = 1_000_000
DEFAULT_MAX_BODY_BYTES = 64 * 2 ** 20
DEFAULT_WORKERS = 2
DEFAULT_TIME_BUDGET = 30.0
DEFAULT_MEMORY_BUDGET = 2 * 2 ** 30
DEFAULT_QUEUE_TIMEOUT = 30.0
DEFAULT_MAX_PENDING = 32
DEFAULT_BODY_TIMEOUT = 60.0
DEFAULT_IDLE_TIMEOUT = 10.0
DEFAULT_HEADER_TIMEOUT = 10.0
DEFAULT_MAX_CONNECTIONS = 10_000
#: Seconds a connection waiting for its request head is safe from being closed to make
#: room for a new one.
EVICTION_GRACE = 1.0
#: Largest request head (request line and headers) in bytes.
MAX_HEAD_BYTES = 16 * 1024
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE_SECONDS = 5

# -- the table view (GET /v1/table) -------------------------------------------------------
#: Most bins of consecutive ranks in one view (``points``), and the default.
MAX_VIEW_POINTS = 10_000
DEFAULT_VIEW_POINTS = 1000
#: Most bins of the gap histogram (``bins``), and the default.
MAX_GAP_BINS = 500
DEFAULT_GAP_BINS = 40
#: Views kept ready (their JSON) between requests.
VIEW_CACHE_SIZE = 16
#: The parameters of GET /v1/table.
VIEW_PARAMETERS = ("measure", "rb", "points", "bins", "gaps")
