"""The history store's writes: what the recorder adds to a run, each write one transaction.

Every text a client of the scheduler chose is clipped here, on the way in (model.py's limits).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from dashdock.history.model import (
    MAX_EXCEPTION,
    MAX_GROUP,
    MAX_TITLE,
    MAX_WORKER,
    Alert,
    Event,
    Gap,
    GroupProgress,
    MetricSample,
    Run,
    TaskRecord,
    WorkerSample,
    clip,
    clip_detail,
    clip_task,
)
from dashdock.history.store_reads import _RUN_COLUMNS, RATE_TICKS, _find

# An exception's text is cut to this many characters (it can be a whole traceback). Keys, groups,
# worker names and details have limits of their own (model.py: MAX_KEY, MAX_GROUP, ...): every text a
# client of the scheduler chose is clipped here, on the way in, so no page or export of a run holds
# more of it per item than those limits, whatever that client chose.
MAX_TEXT = MAX_EXCEPTION


class StoreWrites:
    """The writing half of ``HistoryStore`` (the recorder's)."""

    max_text: int
    _names: dict[tuple[int, str], int]
    _write: Callable[[], AbstractContextManager[sqlite3.Connection]]

    # -- writing (the recorder) --------------------------------------------------------------
    # Each write is one transaction. Writes to a run that is not there (the user deleted it while it
    # was recorded) are dropped and return False: there is nothing left to add them to.

    def begin_run(self, run: Run) -> None:
        with self._write() as db:
            db.execute(
                f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (run.id, run.source, run.name, run.scheduler, run.start, run.end, run.tasks, run.gaps),
            )

    def add_tasks(self, run_id: str, tasks: Sequence[TaskRecord]) -> bool:
        cut = self.max_text
        tasks = [clip_task(task) for task in tasks]
        with self._write() as db:
            found = _find(db, run_id, "seq, tasks")
            if found is None:
                return False
            if not tasks:
                return True
            seq, counted = found
            rows = [
                (
                    seq,
                    task.start,
                    counted + n,
                    task.stop,
                    task.key[:cut],
                    self._name(db, seq, task.group),
                    self._name(db, seq, task.worker),
                    task.thread,
                    task.status,
                    task.nbytes,
                    None if task.exception is None else clip(task.exception, cut),
                    _encode_spans(task),
                )
                for n, task in enumerate(tasks)
            ]
            db.executemany("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            ticks = Counter(math.floor(task.stop * RATE_TICKS) for task in tasks)
            db.executemany(
                "INSERT INTO finished VALUES (?, ?, ?) "
                "ON CONFLICT (run, tick) DO UPDATE SET count = count + excluded.count",
                [(seq, tick, n) for tick, n in ticks.items()],
            )
            longest = max(task.stop - task.start for task in tasks)
            db.execute(
                "UPDATE runs SET tasks = tasks + ?, longest = max(longest, ?) WHERE seq = ?",
                (len(tasks), longest, seq),
            )
        return True

    def add_gap(self, run_id: str, gap: Gap) -> bool:
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.execute("INSERT INTO gaps VALUES (?, ?, ?, ?)", (seq, gap.start, gap.stop, gap.missed))
            db.execute("UPDATE runs SET gaps = gaps + ? WHERE seq = ?", (gap.missed, seq))
        return True

    def add_worker_samples(self, run_id: str, samples: Sequence[WorkerSample]) -> bool:
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.executemany(
                "INSERT INTO worker_samples VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        seq,
                        s.time,
                        self._name(db, seq, clip(s.worker, MAX_WORKER)),
                        s.managed,
                        s.unmanaged,
                        s.spilled,
                        s.cpu,
                    )
                    for s in samples
                ],
            )
        return True

    def add_metric_samples(self, run_id: str, samples: Sequence[MetricSample]) -> bool:
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.executemany(
                "INSERT INTO metric_samples VALUES (?, ?, ?, ?, ?)",
                [(seq, m.time, clip(m.metric, MAX_GROUP), clip(m.line, MAX_GROUP), m.value) for m in samples],
            )
        return True

    def add_scheduler_samples(
        self, run_id: str, cpu: Sequence[tuple[float, float]], loop: Sequence[tuple[float, float]] = ()
    ) -> bool:
        """The scheduler's CPU (percent of one core) at each time its monitor measured it, and its
        event loop's observed tick interval (seconds) as the recorder read it."""
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.executemany(
                "INSERT INTO scheduler_samples VALUES (?, ?, ?, ?)",
                [(seq, t, value, None) for t, value in cpu] + [(seq, t, None, value) for t, value in loop],
            )
        return True

    def add_group_progress(self, run_id: str, rows: Sequence[GroupProgress]) -> bool:
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.executemany(
                "INSERT INTO group_progress VALUES (?, ?, ?, ?)",
                [
                    (
                        seq,
                        r.time,
                        self._name(db, seq, clip(r.group, MAX_GROUP)),
                        json.dumps(clip_detail(r.states)),
                    )
                    for r in rows
                ],
            )
        return True

    def add_events(self, run_id: str, events: Sequence[Event]) -> bool:
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.executemany(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?)",
                [
                    (
                        seq,
                        e.time,
                        clip(e.kind, MAX_GROUP),
                        None if e.worker is None else clip(e.worker, MAX_WORKER),
                        json.dumps(clip_detail(e.detail), default=str),
                    )
                    for e in events
                ],
            )
        return True

    def add_alerts(self, run_id: str, alerts: Sequence[Alert]) -> bool:
        """New alerts, and alerts updated in place (the same id: its first time stays)."""
        with self._write() as db:
            seq = self._seq(db, run_id)
            if seq is None:
                return False
            db.executemany(
                "INSERT INTO alerts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                "updated = excluded.updated, title = excluded.title, detail = excluded.detail, "
                "count = excluded.count",
                [
                    (
                        a.id,
                        seq,
                        a.source,
                        a.kind,
                        clip(a.subject, MAX_GROUP),  # a task group
                        a.time,
                        a.updated,
                        clip(a.title, MAX_TITLE),
                        json.dumps(clip_detail(a.detail), default=str),
                        a.count,
                    )
                    for a in alerts
                ],
            )
        return True

    def end_run(self, run_id: str, end: float) -> None:
        with self._write() as db:
            db.execute("UPDATE runs SET end = ? WHERE id = ? AND end IS NULL", (end, run_id))

    def _seq(self, db: sqlite3.Connection, run_id: str) -> int | None:
        """The run's key in the other tables; None for a run deleted (or never begun)."""
        row = _find(db, run_id, "seq")
        return None if row is None else int(row[0])

    def _name(self, db: sqlite3.Connection, run: int, text: str) -> int:
        cached = self._names.get((run, text))
        if cached is not None:
            return cached
        row = db.execute(
            "INSERT INTO names (run, text) VALUES (?, ?) ON CONFLICT (run, text) DO UPDATE SET text = text "
            "RETURNING id",
            (run, text),
        ).fetchone()
        # Bounded: a run has a few hundred groups and workers; a rolled-back insert's id is
        # not cached (the cache is only trusted for names seen before this transaction).
        if len(self._names) < 100_000:
            self._names[(run, text)] = int(row[0])
        return int(row[0])


def _encode_spans(task: TaskRecord) -> str | None:
    """Spans as compact JSON; None for the common single compute span covering the whole task."""
    spans = task.spans
    if len(spans) == 1:
        only = spans[0]
        if (
            only.action == "compute"
            and only.start == task.start
            and only.stop == task.stop
            and not only.source
        ):
            return None
    elif not spans:
        return "[]"
    return json.dumps(
        [[s.action, s.start, s.stop, s.source] if s.source else [s.action, s.start, s.stop] for s in spans],
        separators=(",", ":"),
    )
