"""A drawn page's Bokeh message leaves the watcher in one write, as the frames Bokeh itself writes
one by one (live/one_write.py). Pages drawn through the proxy, buffers and all, are read by the
other drawn-plot tests (test_drawn_held.py, test_drawn_first_page.py, ...)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import bokeh.document.document as bokeh_document
import numpy as np
import pytest
import tornado.locks
from _ws_wire import BINARY, TEXT, frame
from bokeh.document import Document
from bokeh.models import ColumnDataSource
from bokeh.protocol import Protocol
from bokeh.protocol.message import Message
from bokeh.server.views.ws import WSHandler

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.one_write import OneWriteHandler, message_frames
from dashdock.live.plot_server import PlotServer
from dashdock.live.plots import DRAWN


class _FrameByFrame:
    """A connection as Bokeh's ``Message.send`` sees it: it writes each frame here."""

    def __init__(self) -> None:
        self.write_lock = tornado.locks.Lock()
        self.frames: list[bytes] = []

    async def write_message(self, message: str | bytes, binary: bool = False, locked: bool = True) -> None:
        payload = message if isinstance(message, bytes) else message.encode()
        self.frames.append(frame(BINARY if binary else TEXT, payload))


def _patch_with_buffers() -> Message[Any]:
    """A PATCH-DOC as a Dask redraw makes it: numeric columns, sent as binary buffers, of every
    frame length class (under 126 bytes, under 64 KiB, over)."""
    sizes = (5, 1_000, 20_000)  # float64 buffers of 40 bytes, 8 KB and 160 KB
    sources = [ColumnDataSource({"x": np.arange(2.0), "name": ["a", "b"]}) for _ in sizes]
    doc = Document()
    for source in sources:
        doc.add_root(source)
    events: list[Any] = []
    doc.on_change(lambda event: events.append(event))
    for source, size in zip(sources, sizes, strict=True):
        source.data = {"x": np.arange(float(size)), "name": ["é"] * size}
    message = Protocol().create("PATCH-DOC", events)
    assert len(message.buffers) == len(sizes)
    return message


def test_a_message_is_the_frames_bokeh_writes_one_by_one_in_one_piece() -> None:
    message = _patch_with_buffers()
    connection = _FrameByFrame()
    asyncio.run(message.send(connection))  # type: ignore[arg-type]
    assert len(connection.frames) == 3 + 2 * 3
    assert message_frames(message) == b"".join(connection.frames)


def test_every_drawn_page_answers_on_the_one_write_handler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bokeh_document, "gc", gc)  # PlotServer.start replaces it: put it back after
    mirror = SchedulerMirror()

    async def handlers() -> list[type]:
        server = PlotServer(lambda run_id: mirror)
        server.start()
        try:
            app: Any = server._server._tornado  # type: ignore[union-attr]
            return [rule.target for rule in app.wildcard_router.rules if issubclass(rule.target, WSHandler)]
        finally:
            server.stop()

    found = asyncio.run(handlers())
    assert found == [OneWriteHandler] * len(DRAWN)
