"""The diagnosis of memory and off-CPU pathologies on a real recorded LocalCluster: spilling to
disk, a worker paused for memory, and task threads off the CPU. Each is produced on purpose and
checked in Dask's own data first; then it must be among the top two findings of its window, with
a cost of the size the workload implies."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import dask
import numpy as np
import pytest
from _diagnosis_recording import nap, recorded_cluster
from distributed import get_worker, wait

pytestmark = pytest.mark.slow  # real LocalClusters (worker processes), recorded

ARRAY_BYTES = 80 * 2**20  # each spilled array: 80 MiB (tasks well over 0.1 s with their disk time)
ARRAYS = 8  # 640 MiB in all, for a worker limited to 300 MiB
# Each array is read back three times. On a loaded machine the makes' waits for a core ("non-cpu")
# and the gaps between tasks grow too; with one read a fresh-clone run ranked spilling third (3.6 s
# of disk against 4.0 s off-CPU). Three reads put it first in three runs beside four busy processes.
READS = 3
HOG_BYTES = 300 * 2**20  # held by the paused worker's process, far above its pause threshold
HOLD = 3.0  # seconds the worker holds it
NAP = 0.3  # seconds each off-CPU task sleeps


def make(i: int) -> np.ndarray:
    return np.full(ARRAY_BYTES // 8, float(i))


def total(a: np.ndarray) -> float:
    return float(a.sum())


def hog(nbytes: int, hold: float) -> int:
    """Fills ``nbytes`` of the worker process's memory (written, so it is resident) and frees it
    ``hold`` seconds later, while the task itself ends at once: the worker's threads are free but
    Dask pauses it."""
    worker = get_worker()
    worker.dashdock_hog = np.ones(nbytes, dtype=np.uint8)

    def release() -> None:
        worker.dashdock_hog = None

    threading.Timer(hold, release).start()
    return nbytes


def kinds(found: dict[str, Any]) -> list[tuple[str, float]]:
    return [(f["kind"], f["lost_seconds"]) for f in found["findings"]]


def report(name: str, found: dict[str, Any]) -> None:
    wall = found["end"] - found["start"]
    print(f"\n{name}: window {wall:.2f} s wall, findings {json.dumps(kinds(found))}")


def top_two(found: dict[str, Any]) -> list[str]:
    return [f["kind"] for f in found["findings"][:2]]


def spans(stream: list[dict[str, Any]], actions: set[str]) -> list[dict[str, Any]]:
    return [s for t in stream for s in t["startstops"] if s["action"] in actions]


async def test_spilling_is_named_with_the_time_spent_on_disk(tmp_path: Path) -> None:
    memory = {
        "distributed.worker.memory.target": 0.3,  # managed data over 90 MiB goes to disk
        "distributed.worker.memory.spill": 0.4,
        "distributed.worker.memory.pause": False,
        "distributed.worker.memory.terminate": False,
    }
    with dask.config.set(memory):
        async with recorded_cluster(
            # One thread: no second thread idling beside the disk work, which is what is measured.
            tmp_path,
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            memory_limit="300MiB",
        ) as rec:
            client = rec.client
            spilled_seen: list[int] = []

            async def work() -> None:
                arrays = client.map(make, range(ARRAYS), pure=False)
                await wait(arrays)
                for ws in rec.cluster.scheduler.workers.values():
                    spilled_seen.append(int(ws.metrics.get("spilled_bytes", {}).get("disk", 0)))
                for _ in range(READS):  # each read back from disk, evicting the one read before
                    await client.gather(client.map(total, arrays, pure=False))

            found, stream = await rec.window(work, (1 + READS) * ARRAYS)
    disk = spans(stream, {"disk-read", "disk-write"})
    on_disk = sum(s["stop"] - s["start"] for s in disk)
    print(f"\nDask: {len(disk)} disk spans, {on_disk:.3f} s; spilled bytes seen {spilled_seen}")
    report("spilling", found)
    # Dask itself spilled (bytes on disk) and its task stream has disk spans (orange): reads back
    # at least; writes show only when a task's own store into the spill buffer went to disk.
    assert max(spilled_seen) > 0 and disk, (spilled_seen, disk)
    assert "spilling" in top_two(found), found
    spilling = next(f for f in found["findings"] if f["kind"] == "spilling")
    # The finding is the sum of the same disk spans the recorder read from Dask's task stream:
    # the same seconds, give or take rounding (and spans cut at the window's edges).
    assert 0.8 * on_disk <= spilling["lost_seconds"] <= 1.1 * on_disk + 0.01, (spilling, on_disk)
    assert spilling["evidence"]["spans"] <= len(disk), spilling
    # And the bytes on disk the workers reported, which the finding's sentence gives.
    assert spilling["evidence"]["spilled_bytes"] > 0, spilling


async def test_a_worker_paused_for_memory_is_named_with_its_idle_threads(tmp_path: Path) -> None:
    memory = {
        "distributed.worker.memory.target": False,
        "distributed.worker.memory.spill": False,
        "distributed.worker.memory.pause": 0.4,  # 200 MiB of the worker's 500 MiB: the hog alone passes it
        "distributed.worker.memory.terminate": False,
        "distributed.worker.memory.monitor-interval": "50ms",
    }
    threads = 2
    naps = 10
    with dask.config.set(memory):
        async with recorded_cluster(
            tmp_path, n_workers=1, threads_per_worker=threads, processes=True, memory_limit="500MiB"
        ) as rec:
            client = rec.client
            scheduler = rec.cluster.scheduler
            paused: list[tuple[float, float]] = []  # (first, last) moments the scheduler said paused
            done = asyncio.Event()

            async def watch() -> None:  # the scheduler's view of the worker, polled while work runs
                while not done.is_set():
                    now = time.time()
                    if any(ws.status.name == "paused" for ws in scheduler.workers.values()):
                        if paused and now - paused[-1][1] < 0.2:
                            paused[-1] = (paused[-1][0], now)
                        else:
                            paused.append((now, now))
                    await asyncio.sleep(0.02)

            async def work() -> None:
                watcher = asyncio.ensure_future(watch())
                try:
                    held = client.submit(hog, HOG_BYTES, HOLD, pure=False)
                    queued = client.map(nap, [0.2] * naps, pure=False)  # waiting while it is paused
                    await held
                    await client.gather(queued)
                finally:
                    done.set()
                    await watcher

            found, _stream = await rec.window(work, naps + 1)
    paused_seconds = sum(last - first for first, last in paused)
    print(f"\nDask: the scheduler saw the worker paused {paused} ({paused_seconds:.2f} s)")
    report("memory-pause", found)
    # Dask paused the worker for most of the hold.
    assert paused_seconds >= 0.5 * HOLD, paused
    assert "memory-pause" in top_two(found), found
    pause = next(f for f in found["findings"] if f["kind"] == "memory-pause")
    # Both threads idled while paused (tasks were queued for them); at most a task of 0.2 s that
    # began just before the pause ran into it. Upper bound: the pause seen, plus the recorder's
    # 0.2 s tick and a task's length at either edge, on each thread.
    lower = threads * (paused_seconds - 0.2) * 0.7
    upper = threads * (paused_seconds + 2 * 0.2 + 0.2)
    assert lower <= pause["lost_seconds"] <= upper, (pause, paused_seconds)


@pytest.mark.parametrize("workers, threads", [(1, 2), (2, 1)])
async def test_tasks_off_the_cpu_are_named_with_their_noncpu_seconds(
    tmp_path: Path, workers: int, threads: int
) -> None:
    tasks = 20
    cluster = {"n_workers": workers, "threads_per_worker": threads, "processes": False}
    async with recorded_cluster(tmp_path, **cluster) as rec:
        client = rec.client

        async def work() -> None:
            await client.gather(client.map(nap, [NAP] * tasks, pure=False))

        found, stream = await rec.window(work, tasks, settle=True)
    computes = [s["stop"] - s["start"] for s in spans(stream, {"compute"})]
    print(f"\nDask: {len(computes)} computes, {sum(computes):.2f} s in all")
    report("non-cpu", found)
    # Dask ran every task for its sleep (and not much more).
    assert len(computes) == tasks and all(NAP <= c < 2 * NAP + 0.5 for c in computes), computes
    assert "non-cpu" in top_two(found), found
    noncpu = next(f for f in found["findings"] if f["kind"] == "non-cpu")
    # Nearly all of each task's 0.3 s is asleep, off the CPU: at least most of the sleeps, and no
    # more than the tasks' whole thread time (plus a little of Dask's own off-CPU time).
    assert 0.8 * tasks * NAP <= noncpu["lost_seconds"] <= 1.1 * sum(computes) + 0.2, (noncpu, computes)
    # Task threads sharing a worker may hold each other's GIL; one task per worker cannot, and the
    # advice says what it can be instead.
    assert noncpu["evidence"]["threads_per_worker"] == threads
    if threads == 1:
        assert noncpu["advice"].startswith("Each worker ran one task at a time"), noncpu
    else:
        assert "Use processes rather than threads" in noncpu["advice"], noncpu
