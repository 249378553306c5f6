"""Talking to a Dask scheduler safely: Dask's comm protocol spoken by hand, nothing ever unpickled.

A scheduler address can belong to anyone on a shared node, and what a scheduler sends can hold
pickled objects. Dask's own ``rpc`` cannot be restricted enough: its ``loads`` unpickles any
``__Pickled__`` sub-frame whatever ``deserializers`` say (distributed/protocol/core.py), and an
erred task's record in the task stream carries the exception as a pickled ``Serialized``. So the
recorder speaks the TCP framing itself (one persistent connection per scheduler, the handshake,
one request at a time, as ``distributed.core.send_recv`` does) and decodes replies with plain
msgpack: Dask's out-of-band objects stay what msgpack makes of their markers
(``{"__Pickled__": 3}``, a dict holding a frame number), their frames are never read, and nothing
is unpickled because nothing here calls pickle (no object hook either: a Python call per map
would cost several microseconds per task). Sizes are checked before anything is read, and every
call has a timeout. What the replies mean is scheduler.py's job.
"""

from __future__ import annotations

import asyncio
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass

import msgpack

# Every reply is decoded within limits sized to what Dask really sends for the calls made here,
# so that a hostile peer cannot make the recorder allocate without end: one byte of msgpack can
# become a Python object of 60+ bytes (an empty map is a dict), so the frame's size bounds the
# object count and the per-container limits bound any one allocation. Nesting is bounded by the
# msgpack C extension's fixed stack (1024 levels; deeper fails with StackError).
#
# Measured on a real LocalCluster (distributed 2025, 2 workers): the handshake is 42 bytes; an
# index 3; ``identity`` 1.7 kB for 2 workers (~0.8 kB a worker: ~0.8 MB for the 1024 asked for),
# largest map 13, depth 7; ``get_task_prefix_states`` 54 bytes for one prefix; a worker's
# ``events`` 154 bytes; ``get_task_stream`` 10.4 MB for 40,200 records (259 bytes a record,
# largest map 11, depth 5, four sub-frames per erred task). The scheduler keeps 100,000 records
# (``task-stream-length``), so its whole buffer is ~26 MB of plain records.
TASK_STREAM_RECORDS = 100_000


@dataclass(frozen=True)
class ReplyLimits:
    """What one kind of reply may hold; anything beyond is refused before or while decoding."""

    max_bytes: int  # the whole message, frames included (msgpack's max_buffer_size for frame 0)
    max_frames: int
    max_map_len: int
    max_array_len: int
    max_str_len: int
    max_bin_len: int
    max_ext_len: int = 64  # Dask sends no ext types


# The handshake is a map of three short fields: 4 kB is a hundred times what Dask sends.
HANDSHAKE_LIMITS = ReplyLimits(
    max_bytes=4096, max_frames=4, max_map_len=32, max_array_len=32, max_str_len=1024, max_bin_len=1024
)
# Index, identity (1024 workers at most, ~0.8 kB each), prefix states (a map per task prefix; tens
# of thousands of prefixes is already an unusual graph), events (Dask keeps a bounded log per
# topic): 8 MiB is ten times the largest of them. A string may be as long as its reply: keys and
# names of any length reach the drawn plots whole (the reply's size bounds them all together).
SMALL_REPLY_LIMITS = ReplyLimits(
    max_bytes=8 * 2**20,
    max_frames=64,
    max_map_len=50_000,
    max_array_len=50_000,
    max_str_len=8 * 2**20,
    max_bin_len=256 * 1024,
)
# The task stream: at most the scheduler's whole buffer, twice over for headroom (records with
# long keys or texts are bigger than the measured 259 bytes: 64 MiB allows ~670 bytes a record);
# a record is a map of ~11 fields (its ``metadata`` map may hold more), texts are tracebacks; an
# erred record brings four sub-frames (read, never decoded), hence the frame count. A key may be as
# long as the reply: one over a limit of its own would fail every read of the stream after it.
TASK_STREAM_LIMITS = ReplyLimits(
    max_bytes=64 * 2**20,
    max_frames=4 * TASK_STREAM_RECORDS + 1,
    max_map_len=1024,
    max_array_len=2 * TASK_STREAM_RECORDS,
    max_str_len=64 * 2**20,
    max_bin_len=2**20,
)
# No message from a scheduler is read past this, whatever was asked (was 256 MiB).
MAX_MESSAGE_BYTES = TASK_STREAM_LIMITS.max_bytes
MAX_FRAMES = TASK_STREAM_LIMITS.max_frames
# What a scheduler's exception text may take in a record; tracebacks of deep stacks are long.
MAX_TEXT = 4000
# Dask's handshake: what we can do. No compression, so no sub-frame needs decompressing (and we
# never decode sub-frames anyway); the pickle protocol is stated because Dask requires the field.
HANDSHAKE = {"compression": None, "python": tuple(sys.version_info)[:3], "pickle-protocol": 5}
_U64 = struct.Struct("<Q")


class SchedulerError(Exception):
    """A call to a scheduler failed; the reason is written for the user."""


class HandlerFailed(SchedulerError):
    """The scheduler answered, with the error its handler raised (its connection still works)."""


class SchedulerBusy(SchedulerError):
    """The scheduler did not answer in time: it hangs, or its own work holds its event loop (a
    large graph arriving holds it for seconds)."""


def decode(frame: bytes | memoryview, limits: ReplyLimits = SMALL_REPLY_LIMITS) -> object:
    """A Dask message from its msgpack frame 0 (sub-frames are never read), within ``limits``.

    A frame that breaks a limit, or is not msgpack, is dropped whole: the error raised holds a
    message only, no part of the frame or of what was decoded of it.
    """
    unpacker = msgpack.Unpacker(
        None,
        use_list=False,
        strict_map_key=False,
        raw=False,
        max_buffer_size=limits.max_bytes,
        max_map_len=limits.max_map_len,
        max_array_len=limits.max_array_len,
        max_str_len=limits.max_str_len,
        max_bin_len=limits.max_bin_len,
        max_ext_len=limits.max_ext_len,
    )
    failure = ""
    try:
        unpacker.feed(frame)
        message = unpacker.unpack()
        if unpacker.tell() != len(frame):
            failure = "bytes after its end"
        else:
            return message
    except msgpack.OutOfData:
        failure = "it ends early"
    except msgpack.BufferFull:
        failure = f"more than {limits.max_bytes} bytes"
    except (ValueError, MemoryError, msgpack.UnpackException) as e:  # msgpack's errors derive from these
        failure = type(e).__name__ if isinstance(e, MemoryError) else str(e)[:200]
    finally:
        # Nothing of a refused frame may outlive this call through a traceback's locals.
        del frame, unpacker
        message = None
    raise SchedulerError(f"The scheduler sent a message that is not Dask's or is too big ({failure}).")


def encode(message: Mapping[str, object]) -> bytes:
    """One message in Dask's TCP framing: total length, frame count and lengths, then the frame."""
    frame = msgpack.packb(message, use_bin_type=True)
    prelude = _U64.pack(1) + _U64.pack(len(frame))
    return _U64.pack(len(prelude) + len(frame)) + prelude + frame


def parse_address(address: str) -> tuple[str, int]:
    """``tcp://host:port`` (or ``host:port``) -> (host, port); other transports are refused."""
    scheme, sep, rest = address.partition("://")
    if not sep:
        scheme, rest = "tcp", address
    if scheme != "tcp":
        raise SchedulerError(f"Recording a scheduler over {scheme}:// is not supported (tcp:// only).")
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise SchedulerError(f"{address!r} is not a scheduler address (tcp://host:port).")
    return host, int(port)


class SchedulerComm:
    """One connection to one scheduler; calls are serialised on it, as Dask's comms are."""

    def __init__(self, address: str, *, timeout: float = 5.0, max_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.address = address
        self.timeout = timeout
        self.max_bytes = min(max_bytes, MAX_MESSAGE_BYTES)  # a ceiling over every reply's own limits
        self._host, self._port = parse_address(address)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._lock = asyncio.Lock()

    async def call(self, op: str, limits: ReplyLimits = SMALL_REPLY_LIMITS, **kwargs: object) -> object:
        """Send ``op`` with ``kwargs``; the reply, decoded within ``limits``. Raises SchedulerError."""
        async with self._lock:
            failure, kind = "", SchedulerError
            try:
                return await asyncio.wait_for(self._call(op, limits, kwargs), self.timeout)
            except SchedulerError as e:
                failure, kind = str(e), type(e)
            except (TimeoutError, asyncio.TimeoutError):
                # A late reply would answer the next request: the connection cannot be reused.
                failure = f"The scheduler at {self.address} did not answer {op!r} within {self.timeout:g} s."
                kind = SchedulerBusy
            except (OSError, asyncio.IncompleteReadError, EOFError) as e:
                failure = f"The scheduler at {self.address} cannot be reached ({e})."
            self._drop()
            # Raised afresh, outside the handlers: the error keeps no traceback into the read, whose
            # frames would keep a refused message's bytes alive.
            raise kind(failure)

    async def _call(self, op: str, limits: ReplyLimits, kwargs: Mapping[str, object]) -> object:
        if self._writer is None:
            await self._connect()
        assert self._writer is not None
        self._writer.write(encode({"op": op, "reply": True, **kwargs}))
        await self._writer.drain()
        reply = await self._read(limits)
        if isinstance(reply, Mapping) and reply.get("status") == "uncaught-error":
            text = str(reply.get("exception_text") or "unknown error")[:MAX_TEXT]
            raise HandlerFailed(f"The scheduler at {self.address} failed on {op!r}: {text}")
        return reply

    async def _connect(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self._host, self._port)
        # Both sides send their handshake first, then read the other's.
        self._writer.write(encode(HANDSHAKE))
        await self._writer.drain()
        handshake = await self._read(HANDSHAKE_LIMITS)
        if not isinstance(handshake, Mapping) or "pickle-protocol" not in handshake:
            del handshake  # kept by no traceback
            raise SchedulerError(f"{self.address} does not speak Dask's protocol.")

    async def _read(self, limits: ReplyLimits) -> object:
        assert self._reader is not None
        max_bytes = min(self.max_bytes, limits.max_bytes)
        (head,) = _U64.unpack(await self._reader.readexactly(8))
        if head < 8 or head > max_bytes:
            raise SchedulerError(f"The scheduler at {self.address} sent a message of {head} bytes.")
        first = await self._reader.readexactly(head)
        (count,) = _U64.unpack_from(first)
        if not 0 < count <= limits.max_frames or 8 + 8 * count > head:
            raise SchedulerError(f"The scheduler at {self.address} sent a malformed message.")
        lengths = struct.unpack_from(f"<{count}Q", first, 8)
        total = sum(lengths)
        if total > max_bytes:
            raise SchedulerError(f"The scheduler at {self.address} sent a message of {total} bytes.")
        body = first[8 + 8 * count :]
        del first
        # Dask sends the prelude and the first frames in one piece, big buffers after it.
        if len(body) < total:
            body += await self._reader.readexactly(total - len(body))
        try:
            # Only frame 0 is ever decoded: Dask's out-of-band frames are read past, never copied.
            return decode(memoryview(body)[: lengths[0]], limits)
        finally:
            del body  # a refused message leaves nothing behind in a traceback

    def _drop(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None

    async def close(self) -> None:
        self._drop()
