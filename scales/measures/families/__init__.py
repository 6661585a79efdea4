"""Measure families, one module each. Every module here is discovered by
:mod:`irscale.scales.measures.registry` (no import list to edit)."""
