"""Named sets of measures (``irscale build --preset NAME --depth N``)."""
from __future__ import annotations

from irscale.errors import MeasureError

#: The experimental set of the original paper (SPEC section 3), without cutoffs.
PAPER = ["P", "R", "AP", "RR", "RBP(p=0.3)", "RBP(p=0.5)", "RBP(p=0.8)",
         "DCG(b=2)", "DCG(b=10)", "nDCG(b=2)", "nDCG(b=10)"]

PRESETS = {"paper": PAPER}


def preset_measures(name: str, depth: int) -> list[str]:
    """Measure names of a preset at cutoff ``depth``."""
    if name not in PRESETS:
        raise MeasureError(f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}")
    return [f"{m}@{depth}" for m in PRESETS[name]]
