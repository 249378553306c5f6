"""50 panes at once: 50 proxied websockets, each fed 1 KB messages by an upstream pushing as fast as it can.

Over a 10 s window (after 1 s of warmup) it reports per-pane message counts (min / median / max; min/median
near 1 means no pane starves), the total relayed rate, the Jupyter server's CPU seconds per relayed MB
(utime + stime from /proc) and its peak RSS. Paths run one after another (not interleaved: each saturates
the machine). Run: .venv/bin/python bench/many_panes.py
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
from _common import (
    AUTH,
    JupyterServer,
    Upstream,
    cpu_seconds,
    heading,
    median,
    not_installed_note,
    routes,
    rss_bytes,
    table,
)

PANES = 50
WARMUP = 1.0
WINDOW = 10.0
MB = 1024 * 1024


async def pane(ws: aiohttp.ClientWebSocketResponse, counts: list[int], sizes: list[int], index: int) -> None:
    try:
        async for message in ws:
            if message.type != aiohttp.WSMsgType.BINARY:
                break
            counts[index] += 1
            sizes[index] += len(message.data)
    except (aiohttp.ClientError, ConnectionError):
        pass


async def sample_rss(pid: int, peak: list[int]) -> None:
    while True:
        peak[0] = max(peak[0], rss_bytes(pid))
        await asyncio.sleep(0.05)


async def measure(url: str, pid: int | None) -> list[str]:
    counts, sizes = [0] * PANES, [0] * PANES
    before = rss_bytes(pid) if pid else 0  # before the panes open
    async with aiohttp.ClientSession(headers=AUTH) as session:
        sockets = [await session.ws_connect(url, compress=0) for _ in range(PANES)]
        tasks = [asyncio.create_task(pane(ws, counts, sizes, i)) for i, ws in enumerate(sockets)]
        peak = [before]
        sampler = asyncio.create_task(sample_rss(pid, peak)) if pid else None
        await asyncio.sleep(WARMUP)
        first, first_bytes = list(counts), sum(sizes)
        cpu, start = (cpu_seconds(pid) if pid else 0.0), time.perf_counter()
        await asyncio.sleep(WINDOW)
        last, last_bytes = list(counts), sum(sizes)
        cpu, elapsed = (cpu_seconds(pid) - cpu if pid else 0.0), time.perf_counter() - start
        if sampler:
            sampler.cancel()
        for ws in sockets:
            await ws.close()
        await asyncio.gather(*tasks, return_exceptions=True)
    per_pane = [b - a for a, b in zip(first, last, strict=True)]
    relayed = (last_bytes - first_bytes) / MB
    mid = median(per_pane)
    growth = f"{before / MB:.0f} -> {peak[0] / MB:.0f}"
    cost = [f"{cpu:.2f}", f"{cpu / relayed * 1e3:.1f}", growth] if pid else ["-", "-", "-"]
    fairness = f"{min(per_pane) / mid:.2f}" if mid else "n/a"
    counts_cells = [str(min(per_pane)), f"{mid:.0f}", str(max(per_pane)), fairness]
    return [*counts_cells, f"{relayed / elapsed:.1f}", f"{sum(per_pane) / elapsed:,.0f}", *cost]


def main() -> None:
    print(f"many_panes: {PANES} websockets, 1 KB messages pushed as fast as read, {WINDOW:.0f} s per path")
    rows = [
        [
            "path",
            "min",
            "median",
            "max",
            "min/med",
            "MB/s",
            "msgs/s",
            "server CPU s",
            "CPU ms/MB",
            "RSS MB -> peak",
        ]
    ]
    with Upstream("push-ws") as upstream, JupyterServer() as server:
        asyncio.run(server.wait_ready())
        for name, prefix in routes(server, upstream.port).items():
            url = prefix.replace("http://", "ws://", 1) + "/ws"
            rows.append([name, *asyncio.run(measure(url, None if name == "direct" else server.pid))])
        server.log_errors()
        heading("messages per pane over the window; server = the Jupyter server process")
        table(rows)
        not_installed_note(server)


if __name__ == "__main__":
    main()
