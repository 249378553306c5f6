"""The raw relay's browser side on a socket tornado keeps: Jupyter served over HTTPS.

The raw relay (tunnel.py) pumps bytes between two asyncio transports. Over HTTPS the browser's
TLS session lives in tornado's ``SSLIOStream``, which no asyncio transport can adopt (takeover.py),
so the tunnel is given a transport made of that stream instead: one read at a time of whatever has
arrived (``read_bytes(partial=True)``), none while the tunnel has paused reading; writes appended to
tornado's buffer, whose futures tell when it drained. The dashboard's side stays the raw upstream
connection, so frames are followed and never gathered into messages, and everything the raw relay
promises (a 2 GiB message passed on in chunks, 1009 at the header, 1002, pause at a message boundary,
the update interval, 1011) holds over HTTPS because it is the same code.

Only the public ``IOStream`` interface is used, so any stream tornado hands over after ``detach()``
can be relayed this way; relay.py prefers taking the socket when it can, which is cheaper per read.
"""

from __future__ import annotations

import asyncio

from tornado.iostream import IOStream, StreamClosedError

from dashdock.proxy.websocket.tunnel import Tunnel

# As much as the raw relay reads at once (reads.py); tornado returns less when less has arrived.
_READ_SIZE = 256 * 1024
# asyncio's default high-water mark, until the tunnel sets its own.
_DEFAULT_HIGH_WATER = 64 * 1024


class StreamTransport(asyncio.Transport):
    """An asyncio transport over a detached tornado stream, driving the browser's side of a tunnel.

    Backpressure: once more than the high-water mark was written since tornado's buffer was last
    empty, the tunnel is told to pause (it stops reading the dashboard), and to resume once the
    buffer has drained. So what waits for the browser stays bounded, whatever the message size.
    """

    def __init__(self, stream: IOStream, tunnel: Tunnel) -> None:
        super().__init__()
        self._stream = stream
        self._tunnel = tunnel
        self._read_pending = False
        self._reading_paused = False
        self._closing = False
        self._high_water = _DEFAULT_HIGH_WATER
        self._unflushed = 0  # bytes written since tornado's write buffer was last seen empty
        self._last_write: asyncio.Future[None] | None = None
        self._writing_paused = False

    def start(self) -> None:
        """Hand the stream to the tunnel and start reading (what tornado read already comes first)."""
        stream = self._stream
        if stream.closed():
            # Its close callback has run already; set now, it would never be called.
            self._tunnel.browser_closed()
            return
        stream.set_nodelay(True)  # Bokeh sends a message as several small frames; Nagle would hold them
        stream.set_close_callback(self._stream_closed)
        self._tunnel.browser_connected(self, b"")
        self._read()

    # -- reading ------------------------------------------------------------------------------

    def _read(self) -> None:
        if self._read_pending or self._reading_paused or self._closing:
            return
        try:
            read = asyncio.ensure_future(self._stream.read_bytes(_READ_SIZE, partial=True))
        except StreamClosedError:
            self._tunnel.browser_ended()
            return
        self._read_pending = True
        read.add_done_callback(self._on_read)

    def _on_read(self, read: asyncio.Future[bytes]) -> None:
        self._read_pending = False
        if read.exception() is not None:
            # The browser's EOF or a broken connection: tornado closes the stream itself, and the
            # close callback follows, as connection_lost follows eof_received in asyncio.
            self._tunnel.browser_ended()
            return
        if self._closing:
            return  # as with asyncio's close(): nothing read after it reaches the tunnel
        self._tunnel.from_browser(read.result())
        self._read()

    def pause_reading(self) -> None:
        self._reading_paused = True

    def resume_reading(self) -> None:
        if self._reading_paused:
            self._reading_paused = False
            self._read()

    def is_reading(self) -> bool:
        return not self._reading_paused and not self.is_closing()

    # -- writing ------------------------------------------------------------------------------

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        # Reading resumes once the buffer is empty, so only the high-water mark matters.
        self._high_water = _DEFAULT_HIGH_WATER if high is None else high

    def get_write_buffer_size(self) -> int:
        last = self._last_write
        return 0 if last is None or last.done() else self._unflushed

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self.is_closing() or not data:
            return
        # tornado keeps a view of a large write until it is sent: a mutable buffer must be copied.
        chunk = data if isinstance(data, bytes) else bytes(data)
        # Each write's future resolves once everything up to its end has left tornado's buffer; the
        # last one done means the buffer is empty. Counting since then overstates what is still
        # buffered, never understates it, so the bound holds.
        if self.get_write_buffer_size() == 0:
            self._unflushed = 0
        written = self._stream.write(chunk)
        self._last_write = written
        self._unflushed += len(chunk)
        if not self._writing_paused and self._unflushed > self._high_water:
            self._writing_paused = True
            self._tunnel.browser_pause_writing()
            written.add_done_callback(self._on_drained)

    def _on_drained(self, written: asyncio.Future[None]) -> None:
        last = self._last_write
        if last is not None and not last.done():
            last.add_done_callback(self._on_drained)  # written while paused: wait for that too
            return
        self._writing_paused = False
        if not self._stream.closed():
            self._tunnel.browser_resume_writing()

    def write_eof(self) -> None:
        # A TLS session cannot be half-closed without ending it (close_notify), and the close frame
        # already sent says the same: the browser's answer to it, or the tunnel's linger timer,
        # closes the stream, as tornado's own websocket does.
        pass

    def can_write_eof(self) -> bool:
        return False

    # -- closing ------------------------------------------------------------------------------

    def is_closing(self) -> bool:
        return self._closing or self._stream.closed()

    def close(self) -> None:
        """Close once what was written has left (asyncio's close(); tornado's would drop it)."""
        if self._closing:
            return
        self._closing = True
        last = self._last_write
        if last is None or last.done():
            self._stream.close()
        else:
            last.add_done_callback(lambda _: self._stream.close())

    def abort(self) -> None:
        self._closing = True
        self._stream.close()

    def _stream_closed(self) -> None:
        self._closing = True
        self._tunnel.browser_closed()
