"""The limits and defaults of the lookup service (docs/service.md, "Limits"), with the
defaults of :func:`~irscale.store.service.create_app`, :func:`~irscale.store.service.serve`
and ``irscale serve``."""
from __future__ import annotations

from irscale.scales.measures.measure import MAX_N as _MAX_N
from irscale.scales.measures.params import MAX_LEVELS as _MAX_LEVELS

#: Scales (one per measure and recall base) and views (their JSON) kept ready.
SCALE_CACHE_SIZE = 128
VIEW_CACHE_SIZE = 16
#: Validation problems listed in one error answer, and characters of a name or value
#: quoted in a message (a longer one is cut).
MAX_DETAILS = 20
MAX_QUOTED = 40
#: Fields of one request (six are known); items of a run (the largest cutoff), of an
#: ``rb`` list (one count per grade) and of a list in any other field.
MAX_FIELDS = 64
MAX_RUN_LENGTH = _MAX_N
MAX_RB_ITEMS = _MAX_LEVELS
MAX_OTHER_ITEMS = 64

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
#: Largest request head (request line and headers) in bytes; seconds an idle keep-alive
#: connection stays open.
MAX_HEAD_BYTES = 16 * 1024
KEEP_ALIVE_SECONDS = 5

#: GET /v1/table: its parameters, most and default bins of consecutive ranks
#: (``points``) and of the gap histogram (``bins``).
VIEW_PARAMETERS = ("measure", "rb", "points", "bins", "gaps")
MAX_VIEW_POINTS = 10_000
DEFAULT_VIEW_POINTS = 1000
MAX_GAP_BINS = 500
DEFAULT_GAP_BINS = 40

__all__ = [name for name in dir() if name.isupper() and not name.startswith("_")]
