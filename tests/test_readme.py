"""A newcomer's walk through README.md and docs/*.md, verbatim: every code block runs as written.

Every page runs in a folder of its own holding what the examples name: ``qrels.txt`` and
``runs/`` (small synthetic TREC files, :func:`write_trec_files`) and ``paper-n10`` (made
by the README's main command), with ``IRSCALE_STORE`` naming a store in that folder, so
that ``irscale compare`` never builds scales into the tester's home. A page's blocks run in
the order it shows them:

* ```sh blocks with bash: every block whole, except the README's set-up blocks, which
  install the package (already installed here): the main command runs after its install
  prefix (``python3 -m venv .venv && . .venv/bin/activate && pip install . &&``), once, to
  make ``paper-n10``; the install block is that prefix alone; the test command is the
  one running this file and is left out;
* ```python blocks one by one, each in a fresh namespace, in this process;
* ```text blocks are synopses: every ``irscale COMMAND --option`` in them must be an option
  that ``irscale COMMAND --help`` lists, and every ``python scripts/X.py --option`` a file
  of scripts/ whose source declares that option. The README's quick-start output is a
  text block too; tests/test_quick_start.py checks it against the real output on TREC-COVID.

A block of any other kind fails the test, so a block cannot be added without being run or
checked. The README's markers (HTML comments right before a block) appear there once each
and nowhere in docs/: ``.ci/run`` reads the test command after its marker, and
tests/test_quick_start.py the quick start after its.
"""
import gzip
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irscale.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
INSTALL = "python3 -m venv .venv && . .venv/bin/activate && pip install ."
INSTALL_PREFIX = INSTALL + " && "
#: The README's markers, in order; each marks the block right after it.
MARKERS = ["install", "quick-start", "quick-start-python", "quick-start-output", "main-command", "test-command"]
KINDS = {"python", "sh", "text"}
#: The README's length limit (issue 29: a quick start first, the reference in docs/).
README_MAX_LINES = 250


def _name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def blocks(page: Path = README) -> list[tuple[str, str, str]]:
    """(marker, language, code) of every fenced block of ``page``, in order; ``marker`` is
    the HTML comment right before the block (``main-command``, ...) or ''."""
    text = page.read_text()
    out = []
    for m in re.finditer(r"(?:<!-- ([\w-]+) -->\n)?^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S):
        out.append((m.group(1) or "", m.group(2), m.group(3)))
    return out


def marked(marker: str, page: Path = README) -> str:
    """The code of the block after ``<!-- marker -->`` in ``page``."""
    found = [code for mark, _, code in blocks(page) if mark == marker]
    assert len(found) == 1, f"{_name(page)}: {len(found)} blocks marked {marker}"
    return found[0]


def write_trec_files(folder: Path) -> None:
    """qrels.txt (8 topics, binary) and runs/ (3 runs of 30 documents per topic, one gzipped)."""
    rng = random.Random(12)
    docs = [f"D{i:03d}" for i in range(60)]
    lines = []
    for t in range(401, 409):
        relevant = set(rng.sample(docs, rng.randint(1, 14)))
        lines += [f"{t} 0 {d} {int(d in relevant)}" for d in docs[:40]]
    (folder / "qrels.txt").write_text("\n".join(lines) + "\n")
    runs = folder / "runs"
    runs.mkdir()
    for name in ("input.a", "input.b", "input.c"):
        rows = []
        for t in range(401, 409):
            for rank, d in enumerate(rng.sample(docs, 30), 1):
                rows.append(f"{t} Q0 {d} {rank} {100 - rank + rng.random():.4f} {name}")
        data = ("\n".join(rows) + "\n").encode()
        if name == "input.a":
            (runs / f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            (runs / name).write_bytes(data)


def _bash(cmd: str, cwd: Path, store: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               IRSCALE_STORE=str(store))
    return subprocess.run(["bash", "-c", f"set -euo pipefail; {cmd}"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


# -- fast: what kinds of blocks, which markers, which links -------------------------------------------
def test_every_block_is_a_known_kind():
    for page in PAGES:
        kinds = {lang for _, lang, _ in blocks(page)}
        assert kinds <= KINDS, f"{_name(page)} has blocks of unchecked kinds: {kinds - KINDS}"


def test_markers_only_in_the_readme_once_each():
    assert [mark for mark, _, _ in blocks(README) if mark] == MARKERS
    text = README.read_text()
    for marker in MARKERS:
        assert text.count(f"<!-- {marker} -->") == 1, f"README.md: marker {marker} not exactly once"
    assert marked("install").strip() == INSTALL
    assert marked("main-command").strip().startswith(INSTALL_PREFIX)
    for page in PAGES[1:]:
        text = page.read_text()
        assert not re.search(r"<!-- [\w-]+ -->", text), f"{_name(page)} has a marker; markers belong to README.md"


def test_readme_is_short_and_every_docs_page_is_linked():
    lines = README.read_text().count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; the reference belongs in docs/"
    index = (DOCS / "README.md").read_text()
    readme = README.read_text()
    for page in PAGES[1:]:
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"
            assert f"](docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"


def test_relative_links_resolve():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{_name(page)} links {target}, which does not exist"


def _irscale_options(command: str) -> set[str]:
    r = CliRunner().invoke(cli, [command, "--help"])
    assert r.exit_code == 0, f"irscale {command} --help failed: {r.output}"
    return set(re.findall(r"(--[a-z][a-z-]*)", r.output))


def test_text_synopses_name_real_options():
    checked = 0
    for page in PAGES:
        for _, lang, code in blocks(page):
            if lang != "text":
                continue
            for line in code.splitlines():
                words = line.split()
                if words[:1] == ["irscale"] and len(words) > 1:
                    options = set(re.findall(r"(--[a-z][a-z-]*)", line))
                    unknown = options - _irscale_options(words[1])
                    assert not unknown, f"{_name(page)}: synopsis names options irscale {words[1]} lacks: " \
                                        f"{unknown}\n{line}"
                    checked += 1
                elif words[:1] == ["python"] and len(words) > 1 and words[1].startswith("scripts/"):
                    script = ROOT / words[1]
                    assert script.is_file(), f"{_name(page)} names a missing script: {words[1]}"
                    source = script.read_text()
                    for option in re.findall(r"(--[a-z][a-z-]*)", " ".join(shlex.split(line.split("#")[0])[2:])):
                        assert f'"{option}"' in source, f"{words[1]} declares no option {option}"
                    checked += 1
    assert checked >= 20


# -- slow: every block runs -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """qrels.txt, runs/ and paper-n10, made by the README's main command (after its
    install prefix: the package under test is installed)."""
    folder = tmp_path_factory.mktemp("newcomer")
    write_trec_files(folder)
    cmd = marked("main-command").strip()[len(INSTALL_PREFIX):]
    r = _bash(cmd, folder, folder / "store.h5")
    assert r.returncode == 0, f"README main command failed:\n{cmd}\nstderr:\n{r.stderr[-2000:]}"
    assert (folder / "paper-n10").exists()
    (folder / "store.h5").unlink(missing_ok=True)
    return folder


@pytest.mark.slow      # about a minute for every page (CI runs it)
@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_block_of_the_page_runs(page, base, tmp_path, monkeypatch):
    folder = tmp_path / "walk"
    shutil.copytree(base, folder)
    store = folder / "store.h5"              # the default store of compare: never the tester's home
    monkeypatch.setenv("IRSCALE_STORE", str(store))
    monkeypatch.chdir(folder)
    ran = 0
    for mark, lang, code in blocks(page):
        if lang == "sh" and mark not in ("install", "main-command", "test-command"):
            r = _bash(code.strip(), folder, store)
            assert r.returncode == 0, f"{_name(page)} block failed:\n{code}\nstderr:\n{r.stderr[-3000:]}"
            ran += 1
        elif lang == "python":
            try:
                exec(compile(code, _name(page), "exec"), {"__name__": "__docs__"})
            except Exception as e:  # the block as the newcomer sees it, and what went wrong
                pytest.fail(f"{_name(page)} block failed with {type(e).__name__}: {e}\n{code}")
            ran += 1
    if page == README:
        assert ran >= 4 and (folder / "leaderboard.md").exists() and (folder / "leaderboard.tex").exists()
        assert store.exists(), "the quick start builds its scales into $IRSCALE_STORE"
