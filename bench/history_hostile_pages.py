"""History pages of runs a hostile client built: the server's memory and ``api/status`` meanwhile.

Any client of a recorded scheduler chooses its task keys (and so their groups). Two such runs are
written into a History store (through ``HistoryStore``'s write API, as the recorder writes them;
keys are cut where they are stored) before a Jupyter server with dashdock starts on it:

- wide: 20,000 tasks with 16 KiB keys and groups of 2,000 characters;
- huge: 1,000 tasks with 1 MiB keys and groups of 200,000 characters;

both on four workers with 5,000-character names, every tenth task erred with a 100 KB exception,
an exception event with a 1 MiB key and a 100 KB traceback, and a metric with a 10,000-character name.
(The same runs as ``tests/edge/test_history_hostile_keys.py``, which checks what the pages say.)

Every History page (``view/{overview,task-stream,progress,memory}``), the report, the Chrome trace and
the Parquet export of both runs are fetched one after the other, each read to its end, ROUNDS times
(5 unless given), while ``GET api/status`` is sent every 50 ms on a fixed schedule (not waiting for
the previous answer, so a stall counts every poll it delays) and the server's RSS is sampled every
20 ms. First each of them is fetched once for a window of one task (what any first page costs:
imports, BokehJS read), unmeasured. Printed, with the machine's load average (other load shows in
the figures): per fetch its p50 and max seconds, bytes and the slowest status poll begun during it;
then the server's RSS growth (peak over the baseline after the warm-up, MiB), api/status p50 / p99 /
max and the polls over 100 ms. Targets: RSS growth < 200 MiB, api/status p99 < 100 ms.
Run: .venv/bin/python bench/history_hostile_pages.py [rounds] (about 30 s).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from _common import AUTH, JupyterServer, heading, median, percentile, rss_bytes, table

from dashdock.history.model import Alert, Event, Run, Span, TaskRecord, WorkerSample
from dashdock.history.pages import PAGES
from dashdock.history.store import HistoryStore

MIB = 2**20
SOURCE = "fedcba987654"
WIDE = "0123456789ab"  # 20,000 tasks, 16 KiB keys
HUGE = "ba9876543210"  # 1,000 tasks, 1 MiB keys, groups of 200,000 characters
EVERY = 0.050  # seconds between status polls
SLOW = 0.100  # a poll over this is counted
RSS_EVERY = 0.020
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5  # times every fetch is made
TARGET_RSS = 200 * MIB
TARGET_P99 = 0.100


# -- the hostile runs (as tests/edge/test_history_hostile_keys.py builds them) ----------------------


def hostile_tasks(first: int, count: int, t0: float, key_size: int, group: str) -> list[TaskRecord]:
    tasks = []
    for n in range(first, first + count):
        start = t0 + n * 0.003
        index = f"', {n})"
        key = f"('{group}" + "k" * max(0, key_size - len(group) - len(index) - 2) + index
        status = "error" if n % 10 == 0 else "OK"
        tasks.append(
            TaskRecord(
                key=key,
                group=group,
                worker=f"tcp://127.0.0.1:{40000 + n % 4}/" + "w" * 5000,
                thread=n % 2,
                start=start,
                stop=start + 0.05,
                status=status,
                spans=(Span("compute", start, start + 0.05),),
                exception=("boom " * 20_000) if status == "error" else None,
            )
        )
    return tasks


def record(store: HistoryStore, run_id: str, t0: float, tasks: int, key_size: int, group: str) -> None:
    store.begin_run(Run(run_id, SOURCE, "hostile", "tcp://127.0.0.1:1", t0, t0 + 90))
    batch = max(1, min(1000, 32 * MIB // key_size))
    for first in range(0, tasks, batch):
        assert store.add_tasks(run_id, hostile_tasks(first, min(batch, tasks - first), t0, key_size, group))
    workers = [f"tcp://127.0.0.1:{40000 + i}/" + "w" * 5000 for i in range(4)]
    store.add_worker_samples(
        run_id, [WorkerSample(t0 + s, w, 100 * MIB, 50 * MIB, 0, 5.0) for s in range(90) for w in workers]
    )
    title = f"{group}: {tasks // 10} tasks erred"
    store.add_alerts(
        run_id, [Alert(run_id, SOURCE, "task-erred", group, t0 + 1, t0 + 2, title, {"key": group})]
    )
    store.add_events(
        run_id,
        [
            Event(t0 + 1, "exception", workers[0], {"key": "k" * key_size, "traceback": "t" * 100_000}),
            Event(t0 + 2, "metrics", None, {"m" * 10_000: {"seconds": 1.0}}),
        ],
    )


def build_store(path: Path) -> float:
    """Both runs, recorded ten minutes ago (retention keeps them); returns their start."""
    t0 = time.time() - 600
    store = HistoryStore.open(path)
    try:
        record(store, WIDE, t0, 20_000, 16 * 1024, "wide" + "g" * 2000)
        record(store, HUGE, t0, 1_000, MIB, "huge" + "g" * 200_000)
    finally:
        store.close()
    return t0


# -- measuring ------------------------------------------------------------------------------


def paths() -> list[str]:
    return [
        f"dashdock/api/history/{run}/{what}"
        for run in (WIDE, HUGE)
        for what in [*(f"view/{page}" for page in PAGES), "report", "trace", "tasks.parquet"]
    ]


def reset_peak(pid: int) -> None:
    """Start the server's VmHWM over from its memory in use now (Linux: clear_refs 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


async def fetch(session: aiohttp.ClientSession, url: str) -> int:
    """GET ``url``, read to its end; its size in bytes."""
    size = 0
    async with session.get(url) as response:
        if response.status != 200:
            raise RuntimeError(f"GET {url}: {response.status} {(await response.read())[:300]!r}")
        async for chunk in response.content.iter_any():
            size += len(chunk)
    return size


async def run(server: JupyterServer, t0: float) -> None:
    pid = server.pid
    connector = aiohttp.TCPConnector(limit=0)  # polls due while the server stalls each get one
    async with aiohttp.ClientSession(headers=AUTH, connector=connector) as session:
        heading("warm-up: each page and export of the wide run for a window of one task (unmeasured)")
        started = time.perf_counter()
        for path in paths():
            if path.startswith(f"dashdock/api/history/{WIDE}/"):
                await fetch(session, f"{server.url}/{path}?start={t0}&end={t0 + 0.001}")
        print(f"  {time.perf_counter() - started:.1f} s")
        await asyncio.sleep(1.0)

        baseline = rss_bytes(pid)
        reset_peak(pid)
        polls: list[tuple[float, float]] = []  # (when sent, latency), perf_counter seconds
        samples: list[int] = []
        done = asyncio.Event()
        in_flight: set[asyncio.Future[None]] = set()

        async def one() -> None:
            began = time.perf_counter()
            async with session.get(f"{server.url}/api/status") as response:
                await response.read()
                assert response.status == 200, response.status
            polls.append((began, time.perf_counter() - began))

        async def poller() -> None:
            next_at = time.perf_counter()
            while not done.is_set():
                request = asyncio.ensure_future(one())
                in_flight.add(request)
                request.add_done_callback(in_flight.discard)
                next_at += EVERY
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

        async def sampler() -> None:
            while not done.is_set():
                samples.append(rss_bytes(pid))
                await asyncio.sleep(RSS_EVERY)

        heading(
            f"every page, report, trace and Parquet of both runs, {ROUNDS} rounds, "
            f"api/status every {EVERY * 1000:.0f} ms, load average {os.getloadavg()[0]:.1f}"
        )
        background = [asyncio.ensure_future(poller()), asyncio.ensure_future(sampler())]
        fetched: list[tuple[str, float, float, int]] = []  # path, began, seconds, bytes
        try:
            await asyncio.sleep(0.5)  # a few idle polls first
            for _ in range(ROUNDS):
                for path in paths():
                    began = time.perf_counter()
                    size = await fetch(session, f"{server.url}/{path}")
                    fetched.append((path, began, time.perf_counter() - began, size))
            await asyncio.sleep(0.5)
        finally:
            done.set()
            await asyncio.gather(*background)
            await asyncio.gather(*in_flight)
        peak = max([peak_rss(pid), *samples])
        rows = [["fetch", "p50 s", "max s", "MiB", "slowest status poll begun in it, ms"]]
        for path in paths():
            made = [(began, seconds, size) for name, began, seconds, size in fetched if name == path]
            during = [
                latency
                for began, seconds, _ in made
                for sent, latency in polls
                if began <= sent < began + seconds
            ]
            rows.append(
                [
                    path.removeprefix("dashdock/api/history/"),
                    f"{median([seconds for _, seconds, _ in made]):.2f}",
                    f"{max(seconds for _, seconds, _ in made):.2f}",
                    f"{made[-1][2] / MIB:.2f}",
                    f"{max(during) * 1000:.1f}" if during else "-",
                ]
            )
        table(rows)
        latencies = [latency for _, latency in polls]
        print()
        table(
            [
                [
                    "RSS before MiB",
                    "peak MiB",
                    "growth MiB",
                    "api/status n",
                    "p50 ms",
                    "p99 ms",
                    "max ms",
                    "over 100 ms",
                ],
                [
                    f"{baseline / MIB:.0f}",
                    f"{peak / MIB:.0f}",
                    f"{(peak - baseline) / MIB:.0f}",
                    str(len(latencies)),
                    f"{median(latencies) * 1000:.1f}",
                    f"{percentile(latencies, 99) * 1000:.1f}",
                    f"{max(latencies) * 1000:.1f}",
                    str(sum(latency > SLOW for latency in latencies)),
                ],
            ]
        )
        print(f"  targets: RSS growth < {TARGET_RSS // MIB} MiB, api/status p99 < {TARGET_P99 * 1000:.0f} ms")


def main() -> None:
    store_dir = Path(tempfile.mkdtemp(prefix="dashdock-bench-history-"))
    try:
        store = store_dir / "history.db"
        started = time.perf_counter()
        t0 = build_store(store)
        print(
            f"history_hostile_pages: two hostile runs written in {time.perf_counter() - started:.1f} s "
            f"({store.stat().st_size / MIB:.0f} MiB store)"
        )
        # No BokehJS cache: its precompression would run beside the measurement at a first start.
        with JupyterServer(
            with_jsp=False, extra_args=(f"--DashdockApp.history_file={store}", "--DashdockApp.cache_dir=")
        ) as server:
            asyncio.run(server.wait_ready())
            asyncio.run(run(server, t0))
            server.log_errors()
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
