"""What a window's time went to: each cause dashdock can name, with what it cost, costliest first.

What is measured directly is here (erred tasks, work recomputed after a worker left, transfers,
spilling, time off the CPU); idle thread-time, which has one cause per bucket, is idle.py's.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from dashdock.diagnosis.found import Finding, Found, count
from dashdock.diagnosis.idle import idle_causes
from dashdock.diagnosis.kinds import ONE_THREAD_NON_CPU
from dashdock.diagnosis.window import TaskWindow
from dashdock.history.report_metrics import WindowMetrics, bytes_text, seconds_text
from dashdock.history.store_columns import ACTIONS


def diagnose(window: TaskWindow, metrics: WindowMetrics | None, spilled: dict[str, int]) -> list[Finding]:
    """The causes found in ``window``, costliest first; ``spilled``: each worker's most bytes on disk."""
    found = Found(window)
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
        idle_causes(found)
    if metrics is not None:
        _non_cpu(found, metrics)
    return sorted(found.findings, key=lambda finding: -finding.lost_seconds)


def _errors(found: Found) -> None:
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
        f"went to {count(len(erred), 'task')} that erred",
        f"The time erred tasks ran ({retried:,} of them succeeded on a retry): it bought nothing.",
        {"erred": len(erred), "retried": retried, "groups": dict(groups), "exception": first},
        (float(tasks.start[erred].min()), float(tasks.stop[erred].max())),
    )


def _worker_lost(found: Found) -> None:
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


def _spans_of(found: Found, actions: set[str], kind: str, title: str, spilled: dict[str, int]) -> None:
    tasks, spans = found.window.tasks, found.window.tasks.spans
    (rows,) = np.nonzero(np.isin(spans.action, [ACTIONS.index(action) for action in actions]))
    if not len(rows):
        return
    lost = float((spans.stop[rows] - spans.start[rows]).sum())
    workers = sorted({tasks.names[int(worker)] for worker in np.unique(tasks.worker[spans.task[rows]])})
    evidence: dict[str, Any] = {
        "spans": len(rows),
        "seconds": round(lost, 3),
        "workers": workers[:20],
        "worker_count": len(workers),
    }
    if kind == "transfer":
        sources = sorted({source for row in rows if (source := spans.source[row])})
        evidence["from"] = sources[:20]
        detail = (
            f"{count(len(rows), 'transfer')} to tasks on {count(len(workers), 'worker')} (red in the Task "
            f"Stream) lasting {seconds_text(lost)} in all."
        )
    else:
        on_disk = sum(spilled.get(worker, 0) for worker in workers)
        evidence["spilled_bytes"] = on_disk
        title += f": {bytes_text(on_disk)}" if on_disk else ""
        detail = (
            f"{len(rows):,} reads and writes of spilled data (orange in the Task Stream), "
            f"{seconds_text(lost)} in all."
        )
    # A transfer's title says "between workers" already; its detail counts them.
    where = "" if kind == "transfer" else f" on {count(len(workers), 'worker')}"
    span = (float(spans.start[rows].min()), float(spans.stop[rows].max()))
    found.add(kind, lost, title + where, detail, evidence, span)


def _non_cpu(found: Found, metrics: WindowMetrics) -> None:
    off = sum(v for (_, activity), v in metrics.seconds.items() if activity == "thread-noncpu")
    on = sum(v for (_, activity), v in metrics.seconds.items() if activity == "thread-cpu")
    if off <= 0:
        return
    per_worker = max(found.window.threads.values(), default=0)
    found.add(
        "non-cpu",
        off,
        "was spent by task threads off the CPU (the GIL, I/O, or waiting for a core)",
        f"Dask's Fine Performance Metrics: {seconds_text(off)} off the CPU against {seconds_text(on)} on it.",
        {
            "thread_noncpu_seconds": round(off, 3),
            "thread_cpu_seconds": round(on, 3),
            "threads_per_worker": per_worker or None,  # the most of any worker
        },
        (found.window.active if len(found.window.tasks) else (found.window.first, found.window.last)),
        ONE_THREAD_NON_CPU if per_worker == 1 else None,
    )
