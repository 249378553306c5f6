"""Websocket frame boundaries in a relayed byte stream, found without copying or unmasking payloads.

The raw relay (tunnel.py) forwards websocket bytes as they arrive. It still needs to know where
frames and messages end: to count what a pane received, to refuse a browser message over the size
limit before any of its payload goes upstream, to stop a paused pane at a message boundary, and to
know whether a close frame of its own may be written. ``FrameScanner`` follows the stream reading
only frame headers (2 to 14 bytes each) and skipping payloads by length.

It also refuses what RFC 6455 forbids a peer without extensions to send (reserved bits or opcodes,
fragmented or long control frames, wrong masking, a continuation without a message), so a relay
without a websocket library is no laxer than one with it. Payload checks (UTF-8 in text messages)
stay with the endpoints, which run full websocket implementations.
"""

from __future__ import annotations

import os

_CONTINUATION, _TEXT, _BINARY, _CLOSE, _PING, _PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
_KNOWN_OPCODES = frozenset({_CONTINUATION, _TEXT, _BINARY, _CLOSE, _PING, _PONG})
_MAX_HEADER = 14  # 2 + 8 (64-bit length) + 4 (mask)


class FrameError(Exception):
    """The stream broke the protocol, or a message is too big.

    ``code`` is the close code to answer with, ``offset`` how many bytes of the chunk being scanned
    came before the offending frame (they may be relayed; nothing from that frame on may).
    """

    def __init__(self, code: int, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.offset = offset


class FrameScanner:
    """Follows one direction of a websocket connection, chunk by chunk.

    ``masked`` says which direction: frames from a client (the browser) are masked, frames from a
    server are not. ``max_message`` (0: no limit) bounds a data message, fragments summed.
    Counters are cumulative: ``messages`` complete data messages, ``data_bytes`` their payload bytes.
    """

    def __init__(self, *, masked: bool, max_message: int = 0) -> None:
        self._masked = masked
        self._max_message = max_message
        self._header = b""  # the start of a header split across chunks (at most 13 bytes)
        self._remaining = 0  # payload bytes of the current frame still to come
        self._frame_is_data = False
        self._frame_ends_message = False
        self._in_message = False  # a fragmented data message has started and not ended
        self._message_bytes = 0
        self.messages = 0
        self.data_bytes = 0
        self.close_seen = False

    @property
    def at_frame_boundary(self) -> bool:
        """No frame is partly through: a frame of the relay's own may be written now."""
        return not self._remaining and not self._header

    @property
    def at_message_boundary(self) -> bool:
        """No data message is partly through: stopping here leaves the peer with whole messages."""
        return self.at_frame_boundary and not self._in_message

    def feed(self, data: bytes, stop_at_message_end: bool = False) -> int:
        """Scan ``data``; returns how many of its bytes were scanned.

        That is all of them, unless ``stop_at_message_end``: then scanning stops right after the
        data message in progress ends (at once if none is). Raises ``FrameError``.
        """
        size = len(data)
        pos = 0
        while pos < size:
            if stop_at_message_end and self.at_message_boundary:
                return pos
            remaining = self._remaining
            if remaining:
                take = min(remaining, size - pos)
                pos += take
                self._remaining = remaining - take
                if self._frame_is_data:
                    self.data_bytes += take
                if take == remaining:
                    self._end_frame()
                continue
            pos = self._read_header(data, pos)
        return pos

    def _read_header(self, data: bytes, pos: int) -> int:
        """Parse the header at ``pos`` (or complete one held from the last chunk); returns the new pos."""
        held = self._header
        if held:
            window = held + data[pos : pos + _MAX_HEADER]
            start, frame_offset = 0, 0
        else:
            window, start, frame_offset = data, pos, pos
        available = len(window) - start
        if available < 2:
            self._header = bytes(window[start:])
            return len(data)
        first, second = window[start], window[start + 1]
        length = second & 0x7F
        extended = 2 if length == 126 else 8 if length == 127 else 0
        masked = bool(second & 0x80)
        header_size = 2 + extended + (4 if masked else 0)
        if available < header_size:
            self._header = bytes(window[start:])
            return len(data)
        if extended:
            length = int.from_bytes(window[start + 2 : start + 2 + extended], "big")
        opcode, fin = first & 0x0F, bool(first & 0x80)
        # Checked before the held start of the header is dropped: a refused frame whose header
        # began in an earlier chunk leaves the scanner off a frame boundary, as that peer sees it.
        self._check(first, length, masked, frame_offset)
        self._header = b""
        too_big = bool(
            opcode < _CLOSE and self._max_message and self._message_bytes + length > self._max_message
        )
        # A frame that is too big is still followed (its payload skipped by length), so whoever
        # refuses it can keep scanning for the peer's answer to that refusal.
        self._start_frame(opcode, fin, length)
        if too_big:
            raise FrameError(1009, "message too big", frame_offset)
        # Bytes of this chunk the header used (part of it may have come with the previous chunk).
        return pos + header_size - len(held)

    def _check(self, first: int, length: int, masked: bool, offset: int) -> None:
        """Refuse what a peer without extensions must not send (close code 1002, protocol error)."""
        opcode = first & 0x0F
        if first & 0x70:
            raise FrameError(1002, "reserved bits set", offset)
        if opcode not in _KNOWN_OPCODES:
            raise FrameError(1002, "unknown opcode", offset)
        if masked != self._masked:
            raise FrameError(1002, "wrong masking", offset)
        if length >> 63:
            raise FrameError(1002, "bad length", offset)
        if opcode >= _CLOSE:
            if not first & 0x80 or length > 125:
                raise FrameError(1002, "bad control frame", offset)
        elif (opcode == _CONTINUATION) != self._in_message:
            raise FrameError(1002, "bad fragmentation", offset)

    def _start_frame(self, opcode: int, fin: bool, length: int) -> None:
        is_data = opcode < _CLOSE
        self._frame_is_data = is_data
        if is_data:
            self._frame_ends_message = fin
            self._in_message = True
            self._message_bytes += length
        elif opcode == _CLOSE:
            self.close_seen = True
        self._remaining = length
        if not length:
            self._end_frame()

    def _end_frame(self) -> None:
        if self._frame_is_data and self._frame_ends_message:
            self.messages += 1
            self._in_message = False
            self._message_bytes = 0


def close_frame(code: int, reason: str = "", *, masked: bool) -> bytes:
    """A close frame of the relay's own: masked toward a server (the dashboard), plain toward the browser."""
    payload = code.to_bytes(2, "big") + reason.encode()[:123]
    header = bytes([0x80 | _CLOSE, (0x80 if masked else 0) | len(payload)])
    if not masked:
        return header + payload
    key = os.urandom(4)
    return header + key + bytes(byte ^ key[i % 4] for i, byte in enumerate(payload))
