"""The history store: one SQLite file (WAL) the recorder process writes and the server and kernels read.

Why SQLite: bench/history_store.py measured it against DuckDB and Parquet files (figures in
docs/architecture.md, "History store"); it is in the standard library, lets one writer process and
any number of readers work at once (WAL), and a committed batch survives a crash of the writer.

Layout, chosen for the two questions the History view asks: tasks are clustered by (run, start)
(a WITHOUT ROWID table), so a window is one range scan; ``runs.longest`` (the longest task so far)
bounds how far before the window a task that overlaps it can start. The overview (tasks finished
per bucket) reads ``finished``, counts per tenth of a second kept as tasks are added, never the
tasks themselves. Group and worker names
are stored once per run (``names``); a task's spans are compact JSON, left out when the task is one
compute span (most tasks). Every method blocks on file I/O: the server calls them in worker threads.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from dashdock.history.model import (
    MAX_EXCEPTION,
    MAX_GROUP,
    MAX_KEY,
    MAX_TITLE,
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
    clip,
    clip_detail,
    clip_head,
    clip_task,
)
from dashdock.history.schema import CLUSTERED, RUN_TABLES, SCHEMA, SCHEMA_VERSION, migrate

_SQLITE_HEADER = b"SQLite format 3\x00"
# A writer waits this long for another's transaction (retention deletes in bounded chunks, so only a
# stuck process makes it run out).
BUSY_TIMEOUT = 30.0
# Retention deletes a run's rows in transactions of at most this many rows, so the recorder's
# writes are never held up for long.
DELETE_CHUNK = 20_000
# An exception's text is cut to this many characters (it can be a whole traceback). Keys, groups,
# worker names and details have limits of their own (model.py: MAX_KEY, MAX_GROUP, ...): every text a
# client of the scheduler chose is clipped here, on the way in, so no page or export of a run holds
# more of it per item than those limits, whatever that client chose.
MAX_TEXT = MAX_EXCEPTION
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


class HistoryStoreError(OSError):
    """The store cannot be used; the message is for people."""


class _Damaged(Exception):
    """The file is not a database SQLite can read."""


class HistoryStore:
    """The store at ``path``; use ``HistoryStore.open`` to create it (and its schema) when needed.

    Safe to share between threads: each call takes a connection of its own from a small pool.
    """

    def __init__(self, path: Path, *, max_text: int = MAX_TEXT, delete_chunk: int = DELETE_CHUNK) -> None:
        self.path = path
        self.max_text = max_text
        self.delete_chunk = delete_chunk
        self.warning: str | None = None  # set by open() when a damaged file was moved aside
        self._pool: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._names: dict[tuple[int, str], int] = {}  # the writer's cache of names' ids

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path, **options: int) -> HistoryStore:
        """The store at ``path``, created with its schema if missing. A file SQLite cannot read is
        moved aside as ``<name>.damaged-<time>`` and a fresh store made (``warning`` says so).
        Raises ``HistoryStoreError`` when no store can be used there."""
        store = cls(path, **options)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # Several processes may open the store at once (server, recorder, kernels): one at a time
            # decides whether it is damaged and replaces it.
            with open(path.with_name(path.name + ".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    store._prepare()
                except _Damaged as exc:
                    aside = _move_aside(path)
                    store.warning = (
                        f"The history store {path} could not be read ({exc}). It was moved aside to "
                        f"{aside.name} and a new one started; the runs it held are not shown."
                    )
                    store._prepare()
        except (OSError, sqlite3.Error, _Damaged) as exc:
            store.close()
            raise HistoryStoreError(f"{path}: {exc}") from exc
        store._finish_deletes()
        return store

    def _prepare(self) -> None:
        # Created here with a private mode (SQLite would use 0644; its WAL files copy the database's).
        with suppress(FileExistsError):
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        with open(self.path, "rb") as file:
            head = file.read(len(_SQLITE_HEADER))
        if head and head != _SQLITE_HEADER:
            raise _Damaged("it is not a SQLite database")
        try:
            db = self._connect(wal=False)
            try:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version == 0 and not db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    # Set before anything is written (WAL mode too writes the header): incremental
                    # vacuum cannot be turned on later without rewriting the file.
                    db.execute("PRAGMA auto_vacuum = INCREMENTAL")
                    db.executescript(f"BEGIN; {SCHEMA}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;")
                    db.execute("PRAGMA journal_mode = WAL")  # kept in the file
                elif version == 0:
                    raise _Damaged("it holds tables that are not dashdock's")
                elif version < SCHEMA_VERSION:
                    migrate(db, version)
                elif version != SCHEMA_VERSION:
                    # Not damage: another dashdock's store, which it still reads. Left as it is.
                    raise HistoryStoreError(
                        f"it was written by a dashdock with store version {version}; this one reads "
                        f"version {SCHEMA_VERSION}. Choose another file with c.DashdockApp.history_file."
                    )
                db.execute("SELECT count(*) FROM runs").fetchone()
            finally:
                db.close()
        except sqlite3.DatabaseError as exc:
            # A plain DatabaseError is damage (corrupt, not a database); OperationalError is a file
            # that cannot be opened or locked, which moving it aside would not mend.
            if type(exc) is sqlite3.DatabaseError:
                raise _Damaged(str(exc)) from exc
            raise

    def _connect(self, wal: bool = True) -> sqlite3.Connection:
        db = sqlite3.connect(
            f"{self.path.absolute().as_uri()}?mode=rw",
            uri=True,
            timeout=BUSY_TIMEOUT,
            isolation_level=None,
            # The server's exports are generators advanced by whichever worker thread is free.
            check_same_thread=False,
        )
        if wal:
            db.execute("PRAGMA journal_mode = WAL")
        # In WAL mode NORMAL loses no committed transaction when a process crashes (only on power loss).
        db.execute("PRAGMA synchronous = NORMAL")
        return db

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with self._pool_lock:
            db = self._pool.pop() if self._pool else None
        if db is None:
            db = self._connect()
        try:
            yield db
        except BaseException:
            db.close()  # its state is unknown
            raise
        if db.in_transaction:
            db.close()
            return
        with self._pool_lock:
            if len(self._pool) < POOL_SIZE:
                self._pool.append(db)
                return
        db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One transaction holding the write lock from its start (so writers queue, not fail)."""
        with self._db() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                self._names.clear()  # it may hold ids of names rolled back
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, []
        for db in pool:
            db.close()

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
        where, args = "run = ?", [seq]
        if start is not None:
            # A task overlapping the window started at most ``longest`` before it: the scan stays
            # a range of the clustered key (the margin covers rounding in the subtraction).
            where += " AND start >= ? AND stop >= ?"
            args += [start - longest - 1e-3, start]
        if end is not None:
            where += " AND start <= ?"
            args.append(end)
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

    def alerts(
        self,
        source: str | None = None,
        since: float | None = None,
        limit: int = 500,
        run_id: str | None = None,
    ) -> list[Alert]:
        """Alerts updated after ``since`` (of one source, or one run, if given), the most recently
        updated first."""
        where, params = ["NOT runs.deleting"], []
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

    # -- deleting ----------------------------------------------------------------------------

    def delete_run(self, run_id: str) -> bool:
        """Delete a run and everything recorded of it; False when there is no such run."""
        with self._write() as db:
            found = _find(db, run_id, "seq")
            if found is None:
                return False
            # Hidden at once; its rows go in bounded transactions (finished by the next open if
            # this process dies first).
            db.execute("UPDATE runs SET deleting = 1 WHERE seq = ?", (found[0],))
        self._purge(int(found[0]))
        return True

    def _purge(self, seq: int) -> None:
        for table in RUN_TABLES:
            column = CLUSTERED.get(table)
            if column is not None:
                # WITHOUT ROWID: deleted by the clustered key, a range at a time.
                while True:
                    with self._write() as db:
                        row = db.execute(
                            f"SELECT {column} FROM {table} WHERE run = ? ORDER BY {column} LIMIT 1 OFFSET ?",
                            (seq, self.delete_chunk - 1),
                        ).fetchone()
                        if row is None:
                            db.execute(f"DELETE FROM {table} WHERE run = ?", (seq,))
                            break
                        db.execute(f"DELETE FROM {table} WHERE run = ? AND {column} <= ?", (seq, row[0]))
                continue
            while True:
                with self._write() as db:
                    deleted = db.execute(
                        f"DELETE FROM {table} WHERE rowid IN "
                        f"(SELECT rowid FROM {table} WHERE run = ? LIMIT ?)",
                        (seq, self.delete_chunk),
                    ).rowcount
                if deleted < self.delete_chunk:
                    break
        self._names = {k: v for k, v in self._names.items() if k[0] != seq}
        with self._write() as db:
            db.execute("DELETE FROM runs WHERE seq = ?", (seq,))

    def _finish_deletes(self) -> None:
        with self._db() as db:
            pending = [seq for (seq,) in db.execute("SELECT seq FROM runs WHERE deleting").fetchall()]
        for seq in pending:
            self._purge(seq)

    def size(self) -> int:
        """Bytes the records take in the file (free pages not counted)."""
        with self._db() as db:
            pages = db.execute("PRAGMA page_count").fetchone()[0]
            free = db.execute("PRAGMA freelist_count").fetchone()[0]
            page_size = db.execute("PRAGMA page_size").fetchone()[0]
        return int((pages - free) * page_size)

    def enforce_retention(self, max_bytes: int, max_age: float, now: float) -> list[str]:
        """Delete the oldest ended runs (never a live one) until the records take at most
        ``max_bytes`` and no ended run ended more than ``max_age`` seconds before ``now``. Returns the
        deleted runs' ids; the space is given back to the file system."""
        deleted: list[str] = []
        ended = sorted((run for run in self.runs() if not run.live), key=lambda run: run.start)
        for run in ended:
            assert run.end is not None
            if run.end >= now - max_age and self.size() <= max_bytes:
                break
            if self.delete_run(run.id):
                deleted.append(run.id)
        if deleted:
            self._reclaim()
        return deleted

    def _reclaim(self) -> None:
        """Free pages back to the file system (the file was created with incremental vacuum), and the
        WAL truncated, so the file's size on disk follows what it holds."""
        with self._db() as db:
            db.execute("PRAGMA incremental_vacuum")
            with suppress(sqlite3.OperationalError):  # a reader holds the WAL: truncated next time
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


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


def _decode_spans(text: str | None, start: float, stop: float) -> tuple[Span, ...]:
    if text is None:
        return (Span("compute", start, stop),)
    return tuple(Span(*item) for item in json.loads(text))


def _move_aside(path: Path) -> Path:
    """``path`` (and its WAL files) renamed ``<name>.damaged-<time>``; the name returned."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1, 100):
        aside = path.with_name(f"{path.name}.damaged-{stamp}" + (f"-{attempt}" if attempt > 1 else ""))
        if aside.exists():
            continue
        path.rename(aside)
        for suffix in ("-wal", "-shm"):
            # Replayed into the new file, the damaged file's WAL would damage it too.
            with suppress(FileNotFoundError):
                Path(f"{path}{suffix}").rename(Path(f"{aside}{suffix}"))
        return aside
    raise HistoryStoreError(f"no free name to move {path} aside")
