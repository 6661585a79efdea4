"""Measures and the interval scales built from them."""
from irscale.scales.build import build_tables, scale
from irscale.scales.certify import Certificate
from irscale.scales.measure import MAX_N, Measure, Param
from irscale.scales.parse import parse_measure, parse_measures
from irscale.scales.registry import families
from irscale.scales.scale import Scale, Table

__all__ = ["MAX_N", "Certificate", "Measure", "Param", "Scale", "Table", "build_tables", "families",
           "parse_measure", "parse_measures", "scale"]
