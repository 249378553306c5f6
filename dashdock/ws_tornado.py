"""The websocket relay's slower path, message by message: tornado's websocket toward the browser.

Taken when the browser's socket cannot be handed to the raw relay (ws_takeover.py), which is when
Jupyter is served over HTTPS. tornado parses the browser's frames, aiohttp the dashboard's; each
message is awaited into the other side, so backpressure holds, at a Python coroutine per message.
Pause and update interval work as in the raw relay, at message granularity.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import aiohttp
from tornado.iostream import StreamClosedError
from tornado.websocket import WebSocketClosedError, WebSocketHandler

from .headers import upstream_request_headers
from .panes import PaneRelay, PaneState
from .upstream import as_http_error

if TYPE_CHECKING:
    from .proxy import RelayHandler

# Close codes that may be sent on the wire (RFC 6455 7.4); others become 1011 (server error).
_SENDABLE_CLOSE_CODES = frozenset({1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011})
# Backpressure window toward the browser: wait for the socket once this much is unflushed.
_WINDOW_BYTES = 1024 * 1024
_WINDOW_MESSAGES = 64


class TornadoRelayMixin:
    """Websocket methods of the proxy handlers for the tornado path."""

    _upstream_ws: aiohttp.ClientWebSocketResponse | None = None
    _pump: asyncio.Task[None] | None = None
    _pane: PaneRelay | None = None
    _state: PaneState = PaneState()
    _outbox: list[aiohttp.WSMessage]
    _flush_task: asyncio.Task[None] | None = None
    _deliver_lock: asyncio.Lock
    _in_flight_bytes = 0
    _in_flight_messages = 0
    _closing: asyncio.Future[None] | None = None  # kept so the close is not garbage-collected mid-way

    @property
    def max_message_size(self: RelayHandler) -> int:  # type: ignore[misc]
        return self._proxy.websocket_max_message_size

    def get_compression_options(self) -> dict[str, Any] | None:
        return None  # plots stream many small messages; deflate would cost latency for little gain

    async def _open_tornado_relay(  # type: ignore[misc]
        self: RelayHandler, protocols: Sequence[str], pane_id: str | None
    ) -> None:
        route = self.route
        if pane_id is not None:
            self._pane = PaneRelay(pane_id, route.source_id, self._on_pane_state)
            self._state = self._panes.state(pane_id)
        # The websocket timeout below covers only the open socket; the upgrade itself gets the same
        # bounds as an HTTP request, so a dashboard that never answers gives a 504, not a hang.
        upgrade_deadline = self._proxy.connect_timeout + self._proxy.read_timeout
        try:
            connect = self._client.session.ws_connect(
                self._upstream_url(),
                protocols=protocols,
                headers={"Origin": route.target.origin, **upstream_request_headers(self.request.headers)},
                max_msg_size=0,
                autoclose=False,
                autoping=True,
                compress=0,
                timeout=aiohttp.ClientWSTimeout(ws_receive=None, ws_close=5.0),
            )
            self._upstream_ws = await asyncio.wait_for(connect, upgrade_deadline)
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise as_http_error(route.target, exc) from None
        await WebSocketHandler.get(self)

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return self._upstream_ws.protocol if self._upstream_ws is not None else None

    def open(self: RelayHandler, *args: Any, **kwargs: Any) -> None:  # type: ignore[misc]
        self.set_nodelay(True)  # Bokeh sends a message as several small frames; don't let Nagle hold them
        self._outbox = []
        self._deliver_lock = asyncio.Lock()
        if self._pane is not None:
            self._panes.attach(self._pane)
        self._pump = asyncio.create_task(self._relay_upstream_messages())

    async def on_message(self: RelayHandler, message: str | bytes) -> None:  # type: ignore[misc]
        # Awaiting the upstream send makes tornado wait before reading the next browser message.
        upstream = self._upstream_ws
        if upstream is None or upstream.closed:
            return
        try:
            if isinstance(message, bytes):
                await upstream.send_bytes(message)
            else:
                await upstream.send_str(message)
        except (ConnectionError, aiohttp.ClientError):
            self.close(1011, "dashboard connection lost")

    def _on_pane_state(self, state: PaneState) -> None:
        self._state = state
        if state.paused and self._upstream_ws is not None and not self._upstream_ws.closed:
            # Closing upstream ends the relay loop; the browser socket stays open and silent,
            # so the plot stays frozen as it was instead of showing a disconnect.
            self._closing = asyncio.ensure_future(self._upstream_ws.close())

    async def _relay_upstream_messages(self: RelayHandler) -> None:  # type: ignore[misc]
        upstream = self._upstream_ws
        assert upstream is not None
        lost = False
        try:
            if self._state.paused:
                return
            async for message in upstream:
                if message.type not in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                    break
                if not self._state.interval and not self._outbox:
                    await self._write_live(message)
                else:
                    self._outbox.append(message)
                    if not self._state.interval:
                        await self._deliver()  # the rate went back to live: send what waited first
                    elif self._flush_task is None:
                        self._flush_task = asyncio.create_task(self._deliver_later(self._state.interval))
            lost = not self._state.paused and self.ws_connection is not None
        except (WebSocketClosedError, StreamClosedError):
            pass
        except (aiohttp.ClientError, ConnectionError):
            lost = True
        finally:
            await upstream.close()
            if lost and self._pane is not None and self._pane.source_id is not None:
                self._registry.note_lost(self._pane.source_id)
            if not self._state.paused:
                code = upstream.close_code
                self.close(
                    code if code in _SENDABLE_CLOSE_CODES else 1011 if code else 1000, "dashboard closed"
                )

    async def _write_live(self: RelayHandler, message: aiohttp.WSMessage) -> None:  # type: ignore[misc]
        # Waiting for every write to reach the socket costs an event-loop turn per message; waiting
        # once a window of bytes or messages is in flight keeps memory bounded at a fraction of it.
        # tornado's public write_message wraps each write in a new Task, a loop turn per message
        # (bench/ws_relay.py measured 0.59x -> 0.93x of direct under load); its frame writer does not.
        connection = self.ws_connection
        if connection is None:
            raise WebSocketClosedError()
        binary = message.type == aiohttp.WSMsgType.BINARY
        write_frame = getattr(connection, "_write_frame", None)
        if write_frame is not None and not connection._compressor:  # type: ignore[attr-defined]
            data = message.data if binary else message.data.encode()
            flushed = write_frame(True, 0x2 if binary else 0x1, data)
        else:
            flushed = self.write_message(message.data, binary=binary)
        self._in_flight_bytes += len(message.data)
        self._in_flight_messages += 1
        if self._in_flight_bytes >= _WINDOW_BYTES or self._in_flight_messages >= _WINDOW_MESSAGES:
            await flushed
            self._in_flight_bytes = self._in_flight_messages = 0
        if self._pane is not None:
            self._pane.stats.messages += 1
            self._pane.stats.bytes += len(message.data)

    async def _deliver_later(self, delay: float) -> None:
        await asyncio.sleep(delay)
        self._flush_task = None
        try:
            await self._deliver()
        except (WebSocketClosedError, StreamClosedError):
            pass

    async def _deliver(self: RelayHandler) -> None:  # type: ignore[misc]
        # One delivery at a time: a timed flush and a live one must not interleave their messages.
        async with self._deliver_lock:
            outbox, self._outbox = self._outbox, []
            for message in outbox:
                binary = message.type == aiohttp.WSMsgType.BINARY
                await self.write_message(message.data, binary=binary)
                if self._pane is not None:
                    self._pane.stats.messages += 1
                    self._pane.stats.bytes += len(message.data)

    def on_close(self: RelayHandler) -> None:  # type: ignore[misc]
        if self._pane is not None:
            self._panes.detach(self._pane)
        if self._flush_task is not None:
            self._flush_task.cancel()
        upstream = self._upstream_ws
        if upstream is not None and not upstream.closed:
            self._closing = asyncio.ensure_future(upstream.close())
        # The relay task ends by itself once the upstream socket is closed.
