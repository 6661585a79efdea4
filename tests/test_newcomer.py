"""A newcomer's first board on TREC RAG 2024 (qrels of levels 0-3, one run): the README's
quick-start command as written, with RAG 2024's qrels and run as ``qrels.txt`` and
``runs/`` and the measures ``nDCG@20,nDCG@10,RR,map``, from nothing built (the default
store a new folder). It exits 0 and shows every measure in the order typed: nDCG@20 and
map raw only (their scales would take days, or do not exist), with the reason and, for
nDCG@20, the command that builds its scale; nDCG@10 and RR scaled.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_readme import marked

MEASURES = "nDCG@20,nDCG@10,RR,map"


@pytest.mark.slow      # about 15 s: nDCG@10's graded tables of the qrels' count vectors are built
def test_the_quick_start_on_rag24_shows_every_measure(shared_data, tmp_path):
    rag = shared_data / "rag24"
    if not rag.is_dir():
        pytest.skip(f"RAG 2024 not found at {rag}")
    (tmp_path / "qrels.txt").symlink_to(rag / "qrels.rag24.txt")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "run.rag24.gz").symlink_to(rag / "run.rag24.gz")
    command = re.sub(r'-m "[^"]+"', f'-m "{MEASURES}"', marked("quick-start").strip())
    assert command.startswith("irscale compare ")
    bin_dir = Path(sys.executable).parent
    env = dict(os.environ, IRSCALE_STORE=str(tmp_path / "tables"),
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    titles = [line for line in done.stdout.splitlines() if " · " in line and "topics" in line]
    assert [t.split()[0] for t in titles] == MEASURES.split(","), titles
    assert not re.search(r"^NO SCALE for nDCG@20", done.stdout, flags=re.M), done.stdout   # graded oracles
    assert re.search(r"^NO SCALE for map: ", done.stdout, flags=re.M)
    assert "raw = trec_eval -c" in done.stdout
    out = re.search(r"-o (\S+)", command).group(1)
    written = (tmp_path / out).read_text()
    assert all(f"## {m}" in written for m in MEASURES.split(","))
    said = [line for line in done.stderr.splitlines() if line.startswith("irscale:")]
    assert said and all(len(line.replace(str(tmp_path), "")) <= 300 for line in said), said
