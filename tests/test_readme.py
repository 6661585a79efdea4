"""A newcomer's walk through README.md, verbatim: every code block runs as written.

* ```python blocks run one by one, each in a fresh namespace, in a folder that holds what
  the README's examples name: ``qrels.txt`` and ``runs/`` (small synthetic TREC files),
  ``paper-n10.h5`` (made by the main command below);
* ```sh blocks run with bash in that folder: the main command after its install prefix
  (``python3 -m venv .venv && . .venv/bin/activate && pip install . &&``; the package under
  test is installed already), every other sh block whole; the test command is the one
  running this file and is left out;
* ```text blocks are synopses: every ``irscale COMMAND --option`` in them must be an option
  that ``irscale COMMAND --help`` lists, and every ``python scripts/X.py --option`` a file
  of scripts/ whose source declares that option.

A block of any other kind fails the test, so a block cannot be added without being run or
checked.
"""
import gzip
import os
import random
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irscale.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
INSTALL_PREFIX = "python3 -m venv .venv && . .venv/bin/activate && pip install . && "


def blocks() -> list[tuple[str, str, str]]:
    """(marker, language, code) of every fenced block of README.md, in order; ``marker``
    is the HTML comment right before the block (``main-command``, ``test-command``) or ''."""
    text = README.read_text()
    out = []
    for m in re.finditer(r"(?:<!-- ([\w-]+) -->\n)?^```(\w*)\n(.*?)^```$", text, flags=re.M | re.S):
        out.append((m.group(1) or "", m.group(2), m.group(3)))
    return out


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


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("newcomer")
    write_trec_files(folder)
    return folder


def _bash(cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run(["bash", "-c", f"set -euo pipefail; {cmd}"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_every_block_is_a_known_kind():
    kinds = {lang for _, lang, _ in blocks()}
    assert kinds <= {"python", "sh", "text"}, f"README blocks of unchecked kinds: {kinds - {'python', 'sh', 'text'}}"
    markers = [mark for mark, _, _ in blocks() if mark]
    assert markers == ["main-command", "test-command"]


@pytest.mark.slow      # 20 s with the next: builds paper-n10.h5 and runs every block (CI runs it)
def test_main_command_and_sh_blocks(walk):
    sh = [(mark, code) for mark, lang, code in blocks() if lang == "sh" and mark != "test-command"]
    assert sh[0][0] == "main-command"
    for mark, code in sh:
        cmd = code.strip()
        if mark == "main-command":
            assert cmd.startswith(INSTALL_PREFIX), "the main command starts by installing the package"
            cmd = cmd[len(INSTALL_PREFIX):]
        r = _bash(cmd, walk)
        assert r.returncode == 0, f"README block failed:\n{code}\nstderr:\n{r.stderr[-2000:]}"
    assert (walk / "paper-n10.h5").exists()


@pytest.mark.slow
def test_python_blocks(walk, monkeypatch):
    if not (walk / "paper-n10.h5").exists():
        test_main_command_and_sh_blocks(walk)
    monkeypatch.chdir(walk)
    python = [code for _, lang, code in blocks() if lang == "python"]
    assert len(python) >= 2
    for code in python:
        try:
            exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
        except Exception as e:  # the block as the newcomer sees it, and what went wrong
            pytest.fail(f"README block failed with {type(e).__name__}: {e}\n{code}")


def _irscale_options(command: str) -> set[str]:
    r = CliRunner().invoke(cli, [command, "--help"])
    assert r.exit_code == 0, f"irscale {command} --help failed: {r.output}"
    return set(re.findall(r"(--[a-z][a-z-]*)", r.output))


def test_text_synopses_name_real_options():
    checked = 0
    for _, lang, code in blocks():
        if lang != "text":
            continue
        for line in code.splitlines():
            words = line.split()
            if words[:1] == ["irscale"] and len(words) > 1:
                options = set(re.findall(r"(--[a-z][a-z-]*)", line))
                unknown = options - _irscale_options(words[1])
                assert not unknown, f"README synopsis names options irscale {words[1]} lacks: {unknown}\n{line}"
                checked += 1
            elif words[:1] == ["python"] and len(words) > 1 and words[1].startswith("scripts/"):
                script = ROOT / words[1]
                assert script.is_file(), f"README names a missing script: {words[1]}"
                source = script.read_text()
                for option in re.findall(r"(--[a-z][a-z-]*)", " ".join(shlex.split(line.split("#")[0])[2:])):
                    assert f'"{option}"' in source, f"{words[1]} declares no option {option}"
                checked += 1
    assert checked >= 10
