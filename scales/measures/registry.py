"""The one registry of measure families, used by parsing, enumeration, the store and docs."""
from __future__ import annotations

_FAMILIES: dict[str, type] = {}


def register(cls: type) -> type:
    """Class decorator: make a :class:`~irscale.scales.measures.measure.Measure` subclass known by
    its ``name``."""
    if cls.name in _FAMILIES:
        raise RuntimeError(f"measure family {cls.name} registered twice")
    _FAMILIES[cls.name] = cls
    return cls


def families() -> dict[str, type]:
    """All registered measure families by name (definitions are loaded on first use)."""
    import irscale.scales.measures.families  # noqa: F401  (registers the built-in measures)
    return dict(_FAMILIES)
