"""Websockets spoken byte by byte, for tests that must control exactly what crosses the wire.

``RawClient`` is a browser whose frames the test writes itself (split, pipelined, hostile);
``raw_echo`` is a dashboard for ``_raw_upstream.RawUpstream`` that echoes frames and picks the *last*
subprotocol offered, so a test can tell the dashboard's choice from the browser's first wish.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
from collections.abc import Sequence

from _raw_upstream import Connection
from _support import Jupyter

TEXT, BINARY, CONTINUATION, CLOSE, PING, PONG = 0x1, 0x2, 0x0, 0x8, 0x9, 0xA
DEADLINE = 10.0
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame(opcode: int, payload: bytes, *, fin: bool = True, masked: bool = False, rsv: int = 0) -> bytes:
    """One frame as a peer writes it (masked as a browser does, or plain as a server does)."""
    length = len(payload)
    if length < 126:
        sizes = bytes([length])
    elif length < 65536:
        sizes = bytes([126]) + length.to_bytes(2, "big")
    else:
        sizes = bytes([127]) + length.to_bytes(8, "big")
    first = (0x80 if fin else 0) | rsv | opcode
    head = bytes([first, sizes[0] | (0x80 if masked else 0)]) + sizes[1:]
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(byte ^ key[i % 4] for i, byte in enumerate(payload))


def header_only(opcode: int, length: int, *, masked: bool) -> bytes:
    """The header of a frame that announces ``length`` payload bytes (the payload is never sent)."""
    mask = b"mask" if masked else b""
    return bytes([0x80 | opcode, 127 | (0x80 if masked else 0)]) + length.to_bytes(8, "big") + mask


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next frame's opcode and (unmasked) payload."""
    first, payload = await read_frame_with_flags(reader)
    return first & 0x0F, payload


async def read_frame_with_flags(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next frame's first byte (FIN, reserved bits, opcode) and (unmasked) payload."""
    first, second = await asyncio.wait_for(reader.readexactly(2), DEADLINE)
    length = second & 0x7F
    if length == 126:
        length = int.from_bytes(await reader.readexactly(2), "big")
    elif length == 127:
        length = int.from_bytes(await reader.readexactly(8), "big")
    key = await reader.readexactly(4) if second & 0x80 else b""
    payload = await asyncio.wait_for(reader.readexactly(length), DEADLINE)
    if key:
        payload = bytes(byte ^ key[i % 4] for i, byte in enumerate(payload))
    return first, payload


def close_code(payload: bytes) -> int:
    return int.from_bytes(payload[:2], "big")


class RawClient:
    """A browser's websocket through the proxy, written and read frame by frame by the test."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> None:
        self.reader = reader
        self.writer = writer
        self.head = head

    @classmethod
    async def connect(
        cls, jupyter: Jupyter, path: str, *, protocols: Sequence[str] = (), early: bytes = b""
    ) -> RawClient:
        """Upgrade; ``early`` bytes go out with the request, before the 101 was read (pipelined)."""
        reader, writer = await asyncio.open_connection("127.0.0.1", jupyter.port)
        lines = [
            f"GET {jupyter.path(path)} HTTP/1.1",
            f"Host: 127.0.0.1:{jupyter.port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
            "Sec-WebSocket-Version: 13",
            f"Authorization: token {jupyter.token}",
        ]
        if protocols:
            lines.append(f"Sec-WebSocket-Protocol: {', '.join(protocols)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + early)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE)
        assert head.startswith(b"HTTP/1.1 101 "), head
        return cls(reader, writer, head)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def read_frame(self) -> tuple[int, bytes]:
        return await read_frame(self.reader)

    async def at_eof(self) -> bool:
        """Whether the proxy hung up (after everything it sent was read)."""
        return await asyncio.wait_for(self.reader.read(1), DEADLINE) == b""

    def close(self) -> None:
        self.writer.close()


async def raw_echo(connection: Connection, offered: list[list[str]] | None = None) -> None:
    """A dashboard's websocket: picks the last subprotocol offered, echoes frames, answers a close."""
    headers = await connection.read_request_head()
    protocols = [p.strip() for p in headers.get("sec-websocket-protocol", "").split(",") if p.strip()]
    if offered is not None:
        offered.append(protocols)
    accept = base64.b64encode(hashlib.sha1(headers["sec-websocket-key"].encode() + _GUID).digest())
    chosen = f"Sec-WebSocket-Protocol: {protocols[-1]}\r\n".encode() if protocols else b""
    await connection.send(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        b"Sec-WebSocket-Accept: " + accept + b"\r\n" + chosen + b"\r\n"
    )
    while True:
        first, payload = await read_frame_with_flags(connection.reader)
        opcode = first & 0x0F
        await connection.send(frame(PONG if opcode == PING else opcode, payload, fin=bool(first & 0x80)))
        if opcode == CLOSE:
            connection.hang_up()
            return
