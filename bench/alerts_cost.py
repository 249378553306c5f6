"""What alerts add to recording: .venv/bin/python bench/alerts_cost.py [tasks] [repeats]

Alerts ride on the recorder's tick (no connection of their own): each tick hands an ``AlertWatch``
the tasks it read, the workers from ``identity`` and whether the scheduler is busy. This measures
that work in the recorder process for a run of ``tasks`` (default 100,000) finished tasks, 1 % of
them erred across 5 groups, in ticks of 5,000 (what a 1 s tick reads at Dask's pace on 2 cores),
with 8 workers in every identity. The records are made once with the recorder's own parser
(``to_task_record`` over task-stream-shaped dicts), then fed ``repeats`` times (default 5).
Prints the median CPU seconds per run and per 1M tasks; the other cost of alerts is one
``get_task_prefix_states`` call per tick instead of per two (see bench/history_recorder.py for a
whole recorded run against one without). Figures, no assertions; a few seconds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from _common import heading, median, table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dashdock.alerts.detection import AlertLimits, AlertWatch
from dashdock.history.model import TaskRecord
from dashdock.watcher.scheduler import to_task_record

TICK = 5_000
WORKERS = [f"tcp://127.0.0.1:{40000 + i}" for i in range(8)]


def records(tasks: int) -> list[TaskRecord]:
    """Finished tasks as the recorder reads them: 1 % erred, in 5 groups."""
    made = []
    for n in range(tasks):
        start = 1_000.0 + n * 0.001
        erred = n % 100 == 0
        raw = {
            "key": (f"group{n % 5}-abc", n),
            "worker": WORKERS[n % len(WORKERS)],
            "thread": 1000 + n % 2,
            "status": "error" if erred else "OK",
            "startstops": ({"action": "compute", "start": start, "stop": start + 0.0005},),
            "exception_text": "ValueError('boom')" if erred else None,
        }
        task = to_task_record(raw)
        assert task is not None
        made.append(task)
    return made


def identity(paused: bool) -> dict[str, object]:
    return {
        worker: {
            "status": "paused" if paused and i == 0 else "running",
            "memory_limit": 4 * 2**30,
            "metrics": {"memory": 2**30, "managed_bytes": 2**29, "spilled_bytes": {"memory": 0, "disk": 0}},
        }
        for i, worker in enumerate(WORKERS)
    }


def one_run(tasks: list[TaskRecord]) -> tuple[float, int]:
    """CPU seconds to watch the whole run; how many alerts it made."""
    watch = AlertWatch("bench0000000", AlertLimits(computation_seconds=1.0))
    made = 0
    started = time.process_time()
    for tick, first in enumerate(range(0, len(tasks), TICK)):
        now = tasks[min(first + TICK, len(tasks)) - 1].stop
        batch = tasks[first : first + TICK]
        watch.answered(now)
        watch.tasks(batch, now)
        watch.workers(identity(paused=tick % 10 == 5), now)
        watch.busy(first + TICK < len(tasks), now, batch)
        made += len(watch.take())
    return time.process_time() - started, made


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    heading(f"alerts: AlertWatch over {count:,} finished tasks, ticks of {TICK:,}, {len(WORKERS)} workers")
    tasks = records(count)
    runs = [one_run(tasks) for _ in range(repeats)]
    cpu = median([seconds for seconds, _ in runs])
    table(
        [
            ["", "CPU s (median)", "per 1M tasks", "alert writes"],
            ["AlertWatch", f"{cpu:.3f}", f"{cpu / count * 1e6:.2f} s", f"{runs[0][1]:,}"],
        ]
    )
    print("  in the recorder process, not the scheduler's; the scheduler answers one more small call per 2 s")


if __name__ == "__main__":
    main()
