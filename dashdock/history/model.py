"""What a recording holds: runs, tasks with their spans, gaps, worker samples, group progress, events.

Plain data shared by the recorder (which writes), the store and the exports (which read). Times
are Unix seconds (floats) as the scheduler reports them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class Span:
    """One part of a task's time on a worker, as Dask's task stream reports it."""

    action: str  # "compute", "transfer", "disk-read", "disk-write", "deserialize", ...
    start: float
    stop: float
    source: str | None = None  # for a transfer: the worker the data came from


@dataclass(frozen=True)
class TaskRecord:
    """One task that finished (in memory or erred) on a worker."""

    key: str  # the task key as text (str(key) of Dask's key)
    group: str  # Dask's key_split of the key: the prefix people read ("sum-partial")
    worker: str  # worker address
    thread: int | None  # worker thread id, when the worker reported it
    start: float  # first span's start
    stop: float  # last span's stop
    status: str  # "OK" or "error"
    spans: tuple[Span, ...] = ()
    nbytes: int | None = None
    exception: str | None = None  # the exception's text, for an erred task


@dataclass(frozen=True)
class Gap:
    """Tasks that finished but were never read: the scheduler's task-stream buffer overflowed."""

    start: float  # when the recorder last read successfully
    stop: float  # when it noticed
    missed: int  # how many tasks it missed


@dataclass(frozen=True)
class WorkerSample:
    """One worker's memory and CPU at one time."""

    time: float
    worker: str
    managed: int  # bytes in memory held by Dask
    unmanaged: int  # process memory not held by Dask
    spilled: int  # bytes spilled to disk
    cpu: float  # percent, as the worker reports it


@dataclass(frozen=True)
class GroupProgress:
    """How far one task group is at one time (counts by state)."""

    time: float
    group: str
    states: dict[str, int] = field(default_factory=dict)  # "memory", "processing", "erred", ...


@dataclass(frozen=True)
class Event:
    """Something that happened once: a worker joined or left, a task erred, metrics totals."""

    time: float
    kind: str  # "worker-joined", "worker-left", "exception", "metrics"
    worker: str | None = None
    detail: dict[str, object] = field(default_factory=dict)


# What alerts are about, in the order the settings list them.
ALERT_KINDS = (
    "worker-lost",
    "worker-paused",
    "spilling",
    "task-erred",
    "scheduler-lost",
    "scheduler-back",
    "computation-done",
)


@dataclass
class Alert:
    """Something the user should hear about; happening again updates it in place (same id, count + 1)."""

    id: str  # 12 hex, kept while the alert is updated
    source: str  # the source id of the run it happened in
    kind: str  # one of ALERT_KINDS
    subject: str  # what one alert of its kind is about: a task group, or "" for the whole source
    time: float  # first occurrence
    updated: float  # last occurrence
    title: str  # one line for a notification ("boom: 214 tasks erred")
    detail: dict[str, object] = field(default_factory=dict)  # what an action needs (worker, key, ...)
    count: int = 1

    def to_json(self, notified: bool) -> dict[str, object]:
        return {
            "id": self.id,
            "source": self.source,
            "kind": self.kind,
            "time": self.time,
            "updated": self.updated,
            "title": self.title,
            "detail": self.detail,
            "count": self.count,
            "notified": notified,
        }


@dataclass
class Run:
    """One recording of one scheduler, from when recording began until it stopped."""

    id: str  # a fresh 12-hex id (the API also finds a live run by its source's id)
    source: str  # the source id it recorded
    name: str  # the source's name when it was recorded ("Cluster 1", "analysis.ipynb")
    scheduler: str  # the scheduler's address
    start: float
    end: float | None = None  # None while recording
    tasks: int = 0
    gaps: int = 0  # tasks missed in gaps

    @property
    def live(self) -> bool:
        return self.end is None

    def to_store_json(self) -> dict[str, object]:
        """Every field, as the recorder's ``record`` command carries it (``Run(**fields)`` reads it)."""
        return asdict(self)

    def to_json(self) -> dict[str, object]:
        """What the REST API shows."""
        return {
            "id": self.source if self.live else self.id,
            "source": self.source,
            "name": self.name,
            "start": self.start,
            "end": self.end,
            "tasks": self.tasks,
            "missed": self.gaps,
            "live": self.live,
        }
