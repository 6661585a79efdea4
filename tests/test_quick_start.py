"""The README's quick start as a newcomer meets it: a fresh clone, a fresh venv
with the package installed by the README's install block, the TREC-COVID round-5 qrels and
runs linked as ``qrels.txt`` and ``runs/`` in the clone, and the README's quick-start
command and its Python twin run verbatim from the clone's root (where the source folder
``irscale/`` comes first on ``sys.path`` and must work as the installed package does), the
default store in a temporary folder (``IRSCALE_STORE``).

Checks: exit status 0, every one of the 73 runs and every measure's section in the printed
leaderboard, 73 rows per measure in the file it writes, the lines the README shows as its
output among the printed ones (and those docs/leaderboard.md shows, with ``--baseline
BRPHJ_BM25``), and the same numbers from the Python twin.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_readme import ROOT, blocks, marked

TIMEOUT = 1800
#: The run docs/leaderboard.md tests the others against.
BASELINE = "BRPHJ_BM25"


def _run(cmd: list[str] | str, cwd: Path, env: dict, what: str) -> subprocess.CompletedProcess:
    shell = isinstance(cmd, str)
    done = subprocess.run(["bash", "-c", f"set -euo pipefail; {cmd}"] if shell else cmd, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"{what} failed (exit {done.returncode}):\n{cmd}\nstderr:\n{done.stderr[-3000:]}"
    return done


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+\.\d{3,4}", text)


@pytest.mark.slow      # 1-3 minutes: a clone, a venv, pip install ., the numba kernels compiled afresh
def test_quick_start_on_trec_covid_from_a_fresh_clone(shared_data, tmp_path):
    covid = shared_data / "trec-covid5"
    if not covid.is_dir():
        print(f"skipping: TREC-COVID round 5 not found at {covid}")
        pytest.skip(f"TREC-COVID round 5 not found at {covid}")
    if shutil.which("git") is None:
        print("skipping: git is not installed")
        pytest.skip("git is not installed")
    tags = [line.split("\t")[0] for line in (covid / "runs_included.tsv").read_text().splitlines()[1:] if line]
    assert len(tags) == 73

    clone = tmp_path / "irscale"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "IRSCALE_STORE")}
    _run(marked("install").strip(), clone, env, "the README's install block")
    venv_bin = clone / ".venv" / "bin"
    assert (venv_bin / "irscale").is_file()

    (clone / "qrels.txt").symlink_to(covid / "qrels" / "qrels.covid-round5.txt")
    (clone / "runs").symlink_to(covid / "runs", target_is_directory=True)
    env = dict(env, PATH=f"{venv_bin}{os.pathsep}{env.get('PATH', '')}", IRSCALE_STORE=str(tmp_path / "tables"))

    # the command, verbatim
    command = marked("quick-start").strip()
    cli = _run(command, clone, env, "the README's quick-start command")
    printed = cli.stdout
    for tag in tags:
        assert re.search(rf"^\s*\d+\s+{re.escape(tag)}\s", printed, flags=re.M), f"run {tag} is not listed"
    names = re.search(r'-m "([^"]+)"', command).group(1).split(",")
    titles = [line for line in printed.splitlines() if " · " in line and "topics" in line]
    assert len(titles) == len(names)
    for name in names:
        assert any(re.match(rf"{re.escape(name)} (=|·) ", t) for t in titles), f"no section for {name}: {titles}"
    assert (tmp_path / "tables").exists(), "scales are built into $IRSCALE_STORE"

    # the file it writes: 73 rows per measure
    out = re.search(r"-o (\S+)", command).group(1)
    sections = re.split(r"^## ", (clone / out).read_text(), flags=re.M)[1:]
    assert len(sections) == len(names)
    for section in sections:
        rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| # ")]
        assert len(rows) == 73, f"{section.splitlines()[0]}: {len(rows)} rows"

    # what the README shows as its output is what it prints
    lines = {line.rstrip() for line in printed.splitlines()}
    for line in marked("quick-start-output").splitlines():
        assert not line.strip() or line.rstrip() in lines, f"the README shows a line the command does not print:\n" \
                                                           f"{line}"

    # with a baseline: the lines docs/leaderboard.md shows
    shown = [code for _, lang, code in blocks(ROOT / "docs" / "leaderboard.md") if lang == "text" and BASELINE in code]
    assert len(shown) == 1
    against = _run(f"{command} --baseline {BASELINE}", clone, env, "the quick start with a baseline").stdout
    lines = {line.rstrip() for line in against.splitlines()}
    for line in shown[0].splitlines():
        assert not line.strip() or line.rstrip() in lines, f"docs/leaderboard.md shows a line the command does " \
                                                           f"not print:\n{line}"

    # the Python twin, from the clone's root (its source folder irscale/ comes first on sys.path
    # and must work as the installed package does): the same numbers
    twin = _run([str(venv_bin / "python"), "-c", marked("quick-start-python")], clone, env,
                "the README's Python twin")
    assert _numbers(twin.stdout) == _numbers(printed)
    assert len(_numbers(printed)) > 4 * 73
    assert (clone / "leaderboard.tex").is_file()
    shutil.rmtree(clone / ".venv", ignore_errors=True)      # hundreds of MB
