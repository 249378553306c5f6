"""The history store's reads: runs, a window's tasks, samples, events and alerts, as the pages ask.

What ``HistoryStore`` answers (store.py opens the file and holds the connections); every method
blocks on file I/O: the server calls them in worker threads.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager

from dashdock.history.model import (
    MAX_KEY,
    MAX_WORKER,
    Alert,
    Event,
    Gap,
    GroupProgress,
    MetricSample,
    Run,
    Span,
    TaskRecord,
    WorkerSample,
    clip_head,
)
from dashdock.history.store_columns import TaskColumns, read_task_columns, window_where

# Rows written before those limits (an older dashdock kept keys of 16 KiB and groups of any length)
# are clipped as they are read too; read with this much room, text clipped on the way in is untouched.
_READ_ROOM = 32
_NAME = f"substr(names.text, 1, {MAX_WORKER + _READ_ROOM})"  # a group's or worker's name, as read
# The overview's resolution: tasks finished are counted per 1/RATE_TICKS seconds.
RATE_TICKS = 10
# Idle connections kept for reuse across calls and threads.
POOL_SIZE = 4

_RUN_COLUMNS = "id, source, name, scheduler, start, end, tasks, gaps"
_ALERT_COLUMNS = ", ".join(
    f"alerts.{c}" for c in ("id", "source", "kind", "subject", "time", "updated", "title", "detail", "count")
)


class StoreReads:
    """The reading half of ``HistoryStore``."""

    max_text: int
    _db: Callable[[], AbstractContextManager[sqlite3.Connection]]

    def last_recorded(self, scheduler: str, but: str) -> tuple[float, frozenset[str]] | None:
        """When the newest task an earlier run of ``scheduler`` kept finished, and the keys that
        finished then: a new run of a scheduler that was recorded before goes on from there."""
        with self._db() as db:
            row = db.execute(
                "SELECT seq FROM runs WHERE scheduler = ? AND id != ? AND NOT deleting"
                " ORDER BY seq DESC LIMIT 1",
                (scheduler, but),
            ).fetchone()
            if row is None:
                return None
            (stop,) = db.execute("SELECT MAX(stop) FROM tasks WHERE run = ?", (row[0],)).fetchone()
            if stop is None:
                return None
            keys = db.execute("SELECT key FROM tasks WHERE run = ? AND stop = ?", (row[0], stop)).fetchall()
        return stop, frozenset(key for (key,) in keys)

    # -- reading (the server, in worker threads; kernels) ------------------------------------

    def runs(self) -> list[Run]:
        with self._db() as db:
            rows = db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE NOT deleting ORDER BY start").fetchall()
        return [_run(row) for row in rows]

    def run(self, run_id: str) -> Run | None:
        with self._db() as db:
            row = db.execute(
                f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ? AND NOT deleting", (run_id,)
            ).fetchone()
        return None if row is None else _run(row)

    def tasks(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> Iterator[TaskRecord]:
        """Tasks overlapping [start, end] (both ends included: stop >= start and start <= end), by start."""
        with self._db() as db:
            # One snapshot for the run's names, its longest task and the rows (the recorder keeps
            # adding all three).
            db.execute("BEGIN")
            try:
                yield from self._tasks_in(db, run_id, start, end, limit)
            finally:
                db.execute("ROLLBACK")  # only read

    def _tasks_in(
        self, db: sqlite3.Connection, run_id: str, start: float | None, end: float | None, limit: int | None
    ) -> Iterator[TaskRecord]:
        found = _find(db, run_id, "seq, longest")
        if found is None:
            return
        seq, longest = found
        names = {
            name: _clipped(head, length, MAX_WORKER)  # groups' and workers' names
            for name, head, length in db.execute(
                "SELECT id, substr(text, 1, ?), length(text) FROM names WHERE run = ?",
                (MAX_WORKER + _READ_ROOM, seq),
            ).fetchall()
        }
        where, args = window_where(seq, longest, start, end)
        sql = (
            "SELECT substr(key, 1, ?), length(key), grp, worker, thread, start, stop, status, spans, nbytes, "
            f"substr(exception, 1, ?), length(exception) FROM tasks WHERE {where} ORDER BY start, seq"
        )
        if limit is not None:
            sql += " LIMIT ?"
            args.append(limit)
        cursor = db.execute(sql, [MAX_KEY + _READ_ROOM, self.max_text + _READ_ROOM, *args])
        try:
            while rows := cursor.fetchmany(1000):
                for (
                    key,
                    key_length,
                    grp,
                    worker,
                    thread,
                    t0,
                    t1,
                    status,
                    spans,
                    nbytes,
                    exc,
                    exc_length,
                ) in rows:
                    yield TaskRecord(
                        key=_clipped(key, key_length, MAX_KEY),
                        group=names[grp],
                        worker=names[worker],
                        thread=thread,
                        start=t0,
                        stop=t1,
                        status=status,
                        spans=_decode_spans(spans, t0, t1),
                        nbytes=nbytes,
                        exception=None if exc is None else _clipped(exc, exc_length, self.max_text),
                    )
        finally:
            cursor.close()

    def task_columns(
        self, run_id: str, start: float | None, end: float | None, limit: int
    ) -> TaskColumns | None:
        """What ``tasks`` reads, as columns (store_columns.py); None for an unknown run."""
        with self._db() as db:
            db.execute("BEGIN")  # one snapshot for the run's names and its tasks
            try:
                found = _find(db, run_id, "seq, longest")
                if found is None:
                    return None
                return read_task_columns(db, found[0], found[1], start, end, limit, self.max_text)
            finally:
                db.execute("ROLLBACK")  # only read

    def finished_by_group(self, run_id: str, start: float, end: float) -> list[tuple[str, int, int]]:
        """Tasks that finished in [start, end], counted per group by SQLite: (group, ok, erred)."""
        with self._db() as db:
            found = _find(db, run_id, "seq, longest")
            if found is None:
                return []
            seq, longest = found
            rows = db.execute(
                f"SELECT {_NAME}, sum(tasks.status = 'OK'), sum(tasks.status != 'OK') FROM tasks "
                "JOIN names ON names.id = tasks.grp WHERE tasks.run = ? AND tasks.start >= ? "
                "AND tasks.start <= ? AND tasks.stop >= ? AND tasks.stop <= ? GROUP BY tasks.grp",
                (seq, start - longest - 1e-3, end, start, end),
            ).fetchall()
        return [(group, int(ok), int(erred)) for group, ok, erred in rows]

    def gaps(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[Gap]:
        """Gaps overlapping [start, end]."""
        rows = self._select(
            run_id, "SELECT start, stop, missed FROM gaps", "start", start, end, limit, overlap="stop"
        )
        return [Gap(t0, t1, missed) for t0, t1, missed in rows]

    def worker_samples(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[WorkerSample]:
        rows = self._select(
            run_id,
            f"SELECT time, {_NAME}, managed, unmanaged, spilled, cpu FROM worker_samples "
            "JOIN names ON names.id = worker_samples.worker",
            "time",
            start,
            end,
            limit,
            table="worker_samples",
        )
        return [WorkerSample(*row) for row in rows]

    def group_progress(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[GroupProgress]:
        rows = self._select(
            run_id,
            f"SELECT time, {_NAME}, states FROM group_progress JOIN names ON names.id = group_progress.grp",
            "time",
            start,
            end,
            limit,
            table="group_progress",
        )
        return [GroupProgress(t, group, json.loads(states)) for t, group, states in rows]

    def events(
        self,
        run_id: str,
        start: float | None = None,
        end: float | None = None,
        limit: int | None = None,
        kind: str | None = None,
        newest_first: bool = False,
    ) -> list[Event]:
        """Events in [start, end], of one ``kind`` if given; the newest ``limit`` with ``newest_first``."""
        rows = self._select(
            run_id,
            "SELECT time, kind, worker, detail FROM events",
            "time",
            start,
            end,
            limit,
            kind=kind,
            descending=newest_first,
        )
        return [Event(t, k, worker, json.loads(detail)) for t, k, worker, detail in rows]

    def metric_samples(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[MetricSample]:
        """Custom metric samples in [start, end], oldest first."""
        rows = self._select(
            run_id, "SELECT time, metric, line, value FROM metric_samples", "time", start, end, limit
        )
        return [MetricSample(t, metric, line, value) for t, metric, line, value in rows]

    def scheduler_cpu(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[tuple[float, float]]:
        """(time, CPU percent of one core) of the scheduler's process in [start, end], oldest first."""
        return self._scheduler_samples(run_id, "cpu", start, end, limit)

    def scheduler_loop(
        self, run_id: str, start: float | None = None, end: float | None = None, limit: int | None = None
    ) -> list[tuple[float, float]]:
        """(time, the scheduler's observed event-loop tick interval in seconds), oldest first."""
        return self._scheduler_samples(run_id, "loop", start, end, limit)

    def _scheduler_samples(
        self, run_id: str, column: str, start: float | None, end: float | None, limit: int | None
    ) -> list[tuple[float, float]]:
        rows = self._select(
            run_id, f"SELECT time, {column} FROM scheduler_samples", "time", start, end, limit
        )
        return [(t, value) for t, value in rows if value is not None]

    def alerts(
        self,
        source: str | None = None,
        since: float | None = None,
        limit: int = 500,
        run_id: str | None = None,
    ) -> list[Alert]:
        """Alerts updated after ``since`` (of one source, or one run, if given), the most recently
        updated first."""
        where = ["NOT runs.deleting"]
        params: list[str | float] = []
        if run_id is not None:
            where.append("runs.id = ?")
            params.append(run_id)
        if source is not None:
            where.append("alerts.source = ?")
            params.append(source)
        if since is not None:
            where.append("alerts.updated > ?")
            params.append(since)
        with self._db() as db:
            rows = db.execute(
                f"SELECT {_ALERT_COLUMNS} FROM alerts JOIN runs ON runs.seq = alerts.run "
                f"WHERE {' AND '.join(where)} ORDER BY alerts.updated DESC LIMIT ?",
                (*params, limit),
            ).fetchall()
        return [_alert(row) for row in rows]

    def last_alert(self, source: str, kinds: Sequence[str]) -> Alert | None:
        """The source's most recent alert of one of ``kinds`` (in any of its runs)."""
        marks = ", ".join("?" * len(kinds))
        with self._db() as db:
            row = db.execute(
                f"SELECT {_ALERT_COLUMNS} FROM alerts WHERE source = ? AND kind IN ({marks}) "
                "ORDER BY updated DESC LIMIT 1",
                (source, *kinds),
            ).fetchone()
        return None if row is None else _alert(row)

    def _select(
        self,
        run_id: str,
        select: str,
        column: str,
        start: float | None,
        end: float | None,
        limit: int | None,
        *,
        table: str = "",
        overlap: str | None = None,
        kind: str | None = None,
        descending: bool = False,
    ) -> list[tuple]:
        prefix = f"{table}." if table else ""
        with self._db() as db:
            found = _find(db, run_id, "seq")
            if found is None:
                return []
            where, args = f"{prefix}run = ?", [found[0]]
            if start is not None:
                where += f" AND {prefix}{overlap or column} >= ?"
                args.append(start)
            if end is not None:
                where += f" AND {prefix}{column} <= ?"
                args.append(end)
            if kind is not None:
                where += " AND kind = ?"
                args.append(kind)
            sql = f"{select} WHERE {where} ORDER BY {prefix}{column}" + (" DESC" if descending else "")
            if limit is not None:
                sql += " LIMIT ?"
                args.append(limit)
            return db.execute(sql, args).fetchall()

    def task_rate(self, run_id: str, bucket: float) -> list[tuple[float, int]]:
        """Tasks finished per bucket: (bucket start, count), in order, empty buckets left out.

        Buckets start at the run's start rounded down to 1/RATE_TICKS s, and ``bucket`` is rounded
        to a multiple of that (at least one): counted per tick as tasks are added, the overview of
        any run reads a few thousand rows, never the tasks."""
        if not bucket > 0:
            raise ValueError("bucket must be a positive number of seconds")
        ticks = max(1, round(bucket * RATE_TICKS))
        with self._db() as db:
            found = _find(db, run_id, "seq, start")
            if found is None:
                return []
            seq, start = found
            origin = math.floor(start * RATE_TICKS)
            # Floor division (a task the recorder read from before the run began lands before it).
            rows = db.execute(
                "SELECT (tick - :o) / :n - ((tick - :o) % :n != 0 AND tick < :o) AS b, sum(count) "
                "FROM finished WHERE run = :run GROUP BY b ORDER BY b",
                {"o": origin, "n": ticks, "run": seq},
            ).fetchall()
        return [((origin + b * ticks) / RATE_TICKS, int(n)) for b, n in rows]


def _clipped(head: str, length: int, limit: int) -> str:
    """A text read as its first characters and its length, clipped as ``clip`` would (with room for
    text clipped on the way in, which is left as it is)."""
    if length <= limit + _READ_ROOM:
        return head
    return clip_head(head, length, limit)


def _find(db: sqlite3.Connection, run_id: str, columns: str) -> tuple | None:
    """``columns`` of the run ``run_id`` (not one being deleted), or None."""
    return db.execute(f"SELECT {columns} FROM runs WHERE id = ? AND NOT deleting", (run_id,)).fetchone()


def _alert(row: tuple) -> Alert:
    alert_id, source, kind, subject, first, updated, title, detail, count = row
    return Alert(alert_id, source, kind, subject, first, updated, title, json.loads(detail), count)


def _run(row: tuple) -> Run:
    run_id, source, name, scheduler, start, end, tasks, gaps = row
    return Run(run_id, source, name, scheduler, start, end, tasks, gaps)


def _decode_spans(text: str | None, start: float, stop: float) -> tuple[Span, ...]:
    if text is None:
        return (Span("compute", start, stop),)
    return tuple(Span(*item) for item in json.loads(text))
