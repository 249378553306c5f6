"""A scheduler's workers, read once a sample: their samples, and the events of who joined, left
(and why), paused and resumed, with what the alerts are told of them.

Another scheduler answering at the same address (its identity's id changed) ends the run: the
next run reads its task stream from the start.
"""

from __future__ import annotations

from collections.abc import Mapping

from dashdock.alerts.detection import AlertWatch, departure
from dashdock.history.model import Event, Run, WorkerSample
from dashdock.watcher.limits import Emit, Ended, Limits
from dashdock.watcher.scheduler import Scheduler, to_worker_samples

# Metrics a worker's heartbeat carries when NVML works there (distributed's system_monitor.py).
_GPU_METRICS = ("gpu_utilization", "gpu-memory-total")


class WorkersRead:
    """What a run remembers of its workers between two samples."""

    def __init__(
        self, run: Run, scheduler: Scheduler, alerts: AlertWatch, emit: Emit, limits: Limits
    ) -> None:
        self.run, self.scheduler, self.alerts, self.emit, self.limits = run, scheduler, alerts, emit, limits
        self.workers: set[str] | None = None
        self.scheduler_id: str | None = None  # identity's id: another one is another scheduler
        self.gpus: int | None = None  # workers reporting GPU metrics, as last emitted
        self.paused: set[str] = set()  # workers paused for memory at the last sample

    async def sample(self, now: float, events: list[Event]) -> list[WorkerSample]:
        """The workers' samples; what changed is added to ``events``. Raises ``Ended`` when
        another scheduler answers at the address (a restart on the same port)."""
        identity = await self.scheduler.identity(self.limits.max_workers)
        scheduler_id = identity.get("id") if isinstance(identity, Mapping) else None
        if self.scheduler_id is not None and scheduler_id != self.scheduler_id:
            raise Ended(f"The scheduler at {self.run.scheduler} was restarted (it is another scheduler now).")
        self.scheduler_id = scheduler_id if isinstance(scheduler_id, str) else None
        samples = to_worker_samples(identity, now, self.limits.max_workers)
        workers = identity.get("workers") if isinstance(identity, Mapping) else None
        present = {str(w) for w in workers} if isinstance(workers, Mapping) else set()
        before = self.workers
        joined = present - (before or set())
        left = (before or set()) - present
        events.extend(
            Event(now, "worker-joined", w, {"at_start": before is None, "threads": _threads(workers, w)})
            for w in sorted(joined)
        )
        self.workers = present
        if isinstance(workers, Mapping):
            self._statuses(workers, present, now, events)
        if left:
            await self._departures(left, now, events)
        return samples

    def _statuses(
        self, workers: Mapping[str, object], present: set[str], now: float, events: list[Event]
    ) -> None:
        self.alerts.workers(workers, now)
        # When each worker was paused for memory, and for how long (diagnosis counts it).
        paused = {
            str(w)
            for w, info in workers.items()
            if isinstance(info, Mapping) and info.get("status") == "paused"
        }
        events.extend(Event(now, "worker-paused", w) for w in sorted(paused - self.paused))
        events.extend(Event(now, "worker-resumed", w) for w in sorted((self.paused - paused) & present))
        self.paused = paused
        gpus = sum(1 for info in workers.values() if _reports_gpus(info))
        if gpus != self.gpus:
            self.gpus = gpus
            self.emit({"event": "gpus", "run_id": self.run.id, "workers": gpus})

    async def _departures(self, left: set[str], now: float, events: list[Event]) -> None:
        """Why each worker left (at most ``max_departures_per_tick`` are asked about)."""
        asked = sorted(left)[: self.limits.max_departures_per_tick]
        memory_restarts = await self.scheduler.events("worker-restart-memory")
        for worker in asked:
            gone = departure(worker, await self.scheduler.events(worker), memory_restarts)
            events.append(
                Event(now, "worker-left", worker, {"reason": gone.reason, "expected": gone.expected})
            )
            self.alerts.worker_left(gone, now)
        events.extend(Event(now, "worker-left", w) for w in sorted(left)[len(asked) :])


def _threads(workers: object, worker: str) -> int | None:
    """A worker's threads as its identity reports them (diagnosis counts idle ones)."""
    info = workers.get(worker) if isinstance(workers, Mapping) else None
    threads = info.get("nthreads") if isinstance(info, Mapping) else None
    return threads if isinstance(threads, int) and not isinstance(threads, bool) else None


def _reports_gpus(info: object) -> bool:
    metrics = info.get("metrics") if isinstance(info, Mapping) else None
    return isinstance(metrics, Mapping) and any(name in metrics for name in _GPU_METRICS)
