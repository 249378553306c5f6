"""The recorder process: ``python -m dashdock.watcher <store path>`` records many schedulers.

One asyncio process outside the Jupyter server reads every recorded scheduler once a tick and
writes what it read to the store, in a single writer thread (the store is synchronous). The server
speaks to it over pipes, one JSON object per line: on stdin ``{"op": "record", "run": {...}}``,
``{"op": "stop", "run_id"}``, ``{"op": "settings", "computation_seconds"}`` and ``{"op": "quit"}``;
on stdout ``recording``, ``answering`` (a run's scheduler answers, first or again after failing),
``gap``, ``ended`` and ``error`` events, and with ``--plots`` one ``plots`` event (the port and
secret of the plot server, plot_server.py, started with the first run) and a ``state`` event per
run whose scheduler offers its workers and prefixes to the plots. End of stdin means the
server is gone: every run ends and the process exits.

The process runs under an address-space cap (``--max-memory``, RLIMIT_AS): whatever a hostile
scheduler makes it allocate, it can take down at most this process, never the server; a read
that hits the cap fails as that scheduler's error (scheduler.py), and the server restarts a
recorder that died.

Each scheduler is a ``RunWatcher`` (run_watcher.py); this module (started by ``__main__.py``) is
the process around them:
commands in, events out, every run ended when the server goes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import resource
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from dashdock.alerts.detection import AlertLimits, AlertWatch
from dashdock.history.model import Run
from dashdock.history.run_writes import Store, Writer
from dashdock.watcher.limits import Emit, Limits
from dashdock.watcher.run_watcher import RunWatcher
from dashdock.watcher.scheduler import SchedulerError, parse_address

if TYPE_CHECKING:
    from dashdock.live.mirror import SchedulerMirror
    from dashdock.live.plot_server import PlotServer


class _AnsweringWatch(AlertWatch):
    """A run's alerts that also tell the server when its scheduler answers after not answering
    (or for the first time), so what the server shows about the source is cleared."""

    def __init__(self, source: str, limits: AlertLimits, on_answer: Callable[[], None]) -> None:
        super().__init__(source, limits)
        self._on_answer = on_answer
        self._unanswered = True

    def answered(self, now: float) -> None:
        super().answered(now)
        if self._unanswered:
            self._unanswered = False
            self._on_answer()

    def failed(self, error: str, now: float) -> None:
        super().failed(error, now)
        self._unanswered = True


class Recorder:
    """Many runs at once, driven by commands; reports through ``emit``."""

    def __init__(
        self,
        store: Store,
        emit: Emit,
        limits: Limits | None = None,
        alert_limits: AlertLimits | None = None,
        mirrors: bool = False,
    ) -> None:
        self.mirrors = mirrors  # each run keeps a SchedulerMirror, for the plots served from here
        self.plot_server: PlotServer | None = None  # started with the first run (_start_plots)
        self.limits = limits or Limits()
        self.alert_limits = alert_limits or AlertLimits()
        self.writer = Writer(store)
        self.emit = emit
        self.runs: dict[str, tuple[RunWatcher, asyncio.Task[None]]] = {}

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
        run_id = run.id
        watch = _AnsweringWatch(
            run.source, self.alert_limits, lambda: self.emit({"event": "answering", "run_id": run_id})
        )
        mirror = None
        if self.mirrors and self._start_plots():
            from dashdock.live.mirror import SchedulerMirror

            mirror = SchedulerMirror()
        recorder = RunWatcher(run, self.writer, self.emit, self.limits, watch, mirror)
        self.runs[run.id] = (recorder, asyncio.ensure_future(self._lifetime(recorder)))

    async def _lifetime(self, recorder: RunWatcher) -> None:
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
        except MemoryError:  # the cap was hit while reading this scheduler: it ends, the others go on
            reason = "The recorder ran out of memory reading this scheduler (its memory cap was reached)."
        except Exception as e:  # a bug must end one run, not the recorder and every other run
            reason = f"The recorder failed: {type(e).__name__}: {e}"
        with contextlib.suppress(Exception):
            await self.writer.run(self.writer.store.end_run, run.id, time.time())
        self.runs.pop(run.id, None)
        if self.plot_server is not None:
            self.plot_server.end(run.id)
        self.emit({"event": "ended", "run_id": run.id, "reason": reason, "restarted": recorder.restarted})

    def _start_plots(self) -> bool:
        """Start the plot server with the first run (no recorded scheduler, no Bokeh server and
        none of its imports); whether it serves."""
        if self.plot_server is not None:
            return True
        try:
            from dashdock.live.plot_server import PlotServer

            server = PlotServer(self.mirror_of)
            server.start()
        except Exception as e:  # the runs are recorded all the same; their plots stay Dask's
            self.mirrors = False
            self._error(None, f"Dask's plots cannot be served from the recording: {type(e).__name__}: {e}")
            return False
        self.plot_server = server
        # Over the pipe to the Jupyter server only: the secret opens the plots.
        self.emit({"event": "plots", "port": server.port, "secret": server.secret})
        return True

    def stop_plots(self) -> None:
        if self.plot_server is not None:
            self.plot_server.stop()
            self.plot_server = None

    def mirror_of(self, run_id: str) -> SchedulerMirror | None:
        """The mirror of a run being recorded (None: unknown, ended, or plots are not served)."""
        entry = self.runs.get(run_id)
        return entry[0].mirror if entry is not None else None

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


async def _main(path: Path, limits: Limits, alert_limits: AlertLimits, plots: bool) -> None:
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
    recorder = Recorder(store, _emit_stdout, limits, alert_limits, mirrors=plots)
    try:
        await recorder.serve(reader)
    finally:
        recorder.stop_plots()
        close = getattr(store, "close", None)
        if callable(close):
            close()


def cap_memory(max_bytes: int) -> None:
    """Cap this process's address space (RLIMIT_AS), never above a cap it already has."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        max_bytes = min(max_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, hard if hard != resource.RLIM_INFINITY else max_bytes))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dashdock.watcher")
    parser.add_argument("store", type=Path)
    parser.add_argument("--tick", type=float, default=Limits.tick)
    parser.add_argument("--max-runs", type=int, default=Limits.max_runs)
    parser.add_argument("--max-records-per-tick", type=int, default=Limits.max_records_per_tick)
    parser.add_argument("--gone-after", type=float, default=Limits.gone_after)
    parser.add_argument("--call-timeout", type=float, default=Limits.call_timeout)
    parser.add_argument("--computation-seconds", type=float, default=AlertLimits.computation_seconds)
    parser.add_argument("--max-alerts", type=int, default=AlertLimits.max_alerts)
    parser.add_argument("--max-memory", type=int, default=0, help="address-space cap in bytes; 0: none")
    parser.add_argument("--plots", action="store_true", help="serve Dask's key plots (plot_server.py)")
    parser.add_argument(
        "--no-install", action="store_true", help="never add dashdock's plot-state plugin to a scheduler"
    )
    parser.add_argument(
        "--live-tick", type=float, default=Limits.live_tick, help="seconds between reads for open drawn pages"
    )
    args = parser.parse_args(argv)
    if args.max_memory > 0:
        cap_memory(args.max_memory)
    limits = Limits(
        tick=args.tick,
        max_runs=args.max_runs,
        max_records_per_tick=args.max_records_per_tick,
        gone_after=args.gone_after,
        call_timeout=args.call_timeout,
        install_plugin=not args.no_install,
        live_tick=max(args.live_tick, 0.05),
        live_state_tick=max(2 * args.live_tick, 0.1),  # the state costs the scheduler a pass
    )
    alert_limits = AlertLimits(computation_seconds=args.computation_seconds, max_alerts=args.max_alerts)
    asyncio.run(_main(args.store, limits, alert_limits, args.plots))
