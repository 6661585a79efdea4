import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_data():
    """Path of ../shared/data; skips the test when the shared data is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared/data is absent")
    return SHARED


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("TQDM_DISABLE", "1")
    yield


os.environ.setdefault("TQDM_DISABLE", "1")
