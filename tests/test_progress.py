"""Progress bars show only once their work has run for BAR_DELAY seconds: a build of
quick tables prints nothing but its result line; longer work shows its bar."""
from __future__ import annotations

import io
import os
import subprocess
import sys
import time

import irscale
from irscale.enumerate.progress import BAR_DELAY, progress_bar


def test_a_bar_shows_only_after_its_delay():
    quick, slow = io.StringIO(), io.StringIO()
    with progress_bar(total=2, desc="quick", file=quick, mininterval=0, disable=False) as bar:
        bar.update(2)
    with progress_bar(total=2, desc="slow", file=slow, mininterval=0, disable=False) as bar:
        bar.update(1)
        time.sleep(BAR_DELAY * 1.5)
        bar.update(1)
    assert "quick" not in quick.getvalue()
    assert "slow" in slow.getvalue() and "2/2" in slow.getvalue()


def test_a_quick_build_prints_its_result_line_only(tmp_path):
    out = tmp_path / "s.h5"
    env = {k: v for k, v in os.environ.items() if k != "TQDM_DISABLE"}     # the suite's conftest sets it
    r = subprocess.run([sys.executable, "-m", "irscale", "build", "-m", "P@8,R@8,AP@12", "--out", str(out),
                        "--jobs", "1"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1 and "\r" not in r.stdout, r.stdout                 # its result line, no bar
    assert lines[0].startswith(f"{out}:") and "3 tables" in lines[0], lines[0]
    assert len(irscale.open_store(out).tables()) == 3
