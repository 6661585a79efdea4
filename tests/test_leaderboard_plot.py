"""``Leaderboard.plot``: a figure file per suffix (PNG, PDF, SVG), checked before anything
is drawn, one panel per measure."""
import struct
import warnings

import numpy as np
import pandas as pd
import pytest

from irscale import IrscaleError, IrscaleWarning
from irscale.errors import OutputError
from irscale.scales.analysis import leaderboard_plot
from irscale.scales.analysis.leaderboard import leaderboard


@pytest.fixture(scope="module")
def board():
    rng = np.random.default_rng(0)
    rows = []
    for m in ("AP@10", "P@10", "DCG@10"):
        for r in range(4):
            raw = rng.random(10) * (5 if m == "DCG@10" else 1)
            rows.append(pd.DataFrame({"run": f"run{r}", "topic": [f"t{t}" for t in range(10)], "measure": m,
                                      "raw": raw, "scaled": raw / raw.max() if m != "P@10" else np.nan}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", IrscaleWarning)
        return leaderboard(pd.concat(rows, ignore_index=True), baseline="run1")


def test_a_png_is_written(board, tmp_path):
    path = tmp_path / "board.png"
    board.plot(path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width > 300 and height > 200
    from PIL import Image
    with Image.open(path) as image:
        image.verify()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]      # no temporary file left


def test_pdf_and_svg_by_suffix(board, tmp_path):
    board.plot(tmp_path / "board.pdf")
    assert (tmp_path / "board.pdf").read_bytes().startswith(b"%PDF")
    board.plot(tmp_path / "board.SVG")
    svg = (tmp_path / "board.SVG").read_text()
    assert "<svg" in svg and svg.count('id="axes_') >= 3           # a panel per measure


def test_a_bad_path_is_an_error_before_drawing(board, tmp_path, monkeypatch):
    def no_drawing(*args, **kwargs):
        raise AssertionError("drew before checking the path")
    monkeypatch.setattr(leaderboard_plot, "_panel", no_drawing)
    with pytest.raises(OutputError, match="unknown figure format"):
        board.plot(tmp_path / "board.jpg")
    with pytest.raises(IrscaleError, match="does not exist"):
        board.plot(tmp_path / "nowhere" / "board.png")
    assert list(tmp_path.iterdir()) == []
