"""Reading TREC files: the fast (pyarrow, one separator) and general (pandas, any
whitespace) readers agree with a plain line split on every layout, including the layouts
that must leave the fast path (mixed separators, CR line ends, blank lines)."""
import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irscale.scales.runs import run_files as run_files_module
from irscale.scales.runs.run_files import read_run

TOKEN = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcxyz0123456789-_.#:/", min_size=1, max_size=6)


def _reference_rankings(lines, depth=None):
    """topic -> docnos, by score descending then docno descending, from str.split()."""
    by_topic = {}
    for line in lines:
        f = line.split()
        if f:
            by_topic.setdefault(f[0], []).append((float(f[4]), f[2]))
    return {t: [d for _, d in sorted(docs, reverse=True)][:depth] for t, docs in by_topic.items()}


@st.composite
def run_files(draw):
    topics = draw(st.lists(st.sampled_from(["401", "402", "7", "q-1"]), min_size=1, max_size=3, unique=True))
    lines = []
    for t in topics:
        docs = draw(st.lists(TOKEN, min_size=1, max_size=12, unique=True))
        for rank, d in enumerate(docs):
            score = draw(st.sampled_from(["1", "2.5", "-0.5", "1e3", "2.50", "0", "3"]))
            lines.append([t, "Q0", d, str(rank), score, "tagX"])
    draw(st.randoms()).shuffle(lines)
    sep = draw(st.sampled_from(["\t", " ", "  ", " \t", "\t\t"]))
    eol = draw(st.sampled_from(["\n", "\r\n", " \n", "\n\n"]))
    return lines, "".join(sep.join(f) + eol for f in lines)


@settings(max_examples=150, deadline=None)
@given(run_files(), st.sampled_from([None, 1, 3]), st.booleans())
def test_run_reading_matches_line_split(tmp_path_factory, sample, depth, gz):
    lines, text = sample
    path = tmp_path_factory.mktemp("runs") / ("r.gz" if gz else "r.txt")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    run = read_run(path, depth)
    assert run.name == "tagX"
    assert run.rankings(depth) == _reference_rankings([" ".join(f) for f in lines], depth)


def test_fast_and_general_readers_agree_on_trec8(shared_data, monkeypatch):
    files = sorted((shared_data / "trec8" / "runs").glob("input.*.gz"))[::16]
    fast = [read_run(f, 30) for f in files]
    monkeypatch.setattr(run_files_module, "delimited_table", lambda *a, **k: None)
    general = [read_run(f, 30) for f in files]
    for a, b in zip(fast, general):
        assert a.name == b.name and a.rankings() == b.rankings()
        assert np.array_equal(a.scores, b.scores)


def test_several_tags_warn(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("1 Q0 a 1 2 tagA\n1 Q0 b 2 1 tagB\n")
    with pytest.warns(UserWarning, match="several run tags"):
        run = read_run(path)
    assert run.name == "tagA"
