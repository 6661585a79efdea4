"""The Python API and ``python -m irscale`` work from the repository root, where the source
folder ``irscale/`` comes first on sys.path and shadows the installed package (whose
subpackages live in the root's ``scales/``, ``store/``, ``enumerate/``).

The test venv has an editable install, whose import finder would hide the problem: the
subprocesses drop it, so that only the source tree on sys.path can answer, as for a user of
``pip install .`` standing in the checkout."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# what a non-editable install leaves: no editable finder; the checkout first on sys.path
PRELUDE = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path "
           "if 'editable' not in getattr(f, '__name__', type(f).__name__).lower()]; "
           f"sys.path.insert(0, {str(ROOT)!r}); ")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PRELUDE + code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_python_api_from_the_repository_root():
    r = _python("import irscale; s = irscale.scale('AP@4', rb=2); print(s.k, irscale.scales.__file__)")
    assert r.returncode == 0, r.stderr
    k, where = r.stdout.split()
    assert int(k) == 10 and Path(where).parent == ROOT / "scales"


def test_python_m_irscale_from_the_repository_root():
    r = _python("import runpy; sys.argv = ['irscale', 'measures']; runpy.run_module('irscale', run_name='__main__')")
    assert r.returncode == 0, r.stderr
    assert "AP" in r.stdout
