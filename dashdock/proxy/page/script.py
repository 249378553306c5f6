"""The page script's URL, its body, and how its tag goes into a relayed HTML page."""

from __future__ import annotations

import gzip
import hashlib
import html
import re
from pathlib import Path

# Below a view prefix, where the script is served. Dask serves nothing under a dot directory,
# and the name says whose it is.
PAGE_SCRIPT_PATH = "/.dashdock/page.js"
_HEAD_OPEN = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_DOCTYPE = re.compile(rb"^\s*<!doctype[^>]*>", re.IGNORECASE)
# The theme (page.js) and the loader of deferred scripts (loader.js, deferral.py): one file to load.
_BODY = b"\n".join((Path(__file__).with_name(name)).read_bytes() for name in ("page.js", "loader.js"))
_VERSION = hashlib.sha256(_BODY).hexdigest()[:16]
_GZIPPED = gzip.compress(_BODY, compresslevel=9, mtime=0)


def page_script() -> bytes:
    """The script's body (read once: it ships with dashdock)."""
    return _BODY


def page_script_gzipped() -> bytes:
    return _GZIPPED


def page_script_version() -> str:
    return _VERSION


def script_tag(view_prefix: str) -> bytes:
    """The tag that loads the script; the URL names the version, so it may be cached for good."""
    url = html.escape(f"{view_prefix}{PAGE_SCRIPT_PATH}?v={_VERSION}", quote=True)
    return f'<script src="{url}"></script>'.encode()


def with_script(first_chunk: bytes, tag: bytes) -> bytes:
    """The first chunk of a page with ``tag`` where it runs before any of the page's scripts.

    After the opening ``<head>`` when the chunk holds it (a dashboard's page arrives in one chunk);
    else after the doctype, so the page keeps standards mode; else first. Only the first chunk is
    looked at, so a page streams through as it is sent and nothing is held in memory.
    """
    for anchor in (_HEAD_OPEN.search(first_chunk), _DOCTYPE.search(first_chunk)):
        if anchor is not None:
            return first_chunk[: anchor.end()] + tag + first_chunk[anchor.end() :]
    return tag + first_chunk


def with_proxied_static(head: bytes, upstream_root: str, proxy_prefix: str) -> bytes:
    """``head`` with links to the server's ``{upstream_root}/static/`` going through the proxy.

    ``bokeh serve`` links its BokehJS by root-absolute URLs (``/static/js/bokeh.min.js``), which a
    proxied page would load from the Jupyter server; Dask's pages link them relatively.
    """
    pattern = re.compile(
        rb"""(\b(?:src|href)\s*=\s*["'])""" + re.escape(upstream_root.encode() + b"/static/")
    )
    return pattern.sub(lambda match: match.group(1) + proxy_prefix.rstrip("/").encode() + b"/static/", head)
