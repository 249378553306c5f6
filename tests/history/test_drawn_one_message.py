"""A drawn page's redraw reaches its browser as one Bokeh message (live/one_message.py): Dask's
Occupancy sets its columns and its title at each redraw, which Bokeh alone sends as two."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import bokeh.document.document as bokeh_document
import pytest
from _bokeh import BokehMessage, receive, session_token
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from tornado.httpclient import AsyncHTTPClient, HTTPRequest
from tornado.websocket import websocket_connect

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.one_message import one_message
from dashdock.live.plot_server import PlotServer
from dashdock.live.plots import SECRET_HEADER

PATH = "/individual-occupancy"


def _state(busy: int) -> dict[str, Any]:
    """Two workers whose occupancy (and so Occupancy's bars and its title's total) moves with ``busy``."""
    return {
        "workers": [
            {
                "address": f"tcp://10.0.0.{i}:1",
                "name": f"w{i}",
                "nthreads": 1,
                "memory_limit": 2**30,
                "status": "running",
                "process": 2**27,
                "managed": 0,
                "unmanaged_old": 0,
                "spilled": 0,
                "occupancy": float(busy * i),
                "processing": busy,
                "metrics": {},
            }
            for i in (1, 2)
        ],
        "total_nthreads": 2,
    }


def _changes(message: BokehMessage) -> list[str]:
    """What a PATCH-DOC changes: ``data`` for a source's columns, else the attribute's name."""
    return [
        "data" if event.get("kind") == "ColumnDataChanged" else str(event.get("attr"))
        for event in message.content.get("events", [])
    ]


async def _redraws(port: int, secret: str, wanted: int) -> list[list[str]]:
    """The changes of the first ``wanted`` PATCH-DOC messages the page sends its browser."""
    headers = {SECRET_HEADER: secret}
    page = await AsyncHTTPClient().fetch(f"http://127.0.0.1:{port}{PATH}?run=r", headers=headers)
    connection = await websocket_connect(
        HTTPRequest(f"ws://127.0.0.1:{port}{PATH}/ws", headers=headers),
        subprotocols=["bokeh", session_token(page.body.decode())],
    )
    try:
        assert (await receive(connection)).msgtype == "ACK"
        messages: list[list[str]] = []
        while len(messages) < wanted:
            message = await asyncio.wait_for(receive(connection), 30)
            if message.msgtype == "PATCH-DOC":
                messages.append(_changes(message))
        return messages
    finally:
        connection.close()


def test_a_redraw_that_changes_columns_and_title_is_one_message(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bokeh_document, "gc", gc)  # PlotServer.start replaces it: put it back after
    mirror = SchedulerMirror()
    assert mirror.update_state(_state(1))

    async def ticks() -> None:
        for busy in range(2, 400):
            await asyncio.sleep(0.2)
            mirror.update_state(_state(busy))

    async def main() -> list[list[str]]:
        server = PlotServer(lambda run_id: mirror)
        server.start()
        ticking = asyncio.ensure_future(ticks())
        try:
            return await _redraws(server.port, server.secret, 4)
        finally:
            ticking.cancel()
            server.stop()

    messages = asyncio.run(main())
    # Every redraw moved the total in the title and the bars: both in each message, in that order.
    assert messages == [["text", "data"]] * 4


def test_outside_a_session_changes_go_as_bokeh_sends_them() -> None:
    doc = Document()
    source = ColumnDataSource({"x": [1]})
    doc.add_root(source)
    heard: list[Any] = []
    doc.on_change(heard.append)
    with one_message(doc):  # no session: a page function run by a test, or before any browser
        source.data = {"x": [2]}
        source.data = {"x": [3]}
    assert len(heard) == 2
