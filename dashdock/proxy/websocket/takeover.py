"""Take a browser's socket from tornado once its upgrade is answered, for the raw relay.

tornado's ``RequestHandler.detach()`` hands over the ``IOStream`` and ends HTTP processing. A plain
TCP stream's socket can then change hands the way tornado's own ``IOStream.start_tls`` does it: only
while the stream is idle, with any bytes tornado already read carried over. The socket is
duplicated and tornado's copy closed, which unregisters it from the loop without touching the
connection. A TLS stream (Jupyter served over HTTPS) holds its session inside ``ssl``, which an
asyncio transport cannot adopt: such browsers' bytes go through tornado's stream (tornado_stream.py).

The unread bytes sit in tornado's private ``_read_buffer`` (``_read_buffer_size`` of them, from
``_read_buffer_pos`` in the tornado releases that still keep one); ``start_tls`` relies on the same
fields. ``can_take`` is asked before anything is connected, so a tornado whose stream looks
different falls back to the slower path instead of failing.
"""

from __future__ import annotations

import socket

from tornado.iostream import IOStream, SSLIOStream


def can_take(stream: object) -> bool:
    """Whether the raw relay may take this stream's socket."""
    return (
        isinstance(stream, IOStream)
        and not isinstance(stream, SSLIOStream)
        and isinstance(getattr(stream, "_read_buffer", None), bytearray)
        and isinstance(getattr(stream, "_read_buffer_size", None), int)
        and isinstance(getattr(stream, "_read_buffer_pos", 0), int)
    )


def take_socket(stream: IOStream) -> tuple[socket.socket, bytes]:
    """The stream's socket, and the bytes tornado read from it that nobody consumed.

    The stream must be detached and idle (its writes flushed, no read pending); it is closed.
    Raises ``OSError`` when the connection is already gone.
    """
    if stream.closed() or stream.socket is None:
        raise ConnectionError("the browser went away")
    if stream.reading() or stream.writing():
        raise RuntimeError("the stream is not idle")
    start = getattr(stream, "_read_buffer_pos", 0)
    buffered = bytes(stream._read_buffer[start : start + stream._read_buffer_size])
    taken = stream.socket.dup()
    stream.close()
    return taken, buffered
