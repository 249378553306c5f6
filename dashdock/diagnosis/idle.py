"""Idle thread-time while work ran, each worker's bucket given to one cause: a straggler's tail,
a worker paused for memory, a saturated scheduler, per-task overhead, then imbalance or too
little parallel work, in that order.
"""

from __future__ import annotations

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
# The scheduler is saturated at this CPU (percent of one core: its event loop is one thread).
SCHEDULER_BUSY = 90.0


def idle_causes(found: Found) -> None:
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
    _paused(found, idle, counted)
    overhead = _overhead(found, _scheduler_bound(found, idle, counted))
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


def _straggler(found: Found, lost: float, since: float) -> None:
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
        f"was idle in the last {seconds_text(end - since)} while {count(len(running), 'long task')} ran",
        "Idle threads at the end, while at most a quarter of them were busy.",
        evidence,
        (since, end),
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
    """Idle threads while the scheduler's CPU was saturated: its event loop could not hand out
    work faster. Returns the buckets it covered."""
    window = found.window
    buckets = idle.shape[1]
    saturated = np.zeros(buckets, dtype=bool)
    busiest = 0.0
    previous: float | None = None
    # The monitor measures the scheduler's whole process: workers in it (LocalCluster's
    # processes=False) add their tasks' CPU. A stretch whose tasks were long was the workers' CPU;
    # a saturated scheduler shows as small tasks, or none running at all.
    starts, durations = window.tasks.start, window.durations  # tasks are in order of start
    longest = float(durations.max())
    for time_, cpu in window.scheduler_cpu:
        # Each figure is the scheduler's CPU since its monitor's previous one.
        since = previous if previous is not None else time_ - 0.5
        previous = time_
        if cpu < SCHEDULER_BUSY:
            continue
        i, j = np.searchsorted(starts, [since - longest, time_])
        running = durations[i:j][window.tasks.stop[i:j] > since]
        if len(running) and float(running.mean()) >= SMALL_TASK:
            continue
        busiest = max(busiest, cpu)
        k0 = max(0, int((since - window.active[0]) / window.width))
        k1 = min(buckets, int((time_ - window.active[0]) / window.width) + 1)
        saturated[k0:k1] = True
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
        f"was idle while the scheduler's CPU was saturated for {seconds_text(seconds)}",
        f"Idle threads while the scheduler's own process ran at {SCHEDULER_BUSY:.0f} % of a core or more "
        f"(at most {busiest:.0f} %): it could not hand out tasks faster.",
        {"saturated_seconds": round(seconds, 3), "scheduler_cpu_max": round(busiest, 1)},
        (window.bucket_time(int(covered[0])), window.bucket_time(int(covered[-1]) + 1)),
    )
    return saturated


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
        f"went to Dask's overhead between {len(durations):,} tasks of {seconds_text(median)} (median)",
        "The gaps under 100 ms between one task and the next on one thread, while tasks were this short.",
        {"tasks": len(durations), "median_seconds": round(median, 6), "gap_seconds": round(gaps, 3)},
        window.active,
    )
    return gaps
