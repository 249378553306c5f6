"""Memory of the Jupyter server while it relays a 200 MB streamed response, and upstream connection reuse.

A tornado upstream streams 200 MB in 64 KB chunks. The client reads it through the proxy (a) as fast as it
can and (b) after stalling 3 s on the first chunk (a proxy without backpressure buffers what it cannot
deliver). The server's RSS is sampled every 10 ms: before, peak, after. Each proxy runs in its own Jupyter
server so the figures do not mix. Then 200 sequential small GETs per path, and how many upstream TCP
connections served them. Run: .venv/bin/python bench/stream_memory.py
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
from _common import AUTH, JupyterServer, Upstream, heading, not_installed_note, rss_bytes, table

SIZE_MB = 200
SMALL_GETS = 200
MB = 1024 * 1024


async def sample_rss(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], rss_bytes(pid))
        await asyncio.sleep(0.01)


async def stream_once(url: str, pid: int | None, stall: float) -> list[str]:
    before = rss_bytes(pid) if pid else 0
    peak, stop = [before], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, peak, stop)) if pid else None
    received = 0
    start = time.perf_counter()
    status = "ok"
    try:
        timeout = aiohttp.ClientTimeout(total=120)
        async with aiohttp.ClientSession(headers=AUTH, auto_decompress=False, timeout=timeout) as session:
            async with session.get(url) as response:
                if response.status != 200:
                    status = f"HTTP {response.status}"
                async for chunk in response.content.iter_chunked(64 * 1024):
                    if stall and not received:
                        await asyncio.sleep(stall)
                    received += len(chunk)
    except (aiohttp.ClientError, TimeoutError) as exc:
        status = f"failed: {type(exc).__name__} {str(exc)[:50]}"
    elapsed = time.perf_counter() - start
    if received != SIZE_MB * MB and status == "ok":
        status = "truncated"
    stop.set()
    if sampler:
        await sampler
    await asyncio.sleep(1.0)
    after = rss_bytes(pid) if pid else 0
    mbs = f"{received / MB / elapsed:.0f}"
    if not pid:
        return [f"{received / MB:.0f}", f"{elapsed:.2f}", mbs, "-", "-", "-", "-", status]
    memory = [
        f"{before / MB:.0f}",
        f"{peak[0] / MB:.0f}",
        f"{(peak[0] - before) / MB:+.1f}",
        f"{after / MB:.0f}",
    ]
    return [f"{received / MB:.0f}", f"{elapsed:.2f}", mbs, *memory, status]


async def connection_reuse(prefix: str, direct: str) -> tuple[int, int]:
    async with aiohttp.ClientSession() as control:
        async with control.get(f"{direct}/reset") as response:
            await response.read()
        async with aiohttp.ClientSession(headers=AUTH) as session:
            for _ in range(SMALL_GETS):
                async with session.get(f"{prefix}/small") as response:
                    await response.read()
        async with control.get(f"{direct}/stats") as response:
            stats = await response.json(content_type=None)
    return stats["small_requests"], stats["small_connections"]


async def measure(name: str, prefix: str, pid: int | None, direct: str) -> tuple[list[list[str]], list[str]]:
    async with aiohttp.ClientSession(headers=AUTH) as session:  # warm the path up (imports, pools)
        async with session.get(f"{prefix}/big?mb=1") as response:
            await response.read()
    rows = []
    for label, stall in (("fast reader", 0.0), ("stalled 3 s", 3.0)):
        rows.append([name, label, *await stream_once(f"{prefix}/big?mb={SIZE_MB}", pid, stall)])
    requests, connections = await connection_reuse(prefix, direct)
    return rows, [name, str(requests), str(connections)]


def main() -> None:
    print(f"stream_memory: {SIZE_MB} MB streamed response and connection reuse, direct vs dashdock vs jsp")
    rows = [["path", "reader", "MB", "s", "MB/s", "RSS before", "peak", "growth", "after", "status"]]
    reuse = [["path", "upstream requests", "upstream TCP connections"]]
    with Upstream("http") as upstream:
        results = [asyncio.run(measure("direct", upstream.url, None, upstream.url))]
        with JupyterServer(with_jsp=False) as server:
            asyncio.run(server.wait_ready())
            results.append(
                asyncio.run(
                    measure(
                        "dashdock", server.dashdock(f"127.0.0.1:{upstream.port}"), server.pid, upstream.url
                    )
                )
            )
            server.log_errors()
        with JupyterServer(with_jsp=True) as server:
            if server.with_jsp:
                asyncio.run(server.wait_ready())
                results.append(
                    asyncio.run(measure("jsp", server.jsp(upstream.port), server.pid, upstream.url))
                )
                server.log_errors()
            else:
                not_installed_note(server)
    for stream_rows, reuse_row in results:
        rows += stream_rows
        reuse.append(reuse_row)
    heading(f"{SIZE_MB} MB in 64 KB chunks; Jupyter server RSS in MB (target: dashdock growth < 20 MB)")
    table(rows)
    heading(f"{SMALL_GETS} sequential small GETs on one keep-alive client session")
    table(reuse)


if __name__ == "__main__":
    main()
