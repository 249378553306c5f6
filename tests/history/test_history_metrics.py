"""A run keeps what a notebook measured (custom metrics) and Dask's Fine Performance Metrics.

A managed cluster is recorded; a client adds a custom metric (``dashdock.metric``) and computes.
The run's metrics Parquet holds the metric's samples, its History memory page and its report draw
them, and the report lists Dask's Fine Performance Metrics totals, which the cluster's scheduler
offers to the recorder (kernel/fine_metrics.py).
"""

from __future__ import annotations

import io

import pyarrow.parquet as pq
import pytest
from _support import Jupyter
from distributed import Client
from test_history_api import START, eventually, run_of

import dashdock

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
    assert "Totals as of" in report and "execute / inc" in report
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")


async def asyncio_to_thread_client(address: str) -> Client:
    """A synchronous client, made in a thread (it runs its own loop there)."""
    import asyncio

    return await asyncio.to_thread(Client, address)
