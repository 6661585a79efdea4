"""One reading of the names users type, in every entry point: whatever their case where no
ambiguity arises (exact spellings first), suggestions that are whole names one can paste,
advice that fits every entry point, and messages of at most about 300 characters."""
import re
import warnings

import pytest

import irscale
from irscale import MeasureError
from irscale.cli import main
from irscale.scales.measures.registry import families
from irscale.scales.measures.user_names import parse_user_measures, read_stored

VOCABULARIES = ("ir_measures", "trec_eval", "irscale")
#: Qrels' top levels and runs' depths names are read with.
FACTS = [{"top_level": 1, "depth": 30}, {"top_level": 2, "depth": 1000}]
#: A store's tables, for lookups and the service.
STORED = ["AP@10", "nDCG_trec(gains=(0,1,2))@10", "nDCG_trec@10", "P@5", "ERR@20", "RR@10", "R@100",
          "RBP(p=0.8)@10"]
#: Messages stay under about this many characters.
MAX_MESSAGE = 300


def _outcome(text, names="ir_measures", **facts):
    """The canonical names ``text`` reads as, or its error's class and message."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return [str(m) for m in parse_user_measures(text, names, **facts)]
        except MeasureError as e:
            return type(e), str(e)


def _error(text, names="ir_measures", **facts) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(MeasureError) as e:
            parse_user_measures(text, names, **facts)
    return str(e.value)


def _suggested(message: str) -> list[str]:
    found = re.search(r"\(did you mean (.*?)\?\)", message)
    return found.group(1).split(" or ") if found else []


# -- case ---------------------------------------------------------------------------------------------
#: (typed, the spelling it differs from only by case)
CASES = [("ndcg@10", "nDCG@10"), ("Ndcg@10", "nDCG@10"), ("p@5", "P@5"), ("rr", "RR"), ("Map", "map"),
         ("p_5", "P_5"), ("NDCG_CUT_10", "ndcg_cut_10"), ("Ndcg_cut.5", "ndcg_cut.5"), ("recall@100", "Recall@100"),
         ("RECALL_100", "recall_100"), ("ap@10", "AP@10"), ("rbp(p=0.8)@10", "RBP(p=0.8)@10"), ("map@10", "MAP@10"),
         ("Map_Cut_10", "map_cut_10"), ("mrr", "MRR"), ("rprec", "Rprec"), ("RECIP_RANK", "recip_rank"),
         ("p.5", "P.5"), ("RBP_P=0.8", "rbp_p=0.8"), ("err@20", "ERR@20"), ("twist@10", "Twist@10"),
         ("dcg(b=2)@10", "DCG(b=2)@10"), ("gp@10", "gP@10"), ("ndcg_trec@10", "nDCG_trec@10"),
         ("rr(rel=2)@10", "RR(rel=2)@10"), ("precision@5", "Precision@5"), ("r@10", "R@10"),
         ("IRM:ndcg@10", "irm:nDCG@10"), ("Trec:p_5", "trec:P_5"), ("IRSCALE:err@20", "irscale:ERR@20")]


@pytest.mark.parametrize("typed,canonical", CASES)
def test_names_are_read_whatever_their_case(typed, canonical):
    for facts in FACTS:
        out = _outcome(typed, **facts)
        assert isinstance(out, list) and out == _outcome(canonical, **facts), (typed, facts, out)


@pytest.mark.parametrize("typed,canonical", CASES)
def test_every_vocabulary_reads_a_case_variant_as_its_spelling(typed, canonical):
    """Where the spelling reads (or fails) in a vocabulary, the variant does alike: the
    same measure, or the same error."""
    for names in VOCABULARIES:
        for facts in FACTS:
            mine, theirs = _outcome(typed, names, **facts), _outcome(canonical, names, **facts)
            if isinstance(theirs, list):
                assert mine == theirs, (typed, names, facts)
            else:
                assert isinstance(mine, tuple) and mine[0] is theirs[0], (typed, names, facts, mine)


def test_vocabularies_that_should_agree_read_a_name_alike():
    """trec_eval's vocabulary reads as the default; irscale's agrees with it on trec_eval's
    names, on irscale's own names and on names both tools mean alike, in any case."""
    every = [n for pair in CASES for n in pair] + ["Rbp", "RBP", "rbp", "ERR@20", "nDCG(b=2)@10", "bpref", "P5"]
    same = ["p_5", "P_5", "NDCG_CUT_10", "map", "Map", "recip_rank", "RECIP_RANK", "rbp_p=0.8", "ap@10", "AP@10",
            "p@5", "r@10", "rr@10", "twist@10", "dcg(b=2)@10", "gp@10", "ndcg_trec@10", "Map_Cut_10", "rprec",
            "Trec:p_5", "IRSCALE:ap@10"]
    for facts in FACTS + [{}]:
        for name in every:
            assert _outcome(name, "trec_eval", **facts) == _outcome(name, "ir_measures", **facts), (name, facts)
        for name in same:
            assert _outcome(name, "irscale", **facts) == _outcome(name, "ir_measures", **facts), (name, facts)


def test_exact_spellings_keep_their_meaning_and_case_variants_of_two_measures_are_refused():
    """trec_eval's rbp (p = 0.9, the levels as gains) and ir_measures' RBP (p = 0.8) differ
    only by case: each as spelled keeps its tool's meaning; Rbp names both, on any data."""
    assert _outcome("rbp", top_level=1, depth=30) == ["RBP(p=0.9)@30"]
    assert _outcome("RBP", top_level=1, depth=30) == ["RBP(p=0.8)@30"]
    for names in VOCABULARIES:
        for facts in FACTS + [{}]:
            message = _error("Rbp", names, **facts)
            assert "RBP (" in message and "rbp (" in message and len(message) <= MAX_MESSAGE, message
    # names that differ only by case and mean one measure are read (map, MAP: AP of the whole run)
    assert _outcome("Map", top_level=1, depth=30) == _outcome("map", top_level=1, depth=30) == ["AP@30"]
    # every family's name read in another case is the family's (no two differ only by case)
    lower = [name.lower() for name in families()]
    assert len(set(lower)) == len(lower)
    for cls in families().values():
        example = cls.example()
        if cls.name in ("ERR", "nDCG", "RBP", "RR", "P", "R", "AP", "Rprec"):     # ir_measures has these too
            continue
        typed = cls.name.lower() + example[len(cls.name):]
        assert _outcome(typed, names="irscale", top_level=2) == [str(irscale.parse_measure(example))], typed


def test_a_case_variant_lacking_a_fact_says_so_as_its_spelling_does():
    """Entry points complete names by the data (preflight asks for the runs' depth when a
    name needs it): a variant fails with the same MissingFactError."""
    from irscale.scales.measures.aliases import MissingFactError
    for typed, fact in (("rr", "depth"), ("Map", "depth"), ("ndcg@10", "top_level"), ("NDCG_CUT_10", "top_level")):
        with pytest.raises(MissingFactError) as e:
            parse_user_measures(typed)
        assert e.value.fact == fact and len(str(e.value)) <= MAX_MESSAGE


def test_lookups_and_the_service_read_names_whatever_their_case():
    """read_stored serves irscale lookup and the service's POST /v1/rank and GET /v1/table."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for typed, canonical, rb in [("ndcg@10", "nDCG@10", (3, 2)), ("NDCG_CUT_10", "ndcg_cut_10", 5),
                                     ("p_5", "P_5", None), ("p@5", "P@5", None), ("ap@10", "AP@10", 5),
                                     ("MAP_CUT_10", "map_cut_10", 5), ("recall@100", "R@100", None),
                                     ("rr@10", "RR@10", None), ("irm:err@20", "irm:ERR@20", None),
                                     ("rbp(p=0.8)@10", "RBP(p=0.8)@10", None)]:
            assert read_stored(typed, STORED, rb) == read_stored(canonical, STORED, rb), typed
        with pytest.raises(MeasureError, match="RR@1000 for runs of 1000 documents"):
            read_stored("rr", STORED)


def test_scaled_and_ir_measures_objects_read_as_documented():
    """docs/names.md: ir_measures' names and objects mean what they mean in ir_measures."""
    ir_measures = pytest.importorskip("ir_measures")
    facts = {"top_level": 2, "depth": 30}
    table = {"nDCG@10": "nDCG_trec(gains=(0,1,2))@10", "R@100": "R@100", "AP": "AP@30", "RR": "RR@30",
             "P@5": "P@5", "AP@10": "AP@10", "RR(rel=2)@10": "RR(gains=(0,1,2),rel=2)@10"}
    for text, canonical in table.items():
        obj = ir_measures.parse_measure(text)
        assert _outcome(text, **facts) == _outcome([obj], **facts) == _outcome(str(obj), **facts) == [canonical]
        assert _outcome(text.lower(), **facts) == [canonical]
        assert str(irscale.Scaled(text).irscale_measure(**facts)) == canonical
        assert str(irscale.Scaled(text.lower()).irscale_measure(**facts)) == canonical
    for rel_two in ("P(rel=2)@5", ir_measures.parse_measure("P(rel=2)@5")):
        message = _error([rel_two], **facts)
        assert "rel_level=2" in message and "--rel-level 2" in message and "write P@5" in message


# -- suggestions ---------------------------------------------------------------------------------------
TYPOS = ["P5", "p10", "ndcg10", "NDCG10", "mapp", "maap@10", "nDCG@", "P@", "RR@", "ERR@", "nDGC@10", "ndgc@10",
         "nDCG@ten", "recip_rnk", "ndcg_cutt_10", "ndcg_cut10", "map_cut10", "Pp", "RRR@10", "Recal@10", "recall10",
         "Rprec10", "F15", "precison@5", "ap10", "RBP(p=0.8)@", "AP@@10", "nDCG(b=2)", "Twsit@10", "bpref", "P_abc",
         "xyz@10", "ndcg_cut", "P.5,10"]


@pytest.mark.parametrize("names", VOCABULARIES)
def test_every_suggestion_is_a_whole_name_that_reads(names):
    suggested = 0
    for typo in TYPOS:
        message = _error(typo, names, top_level=2, depth=1000)
        assert len(message) <= MAX_MESSAGE, (typo, message)
        for name in _suggested(message):
            assert isinstance(_outcome(name, names, top_level=2, depth=1000), list), (typo, name, message)
            suggested += 1
    assert suggested >= 25


@pytest.mark.parametrize("typo,suggestion", [("P5", "P@5"), ("p10", "P@10"), ("ndcg10", "nDCG@10"), ("mapp", "map"),
                                             ("nDCG@", "nDCG@10"), ("P@", "P@10"), ("nDGC@10", "nDCG@10"),
                                             ("ndcg_cut10", "ndcg_cut_10"), ("recip_rnk", "recip_rank"),
                                             ("Rprec10", "Rprec@10"), ("nDCG@ten", "nDCG@10")])
def test_typos_suggest_the_name_meant(typo, suggestion):
    for facts in FACTS + [{}]:          # the data known or not (build knows no runs)
        assert suggestion in _suggested(_error(typo, **facts)), (typo, facts)


def test_lookup_suggestions_read_among_the_store_s_tables():
    for typo in TYPOS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(MeasureError) as e:
                read_stored(typo, STORED)
            message = str(e.value)
            assert len(message) <= MAX_MESSAGE, (typo, message)
            for name in _suggested(message):
                read_stored(name, STORED)
    with pytest.raises(MeasureError, match=r"did you mean P@5\?"):
        read_stored("P5", STORED)


def test_parse_measure_suggests_whole_canonical_names():
    for typed, suggestion in (("ap@10", "AP@10"), ("ndcg@10", "nDCG(b=2)@10"), ("rbp(p=0.9)@5", "RBP(p=0.9)@5")):
        with pytest.raises(MeasureError, match=re.escape(f"did you mean {suggestion}?")):
            irscale.parse_measure(typed)
    with pytest.raises(MeasureError, match=re.escape("e.g. P@10")):
        irscale.parse_measure("P")


# -- messages that fit every entry point ----------------------------------------------------------------
def test_messages_name_no_one_command_and_stay_short():
    """A name is read by transform, compare, build, lookup, the service and the Python
    functions alike: its messages give advice each of them can follow."""
    texts = ["P(rel=2)@5", "AP(rel=3)@10", "R(rel=2)@10", "map", "RR", "nDCG@10", "ERR@20", "ndcg_cut_10",
             "rbp_p=0.8", "AP@100001", "Rprec@10(", "nDCG(b=2)", "ERR", "P", "map_cut", "RR(rel=0)@10"] + TYPOS
    for text in texts:
        for names in VOCABULARIES:
            for facts in FACTS + [{}]:
                out = _outcome(text, names, **facts)
                if isinstance(out, list):
                    continue
                message = out[1]
                assert not re.search(r"\b(transform|compare|build|lookup|serve) --", message), message
                assert len(message) <= MAX_MESSAGE, (text, names, len(message), message)


def _trec_files(folder):
    (folder / "runs").mkdir()
    (folder / "qrels.txt").write_text("".join(f"{t} 0 D{d} {d % 3}\n" for t in (1, 2) for d in range(8)))
    for r in range(2):
        (folder / "runs" / f"run{r}.txt").write_text(
            "".join(f"{t} Q0 D{(d + r) % 8} {d + 1} {10 - d} run{r}\n" for t in (1, 2) for d in range(8)))


def test_compare_and_transform_give_one_message_for_a_threshold(tmp_path, capsys):
    _trec_files(tmp_path)
    base = ["--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "runs"), "-m", "P(rel=2)@5",
            "--store", str(tmp_path / "none.h5")]
    said = []
    for command in (["compare"], ["transform", "--out", str(tmp_path / "s.csv")]):
        capsys.readouterr()
        assert main(command + base) == 2
        said.append(capsys.readouterr().err.strip())
    assert said[0] == said[1] and "rel_level=2" in said[0] and "-l 2" in said[0], said
    for call in (irscale.compare, irscale.transform):
        with pytest.raises(MeasureError) as e:
            call(str(tmp_path / "qrels.txt"), str(tmp_path / "runs"), "P(rel=2)@5", store=str(tmp_path / "none.h5"))
        assert str(e.value) in said[0]


def test_the_name_typed_is_kept_for_display(tmp_path):
    from irscale.scales.runs.preflight import label, read_measures
    _trec_files(tmp_path)
    qrels = irscale.read_qrels(tmp_path / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ready, later, typed = read_measures("ndcg@10,p@5,Map", "ir_measures", qrels, None, depth=8)
    assert [str(m) for m in ready] == ["nDCG_trec(gains=(0,1,2))@10", "P@5", "AP@8"] and not later
    assert [label(m, typed) for m in ready] == ["ndcg@10 (nDCG_trec(gains=(0,1,2))@10)", "p@5 (P@5)", "Map (AP@8)"]
