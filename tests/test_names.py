"""ir_measures' and trec_eval's measure names: each maps to the irscale
measure with the same per-query values, checked against ir_measures (pytrec_eval, gdeval,
MS MARCO's script) and pytrec_eval on TREC-8 (binary) and TREC-COVID round 5 (levels
0..2, two -1 judgments), and how user entry points read names of the three vocabularies
without ever picking a meaning silently."""
import collections
import gzip
import shutil
import warnings

import pytest

import irscale
from irscale import IrscaleWarning, MeasureError, parse_measure
from irscale.cli import main
from irscale.scales.measures.aliases import from_ir_measures, from_trec_eval
from irscale.scales.measures.registry import families
from irscale.scales.measures.user_names import parse_user_measures

TREC8_RUNS = ["input.1", "input.AntHoc1", "input.CL99SD", "input.Flab8as"]
COVID_RUNS = ["r5.rf", "uab.base", "BioInfo-run1"]


# -- the mapping ------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,top_level,depth,canonical", [
    ("AP@10", None, None, "AP@10"), ("MAP@10", None, None, "AP@10"), ("AP(rel=1)@10", None, None, "AP@10"),
    ("AP", None, 30, "AP@30"), ("P@10", None, None, "P@10"), ("Precision@5", None, None, "P@5"),
    ("R@10", None, None, "R@10"), ("Recall@10", 2, None, "R@10"), ("RR@10", None, None, "RR@10"),
    ("MRR", None, 20, "RR@20"), ("RR(rel=2)@10", None, None, "RR(gains=(0,1,2),rel=2)@10"),
    ("RR(rel=3)@5", 2, None, "RR(gains=(0,1,2,3),rel=3)@5"), ("Rprec", None, 25, "Rprec@25"),
    ("nDCG@10", 1, None, "nDCG_trec@10"), ("nDCG@10", 2, None, "nDCG_trec(gains=(0,1,2))@10"),
    ("NDCG@20", 3, None, "nDCG_trec(gains=(0,1,2,3))@20"),
    ("nDCG(gains={2:5})@10", 2, None, "nDCG_trec(gains=(0,1,5))@10"),
    ("nDCG(gains={0:0,1:1,2:3})@10", 2, None, "nDCG_trec(gains=(0,1,3))@10"),
    ("nDCG(dcg='exp-log2')@20", 2, None, "nDCG_trec(gains=(0,1,3))@20"),
    ("nDCG(dcg='log2',judged_only=False)@10", 1, None, "nDCG_trec@10"),
    ("ERR@20", 1, None, "ERR(max_grade=4)@20"), ("ERR@20", 2, None, "ERR(gains=(0,1,2),max_grade=4)@20"),
    ("ERR@10", 4, None, "ERR(gains=(0,1,2,3,4))@10"),
    ("RBP@10", 1, None, "RBP(p=0.8)@10"), ("RBP(p=0.8)@10", 1, None, "RBP(p=0.8)@10"),
    ("RBP(p=0.85)@10", 1, None, "RBP(p=0.85)@10"), ("RBP(rel=1,p=0.8)@10", 3, None, "RBP(p=0.8)@10"),
    ("RBP(rel=2,p=0.8)@10", None, None, "RBP(gains=(0,0,1),p=0.8)@10"),
    ("RBP(rel=2)@10", 2, None, "RBP(gains=(0,0,1),p=0.8)@10"),
    ("RBP(rel=3,p=0.5)", 3, 20, "RBP(gains=(0,0,0,1),p=0.5)@20"),
])
def test_from_ir_measures(name, top_level, depth, canonical):
    m = from_ir_measures(name, top_level=top_level, depth=depth)
    assert str(m) == canonical and parse_measure(canonical) == m


def test_from_ir_measures_takes_ir_measures_objects():
    irm = pytest.importorskip("ir_measures")
    cases = [(irm.nDCG @ 10, 2, "nDCG_trec(gains=(0,1,2))@10"), (irm.AP @ 100, None, "AP@100"),
             (irm.RBP(p=0.8) @ 10, 1, "RBP(p=0.8)@10"), (irm.RBP(rel=2) @ 10, None, "RBP(gains=(0,0,1),p=0.8)@10"),
             (irm.ERR @ 20, 2, "ERR(gains=(0,1,2),max_grade=4)@20"), (irm.RR(rel=2) @ 10, None,
                                                                    "RR(gains=(0,1,2),rel=2)@10"),
             (irm.nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10, 2, "nDCG_trec(gains=(0,1,3))@10"),
             (irm.parse_measure("P@5"), None, "P@5")]
    for obj, top_level, canonical in cases:
        assert str(from_ir_measures(obj, top_level=top_level)) == canonical, obj


@pytest.mark.parametrize("name,top_level,depth,match", [
    ("nDCG@10", None, None, "top_level"), ("ERR@20", None, None, "top_level"),
    ("ERR@20", 5, None, "gdeval, which refuses relevance levels above 4"),
    ("nDCG(dcg='exp-log2')@10", 5, None, "refuses relevance levels above 4"),
    ("RBP@10", 2, None, "graded RBP"), ("RBP(p=0.8)@10", None, None, "top_level"),
    ("AP(rel=2)@10", None, None, "threshold of 2"), ("P(rel=2)@10", None, None, "-l 2"),
    ("R(rel=0)@10", None, None, "integer >= 1"), ("P(judged_only=True)@10", None, None, "judged_only"),
    ("AP", None, None, "depth"), ("Rprec", None, None, "depth"), ("ERR", 2, None, "needs a cutoff"),
    ("nDCG", 2, 1000, "ideal ranking of all"),
    ("Rprec@10", None, None, "takes no cutoff"), ("bpref", None, None, "no measure for ir_measures' 'bpref'"),
    ("nDCG(b=2)@10", None, None, "no parameter 'b'"), ("nDCG(dcg='log3')@10", 1, None, "dcg must be"),
    ("nDCG(gains={1:3,2:1})@10", 2, None, "non-decreasing"), ("AP@@10", None, None, "syntax"),
    ("AP@10", 0, None, "top_level"), ("AP@10", None, 0, "depth"),
])
def test_from_ir_measures_refuses(name, top_level, depth, match):
    with pytest.raises(MeasureError, match=match):
        from_ir_measures(name, top_level=top_level, depth=depth)


def test_unknown_names_list_what_irscale_reads():
    with pytest.raises(MeasureError) as e:
        from_ir_measures("Judged@10")
    assert all(n in str(e.value) for n in ("AP", "ERR", "nDCG", "P", "R", "RBP", "Rprec", "RR"))
    with pytest.raises(MeasureError) as e:
        from_trec_eval("bpref")
    assert all(n in str(e.value) for n in ("P_10", "map_cut_10", "ndcg_cut_10", "recall_10", "recip_rank"))


@pytest.mark.parametrize("name,top_level,depth,canonical", [
    ("P_10", None, None, "P@10"), ("P.10", None, None, "P@10"), ("map_cut_10", None, None, "AP@10"),
    ("map_cut.10", None, None, "AP@10"), ("map", None, 30, "AP@30"), ("recall_10", None, None, "R@10"),
    ("recall.5", None, None, "R@5"), ("ndcg_cut_10", 1, None, "nDCG_trec@10"),
    ("ndcg_cut.10", 2, None, "nDCG_trec(gains=(0,1,2))@10"),
    ("recip_rank", None, 20, "RR@20"), ("Rprec", None, 20, "Rprec@20"),
    ("rbp", 2, 20, "RBP(gains=(0,1,2),norm=topic,p=0.9)@20"),
    ("rbp_p=0.8", 2, 20, "RBP(gains=(0,1,2),norm=topic,p=0.8)@20"),
    ("rbp.p=0.8", 3, 20, "RBP(gains=(0,1,2,3),norm=topic,p=0.8)@20"), ("rbp.p=0.8", 1, 20, "RBP(p=0.8)@20"),
])
def test_from_trec_eval(name, top_level, depth, canonical):
    assert str(from_trec_eval(name, top_level=top_level, depth=depth)) == canonical


@pytest.mark.parametrize("name,match", [("P", "needs a cutoff"), ("P.5,10", "one cutoff"), ("P_avgjg_10", "no measure"),
                                        ("ndcg_cut_10", "top_level"), ("recip_rank", "depth"),
                                        ("rbp.p=0.8,2=1", "one parameter p"), ("map_cut_x", "no measure"),
                                        ("P@10", "no measure")])
def test_from_trec_eval_refuses(name, match):
    with pytest.raises(MeasureError, match=match):
        from_trec_eval(name, depth=None)


# -- names users type ---------------------------------------------------------------------------------
def _read(*args, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = [str(m) for m in parse_user_measures(*args, **kwargs)]
    return out, [str(w.message) for w in caught if issubclass(w.category, IrscaleWarning)]


def test_names_mean_what_ir_measures_and_trec_eval_mean_by_default():
    """The default vocabulary: ir_measures' and trec_eval's names as they mean them (the
    qrels' levels as gains, the runs' depth for names without a cutoff), irscale's own
    parametrised names as irscale's."""
    assert _read("nDCG@10,RR,map,P@5,AP@10,ndcg_cut_10,recip_rank,P_5", top_level=2, depth=1000) == (
        ["nDCG_trec(gains=(0,1,2))@10", "RR@1000", "AP@1000", "P@5", "AP@10"], [])
    assert _read("nDCG(b=2)@10,DCG(b=2)@10,RBP(p=0.8)@10,Twist@10", top_level=1) == (
        ["nDCG(b=2)@10", "DCG(b=2)@10", "RBP(p=0.8)@10", "Twist@10"], [])
    for cls in families().values():        # every family's canonical example: irscale's unless ir_measures has it
        for top_level in (None, 1, 2):
            if cls.example() == "ERR@10":
                continue
            try:
                out, warned = _read(cls.example(), top_level=top_level)
            except MeasureError as e:       # ir_measures' name, whose meaning needs the qrels' levels
                assert top_level is None and "top_level" in str(e), (cls.example(), e)
                continue
            assert out == [str(parse_measure(cls.example()))], (cls.example(), top_level, out)
            assert not warned or (cls.example() == "RBP(p=0.8)@10" and top_level == 2), (cls.example(), warned)


def test_irscale_vocabulary_reads_as_before_and_quietly_where_both_readings_agree():
    for cls in families().values():        # every family's canonical example, and with graded qrels
        for top_level in (None, 1, 2):
            out, warned = _read(cls.example(), names="irscale", top_level=top_level)
            assert out == [str(parse_measure(cls.example()))]
            assert not warned or cls.example() == "ERR@10", (cls.example(), warned)
    for top_level in (None, 1, 2):
        assert _read("AP@10,P@10,R@10,RR@10,RBP(p=0.8)@10", names="irscale", top_level=top_level) == (
            ["AP@10", "P@10", "R@10", "RR@10", "RBP(p=0.8)@10"], [])
    assert _read("AP@10,AP@10,map_cut_10,P_10,recall.10") == (["AP@10", "P@10", "R@10"], [])   # trec_eval's names


def test_err_reads_as_ir_measures_with_a_warning_naming_irscale_reading():
    out, warned = _read("ERR@20", top_level=2)
    assert out == ["ERR(gains=(0,1,2),max_grade=4)@20"] and len(warned) == 1
    assert "irscale:ERR@20" in warned[0] and "irm:ERR@20" in warned[0] and "ERR@20 (expected" in warned[0]
    assert _read("irscale:ERR@20", top_level=2) == (["ERR@20"], [])
    assert _read("irm:ERR@20", top_level=2) == (["ERR(gains=(0,1,2),max_grade=4)@20"], [])
    assert _read("ERR(gains=(0,1,2,3,4))@20", top_level=4) == (["ERR(gains=(0,1,2,3,4))@20"], [])  # the same
    with pytest.raises(MeasureError, match="top_level"):       # its meaning needs the qrels' levels
        parse_user_measures("ERR@20")


def test_err_in_irscale_vocabulary_reads_as_irscale_with_a_warning_naming_ir_measures_reading():
    out, warned = _read("ERR@20", names="irscale", top_level=2)
    assert out == ["ERR@20"] and len(warned) == 1
    assert "ERR(gains=(0,1,2),max_grade=4)@20" in warned[0] and "irm:ERR@20" in warned[0]
    assert "irscale:ERR@20" in warned[0]
    out, warned = _read("ERR@20", names="irscale")              # qrels unknown: the reading on binary qrels
    assert out == ["ERR@20"] and "ERR(max_grade=4)@20" in warned[0]


@pytest.mark.parametrize("name,irscale_says,ir_measures_says", [
    ("nDCG@10", "needs parameter b", "nDCG_trec(gains=(0,1,2))@10"),
    ("RBP(rel=2,p=0.8)@10", "no parameter 'rel'", "RBP(gains=(0,0,1),p=0.8)@10"),
    ("AP(rel=2)@10", "no parameter 'rel'", "threshold of 2"),
    ("AP", "needs a cutoff", "AP@30"),
])
def test_irscale_vocabulary_refuses_ir_measures_names_with_both_readings(name, irscale_says, ir_measures_says):
    with pytest.raises(MeasureError) as e:
        parse_user_measures(name, names="irscale", top_level=2, depth=30)
    text = str(e.value)
    assert "irscale:" in text and "ir_measures:" in text and irscale_says in text and ir_measures_says in text
    assert (f"irm:{name}" in text) == ("threshold" not in ir_measures_says)    # advised only where it reads


def test_names_ir_measures_and_prefixes():
    both = "nDCG@10,RBP(rel=2,p=0.8)@10,RR(rel=2)@10,P_10,nDCG(b=2)@10,DCG(b=2)@10,irscale:ERR@10,trec:ndcg_cut.5"
    for names in ("ir_measures", "trec_eval"):
        assert _read(both, names=names, top_level=2) == (
            ["nDCG_trec(gains=(0,1,2))@10", "RBP(gains=(0,0,1),p=0.8)@10", "RR(gains=(0,1,2),rel=2)@10", "P@10",
             "nDCG(b=2)@10", "DCG(b=2)@10", "ERR@10", "nDCG_trec(gains=(0,1,2))@5"], [])
    assert _read("irm:nDCG@10,P_10,ERR(max_grade=4)@10", names="trec_eval", top_level=1) == (
        ["nDCG_trec@10", "P@10", "ERR(max_grade=4)@10"], [])
    assert _read(["irm:AP@5", parse_measure("P@5")]) == (["AP@5", "P@5"], [])
    with pytest.raises(MeasureError, match="needs parameter b"):
        parse_user_measures("irscale:nDCG@10")
    with pytest.raises(MeasureError, match="graded RBP"):
        parse_user_measures("irm:RBP(p=0.8)@10", top_level=2)
    out, warned = _read("RBP(p=0.8)@10", top_level=2)      # ir_measures' graded RBP: irscale's, said
    assert out == ["RBP(p=0.8)@10"] and len(warned) == 1 and "graded RBP" in warned[0]
    with pytest.raises(MeasureError, match="names must be one of irscale, ir_measures, trec_eval"):
        parse_user_measures("P@10", names="pyterrier")
    with pytest.raises(MeasureError, match="unknown measure 'XYZ@10'"):
        parse_user_measures("XYZ@10")
    with pytest.raises(MeasureError, match="no measure given"):
        parse_user_measures(" , ")


def test_names_read_among_a_store_s_tables():
    """Lookups know no qrels: the levels of names that need them come from rb or from the
    tables the store has; names of the whole run need their cutoff; irscale's own table
    of a name ir_measures reads otherwise serves, with a warning."""
    from irscale.scales.measures.user_names import read_stored
    stored = ["AP@10", "nDCG_trec(gains=(0,1,2))@10", "P@5", "ERR@20", "RR@10"]
    assert str(read_stored("nDCG@10", stored, (3, 2))) == "nDCG_trec(gains=(0,1,2))@10"
    assert str(read_stored("nDCG@10", stored)) == "nDCG_trec(gains=(0,1,2))@10"      # the one the store has
    assert str(read_stored("nDCG@10", stored, 5)) == "nDCG_trec@10"                  # binary rb: binary qrels
    assert str(read_stored("ndcg_cut_10", stored, (3, 2))) == "nDCG_trec(gains=(0,1,2))@10"
    assert str(read_stored("map_cut_10", stored, 5)) == str(read_stored("AP@10", stored, 5)) == "AP@10"
    assert str(read_stored("P_5", stored)) == "P@5" and str(read_stored("irscale:ERR@20", stored)) == "ERR@20"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert str(read_stored("ERR@20", stored)) == "ERR@20"
    assert len(caught) == 1 and "gdeval" not in str(caught[0].message) and "which it lacks" in str(caught[0].message)
    with pytest.raises(MeasureError, match="RR@1000 for runs of 1000 documents; this store has RR@10"):
        read_stored("RR", stored)
    with pytest.raises(MeasureError, match="AP@1000"):
        read_stored("map", stored, 5)
    with pytest.raises(MeasureError, match="both"):
        read_stored("nDCG@10", ["nDCG_trec@10", "nDCG_trec(gains=(0,1,2))@10"])
    with pytest.raises(MeasureError, match="did you mean nDCG@10"):
        read_stored("nDGC@10", stored)


def test_names_other_tools_give_a_measure():
    from irscale.scales.measures.user_names import names_of, user_name
    assert names_of(parse_measure("nDCG_trec(gains=(0,1,2))@10")) == ["nDCG@10", "ndcg_cut_10"]
    assert names_of(parse_measure("AP@10")) == ["AP@10", "map_cut_10"]
    assert names_of(parse_measure("nDCG(b=2)@10")) == []
    assert user_name(parse_measure("ERR@20")) == "irscale:ERR@20" and user_name(parse_measure("P@5")) == "P@5"
    for m in ("ERR@20", "AP@10", "nDCG_trec(gains=(0,1,2))@10", "RBP(p=0.8)@10"):   # read back as themselves
        assert _read([user_name(parse_measure(m))], top_level=2)[0] == [m]


@pytest.mark.parametrize("typed,suggested", [("nDGC@10", "nDCG@10"), ("ndcg_cutt_10", "ndcg_cut_10"),
                                             ("recip_rnk", "recip_rank"), ("P5", "P@5"), ("ndcg10", "nDCG@10"),
                                             ("mapp", "map"), ("nDCG@", "nDCG@10")])
def test_misspelled_names_suggest_the_closest(typed, suggested):
    """(Names that differ from a measure's only by case are read: tests/test_name_reading.py.)"""
    with pytest.raises(MeasureError, match=f"did you mean {suggested}"):
        parse_user_measures(typed, top_level=2, depth=100)


def test_irscale_measures_lists_the_mapping(capsys):
    from irscale.cli import main
    try:
        main(["measures"])
    except SystemExit as e:
        assert e.code in (0, None)
    out = capsys.readouterr().out
    for row in ["nDCG@10", "nDCG_trec(gains=(0,1,..,T))@10", "ndcg_cut_10", "ERR(gains=(0,1,..,T),max_grade=4)@20",
                "RBP(gains=(0,0,1),p=0.8)@10", "map_cut_10", "recip_rank", "rbp_p=0.8", "norm=topic"]:
        assert row in out, row


# -- the same values as the tools ------------------------------------------------------------------------
def _data(shared_data, which):
    if which == "trec8":
        folder = shared_data / "trec8"
        qrels, runs, top = folder / "qrels.trec8.adhoc.txt", [folder / "runs" / f"{r}.gz" for r in TREC8_RUNS], 1
    else:
        folder = shared_data / "trec-covid5"
        qrels, runs, top = folder / "qrels" / "qrels.covid-round5.txt", [folder / "runs" / f"{r}.gz"
                                                                         for r in COVID_RUNS], 2
    if not qrels.is_file():
        pytest.skip(f"{which} data not found at {folder}")
    return qrels, runs, top


def _irscale(qrels, runs, measures):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        df = irscale.transform(str(qrels), [str(r) for r in runs], measures, raw_only=True)
    out = collections.defaultdict(dict)
    for r in df.itertuples():
        out[r.measure][r.run, str(r.topic)] = r.raw
    return out


def _read_run(path):
    rows = collections.defaultdict(list)
    with gzip.open(path, "rt") if str(path).endswith(".gz") else open(path) as f:
        for line in f:
            cols = line.split()
            rows[cols[0]].append((float(cols[4]), cols[2], cols[5]))
    return rows


def _write_run(rows, path, n=None, order=None):
    """A run file of ``rows`` ({topic: [(score, docno, tag)]}): each topic's top n in
    trec_eval's order (score, docno descending), or in ``order`` with scores rewritten to
    keep it (no ties)."""
    with open(path, "w") as out:
        for topic, docs in rows.items():
            ranked = sorted(docs, key=order) if order else sorted(docs, reverse=True)
            for i, (score, docno, tag) in enumerate(ranked[:n]):
                out.write(f"{topic} Q0 {docno} {i + 1} {-i if order else score!r} {tag}\n")
    return path


def _compare(ir_measures, qrels, runs, pairs, tol=1e-12):
    """Per (run, topic): irscale's value of each mapped name equals ir_measures' value of
    the name (within ``tol``: float sums in another order); returns the number of values
    compared."""
    ours = _irscale(qrels, runs, [m for _, m in pairs])
    qrel_list = list(ir_measures.read_trec_qrels(str(qrels)))
    compared = 0
    for path in runs:
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            text = f.read()
        tag = text.split(None, 6)[5]
        run = list(ir_measures.read_trec_run(text))
        measures = {ir_measures.parse_measure(name) if isinstance(name, str) else name: str(m) for name, m in pairs}
        # one measure per call: ir_measures' pytrec_eval provider puts an nDCG without gains
        # into whichever trec_eval invocation it made first (another relevance level, other
        # gains), so measures computed together can come out wrong (0.7019 for 0.8137)
        for measure in measures:
            for metric in ir_measures.iter_calc([measure], qrel_list, run):
                mine = ours[measures[metric.measure]][tag, metric.query_id]
                assert abs(mine - metric.value) <= tol, (tag, metric, mine)
                compared += 1
    return compared


@pytest.mark.parametrize("which", ["trec8", "covid"])
def test_mapped_names_equal_ir_measures_per_query(shared_data, which):
    ir_measures = pytest.importorskip("ir_measures")
    qrels, runs, top = _data(shared_data, which)
    names = ["AP@10", "P@10", "R@10", "nDCG@10", "nDCG@20", "RR@10", "P@20", "AP@5"]
    if which == "covid":
        names += ["RR(rel=2)@10", "nDCG(gains={0:0,1:1,2:5})@10"]
    pairs = [(name, from_ir_measures(name, top_level=top)) for name in names]
    assert _compare(ir_measures, qrels, runs, pairs) == 50 * len(runs) * len(names)
    if which == "covid" and shutil.which("perl"):                 # gdeval prints 5 decimals
        pairs = [("nDCG(dcg='exp-log2')@20", from_ir_measures("nDCG(dcg='exp-log2')@20", top_level=top))]
        assert _compare(ir_measures, qrels, runs, pairs, tol=5e-6 + 1e-12) == 50 * len(runs)


@pytest.mark.parametrize("which", ["trec8", "covid"])
def test_whole_ranking_names_equal_ir_measures_and_pytrec_eval_on_runs_of_depth(shared_data, tmp_path, which):
    """Names without a cutoff (ir_measures' AP, RR, Rprec; trec_eval's map, recip_rank,
    Rprec; and P_k, ...) read at depth = the runs' ranking length give the
    tools' values: runs cut at 30 documents, irscale at N = 30. (nDCG without a cutoff is
    refused: its ideal ranking is not cut.)"""
    ir_measures = pytest.importorskip("ir_measures")
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, runs, top = _data(shared_data, which)
    depth = 30
    cut = [_write_run(_read_run(r), tmp_path / f"{r.name}.top{depth}", depth) for r in runs[:2]]
    pairs = [(name, from_ir_measures(name, top_level=top, depth=depth)) for name in ["AP", "RR", "Rprec"]]
    assert _compare(ir_measures, qrels, cut, pairs) == 50 * len(cut) * 3
    trec_names = ["map", "recip_rank", "Rprec", "P_10", "P.5", "map_cut_10", "recall_10", "ndcg_cut.10"]
    mapped = {name: from_trec_eval(name, top_level=top, depth=depth) for name in trec_names}
    ours = _irscale(qrels, cut, list(mapped.values()))
    judged = collections.defaultdict(dict)
    for line in open(qrels):
        topic, _, docno, level = line.split()
        judged[topic][docno] = int(level)
    evaluator = pytrec_eval.RelevanceEvaluator(dict(judged), set(trec_names))
    for path in cut:
        rows = _read_run(path)
        tag = next(iter(rows.values()))[0][2]
        result = evaluator.evaluate({t: {d: s for s, d, _ in docs} for t, docs in rows.items()})
        for topic, values in result.items():
            if (tag, topic) not in ours[str(mapped["map"])]:
                continue                  # a topic without relevant documents (pytrec_eval scores it 0)
            for name in trec_names:
                printed = name.replace(".", "_")
                assert values[printed] == pytest.approx(ours[str(mapped[name])][tag, topic], abs=1e-12), (name, topic)


def test_ir_measures_rr_at_k_breaks_ties_by_ascending_docno(shared_data, tmp_path):
    """ir_measures computes RR@k with MS MARCO's script, which orders documents of equal
    score by ascending docno where trec_eval (and irscale, pytrec_eval, gdeval) take
    descending docno: on a TREC-8 run with tied scores RR@10 differs on some topics, and
    irscale's RR@10 of the run in MS MARCO's order equals ir_measures' everywhere."""
    ir_measures = pytest.importorskip("ir_measures")
    folder = shared_data / "trec8"
    src = folder / "runs" / "input.UB99SW.gz"
    if not src.is_file():
        pytest.skip(f"TREC-8 run not found at {src}")
    qrels = folder / "qrels.trec8.adhoc.txt"
    rows = _read_run(src)
    pairs = [("RR@10", parse_measure("RR@10"))]
    with pytest.raises(AssertionError):                # trec_eval's order: some topics differ
        _compare(ir_measures, qrels, [src], pairs)
    msmarco = _write_run(rows, tmp_path / "ub99sw.msmarco", order=lambda d: (-d[0], d[1]))
    assert _compare(ir_measures, qrels, [msmarco], pairs) == 50


def test_rbp_with_rel_equals_ir_measures_cwl_eval(shared_data, tmp_path):
    """ir_measures computes RBP(rel=r,p=x) (no cutoff) with cwl_eval: levels >= r are
    relevant, the whole ranking. Read at depth N it equals it on runs cut at N. (No
    ir_measures provider computes RBP at a cutoff; cwl_eval is an optional extra.)"""
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl", reason="cwl_eval (pip install cwl-eval) computes ir_measures' RBP")
    qrels, runs, top = _data(shared_data, "covid")
    depth = 20
    cut = [_write_run(_read_run(r), tmp_path / f"{r.name}.top{depth}", depth) for r in runs[:2]]
    names = ["RBP(rel=1,p=0.8)", "RBP(rel=2,p=0.8)", "RBP(rel=2,p=0.5)"]
    pairs = [(name, from_ir_measures(name, top_level=top, depth=depth)) for name in names]
    assert [str(m) for _, m in pairs] == ["RBP(p=0.8)@20", "RBP(gains=(0,0,1),p=0.8)@20",
                                          "RBP(gains=(0,0,1),p=0.5)@20"]
    assert _compare(ir_measures, qrels, cut, pairs) == 50 * len(cut) * len(names)


def test_build_reads_the_top_level_of_names_from_its_qrels(tmp_path, capsys):
    """irm:nDCG@5 takes its gains from the qrels' levels: build --qrels knows them."""
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 a 2\n1 0 b 1\n2 0 c 1\n")
    out = tmp_path / "t.h5"
    assert main(["build", "-q", "-m", "irm:nDCG@5", "--qrels", str(qrels), "--out", str(out)]) == 0
    assert {t["measure"] for t in irscale.open_store(out).tables()} == {"nDCG_trec(gains=(0,1,2))@5"}
    capsys.readouterr()
    # without qrels: read on binary qrels, saying so (per-grade counts given with --rb set the levels)
    assert main(["build", "-q", "-m", "irm:nDCG@5", "--out", str(tmp_path / "u.h5")]) == 0
    assert "read on binary qrels" in capsys.readouterr().err
    assert {t["measure"] for t in irscale.open_store(tmp_path / "u.h5").tables()} == {"nDCG_trec@5"}
    assert main(["build", "-q", "-m", "nDCG@5", "--rb", "(1,1)", "--out", str(tmp_path / "v.h5")]) == 0
    assert {t["measure"] for t in irscale.open_store(tmp_path / "v.h5").tables()} == {"nDCG_trec(gains=(0,1,2))@5"}


@pytest.mark.parametrize("text,needle,absent", [
    ("bpref", "unknown measure 'bpref'", "needs a cutoff"),
    ("P_abc", "unknown measure 'P_abc'", "needs a cutoff"),
    ("AP@100001", "between 1 and 100000", "two readings"),
])
def test_names_no_tool_has_get_one_plain_error(text, needle, absent):
    with pytest.raises(irscale.MeasureError) as e:
        parse_user_measures(text, top_level=1)
    assert needle in str(e.value) and absent not in str(e.value)
