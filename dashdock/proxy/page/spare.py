"""The spare page: a blank page of a source's view URL with BokehJS already run, kept by the Lab.

Opening a plot in a tab parses about 1 MB of BokehJS before anything is drawn; a pane need not. The
Lab keeps one spare frame per recently used source, loaded with this page while the browser is idle:
dashdock's page script and BokehJS (which the Lab gives, see loader.js), nothing else. When the user
opens a plot, the Lab moves the spare into the new pane without reloading it and hands it the plot's
page, fetched through the proxy; the page script (spare.js) puts that page in place and runs its
scripts, BokehJS excepted. So a pane draws as soon as its document arrives.

The spare is a proxied page like any other: same view URL, same sandbox, same confinement, so what
it later shows can do nothing a page loaded the usual way could not.
"""

from __future__ import annotations

import html

from dashdock.proxy.page.deferral import INERT_TYPE
from dashdock.proxy.page.script import script_tag

SPARE_PAGE_PATH = "/.dashdock/spare"
# The files a Bokeh server's page links, in its order (Dask's pages and dashdock's drawn ones).
SPARE_BOKEHJS = (
    "bokeh.min.js",
    "bokeh-gl.min.js",
    "bokeh-widgets.min.js",
    "bokeh-tables.min.js",
    "bokeh-mathjax.min.js",
)


def spare_page(view_prefix: str, files: list[tuple[str, str]]) -> bytes:
    """The page under ``view_prefix`` (no trailing slash): each BokehJS file (name, sha512) linked
    as a dashboard's page links it, left inert for the loader to run."""
    links = (
        html.escape(f"{view_prefix}/static/js/{name}?v={version}", quote=True) for name, version in files
    )
    tags = "\n".join(f'<script type="{INERT_TYPE.decode()}" src="{src}"></script>' for src in links)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"{script_tag(view_prefix).decode()}\n{tags}\n</head>\n<body></body>\n</html>\n"
    ).encode()
