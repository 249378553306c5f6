"""A source says how many of its workers have GPUs, so the sidebar can unfold its GPU plots.

Dask's workers report ``gpu_utilization``, ``gpu_memory_used`` and ``gpu-memory-total`` in their
heartbeat metrics when NVML works on them; the history's recorder reads them from the scheduler's
identity and the source's JSON gets ``"gpus"``: the number of workers that report them (null while
not known). This machine has no GPU, so the GPU metrics are faked: a worker plugin adds them to
each worker's ``Worker.metrics`` of a real LocalCluster, and they reach the scheduler as NVML's
would.
"""

from __future__ import annotations

from typing import Any

from _support import Jupyter
from distributed import LocalCluster, WorkerPlugin
from test_history_api import eventually

RECORDED = 120  # seconds: the recorder starts, finds the scheduler and reads its workers


class FakeGpus(WorkerPlugin):
    """What a worker whose NVML works sends in its heartbeat (distributed/system_monitor.py)."""

    def setup(self, worker: Any) -> None:
        worker.metrics["gpu_utilization"] = lambda w: 37
        worker.metrics["gpu_memory_used"] = lambda w: 2**30
        worker.metrics["gpu-memory-total"] = lambda w: 16 * 2**30


async def listed(jupyter: Jupyter, source_id: str, since: str | None = None) -> dict[str, Any] | None:
    code, listing = await jupyter.api("GET", "sources" + (f"?since={since}" if since else ""))
    assert code == 200, listing
    return next((source for source in listing["sources"] if source["id"] == source_id), None)


async def test_a_source_counts_the_workers_that_report_gpus(jupyter: Jupyter, dashboard_url: str) -> None:
    gpu_cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        plugins={FakeGpus()},
    )
    try:
        port = gpu_cluster.scheduler.http_server.port
        code, gpus = await jupyter.api("POST", "sources", {"url": f"http://127.0.0.1:{port}/status"})
        assert code == 201, gpus
        code, plain = await jupyter.api("POST", "sources", {"url": f"{dashboard_url}/status"})
        assert code == 201, plain
        assert gpus["gpus"] is None and plain["gpus"] is None  # not recorded yet: not known
        code, listing = await jupyter.api("GET", "sources")
        assert code == 200, listing
        version = listing["version"]

        async def counted() -> bool:
            source = await listed(jupyter, gpus["id"])
            return source is not None and source["gpus"] == 2

        assert await eventually(counted, RECORDED), await listed(jupyter, gpus["id"])

        async def none_on_the_plain_one() -> bool:
            source = await listed(jupyter, plain["id"])
            return source is not None and source["gpus"] == 0

        assert await eventually(none_on_the_plain_one, RECORDED), await listed(jupyter, plain["id"])

        # A visible change: a poll that names the version it saw before gets both sources again.
        changed = await listed(jupyter, gpus["id"], since=version)
        assert changed is not None and changed["gpus"] == 2, changed
        changed = await listed(jupyter, plain["id"], since=version)
        assert changed is not None and changed["gpus"] == 0, changed
    finally:
        gpu_cluster.close()
