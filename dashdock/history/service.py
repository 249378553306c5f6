"""The history service in the server: what is recorded, and the recorder process kept running.
One unit: what is recorded, by which run, and why not, is read and changed together by the sync,
the recorder's events and the API; which server records the file at all is owner.py's.

Every few seconds the service compares the schedulers dashdock knows (managed clusters, notebooks'
clients) with what the recorder records, and tells it to start or stop (when: pacing.py). The
recorder is one process (recorder/) spoken to over pipes, as the cluster hosts are, so reading
schedulers never runs on the server's event loop; the store is read in worker threads for the same
reason (service_store.py, whose reads the service offers the handlers). The recorder runs under a
memory cap, so a hostile scheduler can exhaust only it; a recorder that dies is started again (a
bounded number of times, waiting longer each time), and runs it left open are ended. What went
wrong with a source is kept per source, one line for the user (``problem_of``), and a run that
ended early says why (``problem_of_run``). Only the server holding the file's recording (owner.py)
records; another reads, and takes over when that one stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypeVar

from dashdock.errors import Conflict
from dashdock.history.addresses import scheduler_key
from dashdock.history.drawn import DrawnPlot, DrawnPlots, is_drawn
from dashdock.history.model import Alert, Run
from dashdock.history.owner import RecordingOwner
from dashdock.history.pacing import RunPacing
from dashdock.history.pages import import_bokeh_plotting
from dashdock.history.periodic import Periodic
from dashdock.history.service_store import ServedStore
from dashdock.history.settings import HistorySettings
from dashdock.history.store import HistoryStore
from dashdock.history.supervision import RecorderProcess
from dashdock.ids import new_source_id
from dashdock.sources.registry import SourceRegistry

SYNC_INTERVAL = 2.0
RETENTION_INTERVAL = 600.0
STOP_TIMEOUT = 10.0
MAX_RUN_PROBLEMS = 1000  # runs whose early end is remembered, newest kept
TAKE_OVER_INTERVAL = 10.0  # how often a server that does not record tries the file's lock again

T = TypeVar("T")


class HistoryService:
    """Decides what is recorded, supervises the recorder process and answers questions about runs."""

    def __init__(
        self,
        settings: HistorySettings,
        registry: SourceRegistry,
        schedulers: Callable[[], dict[str, str]],
        log: logging.Logger,
    ) -> None:
        self.settings = settings
        self._registry = registry
        self._schedulers = schedulers  # source id -> scheduler address, of every recordable source
        self._log = log
        self._reads = ServedStore(settings.enabled, settings.store, log)
        self._recorder = RecorderProcess(settings, log)
        self._reader: asyncio.Task[None] | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._warm: asyncio.Future[None] | None = None
        self._recording: dict[str, str] = {}  # source id -> run id
        self._addresses: dict[str, str] = {}  # source id -> the scheduler its run records
        self._pacing = RunPacing()  # when a source may begin a run (pacing.py)
        self._problems: dict[str, str] = {}  # source id -> what went wrong recording it, for the user
        self._run_problems: dict[str, str] = {}  # run id -> why it ended early (its recorder died)
        self._replacements_seen = 0  # the store's replacements the recorder has been restarted for
        self._failing: set[str] = set()  # sources whose scheduler has not answered since its last error
        self._stopping: set[str] = set()  # run ids the service asked to stop
        self._computation_seconds = 60.0  # the user's setting: a longer computation is an alert
        self._plots = DrawnPlots(registry)  # the recorder's plot server (draw_plots)
        self._syncs = Periodic(SYNC_INTERVAL)  # _sync's loop; a page may ask for the next sync now
        self._owner = RecordingOwner(settings.store, TAKE_OVER_INTERVAL)  # one server records a file
        self._taking_over: asyncio.Task[None] | None = None

    @property
    def problem(self) -> str | None:
        """Why nothing is recorded, for the user; None when all is well."""
        return self._reads.problem or self._owner.elsewhere or self._recorder.problem

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        try:
            await self._open()
        finally:
            # The server answers requests before its extensions have finished starting: they wait
            # until now rather than hear "turned off".
            self._reads.started()

    async def _open(self) -> None:
        if not self.settings.enabled or not await self._reads.open():
            return
        # The History pages are Bokeh documents made here: import Bokeh's plotting modules now, in a
        # thread, so the first page a user opens does not pay seconds of imports.
        self._warm = asyncio.ensure_future(asyncio.to_thread(import_bokeh_plotting))
        if await self._owner.claim():
            await self._begin_recording()
            return
        # Another server records into this file: its runs are live, not left open by a recorder
        # that died, and a damaged file is its to replace.
        self._reads.replaces = False
        self._log.warning("dashdock: %s", self._owner.elsewhere)
        self._taking_over = asyncio.ensure_future(self._take_over_when_free())

    async def _begin_recording(self) -> None:
        """This server holds the file's recording: runs left open by a recorder that is gone end,
        and recording begins."""
        await asyncio.to_thread(self._reads.end_orphaned_runs, set(self._recording.values()))
        self._loop_task = asyncio.ensure_future(self._run_forever())

    async def _take_over_when_free(self) -> None:
        await self._owner.when_free()
        self._reads.replaces = True
        self._log.info("dashdock: the server recording %s stopped; this one records", self.settings.store)
        await self._begin_recording()

    async def stop(self) -> None:
        for task in (self._taking_over, self._loop_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await self._recorder.quit(STOP_TIMEOUT)
        if self._reads.store is not None and self._owner.held:
            await asyncio.to_thread(self._reads.end_orphaned_runs, set(self._recording.values()))
        self._owner.release()  # after the runs ended: a server waiting for it finds none open

    # -- what is recorded --------------------------------------------------------------------

    def is_recording(self, source_id: str) -> bool:
        return source_id in self._recording

    def drawn(self, source_id: str, path: str) -> DrawnPlot | None:
        """Where the recorder serves ``path`` of a source recorded now; None: the dashboard's own
        page. A scheduler slow to answer keeps its drawn pages until its run ends (drawn.py)."""
        return self._plots.drawn(self._recording.get(source_id), path)

    async def drawn_when_known(self, source_id: str, path: str) -> DrawnPlot | None:
        """``drawn``, once it is known: a page asked for while the source's run is still beginning
        waits for it (at most ``plots_wait`` seconds), so that it opens with the scheduler's data
        rather than Dask's page (a Bokeh session on the scheduler) or an empty one."""
        if not self.settings.draw_plots or self._recorder.given_up or not is_drawn(path):
            return self.drawn(source_id, path)
        deadline = time.monotonic() + self.settings.plots_wait
        synced = False
        while (remaining := deadline - time.monotonic()) > 0:
            run_id = self._recording.get(source_id)
            if run_id is None:  # not recorded yet, or not at all: one sync decides
                if synced or self._loop_task is None or not self._may_begin(source_id):
                    break
                synced = True
                await self._syncs.next_run(remaining)
            elif self._plots.pending(run_id, path):
                await self._plots.change(remaining)
            else:
                break
        return self.drawn(source_id, path)

    def when_drawn(self, callback: Callable[[str, tuple[str, ...]], None]) -> None:
        """Call ``callback(source_id, paths)`` whenever the plots at ``paths`` of a source are drawn."""
        self._plots.on_drawn = callback

    def _show_drawn(self, source_id: str) -> None:
        self._plots.show(source_id, self._recording.get(source_id))

    def problem_of(self, source_id: str) -> str | None:
        """What went wrong recording this source, in one line; None when nothing did."""
        return self._problems.get(source_id)

    def problem_of_run(self, run_id: str) -> str | None:
        """Why a run ended early, when its recorder died while recording it (since this server began)."""
        return self._run_problems.get(run_id)

    async def set_recording(self, source_id: str, enabled: bool) -> None:
        """Stop or resume recording one source (the sidebar's switch)."""
        if self._owner.elsewhere:
            raise Conflict(self._owner.elsewhere)
        if enabled:
            self._pacing.resume(source_id)
        else:
            self._pacing.paused.add(source_id)
        await self._sync()

    def set_computation_seconds(self, seconds: float) -> None:
        """A computation that runs at least this long says it is done (the user's alert setting)."""
        if seconds != self._computation_seconds:
            self._computation_seconds = seconds
            self._send({"op": "settings", "computation_seconds": seconds})

    async def _run_forever(self) -> None:
        next_retention = 0.0

        async def tick() -> None:
            nonlocal next_retention
            try:
                await self._sync()
                if time.monotonic() >= next_retention:
                    next_retention = time.monotonic() + RETENTION_INTERVAL
                    deleted = await self._reads.enforce_retention(
                        self.settings.max_bytes, self.settings.max_age
                    )
                    if deleted:
                        self._log.info("dashdock: history retention deleted %d old runs", len(deleted))
            except Exception:  # the loop must survive a bad tick; the next one tries again
                self._log.exception("dashdock: history sync failed")

        await self._syncs.run_forever(tick)

    async def _sync(self) -> None:
        if self._reads.replacements != self._replacements_seen:
            self._replacements_seen = self._reads.replacements
            await self._store_replaced()
        if self._reads.store is None:
            return
        await self._registry.learn_schedulers()  # dashboards added by URL name theirs
        wanted = {
            source_id: scheduler
            for source_id, scheduler in self._schedulers().items()
            if source_id not in self._pacing.paused
        }
        # The watcher process starts with the first scheduler to record: a server with no Dask
        # source runs none.
        if not (wanted or self._recording or self._recorder.running) or not await self._ensure_recorder():
            return
        for source_id in list(self._recording):
            # Gone, switched off, or moved (a restarted cluster's new scheduler is a new run); the
            # same scheduler named another way (localhost, 127.0.0.1) is the same run (addresses.py).
            if scheduler_key(wanted.get(source_id)) != scheduler_key(self._addresses.get(source_id)):
                run_id = self._recording.pop(source_id)
                self._stopping.add(run_id)
                self._send({"op": "stop", "run_id": run_id})
                # Ended on purpose: what the recorder said while the scheduler went away is stale.
                self._problems.pop(source_id, None)
                self._addresses.pop(source_id, None)
                self._show_drawn(source_id)
        for source_id, scheduler in wanted.items():
            if source_id in self._recording or not self._may_begin(source_id, scheduler):
                continue
            if len(self._recording) >= self.settings.max_runs:
                self._log.warning(
                    "dashdock: %s is not recorded: %d sources are recorded already (history_max_recorded)",
                    source_id,
                    self.settings.max_runs,
                )
                continue
            run = Run(
                id=new_source_id(),
                source=source_id,
                name=found.name if (found := self._registry.find(source_id)) else source_id,
                scheduler=scheduler,
                start=time.time(),
            )
            self._recording[source_id] = run.id
            self._addresses[source_id] = scheduler
            self._pacing.began(source_id, scheduler)
            self._send({"op": "record", "run": run.to_store_json()})

    def _may_begin(self, source_id: str, scheduler: str | None = None) -> bool:
        if not self._pacing.may_begin(source_id, scheduler):
            return False
        with contextlib.suppress(Exception):
            if self._registry.get(source_id).health.status == "down":
                return False
        return True

    # -- the recorder process ----------------------------------------------------------------

    async def _ensure_recorder(self) -> bool:
        if self._recorder.running:
            return True
        if self._recorder.given_up:
            return False
        if self._recorder.died_unnoticed:
            await self._recorder_died()
        if not self._recorder.may_start():
            return False  # given up, or backing off
        process = await self._recorder.start(self._computation_seconds)
        self._reader = asyncio.ensure_future(self._read_events(process))
        return True

    async def _recorder_died(self) -> None:
        """The recorder is gone: say so for the sources it recorded, and plan its restart."""
        if self._reader is not None:  # the events it wrote before dying say which source failed
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._reader), 2.0)
        why = self._recorder.died()
        for source_id, run_id in self._recording.items():
            self._problems[source_id] = f"The history recorder stopped while recording this source ({why})."
            self._run_problems[run_id] = f"This run ended early: the history recorder stopped ({why})."
            self._run_problems = dict(list(self._run_problems.items())[-MAX_RUN_PROBLEMS:])
            # The source that was failing when it died is the likely cause: it waits, the others resume.
            if source_id in self._failing:
                self._pacing.ended(source_id)
        await self._recorder_gone()

    async def _recorder_gone(self) -> None:
        """Forget the runs of a recorder that is gone; the next sync starts another."""
        recorded = list(self._recording)
        self._recording.clear()  # its runs ended with it
        self._plots.stopped()
        for source_id in recorded:
            self._show_drawn(source_id)
        self._addresses.clear()
        self._pacing.again_now([])  # the runs it ended resume with the next recorder, at once
        self._failing.clear()
        self._stopping.clear()
        await asyncio.to_thread(self._reads.end_orphaned_runs, set())

    async def _store_replaced(self) -> None:
        """The store was found damaged and replaced while the recorder wrote to it: the recorder
        still holds the old file, so it is restarted on the new one (not counted as a death)."""
        recorded = list(self._recording)
        self._stopping.update(self._recording.values())  # ended on purpose: no problem, no waiting
        await self._recorder.quit(STOP_TIMEOUT)
        self._recorder.forget()
        await self._recorder_gone()
        self._pacing.again_now(recorded)  # recorded again at once, into the new store
        for source_id in recorded:
            self._problems.pop(source_id, None)

    def _send(self, command: dict[str, Any]) -> None:
        self._recorder.send(command)

    async def _read_events(self, recorder: asyncio.subprocess.Process) -> None:
        assert recorder.stdout is not None
        async for line in recorder.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if not isinstance(event, dict):
                continue
            kind, run_id = event.get("event"), event.get("run_id")
            source = self._source_of(run_id)
            if kind == "plots":
                self._plots.serving(event.get("port"), event.get("secret"))
            elif kind == "ended":
                self._plots.ended(str(run_id))
                if source is not None:
                    del self._recording[source]
                    self._show_drawn(source)
                    self._failing.discard(source)
                    # A scheduler that went away is not looked for again for a while; one that
                    # was restarted answers already, and its new run begins on the next sync.
                    if event.get("restarted"):  # another scheduler: its run is no repeat
                        self._pacing.restarted(source)
                    else:
                        self._pacing.ended(source)
                        if run_id not in self._stopping:
                            self._problems[source] = _one_line(event.get("reason"))
                self._stopping.discard(run_id)
            elif kind == "state":
                offered = event.get("offered") is not False
                self._plots.state(str(run_id), offered)
                if not offered and event.get("message"):  # its handler failed (else: none offered)
                    self._log.warning(
                        "dashdock: %s: its plots are Dask's pages: %s", run_id, event.get("message")
                    )
                if source is not None:
                    self._show_drawn(source)
            elif kind == "answering":
                self._plots.answered(str(run_id))
                if source is not None:
                    self._failing.discard(source)
                    self._problems.pop(source, None)
                    self._show_drawn(source)
            elif kind == "gpus":
                workers = event.get("workers")
                found = self._registry.find(source) if source is not None else None
                if found is not None and isinstance(workers, int) and not isinstance(workers, bool):
                    found.gpus = max(workers, 0)  # a visible change: the sidebar's listing sees it
            elif kind == "gap":
                self._log.warning(
                    "dashdock: history of %s missed %s tasks (the scheduler's task stream overflowed)",
                    run_id,
                    event.get("missed"),
                )
            elif kind == "error":
                self._log.warning("dashdock: history of %s: %s", run_id, event.get("message"))
                if source is not None:
                    self._failing.add(source)
                    self._problems[source] = _one_line(event.get("message"))
                    self._show_drawn(source)

    def _source_of(self, run_id: object) -> str | None:
        return next((source for source, recorded in self._recording.items() if recorded == run_id), None)

    # -- the store, read in threads (service_store.py) ------------------------------------------

    async def runs(self) -> list[Run]:
        return await self._reads.runs()

    async def alerts(self, source: str | None, since: float | None, limit: int) -> list[Alert]:
        """What the recorder noticed, most recently updated first (survives restarts with the runs)."""
        return await self._reads.alerts(source, since, limit)

    async def find(self, run_or_source_id: str) -> Run:
        """A run by its id, or the newest run of a source (a live source's run goes by the source's id)."""
        return await self._reads.find(run_or_source_id)

    async def delete(self, run_or_source_id: str) -> None:
        run = await self.find(run_or_source_id)
        if run.live and self._owner.elsewhere:
            raise Conflict(f"{run.name} is being recorded by another Jupyter server; delete it there.")
        if run.live:
            source_id = next((s for s, r in self._recording.items() if r == run.id), None)
            if source_id is not None:
                await self.set_recording(source_id, False)
        await self._reads.delete_run(run.id)

    async def read(self, produce: Callable[[HistoryStore], T]) -> T:
        """Run a reading function against the store in a worker thread."""
        return await self._reads.read(produce)

    def stream(self, produce: Callable[[HistoryStore], Iterator[bytes]]) -> AsyncIterator[bytes]:
        """The chunks of an export, each made in a worker thread; stops when the consumer does."""
        return self._reads.stream(produce)


def _one_line(text: object, limit: int = 300) -> str:
    """A recorder's message as one line of at most ``limit`` characters."""
    line = " ".join(str(text or "The recorder gave no reason.").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
