"""What dashdock's SQLite stores do to their files: created private, damage told apart, kept aside.

Both stores (``history/store.py``, ``sources/store.py``) open a file other processes share; one that
SQLite cannot read is damage, set aside under a name no file had (``<name>.<label>-<time>``) with
the journal or WAL files that belong to it, and a fresh file made. A base module: it imports nothing
of dashdock.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import suppress
from pathlib import Path

HEADER = b"SQLite format 3\x00"


class Damaged(Exception):
    """The file is not a database SQLite can read (corrupt, or not a database at all)."""


def create_private(path: Path) -> None:
    """``path`` created 0600 if missing (SQLite would create it 0644, and its journals copy that)."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))


def has_foreign_header(path: Path) -> bool:
    """Whether the file starts with something that is not SQLite's header (an empty file does not)."""
    with open(path, "rb") as file:
        head = file.read(len(HEADER))
    return bool(head) and head != HEADER


def is_damage(exc: sqlite3.Error) -> bool:
    """A plain ``DatabaseError`` is damage (corrupt, not a database); ``OperationalError`` is a file
    that cannot be opened or locked, which moving it aside would not mend."""
    return type(exc) is sqlite3.DatabaseError


def quick_check(path: Path, seconds: float) -> str | None:
    """What SQLite's ``quick_check`` finds wrong in the database at ``path``, in one line; None when
    it finds nothing, or has not finished within ``seconds`` (a huge file must not stall a start).

    Read-only, so the file and its WAL are left as they were: a read-write connection's close would
    checkpoint a damaged file's WAL into it, and the WAL must go aside with it. Raises
    ``sqlite3.DatabaseError`` when SQLite cannot read the file at all."""
    deadline = time.monotonic() + seconds
    try:
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, timeout=seconds)
    except sqlite3.OperationalError:
        return None  # cannot be opened read-only here: the read-write open says why
    try:
        db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
        found = [str(row[0]) for row in db.execute("PRAGMA quick_check(10)").fetchall()]
    except sqlite3.OperationalError:
        return None  # interrupted (out of time), or locked: not known to be damaged
    finally:
        db.close()
    if found == ["ok"]:
        return None
    line = " ".join(" ".join(found).split())
    return "SQLite's check found: " + (line if len(line) <= 300 else line[:299] + "…")


def _aside_names(path: Path, label: str) -> Iterator[Path]:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for attempt in range(1, 100):
        yield path.with_name(f"{path.name}.{label}-{stamp}" + (f"-{attempt}" if attempt > 1 else ""))


def move_aside(path: Path, label: str, companions: Sequence[str] = ()) -> Path:
    """``path`` renamed ``<name>.<label>-<time>``, with its companions (``-wal``, ``-journal``...):
    replayed into the new file, the damaged file's journal would damage it too. The name returned.
    Raises ``FileExistsError`` when no free name is found."""
    for aside in _aside_names(path, label):
        if aside.exists():
            continue
        path.rename(aside)
        for suffix in companions:
            with suppress(FileNotFoundError):
                Path(f"{path}{suffix}").rename(Path(f"{aside}{suffix}"))
        return aside
    raise FileExistsError(f"no free name to move {path} aside")


def keep_copy(path: Path, raw: bytes, label: str) -> Path:
    """``raw`` saved durably as ``<name>.<label>-<time>`` beside ``path``, under a name no file had.
    Raises ``FileExistsError`` when no free name is found."""
    for aside in _aside_names(path, label):
        try:
            descriptor = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            continue
        with open(descriptor, "wb") as file:
            file.write(raw)
            file.flush()
            os.fsync(file.fileno())
        return aside
    raise FileExistsError(f"no free name to keep a copy of {path} beside it")


def moved_aside_note(what: str, path: Path, reason: str, aside: Path, lost: str) -> str:
    """What people are told: ``what`` at ``path`` could not be read and was moved aside."""
    return f"The {what} {path} could not be read ({reason}). It was moved aside to {aside.name}{lost}"
