"""What the recorder notices that the user should hear about, as alerts of one run.

The recorder feeds an ``AlertWatch`` what each tick read (finished tasks, the workers' states,
workers that left and why, whether the scheduler is busy or answers at all) and writes the alerts
it returns. One alert stands for one kind and subject (a task group, or the whole source) and is
updated in place when it happens again, so 10,000 failing tasks are one alert counting to 10,000.
Pure logic, no I/O: tests drive it with records, the recorder with what a scheduler said.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dashdock.history.model import Alert, TaskRecord

# Dask's stimulus ids say why the scheduler removed a worker; the prefix is the cause.
_REMOVAL_CAUSES = (
    # What matters first: a toast cuts a long title short (Lab shows 140 characters).
    ("handle-worker-cleanup", "killed or crashed (its connection closed without notice)"),
    ("check-worker-ttl", "it stopped sending heartbeats"),
    ("worker-send-comm-fail", "the scheduler could not send it messages"),
    ("heartbeat-missing", "it stopped sending heartbeats"),
)
# The reason Dask's Client.restart() and Client.restart_workers() give the workers they close.
_ASKED_RESTART = "client-restart"
MAX_DETAIL_TEXT = 4000


@dataclass(frozen=True)
class AlertLimits:
    """The bounds and thresholds of one run's alerts."""

    computation_seconds: float = 60.0  # a computation that ran at least this long says it is done
    # A scheduler silent this long is lost. Longer than the server takes to stop recording a source
    # that went on purpose (a kernel restarted, a cluster shut down: discovery 2 s + sync 2 s).
    lost_after: float = 10.0
    spill_every: float = 300.0  # a worker that keeps spilling is mentioned again after this long
    max_alerts: int = 500  # distinct alerts one run keeps; later ones only update existing ones


@dataclass(frozen=True)
class Departure:
    """A worker that left, with what Dask said about it."""

    worker: str
    expected: bool  # closed on purpose (retired, scaled down, the cluster closing)
    reason: str  # for people; "" when Dask gave none


def departure(worker: str, events: object, memory_restarts: object) -> Departure:
    """Why ``worker`` left, from its own event topic and the nannies' ``worker-restart-memory`` topic.

    Both are ``get_events`` replies: sequences of ``(time, message)``. What is not understood is
    ignored: a scheduler's events are input, not trusted structure.
    """
    for message in _messages(memory_restarts):
        if message.get("worker") == worker:
            rss = message.get("rss")
            used = f" ({_bytes(rss)})" if isinstance(rss, int) else ""
            return Departure(worker, False, f"its nanny restarted it: it exceeded its memory limit{used}")
    removal = next((m for m in reversed(_messages(events)) if m.get("action") == "remove-worker"), None)
    closing = next((m for m in reversed(_messages(events)) if m.get("action") == "closing-worker"), None)
    if closing is not None and str(closing.get("reason", "")).startswith(_ASKED_RESTART):
        # Client.restart() and restart_workers(): the nanny closes the worker and the scheduler then
        # sees its connection close, which alone would read as a crash.
        return Departure(worker, True, "a client restarted it")
    if removal is not None and removal.get("expected") is True:
        return Departure(worker, True, "it was closed on purpose")
    stimulus = str(removal.get("stimulus_id", "")) if removal is not None else ""
    for prefix, reason in _REMOVAL_CAUSES:
        if stimulus.startswith(prefix):
            return Departure(worker, False, reason)
    if closing is not None and closing.get("reason"):
        return Departure(worker, False, f"it closed ({str(closing['reason'])[:200]})")
    return Departure(worker, False, "")


def _messages(events: object) -> list[Mapping[str, object]]:
    if not isinstance(events, Sequence) or isinstance(events, (str, bytes)):
        return []
    found = []
    for item in events:
        if isinstance(item, Sequence) and len(item) == 2 and isinstance(item[1], Mapping):
            found.append(item[1])
    return found


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def _plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


class AlertWatch:
    """The alerts of one run of one source."""

    def __init__(self, source: str, limits: AlertLimits) -> None:
        self.source = source
        self.limits = limits
        self._alerts: dict[tuple[str, str], Alert] = {}
        self._changed: dict[str, Alert] = {}
        self._paused: set[str] = set()
        self._spilled: dict[str, tuple[float, int]] | None = None  # worker -> (noticed, bytes)
        self._lost = False  # the scheduler was said to be lost: its next answer is "back"
        self._failing_since: float | None = None
        self._busy_since: float | None = None
        self._busy_tasks = 0
        self._busy_erred = 0
        self._busy_last_stop = 0.0
        # Idle was seen once: the end is confirmed at the next tick, whose task-stream read holds
        # the tasks that finished between this tick's read and its idle check.
        self._idle_seen = False

    def lost_before(self, lost: bool) -> None:
        """Whether the source's last alert, in an earlier run, said its scheduler was lost."""
        self._lost = lost

    def take(self) -> list[Alert]:
        """The alerts created or updated since the last call."""
        changed, self._changed = list(self._changed.values()), {}
        return changed

    # -- what a tick read -------------------------------------------------------------------

    def tasks(self, tasks: Sequence[TaskRecord], now: float) -> None:
        """Finished tasks: erred ones per group; all of them count for the running computation."""
        erred: dict[str, list[TaskRecord]] = {}
        for task in tasks:
            if task.status == "error":
                erred.setdefault(task.group, []).append(task)
        for group, failed in erred.items():
            alert = self._alerts.get(("task-erred", group))
            count = len(failed) + (alert.count if alert else 0)
            first = failed[0]
            detail = (
                alert.detail
                if alert
                else {
                    "group": group,
                    "key": first.key[:MAX_DETAIL_TEXT],
                    "worker": first.worker,
                    "exception": (first.exception or "")[:MAX_DETAIL_TEXT],
                }
            )
            self._raise(
                "task-erred", group, now, f"{group}: {_plural(count, 'task', 'tasks')} erred", detail, count
            )
        if self._busy_since is not None and tasks:
            self._busy_since = min(self._busy_since, min(t.start for t in tasks))
            self._busy_last_stop = max(self._busy_last_stop, max(t.stop for t in tasks))
            self._busy_tasks += len(tasks)
            self._busy_erred += sum(len(f) for f in erred.values())

    def busy(self, busy: bool, now: float, tasks: Sequence[TaskRecord] = ()) -> None:
        """Whether the scheduler has tasks to run; call after ``tasks`` for the same tick."""
        if busy and self._busy_since is None:
            # It began at this tick at the latest; this tick's tasks may show it began earlier.
            starts = [t.start for t in tasks]
            self._busy_since = min([now, *starts])
            self._busy_tasks, self._busy_erred = len(tasks), sum(t.status == "error" for t in tasks)
            self._busy_last_stop = max([t.stop for t in tasks], default=0.0)
        elif busy:
            self._idle_seen = False  # idle for a moment between two submissions: one computation
        elif self._busy_since is not None and not self._idle_seen:
            # The task stream was read before the idle check: tasks that finished in between come
            # with the next tick's read, so the computation ends there, counted in full.
            self._idle_seen = True
        elif self._busy_since is not None:
            self._computation_done(now)

    def _computation_done(self, now: float) -> None:
        end = self._busy_last_stop or now
        duration = end - (self._busy_since or end)
        if duration >= self.limits.computation_seconds and self._busy_tasks:
            errors = f", {_plural(self._busy_erred, 'error', 'errors')}" if self._busy_erred else ""
            title = (
                f"A computation finished after {_duration(duration)}: "
                f"{_plural(self._busy_tasks, 'task', 'tasks')}{errors}"
            )
            detail = {
                "start": self._busy_since,
                "end": end,
                "duration": duration,
                "tasks": self._busy_tasks,
                "erred": self._busy_erred,
            }
            self._raise("computation-done", f"{self._busy_since:.6f}", end, title, detail, 1)
        self._busy_since, self._idle_seen = None, False

    def workers(self, identity_workers: Mapping[str, object], now: float) -> None:
        """The workers' states from ``identity``: memory pauses and spilling."""
        first_look = self._spilled is None
        spilled = self._spilled if self._spilled is not None else {}
        paused_now = set()
        for address, info in identity_workers.items():
            if not isinstance(info, Mapping):
                continue
            worker = str(address)
            metrics = info.get("metrics")
            metrics = metrics if isinstance(metrics, Mapping) else {}
            if info.get("status") == "paused":
                paused_now.add(worker)
                if worker not in self._paused:
                    self._pause(worker, metrics, info.get("memory_limit"), now)
            disk = metrics.get("spilled_bytes")
            on_disk = disk.get("disk") if isinstance(disk, Mapping) else 0
            on_disk = on_disk if isinstance(on_disk, int) and on_disk > 0 else 0
            noticed = spilled.get(worker)
            if on_disk and first_look:
                spilled[worker] = (now, on_disk)  # spilling before recording began: not news
            elif on_disk and (
                noticed is None or (now - noticed[0] >= self.limits.spill_every and on_disk > noticed[1])
            ):
                spilled[worker] = (now, on_disk)
                self._spill(worker, on_disk, now)
        self._paused = paused_now
        self._spilled = spilled

    def _pause(self, worker: str, metrics: Mapping[str, object], limit: object, now: float) -> None:
        memory = metrics.get("memory")
        share = ""
        if isinstance(memory, int) and isinstance(limit, int) and limit > 0:
            share = f" at {memory / limit:.0%} of its memory limit ({_bytes(memory)} of {_bytes(limit)})"
        alert = self._alerts.get(("worker-paused", ""))
        count = (alert.count if alert else 0) + 1
        title = f"Worker {worker} paused{share}"
        if count > 1:
            title = f"{count} worker pauses; the last: {title}"
        self._raise("worker-paused", "", now, title, {"worker": worker}, count)

    def _spill(self, worker: str, on_disk: int, now: float) -> None:
        alert = self._alerts.get(("spilling", ""))
        count = (alert.count if alert else 0) + 1
        title = f"Worker {worker} is spilling to disk ({_bytes(on_disk)} on disk)"
        if count > 1:
            title = f"{count} spilling notices; the last: {title}"
        self._raise("spilling", "", now, title, {"worker": worker, "bytes": on_disk}, count)

    def worker_left(self, left: Departure, now: float) -> None:
        if left.expected:
            return
        alert = self._alerts.get(("worker-lost", ""))
        count = (alert.count if alert else 0) + 1
        why = f": {left.reason}" if left.reason else " (Dask gave no reason)"
        title = f"Worker {left.worker} left{why}"
        if count > 1:
            title = f"{count} workers lost; the last: {title}"
        self._raise("worker-lost", "", now, title, {"worker": left.worker, "reason": left.reason}, count)

    def answered(self, now: float) -> None:
        """The scheduler answered a tick."""
        self._failing_since = None
        if self._lost:
            self._lost = False
            alert = self._alerts.get(("scheduler-back", ""))
            count = (alert.count if alert else 0) + 1
            self._raise("scheduler-back", "", now, "The scheduler answers again", {}, count)

    def failed(self, error: str, now: float) -> None:
        """A tick could not reach the scheduler."""
        if self._failing_since is None:
            self._failing_since = now
        if self._lost or now - self._failing_since < self.limits.lost_after:
            return
        self._lost = True
        alert = self._alerts.get(("scheduler-lost", ""))
        count = (alert.count if alert else 0) + 1
        detail = {"error": error[:MAX_DETAIL_TEXT]}
        self._raise(
            "scheduler-lost", "", self._failing_since, "The scheduler stopped answering", detail, count
        )

    # -- keeping alerts ----------------------------------------------------------------------

    def _raise(
        self, kind: str, subject: str, now: float, title: str, detail: Mapping[str, object], count: int
    ) -> None:
        alert = self._alerts.get((kind, subject))
        kept = dict(detail)
        if alert is None:
            if len(self._alerts) >= self.limits.max_alerts:
                return
            alert = Alert(secrets.token_hex(6), self.source, kind, subject, now, now, title, kept, count)
        else:
            alert = Alert(
                alert.id, self.source, kind, subject, alert.time, max(now, alert.time), title, kept, count
            )
        self._alerts[(kind, subject)] = alert
        self._changed[alert.id] = alert


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
