"""The page script's URL, its body, and how its tag goes into a relayed HTML page."""

from __future__ import annotations

import hashlib
import html
import re
from pathlib import Path

# Below a view prefix, where the script is served. Dask serves nothing under a dot directory,
# and the name says whose it is.
PAGE_SCRIPT_PATH = "/.dashdock/page.js"
# A page bigger than this is relayed as it is (without the script): dashboards' plot pages are
# ~20 KB; this bounds what one request holds in memory.
MAX_PAGE_BYTES = 2 * 1024 * 1024

_HEAD_OPEN = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_BODY = (Path(__file__).with_name("page.js")).read_bytes()
_VERSION = hashlib.sha256(_BODY).hexdigest()[:16]


def page_script() -> bytes:
    """The script's body (read once: it ships with dashdock)."""
    return _BODY


def script_tag(view_prefix: str) -> bytes:
    """The tag that loads the script; the URL names the version, so it may be cached for good."""
    url = html.escape(f"{view_prefix}{PAGE_SCRIPT_PATH}?v={_VERSION}", quote=True)
    return f'<script src="{url}"></script>'.encode()


def with_script(page: bytes, tag: bytes) -> bytes:
    """``page`` with ``tag`` first in its head, before any of the page's scripts.

    The script must run before BokehJS loads (it hooks how Bokeh builds its shadow DOM). A page
    without a head element gets the tag at its very start, where a browser still runs it first.
    """
    head = _HEAD_OPEN.search(page)
    if head is None:
        return tag + page
    return page[: head.end()] + tag + page[head.end() :]
