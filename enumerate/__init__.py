"""Run-space generation: chunked enumeration of REL^N, numba scoring kernels, parallel
workers and reduction to sorted distinct exact keys."""
from irscale.enumerate.generic import Distinct, enumerate_distinct
from irscale.enumerate.runspace import all_runs, chunks, space_size, validate_runs

__all__ = ["Distinct", "enumerate_distinct", "all_runs", "chunks", "space_size", "validate_runs"]
