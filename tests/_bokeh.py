"""Speaking Bokeh's websocket protocol with a plot page fetched through the proxy."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from tornado.websocket import WebSocketClientConnection

_TOKEN_RE = re.compile(r'"token"\s*:\s*"([^"]+)"')


def session_token(page: str) -> str:
    """The Bokeh session token in a plot page's render_items."""
    match = _TOKEN_RE.search(page)
    assert match, "the page has no Bokeh session token"
    return match.group(1)


@dataclass
class BokehMessage:
    header: dict[str, Any]
    metadata: dict[str, Any]
    content: dict[str, Any]
    buffers: list[bytes]

    @property
    def msgtype(self) -> str:
        return str(self.header["msgtype"])


async def receive(connection: WebSocketClientConnection) -> BokehMessage:
    """Read one Bokeh message: header, metadata and content frames, then (header, payload) buffer pairs."""
    frames: list[str | bytes] = []
    for _ in range(3):
        frame = await connection.read_message()
        assert frame is not None, "the websocket closed in the middle of a Bokeh message"
        frames.append(frame)
    header, metadata, content = (json.loads(frame) for frame in frames)
    buffers = []
    for _ in range(header.get("num_buffers", 0)):
        await connection.read_message()  # buffer header
        payload = await connection.read_message()
        assert isinstance(payload, bytes)
        buffers.append(payload)
    return BokehMessage(header, metadata, content, buffers)


async def send_pull_doc_request(connection: WebSocketClientConnection) -> None:
    await connection.write_message(json.dumps({"msgid": "1", "msgtype": "PULL-DOC-REQ"}))
    await connection.write_message("{}")
    await connection.write_message("{}")
