"""The measure side of irscale, in the order of the pipeline:

* :mod:`irscale.scales.measures` - measures, their names, exact keys and split forms;
* :mod:`irscale.scales.tables` - tables of distinct values and the one scale interface;
* :mod:`irscale.scales.runs` - TREC files, judged runs and transforms of real runs;
* :mod:`irscale.scales.analysis` - agreement, significance, spacing, axioms, figures and
  the report.

(The store, between tables and runs, is :mod:`irscale.store`.)
"""
