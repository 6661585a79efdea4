"""Progress bars of long work (enumerations, table builds, streams, reading runs).

A bar shows only once its work has run for :data:`BAR_DELAY` seconds, so that the many
quick tables of a build, and small inputs, print nothing (in a terminal a finished bar is
erased anyway; in a log or a notebook every bar would stay as a line).
"""
from __future__ import annotations

from tqdm.auto import tqdm

#: Seconds a bar waits before it first shows.
BAR_DELAY = 0.5


def progress_bar(**options: object) -> tqdm:
    """A tqdm bar (``tqdm.auto``: a widget in notebooks) that shows after
    :data:`BAR_DELAY` seconds; ``options`` as tqdm takes them."""
    options.setdefault("delay", BAR_DELAY)
    return tqdm(**options)
