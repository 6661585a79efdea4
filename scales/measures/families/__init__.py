"""Built-in measure definitions, one module per family (importing registers them)."""
from irscale.scales.measures.families import (  # noqa: F401
    precision, recall, f1, average_precision, reciprocal_rank, rbp, dcg, ndcg, ndcg_trec, graded_precision, graded_recall, err, twist, utility,
)
