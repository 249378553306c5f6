"""A framed page's scripts left inert, so that BokehJS can come from the Lab instead of the network.

A pane is an opaque origin, and the browser keeps no cache for it that outlives the page: every
pane opened would download BokehJS (about 1 MB compressed) again. So, for a page loaded in a frame,
the proxy turns each classic script from the page's first BokehJS tag on into an inert one
(``type="dashdock/deferred"``, its ``src`` or text kept), and dashdock's page script (loader.js)
runs them in document order once the page is parsed: BokehJS from the Lab, which fetched it once in
its own origin where the cache works, and everything else as the page named it.

Only a whole page is changed (a script left live after an inert BokehJS would run without it), and
nothing else in it: the page still loads what it loads, in its sandbox.
"""

from __future__ import annotations

import re

INERT_TYPE = b"dashdock/deferred"
_SCRIPT_OPEN = re.compile(rb"<script\b", re.IGNORECASE)
_SCRIPT_CLOSE = re.compile(rb"</script\s*>", re.IGNORECASE)
_TYPE_ATTRIBUTE = re.compile(rb"""\stype\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.IGNORECASE)
_SRC_ATTRIBUTE = re.compile(rb"""\ssrc\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.IGNORECASE)
# What a Bokeh page links BokehJS by: ``static/js/bokeh[-ext].min.js?v=<sha512>``, relative or not.
_BOKEHJS_SRC = re.compile(rb"(?:^|/)static/js/bokeh(?:-[a-z]+)?\.min\.js\?(?:[^#]*&)?v=[0-9a-f]{128}\b")
# The MIME types of a classic script (the HTML standard's list, the common ones).
_CLASSIC_TYPES = frozenset(
    {b"", b"text/javascript", b"application/javascript", b"application/x-javascript", b"text/ecmascript"}
)


def defer_scripts(page: bytes) -> bytes | None:
    """``page`` with its scripts from the first BokehJS tag on made inert; None when it links no BokehJS.

    Tags are found by a scan that skips each script's text (which may hold ``<script`` in a string).
    """
    tags = list(_script_tags(page))
    first = next((i for i, (start, end) in enumerate(tags) if _links_bokehjs(page[start:end])), None)
    if first is None or any(_is_module(page[start:end]) for start, end in tags[first:]):
        # A module runs before the loader does (modules run as parsing ends): the page is left to
        # load as it was written rather than run in another order.
        return None
    out = bytearray()
    done = 0
    for start, end in tags[first:]:
        tag = page[start:end]
        if _is_classic(tag):
            out += page[done:start] + _inert(tag)
            done = end
    return bytes(out + page[done:])


def _script_tags(page: bytes) -> list[tuple[int, int]]:
    """Where each ``<script ...>`` opening tag starts and ends."""
    found = []
    position = 0
    while match := _SCRIPT_OPEN.search(page, position):
        end = page.find(b">", match.end())
        if end < 0:
            break
        found.append((match.start(), end + 1))
        close = _SCRIPT_CLOSE.search(page, end + 1)
        if close is None:
            break
        position = close.end()
    return found


def _attribute(pattern: re.Pattern[bytes], tag: bytes) -> bytes | None:
    match = pattern.search(tag)
    return None if match is None else next(group for group in match.groups() if group is not None)


def _links_bokehjs(tag: bytes) -> bool:
    src = _attribute(_SRC_ATTRIBUTE, tag)
    return src is not None and _BOKEHJS_SRC.search(src.replace(b"&amp;", b"&")) is not None


def _is_classic(tag: bytes) -> bool:
    kind = _attribute(_TYPE_ATTRIBUTE, tag)
    return kind is None or kind.strip().lower() in _CLASSIC_TYPES


def _is_module(tag: bytes) -> bool:
    kind = _attribute(_TYPE_ATTRIBUTE, tag)
    return kind is not None and kind.strip().lower() == b"module"


def _inert(tag: bytes) -> bytes:
    """The tag with its type set to the inert one (any JavaScript type it named replaced)."""
    without_type = _TYPE_ATTRIBUTE.sub(b"", tag, count=1)
    return without_type[: len(b"<script")] + b' type="' + INERT_TYPE + b'"' + without_type[len(b"<script") :]
