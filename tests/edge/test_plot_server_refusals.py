"""Another local user's requests to the recorder's plot server (without its secret) are refused
quietly (issue 40, item 5): the recorder's stderr is the Jupyter server's log, and each refusal
used to write a traceback of about 12 lines there (1,000 requests in 0.9 s: 845 KiB)."""

from __future__ import annotations

import asyncio
import gc
import logging

import bokeh.document.document as bokeh_document
import pytest
from tornado.httpclient import AsyncHTTPClient

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.plot_server import REFUSALS_LOG_S, PlotServer, _Refusals
from dashdock.live.plots import SECRET_HEADER

# Every kind of path the plot server has: a page, its websocket, Bokeh's autoload script (whose
# handler raised on a refused request), its static files, and none at all.
PATHS = (
    "/individual-workers?run=r",
    "/individual-workers/ws",
    "/individual-workers/autoload.js?bokeh-autoload-element=x",
    "/individual-workers/metadata",
    "/static/js/bokeh.min.js",
    "/refused",
    "/nowhere",
)
SERVER_LOGGERS = ("dashdock", "tornado.application", "tornado.access", "tornado.general", "bokeh")


def test_a_thousand_refused_requests_write_a_line_or_two(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bokeh_document, "gc", gc)  # PlotServer.start replaces it: put it back after
    mirror = SchedulerMirror()

    async def main() -> list[int]:
        server = PlotServer(lambda run_id: mirror)
        server.start()
        client = AsyncHTTPClient(max_clients=50)
        try:

            async def send(i: int) -> int:
                path = PATHS[i % len(PATHS)]
                method = ("GET", "POST", "HEAD")[i % 3]
                response = await client.fetch(
                    f"http://127.0.0.1:{server.port}{path}",
                    method=method,
                    body=b"x" if method == "POST" else None,
                    headers={SECRET_HEADER: "wrong"} if i % 2 else None,
                    raise_error=False,
                    follow_redirects=False,
                )
                return response.code

            codes = list(await asyncio.gather(*(send(i) for i in range(1000))))
            # The proxy's requests, with the secret, are still answered.
            ok = await client.fetch(
                f"http://127.0.0.1:{server.port}/individual-workers?run=r",
                headers={SECRET_HEADER: server.secret},
                raise_error=False,
            )
            return [*codes, ok.code]
        finally:
            server.stop()

    with caplog.at_level(logging.DEBUG):
        codes = asyncio.run(main())
    assert set(codes[:-1]) == {403} and codes[-1] == 200
    # What the plot server and the server side write; not the test's own client (tornado's
    # simple_httpclient logs "max_clients limit reached" to tornado.general at DEBUG).
    records = [
        r
        for r in caplog.records
        if r.name.startswith(SERVER_LOGGERS) and not r.pathname.endswith("simple_httpclient.py")
    ]
    written = [caplog.handler.format(r) for r in records]
    lines = [line for text in written for line in text.splitlines()] + capfd.readouterr().err.splitlines()
    refused = [line for line in lines if "refused" in line]
    assert 1 <= len(refused) <= 2, lines
    assert not any(r.exc_info for r in records) and "Traceback" not in "\n".join(lines), lines
    assert len(lines) <= 10, lines


def test_refusals_are_logged_at_most_once_a_period_with_their_count(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    refusals = _Refusals(clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="dashdock.recorder"):
        for _ in range(500):
            refusals.refused()
            now[0] += 0.01  # 5 s of them
        now[0] = REFUSALS_LOG_S + 1
        refusals.refused()
    assert [r.getMessage() for r in caplog.records] == [
        "dashdock: the recorder's plot server refused 1 request(s) without its secret",
        "dashdock: the recorder's plot server refused 500 request(s) without its secret in the last 11 s",
    ]
