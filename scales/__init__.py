"""Measures and the interval scales built from them."""
from irscale.scales.tables.build import build_tables, scale
from irscale.scales.tables.certificate import Certificate
from irscale.scales.measures.measure import MAX_N, Measure, Param
from irscale.scales.measures.parse import parse_measure, parse_measures
from irscale.scales.measures.registry import families
from irscale.scales.tables.scale import Scale, Table

__all__ = ["MAX_N", "Certificate", "Measure", "Param", "Scale", "Table", "build_tables", "families",
           "parse_measure", "parse_measures", "scale"]
