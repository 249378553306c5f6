"""The websocket relay keeps the same promises on each browser side, under any cut of the byte stream.

Over plain HTTP the browser's socket is taken from tornado and bytes are pumped raw; over HTTPS the
same relay reads and writes tornado's stream, which holds the TLS session. Tests marked with ``relay``
run on both (the stream over plain HTTP); the wire-level ones speak to the proxy frame by frame, on
both and over HTTPS.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import subprocess
import threading
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest
import tornado.httpserver
import tornado.testing
import tornado.web
import tornado.websocket
from _raw_upstream import Connection, RawUpstream
from _support import Jupyter, RecordingUpstream, wait_for, websocket_refusal
from _ws_wire import (
    BINARY,
    CLOSE,
    CONTINUATION,
    PING,
    PONG,
    TEXT,
    RawClient,
    close_code,
    frame,
    header_only,
    raw_echo,
)
from tornado.httpclient import HTTPRequest
from tornado.websocket import WebSocketClientConnection, websocket_connect

from dashdock.proxy.websocket import relay as ws_relay
from dashdock.proxy.websocket import upstream as ws_upstream

DEADLINE = 10.0
PANE = "relay-probe"


@contextlib.contextmanager
def choose_relay(monkeypatch: pytest.MonkeyPatch, side: str) -> Iterator[None]:
    """Check websockets use this browser side: the socket (``raw``) or tornado's stream (otherwise).

    ``stream`` forces tornado's stream over plain HTTP; ``https`` expects the relay to choose it.
    """
    taken: list[bool] = []
    real = ws_relay.can_take

    def can_take(stream: object) -> bool:
        taken.append(False if side == "stream" else real(stream))
        return taken[-1]

    monkeypatch.setattr(ws_relay, "can_take", can_take)
    yield
    assert taken and all(taken) == (side == "raw"), taken


@pytest.fixture(params=["raw", "stream"])
def relay(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The browser side of the test's websockets; ``stream`` is the one HTTPS gets."""
    with choose_relay(monkeypatch, request.param):
        yield request.param


async def pane_relays(jupyter: Jupyter, pane: str = PANE) -> list[dict[str, Any]]:
    code, body = await jupyter.api("GET", f"panes/{pane}")
    assert code == 200, body
    return body["relays"]


async def relayed(jupyter: Jupyter) -> list[tuple[int, int]]:
    """Messages and bytes sent to each of the pane's open websockets."""
    return [(relay["messages"], relay["bytes"]) for relay in await pane_relays(jupyter)]


async def set_pane(jupyter: Jupyter, **state: Any) -> None:
    code, body = await jupyter.api("PATCH", f"panes/{PANE}", state)
    assert code == 200, body


async def read(connection: WebSocketClientConnection) -> str | bytes | None:
    return await asyncio.wait_for(connection.read_message(), DEADLINE)


@pytest.fixture
def picky() -> Iterator[tuple[RawUpstream, list[list[str]]]]:
    """A dashboard that echoes and picks the last subprotocol; records what each upgrade offered."""
    offered: list[list[str]] = []

    async def serve(connection: Connection) -> None:
        await raw_echo(connection, offered)

    with RawUpstream(serve) as upstream:
        yield upstream, offered


# -- both relays ------------------------------------------------------------------------------


async def test_messages_pass_both_ways_and_the_dashboard_chooses_the_subprotocol(
    jupyter: Jupyter, picky: tuple[RawUpstream, list[list[str]]], relay: str
) -> None:
    upstream, offered = picky
    connection = await jupyter.websocket(
        f"dashdock/proxy/{upstream.netloc}/ws", subprotocols=["bokeh", "token-abc.def"]
    )
    try:
        assert offered == [["bokeh", "token-abc.def"]]
        assert connection.selected_subprotocol == "token-abc.def"
        for message in ("text", b"\x00binary", "x" * 70_000, b"y" * 3_000_000):
            await connection.write_message(message, binary=isinstance(message, bytes))
            assert await read(connection) == message
    finally:
        connection.close()


async def test_a_pane_counts_the_messages_and_bytes_it_was_sent(
    jupyter: Jupyter, recorder: RecordingUpstream, relay: str
) -> None:
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws?dashdock-pane={PANE}")
    try:
        for message in (b"a" * 10, b"b" * 200, b"c" * 70_000):
            await connection.write_message(message, binary=True)
            assert await read(connection) == message
        (counted,) = await pane_relays(jupyter)
        assert (counted["messages"], counted["bytes"]) == (3, 70_210)
    finally:
        connection.close()
    assert await read(connection) is None
    assert await pane_relays(jupyter) == []


async def test_a_paused_pane_ends_the_dashboard_session_and_its_socket_stays_open_and_silent(
    jupyter: Jupyter, recorder: RecordingUpstream, relay: str
) -> None:
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws?dashdock-pane={PANE}")
    try:
        await connection.write_message("live")
        assert await read(connection) == "live"
        assert [r["streaming"] for r in await pane_relays(jupyter)] == [True]
        await set_pane(jupyter, paused=True)
        assert await wait_for(recorder.websocket_closed), "the dashboard session is still open"
        # The pane says so: nothing more can come from the dashboard.
        assert [r["streaming"] for r in await pane_relays(jupyter)] == [False]
        frozen = await relayed(jupyter)
        await connection.write_message("while paused")
        answer = asyncio.ensure_future(connection.read_message())
        done, _ = await asyncio.wait([answer], timeout=1.0)
        assert not done, f"a paused pane got {answer.result()!r}"
        assert await relayed(jupyter) == frozen
    finally:
        connection.close(1000)
    # The browser ends it: a normal close, not a lost dashboard.
    assert await asyncio.wait_for(answer, DEADLINE) is None
    assert connection.close_code == 1000


async def test_a_pane_paused_before_its_socket_opens_never_relays(
    jupyter: Jupyter, recorder: RecordingUpstream, relay: str
) -> None:
    await set_pane(jupyter, paused=True)
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws?dashdock-pane={PANE}")
    try:
        assert await wait_for(recorder.websocket_closed)
        await connection.write_message("anyone?")
        answer = asyncio.ensure_future(connection.read_message())
        done, _ = await asyncio.wait([answer], timeout=1.0)
        assert not done, f"a paused pane got {answer.result()!r}"
        assert await relayed(jupyter) == [(0, 0)]
    finally:
        connection.close(1000)
    assert await asyncio.wait_for(answer, DEADLINE) is None


async def test_a_slowed_pane_gets_every_message_in_order(
    jupyter: Jupyter, recorder: RecordingUpstream, relay: str
) -> None:
    await set_pane(jupyter, interval=1)
    connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws?dashdock-pane={PANE}")
    try:
        sent = [f"update {n}" for n in range(20)]
        for message in sent:
            await connection.write_message(message)
        assert [await read(connection) for _ in sent] == sent
        (counted,) = await pane_relays(jupyter)
        assert counted["messages"] == len(sent)
        # Back to live: what arrives now comes without waiting for a batch.
        await set_pane(jupyter, interval=0)
        await connection.write_message("live again")
        assert await read(connection) == "live again"
    finally:
        connection.close()


async def test_a_dashboard_that_drops_its_websocket_closes_the_browser_with_1011(
    jupyter: Jupyter, relay: str
) -> None:
    async def serve(connection: Connection) -> None:
        await connection.accept_websocket()
        await connection.send_text_frame("last words")
        await connection.read_frame_header()
        connection.reset()

    with RawUpstream(serve) as dropper:
        connection = await jupyter.websocket(f"dashdock/proxy/{dropper.netloc}/ws")
        assert await read(connection) == "last words"
        await connection.write_message("bye")
        assert await read(connection) is None
        assert connection.close_code == 1011


class TestMessageLimit:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"websocket_max_message_size": 64 * 1024}

    async def test_a_browser_message_over_the_limit_is_refused_with_1009(
        self, jupyter: Jupyter, recorder: RecordingUpstream, relay: str
    ) -> None:
        connection = await jupyter.websocket(f"dashdock/proxy/{recorder.netloc}/ws")
        await connection.write_message(b"f" * 64 * 1024, binary=True)
        assert await read(connection) == b"f" * 64 * 1024
        await connection.write_message(b"z" * (64 * 1024 + 1), binary=True)
        assert await read(connection) is None
        assert connection.close_code == 1009
        assert await wait_for(recorder.websocket_closed)


# -- frame by frame, on each browser side ----------------------------------------------------


class Connect(Protocol):
    def __call__(self, path: str, *, early: bytes = b"") -> Awaitable[RawClient]: ...


def upgrade_request(jupyter: Jupyter, path: str) -> bytes:
    """A browser's upgrade request for ``path``, with Jupyter's token."""
    return (
        f"GET {jupyter.path(path)} HTTP/1.1\r\nHost: 127.0.0.1:{jupyter.port}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        f"Authorization: token {jupyter.token}\r\n\r\n"
    ).encode()


async def read_payload(client: RawClient, size: int) -> int:
    """Read ``size`` payload bytes without keeping them; returns how many of them were zero."""
    zeros = 0
    while size:
        data = await asyncio.wait_for(client.reader.read(min(size, 1024 * 1024)), DEADLINE)
        assert data, f"the relay hung up with {size} bytes to go"
        size -= len(data)
        zeros += data.count(0)
    return zeros


# What no relay with bounded queues lets a dashboard get ahead of a browser that reads nothing: the
# sockets on the way hold a few MiB (up to tens with generous kernel buffers), a relay that buffers
# whole messages takes this in well under a second.
AHEAD = 128 * 1024 * 1024
GIANT = 2 * 1024**3  # what the large message announces


class TestRelayWire:
    """The raw relay under any cut of the byte stream, on each browser side it has: the socket taken
    from tornado (``raw``), tornado's stream over plain HTTP (``stream``) and over TLS (``https``)."""

    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"websocket_max_message_size": 64 * 1024}

    @pytest.fixture(params=["raw", "stream", "https"])
    def wire(self, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
        with choose_relay(monkeypatch, request.param):
            yield request.param

    @pytest.fixture
    def http_server(
        self,
        wire: str,
        jp_asyncio_loop: asyncio.AbstractEventLoop,
        http_server_port: tuple[Any, int],
        jp_web_app: Any,
        certificate: tuple[Path, Path],
    ) -> Iterator[tornado.httpserver.HTTPServer]:
        tls = server_context(certificate) if wire == "https" else None
        yield from serve_jupyter(jp_asyncio_loop, http_server_port, jp_web_app, tls)

    @pytest.fixture
    def tls(self, wire: str, certificate: tuple[Path, Path]) -> ssl.SSLContext | None:
        """The browser's TLS context, when Jupyter is served over HTTPS."""
        return ssl.create_default_context(cafile=str(certificate[0])) if wire == "https" else None

    @pytest.fixture
    def connect(self, jupyter: Jupyter, tls: ssl.SSLContext | None) -> Connect:
        async def connect(path: str, *, early: bytes = b"") -> RawClient:
            """Upgrade; ``early`` bytes go out with the request, before the 101 was read (pipelined)."""
            reader, writer = await asyncio.open_connection("127.0.0.1", jupyter.port, ssl=tls)
            writer.write(upgrade_request(jupyter, path) + early)
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE)
            assert head.startswith(b"HTTP/1.1 101 "), head
            return RawClient(reader, writer, head)

        return connect

    async def test_frames_cut_into_single_bytes_arrive_whole(
        self, connect: Connect, picky: tuple[RawUpstream, list[list[str]]]
    ) -> None:
        upstream, _ = picky
        client = await connect(f"dashdock/proxy/{upstream.netloc}/ws")
        try:
            message = frame(TEXT, b"fragmented", fin=False, masked=True)
            message += frame(PING, b"!", masked=True)
            message += frame(CONTINUATION, b" but whole" * 20, masked=True)
            for byte in range(len(message)):
                await client.send(message[byte : byte + 1])
            assert await client.read_frame() == (TEXT, b"fragmented")
            assert await client.read_frame() == (PONG, b"!")
            assert await client.read_frame() == (CONTINUATION, b" but whole" * 20)
        finally:
            client.close()

    async def test_a_frame_sent_with_the_upgrade_request_is_not_lost(
        self, connect: Connect, picky: tuple[RawUpstream, list[list[str]]]
    ) -> None:
        upstream, _ = picky
        early = frame(BINARY, b"before the 101", masked=True) + frame(TEXT, b"and another", masked=True)
        client = await connect(f"dashdock/proxy/{upstream.netloc}/ws", early=early)
        try:
            assert await client.read_frame() == (BINARY, b"before the 101")
            assert await client.read_frame() == (TEXT, b"and another")
        finally:
            client.close()

    async def test_a_dashboard_that_trickles_a_frame_byte_by_byte_is_relayed_whole(
        self, connect: Connect
    ) -> None:
        message = frame(BINARY, bytes(range(256)) * 2)

        async def serve(connection: Connection) -> None:
            await connection.accept_websocket()
            for byte in range(len(message)):
                await connection.send(message[byte : byte + 1])
            await connection.read_frame_header()

        with RawUpstream(serve) as trickle:
            client = await connect(f"dashdock/proxy/{trickle.netloc}/ws")
            try:
                assert await client.read_frame() == (BINARY, bytes(range(256)) * 2)
            finally:
                client.close()

    async def test_a_2_gib_message_from_the_dashboard_reaches_the_browser_as_it_streams(
        self, connect: Connect
    ) -> None:
        start = bytes(range(256)) * 4096
        seen = threading.Event()

        async def serve(connection: Connection) -> None:
            await connection.accept_websocket()
            await connection.send(header_only(BINARY, GIANT, masked=False) + start)
            await wait_for(seen)  # the rest of the message never comes
            connection.hang_up()

        with RawUpstream(serve) as dashboard:
            client = await connect(f"dashdock/proxy/{dashboard.netloc}/ws")
            try:
                # Nothing waits for the end of the message: its first MiB is passed on as it came.
                header = header_only(BINARY, GIANT, masked=False)
                assert await asyncio.wait_for(
                    client.reader.readexactly(len(header) + len(start)), DEADLINE
                ) == (header + start)
                seen.set()
                # The dashboard dropped mid-frame: no close frame fits, the browser's socket is cut.
                assert await client.at_eof()
            finally:
                seen.set()
                client.close()

    async def test_a_browser_that_reads_nothing_holds_a_2_gib_message_back(self, connect: Connect) -> None:
        sent = [0]
        ahead, done = threading.Event(), threading.Event()

        async def serve(connection: Connection) -> None:
            await connection.accept_websocket()
            await connection.send(header_only(BINARY, GIANT, masked=False))
            chunk = bytes(256 * 1024)
            while not done.is_set():
                await connection.send(chunk)  # waits while the relay does not read
                sent[0] += len(chunk)
                if sent[0] >= AHEAD:
                    ahead.set()

        with RawUpstream(serve) as dashboard:
            client = await connect(f"dashdock/proxy/{dashboard.netloc}/ws")
            try:
                assert not await wait_for(ahead, 3), f"the dashboard got {sent[0]} bytes ahead of the browser"
                # The browser reads again: the message flows again, past what had been sent so far.
                header = await asyncio.wait_for(client.reader.readexactly(10), DEADLINE)
                assert header == header_only(BINARY, GIANT, masked=False)
                size = sent[0] + 1024 * 1024
                assert await read_payload(client, size) == size
            finally:
                done.set()
                client.close()

    async def test_a_hostile_giant_frame_is_refused_at_its_header_without_waiting_for_it(
        self, connect: Connect, recorder: RecordingUpstream
    ) -> None:
        client = await connect(f"dashdock/proxy/{recorder.netloc}/ws")
        try:
            await client.send(frame(TEXT, b"fine", masked=True))
            assert await client.read_frame() == (TEXT, b"fine")
            # It announces 1 TiB and sends a little: the answer comes without the rest (never buffered).
            await client.send(header_only(BINARY, 2**40, masked=True) + b"x" * 10_000)
            opcode, payload = await client.read_frame()
            assert (opcode, close_code(payload)) == (CLOSE, 1009)
            assert await client.at_eof()
            assert await wait_for(recorder.websocket_closed)
        finally:
            client.close()

    async def test_fragments_that_add_up_past_the_limit_are_refused(
        self, connect: Connect, recorder: RecordingUpstream
    ) -> None:
        client = await connect(f"dashdock/proxy/{recorder.netloc}/ws")
        try:
            await client.send(frame(BINARY, b"a" * 40_000, fin=False, masked=True))
            await client.send(frame(CONTINUATION, b"b" * 40_000, masked=True))
            opcode, payload = await client.read_frame()
            assert (opcode, close_code(payload)) == (CLOSE, 1009)
            assert await wait_for(recorder.websocket_closed)
        finally:
            client.close()

    async def test_an_unmasked_browser_frame_is_a_protocol_error(
        self, connect: Connect, recorder: RecordingUpstream
    ) -> None:
        client = await connect(f"dashdock/proxy/{recorder.netloc}/ws")
        try:
            await client.send(frame(TEXT, b"unmasked"))
            opcode, payload = await client.read_frame()
            assert (opcode, close_code(payload)) == (CLOSE, 1002)
            assert await wait_for(recorder.websocket_closed)
        finally:
            client.close()

    async def test_a_dashboard_cut_off_mid_frame_cuts_the_browser_socket(self, connect: Connect) -> None:
        async def serve(connection: Connection) -> None:
            await connection.accept_websocket()
            await connection.send(frame(TEXT, b"x" * 100)[:40])
            connection.hang_up()

        with RawUpstream(serve) as cut:
            client = await connect(f"dashdock/proxy/{cut.netloc}/ws")
            try:
                # No close frame can follow half a frame: the browser sees the bytes, then the end.
                assert await asyncio.wait_for(client.reader.readexactly(40), DEADLINE)
                assert await client.at_eof()
            finally:
                client.close()

    async def test_a_browser_that_leaves_during_the_upgrade_leaves_no_dashboard_connection(
        self, jupyter: Jupyter, tls: ssl.SSLContext | None
    ) -> None:
        asked, answer, hung_up = threading.Event(), threading.Event(), threading.Event()

        async def serve(connection: Connection) -> None:
            asked.set()
            await wait_for(answer)  # the browser is gone by then
            try:
                await raw_echo(connection)
            finally:
                hung_up.set()  # the proxy closed the connection (its close frame, or EOF, or a reset)

        with RawUpstream(serve) as slow:
            _, writer = await asyncio.open_connection("127.0.0.1", jupyter.port, ssl=tls)
            writer.write(upgrade_request(jupyter, f"dashdock/proxy/{slow.netloc}/ws"))
            assert await wait_for(asked)
            writer.close()
            answer.set()
            # The dashboard's socket is closed by the proxy, which its echo loop sees as the end.
            assert await wait_for(hung_up)

    async def test_the_close_handshake_passes_through(
        self, connect: Connect, picky: tuple[RawUpstream, list[list[str]]]
    ) -> None:
        upstream, _ = picky
        client = await connect(f"dashdock/proxy/{upstream.netloc}/ws")
        try:
            await client.send(frame(CLOSE, (4000).to_bytes(2, "big") + b"done", masked=True))
            assert await client.read_frame() == (CLOSE, (4000).to_bytes(2, "big") + b"done")
            assert await client.at_eof()
        finally:
            client.close()


# -- what the raw relay asks of a dashboard's handshake ---------------------------------------

BAD_ANSWERS = {
    "wrong accept": b"Sec-WebSocket-Accept: bm90IHRoZSBhbnN3ZXI=\r\n",
    "an extension nobody offered": (
        b"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n"
    ),
    "a subprotocol nobody offered": b"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: other\r\n",
}


@pytest.mark.parametrize("answer", list(BAD_ANSWERS), ids=list(BAD_ANSWERS))
async def test_a_dashboard_that_botches_the_upgrade_is_a_bad_gateway(jupyter: Jupyter, answer: str) -> None:
    async def serve(connection: Connection) -> None:
        headers = await connection.read_request_head()
        accept = ws_upstream.accept_value(headers["sec-websocket-key"]).encode()
        await connection.send(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + BAD_ANSWERS[answer].replace(b"{accept}", accept)
            + b"\r\n"
        )
        await connection.read_frame_header()

    with RawUpstream(serve) as botched:
        assert (
            await websocket_refusal(jupyter, f"dashdock/proxy/{botched.netloc}/ws", subprotocols=["bokeh"])
            == 502
        )


# -- TLS --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1: (cert, key)."""
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        subprocess.run(
            [
                *("openssl", "req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"),
                *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
                *("-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)),
            ],
            check=True,
            capture_output=True,
            timeout=30,
        )
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"openssl cannot make a test certificate: {exc}")
    return cert, key


def server_context(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    return context


def serve_jupyter(
    loop: asyncio.AbstractEventLoop, port: tuple[Any, int], app: Any, tls: ssl.SSLContext | None
) -> Iterator[tornado.httpserver.HTTPServer]:
    """Jupyter's server as pytest-jupyter's ``http_server`` runs it, over TLS with ``tls``."""

    async def start() -> tornado.httpserver.HTTPServer:
        server = tornado.httpserver.HTTPServer(app, ssl_options=tls)
        server.add_socket(port[0])
        return server

    server = loop.run_until_complete(start())
    yield server
    server.stop()
    loop.run_until_complete(asyncio.wait_for(server.close_all_connections(), 10))


class _Echo(tornado.websocket.WebSocketHandler):
    def check_origin(self, origin: str) -> bool:
        return True

    def select_subprotocol(self, subprotocols: list[str]) -> str | None:
        return subprotocols[-1] if subprotocols else None

    def on_message(self, message: str | bytes) -> None:
        self.write_message(message, binary=isinstance(message, bytes))


@pytest.fixture
def tls_dashboard(certificate: tuple[Path, Path]) -> Iterator[str]:
    """A websocket echo served over TLS with the test certificate; yields its host:port."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    port: list[int] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        server = tornado.httpserver.HTTPServer(
            tornado.web.Application([(r"/ws", _Echo)]), ssl_options=server_context(certificate)
        )
        sock, bound = tornado.testing.bind_unused_port(address="127.0.0.1")
        server.add_socket(sock)
        port.append(bound)
        ready.set()
        loop.run_forever()
        server.stop()
        loop.run_until_complete(asyncio.wait_for(server.close_all_connections(), 10))
        loop.close()

    thread = threading.Thread(target=run, name="tls-dashboard", daemon=True)
    thread.start()
    assert ready.wait(10)
    yield f"127.0.0.1:{port[0]}"
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


@pytest.fixture
def trust(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The server trusts the test certificate, as it would a CA installed on the system."""
    monkeypatch.setattr(
        ws_upstream.ClientTLS, "context", ssl.create_default_context(cafile=str(certificate[0]))
    )


def tls_source(jp_serverapp: Any, netloc: str) -> str:
    """Register the TLS dashboard as the server registers a cluster it runs; returns the source id."""
    (dashdock_app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    return dashdock_app.registry.point("0000000000a1", "TLS", "cluster", f"https://{netloc}/status").id


async def test_a_dashboard_served_over_tls_is_relayed(
    jupyter: Jupyter, jp_serverapp: Any, tls_dashboard: str, trust: None
) -> None:
    source = tls_source(jp_serverapp, tls_dashboard)
    connection = await jupyter.websocket(f"dashdock/proxy/{source}/ws", subprotocols=["bokeh", "t"])
    try:
        assert connection.selected_subprotocol == "t"
        await connection.write_message("over tls")
        assert await read(connection) == "over tls"
    finally:
        connection.close()


async def test_a_dashboard_whose_certificate_is_not_trusted_is_refused(
    jupyter: Jupyter, jp_serverapp: Any, tls_dashboard: str
) -> None:
    source = tls_source(jp_serverapp, tls_dashboard)
    assert await websocket_refusal(jupyter, f"dashdock/proxy/{source}/ws") == 502


class TestJupyterOverHTTPS:
    """Jupyter itself over TLS: the browser's socket stays tornado's, and the relay uses its stream."""

    @pytest.fixture
    def http_server(
        self,
        jp_asyncio_loop: asyncio.AbstractEventLoop,
        http_server_port: tuple[Any, int],
        jp_web_app: Any,
        certificate: tuple[Path, Path],
    ) -> Iterator[tornado.httpserver.HTTPServer]:
        yield from serve_jupyter(jp_asyncio_loop, http_server_port, jp_web_app, server_context(certificate))

    async def test_websockets_are_relayed_both_ways(
        self,
        jupyter: Jupyter,
        picky: tuple[RawUpstream, list[list[str]]],
        certificate: tuple[Path, Path],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        taken: list[bool] = []
        real = ws_relay.can_take
        monkeypatch.setattr(ws_relay, "can_take", lambda stream: taken.append(real(stream)) or taken[-1])
        upstream, offered = picky
        request = HTTPRequest(
            f"wss://127.0.0.1:{jupyter.port}{jupyter.path(f'dashdock/proxy/{upstream.netloc}/ws')}",
            headers={"Authorization": f"token {jupyter.token}"},
            ssl_options=ssl.create_default_context(cafile=str(certificate[0])),
        )
        connection = await websocket_connect(request, subprotocols=["bokeh", "token"])
        try:
            assert taken == [False]
            assert offered == [["bokeh", "token"]]
            assert connection.selected_subprotocol == "token"
            for message in ("over https", b"\x01" * 100_000):
                await connection.write_message(message, binary=isinstance(message, bytes))
                assert await read(connection) == message
        finally:
            connection.close()
