"""The scheduler's side of per-cell accounting: a plugin that counts each cell's tasks.

A kernel's client registers ``CellLedger`` on its scheduler, pickled by value, so the scheduler
needs no dashdock. Cells tag the tasks they submit with the annotation ``dashdock_cell`` (the
cell's id). Dask's spans are opened too (Dask's own plots filter by them), but they cannot count
a cell: a span owns whole task groups, and a later cell's ``client.map(inc, ...)`` joins the
``inc`` group, and so the span, of an earlier cell. The annotation is per task and exact.

What runs here runs on the scheduler's event loop for every transition of a tagged task, so it
does a dictionary lookup and a few additions; untagged tasks cost one failed lookup.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from dask.utils import key_split
from distributed.diagnostics.plugin import SchedulerPlugin

# By value with the ledger (cells.py registers both): the scheduler need not have dashdock.
from .fine_metrics import offer as offer_fine_metrics
from .plot_state import offer as offer_plot_state

ANNOTATION = "dashdock_cell"
# A kernel asks on its client's own stream, so the scheduler answers after it has taken in every
# graph the client sent before the question (Dask handles one client's stream messages in order).
# The answer comes back as an event on the client's stream; the broker never stores it.
ASK_OP = "dashdock-cells-ask"
ANSWER_TOPIC = "dashdock-cells-answer"
PLUGIN_NAME = "dashdock-cell-ledger-2"  # the number changes when the report's shape does
MAX_CELLS = 1000  # cells remembered per scheduler; the oldest settled ones go first
MAX_GROUPS = 12  # task groups listed per cell; the rest are summed as "other"
MAX_ERROR_CHARS = 4000  # of an exception's text or traceback
MAX_THREADS = 4096  # worker threads counted per cell (the count says how the time sums were spread)
OTHER_GROUP = "other"

# Dask's startstops actions -> where a cell's time went.
_ACTIONS = {"compute": "compute", "transfer": "transfer", "disk-read": "disk", "disk-write": "spill"}


class _Cell:
    __slots__ = (
        "cancelled",
        "done",
        "erred",
        "error",
        "finished",
        "group_seconds",
        "groups",
        "id",
        "memory_peak",
        "moved",
        "produced",
        "ran",
        "seconds",
        "submitted",
        "tasks",
        "threads",
    )

    def __init__(self, cell_id: str, now: float) -> None:
        self.id = cell_id
        self.tasks = self.done = self.erred = self.cancelled = 0
        self.groups: dict[str, list[int]] = {}  # name -> [tasks, done, erred]
        self.submitted = now
        self.finished = 0.0
        # The first start and last stop of the cell's tasks, on the workers' clocks: the task
        # stream records those times, so a window of exactly these holds every task of the cell.
        self.ran: list[float] = []
        self.seconds = {"compute": 0.0, "transfer": 0.0, "disk": 0.0, "spill": 0.0}
        # Per group, the same four sums: where the cell's time went, group by group.
        self.group_seconds: dict[str, dict[str, float]] = {}
        self.threads: set[tuple[str, int]] = set()  # (worker, thread) that ran its tasks
        self.produced = self.moved = self.memory_peak = 0
        self.error: dict[str, str] | None = None

    @property
    def settled(self) -> bool:
        return self.done + self.erred + self.cancelled >= self.tasks

    def group(self, name: str) -> list[int]:
        counts = self.groups.get(name)
        if counts is None:
            if len(self.groups) >= MAX_GROUPS:
                name = OTHER_GROUP
            counts = self.groups.setdefault(name, [0, 0, 0])
        return counts

    def spent(self, name: str, startstops: Any) -> None:
        """Adds a finished task's spans to the cell's time, and to its group's."""
        if name not in self.groups:
            name = OTHER_GROUP  # group() put it there: MAX_GROUPS were listed before it
        by_group = self.group_seconds.setdefault(name, dict.fromkeys(self.seconds, 0.0))
        for startstop in startstops or ():
            where = _ACTIONS.get(startstop.get("action"))
            if where is not None:
                seconds = max(0.0, startstop["stop"] - startstop["start"])
                self.seconds[where] += seconds
                by_group[where] += seconds

    def ran_on(self, worker: Any, thread: Any) -> None:
        if isinstance(worker, str) and isinstance(thread, int) and len(self.threads) < MAX_THREADS:
            self.threads.add((worker, thread))

    def report(self) -> dict[str, Any]:
        end = self.finished if self.settled and self.finished else time.time()
        return {
            "id": self.id,
            "tasks": self.tasks,
            "done": self.done,
            "erred": self.erred,
            "cancelled": self.cancelled,
            "settled": self.settled,
            "groups": [[name, *counts] for name, counts in self.groups.items()],
            "submitted": self.submitted,
            "wall": max(0.0, end - self.submitted),
            "ran": list(self.ran),
            "seconds": dict(self.seconds),
            "group_seconds": [[name, *spent.values()] for name, spent in self.group_seconds.items()],
            "threads": len(self.threads),
            "produced_bytes": self.produced,
            "moved_bytes": self.moved,
            "memory_peak": self.memory_peak,
            "error": self.error,
        }


class CellLedger(SchedulerPlugin):
    """Counts, per cell, the tasks tagged with its id: by group, done, erred, time and bytes."""

    name = PLUGIN_NAME

    def __init__(self) -> None:
        self.cells: OrderedDict[str, _Cell] = OrderedDict()
        self.pending: dict[Any, tuple[_Cell, str]] = {}  # unfinished key -> its cell, its group
        self.scheduler: Any = None

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        scheduler.stream_handlers[ASK_OP] = self.answer
        # A notebook's scheduler offers Dask's Fine Performance Metrics totals to the history too.
        offer_fine_metrics(scheduler)
        offer_plot_state(scheduler)  # and what dashdock's drawn plots read

    async def close(self) -> None:
        if self.scheduler is not None:
            self.scheduler.stream_handlers.pop(ASK_OP, None)

    def update_graph(self, scheduler: Any, *, annotations: dict[str, dict[Any, Any]], **kwargs: Any) -> None:
        # Only new tasks carry annotations here; a key the cluster already has stays its first cell's.
        tagged = annotations.get(ANNOTATION)
        if not tagged:
            return
        now = time.time()
        for key, cell_id in tagged.items():
            if key in self.pending or not isinstance(cell_id, str):
                continue
            ts = scheduler.tasks.get(key)
            if ts is None or ts.state in ("memory", "erred", "forgotten"):
                continue
            cell = self._cell(cell_id, now)
            name = key_split(key)
            cell.tasks += 1
            cell.group(name)[0] += 1
            self.pending[key] = (cell, name)

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        entry = self.pending.get(key)
        if entry is None:
            return
        cell, name = entry
        if finish == "processing":
            self._count_transfers(cell, key)
        elif finish == "memory":
            del self.pending[key]
            cell.done += 1
            cell.group(name)[1] += 1
            nbytes = kwargs.get("nbytes")
            if isinstance(nbytes, int):
                cell.produced += nbytes
            cell.spent(name, kwargs.get("startstops"))
            cell.ran_on(kwargs.get("worker"), kwargs.get("thread"))
            _widen(cell.ran, kwargs.get("startstops"))
            cell.finished = time.time()
        elif finish == "erred":
            del self.pending[key]
            _widen(cell.ran, kwargs.get("startstops"))
            cell.erred += 1
            cell.group(name)[2] += 1
            cell.finished = time.time()
            if cell.error is None:
                cell.error = self._error(key)
        elif finish == "forgotten":  # its futures were dropped before it ran
            del self.pending[key]
            cell.cancelled += 1
            cell.finished = time.time()

    def answer(self, client: str, ids: Any = None, question: Any = None, **unknown: Any) -> None:
        """Answers a kernel's question on its client's stream with a report of its cells.

        Never raises: Dask closes a client's connection when a stream handler fails."""
        try:
            event = (time.time(), {"question": question, **self.report(ids)})
            message = {"op": "event", "topic": ANSWER_TOPIC, "event": event}
            self.scheduler.send_all({client: [message]}, worker_msgs={})
        except Exception:
            pass

    def report(self, ids: Any = None) -> dict[str, Any]:
        """The cells asked for (those this scheduler knows), and the cluster's memory now."""
        memory = self._cluster_memory()
        cells = {}
        for cell_id in ids if isinstance(ids, (list, tuple)) else ():
            cell = self.cells.get(cell_id) if isinstance(cell_id, str) else None
            if cell is None:
                continue
            if not cell.settled:
                cell.memory_peak = max(cell.memory_peak, memory)
            cells[cell_id] = cell.report()
        return {"cells": cells, "memory": memory}

    def _cell(self, cell_id: str, now: float) -> _Cell:
        cell = self.cells.get(cell_id)
        if cell is None:
            cell = self.cells[cell_id] = _Cell(cell_id, now)
            cell.memory_peak = self._cluster_memory()
            if len(self.cells) > MAX_CELLS:
                self._forget_one()
        return cell

    def _forget_one(self) -> None:
        for cell_id, cell in self.cells.items():
            if cell.settled:
                del self.cells[cell_id]
                return

    def _count_transfers(self, cell: _Cell, key: Any) -> None:
        """What the worker chosen for the task must fetch: its dependencies held elsewhere only."""
        ts = self.scheduler.tasks.get(key)
        worker = getattr(ts, "processing_on", None)
        if ts is None or worker is None:
            return
        for dependency in ts.dependencies:
            if worker not in dependency.who_has:
                cell.moved += dependency.nbytes if dependency.nbytes > 0 else 0

    def _error(self, key: Any) -> dict[str, str]:
        ts = self.scheduler.tasks.get(key)
        blame = getattr(ts, "exception_blame", None) or ts
        return {
            "key": str(getattr(blame, "key", key))[:MAX_ERROR_CHARS],
            "exception": str(getattr(blame, "exception_text", "") or "")[:MAX_ERROR_CHARS],
            "traceback": str(getattr(blame, "traceback_text", "") or "")[:MAX_ERROR_CHARS],
        }

    def _cluster_memory(self) -> int:
        return sum(int(ws.memory.process) for ws in self.scheduler.workers.values()) if self.scheduler else 0


def _widen(ran: list[float], startstops: Any) -> None:
    """Widens ``ran`` ([] or [first start, last stop]) to cover a finished task's spans."""
    for startstop in startstops or ():
        try:
            start, stop = float(startstop["start"]), float(startstop["stop"])
        except (KeyError, TypeError, ValueError):
            continue
        if ran:
            ran[0], ran[1] = min(ran[0], start), max(ran[1], stop)
        else:
            ran[:] = [start, stop]
