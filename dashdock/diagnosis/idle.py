"""Idle thread-time while work ran, each worker's bucket given to one cause: a straggler's tail,
a worker paused for memory, a saturated scheduler, per-task overhead, then imbalance or too
little parallel work, in that order.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from dashdock.diagnosis.found import Found, count
from dashdock.diagnosis.window import TaskWindow
from dashdock.history.report_metrics import seconds_text

# A thread idle between two of its tasks for less than this was waiting on Dask, not for work.
OVERHEAD_GAP = 0.1
# Tasks whose median runs under this are "small" (Dask's guidance: well over 100 ms each).
SMALL_TASK = 0.1
# The end is a straggler's tail while at most this share of the threads (or one) are busy.
TAIL_BUSY = 0.25
# A worker is saturated when this share of its threads are busy.
SATURATED = 0.9
# The scheduler is saturated at this CPU (percent of one core: its event loop is one thread). Not
# 100: its monitor's figure is an average over half a second, and a scheduler sharing its cores
# with workers (a LocalCluster on a laptop) rarely gets a whole one even when it is the bottleneck.
SCHEDULER_BUSY = 80.0
# The scheduler's event loop is saturated when it ticks this rarely: Dask asks for a tick every
# 20 ms, so it ran at most a fifth of them (its own work, or the GIL held by code in its process).
LOOP_LAGGING = 0.1
# The scheduler's event loop was held when its system monitor, which that loop runs on a fixed
# cadence (Dask's twice a second), measured this much later than its cadence.
LOOP_HELD = 0.5


def idle_causes(found: Found) -> None:
    """Idle thread-time while work ran, each bucket's counted once: the tail, paused workers,
    per-task overhead, then imbalance or too little parallel work."""
    window = found.window
    busy, capacity = window.busy, window.capacity
    # Time waiting for inputs is the transfer finding's: it is not idle for want of work.
    idle = np.maximum(capacity - busy - window.waiting, 0.0)
    total_busy, total_capacity = busy.sum(axis=0), capacity.sum(axis=0)
    counted = np.zeros_like(idle, dtype=bool)
    # Each period of work's end: from when at most a quarter of the threads (or one) still ran tasks.
    tails = []
    starts = window.tasks.start  # in order of start; a period's tasks start within it
    for n, period in enumerate(window.periods):
        first = 0 if n == 0 else int(np.searchsorted(starts, period[0], "left"))
        rows = slice(first, int(np.searchsorted(starts, period[1], "right")))
        since = _tail_start(window, rows)
        if since is None:
            continue
        k0 = int((period[0] - window.active[0]) / window.width)
        k = min(int((since - window.active[0]) / window.width), len(total_busy) - 1)
        k1 = min(int((period[1] - window.active[0]) / window.width) + 1, len(total_busy))
        # After busy work only (a chain is idle all along: that is too little parallel work).
        before = float(total_busy[k0:k].sum()) / max(float(total_capacity[k0:k].sum()), 1e-9)
        long_enough = period[1] - since >= max(0.05 * (period[1] - period[0]), 0.2)
        if k > k0 and before >= 2 * TAIL_BUSY and long_enough:
            lost = float(idle[:, k:k1][~counted[:, k:k1]].sum())
            tails.append(_Tail(since, period[1], lost, period[0], rows))
            counted[:, k:k1] = True
    if tails:
        _straggler(found, tails)
    _paused(found, idle, counted)
    scheduler_saturated = _scheduler_bound(found, idle, counted)
    # Between periods of work nothing was submitted: idle, but for no cause (a pause or a saturated
    # scheduler there was counted above: it is why nothing ran).
    idle = np.where(counted, idle, np.maximum(idle - window.capacity * window.no_work[None, :], 0.0))
    overhead = _overhead(found, scheduler_saturated)
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


def _tail_start(window: TaskWindow, rows: slice) -> float | None:
    """When the end of a period of work had only its few running tasks: going back from the
    period's end, the first time more tasks ran than a quarter of the threads (or one). None when
    that never happened, or on a single thread: a straggler idles the others, and there are none
    (two tasks seem to run at once there only where Dask stamped one's stop a moment after the
    next one's start)."""
    if window.thread_count <= 1:
        return None
    allowed = max(1, int(TAIL_BUSY * window.thread_count))
    tasks = window.tasks
    times = np.concatenate([tasks.stop[rows], tasks.start[rows]])
    # Backwards, a stop is a task that runs before it (+1), a start one that ended (-1); at one
    # time, a task that starts comes before one that stops (they did not run together).
    count = len(times) // 2
    steps = np.concatenate([np.ones(count), -np.ones(count)])
    order = np.lexsort((steps, -times))
    over = np.nonzero(np.cumsum(steps[order]) > allowed)[0]
    return float(times[order[over[0]]]) if len(over) else None


class _Tail(NamedTuple):
    """The end of a period of work held by its last tasks."""

    since: float
    end: float
    lost: float  # idle thread-seconds
    begin: float  # its period's start
    rows: slice  # its period's tasks


def _straggler(found: Found, tails: list[_Tail]) -> None:
    window = found.window
    tasks, durations = window.tasks, window.durations
    # What held each end: tasks that ran through at least half of its tail; the longest first.
    held: list[int] = []
    for tail in tails:
        half = tail.since + (tail.end - tail.since) / 2
        (through,) = np.nonzero((tasks.start[tail.rows] <= half) & (tasks.stop[tail.rows] > half))
        held.extend(int(row) + tail.rows.start for row in through)
    running = sorted(set(held), key=lambda row: -durations[row])[:5]
    medians = {
        int(group): float(np.median(durations[tasks.group == group])) for group in set(tasks.group[running])
    }
    tail_seconds = sum(tail.end - tail.since for tail in tails)
    listed: list[dict[str, Any]] = [
        {
            "key": tasks.key(row),
            "group": tasks.group_name(row),
            "seconds": round(float(durations[row]), 3),
            "group_median": round(medians[int(tasks.group[row])], 3),
        }
        for row in running
    ]
    evidence = {
        "tail_seconds": round(tail_seconds, 3),
        "ends": len(tails),  # periods of work (computations) whose end was held
        "long_tasks": len(set(held)),
        "tasks": listed,
    }
    longest = listed[0] if listed else None
    where = (
        f"in the last {seconds_text(tail_seconds)}"
        if len(tails) == 1
        else f"at the end of {len(tails)} computations ({seconds_text(tail_seconds)} in all)"
    )
    found.add(
        "straggler",
        sum(tail.lost for tail in tails),
        f"was idle {where} while {count(len(set(held)), 'long task')} ran",
        "Idle threads at the end, while at most a quarter of them were busy."
        + (
            f" The longest: {longest['key']}, {seconds_text(longest['seconds'])} against its group's "
            f"median of {seconds_text(longest['group_median'])}."
            if longest
            else ""
        ),
        evidence,
        # The tail and as long before it (within its period): the busy work it held up is what
        # makes it a straggler's tail, so the stretch a click brushes is diagnosed the same way.
        (max(tails[0].begin, 2 * tails[0].since - tails[0].end), tails[-1].end),
    )


def _paused(found: Found, idle: np.ndarray, counted: np.ndarray) -> None:
    window = found.window
    row = {worker: i for i, worker in enumerate(window.workers)}
    lost, workers = 0.0, set()
    first, last = window.active[1], window.active[0]
    for worker, paused, resumed in window.pauses:
        if worker not in row:
            continue
        k0 = max(0, int((paused - window.active[0]) / window.width))
        k1 = min(idle.shape[1], int((resumed - window.active[0]) / window.width) + 1)
        if k1 <= k0:
            continue
        cells = ~counted[row[worker], k0:k1]
        lost += float(idle[row[worker], k0:k1][cells].sum())
        counted[row[worker], k0:k1] = True
        workers.add(worker)
        first, last = min(first, paused), max(last, resumed)
    found.add(
        "memory-pause",
        lost,
        f"was idle on {len(workers)} worker{'s' if len(workers) > 1 else ''} paused for memory",
        "Idle threads of workers while Dask had paused them (memory above its pause threshold).",
        {"workers": sorted(workers)},
        (first, last),
    )


def _scheduler_bound(found: Found, idle: np.ndarray, counted: np.ndarray) -> np.ndarray:
    """Idle threads while the scheduler was saturated (its process's CPU near a core, or its event
    loop ticking far less often than it should): it could not hand out work faster. Returns the
    buckets it covered."""
    window = found.window
    saturated = np.zeros(idle.shape[1], dtype=bool)
    busiest, slowest = 0.0, 0.0
    for since, until, cpu in _stretches(window.scheduler_cpu, 0.5):
        if cpu >= SCHEDULER_BUSY and _small_tasks_ran(window, since, until):
            busiest = max(busiest, cpu)
            _mark(window, saturated, since, until)
    # The loop's figure is read once a recorder tick: it covers the time since the one before.
    for since, until, interval in _stretches(window.scheduler_loop, 1.0):
        if interval >= LOOP_LAGGING and _small_tasks_ran(window, since, until):
            slowest = max(slowest, interval)
            _mark(window, saturated, since, until)
    # That figure is redone once a second and is high for about a second after a hold: a read
    # landing later misses it. The monitor's every row is kept, so a beat it skipped is not missed.
    for since, until, held in _monitor_gaps(window.scheduler_cpu):
        if _small_tasks_ran(window, since, until):
            slowest = max(slowest, held)
            _mark(window, saturated, since, until)
    if not saturated.any():
        return saturated
    cells = saturated[None, :] & ~counted
    lost = float(idle[cells].sum())
    counted |= cells
    (covered,) = np.nonzero(saturated)
    seconds = len(covered) * window.width
    found.add(
        "scheduler-bound",
        lost,
        f"was idle while the scheduler was saturated for {seconds_text(seconds)}",
        f"Idle threads while the scheduler's process ran at {SCHEDULER_BUSY:.0f} % of a core or more "
        f"(at most {busiest:.0f} %) or its event loop ticked every {LOOP_LAGGING * 1000:.0f} ms or "
        f"slower (at worst {slowest * 1000:.0f} ms; Dask's is 20): it could not hand out tasks faster.",
        {
            "saturated_seconds": round(seconds, 3),
            "scheduler_cpu_max": round(busiest, 1),
            "loop_interval_max": round(slowest, 3),
            # The thresholds, so that the Lab says the same sentence in its own words.
            "cpu_threshold": SCHEDULER_BUSY,
            "loop_threshold": LOOP_LAGGING,
        },
        (window.bucket_time(int(covered[0])), window.bucket_time(int(covered[-1]) + 1)),
    )
    return saturated


def _stretches(samples: list[tuple[float, float]], first: float) -> list[tuple[float, float, float]]:
    """(since, until, value): each figure covers the time since the one before (``first`` seconds
    for the first)."""
    if not samples:
        return []
    times = [time_ for time_, _ in samples]
    return [
        (since, time_, value)
        for since, (time_, value) in zip([times[0] - first, *times], samples, strict=False)
    ]


def _monitor_gaps(samples: list[tuple[float, float]]) -> list[tuple[float, float, float]]:
    """(since, until, seconds late): where the scheduler's system monitor skipped beats. Its event
    loop runs the monitor on a fixed cadence (the rows' usual spacing), so a row that came this
    much later says the loop (or the whole process) was held that long, whatever its CPU figure."""
    times = np.array([time_ for time_, _ in samples], dtype=float)
    if len(times) < 3:
        return []
    steps = np.diff(times)
    late = steps - float(np.median(steps))
    return [(float(times[i]), float(times[i + 1]), float(late[i])) for i in np.nonzero(late >= LOOP_HELD)[0]]


def _small_tasks_ran(window: TaskWindow, since: float, until: float) -> bool:
    """Whether the tasks running in [since, until] were small, or none ran. The monitor measures the
    scheduler's whole process, and workers in it (LocalCluster's processes=False) add their tasks'
    CPU and hold its GIL: a stretch whose tasks were long was the workers', not the scheduler's."""
    starts, durations = window.tasks.start, window.durations  # tasks are in order of start
    i, j = np.searchsorted(starts, [since - float(durations.max()), until])
    running = durations[i:j][window.tasks.stop[i:j] > since]
    return not len(running) or float(running.mean()) < SMALL_TASK


def _mark(window: TaskWindow, saturated: np.ndarray, since: float, until: float) -> None:
    """Marks the buckets [since, until] overlaps (none for a stretch before or after the work: a
    negative end would count from the last bucket)."""
    k0 = max(0, math.floor((since - window.active[0]) / window.width))
    k1 = min(len(saturated), math.floor((until - window.active[0]) / window.width) + 1)
    if k1 > k0:
        saturated[k0:k1] = True


def _overhead(found: Found, scheduler_saturated: np.ndarray) -> float:
    """Short gaps between back-to-back tasks of a thread, when tasks are small: Dask's per-task
    cost (but for gaps while the scheduler was saturated: those are its finding's)."""
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
    ended = tasks.stop[order][:-1]
    bucket = np.clip(
        ((ended - window.active[0]) / window.width).astype(np.int64), 0, len(scheduler_saturated) - 1
    )
    short = same_lane & (between > 0) & (between < OVERHEAD_GAP) & ~scheduler_saturated[bucket]
    gaps = float(between[short].sum())
    found.add(
        "small-tasks",
        gaps,
        f"went to Dask's overhead between tasks ({len(durations):,} tasks, median {seconds_text(median)})",
        "The gaps under 100 ms between one task and the next on one thread, while tasks were this short.",
        {"tasks": len(durations), "median_seconds": round(median, 6), "gap_seconds": round(gaps, 3)},
        window.active,
    )
    return gaps
