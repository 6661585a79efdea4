"""The run space and its enumeration: run ids (:mod:`.runspace`, :mod:`.truncated`), the
split-form contract (:mod:`.splitform`), multi-word integers (:mod:`.words`), scoring
jobs (:mod:`.jobs`), numba kernels (loaded on first use, :mod:`.lazy`), the generic and
split enumerators and their fan-out to joblib or dask workers (:mod:`.fanout`).

Nothing here imports the measure side: a measure hands the enumerators a
:class:`~irscale.enumerate.jobs.ScoringJob` or a
:class:`~irscale.enumerate.splitform.SplitForm`.
"""
