"""How tables are built: :class:`BuildOptions` (what layouts read of them is the
:class:`~irscale.scales.tables.scale.BuildSettings` protocol)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from irscale.enumerate.fanout import Fanout
from irscale.scales.measures.keys import METHODS

#: The build limit of every entry point (seconds): scales estimated to take longer together
#: (tables built, bounded scales computed) are left out, their measures scored raw only,
#: with the command that makes them.
MAX_BUILD_SECONDS = 60.0

#: What ``layout`` takes: each measure's default (its rank oracle where it prefers one, else its
#: table; a table whenever an enumeration ``method`` is named), its table, or its rank oracle.
LAYOUT_CHOICES = ("auto", "table", "oracle")


@dataclasses.dataclass(frozen=True)
class BuildOptions:
    """How tables are built: where the work runs (``fanout``), the enumeration method of
    key tables (``"auto"``, ``"split"``, ``"generic"``: every run scored, the reference),
    progress bars, a ``workdir`` for resumable checkpoints (one subfolder per measure),
    the split enumerator's work-unit size (``bucket_items`` pairs per bucket), the generic
    enumerator's ``chunk_size``, and whether split tables are ``concatenate``-d in memory
    (else kept as parts that the store writes slice by slice). ``layout``: ``"auto"``,
    ``"table"`` or ``"oracle"`` (:data:`LAYOUT_CHOICES`)."""

    fanout: Fanout = Fanout()
    method: str = "auto"
    progress: bool = False
    workdir: Path | None = None
    bucket_items: int | None = None
    chunk_size: int | None = None
    concatenate: bool = True
    layout: str = "auto"

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")
        if self.layout not in LAYOUT_CHOICES:
            raise ValueError(f"layout must be one of {LAYOUT_CHOICES}")
