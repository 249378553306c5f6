"""A run (or a window of it) as a Chrome trace, streamed: loads in Perfetto and chrome://tracing.

The Trace Event Format's JSON object form: one process per worker, one thread per worker thread
(named by metadata events, sent when first met, which the format allows anywhere), a complete event
("X") per span of each task, and a global instant event ("i") per gap in the recording. Times are
microseconds from the run's start. The output is written in chunks of about ``chunk`` bytes, so a
run of any size is exported in bounded memory.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from dashdock.errors import NotFound
from dashdock.history.store import HistoryStore

CHUNK = 64 * 1024
# Perfetto drops events without a duration: a span Dask reports as instantaneous is drawn this long.
MIN_DURATION_US = 0.001
# Gaps are drawn as instant events in a process of their own, before the workers' (pid 0).
_GAPS_PID = 0


def chrome_trace(
    store: HistoryStore, run_id: str, start: float | None = None, end: float | None = None, chunk: int = CHUNK
) -> Iterator[bytes]:
    """The trace of the tasks overlapping [start, end] (the whole run when left out), in chunks."""
    run = store.run(run_id)
    if run is None:
        raise NotFound(f"No recorded run {run_id}.")
    origin = run.start
    encode = json.JSONEncoder(separators=(",", ":")).encode
    processes: dict[str, int] = {}  # worker -> pid
    threads: dict[tuple[str, int | None], int] = {}  # (worker, thread id) -> tid
    parts: list[str] = ['{"displayTimeUnit":"ms","traceEvents":[']
    size = len(parts[0])
    first = True

    def add(event: dict[str, object]) -> None:
        nonlocal first, size
        text = encode(event) if first else "," + encode(event)
        first = False
        parts.append(text)
        size += len(text)

    def flush() -> bytes:
        nonlocal size
        data = "".join(parts).encode()
        parts.clear()
        size = 0
        return data

    add(_metadata("process_name", _GAPS_PID, 0, "dashdock: recording gaps"))
    for gap in store.gaps(run_id, start, end):
        add(
            {
                "name": f"missed {gap.missed} tasks",
                "ph": "i",
                "s": "g",
                "ts": _us(gap.start - origin),
                "pid": _GAPS_PID,
                "tid": 0,
                "args": {"missed": gap.missed, "until_us": _us(gap.stop - origin)},
            }
        )
    for task in store.tasks(run_id, start, end):
        pid = processes.get(task.worker)
        if pid is None:
            pid = processes[task.worker] = len(processes) + 1
            add(_metadata("process_name", pid, 0, task.worker))
        tid = threads.get((task.worker, task.thread))
        if tid is None:
            tid = threads[(task.worker, task.thread)] = len(threads) + 1
            name = "thread ?" if task.thread is None else f"thread {task.thread}"
            add(_metadata("thread_name", pid, tid, name))
        for span in task.spans:
            args: dict[str, object] = {"key": task.key, "group": task.group, "status": task.status}
            if span.source:
                args["from"] = span.source
            add(
                {
                    "name": task.key if span.action == "compute" else span.action,
                    "cat": span.action,
                    "ph": "X",
                    "ts": _us(span.start - origin),
                    "dur": max(_us(span.stop - span.start), MIN_DURATION_US),
                    "pid": pid,
                    "tid": tid,
                    "args": args,
                }
            )
        if size >= chunk:
            yield flush()
    parts.append("]}")
    yield flush()


def _metadata(kind: str, pid: int, tid: int, name: str) -> dict[str, object]:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


def _us(seconds: float) -> float:
    # Rounded to nanoseconds: keeps the file short without changing what a viewer shows.
    return round(seconds * 1e6, 3)
