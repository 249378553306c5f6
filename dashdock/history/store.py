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
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from dashdock.history.schema import CLUSTERED, RUN_TABLES, SCHEMA, SCHEMA_VERSION, migrate
from dashdock.history.store_reads import StoreReads, _find
from dashdock.history.store_writes import MAX_TEXT, StoreWrites
from dashdock.sqlite import (
    Damaged,
    create_private,
    has_foreign_header,
    is_damage,
    move_aside,
    moved_aside_note,
    quick_check,
)

# A writer waits this long for another's transaction (retention deletes in bounded chunks, so only a
# stuck process makes it run out).
BUSY_TIMEOUT = 30.0
# Retention deletes a run's rows in transactions of at most this many rows, so the recorder's
# writes are never held up for long.
DELETE_CHUNK = 20_000
# Idle connections kept for reuse across calls and threads.
POOL_SIZE = 4
# Opening checks an existing file for damage (SQLite's quick_check) for at most this long.
CHECK_SECONDS = 5.0
_LOST = " and a new one started; the runs it held are not shown."


class HistoryStoreError(OSError):
    """The store cannot be used; the message is for people."""


class HistoryStore(StoreWrites, StoreReads):
    """The store at ``path``; use ``HistoryStore.open`` to create it (and its schema) when needed.

    Safe to share between threads: each call takes a connection of its own from a small pool.
    """

    def __init__(self, path: Path, *, max_text: int = MAX_TEXT, delete_chunk: int = DELETE_CHUNK) -> None:
        self.path = path
        self.max_text = max_text
        self.delete_chunk = delete_chunk
        self.warning: str | None = None  # set by open() when a damaged file was moved aside
        self._file: tuple[int, int] | None = None  # (device, inode) of the file opened
        self._pool: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._names: dict[tuple[int, str], int] = {}  # the writer's cache of names' ids

    # -- opening -----------------------------------------------------------------------------

    @classmethod
    def open(
        cls, path: Path, *, damaged: tuple[tuple[int, int] | None, str] | None = None, **options: int
    ) -> HistoryStore:
        """The store at ``path``, created with its schema if missing. A file SQLite cannot read, or
        whose quick_check fails, is moved aside as ``<name>.damaged-<time>`` with its WAL and a fresh
        store made (``warning`` says so). ``damaged``: the file (as ``_file``) found damaged in use
        and why, moved aside unless another process has replaced it already.
        Raises ``HistoryStoreError`` when no store can be used there."""
        store = cls(path, **options)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # Several processes may open the store at once (server, recorder, kernels): one at a time
            # decides whether it is damaged and replaces it.
            with open(path.with_name(path.name + ".lock"), "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                try:
                    if damaged is not None and damaged[0] is not None and _identity(path) == damaged[0]:
                        raise Damaged(damaged[1])
                    store._prepare()
                except Damaged as exc:
                    aside = move_aside(path, "damaged", ("-wal", "-shm"))
                    store.warning = moved_aside_note("history store", path, str(exc), aside, _LOST)
                    store._prepare()
                store._file = _identity(path)
        except (OSError, sqlite3.Error, Damaged) as exc:
            store.close()
            raise HistoryStoreError(f"{path}: {exc}") from exc
        try:
            store._finish_deletes()
        except sqlite3.Error as exc:  # damage the check did not see (it may have run out of time)
            store.close()
            if not is_damage(exc) or damaged is not None:
                raise HistoryStoreError(f"{path}: {exc}") from exc
            return cls.open(path, damaged=(store._file, str(exc)), **options)
        return store

    def replaced(self, reason: str) -> HistoryStore:
        """This store found damaged in use (``reason``): closed, its file moved aside (unless another
        process replaced it already) and a fresh store opened; its ``warning`` says what happened."""
        self.close()
        return type(self).open(
            self.path, damaged=(self._file, reason), max_text=self.max_text, delete_chunk=self.delete_chunk
        )

    def _prepare(self) -> None:
        # Created here with a private mode (SQLite would use 0644; its WAL files copy the database's).
        create_private(self.path)
        if has_foreign_header(self.path):
            raise Damaged("it is not a SQLite database")
        try:
            # Checked first, read-only: a truncated file opens and lists its runs, then fails every read.
            if self.path.stat().st_size and (found := quick_check(self.path, CHECK_SECONDS)):
                raise Damaged(found)
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
                    raise Damaged("it holds tables that are not dashdock's")
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
            if is_damage(exc):
                raise Damaged(str(exc)) from exc
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


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return None
    return found.st_dev, found.st_ino
