"""Runs built from arrays (the ``Run`` of scales/runs/run_files.py): documents put in
trec_eval's order (score descending, docno descending) whatever the order given, topics
kept together, and bad arrays refused with a RunError naming the problem. Runs read from
TREC files: tests/test_trec_files.py and tests/test_trec_file_edges.py."""
import numpy as np
import pytest

import irscale
from irscale.errors import RunError
from irscale.scales.runs.qrels import Qrels
from irscale.scales.runs.run_files import Run


def _ap_at_5(run: Run) -> float:
    qrels = Qrels({"1": {"d1": 1, "d2": 0, "d3": 0}})
    scores = irscale.transform(qrels, [run], "AP@5")
    return float(scores["raw"].iloc[0])


def test_run_from_unsorted_arrays_is_put_in_trec_eval_order():
    # d1 (relevant) scores lower than d2: trec_eval ranks d2 first, so AP@5 = 1/2, not 1
    unsorted = Run("r", np.array(["1", "1"]), np.array(["d1", "d2"]), np.array([1.0, 2.0]))
    assert unsorted.docnos.tolist() == ["d2", "d1"]
    assert _ap_at_5(unsorted) == 0.5
    # ties by docno descending, topics kept together
    r = Run("r", ["2", "1", "2", "1"], ["a", "a", "b", "b"], [1, 1, 1, 1])
    assert r.rankings() == {"2": ["b", "a"], "1": ["b", "a"]}
    # already in order: unchanged
    ordered = Run("r", ["1", "1"], ["d2", "d1"], [2.0, 1.0])
    assert ordered.docnos.tolist() == ["d2", "d1"] and _ap_at_5(ordered) == 0.5


@pytest.mark.parametrize("topics, docnos, scores, message", [
    (["1", "1"], ["a", "a"], [2.0, 1.0], "appears twice"),
    (["1", "1"], ["a", "b"], [1.0], "same length"),
    (["1", "1"], ["a", "b"], [1.0, float("nan")], "NaN"),
    (["1"], ["a"], ["high"], "numbers"),
])
def test_run_from_bad_arrays_is_refused(topics, docnos, scores, message):
    with pytest.raises(RunError, match=message):
        Run("r", topics, docnos, scores)
