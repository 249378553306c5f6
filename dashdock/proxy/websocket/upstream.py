"""Open a dashboard's websocket as a raw connection: our own client handshake, then plain bytes.

The raw relay (tunnel.py) pumps frames without parsing them, so the upstream connection cannot be
a websocket library's: it is an asyncio transport on which this module writes the upgrade request
(the forwarded headers, the browser's subprotocols, no extensions) and checks the dashboard's 101.
Bytes that follow the 101 (Bokeh sends its first message at once) are held until the relay attaches.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import re
import ssl
from collections.abc import Mapping, Sequence
from typing import Protocol

from dashdock.errors import Invalid
from dashdock.proxy.websocket.reads import CopyingProtocol
from dashdock.targets import Target
from dashdock.upstream import (
    dashboard_malformed,
    dashboard_refused_websocket,
    dashboard_timed_out,
    dashboard_unreachable,
)

_WS_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_MAX_HEAD = 64 * 1024
# Held bytes after the 101, before the browser side is ready: stop reading beyond this.
_MAX_HELD = 1024 * 1024
# What may appear in a request line and header values we write (no CR, LF, NUL or other controls).
_SAFE_TEXT = re.compile(r"^[\x20-\x7e\x80-\xff]*$")
_SAFE_REQUEST_TARGET = re.compile(r"^/[\x21-\x7e]*$")
_STATUS_RE = re.compile(r"^[0-9]{3}$")


def accept_value(key: str) -> str:
    """The ``Sec-WebSocket-Accept`` that answers ``Sec-WebSocket-Key`` (RFC 6455 4.2.2)."""
    return base64.b64encode(hashlib.sha1(key.encode("ascii") + _WS_GUID).digest()).decode("ascii")


class UpstreamSink(Protocol):
    """Where an attached upstream connection delivers what it reads."""

    def from_upstream(self, data: bytes) -> None: ...

    def upstream_ended(self) -> None: ...

    def upstream_closed(self) -> None: ...

    def upstream_pause_writing(self) -> None: ...

    def upstream_resume_writing(self) -> None: ...


class HandshakeFailed(Exception):
    """The dashboard did not upgrade; ``status`` is its HTTP status when it answered one."""

    def __init__(self, status: int | None = None) -> None:
        super().__init__(status)
        self.status = status


class UpstreamProtocol(CopyingProtocol):
    """The dashboard's side of a raw relay: reads the 101, then hands bytes to its sink."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        # The response head, or None when the connection ended (or the head grew too long) first.
        self.head: asyncio.Future[bytes | None] = asyncio.get_running_loop().create_future()
        self._buffer = bytearray()  # the response head while it arrives
        self._held: list[bytes] = []
        self._held_size = 0
        self._ended = False
        self._closed = False
        self._sink: UpstreamSink | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self._sink is not None:
            self._sink.from_upstream(data)
        elif self.head.done():
            self._hold(data)
        else:
            self._read_head(data)

    def _read_head(self, data: bytes) -> None:
        self._buffer += data
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > _MAX_HEAD:
                self.head.set_result(None)
            return
        self.head.set_result(bytes(self._buffer[: end + 4]))
        rest = bytes(self._buffer[end + 4 :])
        self._buffer = bytearray()
        if rest:
            self._hold(rest)

    def _hold(self, data: bytes) -> None:
        self._held.append(data)
        self._held_size += len(data)
        if self._held_size > _MAX_HELD and self.transport is not None:
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()
        if self._sink is not None:
            self._sink.upstream_closed()
        else:
            self._closed = True

    def _end(self) -> None:
        if not self.head.done():
            self.head.set_result(None)
        if self._ended:
            return
        self._ended = True
        if self._sink is not None:
            self._sink.upstream_ended()

    def pause_writing(self) -> None:
        if self._sink is not None:
            self._sink.upstream_pause_writing()

    def resume_writing(self) -> None:
        if self._sink is not None:
            self._sink.upstream_resume_writing()

    def attach(self, sink: UpstreamSink) -> None:
        """Deliver what was held, then everything that follows, to ``sink``."""
        self._sink = sink
        held, self._held = self._held, []
        for data in held:
            sink.from_upstream(data)
        if self._ended:
            sink.upstream_ended()
        if self._closed:
            sink.upstream_closed()
        elif self._held_size > _MAX_HELD and self.transport is not None:
            self.transport.resume_reading()
        self._held_size = 0

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


class RawUpstream:
    """An upgraded connection to a dashboard; ``subprotocol`` is the one it chose."""

    def __init__(self, protocol: UpstreamProtocol, subprotocol: str | None) -> None:
        self.protocol = protocol
        self.subprotocol = subprotocol


class ClientTLS:
    """The TLS context for dashboards served over https, made once and off the event loop.

    The same verification aiohttp applies to the pooled HTTP client: system CAs, host names checked.
    Loading the system CAs takes about 20 ms, too long to block the loop for.
    """

    context: ssl.SSLContext | None = None

    @classmethod
    async def get(cls) -> ssl.SSLContext:
        if cls.context is None:
            cls.context = await asyncio.to_thread(ssl.create_default_context)
        return cls.context


def handshake_request(
    target: Target, request_target: str, key: str, subprotocols: Sequence[str], headers: Mapping[str, str]
) -> bytes:
    """The upgrade request; ``headers`` are the browser's headers that may go upstream (headers.py)."""
    default_port = 443 if target.scheme == "https" else 80
    host = target.netloc if target.port != default_port else target.netloc.rsplit(":", 1)[0]
    lines = [
        f"GET {request_target} HTTP/1.1",
        f"Host: {host}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        f"Origin: {target.origin}",
    ]
    if subprotocols:
        lines.append(f"Sec-WebSocket-Protocol: {', '.join(subprotocols)}")
    lines += [f"{name}: {value}" for name, value in headers.items() if _SAFE_TEXT.match(value)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def check_response(head: bytes | None, key: str, subprotocols: Sequence[str]) -> str | None:
    """Validate the dashboard's answer; returns the chosen subprotocol. Raises ``HandshakeFailed``."""
    if head is None:
        raise HandshakeFailed()
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not _STATUS_RE.match(parts[1]):
        raise HandshakeFailed()
    if parts[1] != "101":
        raise HandshakeFailed(int(parts[1]))
    fields: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if line and not colon:
            raise HandshakeFailed()
        if line:
            fields.setdefault(name.strip().lower(), []).append(value.strip())
    connection = {
        token.strip().lower() for value in fields.get("connection", []) for token in value.split(",")
    }
    chosen = fields.get("sec-websocket-protocol", [])
    valid = (
        [value.lower() for value in fields.get("upgrade", [])] == ["websocket"]
        and "upgrade" in connection
        and fields.get("sec-websocket-accept") == [accept_value(key)]
        # No extension was offered, so none may be accepted: the relay passes frames unchanged.
        and "sec-websocket-extensions" not in fields
        and len(chosen) <= 1
        and all(protocol in subprotocols for protocol in chosen)
    )
    if not valid:
        raise HandshakeFailed()
    return chosen[0] if chosen else None


async def open_raw_upstream(
    target: Target,
    request_target: str,
    subprotocols: Sequence[str],
    headers: Mapping[str, str],
    connect_timeout: float,
    deadline: float,
) -> RawUpstream:
    """Connect within ``connect_timeout`` and upgrade within ``deadline`` seconds.

    Failures raise the errors the pooled client's give for the same causes (dashdock.upstream).
    """
    if not _SAFE_REQUEST_TARGET.match(request_target):
        raise Invalid("The websocket path cannot be relayed.")
    key = base64.b64encode(os.urandom(16)).decode("ascii")
    protocol = UpstreamProtocol()

    async def upgrade() -> str | None:
        tls = await ClientTLS.get() if target.scheme == "https" else None
        connect = asyncio.get_running_loop().create_connection(
            lambda: protocol, target.host, target.port, ssl=tls
        )
        try:
            await asyncio.wait_for(connect, connect_timeout)
        except OSError as exc:
            raise dashboard_unreachable(target) from exc
        assert protocol.transport is not None
        protocol.transport.write(handshake_request(target, request_target, key, subprotocols, headers))
        return check_response(await protocol.head, key, subprotocols)

    try:
        subprotocol = await asyncio.wait_for(upgrade(), deadline)
    except asyncio.TimeoutError:
        protocol.abort()
        raise dashboard_timed_out(target) from None
    except HandshakeFailed as exc:
        protocol.abort()
        if exc.status is not None:
            raise dashboard_refused_websocket(target, exc.status) from None
        raise dashboard_malformed(target) from None
    except BaseException:
        protocol.abort()
        raise
    return RawUpstream(protocol, subprotocol)
