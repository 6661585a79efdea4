import os
import shutil
import subprocess
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TREC_EVAL_BUILD = SHARED.parent / "tools" / "build-trec_eval.sh"


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true",
                     help="also run the tests marked slow (the README's test command, which CI runs, does)")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: heavier tests, deselected unless --runslow (CI runs them)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow"):
        return
    slow = [item for item in items if "slow" in item.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if "slow" not in item.keywords]
        config._irscale_slow = len(slow)


def pytest_terminal_summary(terminalreporter, config):
    n = getattr(config, "_irscale_slow", 0)
    if n:
        terminalreporter.write_line(f"{n} slow tests deselected; run them with: pytest --runslow")
    elif not config.getoption("--runslow") and getattr(config.option, "numprocesses", None):
        # pytest-xdist: the workers deselected them, the controller collected nothing
        terminalreporter.write_line("tests marked slow were deselected; run them with: pytest --runslow")


@pytest.fixture
def shared_data():
    """Path of ../shared/data; skips the test, saying where it looked, when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared TREC data not found at {SHARED}")
    return SHARED


@pytest.fixture(scope="session")
def trec_eval_bin(tmp_path_factory):
    """Path of NIST's trec_eval 10.0-rc3 built from source for this test session (about
    10 s); skips, saying what is missing, without the build script or a C compiler."""
    if not TREC_EVAL_BUILD.is_file():
        pytest.skip(f"trec_eval build script not found at {TREC_EVAL_BUILD}")
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler (cc) to build trec_eval")
    out = tmp_path_factory.mktemp("trec_eval_bin")
    done = subprocess.run(["bash", str(TREC_EVAL_BUILD), str(out / "te")], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"trec_eval could not be built: {done.stderr.strip()[-200:]}")
    return done.stdout.strip().splitlines()[-1]


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    yield


os.environ.setdefault("TQDM_DISABLE", "1")
# every entry point builds into the default store when no store is named: the tests' own, one per session
if not os.environ.get("IRSCALE_STORE", "").strip():
    import atexit
    import tempfile

    _store_home = tempfile.mkdtemp(prefix="irscale-test-store-")
    os.environ["IRSCALE_STORE"] = os.path.join(_store_home, "tables")
    atexit.register(shutil.rmtree, _store_home, True)
