"""Misbehaving 'dashboards' for fault tests: raw TCP servers on 127.0.0.1 that speak just enough HTTP.

Each server runs its own asyncio loop in a thread (like the recording upstream), so it keeps
answering however the loop of the Jupyter server under test is doing, and hands every accepted
connection to a coroutine that decides how to misbehave.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import socket
import struct
import threading
from collections.abc import Awaitable, Callable

Serve = Callable[["Connection"], Awaitable[None]]

_WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Connection:
    """One accepted connection, with the helpers a misbehaving server needs."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def read_request_head(self) -> dict[str, str]:
        """Read a request line and headers; returns the headers (lower-case names)."""
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")[1:]
        return {
            name.strip().lower(): value.strip()
            for name, _, value in (line.partition(":") for line in lines if line)
        }

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def accept_websocket(self) -> None:
        headers = await self.read_request_head()
        digest = hashlib.sha1((headers["sec-websocket-key"] + _WS_GUID).encode()).digest()
        await self.send(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + base64.b64encode(digest) + b"\r\n\r\n"
        )

    async def send_text_frame(self, text: str) -> None:
        payload = text.encode()
        assert len(payload) < 126
        await self.send(bytes([0x81, len(payload)]) + payload)

    async def read_frame_header(self) -> int:
        """Wait for the next frame from the client; returns its opcode (its payload is not read)."""
        first = await self.reader.readexactly(2)
        return first[0] & 0x0F

    def hang_up(self) -> None:
        """Close the TCP connection: an orderly FIN, but no HTTP or websocket goodbye."""
        self.writer.close()

    def reset(self) -> None:
        """Drop the TCP connection with a reset (RST), as a crashed host or a firewall does."""
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()


class RawUpstream:
    """A loopback TCP server whose every connection is handled by ``serve``."""

    def __init__(self, serve: Serve) -> None:
        self._serve = serve
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="raw-upstream", daemon=True)
        self.accepted = 0
        self.port = 0

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> RawUpstream:
        self._thread.start()
        assert self._ready.wait(10), "the raw upstream did not start"
        return self

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self) -> RawUpstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(
            asyncio.start_server(self._on_connection, "127.0.0.1", 0)
        )
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    async def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.add(writer)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(Connection(reader, writer))
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            self._writers.discard(writer)
            writer.close()

    async def _shutdown(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)


async def forever() -> None:
    """What a hung server does."""
    await asyncio.Event().wait()
