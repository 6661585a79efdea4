"""Rough durations and sizes for messages (estimates, warnings before long work)."""
from __future__ import annotations


def duration(seconds: float) -> str:
    """A rough duration: ``"20 s"``, ``"4 min"``, ``"2.5 h"``, ``"12 days"``, ``"47,000 years"``."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    if seconds < 72 * 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds < 730 * 86400:
        return f"{round(seconds / 86400)} days"
    years = seconds / (365.25 * 86400)
    return f"{float(f'{years:.2g}'):,.0f} years" if years < 1e15 else f"{years:.1e} years"


def size(n_bytes: float) -> str:
    """A rough size in decimal units: ``"350 MB"``, ``"19 GB"``."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            v = n_bytes / scale
            return f"{v:.0f} {unit}" if v >= 10 else f"{v:.1f} {unit}"
    return f"{int(n_bytes)} B"
