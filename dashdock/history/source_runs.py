"""A source's runs read as one, for a window that reaches back before the run it was asked of.

A restarted cluster or a replaced scheduler begins a new run of the same source; a pane rewound to
its last 5 minutes asks the newest run for them, and should show what the runs before it recorded
in that window too. ``RunsRead`` answers the reads the task stream, progress and memory pages make
(``PageReads``) from every run of the source that overlaps the window, oldest first.
"""

from __future__ import annotations

import heapq
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Protocol

from dashdock.history.model import MetricSample, Run, TaskRecord, WorkerSample
from dashdock.history.store import HistoryStore


class PageReads(Protocol):
    """What a window's page reads of a run (the store itself answers these for one run)."""

    def tasks(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> Iterator[TaskRecord]: ...

    def finished_by_group(self, run_id: str, start: float, end: float) -> list[tuple[str, int, int]]: ...

    def worker_samples(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[WorkerSample]: ...

    def metric_samples(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[MetricSample]: ...


def runs_in_window(store: HistoryStore, run: Run, first: float, last: float) -> list[Run]:
    """The runs of ``run``'s source that overlap [first, last], oldest first (``run`` among them)."""
    now = time.time()
    found = [
        other
        for other in store.runs()
        if other.source == run.source and other.start <= last and (other.end or now) >= first
    ]
    if all(other.id != run.id for other in found):
        found.append(run)
    return sorted(found, key=lambda other: other.start)


class RunsRead:
    """``PageReads`` over several runs: whatever run id a page passes, every run is read."""

    def __init__(self, store: HistoryStore, runs: list[Run]) -> None:
        self._store = store
        self._ids = [run.id for run in runs]

    def tasks(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> Iterator[TaskRecord]:
        # Each run's tasks come by start; runs may overlap (a scheduler replaced while its last
        # tasks finished), so they are merged by start, and the limit counts them all.
        merged = heapq.merge(
            *(self._store.tasks(one, start, end, limit) for one in self._ids), key=lambda task: task.start
        )
        for count, task in enumerate(merged):
            if limit is not None and count >= limit:
                return
            yield task

    def finished_by_group(self, run_id: str, start: float, end: float) -> list[tuple[str, int, int]]:
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for one in self._ids:
            for group, ok, erred in self._store.finished_by_group(one, start, end):
                counts[group][0] += ok
                counts[group][1] += erred
        return [(group, ok, erred) for group, (ok, erred) in counts.items()]

    def worker_samples(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[WorkerSample]:
        samples = [s for one in self._ids for s in self._store.worker_samples(one, start, end, limit)]
        return sorted(samples, key=lambda sample: sample.time)[:limit]

    def metric_samples(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[MetricSample]:
        samples = [s for one in self._ids for s in self._store.metric_samples(one, start, end, limit)]
        return sorted(samples, key=lambda sample: sample.time)[:limit]
