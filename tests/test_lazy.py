"""Modules imported on first use (irscale.enumerate.lazy): a failed or interrupted import
raises where it happens, leaves no half-initialised module behind and is tried again;
import statements elsewhere are not disturbed by the stand-in."""
import sys

import pytest

from irscale.enumerate.lazy import lazy_module


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package ``lazy_probe`` with a module ``mod`` whose import fails while a flag says
    so (with an exception as Ctrl-C raises it: not an Exception)."""
    root = tmp_path / "lazy_probe"
    root.mkdir()
    (root / "__init__.py").write_text("FAIL = [True]\n\nclass Stop(BaseException):\n    pass\n")
    (root / "mod.py").write_text("import lazy_probe\nVALUE = 1\n"
                                 "if lazy_probe.FAIL[0]:\n    raise lazy_probe.Stop\nLATER = 2\n")
    (root / "user.py").write_text("from lazy_probe.mod import LATER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lazy_probe"
    for name in [n for n in sys.modules if n == "lazy_probe" or n.startswith("lazy_probe.")]:
        del sys.modules[name]


def test_not_imported_before_first_use(package):
    mod = lazy_module(f"{package}.mod")
    assert f"{package}.mod" not in sys.modules
    sys.modules[package].FAIL[0] = False
    assert mod.LATER == 2 and f"{package}.mod" in sys.modules


def test_an_interrupted_import_raises_and_is_tried_again(package):
    mod = lazy_module(f"{package}.mod")
    stop = sys.modules[package].Stop
    with pytest.raises(stop):
        print(mod.VALUE)
    assert f"{package}.mod" not in sys.modules              # nothing half-initialised left
    with pytest.raises(stop):                               # an import statement meets it too
        __import__(f"{package}.user")
    sys.modules[package].FAIL[0] = False
    assert mod.LATER == 2
    assert __import__(f"{package}.user", fromlist=["LATER"]).LATER == 2


def test_writes_reach_the_module(package):
    sys.modules.get(package) or __import__(package)
    sys.modules[package].FAIL[0] = False
    mod = lazy_module(f"{package}.mod")
    mod.VALUE = 5
    assert sys.modules[f"{package}.mod"].VALUE == 5 and mod.VALUE == 5
    assert "LATER" in dir(mod)


def test_imported_modules_are_returned_and_missing_ones_refused():
    import json
    assert lazy_module("json") is json
    with pytest.raises(ModuleNotFoundError):
        lazy_module("irscale.no_such_module")
