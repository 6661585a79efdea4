"""Formulas of measure families too large for their family module: relative positions,
CRP and Twist (:mod:`.relative_position`), exact values of the utilities and OIE
(:mod:`.utilities`)."""
