"""The page ``irscale serve`` shows at ``/``: a small research tool over the service's API
(docs/service.md), loading nothing from anywhere else (no CDN, font or image). Its parts are
package data files, ``static/page.html``, ``page.css`` and ``page.js``, put together once
(:func:`_page`); it calls only ``GET /v1/tables``, ``GET /v1/table`` and ``POST /v1/rank``
under the ASGI root path it is served with (:func:`page_html`). Elements the tests use:
``#tables`` (rows ``tr[data-table]``), ``#table``, ``#rb``, ``#points``, ``#plot``, ``#gaps``,
``#boxes`` (``button.box``), ``#rank-run``, ``#value``, ``#rank-value``, ``#res-rank``,
``#res-k``, ``#res-scaled``, ``#error``; the body's ``data-plotted`` names the view drawn
(``measure|rb``) and ``data-ranked`` counts the answers shown.
"""
from __future__ import annotations

import functools
import html
import json
import textwrap
from importlib import resources


def _static(name: str) -> str:
    return (resources.files(__package__) / "static" / name).read_text(encoding="utf-8")


@functools.cache
def _page() -> str:
    """The page: ``static/page.html`` with the style sheet (indented as the document's other
    lines) and the script in place of its lines ``__PAGE_CSS__`` and ``__PAGE_JS__``;
    ``__ROOT_JSON__`` and ``__ROOT_HTML__`` stand for the root path (see :func:`page_html`)."""
    return (_static("page.html").replace("__PAGE_CSS__\n", textwrap.indent(_static("page.css"), "  "))
            .replace("__PAGE_JS__\n", _static("page.js")))


def page_html(root: str = "") -> str:
    """The page (:func:`_page`) for a service mounted at the root path ``root`` (``""`` or
    ``/prefix``): every URL it calls or links to starts with it."""
    root = root.rstrip("/")
    as_json = json.dumps(root).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _page().replace("__ROOT_JSON__", as_json).replace("__ROOT_HTML__", html.escape(root, quote=True))
