"""The proxy relays a real Dask dashboard: plot pages, their scripts, Bokeh websockets, redirects."""

from __future__ import annotations

import asyncio
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from _bokeh import receive, send_pull_doc_request, session_token
from _support import (
    SANDBOX_POLICY,
    Jupyter,
    RecordingUpstream,
    closed_loopback_port,
    resolve,
    sandbox_policies,
    view_root,
    wait_for,
    websocket_refusal,
)
from tornado.httpclient import HTTPRequest, HTTPResponse
from traitlets.config import Config


@pytest.fixture
def source(
    jupyter: Jupyter, dashboard_url: str, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> dict[str, Any]:
    """The scheduler's dashboard, added as a source."""
    return jp_asyncio_loop.run_until_complete(jupyter.add_source(dashboard_url))


async def _task_stream_page(jupyter: Jupyter, source: dict[str, Any]) -> HTTPResponse:
    response = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-task-stream")
    assert response.code == 200, response.body[:500]
    return response


async def test_a_plot_page_comes_through_and_may_be_framed_by_lab(
    jupyter: Jupyter, source: dict[str, Any]
) -> None:
    response = await _task_stream_page(jupyter, source)
    assert response.headers["Content-Type"].startswith("text/html")
    page = response.body.decode()
    assert re.search(r"<script[^>]+src=\"[^\"]*bokeh[^\"]*\.js", page), page[:1000]
    assert "frame-ancestors 'self'" in response.headers["Content-Security-Policy"]
    assert "X-Frame-Options" not in response.headers


async def test_the_scripts_of_a_plot_page_come_through_and_are_cacheable(
    jupyter: Jupyter, source: dict[str, Any]
) -> None:
    response = await _task_stream_page(jupyter, source)
    (script,) = re.findall(r'src="([^"]*bokeh\.min\.js[^"]*)"', response.body.decode())
    script_url = resolve(response.effective_url, script)
    assert script_url.startswith(jupyter.origin + view_root(response) + "/")
    script_path = script_url.removeprefix(jupyter.origin)

    js = await jupyter.fetch(script_path, absolute=True, auth=False)
    assert js.code == 200
    assert "javascript" in js.headers["Content-Type"]
    assert len(js.body) > 100_000
    assert b"Bokeh" in js.body
    # Cacheable: a lifetime, or at least revalidation that costs no body.
    cache_control = js.headers.get("Cache-Control", "")
    assert "no-store" not in cache_control
    assert "max-age=" in cache_control or "Etag" in js.headers
    if "Etag" in js.headers:
        cached = await jupyter.fetch(
            script_path, absolute=True, headers={"If-None-Match": js.headers["Etag"]}, auth=False
        )
        assert cached.code == 304
        assert cached.body == b""


async def test_the_bokeh_script_is_sent_compressed_to_a_browser_that_accepts_gzip(
    jupyter: Jupyter, source: dict[str, Any]
) -> None:
    response = await _task_stream_page(jupyter, source)
    (script,) = re.findall(r'src="(static/js/bokeh\.min\.js[^"]*)"', response.body.decode())
    js = await jupyter.proxied(
        f"dashdock/proxy/{source['id']}/{script}", headers={"Accept-Encoding": "gzip"}, decompress=False
    )
    assert js.code == 200
    assert js.headers.get("Content-Encoding") == "gzip"
    assert b"Bokeh" in gzip.decompress(js.body)


async def test_a_plot_websocket_completes_the_bokeh_handshake(
    jupyter: Jupyter, source: dict[str, Any]
) -> None:
    response = await _task_stream_page(jupyter, source)
    token = session_token(response.body.decode())

    # As the sandboxed page opens it: under its view URL, from the opaque origin, with no token.
    connection = await jupyter.websocket(
        view_root(response) + "/individual-task-stream/ws",
        headers={"Origin": "null"},
        subprotocols=["bokeh", token],
        auth=False,
        absolute=True,
    )
    try:
        assert connection.selected_subprotocol == "bokeh"
        ack = await receive(connection)
        assert ack.msgtype == "ACK"

        await send_pull_doc_request(connection)
        reply = await receive(connection)
        assert reply.msgtype == "PULL-DOC-REPLY"
        assert reply.header["reqid"] == "1"
        assert reply.content["doc"]["roots"], reply.content["doc"].keys()
    finally:
        connection.close()


async def test_a_dashboard_can_be_reached_by_host_and_port(jupyter: Jupyter, dashboard_url: str) -> None:
    netloc = dashboard_url.removeprefix("http://")
    response = await jupyter.proxied(f"dashdock/proxy/{netloc}/individual-plots.json")
    assert response.code == 200
    plots = json.loads(response.body)
    assert plots["Individual Task Stream"] == "/individual-task-stream"


@pytest.mark.parametrize("by", ["id", "host:port"])
async def test_the_dashboard_redirect_to_status_stays_in_the_proxy(
    jupyter: Jupyter, source: dict[str, Any], dashboard_url: str, by: str
) -> None:
    segment = source["id"] if by == "id" else dashboard_url.removeprefix("http://")
    response = await jupyter.proxied(f"dashdock/proxy/{segment}/")
    assert response.code in (301, 302)
    assert view_root(response).startswith(jupyter.path(f"dashdock/view/{segment}/"))
    assert response.headers["Location"] == view_root(response) + "/status"
    status_page = await jupyter.fetch(response.headers["Location"], absolute=True, auth=False)
    assert status_page.code == 200


async def test_a_source_under_a_path_is_proxied_from_its_root(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    # A dashboard typed with a page path: the proxy maps the source id onto the dashboard root.
    source = await jupyter.add_source(f"{recorder.url}/echo")
    assert source["url"] == recorder.url
    response = await jupyter.proxied(f"dashdock/proxy/{source['id']}/some/page?a=1&b=two%20words")
    assert response.code == 200
    (seen,) = [seen for seen in recorder.seen if seen.path == "/some/page"]
    assert seen.query == "a=1&b=two%20words"


async def test_a_form_post_reaches_the_dashboard_with_its_body(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    response = await jupyter.proxied(
        f"dashdock/proxy/{recorder.netloc}/submit",
        method="POST",
        body=b"x=1&y=2",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.code == 200
    assert json.loads(response.body) == {"received": "POST /submit"}
    (seen,) = recorder.seen
    assert seen.body == b"x=1&y=2"
    assert seen.header("Content-Type") == "application/x-www-form-urlencoded"


async def test_a_dashboard_that_forbids_framing_is_still_framed_by_lab(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/framing")
    assert response.code == 200
    assert "X-Frame-Options" not in response.headers
    assert sandbox_policies(response) == [SANDBOX_POLICY]


async def test_websocket_messages_pass_both_ways_whatever_their_size(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    connection = await jupyter.websocket(
        f"dashdock/proxy/{recorder.netloc}/ws", subprotocols=["bokeh", "abc"]
    )
    try:
        assert connection.selected_subprotocol == "bokeh"
        (upgrade,) = [seen for seen in recorder.seen if seen.websocket]
        offered = upgrade.header("Sec-WebSocket-Protocol") or ""
        assert [protocol.strip() for protocol in offered.split(",")] == ["bokeh", "abc"]
        for message in ("hello", b"\x00\x01binary", "x" * (12 * 1024 * 1024)):
            await connection.write_message(message, binary=isinstance(message, bytes))
            assert await connection.read_message() == message
    finally:
        connection.close()


async def test_the_dashboard_closing_its_websocket_closes_the_browser_side(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws")
    try:
        await connection.write_message("close")
        assert await connection.read_message() is None
        assert connection.close_code == 1000
    finally:
        connection.close()


async def test_the_browser_closing_its_websocket_closes_the_dashboard_side(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws")
    await connection.write_message("ping")
    assert await connection.read_message() == "ping"
    assert not recorder.websocket_closed.is_set()
    connection.close()
    assert await wait_for(recorder.websocket_closed)


async def test_a_websocket_to_a_dashboard_that_is_gone_is_a_bad_gateway(jupyter: Jupyter) -> None:
    with closed_loopback_port() as sock:
        port = sock.getsockname()[1]
        assert await websocket_refusal(jupyter, f"dashdock/proxy/127.0.0.1:{port}/ws") == 502
        response = await jupyter.proxied(f"dashdock/proxy/127.0.0.1:{port}/status")
    assert response.code == 502
    assert b"could not be reached" in response.body


async def test_a_dashboard_under_a_path_keeps_redirects_inside_that_path(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    source = await jupyter.add_source(f"{recorder.url}/sub/dash/status")
    assert source["url"] == f"{recorder.url}/sub/dash"
    page = await jupyter.proxied(f"dashdock/proxy/{source['id']}/individual-plots.json")
    assert page.code == 200
    assert recorder.seen[-1].path == "/sub/dash/individual-plots.json"
    prefix = view_root(page)

    for to, expected in (("/sub/dash/status", f"{prefix}/status"), ("status?x=1", f"{prefix}/status?x=1")):
        response = await jupyter.fetch(f"{prefix}/redirect?to={to}", absolute=True, auth=False)
        assert (response.code, response.headers.get("Location")) == (302, expected)
    outside = await jupyter.proxied(f"dashdock/proxy/{source['id']}/redirect?to=/elsewhere")
    assert outside.code == 502
    assert "Location" not in outside.headers


async def test_a_dashboard_path_that_is_not_a_websocket_is_a_bad_gateway(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    assert await websocket_refusal(jupyter, f"dashdock/proxy/{recorder.netloc}/not-a-websocket") == 502


class TestUnderADeploymentThatForbidsFraming:
    """JupyterHub 4.1+ forbids framing of the server's pages; plot panes must still show in Lab."""

    @pytest.fixture
    def jp_server_config(self, sources_file: Path) -> Config:
        headers = {"Content-Security-Policy": "frame-ancestors 'none'"}
        return Config(
            {
                "ServerApp": {
                    "jpserver_extensions": {"dashdock": True},
                    "tornado_settings": {"headers": headers},
                },
                "DashdockApp": {"sources_file": str(sources_file)},
            }
        )

    async def test_a_plot_page_may_still_be_framed_by_lab(
        self, jupyter: Jupyter, source: dict[str, Any]
    ) -> None:
        response = await _task_stream_page(jupyter, source)
        policies = sandbox_policies(response)
        assert policies == [SANDBOX_POLICY]
        # Jupyter's own pages keep the deployment's policy.
        own = await jupyter.fetch("api/status")
        assert "frame-ancestors 'none'" in own.headers["Content-Security-Policy"]


async def test_a_response_streams_to_the_browser_as_the_dashboard_sends_it(
    jupyter: Jupyter, recorder: RecordingUpstream
) -> None:
    # The dashboard sends the rest only once the browser has the first chunk: a buffering proxy deadlocks.
    chunks: list[bytes] = []

    def on_chunk(chunk: bytes) -> None:
        chunks.append(chunk)
        if b"first-chunk;" in b"".join(chunks):
            recorder.first_chunk_seen.set()

    request = HTTPRequest(
        jupyter.url(f"dashdock/proxy/{recorder.netloc}/stream"),
        headers={"Authorization": f"token {jupyter.token}"},
        streaming_callback=on_chunk,
        request_timeout=30,
    )
    response = await jupyter.client.fetch(request, raise_error=False)
    assert response.code == 200
    # An HTML page streams too: dashdock's page script goes into its first chunk.
    assert b"".join(chunks).endswith(b"></script>first-chunk;released")


async def test_a_head_request_gets_the_headers_only(jupyter: Jupyter, recorder: RecordingUpstream) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/page", method="HEAD")
    assert response.code == 200
    assert response.body == b""
    assert [(seen.method, seen.path) for seen in recorder.seen] == [("HEAD", "/page")]


async def test_a_missing_dashboard_page_is_the_dashboard_s_own_404(
    jupyter: Jupyter, source: dict[str, Any]
) -> None:
    response = await jupyter.proxied(f"dashdock/proxy/{source['id']}/no-such-page")
    assert response.code == 404
    assert b"jp-dashdock-error" not in response.body
