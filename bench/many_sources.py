"""Ten thousand sources: what adding them costs, and what the sidebar's health poll costs the server.

A fake dashboard (``upstreams.py dashboard``, its own process) answers under any path prefix, so
each of N sources is a distinct dashboard. They are added through ``POST dashdock/api/sources``
(with a sources file, as a user's server keeps them): the latency of the 10th and of the last add.
Then the sidebar's first, whole listing is timed, and its poll, ``GET sources?check=1&since=<last
version>``, runs back to back ROUNDS times while another client asks ``GET api/status`` every 50 ms
and the server's open file descriptors are sampled every 20 ms: poll wall time, sources checked per
poll, answer size, the status p50/p99/max, the peak fds, and how many healthy sources were ever
reported down. Run: .venv/bin/python bench/many_sources.py [N]
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from _common import AUTH, JupyterServer, Upstream, heading, median, percentile, table

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
ROUNDS = 40
ADD_CONCURRENCY = 4


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def add_all(session: aiohttp.ClientSession, server: JupyterServer, dashboard: str) -> dict[int, float]:
    """Add N sources, ADD_CONCURRENCY at a time; returns the latency (s) of each add by its number."""
    latencies: dict[int, float] = {}
    numbers = iter(range(1, N + 1))

    async def worker() -> None:
        for number in numbers:
            started = time.perf_counter()
            async with session.post(
                f"{server.url}/dashdock/api/sources", json={"url": f"{dashboard}/s{number}/status"}
            ) as response:
                body = await response.json()
                assert response.status == 201, body
            latencies[number] = time.perf_counter() - started

    await asyncio.gather(*(worker() for _ in range(ADD_CONCURRENCY)))
    return latencies


async def run(server: JupyterServer, dashboard: Upstream) -> None:
    async with aiohttp.ClientSession(headers=AUTH) as session:
        heading(f"adding {N:,} sources through the API ({ADD_CONCURRENCY} at a time, with a sources file)")
        started = time.perf_counter()
        latencies = await add_all(session, server, dashboard.url)
        print(f"  {N:,} adds in {time.perf_counter() - started:.1f} s")
        early = [latencies[n] for n in range(1, 21)]
        late = [latencies[n] for n in range(N - 19, N + 1)]
        table(
            [
                ["adds", "p50 ms", "max ms"],
                ["1st-20th", f"{median(early) * 1e3:.1f}", f"{max(early) * 1e3:.1f}"],
                [f"last 20 (to {N:,})", f"{median(late) * 1e3:.1f}", f"{max(late) * 1e3:.1f}"],
            ]
        )
        print(f"  ratio last/first (p50): {median(late) / median(early):.2f}x (target within 2x)")

        heading(f"GET sources?check=1&since=..., {ROUNDS} polls back to back, with {N:,} sources")
        status_ms: list[float] = []
        fds: list[int] = []
        polling = asyncio.Event()

        async def status_poller() -> None:
            async with aiohttp.ClientSession(headers=AUTH) as own:
                next_at = time.perf_counter()
                while not polling.is_set():
                    started = time.perf_counter()
                    async with own.get(f"{server.url}/api/status") as response:
                        await response.read()
                    status_ms.append((time.perf_counter() - started) * 1e3)
                    next_at += 0.05
                    await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

        async def fd_sampler() -> None:
            while not polling.is_set():
                fds.append(open_fds(server.pid))
                await asyncio.sleep(0.02)

        async def health_count() -> int:
            async with session.get(f"{dashboard.url}/stats") as response:
                return int((await response.json(content_type=None))["health_requests"])

        started = time.perf_counter()
        async with session.get(f"{server.url}/dashdock/api/sources") as response:
            whole = await response.read()
        whole_ms = (time.perf_counter() - started) * 1e3
        print(
            f"  the first, whole listing (once per Lab load): {whole_ms:.0f} ms, {len(whole) / 2**20:.1f} MB"
        )
        fds_idle = open_fds(server.pid)
        background = [asyncio.ensure_future(status_poller()), asyncio.ensure_future(fd_sampler())]
        poll_s, checked, ever_down, sizes = [], [], set(), []
        version = json.loads(whole)["version"]
        for _ in range(ROUNDS):
            before = await health_count()
            started = time.perf_counter()
            # As the sidebar polls: only what changed since the version it saw last.
            query = f"check=1&since={version}" if version else "check=1"
            async with session.get(f"{server.url}/dashdock/api/sources?{query}") as response:
                raw = await response.read()
                body = json.loads(raw)
            sizes.append(len(raw))
            version = body["version"]
            poll_s.append(time.perf_counter() - started)
            checked.append(await health_count() - before)
            ever_down |= {s["id"] for s in body["sources"] if s["health"]["status"] == "down"}
        polling.set()
        await asyncio.gather(*background)
        table(
            [
                [
                    "poll wall p50 ms",
                    "poll max ms",
                    "checked per poll",
                    "answer p50 KB",
                    "fds idle",
                    "fds peak",
                ],
                [
                    f"{median(poll_s) * 1e3:.1f}",
                    f"{max(poll_s) * 1e3:.1f}",
                    f"{median(checked):.0f}",
                    f"{median(sizes) / 1024:.0f}",
                    str(fds_idle),
                    str(max(fds)),
                ],
            ]
        )
        table(
            [
                ["api/status n", "p50 ms", "p99 ms", "max ms", "over 100 ms"],
                [
                    str(len(status_ms)),
                    f"{median(status_ms):.1f}",
                    f"{percentile(status_ms, 99):.1f}",
                    f"{max(status_ms):.1f}",
                    str(sum(1 for ms in status_ms if ms > 100)),
                ],
            ]
        )
        print(f"  healthy sources ever reported down: {len(ever_down)}")
        print("  targets: api/status p99 < 100 ms, fds < 300, no healthy source reported down")


def main() -> None:
    sources = Path(tempfile.mkdtemp(prefix="dashdock-bench-sources-"))
    try:
        with (
            Upstream("dashboard") as dashboard,
            JupyterServer(with_jsp=False, sources_file=f"{sources}/sources.db") as server,
        ):
            asyncio.run(server.wait_ready())
            asyncio.run(run(server, dashboard))
    finally:
        shutil.rmtree(sources, ignore_errors=True)


if __name__ == "__main__":
    main()
