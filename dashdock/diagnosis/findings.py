"""What a window's time went to: each cause dashdock can name, with what it cost.

``lost_seconds`` is thread-time: what the window would have saved without the cause, estimated
from what was recorded (each finding's ``detail`` says how). ``share`` is that over the window's
wall time times its threads. A cause is reported only once it costs a noticeable share; idle
thread-time is counted once (the tail, a paused worker, per-task overhead, then imbalance or too
little parallel work, in that order).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dashdock.diagnosis.kinds import KINDS
from dashdock.diagnosis.window import TaskWindow
from dashdock.history.model import Alert
from dashdock.history.report_metrics import WindowMetrics, bytes_text, seconds_text
from dashdock.history.store_columns import ACTIONS

# Below this share of the window's thread-time a cause is not worth a user's look.
MIN_SHARE = 0.02
# A thread idle between two of its tasks for less than this was waiting on Dask, not for work.
OVERHEAD_GAP = 0.1
# Tasks whose median runs under this are "small" (Dask's guidance: well over 100 ms each).
SMALL_TASK = 0.1
# The end is a straggler's tail while at most this share of the threads (or one) are busy.
TAIL_BUSY = 0.25
# A worker is saturated when this share of its threads are busy.
SATURATED = 0.9


@dataclass(frozen=True)
class Finding:
    kind: str
    title: str
    detail: str
    lost_seconds: float
    share: float
    evidence: dict[str, Any]
    start: float
    end: float
    advice: str = ""
    docs: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "title": self.title,
            "detail": self.detail,
            "lost_seconds": round(self.lost_seconds, 3),
            "share": round(self.share, 4),
            "evidence": self.evidence,
            "start": self.start,
            "end": self.end,
            "advice": self.advice,
            "docs": self.docs,
        }


@dataclass
class _Found:
    window: TaskWindow
    findings: list[Finding] = field(default_factory=list)

    @property
    def capacity(self) -> float:
        return self.window.wall * max(self.window.thread_count, 1)

    def add(
        self,
        kind: str,
        lost: float,
        title: str,
        detail: str,
        evidence: dict[str, Any],
        span: tuple[float, float],
    ) -> None:
        share = lost / self.capacity
        if lost <= 0 or share < MIN_SHARE:
            return
        percent = f"{100 * share:.0f} % of thread time"
        self.findings.append(
            Finding(
                kind,
                f"{percent} {title}",
                detail,
                lost,
                share,
                evidence,
                span[0],
                span[1],
                KINDS[kind].advice,
                KINDS[kind].docs,
            )
        )


def diagnose(
    window: TaskWindow, pauses: list[Alert], metrics: WindowMetrics | None, spilled: dict[str, int]
) -> list[Finding]:
    """The causes found in ``window``, costliest first; ``spilled``: each worker's most bytes on disk."""
    found = _Found(window)
    if len(window.tasks):
        _errors(found)
        _worker_lost(found)
        _spans_of(found, {"transfer"}, "transfer", "went to moving data between workers", {})
        _spans_of(
            found,
            {"disk-read", "disk-write"},
            "spilling",
            "went to reading and writing spilled data",
            spilled,
        )
        _idle(found, pauses)
    if metrics is not None:
        _non_cpu(found, metrics)
    return sorted(found.findings, key=lambda finding: -finding.lost_seconds)


def _errors(found: _Found) -> None:
    tasks = found.window.tasks
    erred = [int(row) for row in np.nonzero(tasks.erred)[0]]
    if not erred:
        return
    erred_keys = {tasks.keys[row] for row in erred}
    succeeded = {tasks.keys[row] for row in np.nonzero(~tasks.erred)[0] if tasks.keys[row] in erred_keys}
    retried = sum(tasks.keys[row] in succeeded for row in erred)
    lost = float((tasks.stop[erred] - tasks.start[erred]).sum())
    groups: dict[str, int] = defaultdict(int)
    for row in erred:
        groups[tasks.group_name(row)] += 1
    first = next((tasks.exceptions[row] for row in erred if tasks.exceptions.get(row)), None)
    found.add(
        "errors",
        lost,
        f"went to {_count(len(erred), 'task')} that erred",
        f"The time erred tasks ran ({retried:,} of them succeeded on a retry): it bought nothing.",
        {"erred": len(erred), "retried": retried, "groups": dict(groups), "exception": first},
        (float(tasks.start[erred].min()), float(tasks.stop[erred].max())),
    )


def _worker_lost(found: _Found) -> None:
    window = found.window
    tasks = window.tasks
    gone = {event.worker: event for event in window.left if event.worker}
    if not gone:
        return
    # Tasks that finished on a worker before it left, and ran again later (elsewhere).
    left_at = np.full(max(tasks.names, default=0) + 1, -np.inf)
    for name_id, name in tasks.names.items():
        if name in gone:
            left_at[name_id] = gone[name].time
    (finished_there,) = np.nonzero((tasks.stop <= left_at[tasks.worker]) & ~tasks.erred)
    keys = {tasks.keys[row] for row in finished_there}
    last_stop: dict[str, float] = {}
    for row, key in enumerate(tasks.keys):
        if key in keys:
            last_stop[key] = max(last_stop.get(key, -math.inf), float(tasks.stop[row]))
    again = [row for row in finished_there if tasks.stop[row] < last_stop[tasks.keys[row]]]
    if not again:
        return
    lost = float(sum(tasks.stop[row] - tasks.start[row] for row in again))
    reasons = {worker: str(event.detail.get("reason") or "") for worker, event in gone.items()}
    found.add(
        "worker-lost",
        lost,
        f"went to computing again what {len(reasons)} lost worker{'s' if len(reasons) > 1 else ''} held",
        f"{len(again):,} tasks finished on a worker that then left, and ran again elsewhere.",
        {"recomputed": len(again), "workers": reasons},
        (float(min(tasks.start[row] for row in again)), max(event.time for event in gone.values())),
    )


def _spans_of(found: _Found, actions: set[str], kind: str, title: str, spilled: dict[str, int]) -> None:
    tasks, spans = found.window.tasks, found.window.tasks.spans
    (rows,) = np.nonzero(np.isin(spans.action, [ACTIONS.index(action) for action in actions]))
    if not len(rows):
        return
    lost = float((spans.stop[rows] - spans.start[rows]).sum())
    workers = sorted({tasks.names[int(worker)] for worker in np.unique(tasks.worker[spans.task[rows]])})
    evidence: dict[str, Any] = {"spans": len(rows), "seconds": round(lost, 3), "workers": workers[:20]}
    if kind == "transfer":
        sources = sorted({source for row in rows if (source := spans.source[row])})
        evidence["from"] = sources[:20]
        detail = f"{len(rows):,} transfers (red in the Task Stream) lasting {seconds_text(lost)} in all."
    else:
        on_disk = sum(spilled.get(worker, 0) for worker in workers)
        evidence["spilled_bytes"] = on_disk
        title += f": {bytes_text(on_disk)}" if on_disk else ""
        detail = (
            f"{len(rows):,} reads and writes of spilled data (orange in the Task Stream), "
            f"{seconds_text(lost)} in all."
        )
    where = f" on {len(workers)} worker{'s' if len(workers) > 1 else ''}"
    span = (float(spans.start[rows].min()), float(spans.stop[rows].max()))
    found.add(kind, lost, title + where, detail, evidence, span)


def _non_cpu(found: _Found, metrics: WindowMetrics) -> None:
    off = sum(v for (_, activity), v in metrics.seconds.items() if activity == "thread-noncpu")
    on = sum(v for (_, activity), v in metrics.seconds.items() if activity == "thread-cpu")
    if off <= 0:
        return
    found.add(
        "non-cpu",
        off,
        "was spent by task threads off the CPU (the GIL, I/O, or waiting for a core)",
        f"Dask's Fine Performance Metrics: {seconds_text(off)} off the CPU against {seconds_text(on)} on it.",
        {"thread_noncpu_seconds": round(off, 3), "thread_cpu_seconds": round(on, 3)},
        (found.window.active if len(found.window.tasks) else (found.window.first, found.window.last)),
    )


def _idle(found: _Found, pauses: list[Alert]) -> None:
    """Idle thread-time while work ran, each bucket's counted once: the tail, paused workers,
    per-task overhead, then imbalance or too little parallel work."""
    window = found.window
    busy, capacity = window.busy, window.capacity
    # Time waiting for inputs is the transfer finding's: it is not idle for want of work.
    idle = np.maximum(capacity - busy - window.waiting, 0.0)
    total_busy, total_capacity = busy.sum(axis=0), capacity.sum(axis=0)
    counted = np.zeros_like(idle, dtype=bool)
    # The tail: the end, from when at most a quarter of the threads (or one) still ran tasks.
    since = _tail_start(window)
    if since is not None:
        k = min(int((since - window.active[0]) / window.width), len(total_busy) - 1)
        # After busy work only (a chain is idle all along: that is too little parallel work).
        before = float(total_busy[:k].sum()) / max(float(total_capacity[:k].sum()), 1e-9)
        long_enough = window.active[1] - since >= max(0.05 * (window.active[1] - window.active[0]), 0.2)
        if k > 0 and before >= 2 * TAIL_BUSY and long_enough:
            counted[:, k:] = True
            _straggler(found, float(idle[:, k:].sum()), since)
    _paused(found, pauses, idle, counted)
    overhead = _overhead(found)
    # The rest: while a worker was saturated, the others' idle threads are imbalance; else too few tasks.
    # Imbalance: a worker saturated that was still given tasks later, while others idled (one long
    # task alone on a worker is too little parallel work, not imbalance).
    saturated = (busy >= SATURATED * capacity) & (capacity > 0)
    last_start = window.last_start
    bucket_ends = window.active[0] + (np.arange(busy.shape[1]) + 1) * window.width
    any_saturated = (saturated & (last_start[:, None] > bucket_ends[None, :])).any(axis=0)
    rest = np.where(counted, 0.0, idle)
    imbalance = float(rest[:, any_saturated].sum())
    low = float(rest[:, ~any_saturated].sum())
    # Per-task overhead shows as idle slivers in the same buckets: it is not counted twice.
    if overhead and imbalance + low > 0:
        keep = max(0.0, 1 - overhead / (imbalance + low))
        imbalance, low = imbalance * keep, low * keep
    span = window.active
    threads = window.thread_count
    found.add(
        "imbalance",
        imbalance,
        "was idle on some workers while others were saturated",
        "Idle threads of workers while another had all of its threads busy and was given more tasks.",
        {"workers": len(window.workers), "threads": threads},
        span,
    )
    found.add(
        "low-parallelism",
        low,
        f"was idle: fewer tasks ran than the {threads} threads could",
        "Idle threads while no worker was saturated and work was still running: too few tasks ready.",
        {
            "threads": threads,
            "mean_busy_threads": round(float(total_busy.sum()) / max(span[1] - span[0], 1e-9), 2),
        },
        span,
    )


def _tail_start(window: TaskWindow) -> float | None:
    """When the end's few running tasks were all that ran: going back from the end, the first time
    more tasks ran than a quarter of the threads (or one). None when that never happened."""
    allowed = max(1, int(TAIL_BUSY * window.thread_count))
    times = np.concatenate([window.tasks.stop, window.tasks.start])
    # Backwards, a stop is a task that runs before it (+1), a start one that ended (-1); at one
    # time, a task that starts comes before one that stops (they did not run together).
    steps = np.concatenate([np.ones(len(window.tasks)), -np.ones(len(window.tasks))])
    order = np.lexsort((steps, -times))
    over = np.nonzero(np.cumsum(steps[order]) > allowed)[0]
    return float(times[order[over[0]]]) if len(over) else None


def _straggler(found: _Found, lost: float, since: float) -> None:
    window = found.window
    tasks, durations = window.tasks, window.durations
    end = window.active[1]
    # What held the end: tasks that ran through at least half of the tail.
    half = since + (end - since) / 2
    (through,) = np.nonzero((tasks.start <= half) & (tasks.stop > half))
    running = through[np.argsort(-durations[through], kind="stable")][:5]
    medians = {
        int(group): float(np.median(durations[tasks.group == group])) for group in set(tasks.group[running])
    }
    evidence = {
        "tail_seconds": round(end - since, 3),
        "tasks": [
            {
                "key": tasks.key(row),
                "group": tasks.group_name(row),
                "seconds": round(float(durations[row]), 3),
                "group_median": round(medians[int(tasks.group[row])], 3),
            }
            for row in running
        ],
    }
    found.add(
        "straggler",
        lost,
        f"was idle in the last {seconds_text(end - since)} while {_count(len(running), 'long task')} ran",
        "Idle threads at the end, while at most a quarter of them were busy.",
        evidence,
        (since, end),
    )


def _paused(found: _Found, pauses: list[Alert], idle: np.ndarray, counted: np.ndarray) -> None:
    window = found.window
    row = {worker: i for i, worker in enumerate(window.workers)}
    lost, workers = 0.0, set()
    first, last = window.active[1], window.active[0]
    for alert in pauses:
        worker = str(alert.detail.get("worker") or "")
        if worker not in row:
            continue
        k0 = max(0, int((alert.time - window.active[0]) / window.width))
        k1 = min(idle.shape[1], int((alert.updated - window.active[0]) / window.width) + 1)
        if k1 <= k0:
            continue
        cells = ~counted[row[worker], k0:k1]
        lost += float(idle[row[worker], k0:k1][cells].sum())
        counted[row[worker], k0:k1] = True
        workers.add(worker)
        first, last = min(first, alert.time), max(last, alert.updated)
    found.add(
        "memory-pause",
        lost,
        f"was idle on {len(workers)} worker{'s' if len(workers) > 1 else ''} paused for memory",
        "Idle threads of workers while Dask had paused them (memory above its pause threshold).",
        {"workers": sorted(workers)},
        (first, last),
    )


def _overhead(found: _Found) -> float:
    """Short gaps between back-to-back tasks of a thread, when tasks are small: Dask's per-task cost."""
    window = found.window
    tasks, durations = window.tasks, window.durations
    median = float(np.median(durations))
    if median >= SMALL_TASK:
        return 0.0
    # Each thread's tasks in order of start: a gap is the next one's start less this one's stop.
    order = np.lexsort((tasks.start, tasks.thread, tasks.worker))
    lane = tasks.worker[order] * (1 << 32) + tasks.thread[order]
    same_lane = lane[1:] == lane[:-1]
    between = tasks.start[order][1:] - tasks.stop[order][:-1]
    gaps = float(between[same_lane & (between > 0) & (between < OVERHEAD_GAP)].sum())
    found.add(
        "small-tasks",
        gaps,
        f"went to Dask's overhead between {len(durations):,} tasks of {seconds_text(median)} (median)",
        "The gaps under 100 ms between one task and the next on one thread, while tasks were this short.",
        {"tasks": len(durations), "median_seconds": round(median, 6), "gap_seconds": round(gaps, 3)},
        window.active,
    )
    return gaps


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
