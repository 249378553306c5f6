"""Diagnosis of real workloads on a recorded LocalCluster shaped for each pathology: data moved
between workers, work pinned to one worker, a chain of dependent tasks, a worker lost with results
it held. Each pathology is checked in Dask's own task stream first (a workload that failed to
produce it cannot pass), then named among the top findings with a cost of the right size."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _diagnosis_recording import RECORDED_WITHIN, Recorded, nap, recorded_cluster, spin
from distributed import wait

from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window

pytestmark = pytest.mark.slow  # real clusters, recorded


def step(previous: int, seconds: float) -> int:
    """One link of a chain: about ``seconds`` of CPU once ``previous`` is there."""
    spin(seconds)
    return previous + 1


def top_two(found: dict[str, Any]) -> list[str]:
    return [finding["kind"] for finding in found["findings"][:2]]


def finding(found: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(f for f in found["findings"] if f["kind"] == kind)


def spans(stream: list[dict[str, Any]], action: str) -> list[dict[str, Any]]:
    return [s | {"worker": t["worker"]} for t in stream for s in t["startstops"] if s["action"] == action]


def show(name: str, found: dict[str, Any]) -> None:
    print(
        f"\n{name}: wall {found['end'] - found['start']:.2f} s, {found['threads']} threads, "
        f"{found['tasks']} tasks, findings",
        json.dumps([(f["kind"], f["lost_seconds"]) for f in found["findings"]]),
    )


async def workers_of(rec: Recorded, count: int) -> list[str]:
    await rec.client.wait_for_workers(count)
    return sorted(await rec.client.nthreads())


async def rediagnosed(rec: Recorded, found: dict[str, Any], tasks: int) -> dict[str, Any]:
    """The diagnosis of ``found``'s window again, once the recorder has ``tasks`` of it (a task run
    twice is two records: how many is known only after the work)."""
    deadline = time.monotonic() + RECORDED_WITHIN
    while found["tasks"] < tasks:
        assert time.monotonic() < deadline, f"recorded {found['tasks']} of {tasks} tasks: {found}"
        await asyncio.sleep(0.2)
        found = await asyncio.to_thread(
            diagnose_window, rec.store, rec.run, found["start"], found["end"], DiagnosisLimits()
        )
    return found


async def test_data_moved_between_workers_is_named_transfer(tmp_path: Path) -> None:
    # Worker processes: in one process with the scheduler, sending 40 MB holds the event loop they
    # share, and the loop's lag (rightly) reads as a saturated scheduler, which this is not about.
    async with recorded_cluster(tmp_path, n_workers=2, threads_per_worker=1, processes=True) as rec:
        a, b = await workers_of(rec, 2)
        n = 6

        async def work() -> None:
            # numpy's own functions: a worker process imports them (not this test module).
            made = [
                rec.client.submit(np.full, 40 * 2**20 // 8, float(i), workers=[a], pure=False)
                for i in range(n)
            ]
            used = [rec.client.submit(np.sum, m, workers=[b], pure=False) for m in made]
            await rec.client.gather(used)

        found, stream = await rec.window(work, 2 * n)
        show("transfer", found)
        moved = spans(stream, "transfer")
        # Dask's own record: each 40 MB block was fetched from a to b.
        assert len(moved) >= n and {s["worker"] for s in moved} == {b}, moved
        assert {s.get("source") for s in moved} == {a}, moved
        dask_seconds = sum(s["stop"] - s["start"] for s in moved)
        # First: the threads' wait for the data is the transfer's, not counted again as idle.
        assert top_two(found)[0] == "transfer", found
        # dashdock counts each transfer span's time as lost: the same spans Dask reported, so the
        # figure is Dask's sum (0.5x..2x allows for the recorder's clock and rounding).
        lost = finding(found, "transfer")["lost_seconds"]
        assert 0.5 * dask_seconds <= lost <= 2 * dask_seconds, (lost, dask_seconds, found)
        print(f"Dask's transfer spans: {len(moved)}, {dask_seconds:.3f} s")


async def test_work_pinned_to_one_worker_is_named_imbalance(tmp_path: Path) -> None:
    async with recorded_cluster(tmp_path, n_workers=2, threads_per_worker=2, processes=False) as rec:
        a, b = await workers_of(rec, 2)
        pinned, seconds = 16, 0.25

        async def work() -> None:
            heavy = rec.client.map(
                nap, [seconds] * pinned, workers=[a], allow_other_workers=False, pure=False
            )
            light = rec.client.map(nap, [seconds] * 2, workers=[b], allow_other_workers=False, pure=False)
            await wait(heavy + light)

        found, stream = await rec.window(work, pinned + 2)
        show("imbalance", found)
        computes = spans(stream, "compute")
        on = Counter(s["worker"] for s in computes)
        # Dask's own record: a ran the 16 pinned tasks, b only its 2.
        assert on == {a: pinned, b: 2}, on
        on_a = [s for s in computes if s["worker"] == a]
        a_span = max(s["stop"] for s in on_a) - min(s["start"] for s in on_a)
        b_busy = sum(s["stop"] - s["start"] for s in computes if s["worker"] == b)
        assert "imbalance" in top_two(found), found
        # While a's 2 threads were saturated (16 x 0.25 s on 2 threads: about 2 s), b's 2 threads
        # idled but for its own 2 tasks: 2 x a's span - b's busy time, within 0.5x..2x (the last
        # round on a is not counted as saturated, as a is given nothing more then).
        expected = 2 * a_span - b_busy
        lost = finding(found, "imbalance")["lost_seconds"]
        assert 0.5 * expected <= lost <= 2 * expected, (lost, expected, found)
        print(f"expected imbalance about {expected:.2f} thread-s")


async def test_a_chain_of_dependent_tasks_is_named_low_parallelism(tmp_path: Path) -> None:
    async with recorded_cluster(tmp_path, n_workers=2, threads_per_worker=2, processes=False) as rec:
        await workers_of(rec, 2)
        links, seconds = 10, 0.2

        async def work() -> None:
            previous = rec.client.submit(step, 0, seconds, pure=False)
            for _ in range(links - 1):
                previous = rec.client.submit(step, previous, seconds, pure=False)
            assert await previous == links

        found, stream = await rec.window(work, links)
        show("low-parallelism", found)
        computes = sorted(spans(stream, "compute"), key=lambda s: s["start"])
        # Dask's own record: the links ran one after another, never two at once.
        assert len(computes) == links
        # (A link's stop is stamped a moment after its result exists: a few ms of overlap.)
        assert all(earlier["stop"] <= later["start"] + 0.05 for earlier, later in pairwise(computes)), (
            computes
        )
        assert "low-parallelism" in top_two(found), found
        # One of 4 threads busy from the first link's start to the last one's stop: the other 3
        # idled all along, (4 x span - busy), about 3 x 2 s; within 0.5x..2x.
        active = computes[-1]["stop"] - computes[0]["start"]
        busy = sum(s["stop"] - s["start"] for s in computes)
        expected = found["threads"] * active - busy
        lost = finding(found, "low-parallelism")["lost_seconds"]
        assert 0.5 * expected <= lost <= 2 * expected, (lost, expected, found)
        print(f"expected low-parallelism about {expected:.2f} thread-s")


async def test_results_lost_with_their_worker_are_named_worker_lost(tmp_path: Path) -> None:
    async with recorded_cluster(tmp_path, n_workers=2, threads_per_worker=2, processes=False) as rec:
        a, _ = await workers_of(rec, 2)
        count, seconds = 12, 0.4
        held: list[str] = []

        async def work() -> None:
            results = rec.client.map(nap, [seconds] * count, pure=False)
            await wait(results)
            who = await rec.client.who_has(results)
            held.extend(key for key, where in who.items() if a in where)
            gone = next(w for w in rec.cluster.workers.values() if w.address == a)
            await gone.close()  # abruptly: its results are lost, not handed over
            await rec.client.gather(results)  # Dask computes a's again, on b

        found, stream = await rec.window(work, count)
        computes = spans(stream, "compute")
        runs = Counter(t["key"] for t in stream for s in t["startstops"] if s["action"] == "compute")
        twice = [key for key, n in runs.items() if n > 1]
        # Dask's own record: the results a held ran again (on b), the others once.
        assert held and sorted(twice) == sorted(held), (held, runs)
        found = await rediagnosed(rec, found, len(computes))
        show("worker-lost", found)
        assert "worker-lost" in top_two(found), found
        # What was lost is a's first runs of the recomputed tasks: len(held) x 0.4 s; within 0.5x..2x.
        expected = len(held) * seconds
        lost = finding(found, "worker-lost")["lost_seconds"]
        assert 0.5 * expected <= lost <= 2 * expected, (lost, expected, found)
        print(f"{len(held)} results recomputed: expected worker-lost about {expected:.2f} thread-s")


def inc(x: int) -> int:
    return x + 1


def hold_event_loop(seconds: float, dask_scheduler: object = None) -> float:
    """Runs on the scheduler's event loop (as a heavy plugin or a huge graph's ingestion does):
    while it spins, no task is handed out."""
    return spin(seconds)


async def test_a_scheduler_too_busy_to_hand_out_tasks_is_named_scheduler_bound(tmp_path: Path) -> None:
    async with recorded_cluster(tmp_path, n_workers=1, threads_per_worker=2, processes=False) as rec:
        await workers_of(rec, 1)
        scheduler = rec.cluster.scheduler
        # Few enough tasks that their overhead stays below the hold on a loaded machine (a thousand
        # took 8 s under six test processes on 2 cores, and small tasks outranked the hold).
        tasks, held = 300, 3.0

        async def work() -> None:
            futures = rec.client.map(inc, range(tasks), pure=False)
            await wait(futures[:100])  # tasks are flowing: then the scheduler is kept busy
            await rec.client.run_on_scheduler(hold_event_loop, held)
            await rec.client.gather(futures)

        found, stream = await rec.window(work, tasks)
        show("scheduler-bound", found)
        # Dask's own record: its event loop's longest tick was about the hold (Dask logs it as
        # "Event loop was unresponsive"), and no task ran meanwhile, though hundreds of tiny ones waited.
        assert scheduler.digests_max["tick-duration"] >= 0.75 * held, dict(scheduler.digests_max)
        computes = sorted((s["start"], s["stop"]) for s in spans(stream, "compute"))
        assert max(b[0] - a[1] for a, b in pairwise(computes)) >= 0.75 * held, computes
        assert "scheduler-bound" in top_two(found), found
        # Its cost: at least both threads idle while the loop was held; at most every thread for the
        # whole window (tiny tasks in the scheduler's own process keep it near a core throughout).
        lost = finding(found, "scheduler-bound")["lost_seconds"]
        wall = found["end"] - found["start"]
        assert 0.75 * found["threads"] * held <= lost <= found["threads"] * wall, (lost, found)
