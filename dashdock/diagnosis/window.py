"""A window of a run as diagnosis reads it: its tasks, its worker threads, and how busy each
worker's threads were in short buckets of time.

Everything comes from what the recorder stored (the task stream's spans, workers joining and
leaving with their threads): the scheduler is asked nothing more. Reading is bounded
(``max_tasks``); a window with more says so in its findings' details.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from dashdock.history.model import Event, TaskRecord
from dashdock.history.store import HistoryStore

# What keeps a worker thread busy; a transfer waits for data (Dask fetches it off the thread).
THREAD_ACTIONS = frozenset({"compute", "disk-read", "disk-write", "deserialize"})
# The finest bucket: busy-ness is read at this resolution, coarser on long windows.
BUCKET_SECONDS = 0.05
MAX_BUCKETS = 4000


@dataclass
class TaskWindow:
    first: float  # the window asked for (the run's span when not given)
    last: float
    tasks: list[TaskRecord]
    truncated: bool  # more tasks than were read
    threads: dict[str, int]  # worker -> its threads (reported when it joined, else as seen)
    present: dict[str, tuple[float, float]]  # worker -> when it was there, within the window
    left: list[Event] = field(default_factory=list)  # workers that left in the window (with reasons)
    active: tuple[float, float] = (0.0, 0.0)  # from the first task's start to the last one's stop
    workers: list[str] = field(default_factory=list)  # rows of ``busy``
    last_start: dict[str, float] = field(default_factory=dict)  # worker -> its last task's start
    width: float = BUCKET_SECONDS
    busy: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # thread-seconds per bucket
    capacity: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # threads x width there

    @property
    def wall(self) -> float:
        return max(self.last - self.first, 1e-9)

    @property
    def thread_count(self) -> int:
        return sum(self.threads.values())

    def bucket_time(self, index: int) -> float:
        return self.active[0] + index * self.width


def read_window(
    store: HistoryStore,
    run_id: str,
    start: float | None,
    end: float | None,
    run_span: tuple[float, float],
    max_tasks: int,
) -> TaskWindow:
    tasks = list(store.tasks(run_id, start, end, limit=max_tasks + 1))
    truncated = len(tasks) > max_tasks
    tasks = tasks[:max_tasks]
    first = start if start is not None else run_span[0]
    last = end if end is not None else run_span[1]
    events = [
        event
        for kind in ("worker-joined", "worker-left")
        for event in store.events(run_id, None, last, kind=kind)
    ]
    threads, present, left = _workers(events, tasks, first, last)
    window = TaskWindow(first, last, tasks, truncated, threads, present, left)
    if tasks:
        begin = max(first, min(task.start for task in tasks))
        finish = min(last, max(task.stop for task in tasks))
        window.active = (begin, max(finish, begin + 1e-6))
        _fill_buckets(window)
    return window


def _workers(
    events: list[Event], tasks: list[TaskRecord], first: float, last: float
) -> tuple[dict[str, int], dict[str, tuple[float, float]], list[Event]]:
    reported: dict[str, int] = {}
    joined: dict[str, float] = {}
    gone: dict[str, float] = {}
    left = []
    for event in events:
        if event.worker is None:
            continue
        if event.kind == "worker-joined":
            # One there when recording began was there before its first sample said so.
            joined[event.worker] = first if event.detail.get("at_start") else event.time
            threads = event.detail.get("threads")
            if isinstance(threads, int) and 0 < threads < 100_000:
                reported[event.worker] = threads
        elif event.kind == "worker-left" and event.time >= first:
            gone[event.worker] = event.time
            left.append(event)
    seen: dict[str, set[int | None]] = defaultdict(set)
    for task in tasks:
        seen[task.worker].add(task.thread)
        # A sample comes once a second: a worker ran tasks before the one that saw it join.
        joined[task.worker] = min(joined.get(task.worker, task.start), task.start)
    threads = {worker: max(len(ids), reported.get(worker, 0)) for worker, ids in seen.items()}
    for worker, count in reported.items():
        threads.setdefault(worker, count)
    present = {
        worker: (max(first, joined.get(worker, first)), min(last, gone.get(worker, last)))
        for worker in threads
    }
    return threads, present, left


def _fill_buckets(window: TaskWindow) -> None:
    """``busy[w, k]``: thread-seconds worker ``w`` spent on its threads in bucket ``k``."""
    begin, finish = window.active
    span = finish - begin
    count = max(1, min(MAX_BUCKETS, math.ceil(span / BUCKET_SECONDS)))
    width = span / count
    window.width = width
    window.workers = sorted(window.threads)
    row = {worker: i for i, worker in enumerate(window.workers)}
    busy = np.zeros((len(window.workers), count))
    for task in window.tasks:
        w = row[task.worker]
        window.last_start[task.worker] = max(window.last_start.get(task.worker, task.start), task.start)
        for span_ in task.spans:
            if span_.action not in THREAD_ACTIONS:
                continue
            s, e = max(span_.start, begin), min(span_.stop, finish)
            if e <= s:
                continue
            k0, k1 = int((s - begin) / width), min(int((e - begin) / width), count - 1)
            if k0 == k1:
                busy[w, k0] += e - s
                continue
            busy[w, k0] += begin + (k0 + 1) * width - s
            busy[w, k0 + 1 : k1] += width
            busy[w, k1] += e - (begin + k1 * width)
    capacity = np.zeros_like(busy)
    starts = begin + np.arange(count) * width
    for worker, w in row.items():
        there_from, there_until = window.present[worker]
        overlap = np.clip(np.minimum(starts + width, there_until) - np.maximum(starts, there_from), 0, width)
        capacity[w] = window.threads[worker] * overlap
    window.busy = np.minimum(busy, capacity)
    window.capacity = capacity
