"""Websocket relay cost: direct vs dashdock vs jupyter-server-proxy, interleaved, against tornado echoes.

(a) 100 B round trip p50/p99, (b) 1 KB pipelined throughput, (c) a Bokeh-like message of 4 websocket
messages (3 small text + 1 binary) round trip, which shows Nagle's algorithm, (d) one 50 MB binary message.
Run: .venv/bin/python bench/ws_relay.py
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import time

import aiohttp
from _common import (
    AUTH,
    JupyterServer,
    Upstream,
    heading,
    median,
    not_installed_note,
    percentile,
    ratio,
    routes,
    table,
)

ROUND_TRIPS = 4000  # per path, after warmup, in rounds of 200
THROUGHPUT_MESSAGES = 5000  # per round; 5 rounds per path
WINDOW = 64
BOKEH_ROUNDS = 5  # of 30 multi-part messages each
BIG = 50 * 1024 * 1024


async def recv_data(ws: aiohttp.ClientWebSocketResponse, timeout: float | None = None) -> str | bytes:
    message = await ws.receive(timeout)
    if message.type not in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
        raise ConnectionError(f"websocket ended: {message.type.name} {message.data!r} {message.extra!r}")
    return message.data


async def round_trips(ws: aiohttp.ClientWebSocketResponse, count: int, payload: bytes) -> list[float]:
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        await ws.send_bytes(payload)
        await recv_data(ws)
        samples.append(time.perf_counter() - start)
    return samples


async def pipelined(ws: aiohttp.ClientWebSocketResponse, count: int, payload: bytes) -> float:
    """Messages per second with at most WINDOW messages in flight."""
    window = asyncio.Semaphore(WINDOW)

    async def sender() -> None:
        for _ in range(count):
            await window.acquire()
            await ws.send_bytes(payload)

    start = time.perf_counter()
    task = asyncio.create_task(sender())
    for _ in range(count):
        await recv_data(ws)
        window.release()
    await task
    return count / (time.perf_counter() - start)


BOKEH_HEADER = '{"msgid":"1001","msgtype":"PATCH-DOC","num_buffers":1}'
BOKEH_CONTENT = '{"events":[{"kind":"ColumnsStreamed","column_source":{"id":"p1001"}}]}' * 3
BOKEH_PARTS = [BOKEH_HEADER, "{}", BOKEH_CONTENT]
BOKEH_BUFFER = os.urandom(2048)


async def bokeh_message(ws: aiohttp.ClientWebSocketResponse) -> float:
    start = time.perf_counter()
    for part in BOKEH_PARTS:
        await ws.send_str(part)
    await ws.send_bytes(BOKEH_BUFFER)
    for _ in range(4):
        await recv_data(ws)
    return time.perf_counter() - start


async def big_message(ws: aiohttp.ClientWebSocketResponse, payload: bytes, digest: str) -> str:
    start = time.perf_counter()
    try:
        await ws.send_bytes(payload)
        echoed = await recv_data(ws, timeout=60)
    except (ConnectionError, TimeoutError, aiohttp.ClientError) as exc:
        elapsed = time.perf_counter() - start
        return f"FAILED after {elapsed:.2f} s: {str(exc)[:60]} (close code {ws.close_code})"
    elapsed = time.perf_counter() - start
    intact = isinstance(echoed, bytes) and hashlib.sha256(echoed).hexdigest() == digest
    return f"{elapsed:.2f} s round trip, {'intact' if intact else 'CORRUPTED'} ({len(echoed)} B)"


def rotate(names: list[str], n: int) -> list[str]:
    return names[n % len(names) :] + names[: n % len(names)]


Sockets = dict[str, aiohttp.ClientWebSocketResponse]


def ws_urls(server: JupyterServer, upstream: Upstream) -> dict[str, str]:
    return {
        name: prefix.replace("http://", "ws://", 1) + "/ws"
        for name, prefix in routes(server, upstream.port).items()
    }


async def bokeh_like(sockets: Sockets, names: list[str], what: str) -> None:
    heading(f"(c) Bokeh-like message, 3 text + 1 binary (2 KB) websocket messages echoed (ms); {what}")
    bokeh: dict[str, list[float]] = {name: [] for name in names}
    for n in range(BOKEH_ROUNDS):
        for name in rotate(names, n):
            for _ in range(30):
                bokeh[name].append(await bokeh_message(sockets[name]))
    base = median(bokeh["direct"])
    rows = [["path", "n", "p50", "p99", "max", "p50 ratio"]]
    for name in names:
        rows.append(
            [
                name,
                str(len(bokeh[name])),
                f"{median(bokeh[name]) * 1e3:.3f}",
                f"{percentile(bokeh[name], 99) * 1e3:.3f}",
                f"{max(bokeh[name]) * 1e3:.3f}",
                ratio(median(bokeh[name]), base),
            ]
        )
    table(rows)


async def run(server: JupyterServer, upstream: Upstream, nagle_upstream: Upstream) -> None:
    urls = ws_urls(server, upstream)
    names = list(urls)
    async with aiohttp.ClientSession(headers=AUTH) as session:
        sockets = {
            name: await session.ws_connect(url, max_msg_size=0, compress=0) for name, url in urls.items()
        }

        heading("(a) 100 B round trip (ms), 200-message batches, paths interleaved")
        small = os.urandom(100)
        for name in names:
            await round_trips(sockets[name], 500, small)  # warmup
        rtt: dict[str, list[float]] = {name: [] for name in names}
        for n in range(ROUND_TRIPS // 200):
            for name in rotate(names, n):
                rtt[name] += await round_trips(sockets[name], 200, small)
        base = median(rtt["direct"])
        rows = [["path", "n", "p50", "p99", "added p50", "p50 ratio"]]
        for name in names:
            p50 = median(rtt[name])
            rows.append(
                [
                    name,
                    str(len(rtt[name])),
                    f"{p50 * 1e3:.3f}",
                    f"{percentile(rtt[name], 99) * 1e3:.3f}",
                    f"{(p50 - base) * 1e3:+.3f}",
                    ratio(p50, base),
                ]
            )
        table(rows)
        print("  target: dashdock added p50 <= 0.10 ms")

        heading(f"(b) 1 KB throughput (msgs/s, echo, window {WINDOW}), median of 5 interleaved rounds")
        kilo = os.urandom(1024)
        for name in names:
            await pipelined(sockets[name], 1000, kilo)  # warmup
        rates: dict[str, list[float]] = {name: [] for name in names}
        for n in range(5):
            for name in rotate(names, n):
                rates[name].append(await pipelined(sockets[name], THROUGHPUT_MESSAGES, kilo))
        base = median(rates["direct"])
        rows = [["path", "msgs/s", "min", "max", "ratio to direct"]]
        for name in names:
            rows.append(
                [
                    name,
                    f"{median(rates[name]):,.0f}",
                    f"{min(rates[name]):,.0f}",
                    f"{max(rates[name]):,.0f}",
                    ratio(median(rates[name]), base),
                ]
            )
        table(rows)
        print("  target: dashdock >= 0.65x direct")

        await bokeh_like(sockets, names, "upstream sets TCP_NODELAY: shows the relay's own sockets")
        async with aiohttp.ClientSession(headers=AUTH) as plain_session:
            nagle_urls = ws_urls(server, nagle_upstream)
            nagle = {
                name: await plain_session.ws_connect(url, compress=0) for name, url in nagle_urls.items()
            }
            await bokeh_like(nagle, names, "upstream without TCP_NODELAY, like a Bokeh server")
            for ws in nagle.values():
                await ws.close()

        heading("(d) one 50 MB binary message, echoed")
        payload = os.urandom(BIG)
        digest = hashlib.sha256(payload).hexdigest()
        for name in names:
            print(f"  {name:9} {await big_message(sockets[name], payload, digest)}", flush=True)
        not_installed_note(server)
        for ws in sockets.values():
            await ws.close()


def main() -> None:
    print("ws_relay: websocket relay, direct vs dashdock vs jupyter-server-proxy (jsp)")
    with Upstream("echo-ws", "nodelay") as upstream, Upstream("echo-ws") as nagle, JupyterServer() as server:
        asyncio.run(server.wait_ready())
        asyncio.run(run(server, upstream, nagle))
        server.log_errors()


if __name__ == "__main__":
    main()
