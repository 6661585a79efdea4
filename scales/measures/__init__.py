"""Measures: one module per family (:mod:`.families`, discovered), their parameters, names
and exact keys, and the kinds they belong to (key measures, exact values per topic,
truncated rankings). See :mod:`.measure`."""
