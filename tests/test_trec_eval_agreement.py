"""Raw scores of all 129 TREC-8 runs x 50 topics against trec_eval's own output.

trec_eval 10 (``-q -m all_trec``) printed P_30, recall_30, map_cut_30, ndcg_cut_30 and
recip_rank per topic, to 4 decimals, in ``../shared/data/trec8/trec_eval``. Skipped when
the shared data is absent. Needs no tables: the transform runs raw-only.
"""
import gzip
import warnings
from fractions import Fraction

from irscale import transform

TREC_EVAL = {"P_30": "P@30", "recall_30": "R@30", "map_cut_30": "AP@30", "ndcg_cut_30": "nDCG_trec@30",
             "recip_rank": "RR@30"}


def _trec_eval_values(folder):
    """(run id, topic, irscale measure) -> value printed by trec_eval."""
    out = {}
    for path in sorted(folder.glob("eval.*.gz")):
        run, rows = None, []
        with gzip.open(path, "rt") as f:
            for line in f:
                name, topic, value = line.split()
                if name == "runid":
                    run = value
                elif name in TREC_EVAL and topic != "all":
                    rows.append((TREC_EVAL[name], topic, value))
        assert run is not None, path
        out.update({(run, topic, m): value for m, topic, value in rows})
    return out


def _agrees(raw: float, printed: str) -> bool:
    """raw rounds to trec_eval's 4 printed decimals. When the exact value lies half-way
    between two 4-decimal numbers, trec_eval's float sum may round either way."""
    if f"{raw:.4f}" == printed:
        return True
    return abs(Fraction(raw) - Fraction(printed)) <= Fraction(1, 20000) + Fraction(1, 10 ** 12)


def test_raw_scores_equal_trec_eval(shared_data):
    trec8 = shared_data / "trec8"
    with warnings.catch_warnings():
        warnings.simplefilter("error")           # every run covers every topic: no warning expected
        scores = transform(trec8 / "qrels.trec8.adhoc.txt", trec8 / "runs", list(TREC_EVAL.values()), raw_only=True)
    assert scores["run"].nunique() == 129 and scores["topic"].nunique() == 50
    reference = _trec_eval_values(trec8 / "trec_eval")
    assert len(reference) == 129 * 50 * 5
    checked = {m: 0 for m in TREC_EVAL.values()}
    half_way = []
    for row in scores.itertuples():
        printed = reference[(row.run, row.topic, row.measure)]
        if row.measure == "RR@30" and row.raw == 0:
            # trec_eval's recip_rank is not cut: the first relevant document is beyond rank 30
            assert float(printed) <= 1 / 31 + 5e-5, (row, printed)
            continue
        assert _agrees(row.raw, printed), (row.run, row.topic, row.measure, row.raw, printed)
        if f"{row.raw:.4f}" != printed:
            half_way.append((row.run, row.topic, row.measure, row.raw, printed))
        checked[row.measure] += 1
    assert all(checked[m] == 129 * 50 for m in ("P@30", "R@30", "AP@30", "nDCG_trec@30")), checked
    assert checked["RR@30"] > 5000, checked
    # Ties at the 5th decimal are rare: rounding differences must stay exceptions.
    assert len(half_way) <= 5, half_way
