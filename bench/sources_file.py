"""What an add costs as the sources file grows: .venv/bin/python bench/sources_file.py

A Jupyter server with dashdock starts on a sources file that already holds N - 1 user-added sources
(written in the JSON form of earlier versions, which every version reads; later ones import it), and
the N-th and the following adds are timed through ``POST dashdock/api/sources`` (each a fresh
dashboard of ``upstreams.py dashboard``, so each add is a new source written to the file). N = 10
and N = 10,000, in turns, ROUNDS times each; a fresh server and file each time. Prints the median add
latency at both sizes and their ratio (target: within 2x), and the server's start with 10,000 saved
sources. Figures, no assertions.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp
from _common import AUTH, HOST, JupyterServer, Upstream, heading, table

SIZES = (10, 10_000)
ROUNDS = 3
ADDS = 30  # timed adds per server, from the N-th on


def seed(sources_file: Path, count: int, upstream: str) -> None:
    sources_file.parent.mkdir(parents=True)
    entries = [{"url": f"{upstream}/seed{i}", "name": f"Seeded {i}"} for i in range(count)]
    sources_file.write_text(json.dumps({"sources": entries}))


async def first_listing(port: int, timeout: float = 300) -> int:
    """Waits for ``GET sources`` to list the seeded sources; returns how many it lists."""
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession(headers=AUTH) as session:
        while time.monotonic() < deadline:
            try:
                async with session.get(f"http://{HOST}:{port}/dashdock/api/sources") as response:
                    if response.status == 200:
                        listed = len((await response.json())["sources"])
                        if listed:
                            return listed
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise TimeoutError("the server did not list its sources")


async def timed_adds(port: int, upstream: str, tag: str) -> list[float]:
    times = []
    async with aiohttp.ClientSession(headers=AUTH) as session:
        for i in range(ADDS):
            body = {"url": f"{upstream}/{tag}-added{i}"}
            start = time.perf_counter()
            async with session.post(f"http://{HOST}:{port}/dashdock/api/sources", json=body) as response:
                answer = await response.json()
            times.append(time.perf_counter() - start)
            if response.status != 201 or "warning" in answer:
                raise RuntimeError(f"add not saved: {response.status} {answer}")
    return times


async def one_server(size: int, upstream: str, tag: str) -> tuple[list[float], float]:
    tmp = Path(tempfile.mkdtemp(prefix="dashdock-bench-sources-"))
    sources_file = tmp / "dashdock" / "sources.json"
    seed(sources_file, size - 1, upstream)
    started = time.perf_counter()
    # JupyterServer removes its directory (the sources file's too) when it stops.
    with JupyterServer(
        with_jsp=False,
        tmp=str(tmp),
        sources_file=str(sources_file),
        extra_args=("--DashdockApp.kernel_integration=False",),
    ) as server:
        await first_listing(server.port)
        start_seconds = time.perf_counter() - started
        return await timed_adds(server.port, upstream, tag), start_seconds


async def main() -> None:
    heading(f"add latency through POST dashdock/api/sources, {ADDS} adds from the N-th, {ROUNDS} rounds")
    adds: dict[int, list[float]] = {size: [] for size in SIZES}
    starts: dict[int, list[float]] = {size: [] for size in SIZES}
    with Upstream("dashboard") as upstream:
        for round_number in range(ROUNDS):
            for size in SIZES:
                times, start_seconds = await one_server(size, upstream.url, f"r{round_number}n{size}")
                adds[size] += times
                starts[size].append(start_seconds)
                milliseconds = statistics.median(times) * 1000
                print(f"  round {round_number + 1}, N={size:,}: median {milliseconds:.1f} ms", flush=True)
    small, large = (statistics.median(adds[size]) for size in SIZES)
    rows = [["N (sources in the file)", "add p50 ms", "add p90 ms", "server start to listing, s"]]
    for size in SIZES:
        ordered = sorted(adds[size])
        rows.append(
            [
                f"{size:,}",
                f"{statistics.median(ordered) * 1000:.1f}",
                f"{ordered[int(len(ordered) * 0.9)] * 1000:.1f}",
                f"{statistics.median(starts[size]):.2f}",
            ]
        )
    table(rows)
    print(f"\n  add at the 10,000th / at the 10th: {large / small:.2f}x (target: within 2x)")


if __name__ == "__main__":
    asyncio.run(main())
