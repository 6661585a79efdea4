"""Building bounded scales into a store: :func:`irscale.store.fill.build_bounded`."""
from irscale.store.fill import bounded_needs, build_bounded  # noqa: F401
