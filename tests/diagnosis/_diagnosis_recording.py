"""A real LocalCluster recorded by dashdock's own recorder into a real store, for diagnosis tests
that need a cluster shaped for their pathology (several workers, a memory limit) without a Jupyter
server: ``async with recorded_cluster(tmp_path, n_workers=2) as rec: found, stream = await
rec.window(work)``. ``found`` is ``diagnose_window``'s answer (what ``GET history/{id}/diagnosis``
sends) and ``stream`` Dask's own task stream of the same work, to check the pathology happened.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster, get_task_stream

from dashdock.alerts.detection import AlertLimits, AlertWatch
from dashdock.diagnosis.service import DiagnosisLimits, diagnose_window
from dashdock.history.model import Run
from dashdock.history.run_writes import Writer
from dashdock.history.store import HistoryStore
from dashdock.kernel.fine_metrics import offer
from dashdock.kernel.plot_state import offer as offer_plot_state
from dashdock.live.mirror import SchedulerMirror
from dashdock.watcher.limits import Limits
from dashdock.watcher.run_watcher import RunWatcher

RECORDED_WITHIN = 60.0  # seconds for the recorder to have a window's tasks (a loaded CI machine)


def nap(seconds: float) -> float:
    """A task thread off the CPU for ``seconds``."""
    time.sleep(seconds)
    return seconds


def spin(seconds: float) -> float:
    """CPU-bound work of about ``seconds``."""
    until = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < until:
        n += 1
    return seconds


def span_of(stream: list[dict[str, Any]]) -> tuple[float, float]:
    """The window a computation's tasks ran in, as their workers reported it (and the recorder
    stored it). A worker shifts its times by its estimate of its clock's offset from the
    scheduler's, which a loaded machine's heartbeat latency puts off by tens of milliseconds: a
    window read off the client's clock around the work can miss its first tasks."""
    spans = [span for task in stream for span in task["startstops"]]
    return min(span["start"] for span in spans), max(span["stop"] for span in spans)


@dataclass
class Recorded:
    cluster: LocalCluster
    client: Client
    store: HistoryStore
    run: Run

    async def window(
        self, work: Callable[[], Awaitable[Any]], tasks: int, settle: bool = False
    ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Runs ``work`` under Dask's task stream; once the recorder has its ``tasks`` (and, with
        ``settle``, Fine Performance Metrics read after it), the diagnosis of its window."""
        async with get_task_stream(client=self.client) as stream:
            await work()
        end = time.time()
        start, last = span_of(stream.data)
        deadline = time.monotonic() + RECORDED_WITHIN
        while True:
            found = await asyncio.to_thread(
                diagnose_window, self.store, self.run, start, last, DiagnosisLimits()
            )
            if found["tasks"] >= tasks and (not settle or self._metrics_since(end)):
                return found, stream.data
            assert time.monotonic() < deadline, f"recorded {found['tasks']} of {tasks} tasks: {found}"
            await asyncio.sleep(0.2)

    def _metrics_since(self, end: float) -> bool:
        newest = self.store.events(self.run.id, kind="metrics", newest_first=True, limit=1)
        return bool(newest) and newest[0].time > end


@contextlib.asynccontextmanager
async def recorded_cluster(tmp_path: Path, **cluster: Any) -> AsyncIterator[Recorded]:
    """A LocalCluster (``cluster`` are its arguments), offering Fine Performance Metrics and its
    plot state as a dashdock-managed one does, recorded every 0.2 s until the block ends (with the
    mirror the drawn plots read, through which the scheduler's own CPU is recorded)."""
    store = HistoryStore.open(tmp_path / "history.db")
    options: dict[str, Any] = {"protocol": "tcp", "host": "127.0.0.1", "dashboard_address": ":0"}
    async with (
        LocalCluster(asynchronous=True, **(options | cluster)) as dask_cluster,
        Client(dask_cluster, asynchronous=True) as client,
    ):
        offer(dask_cluster.scheduler)
        offer_plot_state(dask_cluster.scheduler)
        run = Run("d1a9d1a9d1a9", "5ca1ab1e5ca1", "diagnosis", dask_cluster.scheduler_address, time.time())
        store.begin_run(run)
        writer = Writer(store)
        limits = Limits(tick=0.2, fine_metrics_every=10_000, fine_metrics_settle=3)
        recorder = RunWatcher(
            run, writer, lambda event: None, limits, AlertWatch(run.source, AlertLimits()), SchedulerMirror()
        )
        await recorder.start()
        recording = asyncio.ensure_future(recorder.record())
        try:
            yield Recorded(dask_cluster, client, store, run)
        finally:
            recorder.stopping.set()
            await recording
            writer.close()
            store.close()
