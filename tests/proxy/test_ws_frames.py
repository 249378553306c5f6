"""The raw relay follows websocket frames however the bytes are cut into reads, and refuses what it must."""

from __future__ import annotations

import os

import pytest
from _ws_wire import BINARY, CLOSE, CONTINUATION, PING, TEXT, frame, header_only

from dashdock.proxy.websocket.frames import FrameError, FrameScanner, close_frame

SIZES = [0, 1, 125, 126, 127, 65535, 65536, 70000]


def stream_of_messages(masked: bool) -> tuple[bytes, int]:
    """Whole messages of every header size, a fragmented one with a ping inside, and a close."""
    data = b"".join(
        frame(BINARY if i % 2 else TEXT, os.urandom(size), masked=masked) for i, size in enumerate(SIZES)
    )
    data += frame(TEXT, b"frag", fin=False, masked=masked)
    data += frame(PING, b"are you there", masked=masked)
    data += frame(CONTINUATION, b"mented", masked=masked)
    data += frame(CLOSE, (1000).to_bytes(2, "big"), masked=masked)
    return data, sum(SIZES) + len(b"fragmented")


@pytest.mark.parametrize("masked", [False, True], ids=["from a server", "from a browser"])
@pytest.mark.parametrize("read_size", [1, 2, 3, 7, 13, 1000, 65536, 10**9])
def test_messages_and_bytes_are_counted_however_the_stream_is_cut(masked: bool, read_size: int) -> None:
    data, payload_bytes = stream_of_messages(masked)
    scanner = FrameScanner(masked=masked)
    for start in range(0, len(data), read_size):
        chunk = data[start : start + read_size]
        assert scanner.feed(chunk) == len(chunk)
    assert scanner.messages == len(SIZES) + 1
    assert scanner.data_bytes == payload_bytes
    assert scanner.close_seen
    assert scanner.at_message_boundary


def test_boundaries_are_known_between_frames_and_between_messages() -> None:
    scanner = FrameScanner(masked=False)
    first = frame(TEXT, b"one", fin=False)
    scanner.feed(first[:2])
    assert not scanner.at_frame_boundary  # a frame is partly through
    scanner.feed(first[2:])
    assert scanner.at_frame_boundary and not scanner.at_message_boundary  # between fragments
    scanner.feed(frame(PING, b""))
    assert scanner.at_frame_boundary and not scanner.at_message_boundary
    scanner.feed(frame(CONTINUATION, b"two"))
    assert scanner.at_message_boundary
    assert (scanner.messages, scanner.data_bytes) == (1, 6)


def test_scanning_can_stop_right_where_the_message_in_progress_ends() -> None:
    scanner = FrameScanner(masked=False)
    head = frame(TEXT, b"x" * 300, fin=False)
    scanner.feed(head[:100])
    rest = head[100:] + frame(CONTINUATION, b"end") + frame(BINARY, b"next message")
    end_of_message = len(head) - 100 + len(frame(CONTINUATION, b"end"))
    assert scanner.feed(rest, stop_at_message_end=True) == end_of_message
    assert scanner.at_message_boundary
    assert scanner.messages == 1
    # At a boundary already: nothing more belongs to "the message in progress".
    assert scanner.feed(rest[end_of_message:], stop_at_message_end=True) == 0


def test_a_message_over_the_limit_is_refused_at_its_header_before_its_payload() -> None:
    scanner = FrameScanner(masked=True, max_message=1000)
    small = frame(BINARY, b"fine", masked=True)
    huge = header_only(BINARY, 2**40, masked=True)
    with pytest.raises(FrameError) as refused:
        scanner.feed(small + huge + b"payload that must not be relayed")
    assert (refused.value.code, refused.value.offset) == (1009, len(small))
    assert scanner.messages == 1
    # The refused frame is still followed by its length, so the browser's answer can be found after it.
    assert not scanner.at_frame_boundary


def test_fragments_that_add_up_to_more_than_the_limit_are_refused() -> None:
    scanner = FrameScanner(masked=True, max_message=1000)
    scanner.feed(frame(BINARY, b"a" * 600, fin=False, masked=True))
    second = frame(CONTINUATION, b"b" * 600, masked=True)
    with pytest.raises(FrameError) as refused:
        scanner.feed(second)
    assert (refused.value.code, refused.value.offset) == (1009, 0)


def test_a_refused_header_split_across_reads_leaves_no_frame_boundary() -> None:
    scanner = FrameScanner(masked=True, max_message=1000)
    huge = header_only(BINARY, 2**40, masked=True)
    scanner.feed(huge[:3])  # these bytes were relayed before the length could be read
    with pytest.raises(FrameError) as refused:
        scanner.feed(huge[3:])
    assert (refused.value.code, refused.value.offset) == (1009, 0)
    assert not scanner.at_frame_boundary


BROKEN = {
    "reserved bit": (frame(TEXT, b"x", masked=True, rsv=0x40), True),
    "unknown opcode": (frame(0x3, b"x", masked=True), True),
    "unmasked from a browser": (frame(TEXT, b"x"), True),
    "masked from a server": (frame(TEXT, b"x", masked=True), False),
    "long control frame": (frame(PING, b"x" * 126, masked=True), True),
    "fragmented control frame": (frame(PING, b"x", fin=False, masked=True), True),
    "continuation without a message": (frame(CONTINUATION, b"x", masked=True), True),
    "new message inside a fragmented one": (
        frame(TEXT, b"a", fin=False, masked=True) + frame(TEXT, b"b", masked=True),
        True,
    ),
    "length with its top bit set": (header_only(BINARY, 2**63, masked=True), True),
}


@pytest.mark.parametrize("broken", list(BROKEN), ids=list(BROKEN))
def test_frames_no_peer_may_send_are_a_protocol_error(broken: str) -> None:
    data, masked = BROKEN[broken]
    scanner = FrameScanner(masked=masked)
    with pytest.raises(FrameError) as refused:
        scanner.feed(data)
    assert refused.value.code == 1002


@pytest.mark.parametrize("masked", [False, True])
def test_the_relays_own_close_frames_are_valid_frames(masked: bool) -> None:
    data = close_frame(1011, "dashboard closed", masked=masked)
    scanner = FrameScanner(masked=masked)
    assert scanner.feed(data) == len(data)
    assert scanner.close_seen and scanner.at_frame_boundary
    payload = data[6:] if masked else data[2:]
    if masked:
        key = data[2:6]
        payload = bytes(byte ^ key[i % 4] for i, byte in enumerate(payload))
    assert payload == (1011).to_bytes(2, "big") + b"dashboard closed"
