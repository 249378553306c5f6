"""The recorder process: ``python -m dashdock.history.recorder <store path>`` records many schedulers.

One asyncio process outside the Jupyter server reads every recorded scheduler once a tick and
writes what it read to the store, in a single writer thread (the store is synchronous). The server
speaks to it over pipes, one JSON object per line: on stdin ``{"op": "record", "run": {...}}``,
``{"op": "stop", "run_id"}``, ``{"op": "settings", "computation_seconds"}`` and ``{"op": "quit"}``;
on stdout ``recording``, ``gap``, ``ended`` and ``error`` events. End of stdin means the server is
gone: every run ends and the process exits.

Each tick reads the task stream (task_stream.py: a lost task is a gap, never silent), the workers
(memory, pauses, spilling, who left and why), the task groups (progress, and whether the scheduler
is busy), and turns what it saw into alerts (alerts.py), written with the rest in one transaction.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dashdock.history.alerts import AlertLimits, AlertWatch, departure
from dashdock.history.model import Alert, Event, Gap, GroupProgress, Run, TaskRecord, WorkerSample
from dashdock.history.scheduler import (
    MAX_TEXT,
    Scheduler,
    SchedulerError,
    parse_address,
    to_group_progress,
    to_task_record,
    to_worker_samples,
)
from dashdock.history.task_stream import Restarted, TaskStreamReader


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
    max_line_bytes: int = 1 << 20  # one command on stdin


class Store(Protocol):
    """What the recorder needs of the store (store.py's HistoryStore)."""

    def begin_run(self, run: Run) -> None: ...
    def add_tasks(self, run_id: str, tasks: Sequence[TaskRecord]) -> bool: ...
    def add_gap(self, run_id: str, gap: Gap) -> bool: ...
    def add_worker_samples(self, run_id: str, samples: Sequence[WorkerSample]) -> bool: ...
    def add_group_progress(self, run_id: str, rows: Sequence[GroupProgress]) -> bool: ...
    def add_events(self, run_id: str, events: Sequence[Event]) -> bool: ...
    def add_alerts(self, run_id: str, alerts: Sequence[Alert]) -> bool: ...
    def last_alert(self, source: str, kinds: Sequence[str]) -> Alert | None: ...
    def end_run(self, run_id: str, end: float) -> None: ...


Emit = Callable[[dict[str, object]], None]


class Ended(Exception):
    """A run ends; the argument is the reason, written for the user."""


class Writer:
    """The store in one thread: writes keep their order and never block the recorder's loop."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="dashdock-history-store")

    async def run(self, fn: Callable[..., Any], *args: object) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._pool, fn, *args)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


@dataclass
class TickWrites:
    """What one tick writes, in one job of the writer thread."""

    tasks: list[TaskRecord]
    gap: Gap | None
    samples: list[WorkerSample]
    progress: list[GroupProgress]
    events: list[Event]
    alerts: list[Alert]

    def apply(self, store: Store, run_id: str) -> bool:
        """Write it all; False when the run is no longer in the store (the user deleted it)."""
        kept = True
        if self.tasks:
            kept &= store.add_tasks(run_id, self.tasks)  # one call: one transaction in the store
        if self.gap is not None:
            kept &= store.add_gap(run_id, self.gap)
        if self.samples:
            kept &= store.add_worker_samples(run_id, self.samples)
        if self.progress:
            kept &= store.add_group_progress(run_id, self.progress)
        if self.events:
            kept &= store.add_events(run_id, self.events)
        if self.alerts:
            kept &= store.add_alerts(run_id, self.alerts)
        return kept


class RunRecorder:
    """Records one scheduler for one run until it is stopped or the scheduler is gone."""

    def __init__(self, run: Run, writer: Writer, emit: Emit, limits: Limits, alerts: AlertWatch) -> None:
        self.run = run
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

    async def start(self) -> None:
        """Where the run begins in the task stream."""
        with contextlib.suppress(SchedulerError):  # not there yet: the first tick tries again
            await self.stream.begin()

    async def record(self) -> str:
        """Tick until stopped (one last tick then) or gone; returns why the run ended."""
        try:
            while not self.stopping.is_set():
                await self._tick_or_retry()
                with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                    await asyncio.wait_for(self.stopping.wait(), self.limits.tick)
            # The tasks that finished since the last tick belong to the run too.
            with contextlib.suppress(SchedulerError):
                await self.tick()
            return self.stop_reason
        except Ended as e:
            return str(e)
        finally:
            await self.scheduler.close()

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
        tasks: list[TaskRecord] = []
        events: list[Event] = []
        for raw in records:
            task = to_task_record(raw)
            if task is None:
                missed += 1  # a record we cannot read is a task we did not keep: say so
                continue
            tasks.append(task)
            if task.status == "error" and len(events) < self.limits.max_exceptions_per_tick:
                # The event keeps what the task row does not: the worker's traceback text.
                detail = {"key": task.key, "group": task.group, "exception": task.exception}
                detail["traceback"] = str(raw.get("traceback_text") or "")[:MAX_TEXT]
                events.append(Event(task.stop, "exception", task.worker, detail))
        if len(tasks) > self.limits.max_records_per_tick:
            missed += len(tasks) - self.limits.max_records_per_tick
            tasks = tasks[-self.limits.max_records_per_tick :]
        gap = Gap(self.last_read, now, missed) if missed else None
        self.alerts.tasks(tasks, now)
        samples: list[WorkerSample] = []
        progress: list[GroupProgress] = []
        problem: SchedulerError | None = None
        try:
            if self.ticks % self.limits.samples_every == 0:
                samples = await self._sample_workers(now, events)
            progress = await self._progress(now, tasks)
        except SchedulerError as e:
            problem = e  # the tasks read are written first: the cursor has moved past them
        writes = TickWrites(tasks, gap, samples, progress, events, self.alerts.take())
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

    async def _sample_workers(self, now: float, events: list[Event]) -> list[WorkerSample]:
        identity = await self.scheduler.identity(self.limits.max_workers)
        samples = to_worker_samples(identity, now, self.limits.max_workers)
        workers = identity.get("workers") if isinstance(identity, Mapping) else None
        present = {str(w) for w in workers} if isinstance(workers, Mapping) else set()
        before = self.workers
        joined = present - (before or set())
        left = (before or set()) - present
        events.extend(Event(now, "worker-joined", w, {"at_start": before is None}) for w in sorted(joined))
        self.workers = present
        if isinstance(workers, Mapping):
            self.alerts.workers(workers, now)
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


class Recorder:
    """Many runs at once, driven by commands; reports through ``emit``."""

    def __init__(
        self, store: Store, emit: Emit, limits: Limits | None = None, alert_limits: AlertLimits | None = None
    ) -> None:
        self.limits = limits or Limits()
        self.alert_limits = alert_limits or AlertLimits()
        self.writer = Writer(store)
        self.emit = emit
        self.runs: dict[str, tuple[RunRecorder, asyncio.Task[None]]] = {}

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Commands until ``quit`` or the end of input; then every run ends."""
        reason = "The Jupyter server stopped."  # end of input: nobody is left to ask for anything
        try:
            async for line in self._lines(reader):
                if line.strip() and self.command(line) == "quit":
                    reason = "The recorder was asked to quit."
                    break
            await self.stop_all(reason)
        finally:
            self.writer.close()

    async def _lines(self, reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
        """Lines of input; one longer than ``max_line_bytes`` is reported and skipped whole."""
        pending, skipping = bytearray(), False
        while chunk := await reader.read(1 << 16):
            pending += chunk
            while (end := pending.find(b"\n")) >= 0:
                line = bytes(pending[:end])
                del pending[: end + 1]
                if skipping:
                    skipping = False  # the tail of the long line
                else:
                    yield line
            if len(pending) > self.limits.max_line_bytes:
                if not skipping:
                    limit = self.limits.max_line_bytes
                    self._error(None, f"A command longer than {limit} bytes was ignored.")
                pending.clear()
                skipping = True
        if pending and not skipping:
            yield bytes(pending)

    def command(self, line: bytes) -> str | None:
        """Carry out one command line; a bad one is reported, never fatal."""
        try:
            command = json.loads(line)
        except ValueError:
            self._error(None, "A command that is not JSON was ignored.")
            return None
        op = command.get("op") if isinstance(command, dict) else None
        if op == "record":
            self._record(command.get("run"))
        elif op == "stop":
            self._stop(command.get("run_id"))
        elif op == "settings":
            self._settings(command)
        elif op == "quit":
            return "quit"
        else:
            self._error(None, f"Unknown command {str(op)[:40]!r} was ignored.")
        return None

    def _settings(self, command: dict[str, object]) -> None:
        seconds = command.get("computation_seconds")
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 <= seconds <= 86_400:
            self._error(None, "computation_seconds must be a number of seconds from 0 to 86400.")
            return
        self.alert_limits = dataclasses.replace(self.alert_limits, computation_seconds=float(seconds))
        for recorder, _ in self.runs.values():
            recorder.alerts.limits = self.alert_limits

    def _record(self, fields: object) -> None:
        run_id = str(fields.get("id")) if isinstance(fields, dict) else None
        try:
            if not isinstance(fields, dict):
                raise TypeError
            run = Run(**fields)
            texts = (run.id, run.source, run.name, run.scheduler)
            if not all(isinstance(t, str) and t for t in texts) or not isinstance(run.start, (int, float)):
                raise TypeError
        except TypeError:
            self._error(run_id, "A record command without a valid run was ignored.")
            return
        if run.id in self.runs:
            self._error(run.id, "This run is recorded already.")
            return
        if len(self.runs) >= self.limits.max_runs:
            self._error(run.id, f"{self.limits.max_runs} schedulers are recorded already; this one is not.")
            self.emit({"event": "ended", "run_id": run.id, "reason": "Too many schedulers recorded at once."})
            return
        try:
            parse_address(run.scheduler)
        except SchedulerError as e:
            self._error(run.id, str(e))
            self.emit({"event": "ended", "run_id": run.id, "reason": str(e)})
            return
        recorder = RunRecorder(
            run, self.writer, self.emit, self.limits, AlertWatch(run.source, self.alert_limits)
        )
        self.runs[run.id] = (recorder, asyncio.ensure_future(self._lifetime(recorder)))

    async def _lifetime(self, recorder: RunRecorder) -> None:
        run = recorder.run
        try:
            await self.writer.run(self.writer.store.begin_run, run)
            said = await self.writer.run(
                self.writer.store.last_alert, run.source, ("scheduler-lost", "scheduler-back")
            )
            # The source's last word was that its scheduler was lost: this run's first answer is news.
            recorder.alerts.lost_before(said is not None and said.kind == "scheduler-lost")
        except Exception as e:
            self._error(run.id, f"The history store could not begin this run: {e}")
            self.runs.pop(run.id, None)
            self.emit(
                {"event": "ended", "run_id": run.id, "reason": "The history store could not be written."}
            )
            return
        await recorder.start()
        self.emit({"event": "recording", "run_id": run.id})
        try:
            reason = await recorder.record()
        except Exception as e:  # a bug must end one run, not the recorder and every other run
            reason = f"The recorder failed: {type(e).__name__}: {e}"
        with contextlib.suppress(Exception):
            await self.writer.run(self.writer.store.end_run, run.id, time.time())
        self.runs.pop(run.id, None)
        self.emit({"event": "ended", "run_id": run.id, "reason": reason, "restarted": recorder.restarted})

    def _stop(self, run_id: object) -> None:
        entry = self.runs.get(str(run_id))
        if entry is None:
            self._error(str(run_id)[:40], "No such run is being recorded.")
            return
        entry[0].stopping.set()

    async def stop_all(self, reason: str) -> None:
        """Every run takes its last tick and ends, with ``reason``."""
        tasks = []
        for recorder, task in list(self.runs.values()):
            recorder.stop_reason = reason
            recorder.stopping.set()
            tasks.append(task)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _error(self, run_id: str | None, message: str) -> None:
        self.emit({"event": "error", "run_id": run_id, "message": message})


def _emit_stdout(event: dict[str, object]) -> None:
    try:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):  # the server is gone; end of stdin follows
        pass


async def _main(path: Path, limits: Limits, alert_limits: AlertLimits) -> None:
    from dashdock.history.store import HistoryStore

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limits.max_line_bytes)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    try:
        store = HistoryStore.open(path)
    except Exception as e:
        _emit_stdout(
            {"event": "error", "run_id": None, "message": f"The history store cannot be opened: {e}"}
        )
        raise SystemExit(1) from None
    try:
        await Recorder(store, _emit_stdout, limits, alert_limits).serve(reader)
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dashdock.history.recorder")
    parser.add_argument("store", type=Path)
    parser.add_argument("--tick", type=float, default=Limits.tick)
    parser.add_argument("--max-runs", type=int, default=Limits.max_runs)
    parser.add_argument("--max-records-per-tick", type=int, default=Limits.max_records_per_tick)
    parser.add_argument("--gone-after", type=float, default=Limits.gone_after)
    parser.add_argument("--call-timeout", type=float, default=Limits.call_timeout)
    parser.add_argument("--computation-seconds", type=float, default=AlertLimits.computation_seconds)
    parser.add_argument("--max-alerts", type=int, default=AlertLimits.max_alerts)
    args = parser.parse_args(argv)
    limits = Limits(
        tick=args.tick,
        max_runs=args.max_runs,
        max_records_per_tick=args.max_records_per_tick,
        gone_after=args.gone_after,
        call_timeout=args.call_timeout,
    )
    alert_limits = AlertLimits(computation_seconds=args.computation_seconds, max_alerts=args.max_alerts)
    asyncio.run(_main(args.store, limits, alert_limits))


if __name__ == "__main__":
    main()
