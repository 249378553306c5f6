"""Memory of the Jupyter server while one 2 GiB websocket message goes from a dashboard to a browser.

A fake dashboard (this script in a process of its own) answers the upgrade, sends one binary frame whose
header announces 2 GiB, then streams the payload as fast as the relay takes it. A client reads the message
through dashdock (a) as fast as it can and (b) after stalling 3 s once the first payload byte arrived (a relay
without backpressure buffers what it cannot deliver), then closes the websocket. The server's RSS is sampled
every 10 ms: before, when the client got the first payload byte, peak, and 1 s after the close. Jupyter runs
over HTTPS (a self-signed certificate), then over plain HTTP for comparison, each in a server of its own so
the figures do not mix. A run that grows the server past 3 GiB is cut short, so a relay that buffers whole
messages cannot exhaust the machine. Run: .venv/bin/python bench/https_large_message.py
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
from _common import HOST, TOKEN, JupyterServer, free_port, heading, rss_bytes, stop, table, wait_for_port

MB = 1024 * 1024
SIZE = 2 * 1024 * MB
WARMUP = 4 * MB
CHUNK = 256 * 1024
STALL = 3.0
GROWTH_CAP = 3 * 1024 * MB
RUN_DEADLINE = 300.0
_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def frame_header(length: int, *, masked: bool) -> bytes:
    """The header of a final binary frame announcing ``length`` payload bytes (64-bit length form)."""
    return (
        bytes([0x82, 127 | (0x80 if masked else 0)])
        + length.to_bytes(8, "big")
        + (b"mask" if masked else b"")
    )


# -- the dashboard (its own process) ----------------------------------------------------------


async def serve_dashboard_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Upgrade, send one message of ``?size=`` bytes (zeros) in one frame, answer the client's close."""
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        fields = {
            name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in head)
        }
        size = int(parse_qs(urlsplit(head[0].split(" ")[1]).query).get("size", [str(SIZE)])[0])
        accept = base64.b64encode(hashlib.sha1(fields["sec-websocket-key"].encode() + _GUID).digest())
        writer.write(
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            b"Sec-WebSocket-Accept: " + accept + b"\r\n\r\n" + frame_header(size, masked=False)
        )
        zeros = memoryview(bytes(CHUNK))
        sent = 0
        while sent < size:
            step = min(CHUNK, size - sent)
            writer.write(zeros[:step])
            await writer.drain()
            sent += step
        await reader.readexactly(2)  # the header of the client's close frame
        writer.write(b"\x88\x02\x03\xe8")
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def run_dashboard(port: int) -> None:
    server = await asyncio.start_server(serve_dashboard_connection, HOST, port)
    async with server:
        await server.serve_forever()


# -- the browser ------------------------------------------------------------------------------


class Run:
    """One message received through the relay, with the server's RSS sampled while it lasts."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.before = rss_bytes(pid)
        self.peak = self.before
        self.at_first_byte = 0
        self.capped = False
        self.received = 0
        self.first_byte_after = 0.0
        self.elapsed = 0.0
        self.status = "ok"

    async def sample(self, stop: asyncio.Event, client: asyncio.Task[None]) -> None:
        while not stop.is_set():
            self.peak = max(self.peak, rss_bytes(self.pid))
            if self.peak - self.before > GROWTH_CAP:
                self.capped = True
                client.cancel()
                return
            await asyncio.sleep(0.01)


async def receive(
    run: Run, port: int, tls: ssl.SSLContext | None, path: str, size: int, stall: float
) -> None:
    reader, writer = await asyncio.open_connection(HOST, port, ssl=tls, limit=CHUNK)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Authorization: token {TOKEN}\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101 "):
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode("latin-1"))
        start = time.perf_counter()
        if await reader.readexactly(10) != frame_header(size, masked=False):
            raise ConnectionError("not the frame the dashboard sent")
        while run.received < size:
            data = await reader.read(min(CHUNK, size - run.received))
            if not data:
                raise ConnectionError(f"the relay hung up after {run.received} of {size} bytes")
            if not run.received:
                run.first_byte_after = time.perf_counter() - start
                run.at_first_byte = rss_bytes(run.pid)
                if stall:
                    await asyncio.sleep(stall)
            run.received += len(data)
        run.elapsed = time.perf_counter() - start
        writer.write(b"\x88\x82mask" + bytes(a ^ b for a, b in zip(b"\x03\xe8", b"ma", strict=True)))
        await reader.read()  # the dashboard's answer, then the end of the connection
    finally:
        writer.close()


async def measure(pid: int, port: int, tls: ssl.SSLContext | None, path: str, size: int, stall: float) -> Run:
    run = Run(pid)
    stop = asyncio.Event()
    client = asyncio.create_task(receive(run, port, tls, f"{path}?size={size}", size, stall))
    sampler = asyncio.create_task(run.sample(stop, client))
    await asyncio.wait([client], timeout=RUN_DEADLINE)
    stop.set()
    await sampler
    if run.capped:
        run.status = f"cut at +{GROWTH_CAP // MB} MB"
    elif not client.done():
        client.cancel()
        run.status = f"unfinished after {RUN_DEADLINE:.0f} s"
    elif client.exception() is not None:
        error = client.exception()
        run.status = f"failed: {type(error).__name__} {str(error)[:60]}"
    return run


def row(label: str, run: Run) -> list[str]:
    after = rss_bytes(run.pid)
    return [
        label,
        f"{run.received / MB:.0f}",
        f"{run.first_byte_after:.2f}" if run.at_first_byte else "-",
        f"{run.received / MB / run.elapsed:.0f}" if run.elapsed else "-",
        f"{run.before / MB:.0f}",
        f"{(run.at_first_byte - run.before) / MB:+.1f}" if run.at_first_byte else "-",
        f"{(run.peak - run.before) / MB:+.1f}",
        f"{(after - run.before) / MB:+.1f}",
        run.status,
    ]


async def bench_server(
    server: JupyterServer, scheme: str, tls: ssl.SSLContext | None, dashboard: int
) -> list[list[str]]:
    await wait_ready(f"{scheme}://{HOST}:{server.port}/api/status", tls)
    path = f"/dashdock/proxy/{HOST}:{dashboard}/ws"
    await measure(server.pid, server.port, tls, path, WARMUP, 0.0)  # imports, pools
    rows = []
    for label, stall in (("fast reader", 0.0), (f"stalled {STALL:.0f} s", STALL)):
        run = await measure(server.pid, server.port, tls, path, SIZE, stall)
        await asyncio.sleep(1.0)
        rows.append([scheme.upper(), *row(label, run)])
    return rows


async def wait_ready(url: str, tls: ssl.SSLContext | None, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession(headers={"Authorization": f"token {TOKEN}"}) as session:
        while time.monotonic() < deadline:
            try:
                async with session.get(url, ssl=tls if tls is not None else True) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise TimeoutError(f"the Jupyter server did not answer {url}")


def https_server_dir() -> tuple[str, Path]:
    """A Jupyter directory whose config serves HTTPS with a new self-signed certificate, and that cert."""
    tmp = tempfile.mkdtemp(prefix="dashdock-bench-")
    cert, key = Path(tmp) / "cert.pem", Path(tmp) / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-nodes", "-days", "1", "-subj", f"/CN={HOST}"),
            *("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"),
            *("-addext", f"subjectAltName=IP:{HOST}", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    (Path(tmp) / "config").mkdir()
    (Path(tmp) / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"certfile": str(cert), "keyfile": str(key)}})
    )
    return tmp, cert


class Dashboard:
    """This script's dashboard, in a process of its own so it never shares a GIL with the client."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "dashboard", str(self.port)], stdin=subprocess.DEVNULL
        )
        wait_for_port(self.port, self.proc)

    def __enter__(self) -> Dashboard:
        return self

    def __exit__(self, *exc: object) -> None:
        stop(self.proc)


def main() -> None:
    print(
        f"https_large_message: one {SIZE // MB} MB websocket message, dashboard -> browser, through dashdock"
    )
    rows = [
        [
            "Jupyter",
            "reader",
            "MB",
            "1st byte s",
            "MB/s",
            "RSS before",
            "at 1st byte",
            "peak",
            "after",
            "status",
        ]
    ]
    with Dashboard() as dashboard:
        tmp, cert = https_server_dir()
        with JupyterServer(with_jsp=False, tmp=tmp) as server:
            rows += asyncio.run(
                bench_server(server, "https", ssl.create_default_context(cafile=str(cert)), dashboard.port)
            )
            server.log_errors()
        with JupyterServer(with_jsp=False) as server:
            rows += asyncio.run(bench_server(server, "http", None, dashboard.port))
            server.log_errors()
    heading(
        f"HTTPS {SIZE // 1024 // MB} GiB websocket message: server RSS growth (target < 20 MB); "
        "growth in MB from 'RSS before'"
    )
    table(rows)


if __name__ == "__main__":
    if sys.argv[1:2] == ["dashboard"]:
        with contextlib.suppress(KeyboardInterrupt):  # how the bench stops it
            asyncio.run(run_dashboard(int(sys.argv[2])))
    else:
        main()
