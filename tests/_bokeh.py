"""Speaking Bokeh's websocket protocol with a plot page fetched through the proxy."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
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
    buffers_by_id: dict[str, bytes]

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
    by_id: dict[str, bytes] = {}
    for _ in range(header.get("num_buffers", 0)):
        buffer_header = await connection.read_message()
        payload = await connection.read_message()
        assert isinstance(payload, bytes)
        buffers.append(payload)
        if isinstance(buffer_header, str):
            by_id[str(json.loads(buffer_header).get("id"))] = payload
    return BokehMessage(header, metadata, content, buffers, by_id)


async def send_pull_doc_request(connection: WebSocketClientConnection) -> None:
    await connection.write_message(json.dumps({"msgid": "1", "msgtype": "PULL-DOC-REQ"}))
    await connection.write_message("{}")
    await connection.write_message("{}")


def models(message: BokehMessage) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """Every model of a pulled document, in document order: its type name, its attributes, the node."""
    stack: list[Any] = [message.content.get("doc")]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            attributes = node.get("attributes")
            if isinstance(node.get("name"), str):
                yield node["name"], attributes if isinstance(attributes, dict) else {}, node
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def plot_contents(message: BokehMessage) -> list[tuple[str, Any]]:
    """What a plot document shows, in document order: each data source's columns (arrays as lists)
    and each title's text. Ids, which differ between two servers of the same plot, are left out."""
    found: list[tuple[str, Any]] = []

    def value(node: Any) -> Any:
        if isinstance(node, dict) and node.get("type") == "map":
            return {str(k): value(v) for k, v in node.get("entries", [])}
        if isinstance(node, dict) and node.get("type") == "ndarray":
            return _array(node, message.buffers_by_id)
        if isinstance(node, dict):
            return {k: value(v) for k, v in node.items() if k != "id"}
        if isinstance(node, list):
            return [value(v) for v in node]
        return node

    for name, attributes, _ in models(message):
        if name == "ColumnDataSource" and "data" in attributes:
            found.append(("data", value(attributes["data"])))
        elif name == "Title" and "text" in attributes:
            found.append(("title", attributes["text"]))
    return found


def _array(node: dict[str, Any], buffers: dict[str, bytes]) -> list[Any]:
    import base64

    import numpy as np

    array = node.get("array")
    if isinstance(array, dict) and isinstance(array.get("data"), str):
        raw = base64.b64decode(array["data"])
    elif isinstance(array, dict) and "id" in array:
        raw = buffers[str(array["id"])]
    elif isinstance(array, dict) and isinstance(array.get("data"), dict) and "id" in array["data"]:
        raw = buffers[str(array["data"]["id"])]  # {"type": "bytes", "data": {"id"}}: a binary buffer
    else:
        return list(array) if isinstance(array, list) else []
    order = "<" if node.get("order", "little") == "little" else ">"
    return np.frombuffer(raw, dtype=np.dtype(str(node["dtype"])).newbyteorder(order)).tolist()
