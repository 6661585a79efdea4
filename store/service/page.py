"""The page ``irscale serve`` shows at ``/``: a small research tool over the service's API.

One HTML document with its style sheet and plain JavaScript inline, loading nothing from
anywhere else (no CDN, no font, no image: the machine may have no internet). Its three
parts are package data files, ``static/page.html``, ``static/page.css`` and
``static/page.js``, put together once (:func:`_page`). It calls only the service's own
endpoints, under the ASGI root path the page is served with (:func:`page_html`):

* ``GET /v1/tables`` lists the store's tables (measure, N, REL, runs, distinct values,
  recall base);
* ``GET /v1/table`` gives a bounded view of the chosen scale, drawn on two canvases: the
  values against their unq ranks 1..K (the exact staircase when K is at most the number of
  points asked for, else the smallest and largest value of each bin of consecutive ranks),
  with the straight line of equally spaced values for comparison, and a histogram of the
  gaps between consecutive distinct values (log or linear bins) with the gap that equal
  spacing would give;
* ``POST /v1/rank`` ranks a run typed as N relevance boxes (a click raises a box's degree
  0..G and wraps; shift-click lowers it; over truncated rankings a box may also be the end
  of the ranking) or a typed value; the rank, K and the scaled value are shown and the
  point is marked on the plot. A click on the plot ranks the value of the rank under the
  pointer.

Elements the tests use: ``#tables`` (rows ``tr[data-table]``), ``#table`` (select),
``#rb``, ``#points``, ``#plot``, ``#gaps``, ``#boxes`` (``button.box``), ``#rank-run``,
``#value``, ``#rank-value``, ``#res-rank``, ``#res-k``, ``#res-scaled``, ``#error``; the
body's ``data-plotted`` names the view drawn (``measure|rb``) and ``data-ranked`` counts
the answers shown.
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
