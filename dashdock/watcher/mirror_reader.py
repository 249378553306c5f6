"""Keeping a run's ``SchedulerMirror`` up to date from the scheduler's plot state, once a tick.

A scheduler offers its state with kernel/plot_state.py's handler, and says so in its metadata:
asked every few ticks until it does. The parts that cost the scheduler a pass over every task in
memory, or over its groups' dependencies, are asked for only while a page of their plot is open.
A handler that fails (another dashdock's, or a broken one) ends this for the run, never the
recording: those plots are Dask's pages again.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from dashdock.live.plots import PART_EVERY_S, WATCHED_PARTS
from dashdock.watcher.comm import HandlerFailed
from dashdock.watcher.scheduler import Scheduler

if TYPE_CHECKING:  # imports Dask's distributed, which only a recorder serving plots needs
    from dashdock.live.mirror import SchedulerMirror


def graph_items() -> int:
    """The most tasks Dask's Graph draws (its own setting, read where the Graph is drawn)."""
    from dask import config

    items = config.get("distributed.dashboard.graph-max-items", 5000)
    return items if isinstance(items, int) and not isinstance(items, bool) and items > 0 else 5000


class MirrorReader:
    def __init__(
        self,
        scheduler: Scheduler,
        mirror: SchedulerMirror,
        emit: Callable[[dict[str, object]], None],
        run_id: str,
        offer_every: int,
        install: bool,
    ) -> None:
        self.scheduler, self.mirror, self.emit, self.run_id = scheduler, mirror, emit, run_id
        self.offer_every = offer_every  # ticks between asking whether the scheduler offers it
        self.install = install  # add dashdock's plugin to a scheduler that does not (once)
        self.offered = False
        self.shown = False  # the "state" event was emitted: its plots are drawn here
        self.failed = False
        self.asked = False  # whether the scheduler was asked yet whether it offers its state
        self.monitor_written = 0  # the scheduler monitor's rows written (its count then)
        self.state_read = 0  # the mirror's changes when the loop's tick interval was written
        self.part_asked: dict[str, float] = {}  # when each part of PART_EVERY_S was last asked

    async def read(self, tick: int) -> None:
        """One tick's read; raises SchedulerError when the scheduler cannot be asked at all."""
        if self.failed:
            return
        if not self.offered:
            if (tick - 1) % self.offer_every:
                return
            self.offered = await self.scheduler.offers_plot_state()
            if not self.offered and self.install:
                self.offered = await self._installed()
            if not self.offered:
                self.mirror.offers_state = False
                if not self.asked:  # the server need not wait for its state plots any longer
                    self.emit({"event": "state", "run_id": self.run_id, "offered": False})
                self.asked = True
                return
        parts, kept = self._parts(time.monotonic())
        try:
            state = await self.scheduler.plot_state(
                self.mirror.exceptions_since,
                self.mirror.monitor.count,
                parts,
                self.mirror.plugins["group-timing"].length,
                graph_items(),
                self.mirror.fine_metrics_tags(),
            )
        except HandlerFailed as e:
            self.failed = True
            self.mirror.offers_state = False
            self.emit({"event": "state", "run_id": self.run_id, "offered": False, "message": str(e)})
            return
        self.mirror.offers_state = True
        if self.mirror.update_state(state, kept) and not self.shown:
            self.shown = True  # the server may now send the plots that need it here
            self.emit({"event": "state", "run_id": self.run_id, "offered": True})

    def _parts(self, now: float) -> tuple[list[str], list[str]]:
        """The costlier parts to ask for now (their plots are watched), and those watched but asked
        for too recently (PART_EVERY_S), whose last answer the mirror keeps."""
        parts: list[str] = []
        kept: list[str] = []
        for part, path in WATCHED_PARTS.items():
            if not self.mirror.watched(path):
                self.part_asked.pop(part, None)  # asked at once when a page of it opens again
            elif now < self.part_asked.get(part, -math.inf) + PART_EVERY_S.get(part, 0.0):
                kept.append(part)
            else:
                parts.append(part)
                self.part_asked[part] = now
        return parts, kept

    async def _installed(self) -> bool:
        """Adds dashdock's plugin (kernel/state_plugin.py), once: whether the scheduler offers its
        state now. A scheduler that refuses it keeps Dask's own pages, and the event says why."""
        self.install = False
        try:
            await self.scheduler.install_plot_state()
        except HandlerFailed as e:
            self.emit({"event": "state", "run_id": self.run_id, "offered": False, "message": str(e)})
            self.asked = True
            return False
        return await self.scheduler.offers_plot_state()

    def scheduler_cpu(self) -> list[tuple[float, float]]:
        """The scheduler's CPU rows its monitor measured since the last call, when it offers its
        plot state (diagnosis reads them; a plain scheduler does not say)."""
        monitor = self.mirror.monitor
        times, cpu = monitor.quantities["time"], monitor.quantities["cpu"]
        new = min(monitor.count - self.monitor_written, len(times), len(cpu))
        self.monitor_written = monitor.count
        if new <= 0:
            return []
        return list(zip(list(times)[len(times) - new :], list(cpu)[len(cpu) - new :], strict=True))

    def scheduler_loop(self, now: float) -> list[tuple[float, float]]:
        """The scheduler's event loop's observed tick interval, when the state was read since the
        last call: a loop held by its own work ticks far less often than its 20 ms (Dask's
        Contention plot)."""
        if self.mirror.state_changes == self.state_read:
            return []
        self.state_read = self.mirror.state_changes
        return [(now, float(self.mirror._tick_interval_observed))]
