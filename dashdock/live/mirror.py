"""What Dask's own plot components read of a scheduler, filled from what the recorder read of it.

Dask draws each live plot with a component class (``distributed.dashboard.components``) that reads
the ``Scheduler`` object it runs in. A ``SchedulerMirror`` offers those components the same
attributes, kept up to date by the recorder's one connection, so dashdock can serve Dask's plots
drawn by Dask's own code (plot_server.py) while the scheduler pays for one reader, whatever the
number of viewers. Only what the drawn plots read is mirrored (``DRAWN`` in history/drawn.py):
the task stream always; when the scheduler offers its state (mirror_reader.py), its workers and
prefixes (mirror_state.py), its own monitor (mirror_monitor.py), its groups (mirror_groups.py),
their timing (mirror_timing.py), its task graph (mirror_graph.py) and its fine performance metrics
(mirror_fine_metrics.py).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections import deque
from collections.abc import Callable, Collection, Mapping
from typing import Any, TypeVar

from distributed.diagnostics.task_stream import TaskStreamPlugin
from distributed.diagnostics.task_stream import colors as ACTION_COLOURS
from distributed.scheduler import MemoryState

from dashdock.history.model import TaskRecord
from dashdock.live.mirror_fine_metrics import MirroredSpans, update_fine_metrics
from dashdock.live.mirror_graph import MirroredTasks, update_graph
from dashdock.live.mirror_groups import MirroredGroup, read_groups
from dashdock.live.mirror_monitor import MirroredMonitor
from dashdock.live.mirror_state import (
    MirroredErred,
    MirroredPrefix,
    MirroredState,
    MirroredWorker,
    checked_count,
    name_chars,
    read_state,
    tuple_key,
)
from dashdock.live.mirror_timing import MirroredGroupTiming

# The task-stream records a mirror keeps: Dask's Task Stream draws the last 1,000.
MAX_TASK_RECORDS = 10_000
# Keys are kept whole: the records' keys hold at most this many characters together (1,677 each
# at MAX_TASK_RECORDS), and past it the oldest records go first.
TASK_KEYS_BUDGET = 16 * 2**20
# The erred tasks' keys and texts together, likewise (Dask's Exceptions shows the newest).
ERRED_TEXTS_BUDGET = 32 * 2**20

_Record = TypeVar("_Record")


class SchedulerMirror:
    """The parts of a scheduler that Dask's drawn plots read, as the recorder last saw them."""

    def __init__(self, max_task_records: int = MAX_TASK_RECORDS) -> None:
        self.plugins: dict[str, Any] = {}
        # Dask's TaskStream reads the records of the scheduler's TaskStreamPlugin: the same class
        # here, never attached to a scheduler, filled with the records the scheduler sent.
        self.add_plugin(TaskStreamPlugin(self, maxlen=max_task_records))
        # Dask's Task Group Progress reads GroupTiming, which the scheduler runs once it is watched.
        self.add_plugin(MirroredGroupTiming())
        # Read by the worker and progress plots; empty until the scheduler's state is read.
        self.workers: dict[str, MirroredWorker] = {}
        self.idle: set[MirroredWorker] = set()
        self.saturated: set[MirroredWorker] = set()
        self.task_prefixes: dict[str, MirroredPrefix] = {}
        self.total_nthreads = 0
        self.bandwidth = 0.0
        self.bandwidth_types: dict[str, int | float] = {}
        self.bandwidth_workers: dict[tuple[str, str], float] = {}
        # Dask's Exceptions: the erred tasks the scheduler keeps, newest first; each is read once
        # (the recorder asks for those after ``exceptions_since``).
        self.erred_tasks: deque[MirroredErred] = deque(maxlen=100)
        self.erred_chars = 0  # of their keys and texts (ERRED_TEXTS_BUDGET)
        self.task_key_chars = 0  # of the task-stream records' keys (TASK_KEYS_BUDGET)
        self.exceptions_since = 0.0
        self.monitor = MirroredMonitor()  # the scheduler's own system monitor (Scheduler System)
        self.proc = _MirroredProcess(self.monitor)
        self._tick_interval_observed = 0.0
        self.task_groups: dict[str, MirroredGroup] = {}  # read only while Task Groups is watched
        self.tasks = MirroredTasks()  # read only while the Graph is watched
        self.transition_counter = 0
        # Read only while Fine Performance Metrics is watched; "spans" when the scheduler has them.
        self.cumulative_worker_metrics: dict[tuple[Any, ...], float] = {}
        self.extensions: dict[str, MirroredSpans] = {}
        self._viewers: dict[str, weakref.WeakSet[Any]] = {}  # plot path -> its pages' documents
        # Set when a plot whose part is read only while watched gets its first page: the recorder
        # reads the state then (run_watcher.py), not at its next tick, so the page opens with it.
        self.read_soon = asyncio.Event()
        # Set when a page opens: the watcher's rest then reads for it every live tick (run_watcher.py).
        self.page_opened = asyncio.Event()
        self.has_state = False  # whether the scheduler offered its state (the plots that need it)
        self.offers_state: bool | None = None  # None until the scheduler was asked
        self.created_at = time.time()
        self.answered_at: float | None = None  # when the scheduler last answered a read (stale.py)
        # Move whenever anything here changes: a page redraws only when what it reads has moved
        # (plot_server.py): the tasks (the task stream plugin's pages) or the state (all others).
        self.task_changes = 0
        self.state_changes = 0

    def viewing(self, path: str, doc: Any) -> bool:
        """A page of ``path`` draws from this mirror (until its Bokeh session ends); True when no
        other page of it is open."""
        first = not self.watched(path)
        self._viewers.setdefault(path, weakref.WeakSet()).add(doc)
        self.page_opened.set()
        return first

    def watched(self, path: str) -> bool:
        """Whether a page of ``path`` is open in a browser: what costs the scheduler more is asked
        for only then."""
        return any(seen(doc) for doc in list(self._viewers.get(path, ())))

    @property
    def changes(self) -> int:
        """Moves whenever anything here changes."""
        return self.task_changes + self.state_changes

    def watched_at_all(self) -> bool:
        """Whether any page of this mirror is open in a browser: it is then read more often."""
        return any(seen(doc) for docs in list(self._viewers.values()) for doc in list(docs))

    @property
    def memory(self) -> MemoryState:
        """As ``Scheduler.memory``: the workers' memory summed."""
        return MemoryState.sum(*(ws.memory for ws in self.workers.values()))

    def update_state(self, raw: object, kept: Collection[str] = ()) -> bool:
        """The scheduler's answer to ``dashdock_plot_state``; False (nothing changed) when it is
        not a state. ``kept``: watched parts not asked for this time (plots.PART_EVERY_S), whose
        last answer stands."""
        state: MirroredState | None = read_state(raw)
        if state is None:
            return False
        if "memory_by_key" in kept:
            for address, worker in state.workers.items():
                known = self.workers.get(address)
                if known is not None:
                    worker.has_what = known.has_what
        self.workers, self.idle, self.saturated = state.workers, state.idle, state.saturated
        self.task_prefixes, self.total_nthreads = state.task_prefixes, state.total_nthreads
        self.bandwidth, self.bandwidth_types = state.bandwidth, state.bandwidth_types
        self.bandwidth_workers = state.bandwidth_workers
        self._tick_interval_observed = state.tick_interval
        if isinstance(raw, Mapping):
            self.monitor.add(raw.get("monitor"))
            groups = read_groups(raw.get("task_groups"))
            if groups is not None:
                self.task_groups = groups
            timing = self.plugins[MirroredGroupTiming.name].add(raw.get("group_timing"))
            update_graph(self, raw.get("graph"))
            update_fine_metrics(self, raw.get("fine_metrics"))
            if groups is not None or timing:
                # Task Groups and Task Group Progress redraw when the counter moves: it moves with
                # what they read, read with it.
                self.transition_counter = checked_count(raw.get("transition_counter"))
        if state.erred_kept and state.erred_kept != self.erred_tasks.maxlen:
            self.erred_tasks = deque(self.erred_tasks, maxlen=state.erred_kept)
            self.erred_chars = sum(map(_erred_chars, self.erred_tasks))
        for erred in reversed(state.erred):  # oldest first, so the newest ends up first
            self.erred_chars = keep_within(
                self.erred_tasks, erred, _erred_chars, self.erred_chars, ERRED_TEXTS_BUDGET, newest_first=True
            )
            self.exceptions_since = max(self.exceptions_since, erred.timestamp)
        self.has_state = True
        self.state_changes += 1
        return True

    def fine_metrics_tags(self) -> list[list[str]]:
        """The span tags Fine Performance Metrics pages select, for the next read."""
        spans = self.extensions.get("spans")
        return spans.asked() if spans is not None else []

    def add_plugin(self, plugin: Any) -> None:
        """As ``Scheduler.add_plugin``: Dask's components add what they need when it is missing."""
        self.plugins[plugin.name] = plugin

    def remove_plugin(self, name: str) -> None:
        """As ``Scheduler.remove_plugin``: the Graph removes its layout when its page is gone."""
        self.plugins.pop(name, None)

    def add_task(self, key: object, task: TaskRecord) -> None:
        """A finished task as the recorder checked and clipped it (``to_task_record``); ``key`` is
        the key as the scheduler sent it, kept whole when it is a text or a tuple key of Dask's
        usual shape: its name names the group, as Dask's plots split it. Anything else is the
        task's text."""
        plugin = self.plugins[TaskStreamPlugin.name]
        shown = key if isinstance(key, str) else tuple_key(key)
        self.task_key_chars = keep_within(
            plugin.buffer,
            {
                "key": shown or task.key,
                "worker": task.worker,
                "thread": task.thread,
                "status": "error" if task.status == "error" else "OK",
                "nbytes": task.nbytes,
                "startstops": [
                    {"action": s.action, "start": s.start, "stop": s.stop, "source": s.source}
                    for s in task.spans
                    if s.action in ACTION_COLOURS  # Dask draws only the actions it knows
                ],
            },
            _key_chars,
            self.task_key_chars,
            TASK_KEYS_BUDGET,
        )
        plugin.index += 1
        self.task_changes += 1


def keep_within(
    records: deque[_Record],
    record: _Record,
    chars: Callable[[_Record], int],
    held: int,
    budget: int,
    newest_first: bool = False,
) -> int:
    """Adds ``record`` as the newest of ``records``, letting go of the oldest first while the deque
    is full or the characters held (``held``, as ``chars`` counts a record's) would pass ``budget``;
    returns the characters held now. The newest always stays, however long."""
    size = chars(record)
    oldest = records.pop if newest_first else records.popleft
    while records and (len(records) == records.maxlen or held + size > budget):
        held -= chars(oldest())
    if newest_first:
        records.appendleft(record)
    else:
        records.append(record)
    return held + size


def _key_chars(record: Mapping[str, Any]) -> int:
    return name_chars(record["key"])


def _erred_chars(erred: MirroredErred) -> int:
    return name_chars(erred.key) + len(erred.exception_text) + len(erred.traceback_text)


# The pages a browser has been connected to: one that has not been yet is still opening.
_CONNECTED: weakref.WeakSet[Any] = weakref.WeakSet()


def seen(doc: Any) -> bool:
    """Whether a browser is connected to the page ``doc``, or about to be: its page was asked for
    and its websocket is not open yet. Bokeh keeps a page's session a while after its last
    connection closed (a closed pane, a reloaded one), redrawing it all the same: no one sees it,
    so it costs nothing here."""
    context = doc.session_context
    if context is None or context.destroyed:
        return False
    session = getattr(context, "_session", None)  # Bokeh's ServerSession, once made
    if session is None:
        return True
    if session.connection_count > 0:
        _CONNECTED.add(doc)
        return True
    return doc not in _CONNECTED


class _MirroredProcess:
    """As ``Scheduler.proc`` for Task Group Progress, which redraws only while the scheduler's
    process is below half a core: the scheduler's own measure."""

    def __init__(self, monitor: MirroredMonitor) -> None:
        self._monitor = monitor

    def cpu_percent(self) -> float:
        return self._monitor.recent().get("cpu") or 0.0
