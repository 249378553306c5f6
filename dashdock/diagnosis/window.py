"""A window of a run as diagnosis reads it: its tasks as columns, its worker threads, and how busy
each worker's threads were in short buckets of time.

Everything comes from what the recorder stored (the task stream's spans, workers joining and
leaving with their threads): the scheduler is asked nothing more. Reading is bounded
(``max_tasks``); a window with more says so in its answer. Counting is numpy over whole columns:
a 100,000-task window is diagnosed in well under a second (bench/diagnosis_speed.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dashdock.history.model import Event
from dashdock.history.store import HistoryStore
from dashdock.history.store_columns import ACTIONS, TaskColumns, no_tasks

# What keeps a worker thread busy; a transfer waits for data (Dask fetches it off the thread).
THREAD_ACTIONS = np.array([ACTIONS.index(a) for a in ("compute", "disk-read", "disk-write", "deserialize")])
TRANSFER = ACTIONS.index("transfer")
# The finest bucket: busy-ness is read at this resolution, coarser on long windows.
BUCKET_SECONDS = 0.05
MAX_BUCKETS = 4000
MAX_SCHEDULER_SAMPLES = 200_000  # the scheduler's CPU figures read (a day at two a second)
# A stretch this long with nothing running on any worker (no task, no transfer) is time no work was
# submitted, between a notebook's computations: no cause explains it, and it splits the window into
# periods of work, each with its own end (a straggler holds the end of one computation, not only
# of the last). Dask's per-task overhead and a chain's hand-offs are gaps of milliseconds.
NO_WORK_GAP = 1.0


@dataclass
class TaskWindow:
    first: float  # the window asked for (the run's span when not given)
    last: float
    tasks: TaskColumns
    truncated: bool  # more tasks than were read
    threads: dict[str, int]  # worker -> its threads (reported when it joined, else as seen)
    present: dict[str, tuple[float, float]]  # worker -> when it was there, within the window
    left: list[Event] = field(default_factory=list)  # workers that left in the window (with reasons)
    active: tuple[float, float] = (0.0, 0.0)  # from the first task's start to the last one's stop
    workers: list[str] = field(default_factory=list)  # rows of ``busy``
    row: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # task -> its worker's row
    last_start: np.ndarray = field(default_factory=lambda: np.zeros(0))  # worker row -> its last task's start
    width: float = BUCKET_SECONDS
    busy: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # thread-seconds per bucket
    capacity: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # threads x width there
    # Stretches of work (NO_WORK_GAP), and each bucket's share of time between them.
    periods: list[tuple[float, float]] = field(default_factory=list)
    no_work: np.ndarray = field(default_factory=lambda: np.zeros(0))
    waiting: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # idle, fetching inputs
    pauses: list[tuple[str, float, float]] = field(default_factory=list)  # (worker, paused, resumed)
    scheduler_cpu: list[tuple[float, float]] = field(default_factory=list)  # (time, percent of a core)
    scheduler_loop: list[tuple[float, float]] = field(default_factory=list)  # (time, tick seconds)

    @property
    def wall(self) -> float:
        return max(self.last - self.first, 1e-9)

    @property
    def thread_count(self) -> int:
        return sum(self.threads.values())

    def bucket_time(self, index: int) -> float:
        return self.active[0] + index * self.width

    @property
    def durations(self) -> np.ndarray:
        return self.tasks.stop - self.tasks.start


def read_window(
    store: HistoryStore,
    run_id: str,
    start: float | None,
    end: float | None,
    run_span: tuple[float, float],
    max_tasks: int,
) -> TaskWindow:
    tasks = store.task_columns(run_id, start, end, max_tasks + 1)
    if tasks is None:  # the run was deleted since it was looked up
        tasks = no_tasks({})
    truncated = len(tasks) > max_tasks
    if truncated:
        tasks = _head(tasks, max_tasks)
    first = start if start is not None else run_span[0]
    last = end if end is not None else run_span[1]
    events = [
        event
        for kind in ("worker-joined", "worker-left", "worker-paused", "worker-resumed")
        for event in store.events(run_id, None, last, kind=kind)
    ]
    window = TaskWindow(first, last, tasks, truncated, *_workers(events, tasks, first, last))
    window.pauses = _pauses(events, first, last)
    # The scheduler's monitor measures twice a second: one before the window covers its start.
    window.scheduler_cpu = store.scheduler_cpu(run_id, first - 1.0, last + 1.0, limit=MAX_SCHEDULER_SAMPLES)
    window.scheduler_loop = store.scheduler_loop(run_id, first - 1.0, last + 1.0, limit=MAX_SCHEDULER_SAMPLES)
    if len(tasks):
        begin = max(first, float(tasks.start.min()))
        finish = min(last, float(tasks.stop.max()))
        window.active = (begin, max(finish, begin + 1e-6))
        _fill_buckets(window)
        _find_periods(window)
    return window


def _head(tasks: TaskColumns, count: int) -> TaskColumns:
    """The first ``count`` tasks (by start) and their spans."""
    spans = tasks.spans
    kept = spans.task < count
    return TaskColumns(
        tasks.keys[:count],
        tasks.names,
        tasks.group[:count],
        tasks.worker[:count],
        tasks.thread[:count],
        tasks.start[:count],
        tasks.stop[:count],
        tasks.erred[:count],
        {row: text for row, text in tasks.exceptions.items() if row < count},
        type(spans)(
            spans.task[kept],
            spans.action[kept],
            spans.start[kept],
            spans.stop[kept],
            [source for source, keep in zip(spans.source, kept, strict=True) if keep],
        ),
    )


def _workers(
    events: list[Event], tasks: TaskColumns, first: float, last: float
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
            count = event.detail.get("threads")
            if isinstance(count, int) and 0 < count < 100_000:
                reported[event.worker] = count
        elif event.kind == "worker-left" and event.time >= first:
            gone[event.worker] = event.time
            left.append(event)
    threads: dict[str, int] = {}
    ids = np.unique(tasks.worker)
    for worker_id in ids:
        mine = tasks.worker == worker_id
        worker = tasks.names[int(worker_id)]
        threads[worker] = max(len(np.unique(tasks.thread[mine])), reported.get(worker, 0))
        # A sample comes once a second: a worker ran tasks before the one that saw it join.
        earliest = float(tasks.start[mine].min())
        joined[worker] = min(joined.get(worker, earliest), earliest)
    for worker, count in reported.items():
        threads.setdefault(worker, count)
    present = {
        worker: (max(first, joined.get(worker, first)), min(last, gone.get(worker, last)))
        for worker in threads
    }
    return threads, present, left


def _pauses(events: list[Event], first: float, last: float) -> list[tuple[str, float, float]]:
    """Each stretch a worker was paused for memory that overlaps [first, last], as the recorder's
    samples saw it begin and end (or the window end, while it lasted)."""
    since: dict[str, float] = {}
    stretches = []
    for event in sorted(events, key=lambda event: event.time):
        if event.worker is None:
            continue
        if event.kind == "worker-paused":
            since.setdefault(event.worker, event.time)
        elif event.kind in ("worker-resumed", "worker-left") and event.worker in since:
            stretches.append((event.worker, since.pop(event.worker), event.time))
    stretches += [(worker, paused, last) for worker, paused in since.items()]
    return [(worker, max(a, first), min(b, last)) for worker, a, b in stretches if b >= first and a <= last]


def _fill_buckets(window: TaskWindow) -> None:
    """``busy[w, k]``: thread-seconds worker ``w`` spent on its threads in bucket ``k``;
    ``waiting[w, k]``: its thread-seconds waiting for data from other workers."""
    tasks, spans = window.tasks, window.tasks.spans
    begin, finish = window.active
    count = max(1, min(MAX_BUCKETS, math.ceil((finish - begin) / BUCKET_SECONDS)))
    window.width = (finish - begin) / count
    window.workers = sorted(window.threads)
    row_of = {worker: i for i, worker in enumerate(window.workers)}
    by_id = np.zeros(max(tasks.names, default=0) + 1, dtype=np.int64)
    for worker_id in np.unique(tasks.worker):
        by_id[worker_id] = row_of[tasks.names[int(worker_id)]]
    window.row = by_id[tasks.worker]
    window.last_start = np.full(len(window.workers), -np.inf)
    np.maximum.at(window.last_start, window.row, tasks.start)
    capacity = np.zeros((len(window.workers), count))
    starts = begin + np.arange(count) * window.width
    for worker, i in row_of.items():
        there_from, there_until = window.present[worker]
        overlap = np.minimum(starts + window.width, there_until) - np.maximum(starts, there_from)
        capacity[i] = window.threads[worker] * np.clip(overlap, 0, window.width)
    window.capacity = capacity
    window.busy = np.minimum(_spread(window, np.isin(spans.action, THREAD_ACTIONS)), capacity)
    # A task's thread waits while its inputs are fetched: that idle time is the transfer's.
    window.waiting = np.minimum(_spread(window, spans.action == TRANSFER), capacity - window.busy)


def _find_periods(window: TaskWindow) -> None:
    """``periods``: the stretches of ``active`` where something ran, split at gaps of NO_WORK_GAP or
    more with nothing running anywhere; ``no_work[k]``: the share of bucket ``k`` in such a gap."""
    tasks = window.tasks
    begin, finish = window.active
    starts = np.maximum(np.concatenate([tasks.start, tasks.spans.start]), begin)
    stops = np.minimum(np.concatenate([tasks.stop, tasks.spans.stop]), finish)
    order = np.argsort(starts, kind="stable")
    starts, reach = starts[order], np.maximum.accumulate(stops[order])
    (breaks,) = np.nonzero(starts[1:] - reach[:-1] >= NO_WORK_GAP)
    gaps = list(zip(reach[breaks].tolist(), starts[breaks + 1].tolist(), strict=True))
    edges = [begin, *(edge for gap in gaps for edge in gap), finish]
    window.periods = list(zip(edges[::2], edges[1::2], strict=True))
    count, width = window.capacity.shape[1], window.width
    bucket_starts = begin + np.arange(count) * width
    no_work = np.zeros(count)
    for since, until in gaps:
        overlap = np.minimum(bucket_starts + width, until) - np.maximum(bucket_starts, since)
        no_work += np.clip(overlap, 0, width)
    window.no_work = no_work / width


def _spread(window: TaskWindow, chosen: np.ndarray) -> np.ndarray:
    """The ``chosen`` spans' seconds per worker row and bucket."""
    spans = window.tasks.spans
    (begin, finish), width = window.active, window.width
    rows, count = len(window.workers), window.capacity.shape[1]
    s = np.maximum(spans.start[chosen], begin)
    e = np.minimum(spans.stop[chosen], finish)
    w = window.row[spans.task[chosen]]
    kept = e > s
    s, e, w = s[kept], e[kept], w[kept]
    k0 = np.minimum(((s - begin) / width).astype(np.int64), count - 1)
    k1 = np.minimum(((e - begin) / width).astype(np.int64), count - 1)
    one, many = k0 == k1, k0 != k1
    # A span within one bucket adds its length there; a longer one its part of the first and last
    # buckets, and a whole width to each between (a running sum of +width at k0+1, -width at k1).
    total = np.zeros(rows * count)
    total += np.bincount(w[one] * count + k0[one], weights=(e - s)[one], minlength=rows * count)
    wm, k0m, k1m = w[many], k0[many], k1[many]
    total += np.bincount(
        wm * count + k0m, weights=begin + (k0m + 1) * width - s[many], minlength=rows * count
    )
    total += np.bincount(wm * count + k1m, weights=e[many] - (begin + k1m * width), minlength=rows * count)
    steps = np.zeros((rows, count + 1))
    np.add.at(steps, (wm, k0m + 1), width)
    np.add.at(steps, (wm, k1m), -width)
    return total.reshape(rows, count) + np.cumsum(steps, axis=1)[:, :count]
