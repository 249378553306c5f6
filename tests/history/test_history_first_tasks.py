"""What a cluster computes the moment it answers is recorded in full, each task once.

Dask keeps a task stream only once someone asks for one, and dashdock's recorder attaches a few
seconds after a cluster starts: a client that computes at once lost its first second. A managed
cluster now keeps its stream from the start, and the recorder reads the scheduler's whole buffer.
"""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest
from _support import Jupyter
from distributed import Client
from test_history_api import eventually, run_of

pytestmark = pytest.mark.slow  # real kernels, clusters or servers started per test

BURSTS, PER_BURST = 3, 500


def inc(x: int) -> int:
    return x + 1


async def test_three_bursts_the_moment_a_cluster_answers_are_recorded_each_once(jupyter: Jupyter) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster
    source = cluster["source"]
    async with Client(cluster["scheduler"], asynchronous=True) as client:
        for burst in range(BURSTS):
            futures = client.map(inc, range(PER_BURST), key=[f"burst{burst}-{i}" for i in range(PER_BURST)])
            await client.gather(futures)
    total = BURSTS * PER_BURST

    async def recorded() -> bool:
        run = await run_of(jupyter, source)
        return run is not None and run["tasks"] >= total

    assert await eventually(recorded, 120), await run_of(jupyter, source)
    run = await run_of(jupyter, source)
    assert run is not None and run["tasks"] == total and run["missed"] == 0, run

    trace = await jupyter.fetch(f"dashdock/api/history/{source}/trace")
    computes = [e for e in json.loads(trace.body)["traceEvents"] if e.get("cat") == "compute"]
    keys = [e["args"]["key"] for e in computes]
    assert len(keys) == len(set(keys)) == total
    parquet = await jupyter.fetch(f"dashdock/api/history/{source}/tasks.parquet")
    table = pq.read_table(io.BytesIO(parquet.body))
    assert table.num_rows == total and len(set(table.column("key").to_pylist())) == total
    await jupyter.api("DELETE", f"clusters/{cluster['id']}")
