"""Every folder with an __init__.py is listed in pyproject's packages (else it would be
silently missing from the wheel), and nothing generic is installed at top level."""
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_packages_cover_all_folders():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    packages, dirs = set(cfg["packages"]), cfg["package-dir"]
    assert all(p == "irscale" or p.startswith("irscale.") for p in packages)
    mapped = {}
    for pkg in packages:
        folder = dirs.get(pkg)
        assert folder, f"{pkg} has no package-dir entry"
        mapped[(ROOT / folder).resolve()] = pkg
    skip = {"tests", "build", "dist", "scripts"}
    on_disk = {p.parent.resolve() for p in ROOT.rglob("__init__.py")
               if not any(part.startswith(".") or part in skip or part.endswith(".egg-info")
                          for part in p.relative_to(ROOT).parts)}
    assert on_disk == set(mapped), on_disk ^ set(mapped)
