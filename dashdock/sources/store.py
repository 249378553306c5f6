"""The sources file: user-added sources kept across restarts, one SQLite row per source.

Why SQLite with a rollback journal: docs/architecture.md, "Registry". Every method blocks on file
I/O, so the registry calls them in a thread, never on the server's event loop.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager, suppress
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import BinaryIO

from dashdock.kernel.files import replacing
from dashdock.sqlite import HEADER, create_private, is_damage, keep_copy, moved_aside_note

# Earlier versions kept a JSON file of this name next to where the database now is.
LEGACY_NAME = "sources.json"

# A write waits this long for another server's transaction on the same file. Transactions are
# one row, so only a stuck process (or a lock server that is gone, on NFS) ever makes it run out.
_BUSY_TIMEOUT = 10.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    entry TEXT NOT NULL
)
"""


_LOST = ", and the sources it held are not shown."


class StoreError(Exception):
    """The sources file cannot be used (or changed); the message is for people."""


@dataclass(frozen=True)
class Row:
    """A saved source: its id and the entry as saved (JSON text), which may no longer be usable."""

    id: str
    entry: str


class _Unreadable(Exception):
    """The database is damaged (SQLite says corrupt, or it is not a database at all)."""


class SourcesStore:
    """The file at ``path``. ``key_for`` gives the id of an entry imported from an earlier JSON file."""

    def __init__(self, path: Path, key_for: Callable[[object], str]) -> None:
        self.path = path
        self._key_for = key_for

    def open(self) -> tuple[list[Row], list[str]]:
        """Make the file ready and read it: the rows in the order they were added, and what people
        should be told (a file that was moved aside). Raises ``StoreError`` when nothing can be kept."""
        notes: list[str] = []
        try:
            self._check_directory()
            legacy = self._legacy_file()
            if legacy is not None:
                notes += self._replace_locked(legacy, self._import)
            try:
                return self._read(), notes
            except _Unreadable as exc:
                damage = str(exc)
            notes += self._replace_locked(self.path, partial(self._set_aside_damaged, reason=damage))
            return self._read(), notes
        except (OSError, sqlite3.Error, _Unreadable) as exc:
            raise StoreError(f"{self.path}: {_describe(exc)}") from exc

    def put(self, source_id: str, entry: str) -> None:
        """Save one source (a new one, or a new entry for an existing id); nothing else is written."""
        with self._writing() as db:
            if not db.execute("UPDATE sources SET entry = ? WHERE id = ?", (entry, source_id)).rowcount:
                db.execute("INSERT INTO sources (id, entry) VALUES (?, ?)", (source_id, entry))

    def delete(self, source_id: str) -> None:
        with self._writing() as db:
            db.execute("DELETE FROM sources WHERE id = ?", (source_id,))

    def _check_directory(self) -> None:
        """SQLite keeps a journal next to the file under a fixed name; where other users may create
        files, one of them could plant a journal that SQLite would replay into ours."""
        directory = self.path.parent
        # Only the user's own: new directories are created private.
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = directory.stat()
        if info.st_uid != os.geteuid() or info.st_mode & stat.S_IWOTH:
            raise StoreError(
                f"{directory} is not a private directory (other users can create files in it); "
                "choose another place with c.DashdockApp.sources_file."
            )

    def _legacy_file(self) -> Path | None:
        """The JSON file of an earlier version, if one is to be imported: the file itself (when
        ``sources_file`` named it), or ``sources.json`` beside a database not created yet."""
        try:
            with open(self.path, "rb") as file:
                head = file.read(len(HEADER))
        except FileNotFoundError:
            sibling = self.path.with_name(LEGACY_NAME)
            return sibling if sibling != self.path and sibling.exists() else None
        return self.path if head and head != HEADER else None

    def _replace_locked(self, path: Path, replace: Callable[[bytes, Path], list[str]]) -> list[str]:
        """Run ``replace(content, path)`` on the file at ``path``, holding a lock on it, unless another
        server replaced it while this one waited (then there is nothing left to do)."""
        try:
            file = open(path, "rb")
        except FileNotFoundError:
            return []
        with file:
            fcntl.flock(file, fcntl.LOCK_EX)
            if not _is_current(file, path) or (path != self.path and self.path.exists()):
                return []
            return replace(file.read(), path)

    def _import(self, raw: bytes, legacy: Path) -> list[str]:
        """The JSON file of an earlier version becomes the database; it is kept beside it, renamed."""
        entries = _legacy_entries(raw)
        if entries is None:
            aside = keep_copy(legacy, raw, "bad")
            note = moved_aside_note(
                "sources file",
                legacy,
                "it is damaged or truncated",
                aside,
                _LOST,
            )
            rows: list[Row] = []
        else:
            aside = keep_copy(legacy, raw, "imported")
            note = ""
            rows = [Row(self._key_for(entry), json.dumps(entry)) for entry in entries]
        self._install(rows)
        if legacy != self.path:
            legacy.unlink()
        _sync_directory(self.path.parent)
        return [note] if note else []

    def _set_aside_damaged(self, raw: bytes, path: Path, reason: str) -> list[str]:
        aside = keep_copy(path, raw, "bad")
        journal = Path(f"{path}-journal")
        # A journal left by a crash belongs to the damaged file: replayed into the new one, it would
        # damage that too.
        with suppress(FileNotFoundError):
            keep_copy(journal, journal.read_bytes(), "bad")
            journal.unlink()
        self._install([])
        _sync_directory(path.parent)
        return [moved_aside_note("sources file", path, reason, aside, _LOST)]

    def _install(self, rows: list[Row]) -> None:
        """A complete database under a unique, exclusively created name, then renamed over the file:
        other servers see the old file or the new one, never a half-written one."""
        with replacing(self.path) as (_, temporary), closing(_connect(temporary)) as db:
            db.execute(_SCHEMA)
            db.execute("BEGIN")
            db.executemany(
                "INSERT OR IGNORE INTO sources (id, entry) VALUES (?, ?)", [(r.id, r.entry) for r in rows]
            )
            db.execute("COMMIT")

    def _read(self) -> list[Row]:
        # Created here, not by SQLite, so that it is 0600 (SQLite creates files 0644 and gives its
        # journal the mode of the database).
        create_private(self.path)
        try:
            with closing(_connect(self.path)) as db:
                db.execute(_SCHEMA)
                problems = [line for (line,) in db.execute("PRAGMA quick_check") if line != "ok"]
                if problems:
                    raise _Unreadable("; ".join(problems[:3]))
                return [
                    Row(str(key), str(entry))
                    for key, entry in db.execute("SELECT id, entry FROM sources ORDER BY seq")
                ]
        except sqlite3.DatabaseError as exc:
            if is_damage(exc):
                raise _Unreadable(str(exc)) from exc
            raise

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One transaction that holds the write lock from its start, so concurrent servers queue up
        instead of failing when both try to upgrade a read lock."""
        try:
            with closing(_connect(self.path)) as db:
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"{self.path}: {_describe(exc)}") from exc


def _connect(path: Path) -> sqlite3.Connection:
    # mode=rw: SQLite never creates the file (it would with its own, wider mode).
    db = sqlite3.connect(
        f"{path.absolute().as_uri()}?mode=rw", uri=True, timeout=_BUSY_TIMEOUT, isolation_level=None
    )
    # An acknowledged add survives a power cut too, not only a killed process.
    db.execute("PRAGMA synchronous = FULL")
    return db


def _legacy_entries(raw: bytes) -> list[object] | None:
    """The entries of an earlier version's ``{"sources": [...]}``, each as it was (good or not);
    None when the document as a whole cannot be read."""
    try:
        document = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("sources"), list):
        return None
    return list(document["sources"])


def _is_current(file: BinaryIO, path: Path) -> bool:
    """Whether the open ``file`` is still what ``path`` names."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(file.fileno())
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _sync_directory(directory: Path) -> None:
    """Make renames in ``directory`` durable."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc)
