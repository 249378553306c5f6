"""dashdock's page script: first in the head of every page a view serves, and nowhere else."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator

import pytest
from _raw_upstream import Connection, RawUpstream
from _support import Jupyter

from dashdock.proxy.page.script import PAGE_SCRIPT_PATH, page_script, script_tag, with_script

TAG = re.compile(rb'<script src="([^"]+/\.dashdock/page\.js\?v=[0-9a-f]{16})"></script>')


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        (b"<html><head><title>x</title>", b"<html><head>TAG<title>x</title>"),
        (b'<HTML><HEAD lang="en"><script src=a>', b'<HTML><HEAD lang="en">TAG<script src=a>'),
        (b"<header>no head</header>", b"TAG<header>no head</header>"),  # <header> is not <head>
        (b"<!DOCTYPE html>\n<p>x", b"<!DOCTYPE html>TAG\n<p>x"),  # after the doctype: no quirks mode
        (b"", b"TAG"),
    ],
)
def test_the_tag_goes_into_the_first_chunk_before_any_script(page: bytes, expected: bytes) -> None:
    assert with_script(page, b"TAG") == expected


def test_the_tag_cannot_break_out_of_its_attribute() -> None:
    tag = script_tag('/base/"><img src=x onerror=alert(1)>/')
    assert b"<img" not in tag and b"&quot;&gt;&lt;img" in tag


async def test_a_dashboard_page_loads_the_page_script_before_bokeh(
    jupyter: Jupyter, dashboard_url: str
) -> None:
    source = await jupyter.add_source(dashboard_url)
    page = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-task-stream")
    assert page.code == 200
    body = page.body
    found = TAG.search(body)
    assert found is not None, body[:600]
    assert found.start() < body.index(b"static/js/bokeh"), "the page script must run before BokehJS"
    assert page.headers.get("Content-Length") in (None, str(len(body)))  # never the upstream's, now short

    # The script is served under the page's own view prefix (same capability, same sandbox).
    script = await jupyter.fetch(found.group(1).decode(), auth=False, absolute=True)
    assert script.code == 200
    assert script.body == page_script()
    assert script.headers["Content-Type"].startswith("text/javascript")
    assert "sandbox" in script.headers["Content-Security-Policy"]
    assert "immutable" in script.headers["Cache-Control"]


async def test_scripts_and_data_pass_unchanged(jupyter: Jupyter, dashboard_url: str) -> None:
    source = await jupyter.add_source(dashboard_url)
    plots = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-plots.json")
    assert plots.code == 200 and b"page.js" not in plots.body


async def test_the_script_path_needs_a_valid_view_capability(jupyter: Jupyter, dashboard_url: str) -> None:
    source = await jupyter.add_source(dashboard_url)
    forged = await jupyter.fetch(
        f"dashdock/view/{source['id']}/not-a-capability{PAGE_SCRIPT_PATH}", auth=False
    )
    assert forged.code == 403


def _serving(head: bytes, body: bytes) -> Iterator[RawUpstream]:
    async def serve(connection: Connection) -> None:
        await connection.read_request_head()
        await connection.send(head + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        connection.hang_up()

    with RawUpstream(serve) as upstream:
        yield upstream


@pytest.fixture
def gzipped_page() -> Iterator[RawUpstream]:
    yield from _serving(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n",
        gzip.compress(b"<html><head></head><body>compressed</body></html>"),
    )


@pytest.fixture
def big_page() -> Iterator[RawUpstream]:
    yield from _serving(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n",
        b"<html><head></head><body>" + b"x" * (8 * 1024 * 1024) + b"</body></html>",
    )


async def test_a_compressed_page_is_relayed_as_it_is(jupyter: Jupyter, gzipped_page: RawUpstream) -> None:
    page = await jupyter.proxied(f"dashdock/proxy/{gzipped_page.netloc}/status", decompress=False)
    assert page.code == 200
    assert gzip.decompress(page.body) == b"<html><head></head><body>compressed</body></html>"


async def test_a_big_page_streams_whole_with_the_script(jupyter: Jupyter, big_page: RawUpstream) -> None:
    page = await jupyter.proxied(f"dashdock/proxy/{big_page.netloc}/status")
    assert page.code == 200
    tag = TAG.search(page.body)
    assert tag is not None and page.body.startswith(b"<html><head><script")
    without = page.body[: tag.start()] + page.body[tag.end() :]
    assert without == b"<html><head></head><body>" + b"x" * (8 * 1024 * 1024) + b"</body></html>"
