"""What a recording holds: runs, tasks with their spans, gaps, worker samples, group progress, events.

Plain data shared by the recorder (which writes), the store and the exports (which read). Times
are Unix seconds (floats) as the scheduler reports them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace

# Text a client of the recorded scheduler chooses (task keys, and so their groups; exception texts;
# worker names and metric names) is cut to these many characters, the marker included, where records
# are stored. History pages are bounded in counts (spans drawn, groups listed); these bound each item,
# so a page is bounded in bytes too: 20,000 spans of 16 KiB keys once took the server to 4.7 GB.
MAX_KEY = 256  # a key is shown to be recognised (its group and index come first), never looked up
MAX_GROUP = 128  # a group (Dask's prefix) names a colour and a row; Dask stores it untruncated
MAX_WORKER = 256  # a worker's address or name (a worker may call itself anything)
MAX_ACTION = 32  # a span's action ("compute", "transfer", ...)
MAX_EXCEPTION = 4_000  # an exception's text, as the scheduler reader already cuts it
MAX_DETAIL_TEXT = 4_000  # any other text in an event's or alert's detail (a traceback, a metric name)
MAX_DETAIL_ITEMS = 1_000  # entries of one list or mapping in a detail
MAX_DETAIL_DEPTH = 8  # nesting of a detail
MAX_TITLE = 512  # an alert's title (it names a group)


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the cut marked visibly: "abc…[+1,234 chars]".

    Clipping clipped text changes nothing, so the recorder and the store may both clip."""
    if len(text) <= limit:
        return text
    return clip_head(text, len(text), limit)


def clip_head(head: str, length: int, limit: int) -> str:
    """What ``clip`` makes of a text of ``length`` characters that begins with ``head`` (at least
    ``limit`` characters of it), for a text read in part."""
    if length <= limit:
        return head
    # The marker for dropping the whole text is at least as long as the one finally written.
    keep = max(0, limit - len(_marker(length)))
    return head[:keep] + _marker(length - keep)


def _marker(dropped: int) -> str:
    return f"\u2026[+{dropped:,} chars]"


def is_clipped(text: str) -> bool:
    """Whether ``text`` ends with the marker ``clip`` writes."""
    if not text.endswith(" chars]"):
        return False
    _, sep, count = text[: -len(" chars]")].rpartition("\u2026[+")
    return bool(sep) and count.replace(",", "").isdigit()


def clip_detail(value: object, limit: int = MAX_DETAIL_TEXT, depth: int = 0) -> object:
    """A detail (JSON-like) with every text clipped, containers cut to MAX_DETAIL_ITEMS entries and
    nesting to MAX_DETAIL_DEPTH; "key" and "group" entries get their own limits."""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return clip(value, limit)
    if depth >= MAX_DETAIL_DEPTH:
        return clip(repr(value), 64)
    if isinstance(value, dict):
        items = list(value.items())[:MAX_DETAIL_ITEMS]
        return {
            clip(str(k), MAX_GROUP): clip_detail(v, _DETAIL_LIMITS.get(str(k), limit), depth + 1)
            for k, v in items
        }
    if isinstance(value, list | tuple):
        return [clip_detail(v, limit, depth + 1) for v in list(value[:MAX_DETAIL_ITEMS])]
    return clip(str(value), limit)


_DETAIL_LIMITS = {"key": MAX_KEY, "group": MAX_GROUP, "worker": MAX_WORKER, "exception": MAX_EXCEPTION}


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


def clip_task(task: TaskRecord) -> TaskRecord:
    """The task with the text its client chose clipped (itself when nothing was too long)."""
    spans = task.spans
    if any(
        len(s.action) > MAX_ACTION or (s.source is not None and len(s.source) > MAX_WORKER) for s in spans
    ):
        spans = tuple(
            Span(
                clip(s.action, MAX_ACTION),
                s.start,
                s.stop,
                None if s.source is None else clip(s.source, MAX_WORKER),
            )
            for s in spans
        )
    exception = None if task.exception is None else clip(task.exception, MAX_EXCEPTION)
    if (
        spans is task.spans
        and len(task.key) <= MAX_KEY
        and len(task.group) <= MAX_GROUP
        and len(task.worker) <= MAX_WORKER
        and exception == task.exception
    ):
        return task
    return replace(
        task,
        key=clip(task.key, MAX_KEY),
        group=clip(task.group, MAX_GROUP),
        worker=clip(task.worker, MAX_WORKER),
        spans=spans,
        exception=exception,
    )


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


@dataclass(frozen=True)
class MetricSample:
    """One value of one line of a custom metric (``dashdock.metric``), as the scheduler sampled it."""

    time: float
    metric: str
    line: str
    value: float


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
