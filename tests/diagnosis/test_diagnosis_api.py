"""``GET history/{id}/diagnosis`` on a real recorded cluster: each pathology, produced on purpose
and checked in Dask's own data first, is named among the top two findings of its window; a
healthy CPU-bound computation gets no finding worth a look; bad requests say what is wrong."""

from __future__ import annotations

import asyncio
import html
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from _diagnosis_recording import nap, span_of, spin
from _support import Jupyter
from distributed import Client, get_task_stream

pytestmark = pytest.mark.slow  # a managed cluster, recorded

START = 120.0  # seconds for a managed cluster to start and be recorded


async def eventually(check: Callable[[], Awaitable[bool]], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.5)
    return False


async def run_of(jupyter: Jupyter, source: str) -> dict[str, Any] | None:
    code, body = await jupyter.api("GET", "history")
    assert code == 200, body
    return next((run for run in body["runs"] if run["source"] == source), None)


def boom(x: int) -> int:
    """Fails after 20 ms of work. Failing at once, 40 tasks cost about the 2 % of the window's
    thread time a finding needs (found.py), and the errors finding came and went with the machine's
    speed; with the work, they cost about a quarter."""
    spin(0.02)
    raise ValueError(f"bad input {x}")


def inc(x: int) -> int:
    return x + 1


async def diagnosis(jupyter: Jupyter, run: str, start: float, end: float) -> dict[str, Any]:
    code, body = await jupyter.api("GET", f"history/{run}/diagnosis?start={start}&end={end}")
    assert code == 200, body
    return body


async def recorded_window(
    jupyter: Jupyter, run: str, work: Callable[[], Awaitable[list[Any]]], tasks: int
) -> tuple[dict[str, Any], list[Any]]:
    """Run ``work`` (its tasks' stream entries back), then the diagnosis of its window once the
    recorder has all ``tasks`` of it."""
    stream = await work()
    start, end = span_of(stream)
    found: dict[str, Any] = {}

    async def recorded() -> bool:
        found.update(await diagnosis(jupyter, run, start, end))
        return found["tasks"] >= tasks

    assert await eventually(recorded, 60), found
    return found, stream


def scheduler_cpu(dask_scheduler: Any) -> list[tuple[float, float]]:
    """Dask's own monitor of the scheduler's process: (time, percent of a core) it measured."""
    quantities = dask_scheduler.monitor.quantities
    return list(zip(quantities["time"], quantities["cpu"], strict=False))


def top_two(found: dict[str, Any]) -> list[str]:
    return [finding["kind"] for finding in found["findings"][:2]]


async def test_each_pathology_is_named_with_its_cost_and_a_healthy_run_is_quiet(jupyter: Jupyter) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    source = cluster["source"]

    async def recording() -> bool:
        return await run_of(jupyter, source) is not None

    assert await eventually(recording, START)
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        await client.wait_for_workers(1)
        threads = sum((await client.nthreads()).values())
        assert threads >= 2

        async def streamed(submit: Callable[[], Any]) -> list[Any]:
            async with get_task_stream(client=client) as ts:  # Dask's own record of the tasks
                await submit()
            return ts.data

        # A long task after many short ones: a straggler holds the end.
        async def straggle() -> None:
            await client.gather(client.map(nap, [0.2] * (5 * threads), pure=False))
            await client.submit(nap, 3.0, pure=False)

        found, stream = await recorded_window(jupyter, source, lambda: streamed(straggle), 5 * threads + 1)
        durations = sorted(s["stop"] - s["start"] for t in stream for s in t["startstops"])
        assert durations[-1] > 10 * durations[len(durations) // 2]  # Dask saw the straggler
        assert "straggler" in top_two(found), found
        straggler = next(f for f in found["findings"] if f["kind"] == "straggler")
        # The other threads idled for about the long task's 3 s.
        assert 0.5 * (threads - 1) * 3.0 < straggler["lost_seconds"] < 1.5 * (threads - 1) * 3.0, straggler

        # The window's report opens with the same findings, as sentences with their figures.
        report = await jupyter.fetch(
            f"dashdock/api/history/{source}/report?start={found['start']}&end={found['end']}"
        )
        page = report.body.decode()
        assert page.index("Why it took this long") < page.index("Task groups")
        assert html.escape(straggler["title"]) in page

        # Thousands of tiny tasks: Dask's per-task overhead dominates.
        async def tiny() -> None:
            await client.gather(client.map(inc, range(3000), pure=False))

        found, stream = await recorded_window(jupyter, source, lambda: streamed(tiny), 3000)
        computes = sorted(
            s["stop"] - s["start"] for t in stream for s in t["startstops"] if s["action"] == "compute"
        )
        assert computes[len(computes) // 2] < 0.01  # Dask's own figure: each task takes under 10 ms
        print(
            "diagnosis of the tiny-task window:",
            json.dumps([(f["kind"], f["lost_seconds"]) for f in found["findings"]]),
        )
        # On a loaded machine the scheduler itself saturates handing them out: then the idle time is
        # its finding (same advice: fewer, larger tasks), and Dask's own monitor must have seen it.
        if "small-tasks" not in top_two(found):
            assert "scheduler-bound" in top_two(found), found
            seen = await client.run_on_scheduler(scheduler_cpu)
            busiest = max((c for at, c in seen if found["start"] - 1 <= at <= found["end"] + 1), default=0)
            bound = next(f for f in found["findings"] if f["kind"] == "scheduler-bound")
            assert busiest >= 80 or bound["evidence"]["loop_interval_max"] >= 0.1, (seen, found)

        # Tasks that fail: their time bought nothing.
        async def failing() -> None:
            await client.gather(client.map(boom, range(40), pure=False), errors="skip")
            await client.gather(client.map(spin, [0.05] * 40, pure=False))

        found, stream = await recorded_window(jupyter, source, lambda: streamed(failing), 80)
        assert sum(t.get("status") == "error" for t in stream) == 40  # Dask saw 40 failures
        assert "errors" in [f["kind"] for f in found["findings"]], found
        errors = next(f for f in found["findings"] if f["kind"] == "errors")
        assert errors["evidence"]["erred"] == 40 and "bad input" in errors["evidence"]["exception"]

        # Healthy: CPU-bound tasks of 0.3 s, as many as the threads can take at once, several rounds.
        async def healthy() -> None:
            await client.gather(client.map(spin, [0.3] * (6 * threads), pure=False))

        found, stream = await recorded_window(jupyter, source, lambda: streamed(healthy), 6 * threads)
        # Threads waiting for a core on this 2-core machine really are off the CPU: non-cpu may say so.
        loud = [f for f in found["findings"] if f["share"] >= 0.25 and f["kind"] != "non-cpu"]
        assert loud == [], found
        print(
            "diagnosis of the healthy window:",
            json.dumps([(f["kind"], f["lost_seconds"]) for f in found["findings"]]),
        )
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


async def test_an_unknown_run_or_a_reversed_window_says_what_is_wrong(jupyter: Jupyter) -> None:
    missing = await jupyter.fetch("dashdock/api/history/0123456789ab/diagnosis")
    assert missing.code == 404 and json.loads(missing.body)["message"]
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201
    assert await eventually(lambda: _recorded(jupyter, cluster["source"]), START)
    reversed_ = await jupyter.fetch(f"dashdock/api/history/{cluster['source']}/diagnosis?start=5&end=1")
    assert reversed_.code == 400 and "'end' must not be before" in json.loads(reversed_.body)["message"]
    code, body = await jupyter.api("GET", f"history/{cluster['source']}/diagnosis")
    assert code == 200 and body["findings"] == [] and body["tasks"] == 0
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


async def _recorded(jupyter: Jupyter, source: str) -> bool:
    return await run_of(jupyter, source) is not None
