"""A dashboard that fails (refuses, hangs, hangs up mid-answer, speaks garbage) gives the browser a clear,
bounded answer, and the server logs one quiet line for it: no traceback storm, and it keeps serving.

("Closing the browser side closes the upstream" is in test_proxy.py.)
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from _raw_upstream import Connection, RawUpstream, forever
from _support import Jupyter, RecordingUpstream, closed_loopback_port
from tornado.httpclient import HTTPClientError, HTTPRequest, HTTPResponse
from tornado.websocket import WebSocketClientConnection, websocket_connect

# Longer than any timeout configured below, far shorter than the defaults (60 s, aiohttp's 300 s).
DEADLINE = 6.0
MARKUP = "%3Cscript%3Ealert(1)%3C/script%3E"  # a path segment a hostile page might link to


@pytest.fixture
def dashdock_config() -> dict[str, Any]:
    return {"connect_timeout": 1.0, "read_timeout": 1.0}


class ServerLog(logging.Handler):
    """Every record the server under test logs while a test runs (each record once)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not any(seen is record for seen in self.records):
            self.records.append(record)

    @staticmethod
    def _is_access_line(record: logging.LogRecord) -> bool:
        # jupyter_server's log_request: the access line (and, for 5xx but 502, a header dump).
        return record.pathname.replace("\\", "/").endswith("jupyter_server/log.py")

    def lines(self) -> list[str]:
        return [f"{record.name}: {record.getMessage()}" for record in self.records]

    def assert_quiet(self, failed_requests: int) -> None:
        """No traceback anywhere, and at most one line (besides the access log) per failed request."""
        noisy = [
            record
            for record in self.records
            if record.exc_info
            or "Traceback" in record.getMessage()
            or "Uncaught exception" in record.getMessage()
            or "Task exception was never retrieved" in record.getMessage()
        ]
        assert noisy == [], [f"{r.name}: {r.getMessage()} {r.exc_info}" for r in noisy]
        diagnostic = [
            record
            for record in self.records
            if record.levelno >= logging.INFO and not self._is_access_line(record)
        ]
        assert len(diagnostic) <= failed_requests, self.lines()


@pytest.fixture
def server_log(jupyter: Jupyter, jp_serverapp: Any) -> Iterator[ServerLog]:
    (dashdock_app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    log = ServerLog()
    loggers = {
        logging.getLogger(),
        jp_serverapp.log,
        dashdock_app.log,
        logging.getLogger("tornado.application"),
        logging.getLogger("tornado.general"),
        logging.getLogger("tornado.access"),
        logging.getLogger("asyncio"),
        logging.getLogger("aiohttp"),
    }
    for logger in loggers:
        logger.addHandler(log)
    yield log
    for logger in loggers:
        logger.removeHandler(log)


def assert_clean_error_page(response: HTTPResponse, status: int, says: str) -> str:
    """A short, escaped dashdock page with the status and a message a person understands."""
    assert response.code == status, (response.code, response.body[:500])
    assert response.headers["Content-Type"].startswith("text/html")
    body = response.body.decode()
    assert "jp-dashdock-error" in body
    assert says in body, body
    lowered = body.lower()
    for leak in ("traceback", 'file "', "<script", "%3cscript", "aiohttp", "exception"):
        assert leak not in lowered, body
    return body


async def open_websocket(jupyter: Jupyter, path: str) -> WebSocketClientConnection | int:
    """Open a websocket through the proxy within the deadline; the HTTP status if it was refused.

    599 means the browser gave up: the server neither upgraded nor answered in time.
    """
    request = HTTPRequest(
        f"ws://127.0.0.1:{jupyter.port}{jupyter.path(path)}",
        headers={"Authorization": f"token {jupyter.token}"},
        connect_timeout=DEADLINE,
        request_timeout=DEADLINE,
    )
    try:
        return await websocket_connect(request)
    except HTTPClientError as exc:
        return exc.code


async def fetch_or_error(jupyter: Jupyter, path: str) -> HTTPResponse | Exception:
    """A GET within the deadline; a connection error (a cut response) is returned, not raised."""
    try:
        return await asyncio.wait_for(jupyter.proxied(path), DEADLINE + 5)
    except (OSError, HTTPClientError) as exc:
        return exc


async def assert_still_serving(jupyter: Jupyter, recorder: RecordingUpstream) -> None:
    page = await jupyter.proxied(f"dashdock/proxy/{recorder.netloc}/after-the-fault")
    assert page.code == 200, page.body[:500]
    assert (await jupyter.fetch("api/status")).code == 200


# -- refused ----------------------------------------------------------------------------------


async def test_a_dashboard_that_refuses_connections_is_a_bad_gateway_naming_it(
    jupyter: Jupyter, server_log: ServerLog
) -> None:
    with closed_loopback_port() as sock:
        netloc = f"127.0.0.1:{sock.getsockname()[1]}"
        response = await jupyter.proxied(f"dashdock/proxy/{netloc}/status/{MARKUP}?q=<b>x</b>")
        upgrade = await open_websocket(jupyter, f"dashdock/proxy/{netloc}/ws")
    assert_clean_error_page(response, 502, f"The dashboard at {netloc} could not be reached")
    assert upgrade == 502
    server_log.assert_quiet(failed_requests=2)


# -- hangs ------------------------------------------------------------------------------------


@pytest.fixture
def hanging() -> Iterator[RawUpstream]:
    """Accepts connections, reads the request, and never answers."""

    async def serve(connection: Connection) -> None:
        await connection.read_request_head()
        await forever()

    with RawUpstream(serve) as upstream:
        yield upstream


async def test_a_dashboard_that_never_answers_is_a_gateway_timeout_after_read_timeout(
    jupyter: Jupyter, hanging: RawUpstream, recorder: RecordingUpstream, server_log: ServerLog
) -> None:
    response = await fetch_or_error(jupyter, f"dashdock/proxy/{hanging.netloc}/status/{MARKUP}")
    assert isinstance(response, HTTPResponse), f"the browser got no answer: {response!r}"
    assert_clean_error_page(response, 504, f"The dashboard at {hanging.netloc} did not answer in time")
    assert hanging.accepted == 1
    server_log.assert_quiet(failed_requests=1)
    await assert_still_serving(jupyter, recorder)


async def test_a_websocket_to_a_dashboard_that_never_answers_fails_instead_of_hanging(
    jupyter: Jupyter, hanging: RawUpstream, server_log: ServerLog
) -> None:
    status = await open_websocket(jupyter, f"dashdock/proxy/{hanging.netloc}/ws")
    assert hanging.accepted == 1
    assert status in (502, 504), f"the upgrade got {status} (599: no answer within {DEADLINE} s)"
    server_log.assert_quiet(failed_requests=1)


# -- hangs up mid-body ------------------------------------------------------------------------


@pytest.fixture
def cut_short() -> Iterator[RawUpstream]:
    """Promises a megabyte, sends ten bytes, hangs up."""

    async def serve(connection: Connection) -> None:
        await connection.read_request_head()
        await connection.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n0123456789"
        )
        connection.hang_up()

    with RawUpstream(serve) as upstream:
        yield upstream


async def test_a_dashboard_that_hangs_up_mid_body_cuts_the_browser_response(
    jupyter: Jupyter, cut_short: RawUpstream, recorder: RecordingUpstream, server_log: ServerLog
) -> None:
    response = await fetch_or_error(jupyter, f"dashdock/proxy/{cut_short.netloc}/big")
    # Never a complete-looking 200 with a silently short body: the browser must see the failure.
    if isinstance(response, HTTPResponse):
        assert response.code != 200, f"a complete 200 with {len(response.body)} bytes"
        assert_clean_error_page(response, 502, cut_short.netloc)
    else:
        assert "timeout" not in repr(response).lower(), response
    server_log.assert_quiet(failed_requests=1)
    await assert_still_serving(jupyter, recorder)
    # And the same dashboard, asked again, fails the same clean way (nothing stuck in the pool).
    again = await fetch_or_error(jupyter, f"dashdock/proxy/{cut_short.netloc}/big")
    assert not (isinstance(again, HTTPResponse) and again.code == 200)
    assert cut_short.accepted == 2


# -- hangs up mid-websocket -------------------------------------------------------------------


def _websocket_dropper(how: str) -> RawUpstream:
    """Upgrades, sends two messages, then drops TCP with no websocket close frame.

    "fin" hangs up right after the messages; "reset" waits until the browser answered (so both
    messages were relayed) and then resets the connection.
    """

    async def serve(connection: Connection) -> None:
        await connection.accept_websocket()
        await connection.send_text_frame("one")
        await connection.send_text_frame("two")
        if how == "fin":
            connection.hang_up()
        else:
            await connection.read_frame_header()
            connection.reset()

    return RawUpstream(serve)


@pytest.mark.parametrize("how", ["fin", "reset"])
async def test_a_dashboard_that_drops_its_websocket_closes_the_browser_socket_after_its_messages(
    jupyter: Jupyter, recorder: RecordingUpstream, server_log: ServerLog, how: str
) -> None:
    with _websocket_dropper(how) as dropper:
        connection = await open_websocket(jupyter, f"dashdock/proxy/{dropper.netloc}/ws")
        assert isinstance(connection, WebSocketClientConnection), connection
        try:
            received = [
                await asyncio.wait_for(connection.read_message(), DEADLINE),
                await asyncio.wait_for(connection.read_message(), DEADLINE),
            ]
            assert received == ["one", "two"]
            if how == "reset":
                await connection.write_message("got them")
            assert await asyncio.wait_for(connection.read_message(), DEADLINE) is None
            # Not a normal close (1000): the page should know the dashboard connection was lost.
            assert connection.close_code == 1011, (connection.close_code, connection.close_reason)
        finally:
            connection.close()
    server_log.assert_quiet(failed_requests=1)

    follow_up = await open_websocket(jupyter, f"dashdock/proxy/{recorder.netloc}/ws")
    assert isinstance(follow_up, WebSocketClientConnection), follow_up
    try:
        await follow_up.write_message("still relaying")
        assert await asyncio.wait_for(follow_up.read_message(), DEADLINE) == "still relaying"
    finally:
        follow_up.close()


# -- speaks garbage ---------------------------------------------------------------------------


GARBAGE = {
    "no status line": b"HELLO\r\n\r\n",
    "garbage status": b"HTTP/1.1 abc <script>alert(1)</script>\r\nContent-Length: 2\r\n\r\nhi",
    "binary noise": b"\x00\xff\xfe<script>\r\n\r\n",
    "nothing at all": b"",
}


@pytest.mark.parametrize("answer", list(GARBAGE), ids=list(GARBAGE))
async def test_a_dashboard_that_answers_garbage_is_a_bad_gateway(
    jupyter: Jupyter, recorder: RecordingUpstream, server_log: ServerLog, answer: str
) -> None:
    async def serve(connection: Connection) -> None:
        await connection.read_request_head()
        await connection.send(GARBAGE[answer])
        connection.hang_up()

    with RawUpstream(serve) as garbage:
        response = await fetch_or_error(jupyter, f"dashdock/proxy/{garbage.netloc}/status?x=<b>")
        assert isinstance(response, HTTPResponse), f"the browser got no answer: {response!r}"
        assert_clean_error_page(response, 502, f"The dashboard at {garbage.netloc} sent a malformed answer")
        upgrade = await open_websocket(jupyter, f"dashdock/proxy/{garbage.netloc}/ws")
        assert upgrade == 502
    server_log.assert_quiet(failed_requests=2)
    await assert_still_serving(jupyter, recorder)
