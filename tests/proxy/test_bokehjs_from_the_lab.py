"""A framed page's scripts left inert for the page script to run, with BokehJS from the Lab.

The proxy changes a page only when a frame loads it (``Sec-Fetch-Dest: iframe``), only from its
first BokehJS tag on, and only when it has the whole page; the Lab's own route serves the local
BokehJS alone, to a signed-in user, cacheable for good.
"""

from __future__ import annotations

import gzip
import hashlib
import re
from collections.abc import Iterator

import pytest
from _raw_upstream import Connection, RawUpstream
from _support import Jupyter

from dashdock.proxy.bokehjs.serve import local_js_dir
from dashdock.proxy.page.deferral import defer_scripts
from dashdock.proxy.relay_handler import MAX_PAGE_BYTES

VERSION = "ab" * 64
FRAME = {"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Mode": "navigate"}
INERT = b'type="dashdock/deferred"'


def _tag(src: str) -> bytes:
    return f'<script src="{src}"></script>'.encode()


def test_scripts_from_the_first_bokehjs_tag_on_are_inert_and_keep_what_they_run() -> None:
    page = (
        b"<html><head><script>var early = 1;</script>"
        + _tag(f"static/js/bokeh.min.js?v={VERSION}")
        + _tag(f"static/js/bokeh-gl.min.js?v={VERSION}")
        + b'<script type="text/javascript">Bokeh.set_log_level("info");</script></head><body>'
        + b'<script type="application/json" id="data">{"a": "<script>"}</script>'
        + b"<script>const s = '<script src=evil.js>'; embed();</script>"
        + b"<SCRIPT SRC='other.js'></SCRIPT></body></html>"
    )
    deferred = defer_scripts(page)
    assert deferred is not None
    assert deferred.startswith(b"<html><head><script>var early = 1;</script>")  # before BokehJS: live
    assert deferred.count(INERT) == 5  # both BokehJS files, the two inline scripts, other.js
    assert b'<script type="dashdock/deferred" src="static/js/bokeh.min.js?v=' + VERSION.encode() in deferred
    assert b'<script type="dashdock/deferred">Bokeh.set_log_level("info");</script>' in deferred
    assert b'<script type="application/json" id="data">{"a": "<script>"}</script>' in deferred  # data
    # The text inside a script is never read as a tag, and is kept as it was.
    assert (
        b"<script type=\"dashdock/deferred\">const s = '<script src=evil.js>'; embed();</script>" in deferred
    )
    assert b"<SCRIPT type=\"dashdock/deferred\" SRC='other.js'></SCRIPT>" in deferred
    # Nothing else changed: take the inert types out and the page is what it was.
    assert deferred.replace(b" " + INERT, b"").replace(b' type="text/javascript"', b"") == page.replace(
        b' type="text/javascript"', b""
    )


@pytest.mark.parametrize(
    "page",
    [
        b"<html><head><script src='main.js'></script></head></html>",  # no BokehJS at all
        _tag("static/js/bokeh.min.js"),  # no version: not the file of a Bokeh page
        _tag(f"static/js/bokeh.min.js?v={VERSION[:20]}"),
        _tag(f"static/js/notbokeh.min.js?v={VERSION}"),
        b"<script>document.write('" + _tag(f"static/js/bokeh.min.js?v={VERSION}") + b"')</script>",
        # A module after BokehJS would run before the deferred scripts: the page loads as written.
        _tag(f"static/js/bokeh.min.js?v={VERSION}") + b'<script type="module">Bokeh.x()</script>',
    ],
)
def test_a_page_that_links_no_bokehjs_or_has_a_module_is_left_as_it_is(page: bytes) -> None:
    assert defer_scripts(page) is None


async def test_a_framed_dask_page_defers_its_scripts_and_a_tab_gets_them_live(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    source = await jupyter.add_source(dashboard_url)
    link = f"dashdock/proxy/{source['id']}/individual-task-stream"
    framed = await jupyter.proxied(link, headers=FRAME)
    assert framed.code == 200
    assert re.search(
        rb'<script type="dashdock/deferred" src="static/js/bokeh\.min\.js\?v=[0-9a-f]{128}"', framed.body
    )
    assert b"Bokeh.safely" in framed.body and b"<script>\n" not in framed.body.split(b"static/js/bokeh")[1]
    tab = await jupyter.proxied(link, headers={"Sec-Fetch-Dest": "document", "Sec-Fetch-Mode": "navigate"})
    assert tab.code == 200 and INERT not in tab.body and b'<script src="static/js/bokeh.min.js?v=' in tab.body


def _serving(body: bytes) -> Iterator[RawUpstream]:
    async def serve(connection: Connection) -> None:
        await connection.read_request_head()
        head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n"
        await connection.send(head.encode() + body)
        connection.hang_up()

    with RawUpstream(serve) as upstream:
        yield upstream


BIG_PAGE = (
    b"<html><head>"
    + _tag(f"static/js/bokeh.min.js?v={VERSION}")
    + b"</head><body>"
    + b"x" * MAX_PAGE_BYTES
    + b"<script>Bokeh.embed()</script></body></html>"
)


@pytest.fixture
def big_bokeh_page() -> Iterator[RawUpstream]:
    yield from _serving(BIG_PAGE)


async def test_a_page_too_big_to_hold_whole_is_relayed_with_live_scripts(
    jupyter: Jupyter, big_bokeh_page: RawUpstream
) -> None:
    page = await jupyter.proxied(f"dashdock/proxy/{big_bokeh_page.netloc}/status", headers=FRAME)
    assert page.code == 200
    assert INERT not in page.body  # deferring half a page would leave its later scripts without Bokeh
    assert page.body.endswith(b"<script>Bokeh.embed()</script></body></html>")
    assert b"/.dashdock/page.js?v=" in page.body  # still themed


def _local_file() -> tuple[str, bytes]:
    js_dir = local_js_dir()
    assert js_dir is not None
    path = js_dir / "bokeh.min.js"
    return path.name, path.read_bytes()


async def test_the_lab_gets_the_local_bokehjs_compressed_and_cacheable_for_good(jupyter: Jupyter) -> None:
    name, raw = _local_file()
    version = hashlib.sha512(raw).hexdigest()
    response = await jupyter.fetch(
        f"dashdock/bokehjs/{name}?v={version}", headers={"Accept-Encoding": "gzip"}, decompress=False
    )
    assert response.code == 200
    assert response.headers["Content-Encoding"] == "gzip" and gzip.decompress(response.body) == raw
    assert "immutable" in response.headers["Cache-Control"]
    assert response.headers["Content-Type"].startswith("text/javascript")
    assert response.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "dashdock/bokehjs/bokeh.min.js?v=" + "0" * 128,  # another version: the page loads its own
        "dashdock/bokehjs/bokeh.min.js",
        "dashdock/bokehjs/..%2f..%2fjupyter_server_config.json?v=" + "0" * 128,
        "dashdock/bokehjs/bokeh.js?v=" + "0" * 128,
    ],
)
async def test_nothing_but_a_local_bokehjs_file_is_served(jupyter: Jupyter, path: str) -> None:
    assert (await jupyter.fetch(path)).code == 404


async def test_the_lab_route_wants_a_signed_in_user(jupyter: Jupyter) -> None:
    name, raw = _local_file()
    response = await jupyter.fetch(f"dashdock/bokehjs/{name}?v={hashlib.sha512(raw).hexdigest()}", auth=False)
    assert response.code in (302, 403)
