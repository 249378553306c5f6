"""The raw websocket relay: websocket bytes pumped between two sockets, with no message ever parsed.

After both handshakes (no extension negotiated, the same subprotocol on both sides), the browser's
frames are masked client frames, exactly what the dashboard expects from a client, and the
dashboard's are plain server frames, exactly what the browser expects. So each chunk read from one
socket is written to the other as it is, from asyncio protocol callbacks: no task, future or
coroutine per message. Backpressure is the transports' own: a side whose write buffer passes its
high-water mark pauses reading on the other side until it drains.

``FrameScanner`` follows frame headers in both directions for what still needs boundaries: the
pane's counters, the browser's message size limit (1009 before any of the frame that crosses it goes
upstream), pausing at a message boundary, and writing a close frame of our own (1011 when the
dashboard drops, only between frames; otherwise the browser socket is cut). Ping, pong and close
frames pass through, so the close handshake is the endpoints' own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from dashdock.panes.state import PaneState, RelayStats
from dashdock.proxy.websocket.frames import FrameError, FrameScanner, close_frame
from dashdock.proxy.websocket.reads import CopyingProtocol
from dashdock.proxy.websocket.upstream import UpstreamProtocol

# How long a closing side may take to answer a close frame or drain, before it is cut.
_LINGER_SECONDS = 5.0
# An update interval holds at most this much before delivering early: memory stays bounded, and a
# large message is never held back for more than an interval.
_MAX_BATCH_BYTES = 4 * 1024 * 1024
# Write buffer high-water mark for each socket: enough to keep a loopback pipe full.
_HIGH_WATER = 256 * 1024


class Tunnel:
    """One relayed websocket: a browser socket and a dashboard socket, both raw asyncio transports.

    ``state`` is the pane's (paused, update interval), changed later with ``set_state``; ``stats``
    its counters; ``on_lost`` is called once when the dashboard ends the websocket under an open
    browser socket; ``on_closed`` once when the browser socket is closed.
    """

    def __init__(
        self,
        upstream: UpstreamProtocol,
        *,
        max_message: int,
        state: PaneState,
        stats: RelayStats | None,
        on_lost: Callable[[], None],
        on_closed: Callable[[], None],
    ) -> None:
        assert upstream.transport is not None
        self._upstream = upstream.transport
        self._upstream_protocol = upstream
        self._browser: asyncio.Transport | None = None
        self._from_browser = FrameScanner(masked=True, max_message=max_message)
        self._from_upstream = FrameScanner(masked=False)
        self._state = state
        self._stats = stats
        self._on_lost = on_lost
        self._on_closed = on_closed
        self._counted_messages = 0
        self._counted_bytes = 0
        self._batch: list[bytes] = []
        self._batch_size = 0
        self._flush_timer: asyncio.TimerHandle | None = None
        self._lingering: list[asyncio.TimerHandle] = []
        self._upstream_open = True  # False once the dashboard ended the websocket or we ended it
        self._upstream_close_seen = False  # the dashboard's close frame went to the browser
        self._stopping = False  # paused: relaying up to the end of the current message, then stop
        self._lost_noted = False
        self._browser_closing = False  # the browser was sent our close frame, or its socket is gone
        self._browser_frames_ok = True  # the browser's stream can still be followed frame by frame
        self._browser_gone = False
        self._sockets_open = 2

    # -- start --------------------------------------------------------------------------------

    def browser_connected(self, transport: asyncio.Transport, buffered: bytes) -> None:
        """The browser socket is ours; ``buffered`` are its bytes that tornado had already read."""
        self._browser = transport
        transport.set_write_buffer_limits(high=_HIGH_WATER)
        self._upstream.set_write_buffer_limits(high=_HIGH_WATER)
        self.set_state(self._state)  # a pane paused before its socket opened stops at once
        if buffered:
            self.from_browser(buffered)
        self._upstream_protocol.attach(self)

    # -- dashboard -> browser -----------------------------------------------------------------

    def from_upstream(self, data: bytes) -> None:
        if not self._upstream_open:
            return  # we ended the dashboard's side (paused, or the browser left): drop what was in flight
        scanner = self._from_upstream
        try:
            scanned = scanner.feed(data, stop_at_message_end=self._stopping)
        except FrameError as error:
            self._deliver(data[: error.offset])
            self._end_upstream(polite=False)
            self._note_lost()
            self._close_browser(error.code, "dashboard protocol error")
            return
        self._deliver(data if scanned == len(data) else data[:scanned])
        if scanner.close_seen and not self._upstream_close_seen:
            self._upstream_close_seen = True
            if self._from_browser.close_seen:
                self._close_browser_socket()  # the browser began the close and now has its answer
            else:
                # The dashboard closes: its close frame went on to the browser, whose answer goes back.
                self._note_lost()
                self._linger(self._browser)
        if self._stopping and scanner.at_message_boundary:
            self._end_upstream(polite=True)

    def _deliver(self, data: bytes) -> None:
        if self._state.interval and not self._stopping:
            self._batch.append(data)
            self._batch_size += len(data)
            if self._batch_size >= _MAX_BATCH_BYTES:
                self._flush()
            elif self._flush_timer is None:
                self._flush_timer = asyncio.get_running_loop().call_later(self._state.interval, self._flush)
            return
        if self._batch:
            self._flush()  # the rate went back to live: what waited goes first
        self._write_browser(data)
        self._count()

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        if self._batch:
            batch, self._batch, self._batch_size = self._batch, [], 0
            self._write_browser(b"".join(batch))
        self._count()

    def _count(self) -> None:
        """Add what the browser was given since the last count (all that was scanned and not batched)."""
        scanner = self._from_upstream
        if self._stats is None or self._batch:
            return
        self._stats.messages += scanner.messages - self._counted_messages
        self._stats.bytes += scanner.data_bytes - self._counted_bytes
        self._counted_messages, self._counted_bytes = scanner.messages, scanner.data_bytes

    def _write_browser(self, data: bytes) -> None:
        if data and self._browser is not None and not self._browser.is_closing():
            self._browser.write(data)

    def upstream_ended(self) -> None:
        """The dashboard's socket reached EOF or was lost."""
        if not self._upstream_open:
            return
        self._upstream_open = False
        self._stream_ended()
        self._upstream.close()
        self._resume_browser()
        if self._stopping:
            return  # paused: the browser stays silent, the plot as it was
        if self._upstream_close_seen:
            return  # a normal close: the browser closes once it answered the close frame
        self._note_lost()
        self._close_browser(1011, "dashboard closed")

    def upstream_closed(self) -> None:
        self._socket_closed()

    def upstream_pause_writing(self) -> None:
        if self._browser is not None:
            self._browser.pause_reading()

    def upstream_resume_writing(self) -> None:
        self._resume_browser()

    def _resume_browser(self) -> None:
        if self._browser is not None:
            self._browser.resume_reading()

    # -- browser -> dashboard -----------------------------------------------------------------

    def from_browser(self, data: bytes) -> None:
        scanner = self._from_browser
        if self._browser_closing:
            # Only the browser's answer to our close frame is awaited; the rest is dropped unread.
            if self._browser_frames_ok:
                try:
                    scanner.feed(data)
                except FrameError:
                    self._browser_frames_ok = False
                if scanner.close_seen:
                    self._close_browser_socket()
            return
        try:
            scanner.feed(data)
        except FrameError as error:
            if self._upstream_open:
                self._upstream.write(data[: error.offset])
            # After 1009 the refused frame is skipped by its length; after 1002 nothing can be followed.
            self._browser_frames_ok = error.code == 1009
            self._end_upstream(polite=False)
            self._close_browser(error.code, error.reason)
            return
        if self._upstream_open:
            self._upstream.write(data)
        if not scanner.close_seen:
            return
        if self._upstream_close_seen:
            self._close_browser_socket()  # the browser answered the dashboard's close: done here
        elif self._upstream_open:
            self._linger(self._upstream)  # the dashboard answers, then hangs up
        else:
            self._close_browser(1000, "")  # nobody upstream to answer (paused): we do

    def browser_ended(self) -> None:
        """The browser socket reached EOF or was lost."""
        if self._browser_gone:
            return
        self._browser_gone = True
        self._browser_closing = True
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        self._end_upstream(polite=True)
        if self._browser is not None:
            self._browser.close()
        self._on_closed()

    def browser_closed(self) -> None:
        self.browser_ended()
        self._socket_closed()

    def browser_pause_writing(self) -> None:
        self._upstream.pause_reading()

    def browser_resume_writing(self) -> None:
        self._upstream.resume_reading()

    # -- pane state ---------------------------------------------------------------------------

    def set_state(self, state: PaneState) -> None:
        self._state = state
        if state.paused and self._upstream_open and not self._stopping:
            # Closing the dashboard's side ends its session; the browser socket stays open and
            # silent, so the plot stays as it was. What waited is delivered, and a message in
            # progress is completed first, so the browser holds whole messages only.
            self._flush()
            self._stopping = True
            if self._from_upstream.at_message_boundary:
                self._end_upstream(polite=True)
        elif not state.interval and self._batch:
            self._flush()

    # -- closing ------------------------------------------------------------------------------

    def move(self) -> bool:
        """The plot is served elsewhere now: end both sides, without reporting the dashboard lost
        (the caller says the pane should load again). False when there was nothing to end: a paused
        relay has ended its dashboard's side already."""
        if not self._upstream_open or self._browser_gone:
            return False
        self._lost_noted = True  # not lost: moved
        self._end_upstream(polite=True)
        self._close_browser(1012, "the plot moved")  # 1012: service restart, come back
        return True

    def _end_upstream(self, *, polite: bool) -> None:
        """Close the dashboard's side ourselves: with a close frame (going away) when one fits."""
        if not self._upstream_open:
            return
        self._upstream_open = False
        self._stream_ended()
        scanner = self._from_browser
        if polite and scanner.at_frame_boundary and not scanner.close_seen:
            self._upstream.write(close_frame(1001, "", masked=True))
        self._upstream.close()
        self._linger(self._upstream)
        self._resume_browser()

    def _stream_ended(self) -> None:
        """Nothing more can reach the browser from the dashboard: say so in the pane's counters."""
        if self._stats is not None:
            self._stats.streaming = False

    def _close_browser(self, code: int, reason: str) -> None:
        """Send the browser a close frame if one fits between frames, else cut its socket.

        After the close frame our side of the socket is shut (as a server closes first), and the
        browser's answer or its EOF, within the linger time, closes the rest.
        """
        browser = self._browser
        if self._browser_closing or browser is None:
            return
        self._browser_closing = True
        self._flush()
        if not self._from_upstream.at_frame_boundary:
            browser.abort()
            return
        self._write_browser(close_frame(code, reason, masked=False))
        if self._from_browser.close_seen:
            browser.close()
            return
        if not browser.is_closing():
            browser.write_eof()
        self._linger(browser)

    def _close_browser_socket(self) -> None:
        """The close handshake is complete on the browser's side: deliver what waited, then hang up."""
        self._browser_closing = True
        self._flush()
        if self._browser is not None:
            self._browser.close()

    def _note_lost(self) -> None:
        if not self._stopping and not self._browser_gone and not self._lost_noted:
            self._lost_noted = True
            self._on_lost()

    def _linger(self, transport: asyncio.Transport | None) -> None:
        """Cut ``transport`` if a close in progress (an answer awaited, a buffer to drain) takes too long."""
        if transport is not None:
            self._lingering.append(asyncio.get_running_loop().call_later(_LINGER_SECONDS, transport.abort))

    def _socket_closed(self) -> None:
        self._sockets_open -= 1
        if self._sockets_open == 0:
            for timer in self._lingering:
                timer.cancel()
            self._lingering.clear()


class BrowserProtocol(CopyingProtocol):
    """The browser's side of a tunnel, on the socket taken from tornado."""

    def __init__(self, tunnel: Tunnel, buffered: bytes) -> None:
        self._tunnel = tunnel
        self._buffered = buffered

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        buffered, self._buffered = self._buffered, b""
        self._tunnel.browser_connected(transport, buffered)

    def data_received(self, data: bytes) -> None:
        self._tunnel.from_browser(data)

    def eof_received(self) -> bool:
        self._tunnel.browser_ended()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._tunnel.browser_closed()

    def pause_writing(self) -> None:
        self._tunnel.browser_pause_writing()

    def resume_writing(self) -> None:
        self._tunnel.browser_resume_writing()
