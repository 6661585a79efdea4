"""The interactive docs of the HTTP lookup service work offline: /docs (Swagger UI) and
/redoc (ReDoc) reference no external URL, and every script, style sheet and icon they
load is served by the service itself."""
import warnings
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest

import irscale
from irscale.service import create_app

with warnings.catch_warnings():  # starlette asks for httpx2, which this project does not use
    warnings.filterwarnings("ignore", message=".*httpx2")
    from fastapi.testclient import TestClient

PAGES = ["/docs", "/redoc"]


@pytest.fixture(scope="module")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("service_docs") / "t.h5"
    irscale.build_store(path, "P@4", n_jobs=1)
    return path


@pytest.fixture(scope="module")
def client(store_path):
    with TestClient(create_app(store_path)) as c:
        yield c


class _Refs(HTMLParser):
    """The src= and href= attributes of a page, as (tag, attribute, rel, url)."""

    def __init__(self):
        super().__init__()
        self.refs = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href"):
            if attrs.get(name):
                self.refs.append((tag, name, attrs.get("rel") or "", attrs[name]))


def _page(client, path):
    r = client.get(path)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    parser = _Refs()
    parser.feed(r.text)
    return r.text, parser.refs


@pytest.mark.parametrize("page", PAGES)
def test_docs_page_references_no_external_url(client, page):
    html, refs = _page(client, page)
    assert refs, f"{page} loads no script or style sheet"
    for tag, attr, _rel, url in refs:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"{page}: <{tag} {attr}={url!r}> is not served locally"
        assert url.startswith("/"), url
    # nor anywhere else in the page (inline script, comments): no CDN, no fonts, no validator
    for needle in ("http://", "https://", "//cdn", "jsdelivr", "unpkg", "googleapis"):
        assert needle not in html, f"{page} mentions {needle!r}"


def test_swagger_ui_page_loads_the_local_bundle_and_openapi(client):
    html, refs = _page(client, "/docs")
    scripts = {url for tag, attr, _, url in refs if tag == "script" and attr == "src"}
    styles = {url for tag, _, rel, url in refs if tag == "link" and "stylesheet" in rel}
    assert any(url.endswith("swagger-ui-bundle.js") for url in scripts), scripts
    assert any(url.endswith("swagger-ui.css") for url in styles), styles
    assert "url: '/openapi.json'" in html
    assert client.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize("page", PAGES)
def test_every_asset_of_the_docs_is_served_by_the_app(client, page):
    _, refs = _page(client, page)
    kinds = {"js": "javascript", "css": "text/css", "png": "image/png"}
    for _tag, _attr, _rel, url in refs:
        r = client.get(url)
        assert r.status_code == 200, (url, r.status_code)
        assert len(r.content) > 500, (url, len(r.content))
        suffix = url.rsplit(".", 1)[-1]
        assert kinds[suffix] in r.headers["content-type"], (url, r.headers["content-type"])


def test_docs_pages_are_not_part_of_the_api_description(client):
    paths = set(client.get("/openapi.json").json()["paths"])
    assert not {"/docs", "/redoc"} & paths and not any(p.startswith("/docs-assets") for p in paths)


def test_unknown_asset_is_a_json_404(client):
    r = client.get("/docs-assets/no-such-file.js")
    assert r.status_code == 404
    assert r.headers["content-type"] == "application/json"
    error = r.json()["error"]
    assert error["type"] == "NotFound" and "/docs" in error["message"]
    r = client.get("/no-such-path")
    assert r.status_code == 404 and "the API is described at /docs" in r.json()["error"]["message"]


def test_docs_honour_the_root_path(store_path):
    with TestClient(create_app(store_path), root_path="/irscale") as c:
        html, refs = _page(c, "/docs")
    assert refs and all(url.startswith("/irscale/") for _, _, _, url in refs), refs
    assert "url: '/irscale/openapi.json'" in html
