"""One scheduler recorded: ``RunRecorder`` reads it once a tick and writes what it read.

Each tick reads the task stream (task_stream.py: a lost task is a gap, never silent), the workers
(memory, pauses, spilling, who left and why), the task groups (progress, and whether the scheduler
is busy), and turns what it saw into alerts (alerts.py); everything a tick read is written in one
job of the store's single writer thread, so the recorder's loop never waits on the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dashdock.history.addresses import last_recorded_as_any
from dashdock.history.model import (
    Event,
    Gap,
    GroupProgress,
    MetricSample,
    Run,
    TaskRecord,
    WorkerSample,
    clip_task,
)
from dashdock.history.recorder.alerts import AlertWatch, departure
from dashdock.history.recorder.mirror_reader import MirrorReader
from dashdock.history.recorder.run_writes import TickWrites, Writer
from dashdock.history.recorder.scheduler import (
    MAX_TEXT,
    Scheduler,
    SchedulerError,
    to_group_progress,
    to_metric_samples,
    to_task_record,
    to_worker_samples,
)
from dashdock.history.recorder.task_stream import Restarted, TaskStreamReader

if TYPE_CHECKING:  # imports Dask's distributed, which only a recorder serving plots needs
    from dashdock.history.recorder.mirror import SchedulerMirror


@dataclass(frozen=True)
class Limits:
    """Every bound of the recorder, each with the default the server uses."""

    tick: float = 1.0  # seconds between two reads of a scheduler
    max_runs: int = 16  # schedulers recorded at once
    max_records_per_tick: int = 50_000  # above Dask's throughput at a 1 s tick; more counts as a gap
    samples_every: int = 1  # ticks between worker samples (memory, CPU, joined/left)
    progress_every: int = 2  # ticks between task-group progress rows
    call_timeout: float = 5.0  # seconds for one call to a scheduler
    gone_after: float = 30.0  # a scheduler failing for this long ends its run
    max_workers: int = 1024  # workers sampled per scheduler
    max_groups: int = 1000  # task groups in one progress sample
    max_exceptions_per_tick: int = 100  # "exception" events per tick (every erred task keeps its text)
    max_departures_per_tick: int = 16  # workers that left whose reason is asked for, per tick
    # Ticks between reads of Fine Performance Metrics totals (kept only when they changed; the
    # last tick of a run reads them too).
    fine_metrics_every: int = 30
    # Idle ticks after work before its totals are read as well (workers' heartbeats bring a
    # computation's last figures): a computation's own window then begins and ends on a snapshot.
    fine_metrics_settle: int = 3
    state_offer_every: int = 5  # ticks between asking a scheduler whether it offers its plot state
    # Add dashdock's plot-state plugin to a scheduler that does not offer it (a plain one added by URL).
    install_plugin: bool = True
    max_line_bytes: int = 1 << 20  # one command on stdin


Emit = Callable[[dict[str, object]], None]


class Ended(Exception):
    """A run ends; the argument is the reason, written for the user."""


# Tasks of a scheduler's backlog that finished this long before the run began raise no alert.
BACKLOG_ALERTS = 60.0


class RunRecorder:
    """Records one scheduler for one run until it is stopped or the scheduler is gone."""

    def __init__(
        self,
        run: Run,
        writer: Writer,
        emit: Emit,
        limits: Limits,
        alerts: AlertWatch,
        mirror: SchedulerMirror | None = None,
    ) -> None:
        self.run = run
        self.mirror = mirror  # what Dask's drawn plots read (plot_server.py), when they are served
        self.writer = writer
        self.emit = emit
        self.limits = limits
        self.alerts = alerts
        self.scheduler = Scheduler(run.scheduler, timeout=limits.call_timeout)
        self.stream = TaskStreamReader(self.scheduler)
        self.stopping = asyncio.Event()
        self.stop_reason = "Recording was stopped."
        self.last_read = run.start
        self.ticks = 0
        self.workers: set[str] | None = None
        self.progress: dict[str, dict[str, int]] = {}
        self.failing_since: float | None = None
        self.restarted = False  # another scheduler answers at the address: record it at once
        # (finish time, keys) of the newest task an earlier run of this scheduler kept
        self.recorded_before: tuple[float, frozenset[str]] | None = None
        self.backlog = True  # the next read is the first: the scheduler's buffer so far
        self.scheduler_id: str | None = None  # identity's id: another one is another scheduler
        self.metric_cursor: dict[str, int] = {}  # custom metric -> the last sample read
        self.fine_metrics: dict[str, float] | None = None  # the totals recorded last
        self.idle_ticks = 0  # ticks since the last one that read a finished task
        self.gpus: int | None = None  # workers reporting GPU metrics, as last emitted
        self.paused: set[str] = set()  # workers paused for memory at the last sample
        self.monitor_written = 0  # the scheduler monitor's rows written (its count then)
        self.state_read = 0  # the mirror's changes when the loop's tick interval was written
        self.mirror_reader = (
            MirrorReader(
                self.scheduler, mirror, emit, run.id, limits.state_offer_every, limits.install_plugin
            )
            if mirror is not None
            else None
        )

    async def start(self) -> None:
        """Where the run begins in the task stream: the scheduler's whole buffer, less what an
        earlier run of the same scheduler kept already (a server restart, recording switched back on)."""
        with contextlib.suppress(Exception):  # a store that cannot say: the buffer is new to it
            self.recorded_before = await self.writer.run(  # under any spelling of its address
                last_recorded_as_any, self.writer.store, self.run.scheduler, self.run.id
            )
        with contextlib.suppress(SchedulerError):  # not there yet: the first tick tries again
            await self.stream.begin()

    def _kept_before(self, task: TaskRecord) -> bool:
        """Whether an earlier run of this scheduler has ``task`` (only the first read, the buffer's
        backlog, is checked; later reads are new by the stream's counter)."""
        if self.recorded_before is None:
            return False
        stop, keys = self.recorded_before
        return task.stop < stop or (task.stop == stop and task.key in keys)

    async def record(self) -> str:
        """Tick until stopped (one last tick then) or gone; returns why the run ended."""
        try:
            while not self.stopping.is_set():
                await self._tick_or_retry()
                await self._rest()
            # The tasks that finished since the last tick belong to the run too.
            with contextlib.suppress(SchedulerError):
                await self.tick()
            return self.stop_reason
        except Ended as e:
            return str(e)
        finally:
            await self.scheduler.close()

    async def _rest(self) -> None:
        """Waits out the tick, or until stopped. Meanwhile, when a plot whose part of the state is
        read only while watched gets its first page, reads the state at once: the page opens with
        its groups (or graph, ...) instead of "Scheduler is empty." until the next tick."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.tick
        mirror, reader = self.mirror, self.mirror_reader
        while not self.stopping.is_set() and (left := deadline - loop.time()) > 0:
            waits = {asyncio.ensure_future(self.stopping.wait())}
            if mirror is not None and reader is not None:
                waits.add(asyncio.ensure_future(mirror.read_soon.wait()))
            _, pending = await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
            if mirror is not None and reader is not None and mirror.read_soon.is_set():
                mirror.read_soon.clear()
                with contextlib.suppress(SchedulerError):  # the next tick says what went wrong
                    await reader.read(self.ticks)

    async def _tick_or_retry(self) -> None:
        try:
            await self.tick()
            self.failing_since = None
        except SchedulerError as e:
            self.alerts.failed(str(e), time.time())
            await self._write_alerts()
            now = time.monotonic()
            if self.failing_since is None:
                self.failing_since = now
                self.emit({"event": "error", "run_id": self.run.id, "message": f"{e} Retrying."})
            elif now - self.failing_since >= self.limits.gone_after:
                raise Ended(
                    f"The scheduler at {self.run.scheduler} stopped answering "
                    f"{self.limits.gone_after:g} s ago: {e}"
                ) from None

    async def _write_alerts(self) -> None:
        """Alerts noticed outside a tick's writes (the scheduler not answering)."""
        alerts = self.alerts.take()
        if alerts:
            with contextlib.suppress(Exception):  # the next tick's writes say whether the store is broken
                await self.writer.run(self.writer.store.add_alerts, self.run.id, alerts)

    async def tick(self) -> None:
        now = time.time()
        self.ticks += 1
        try:
            records, missed = await self.stream.read()
        except Restarted as e:
            self.alerts.answered(now)
            await self._write_alerts()
            self.restarted = True
            raise Ended(str(e)) from None
        self.alerts.answered(now)
        if self.mirror is not None:
            self.mirror.answered_at = now  # its pages say when the data they show is old (stale.py)
        tasks: list[TaskRecord] = []
        events: list[Event] = []
        for raw in records:
            task = to_task_record(raw)
            if task is None:
                missed += 1  # a record we cannot read is a task we did not keep: say so
                continue
            # Clipped at once (the store clips again): a client chooses its keys, and the alerts
            # name groups, so a 1 MiB key never travels further than this.
            task = clip_task(task)
            if self.mirror is not None:  # the plots show the newest tasks, recorded before or not
                self.mirror.add_task(raw.get("key"), task)
            if self._kept_before(task):
                continue
            tasks.append(task)
            if task.status == "error" and len(events) < self.limits.max_exceptions_per_tick:
                # The event keeps what the task row does not: the worker's traceback text.
                detail: dict[str, object] = {
                    "key": task.key,
                    "group": task.group,
                    "exception": task.exception,
                }
                detail["traceback"] = str(raw.get("traceback_text") or "")[:MAX_TEXT]
                events.append(Event(task.stop, "exception", task.worker, detail))
        if len(tasks) > self.limits.max_records_per_tick:
            missed += len(tasks) - self.limits.max_records_per_tick
            tasks = tasks[-self.limits.max_records_per_tick :]
        gap = Gap(self.last_read, now, missed) if missed else None
        if self.backlog:
            # The first read is the scheduler's backlog: what failed long before recording began is
            # history, not news (tasks of the last minute before it still alert).
            self.backlog, self.recorded_before = False, None
            self.alerts.tasks([t for t in tasks if t.stop >= self.run.start - BACKLOG_ALERTS], now)
        else:
            self.alerts.tasks(tasks, now)
        samples: list[WorkerSample] = []
        metric_samples: list[MetricSample] = []
        progress: list[GroupProgress] = []
        problem: SchedulerError | None = None
        try:
            if self.ticks % self.limits.samples_every == 0:
                samples = await self._sample_workers(now, events)
                metric_samples = await self._metric_samples()
            self.idle_ticks = 0 if tasks else self.idle_ticks + 1
            settled = self.idle_ticks == self.limits.fine_metrics_settle
            if self.ticks % self.limits.fine_metrics_every == 0 or settled or self.stopping.is_set():
                totals = await self.scheduler.fine_metrics()
                if totals and totals != self.fine_metrics:
                    self.fine_metrics = totals
                    events.append(Event(now, "metrics", None, dict(totals)))
            progress = await self._progress(now, tasks)
            if self.mirror_reader is not None:
                await self.mirror_reader.read(self.ticks)
        except SchedulerError as e:
            problem = e  # the tasks read are written first: the cursor has moved past them
        writes = TickWrites(tasks, gap, samples, progress, events, self.alerts.take(), metric_samples)
        writes.scheduler_cpu, writes.scheduler_loop = self._scheduler_cpu(), self._scheduler_loop(now)
        try:
            kept = await self.writer.run(writes.apply, self.writer.store, self.run.id)
        except Exception as e:  # a store that cannot be written loses tasks: the run cannot go on
            raise Ended(f"The history store could not be written: {e}") from None
        if not kept:
            raise Ended("This run was deleted while it was recorded.")
        self.last_read = now
        if gap is not None:
            self.emit({"event": "gap", "run_id": self.run.id, "missed": missed})
        if problem is not None:
            raise problem

    def _scheduler_cpu(self) -> list[tuple[float, float]]:
        """The scheduler's CPU rows its monitor measured since the last tick, when it offers its
        plot state (read for the drawn plots; a plain scheduler does not say)."""
        if self.mirror is None:
            return []
        monitor = self.mirror.monitor
        times, cpu = monitor.quantities["time"], monitor.quantities["cpu"]
        new = min(monitor.count - self.monitor_written, len(times), len(cpu))
        self.monitor_written = monitor.count
        return (
            list(zip(list(times)[len(times) - new :], list(cpu)[len(cpu) - new :], strict=True))
            if new > 0
            else []
        )

    def _scheduler_loop(self, now: float) -> list[tuple[float, float]]:
        """The scheduler's event loop's observed tick interval, when this tick read its state: a
        loop held by its own work ticks far less often than its 20 ms (Dask's Contention plot)."""
        if self.mirror is None or self.mirror.changes == self.state_read:
            return []
        self.state_read = self.mirror.changes
        return [(now, float(self.mirror._tick_interval_observed))]

    async def _metric_samples(self) -> list[MetricSample]:
        """What the custom metrics sampled since the last read, when a notebook added some."""
        if not await self.scheduler.has_metric_board():
            return []
        return to_metric_samples(await self.scheduler.metric_samples(self.metric_cursor), self.metric_cursor)

    async def _sample_workers(self, now: float, events: list[Event]) -> list[WorkerSample]:
        identity = await self.scheduler.identity(self.limits.max_workers)
        scheduler_id = identity.get("id") if isinstance(identity, Mapping) else None
        if self.scheduler_id is not None and scheduler_id != self.scheduler_id:
            # Another scheduler at the same address (a restart on the same port): a new run, which
            # reads its task stream from the start. Nothing of this tick is written to this one.
            self.alerts.answered(now)
            await self._write_alerts()
            self.restarted = True
            raise Ended(f"The scheduler at {self.run.scheduler} was restarted (it is another scheduler now).")
        self.scheduler_id = scheduler_id if isinstance(scheduler_id, str) else None
        samples = to_worker_samples(identity, now, self.limits.max_workers)
        workers = identity.get("workers") if isinstance(identity, Mapping) else None
        present = {str(w) for w in workers} if isinstance(workers, Mapping) else set()
        before = self.workers
        joined = present - (before or set())
        left = (before or set()) - present
        events.extend(
            Event(now, "worker-joined", w, {"at_start": before is None, "threads": _threads(workers, w)})
            for w in sorted(joined)
        )
        self.workers = present
        if isinstance(workers, Mapping):
            self.alerts.workers(workers, now)
            # When each worker was paused for memory, and for how long (diagnosis counts it).
            paused = {
                str(w)
                for w, info in workers.items()
                if isinstance(info, Mapping) and info.get("status") == "paused"
            }
            events.extend(Event(now, "worker-paused", w) for w in sorted(paused - self.paused))
            events.extend(Event(now, "worker-resumed", w) for w in sorted((self.paused - paused) & present))
            self.paused = paused
            gpus = sum(1 for info in workers.values() if _reports_gpus(info))
            if gpus != self.gpus:
                self.gpus = gpus
                self.emit({"event": "gpus", "run_id": self.run.id, "workers": gpus})
        if left:
            memory_restarts = await self.scheduler.events("worker-restart-memory")
            for worker in sorted(left)[: self.limits.max_departures_per_tick]:
                gone = departure(worker, await self.scheduler.events(worker), memory_restarts)
                events.append(
                    Event(now, "worker-left", worker, {"reason": gone.reason, "expected": gone.expected})
                )
                self.alerts.worker_left(gone, now)
            events.extend(
                Event(now, "worker-left", w) for w in sorted(left)[self.limits.max_departures_per_tick :]
            )
        return samples

    async def _progress(self, now: float, tasks: Sequence[TaskRecord]) -> list[GroupProgress]:
        rows = to_group_progress(await self.scheduler.task_prefix_states(), now, self.limits.max_groups)
        # Read every tick: whether anything waits or runs marks a computation's start and end.
        self.alerts.busy(
            any(row.states.get("processing") or row.states.get("waiting") for row in rows), now, tasks
        )
        if self.ticks % self.limits.progress_every:
            return []
        # Only groups whose counts moved: a long run of idle groups costs nothing.
        changed = [row for row in rows if self.progress.get(row.group) != row.states]
        self.progress.update((row.group, row.states) for row in changed)
        return changed


# Metrics a worker's heartbeat carries when NVML works there (distributed's system_monitor.py).
_GPU_METRICS = ("gpu_utilization", "gpu-memory-total")


def _threads(workers: object, worker: str) -> int | None:
    """A worker's threads as its identity reports them (diagnosis counts idle ones)."""
    info = workers.get(worker) if isinstance(workers, Mapping) else None
    threads = info.get("nthreads") if isinstance(info, Mapping) else None
    return threads if isinstance(threads, int) and not isinstance(threads, bool) else None


def _reports_gpus(info: object) -> bool:
    metrics = info.get("metrics") if isinstance(info, Mapping) else None
    return isinstance(metrics, Mapping) and any(name in metrics for name in _GPU_METRICS)
