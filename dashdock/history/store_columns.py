"""A window's tasks as columns, for readers that count over every task of a window (diagnosis).

``HistoryStore.tasks`` builds a TaskRecord, with its spans decoded one by one, per task: right for
pages that show tasks, about ten times the cost of this read for one that only sums over them
(bench/diagnosis_speed.py: a 100,000-task run). Here rows come back in one fetch, times become
numpy arrays, and every task's spans are decoded in one JSON parse.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

import numpy as np

from dashdock.history.model import MAX_KEY, MAX_WORKER, clip

# The actions spans are counted by (Dask's task stream); any other action reads as OTHER.
ACTIONS = ("compute", "transfer", "disk-read", "disk-write", "deserialize")
OTHER = len(ACTIONS)
_CODE = {action: code for code, action in enumerate(ACTIONS)}


@dataclass(frozen=True)
class SpanColumns:
    """Every span of a window's tasks, a compute span for a task stored without spans included."""

    task: np.ndarray  # the row of its task in TaskColumns
    action: np.ndarray  # an index into ACTIONS, or OTHER
    start: np.ndarray
    stop: np.ndarray
    source: list[str | None]  # a transfer's worker the data came from


@dataclass(frozen=True)
class TaskColumns:
    """A window's tasks by start (row i is one task in every column)."""

    keys: list[str]
    names: dict[int, str]  # the ids in ``group`` and ``worker`` -> the group's or worker's name
    group: np.ndarray
    worker: np.ndarray
    thread: np.ndarray  # -1 where the worker did not say
    start: np.ndarray
    stop: np.ndarray
    erred: np.ndarray  # bool
    exceptions: dict[int, str]  # row -> an erred task's exception text
    spans: SpanColumns

    def __len__(self) -> int:
        return len(self.keys)

    def worker_name(self, row: int) -> str:
        return self.names[int(self.worker[row])]

    def group_name(self, row: int) -> str:
        return self.names[int(self.group[row])]

    def key(self, row: int) -> str:
        return clip(self.keys[row], MAX_KEY)  # rows kept by an older dashdock may be longer


def window_where(seq: int, longest: float, start: float | None, end: float | None) -> tuple[str, list[float]]:
    """The WHERE clause (and its arguments) of a run's tasks overlapping [start, end]: a task
    overlapping the window started at most ``longest`` (the run's longest task) before it, so the
    scan stays a range of the clustered key (the margin covers rounding in the subtraction)."""
    where = "run = ?"
    args: list[float] = [seq]  # the run's integer id: an int, as the column holds it
    if start is not None:
        where += " AND start >= ? AND stop >= ?"
        args += [start - longest - 1e-3, start]
    if end is not None:
        where += " AND start <= ?"
        args.append(end)
    return where, args


def read_task_columns(
    db: sqlite3.Connection,
    seq: int,
    longest: float,
    start: float | None,
    end: float | None,
    limit: int,
    max_text: int,
) -> TaskColumns:
    """The tasks of run ``seq`` overlapping [start, end], at most ``limit`` of them, as
    ``StoreReads.tasks`` finds them (``longest``: the run's longest task, which bounds the scan)."""
    names = {
        name: clip(text, MAX_WORKER)
        for name, text in db.execute("SELECT id, text FROM names WHERE run = ?", (seq,)).fetchall()
    }
    where, args = window_where(seq, longest, start, end)
    rows = db.execute(
        "SELECT key, grp, worker, coalesce(thread, -1), start, stop, status != 'OK', spans, "
        f"CASE WHEN status != 'OK' THEN substr(exception, 1, ?) END FROM tasks WHERE {where} "
        "ORDER BY start, seq LIMIT ?",
        [max_text, *args, limit],
    ).fetchall()
    if not rows:
        return no_tasks(names)
    keys, group, worker, thread, t0, t1, erred, spans, exceptions = zip(*rows, strict=True)
    return TaskColumns(
        keys=list(keys),
        names=names,
        group=np.array(group, dtype=np.int64),
        worker=np.array(worker, dtype=np.int64),
        thread=np.array(thread, dtype=np.int64),
        start=np.array(t0, dtype=float),
        stop=np.array(t1, dtype=float),
        erred=np.array(erred, dtype=bool),
        exceptions={row: clip(text, max_text) for row, text in enumerate(exceptions) if text is not None},
        spans=_spans(spans, np.array(t0, dtype=float), np.array(t1, dtype=float)),
    )


def _spans(texts: tuple[str | None, ...], start: np.ndarray, stop: np.ndarray) -> SpanColumns:
    written = [row for row, text in enumerate(texts) if text is not None]
    # One parse for all: a window's thousands of short texts cost their count in calls otherwise.
    decoded = json.loads("[" + ",".join([text for text in texts if text is not None]) + "]")
    items = [item for spans in decoded for item in spans]
    plain = np.ones(len(texts), dtype=bool)
    plain[written] = False
    (implicit,) = np.nonzero(plain)
    return SpanColumns(
        task=np.concatenate(
            [implicit, np.repeat(np.array(written, dtype=np.int64), [len(x) for x in decoded])]
        ),
        action=np.concatenate(
            [
                np.zeros(len(implicit), dtype=np.int64),
                np.array([_CODE.get(i[0], OTHER) for i in items], dtype=np.int64),
            ]
        ),
        start=np.concatenate([start[implicit], np.array([i[1] for i in items], dtype=float)]),
        stop=np.concatenate([stop[implicit], np.array([i[2] for i in items], dtype=float)]),
        source=[*([None] * len(implicit)), *(i[3] if len(i) > 3 else None for i in items)],
    )


def no_tasks(names: dict[int, str]) -> TaskColumns:
    """A window without a task."""
    ints, floats = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=float)
    return TaskColumns(
        [],
        names,
        ints,
        ints,
        ints,
        floats,
        floats,
        np.zeros(0, dtype=bool),
        {},
        SpanColumns(ints, ints, floats, floats, []),
    )
