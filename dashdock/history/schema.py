"""The history store's tables, and how a store written by an older dashdock is brought up to date.

``PRAGMA user_version`` is the schema's version. A store of an older version is migrated in place
when it is opened (adding is all a migration has done so far: nothing recorded is lost); a newer
one is left alone (store.py reports it).
"""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 4

# Version 2: alerts (what the recorder noticed that the user should hear about).
_ALERTS = """
CREATE TABLE alerts (
    id TEXT PRIMARY KEY,
    run INTEGER NOT NULL,
    source TEXT NOT NULL,
    kind TEXT NOT NULL,
    subject TEXT NOT NULL,
    time REAL NOT NULL,
    updated REAL NOT NULL,
    title TEXT NOT NULL,
    detail TEXT NOT NULL,
    count INTEGER NOT NULL
);
CREATE INDEX alerts_by_updated ON alerts (updated);
CREATE INDEX alerts_by_run ON alerts (run);
"""

# Version 3: samples of the custom metrics a notebook added (``dashdock.metric``).
_METRIC_SAMPLES = """
CREATE TABLE metric_samples (
    run INTEGER NOT NULL,
    time REAL NOT NULL,
    metric TEXT NOT NULL,
    line TEXT NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX metric_samples_by_time ON metric_samples (run, time);
"""

# Version 4: the scheduler's own CPU, as its system monitor measured it, and its event loop's
# observed tick interval (diagnosis names a window whose scheduler was saturated). A row has one.
_SCHEDULER_SAMPLES = """
CREATE TABLE scheduler_samples (run INTEGER NOT NULL, time REAL NOT NULL, cpu REAL, loop REAL);
CREATE INDEX scheduler_samples_by_time ON scheduler_samples (run, time);
"""

SCHEMA = (
    """
CREATE TABLE runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: a deleted run's rows stay its own
    id TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    name TEXT NOT NULL,
    scheduler TEXT NOT NULL,
    start REAL NOT NULL,
    end REAL,
    tasks INTEGER NOT NULL DEFAULT 0,
    gaps INTEGER NOT NULL DEFAULT 0,
    longest REAL NOT NULL DEFAULT 0,
    deleting INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE names (
    id INTEGER PRIMARY KEY,
    run INTEGER NOT NULL,
    text TEXT NOT NULL,
    UNIQUE (run, text)
);
CREATE TABLE tasks (
    run INTEGER NOT NULL,
    start REAL NOT NULL,
    seq INTEGER NOT NULL,
    stop REAL NOT NULL,
    key TEXT NOT NULL,
    grp INTEGER NOT NULL,
    worker INTEGER NOT NULL,
    thread INTEGER,
    status TEXT NOT NULL,
    nbytes INTEGER,
    exception TEXT,
    spans TEXT,
    PRIMARY KEY (run, start, seq)
) WITHOUT ROWID;
CREATE TABLE finished (
    run INTEGER NOT NULL,
    tick INTEGER NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (run, tick)
) WITHOUT ROWID;
CREATE TABLE gaps (run INTEGER NOT NULL, start REAL NOT NULL, stop REAL NOT NULL, missed INTEGER NOT NULL);
CREATE INDEX gaps_by_start ON gaps (run, start);
CREATE TABLE worker_samples (
    run INTEGER NOT NULL,
    time REAL NOT NULL,
    worker INTEGER NOT NULL,
    managed INTEGER NOT NULL,
    unmanaged INTEGER NOT NULL,
    spilled INTEGER NOT NULL,
    cpu REAL NOT NULL
);
CREATE INDEX worker_samples_by_time ON worker_samples (run, time);
CREATE TABLE group_progress (
    run INTEGER NOT NULL,
    time REAL NOT NULL,
    grp INTEGER NOT NULL,
    states TEXT NOT NULL
);
CREATE INDEX group_progress_by_time ON group_progress (run, time);
CREATE TABLE events (
    run INTEGER NOT NULL,
    time REAL NOT NULL,
    kind TEXT NOT NULL,
    worker TEXT,
    detail TEXT NOT NULL
);
CREATE INDEX events_by_time ON events (run, time);
"""
    + _ALERTS
    + _METRIC_SAMPLES
    + _SCHEDULER_SAMPLES
)

# Every table whose rows belong to a run (column ``run``): deleted with it.
RUN_TABLES = (
    "tasks",
    "finished",
    "names",
    "gaps",
    "worker_samples",
    "group_progress",
    "events",
    "alerts",
    "metric_samples",
    "scheduler_samples",
)
# Tables clustered by (run, <column>) (WITHOUT ROWID): deleted a range of that column at a time.
CLUSTERED = {"tasks": "start", "finished": "tick"}

_MIGRATIONS = {1: _ALERTS, 2: _METRIC_SAMPLES, 3: _SCHEDULER_SAMPLES}  # from version n to n + 1


def migrate(db: sqlite3.Connection, version: int) -> None:
    """Bring a store of ``version`` to SCHEMA_VERSION, one transaction per step."""
    while version < SCHEMA_VERSION:
        db.executescript(f"BEGIN; {_MIGRATIONS[version]}; PRAGMA user_version = {version + 1}; COMMIT;")
        version += 1
