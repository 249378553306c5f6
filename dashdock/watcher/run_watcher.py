"""One scheduler watched: ``RunWatcher`` reads it once a tick and hands what it read on.

Each tick reads the task stream (task_stream.py: a lost task is a gap, never silent; tasks_read.py),
the workers (workers_read.py: memory, pauses, who left and why), the task groups (progress, and
whether the scheduler is busy) and, for live drawing, the scheduler's plot state (mirror_reader.py).
The alerts (``alerts.detection``) and the mirror (``live.mirror``) are fed as it reads; everything a
tick read is written in one job of the store's single writer thread (``history.run_writes``), so
the watcher's loop never waits on the file.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from dashdock.alerts.detection import AlertWatch
from dashdock.history.addresses import last_recorded_as_any
from dashdock.history.model import Event, Gap, GroupProgress, MetricSample, Run, TaskRecord, WorkerSample
from dashdock.history.run_writes import TickWrites, Writer
from dashdock.watcher.limits import Emit, Ended, Limits
from dashdock.watcher.mirror_reader import MirrorReader
from dashdock.watcher.scheduler import (
    Scheduler,
    SchedulerBusy,
    SchedulerError,
    to_group_progress,
    to_metric_samples,
)
from dashdock.watcher.task_stream import Restarted, TaskStreamReader
from dashdock.watcher.tasks_read import TasksRead, read_tasks
from dashdock.watcher.workers_read import WorkersRead

if TYPE_CHECKING:  # imports Dask's distributed, which only a watcher serving plots needs
    from dashdock.live.mirror import SchedulerMirror


# Tasks of a scheduler's backlog that finished this long before the run began raise no alert.
BACKLOG_ALERTS = 60.0


class RunWatcher:
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
        self.between = TasksRead()  # what live reads found since the last tick, written with the next
        self.state_read_at = 0.0  # monotonic time of the last live read of the plot state
        self.live_at = 0.0  # the event loop's time of the next live read
        self.stopping = asyncio.Event()
        self.stop_reason = "Recording was stopped."
        self.last_read = run.start
        self.ticks = 0
        self.workers = WorkersRead(run, self.scheduler, alerts, emit, limits)
        self.progress: dict[str, dict[str, int]] = {}
        self.failing_since: float | None = None
        self.failure_said = False  # the server was told (a late answer only after ``busy_grace``)
        self.restarted = False  # another scheduler answers at the address: record it at once
        # (finish time, keys) of the newest task an earlier run of this scheduler kept
        self.recorded_before: tuple[float, frozenset[str]] | None = None
        self.backlog = True  # the next read is the first: the scheduler's buffer so far
        self.metric_cursor: dict[str, int] = {}  # custom metric -> the last sample read
        self.fine_metrics: dict[str, float] | None = None  # the totals recorded last
        self.idle_ticks = 0  # ticks since the last one that read a finished task
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
        its groups (or graph, ...) instead of "Scheduler is empty." until the next tick. While any
        drawn page is open, reads for the mirror every ``live_tick`` (``_live_read``)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.tick
        mirror, reader = self.mirror, self.mirror_reader
        while not self.stopping.is_set() and (left := deadline - loop.time()) > 0:
            live = mirror is not None and reader is not None and mirror.watched_at_all()
            waits = {asyncio.ensure_future(self.stopping.wait())}
            if mirror is not None and reader is not None:
                mirror.page_opened.clear()
                waits.add(asyncio.ensure_future(mirror.read_soon.wait()))
                waits.add(asyncio.ensure_future(mirror.page_opened.wait()))
            timeout = min(left, max(0.0, self.live_at - loop.time())) if live else left
            _, pending = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            for waiting in pending:
                waiting.cancel()
            now = loop.time()
            if self.stopping.is_set() or deadline - now <= 0:
                break
            if mirror is not None and reader is not None and mirror.read_soon.is_set():
                mirror.read_soon.clear()
                with contextlib.suppress(SchedulerError):  # the next tick says what went wrong
                    await reader.read(self.ticks)
            elif live and now >= self.live_at and mirror is not None and mirror.watched_at_all():
                # On a fixed cadence, so a page polling as often sees a change at each look; a
                # read that overran is followed by a pause, never by reads back to back.
                live_tick = self.limits.live_tick
                self.live_at = max(self.live_at + live_tick, now + live_tick / 2)
                await self._live_read()

    async def _live_read(self) -> None:
        """The task stream and the plot state read for an open drawn page between two ticks: its
        mirror gets them now, the store with the next tick (``between``). Any failure is left to
        the tick, which reads again and says what went wrong."""
        try:
            records, missed = await self.stream.read()
        except (Restarted, SchedulerError):
            return
        self.mirror_answered(time.time())
        self._gather(records, missed)
        now = time.monotonic()
        reader = self.mirror_reader
        if reader is not None and reader.offered and now - self.state_read_at >= self.limits.live_state_tick:
            self.state_read_at = now
            with contextlib.suppress(SchedulerError):
                await reader.read(self.ticks)

    def _gather(self, records: Sequence[Mapping[str, Any]], missed: int) -> None:
        """A read's records checked (the mirror gets them at once) and added to what the next
        tick writes (``between``), within one tick's bounds."""
        limits = self.limits
        read = read_tasks(
            records,
            self._kept_before,
            self.mirror,
            limits.max_exceptions_per_tick,
            limits.max_records_per_tick,
        )
        read.missed += missed
        self.between = self.between.then(read, limits.max_exceptions_per_tick, limits.max_records_per_tick)

    def mirror_answered(self, now: float) -> None:
        if self.mirror is not None:
            self.mirror.answered_at = now  # its pages say when the data they show is old (stale.py)

    async def _tick_or_retry(self) -> None:
        try:
            await self.tick()
            self.failing_since = None
        except SchedulerError as e:
            self.alerts.failed(str(e), time.time())
            await self._write_alerts()
            now = time.monotonic()
            if self.failing_since is None:
                self.failing_since, self.failure_said = now, False
            failing_for = now - self.failing_since
            late = isinstance(e, SchedulerBusy) and failing_for < self.limits.busy_grace
            if not self.failure_said and not late:
                self.failure_said = True
                self.emit({"event": "error", "run_id": self.run.id, "message": f"{e} Retrying."})
            elif failing_for >= self.limits.gone_after:
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
        self.mirror_answered(time.time())  # a slow answer is still fresh when it comes
        self._gather(records, missed)
        read, self.between = self.between, TasksRead()
        tasks, events, missed = read.tasks, read.events, read.missed
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
        if self.mirror_reader is not None:
            writes.scheduler_cpu = self.mirror_reader.scheduler_cpu()
            writes.scheduler_loop = self.mirror_reader.scheduler_loop(now)
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

    async def _metric_samples(self) -> list[MetricSample]:
        """What the custom metrics sampled since the last read, when a notebook added some."""
        if not await self.scheduler.has_metric_board():
            return []
        return to_metric_samples(await self.scheduler.metric_samples(self.metric_cursor), self.metric_cursor)

    async def _sample_workers(self, now: float, events: list[Event]) -> list[WorkerSample]:
        try:
            return await self.workers.sample(now, events)
        except Ended:
            # Another scheduler at the same address: a new run, which reads its task stream from
            # the start. Nothing of this tick is written to this one.
            self.alerts.answered(now)
            await self._write_alerts()
            self.restarted = True
            raise

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
