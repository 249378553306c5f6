"""A run keeps what a notebook measured (custom metrics) and Dask's Fine Performance Metrics.

A managed cluster is recorded; a client adds a custom metric (``dashdock.metric``) and computes.
The run's metrics Parquet holds the metric's samples, its History memory page and its report draw
them, and the report lists Dask's Fine Performance Metrics totals, which the cluster's scheduler
offers to the recorder (kernel/fine_metrics.py).
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from _support import Jupyter
from distributed import Client, LocalCluster
from test_history_api import START, eventually, run_of

import dashdock
from dashdock.alerts.detection import AlertLimits, AlertWatch
from dashdock.history.model import Run
from dashdock.history.report import html_report
from dashdock.history.report_metrics import seconds_text
from dashdock.history.run_writes import Writer
from dashdock.history.store import HistoryStore
from dashdock.kernel.fine_metrics import offer
from dashdock.watcher.limits import Limits
from dashdock.watcher.run_watcher import RunWatcher

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test


def inc(x: int) -> int:
    return x + 1


def answer(dask_scheduler: object) -> float:
    return 42.0


async def test_custom_metrics_and_fine_performance_metrics_are_in_the_run(jupyter: Jupyter) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    source = cluster["source"]

    async def recording() -> bool:
        return await run_of(jupyter, source) is not None

    assert await eventually(recording, START)
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        await client.gather(client.map(inc, range(200)))
        # dashdock.metric is synchronous (a notebook's call): run it off this test's loop.
        sync = await asyncio_to_thread_client(cluster["scheduler"])
        try:
            dashdock.metric(sync, "answer", answer, every=0.2)

            async def sampled() -> bool:
                parquet = await jupyter.fetch(f"dashdock/api/history/{source}/metrics.parquet")
                table = pq.read_table(io.BytesIO(parquet.body))
                return table.num_rows >= 5

            assert await eventually(sampled, 60)
        finally:
            sync.close()

    parquet = await jupyter.fetch(f"dashdock/api/history/{source}/metrics.parquet")
    assert parquet.code == 200 and "metrics.parquet" in parquet.headers["Content-Disposition"]
    table = pq.read_table(io.BytesIO(parquet.body)).to_pylist()
    assert {row["metric"] for row in table} == {"answer"} and {row["value"] for row in table} == {42.0}
    memory = await jupyter.fetch(f"dashdock/api/history/{source}/view/memory")
    assert memory.code == 200 and "Custom metrics" in memory.body.decode()

    # Recording stops while the scheduler still answers: its last tick reads the totals.
    code, _ = await jupyter.api("PUT", f"history/{source}/recording", {"enabled": False})
    assert code == 200

    async def ended() -> bool:
        run = await run_of(jupyter, source)
        return run is not None and not run["live"]

    assert await eventually(ended, 60)
    run = await run_of(jupyter, source)
    assert run is not None
    report = (await jupyter.fetch(f"dashdock/api/history/{run['id']}/report")).body.decode()
    assert "Custom metrics" in report
    # Dask's totals as seconds by task group and activity, in units.
    assert "Where task time went" in report and "<tr><td>inc</td>" in report and "compute (CPU)" in report
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


async def asyncio_to_thread_client(address: str) -> Client:
    """A synchronous client, made in a thread (it runs its own loop there)."""
    import asyncio

    return await asyncio.to_thread(Client, address)


def dec(x: int) -> int:
    return x - 1


def test_a_computations_window_gets_exactly_its_own_fine_metrics(tmp_path: Path) -> None:
    """Two computations one after the other: each one's report counts its own task time and not the
    other's, since the recorder reads Dask's totals as each computation settles."""
    store = HistoryStore.open(tmp_path / "history.db")
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", dashboard_address=":0"
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run_on_scheduler(lambda dask_scheduler: offer(dask_scheduler))
        run = Run("abcdefabcdef", "fedcba987654", "two", cluster.scheduler_address, time.time())
        store.begin_run(run)

        def compute(function: Callable[[int], int]) -> tuple[float, float]:
            began = time.time()
            client.gather(client.map(function, range(300)))
            ended = time.time()
            # The workers' next heartbeats bring the scheduler the totals of every task they ran.
            deadline = time.monotonic() + 30
            while min(w.last_seen for w in cluster.scheduler.workers.values()) <= ended:
                assert time.monotonic() < deadline, "no heartbeat in 30 s"
                time.sleep(0.05)
            return began, ended

        async def record_run() -> tuple[tuple[float, float], tuple[float, float]]:
            writer = Writer(store)
            limits = Limits(fine_metrics_every=10_000, fine_metrics_settle=2)  # no periodic reads
            recorder = RunWatcher(
                run, writer, lambda event: None, limits, AlertWatch(run.source, AlertLimits())
            )
            await recorder.start()
            windows = []
            for function in (inc, dec):
                windows.append(await asyncio.to_thread(compute, function))
                for _ in range(3):  # the tick that reads the tasks, then two idle ones: it settled
                    await recorder.tick()
            writer.close()
            return windows[0], windows[1]

        first, second = asyncio.run(record_run())
    try:
        for (start, end), own, other in ((first, "inc", "dec"), (second, "dec", "inc")):
            page = html_report(store, run.id, start, end).split("<h2>Fine Performance Metrics</h2>")[1]
            assert f"<tr><td>{own}</td>" in page, page[:2000]
            assert f"<tr><td>{other}</td>" not in page, page[:2000]
        # The second window's figure is all of dec's total: nothing of it was before or after.
        closing = store.events(run.id, kind="metrics", newest_first=True, limit=1)[0]
        dec_cpu = closing.detail["execute / dec / thread-cpu / seconds"]
        page = html_report(store, run.id, *second).split("<h2>Fine Performance Metrics</h2>")[1]
        assert seconds_text(dec_cpu) in page
    finally:
        store.close()
