"""Socket reads for the raw relay: into one shared buffer, then copied out at their real size.

For a plain ``asyncio.Protocol``, asyncio's socket transport reads with ``recv(256 KiB)``: CPython
allocates the whole 256 KiB for every read (glibc serves that with mmap and munmap) and then shrinks
it. That is about 10 µs per read here, ten times what the relay spends on a small message otherwise,
and it is paid twice per round trip. A ``BufferedProtocol`` is handed a buffer to ``recv_into``
instead. asyncio calls ``buffer_updated`` right after each read, on the loop's thread, so the relay
sockets of one thread share one buffer: each read is copied out before anything else can run.
"""

from __future__ import annotations

import asyncio
import threading

_READ_SIZE = 256 * 1024  # as much as asyncio's own reads take at once


class _Buffers(threading.local):
    def __init__(self) -> None:
        self.view = memoryview(bytearray(_READ_SIZE))


_buffers = _Buffers()


class CopyingProtocol(asyncio.BufferedProtocol):
    """A protocol that receives ``bytes`` in ``data_received``, read without a large allocation."""

    def get_buffer(self, sizehint: int) -> memoryview:
        return _buffers.view

    def buffer_updated(self, nbytes: int) -> None:
        self.data_received(_buffers.view[:nbytes].tobytes())

    def data_received(self, data: bytes) -> None:
        raise NotImplementedError
