"""The research page of the lookup service (``GET /``) and its table view (``GET
/v1/table``): views checked against ``Scale.values`` of the store opened directly (and
against the exact values of tests/naive.py), their size bounds and errors, and the page
in a real headless Chromium (Debian's, driven by Playwright) against ``irscale serve``:
tables listed, plots drawn (pixels of the plot colours on screen), runs typed as boxes and
values ranked as ``Scale.rank_runs`` / ``Scale.rank`` rank them."""
# Subprocesses run with cwd=tmp_path: from the repository root, "python -m irscale" would
# import the source folder irscale/ instead of the installed package.
import io
import socket
import subprocess
import sys
import time
import warnings
from fractions import Fraction
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import naive
import numpy as np
import pytest
from PIL import Image

import irscale
import irscale.service as service
from irscale.scales.analysis import spacing
from irscale.service import create_app

# a browser and a live server: 11 s; CI runs it (pytest --runslow)
pytestmark = pytest.mark.slow

with warnings.catch_warnings():  # starlette asks for httpx2, which this project does not use
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient

GRADED = "nDCG(b=2,gains=(0,1,2))@5"
MEASURES = f"AP@8,DCG(b=2)@8,P@8,RBPU(p=0.8)@6,RBP(p=0.5)@20,{GRADED}"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: colours the page draws the values, the gap bars and the marked point with
SERIES, BARS, MARK = (0x1F, 0x5F, 0xBF), (0xD9, 0x82, 0x2B), (0xD6, 0x27, 0x28)


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("web_page") / "t.h5"
    irscale.build_store(path, MEASURES, n_jobs=1, rb_counts={GRADED: [(2, 1)]})
    return path


@pytest.fixture(scope="module")
def store(store_path):
    return irscale.open_store(store_path)


@pytest.fixture(scope="module")
def client(store_path):
    with TestClient(create_app(store_path)) as c:
        yield c


def _view(client, **params):
    r = client.get("/v1/table", params=params)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    return r.json()


def _assert_error(response, status, kind, *needles):
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    error = response.json()["error"]
    assert error["type"] == kind, error
    for needle in needles:
        assert needle in error["message"], error["message"]


def _expected_histogram(gaps, bins, scale):
    """The gap histogram as documented: positive gaps in bins equally wide in log10 of
    the gap between the smallest and the largest (a tenth of a decade around them when
    they are equal), or linear from 0 to the largest."""
    positive = gaps[gaps > 0]
    if scale == "linear":
        counts, edges = np.histogram(positive, bins=bins, range=(0, positive.max()))
        return counts, edges
    a, b = np.log10(positive.min()), np.log10(positive.max())
    if b - a < 1e-3:
        a, b = (a + b) / 2 - 0.05, (a + b) / 2 + 0.05
    counts, edges = np.histogram(np.log10(positive), bins=bins, range=(a, b))
    return counts, 10.0 ** edges


# -- GET /v1/table ------------------------------------------------------------------------
VIEWS = [("AP@8", 5, 1000, 40, "log"), ("AP@8", 5, 10, 7, "linear"), ("AP@8", 12, 7, 3, "log"),
         ("DCG(b=2)@8", None, 50, 20, "log"), ("P@8", None, 2, 5, "log"), ("P@8", None, 100, 4, "linear"),
         (GRADED, (2, 1), 13, 9, "log"), ("RBPU(p=0.8)@6", None, 9, 11, "linear")]


@pytest.mark.parametrize("measure, rb, points, bins, gaps", VIEWS,
                         ids=[f"{m}-rb{rb}-{p}-{b}-{g}" for m, rb, p, b, g in VIEWS])
def test_view_is_the_scale_downsampled(client, store, measure, rb, points, bins, gaps):
    params = {"measure": measure, "points": points, "bins": bins, "gaps": gaps}
    if rb is not None:
        params["rb"] = ",".join(map(str, rb)) if isinstance(rb, tuple) else str(rb)
    view = _view(client, **params)
    scale = store.scale(measure, rb)
    values, k = scale.values, scale.k
    assert view["measure"] == measure and view["k"] == k == values.size and view["n_runs"] == scale.n_runs
    assert view["rb"] == (list(rb) if isinstance(rb, tuple) else rb)
    m = min(points, k)
    lo, hi = np.array(view["rank_lo"]), np.array(view["rank_hi"])
    assert view["points"] == m == lo.size == hi.size and view["exact"] == (k <= points)
    # bins of consecutive ranks covering 1..K, evenly (sizes differ by at most one)
    assert lo[0] == 1 and hi[-1] == k and (lo[1:] == hi[:-1] + 1).all() and (hi >= lo).all()
    sizes = hi - lo + 1
    assert sizes.max() - sizes.min() <= 1
    # each bin's smallest and largest value, exactly as the scale has them
    for i in range(m):
        part = values[lo[i] - 1:hi[i]]
        assert view["value_lo"][i] == part.min() == values[lo[i] - 1]
        assert view["value_hi"][i] == part.max() == values[hi[i] - 1]
    # the gaps: every one counted (small scale)
    g = view["gaps"]
    diffs = np.diff(values)
    counts, edges = _expected_histogram(diffs, bins, gaps)
    assert g["scale"] == gaps and not g["sampled"] and g["used"] == g["total"] == k - 1
    assert g["counts"] == counts.tolist() and len(g["edges"]) == bins + 1
    assert np.allclose(g["edges"], edges, rtol=1e-12, atol=0)
    assert sum(g["counts"]) + g["zero"] == k - 1 and g["zero"] == int((diffs == 0).sum())
    assert g["min"] == diffs.min() and g["max"] == diffs.max() and g["median"] == np.median(diffs)
    assert g["mean"] == pytest.approx(diffs.mean(), rel=1e-12)


def test_view_values_are_the_exact_values(client):
    """Against the independent reference: AP's exact distinct values (naive.py)."""
    for rb in (1, 3, 8):
        distinct = naive.oracle(naive.AP, 8, rb)[2]
        view = _view(client, measure="AP@8", rb=rb, points=10_000)
        assert view["exact"] and view["k"] == len(distinct)
        assert view["rank_lo"] == list(range(1, len(distinct) + 1))
        assert view["value_lo"] == pytest.approx([float(Fraction(d)) for d in distinct], abs=1e-15)


def test_view_of_a_million_values_is_bounded(client, store):
    scale = store.scale("RBP(p=0.5)@20")
    assert scale.k == 2 ** 20
    start = time.monotonic()
    r = client.get("/v1/table", params={"measure": "RBP(p=0.5)@20", "points": 2000, "bins": 50})
    seconds = time.monotonic() - start
    assert r.status_code == 200 and seconds < 10, seconds
    assert len(r.content) < 200_000, len(r.content)     # 2000 bins, not a million values
    view = r.json()
    assert view["points"] == 2000 and len(view["value_lo"]) == 2000 and len(view["gaps"]["counts"]) == 50
    assert view["gaps"]["used"] == 2 ** 20 - 1 and not view["gaps"]["sampled"]
    ranks = np.array(view["rank_lo"] + view["rank_hi"])
    assert view["value_lo"] + view["value_hi"] == scale.values_of_ranks(ranks).tolist()
    biggest = client.get("/v1/table", params={"measure": "RBP(p=0.5)@20", "points": service.MAX_VIEW_POINTS,
                                              "bins": service.MAX_GAP_BINS})
    assert biggest.status_code == 200 and len(biggest.content) < 1_000_000
    assert len(biggest.json()["rank_lo"]) == service.MAX_VIEW_POINTS


def test_big_scales_count_the_gaps_of_windows(client, store, monkeypatch):
    """Scales of more than GAP_WINDOWS * GAP_WINDOW values whose tables have more than
    VIEW_EXACT_VALUES entries have only the gaps within GAP_WINDOWS evenly spaced windows
    of GAP_WINDOW consecutive ranks counted; smaller scales of the same table every gap."""
    monkeypatch.setattr(spacing, "VIEW_EXACT_VALUES", 100)
    monkeypatch.setattr(spacing, "GAP_WINDOWS", 3)
    monkeypatch.setattr(spacing, "GAP_WINDOW", 16)
    view = _view(client, measure="AP@8", rb=8, points=20, bins=6)     # K = 225: not cached before
    values = store.scale("AP@8", 8).values
    g = view["gaps"]
    assert g["sampled"] and g["used"] == 3 * 15 and g["total"] == values.size - 1
    starts = np.linspace(1, values.size - 16 + 1, 3).astype(int)
    sample = np.concatenate([np.diff(values[s - 1:s - 1 + 16]) for s in starts])
    counts, _ = _expected_histogram(sample, 6, "log")
    assert g["counts"] == counts.tolist() and g["min"] == sample.min() and g["max"] == sample.max()
    assert view["value_lo"][0] == values[0] and view["value_hi"][-1] == values[-1]
    few = _view(client, measure="AP@8", rb=1, points=20, bins=6)["gaps"]     # K = 9: each value located
    assert not few["sampled"] and few["used"] == few["total"] == store.scale("AP@8", 1).k - 1


@pytest.mark.parametrize("query, status, kind, needles", [
    ({"measure": "XYZ@8"}, 422, "MeasureError", ["unknown measure 'XYZ"]),
    ({"measure": "AP@9", "rb": "3"}, 404, "TableNotFoundError", ["no table AP@9", "AP@8"]),
    ({"measure": "AP@8"}, 422, "RecallBaseError", ["give rb"]),
    ({"measure": "P@8", "rb": "3"}, 422, "RecallBaseError", ["does not depend on the recall base"]),
    ({"measure": "AP@8", "rb": "0"}, 422, "RecallBaseError", ["rb must be an integer >= 1"]),
    ({"measure": "AP@8", "rb": "five"}, 422, "RequestError", ["rb must be an integer", "'five'"]),
    ({"measure": GRADED, "rb": "3"}, 422, "RecallBaseError", ["counts (c_1..c_2)"]),
    ({"measure": GRADED, "rb": "2,2"}, 404, "TableNotFoundError", ["(2,2)", "(2,1)"]),
    ({"rb": "3"}, 422, "RequestError", ["measure: field required"]),
    ({"measure": "P@8", "points": "1"}, 422, "RequestError", ["points:", "greater than or equal to 2"]),
    ({"measure": "P@8", "points": "10001"}, 422, "RequestError", ["points"]),
    ({"measure": "P@8", "points": "1e3"}, 422, "RequestError", ["points"]),
    ({"measure": "P@8", "bins": "0"}, 422, "RequestError", ["bins:", "greater than or equal to 1"]),
    ({"measure": "P@8", "gaps": "cubic"}, 422, "RequestError", ["'log' or 'linear'"]),
    ({"measure": "P@8", "colour": "red"}, 422, "RequestError", ["unknown parameter 'colour'"]),
])
def test_view_errors_name_the_problem(client, store_path, query, status, kind, needles):
    r = client.get("/v1/table", params=query)
    _assert_error(r, status, kind, *needles)
    assert str(store_path.parent) not in r.text
    assert client.get("/healthz").json()["status"] == "ok"


def test_view_refuses_repeated_parameters_and_other_methods(client):
    _assert_error(client.get("/v1/table?measure=P@8&measure=AP@8"), 422, "RequestError", "'measure' given twice")
    _assert_error(client.post("/v1/table", json={}), 405, "MethodNotAllowed", "POST /v1/table")


def test_rb_spellings(client):
    for rb in ("2,1", "(2,1)", "[2,1]", " 2, 1 "):
        assert _view(client, measure=GRADED, rb=rb, points=3)["rb"] == [2, 1]
    assert _view(client, measure="AP@8", rb=" 3 ", points=3)["rb"] == 3
    # brackets make a list of counts, as [3] in POST /v1/rank: not a recall base of AP
    _assert_error(client.get("/v1/table", params={"measure": "AP@8", "rb": "(3)"}), 422, "RecallBaseError")
    r = client.post("/v1/rank", json={"measure": "AP@8", "rb": [3], "values": [0]})
    assert r.status_code == 422 and r.json()["error"]["type"] == "RecallBaseError"


def test_openapi_describes_the_view(client):
    spec = client.get("/openapi.json").json()
    assert "/" not in spec["paths"]
    get = spec["paths"]["/v1/table"]["get"]
    assert {p["name"] for p in get["parameters"]} == {"measure", "rb", "points", "bins", "gaps"}
    assert {"200", "404", "422"} <= set(get["responses"])
    assert "TableViewResponse" in spec["components"]["schemas"]


# -- GET / --------------------------------------------------------------------------------
class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.refs.append((tag, value))


def test_page_is_self_contained(client):
    r = client.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    parser = _Refs()
    parser.feed(r.text)
    for tag, url in parser.refs:   # the icon is empty inline data, the docs link the service's own
        assert url == "data:," or (url.startswith("/") and not urlsplit(url).netloc), (tag, url)
    assert not any(tag == "script" for tag, _ in parser.refs)
    for needle in ("http://", "https://", "//cdn", "@import", "url("):
        assert needle not in r.text, needle
    for call in ('"/v1/tables"', '"/v1/table?"', '"/v1/rank"'):
        assert call in r.text


def test_page_honours_the_root_path(store_path):
    with TestClient(create_app(store_path), root_path="/irscale") as c:
        text = c.get("/").text
    assert 'const ROOT = "/irscale";' in text and 'href="/irscale/docs"' in text


# -- the real server, and the page in a browser ---------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(store_path, tmp_path_factory):
    """``irscale serve`` (one thread) on a free localhost port: its base URL."""
    cwd = tmp_path_factory.mktemp("web_server")
    port = _free_port()
    log = open(cwd / "server.log", "w+")
    proc = subprocess.Popen([sys.executable, "-m", "irscale", "serve", "--store", str(store_path), "--port", str(port),
                             "--threads", "1", "--log-level", "warning"], cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (cwd / "server.log").read_text()
            try:
                if httpx.get(base + "/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "server did not answer /healthz within 60 s"
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
    assert "Traceback" not in (cwd / "server.log").read_text()


def test_views_and_ranks_share_the_threads(server, store):
    """Views and rank requests alternate on the same thread and each gets its own answer."""
    scale = store.scale("AP@8", 5)
    with httpx.Client(base_url=server, timeout=30) as http:
        for _ in range(3):
            view = http.get("/v1/table", params={"measure": "AP@8", "rb": 5, "points": 3}).json()
            assert view["k"] == scale.k and view["value_hi"][-1] == 1.0
            r = http.post("/v1/rank", json={"measure": "AP@8", "rb": 5, "values": [0.25]}).json()
            assert r["rank"] == scale.rank([0.25]).tolist()
            _assert_error(http.get("/v1/table", params={"measure": "AP@8"}), 422, "RecallBaseError", "give rb")
            _assert_error(http.post("/v1/rank", content=b"{"), 400, "InvalidJSONError")
        assert http.get("/").text.startswith("<!DOCTYPE html>")


def test_views_have_the_work_limit_of_rank_requests(store_path):
    """A view whose work is estimated over the limit answers 422 before any work, and the
    service stays up."""
    with TestClient(create_app(store_path, max_seconds=0.01)) as c:
        r = c.get("/v1/table", params={"measure": "RBP(p=0.5)@20", "points": 2000})  # every gap of 2^20 values
        _assert_error(r, 422, "RequestError", "the view of RBP(p=0.5)@20", "at most 0.01 s", "ask for fewer points")
        assert c.get("/healthz").json()["status"] == "ok"
        assert c.get("/v1/table", params={"measure": "P@8"}).status_code == 200
        _assert_error(c.get("/v1/table", params={"measure": "P@8", "points": "0"}), 422, "RequestError", "points")


def _pixels(png: bytes, colour, distance: int = 60) -> int:
    """Pixels of a PNG within ``distance`` (per channel) of ``colour``."""
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    return int((np.abs(rgb - np.array(colour)).max(axis=2) <= distance).sum())


def _ranks_rounded(scale, value: float) -> bool:
    """Whether ``value``, rounded to 4 decimals, names one distinct value of ``scale``."""
    try:
        scale.rank([value], decimals=4)
    except irscale.ValueNotInScaleError:
        return False
    return True


def _result(page) -> tuple[int, int, float]:
    return (int(page.inner_text("#res-rank")), int(page.inner_text("#res-k")),
            float(page.inner_text("#res-scaled")))


def _ranked(page, count: int) -> None:
    page.wait_for_function(f"document.body.dataset.ranked === '{count}'", timeout=15_000)


@pytest.fixture
def sync_playwright():
    """Playwright's entry point, once Debian's Chromium is known to be there (before the
    server starts)."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api").sync_playwright


def test_page_in_chromium(sync_playwright, server, store, tmp_path):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1400})
            requests, problems = [], []
            page.on("request", lambda request: requests.append(request.url))
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
            page.goto(server + "/")
            # the tables, listed; the first chosen and plotted on its common scale (rb = N)
            page.wait_for_function("document.body.dataset.plotted === 'AP@8|8'", timeout=15_000)
            rows = page.locator("#tables tbody tr")
            listed = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
            assert listed == ["AP@8", "DCG(b=2)@8", "P@8", "RBP(p=0.5)@20", "RBPU(p=0.8)@6", f"{GRADED} rb=(2,1)"]
            known = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())]
            assert known[0] == "AP@8, map_cut_8" and known[2] == "P@8, P_8" and known[1] == ""   # DCG: irscale's
            assert _pixels(page.locator("#plot").screenshot(), SERIES) > 1000
            assert _pixels(page.locator("#gaps").screenshot(), BARS) > 1000

            # another table, chosen in the list: a plot of its own
            page.locator("#tables tbody tr", has_text="DCG(b=2)@8").click()
            page.wait_for_function("document.body.dataset.plotted === 'DCG(b=2)@8|null'", timeout=15_000)
            assert _pixels(page.locator("#plot").screenshot(), SERIES) > 1000
            assert page.input_value("#table") == "1" and page.is_disabled("#rb")

            # AP@8 with rb = 5: a run typed as boxes, then a value
            page.select_option("#table", label="AP@8")
            page.fill("#rb", "5")
            page.press("#rb", "Enter")
            page.wait_for_function("document.body.dataset.plotted === 'AP@8|5'", timeout=15_000)
            boxes = page.locator("#boxes button.box")
            assert boxes.count() == 8
            for i in (0, 2, 3):
                boxes.nth(i).click()
            assert [boxes.nth(i).inner_text() for i in range(8)] == ["1", "0", "1", "1", "0", "0", "0", "0"]
            page.click("#rank-run")
            _ranked(page, 1)
            scale = store.scale("AP@8", 5)
            rank = int(scale.rank_runs([[1, 0, 1, 1, 0, 0, 0, 0]])[0])
            assert _result(page) == (rank, scale.k, float(scale.scaled([rank])[0]))
            assert _pixels(page.locator("#plot").screenshot(), MARK, 40) > 50      # the point is marked
            page.fill("#value", "0.25")
            page.click("#rank-value")
            _ranked(page, 2)
            rank = int(scale.rank([0.25])[0])
            assert _result(page) == (rank, scale.k, float(scale.scaled([rank])[0]))
            page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
            # a value as trec_eval prints it: refused as it is, ranked as rounded with "nearest"
            value = next(v for v in scale.values_of_ranks(np.arange(2, scale.k + 1)) if round(v, 4) != v
                         and _ranks_rounded(scale, round(v, 4)))
            page.fill("#value", f"{value:.4f}")
            page.click("#rank-value")
            page.wait_for_function("document.getElementById('error').textContent.includes('decimals: 4')")
            page.check("#nearest")
            page.click("#rank-value")
            _ranked(page, 3)
            rank = int(scale.rank([round(value, 4)], decimals=4)[0])
            assert _result(page)[0] == rank and rank == int(scale.rank([value])[0])
            page.uncheck("#nearest")
            # a value that is not one: the service's message, shown
            page.fill("#value", "2")
            page.click("#rank-value")
            page.wait_for_function("document.getElementById('error').textContent.includes('not a value')")

            # graded: boxes go through 0..2; over truncated rankings a box may end the ranking
            page.select_option("#table", label=f"{GRADED} rb=(2,1)")
            page.wait_for_function(f"document.body.dataset.plotted === '{GRADED}|[2,1]'", timeout=15_000)
            assert page.input_value("#rb") == "2,1"
            boxes.nth(0).click()
            boxes.nth(0).click()
            boxes.nth(1).click()
            page.click("#rank-run")
            _ranked(page, 4)
            graded = store.scale(GRADED, (2, 1))
            assert _result(page)[:2] == (int(graded.rank_runs([[2, 1, 0, 0, 0]])[0]), graded.k)
            page.select_option("#table", label="RBPU(p=0.8)@6")
            page.wait_for_function("document.body.dataset.plotted === 'RBPU(p=0.8)@6|null'", timeout=15_000)
            boxes.nth(0).click()
            boxes.nth(1).click()
            boxes.nth(1).click()        # 0 -> 1 -> end of the ranking
            assert boxes.nth(1).inner_text() == "\u00b7"
            page.click("#rank-run")
            _ranked(page, 5)
            assert _result(page)[0] == int(store.scale("RBPU(p=0.8)@6").rank_runs([[1]])[0])

            assert problems == [] or all("422" in p for p in problems), problems  # the refused values only
            assert requests and all(url.startswith(server + "/") for url in requests), requests
        finally:
            browser.close()
