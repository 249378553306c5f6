"""The store as a run's recorder writes it: what it needs of the store, one writer thread, and
what one tick writes in one job of it (run_watcher.py reads; this file writes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from dashdock.history.model import (
    Alert,
    Event,
    Gap,
    GroupProgress,
    MetricSample,
    Run,
    TaskRecord,
    WorkerSample,
)


class Store(Protocol):
    """What the recorder needs of the store (store.py's HistoryStore)."""

    def begin_run(self, run: Run) -> None: ...
    def add_tasks(self, run_id: str, tasks: Sequence[TaskRecord]) -> bool: ...
    def add_gap(self, run_id: str, gap: Gap) -> bool: ...
    def add_worker_samples(self, run_id: str, samples: Sequence[WorkerSample]) -> bool: ...
    def add_group_progress(self, run_id: str, rows: Sequence[GroupProgress]) -> bool: ...
    def add_events(self, run_id: str, events: Sequence[Event]) -> bool: ...
    def add_alerts(self, run_id: str, alerts: Sequence[Alert]) -> bool: ...
    def add_metric_samples(self, run_id: str, samples: Sequence[MetricSample]) -> bool: ...
    def add_scheduler_samples(
        self, run_id: str, cpu: Sequence[tuple[float, float]], loop: Sequence[tuple[float, float]] = ()
    ) -> bool: ...
    def last_recorded(self, scheduler: str, but: str) -> tuple[float, frozenset[str]] | None: ...
    def last_alert(self, source: str, kinds: Sequence[str]) -> Alert | None: ...
    def end_run(self, run_id: str, end: float) -> None: ...


class Writer:
    """The store in one thread: writes keep their order and never block the recorder's loop."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="dashdock-history-store")

    async def run(self, fn: Callable[..., Any], *args: object) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


@dataclass
class TickWrites:
    """What one tick writes, in one job of the writer thread."""

    tasks: list[TaskRecord]
    gap: Gap | None
    samples: list[WorkerSample]
    progress: list[GroupProgress]
    events: list[Event]
    alerts: list[Alert]
    metric_samples: list[MetricSample] = field(default_factory=list)
    scheduler_cpu: list[tuple[float, float]] = field(default_factory=list)  # (time, percent)
    scheduler_loop: list[tuple[float, float]] = field(default_factory=list)  # (time, tick seconds)

    def apply(self, store: Store, run_id: str) -> bool:
        """Write it all; False when the run is no longer in the store (the user deleted it)."""
        kept = True
        if self.tasks:
            kept &= store.add_tasks(run_id, self.tasks)  # one call: one transaction in the store
        if self.gap is not None:
            kept &= store.add_gap(run_id, self.gap)
        if self.samples:
            kept &= store.add_worker_samples(run_id, self.samples)
        if self.progress:
            kept &= store.add_group_progress(run_id, self.progress)
        if self.events:
            kept &= store.add_events(run_id, self.events)
        if self.alerts:
            kept &= store.add_alerts(run_id, self.alerts)
        if self.metric_samples:
            kept &= store.add_metric_samples(run_id, self.metric_samples)
        if self.scheduler_cpu or self.scheduler_loop:
            kept &= store.add_scheduler_samples(run_id, self.scheduler_cpu, self.scheduler_loop)
        return kept
