"""A scheduler's task graph as Dask's Graph reads it, from the ``graph`` part of its plot state
(kernel/plot_state.py, asked for only while that plot is watched), checked.

Dask's Graph page lays its tasks out with a scheduler plugin (``GraphLayout``) that the scheduler
calls at every new graph and every transition, and its page redraws five times a second: both in
the scheduler's event loop (distributed#4055). Here the scheduler sends its tasks once a tick
(when there are few enough to draw), and each page's ``GraphLayout`` runs in the recorder,
handed what changed as the scheduler would have handed it: the new tasks as a graph update,
changed states as transitions, gone tasks as forgotten.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from distributed.diagnostics.graph_layout import GraphLayout
from distributed.scheduler import ALL_TASK_STATES

from dashdock.live.mirror_groups import GroupPrefix
from dashdock.live.mirror_state import checked_count

MAX_GRAPH_TASKS = 10_000  # as kernel/plot_state.py's
MAX_DEPENDENCIES = 1_000  # of one task
MAX_EDGES = 100_000  # dependencies of all tasks together
MAX_PRIORITY = 8  # parts of a task's priority (Dask's have three to five)


@dataclass(eq=False)
class MirroredTask:
    """What the Graph and its layout read of a task. Its dependencies are in the order the
    scheduler's set gave them (a dict as an ordered set): the layout places a task's
    dependencies in that order, so the same order draws the same graph as Dask's page."""

    key: str
    state: str
    prefix: GroupPrefix
    priority: tuple[int, ...]
    dependencies: dict[MirroredTask, None] = field(default_factory=dict)
    dependents: dict[MirroredTask, None] = field(default_factory=dict)


class MirroredTasks(dict[str, MirroredTask]):
    """``Scheduler.tasks`` as the Graph reads it. Its length is the scheduler's count of tasks,
    which is more than those sent when there are too many to draw: the Graph then says so."""

    def __init__(self, count: int = 0) -> None:
        super().__init__()
        self.count = count

    def __len__(self) -> int:
        return max(self.count, super().__len__())


@dataclass
class _Listed:
    key: str
    state: str
    prefix: str
    priority: tuple[int, ...]
    dependencies: list[str]  # keys of tasks sent


def read_graph(given: object) -> tuple[int, list[_Listed]] | None:
    """The scheduler's count of tasks and the checked tasks sent; None when the answer has no
    graph (the plot was not watched). A dependency that is not a task sent, or that closes a
    cycle, is left out: a layout only ever sees an acyclic graph of the tasks it draws."""
    if not isinstance(given, Mapping):
        return None
    listed = given.get("tasks")
    sent = listed[:MAX_GRAPH_TASKS] if isinstance(listed, (list, tuple)) else []
    # A dependency is the place of a task in the list sent: each place, its task if kept.
    kept: list[_Listed | None] = []
    keys: set[str] = set()
    places: list[object] = []
    for item in sent:
        task = _task(item)
        if task is None or task.key in keys:
            kept.append(None)
            places.append(None)
            continue
        keys.add(task.key)
        kept.append(task)
        places.append(item[4])
    budget = MAX_EDGES
    for task, given_places in zip(kept, places, strict=True):
        if task is not None and budget > 0:
            task.dependencies = list(dict.fromkeys(_keys_at(given_places, kept)))[:budget]
            budget -= len(task.dependencies)
    tasks = [task for task in kept if task is not None]
    _break_cycles(tasks)
    return max(checked_count(given.get("count")), len(tasks)), tasks


def _task(item: object) -> _Listed | None:
    if not isinstance(item, (list, tuple)) or len(item) != 5:
        return None
    key, state, prefix, priority, _ = item
    text = _key_text(key)
    if text is None or state not in ALL_TASK_STATES or not isinstance(prefix, str):
        return None
    return _Listed(text, state, prefix, _priority(priority), [])


def _key_text(key: object) -> str | None:
    """A key written out as Dask's Graph writes it (``str(key)``); a tuple key arrives as a list.
    None for what is not a key of Dask's usual shapes: a string, a number, or a flat tuple of
    those (a task with another key is left out)."""
    if isinstance(key, str):
        return key
    if isinstance(key, (int, float)) and not isinstance(key, bool):
        return str(key)
    if isinstance(key, (list, tuple)) and 0 < len(key) <= MAX_PRIORITY:
        if all(isinstance(part, (str, int, float)) and not isinstance(part, bool) for part in key):
            return str(tuple(key))
    return None


def _priority(given: object) -> tuple[int, ...]:
    if not isinstance(given, (list, tuple)) or len(given) > MAX_PRIORITY:
        return ()
    if not all(isinstance(part, int) and not isinstance(part, bool) for part in given):
        return ()
    return tuple(given)


def _keys_at(given: object, kept: list[_Listed | None]) -> list[str]:
    found: list[str] = []
    for place in given[:MAX_DEPENDENCIES] if isinstance(given, (list, tuple)) else ():
        if isinstance(place, int) and not isinstance(place, bool) and 0 <= place < len(kept):
            task = kept[place]
            if task is not None:
                found.append(task.key)
    return found


def _break_cycles(tasks: list[_Listed]) -> None:
    """Drops the dependencies of the tasks on a cycle (or below one): Dask's layout would place
    them for ever. A scheduler's graph has none; a hostile one's may."""
    waiting = {task.key: len(task.dependencies) for task in tasks}
    dependents: dict[str, list[str]] = {}
    for task in tasks:
        for dependency in task.dependencies:
            dependents.setdefault(dependency, []).append(task.key)
    ready = [key for key, count in waiting.items() if count == 0]
    while ready:
        key = ready.pop()
        for dependent in dependents.get(key, ()):
            waiting[dependent] -= 1
            if waiting[dependent] == 0:
                ready.append(dependent)
    for task in tasks:
        if waiting[task.key]:
            task.dependencies = []


def update_graph(mirror: Any, given: object) -> None:
    """``mirror.tasks`` after the scheduler's answer ``given``, each page's layout (Dask's
    ``GraphLayout``, among the mirror's plugins) told what changed. No graph in the answer (the
    Graph is not watched): none are kept."""
    tasks: MirroredTasks = mirror.tasks
    read = read_graph(given)
    if read is None:
        mirror.tasks = MirroredTasks()
        return
    count, listed = read
    layouts = [plugin for plugin in mirror.plugins.values() if isinstance(plugin, GraphLayout)]
    now = {task.key for task in listed}
    for key, task in tasks.items():
        if key not in now:
            for layout in layouts:
                _forget(layout, task)
    fresh = MirroredTasks(count)
    changed: list[tuple[str, str, str]] = []
    for item in listed:
        known = tasks.get(item.key)
        if known is None:
            task = MirroredTask(item.key, item.state, GroupPrefix(item.prefix), item.priority)
        else:
            task = known
            if task.state != item.state:
                changed.append((item.key, task.state, item.state))
                task.state = item.state
        task.dependencies, task.dependents = {}, {}
        fresh[item.key] = task
    for item in listed:
        task = fresh[item.key]
        for key in item.dependencies:
            dependency = fresh[key]
            task.dependencies[dependency] = None
            dependency.dependents[task] = None
    new = [item.key for item in listed if item.key not in tasks]
    mirror.tasks = fresh  # what the layouts read
    for layout in layouts:
        if new:
            layout.update_graph(mirror, tasks=new, priority={key: fresh[key].priority for key in new})
        for key, start, finish in changed:
            if key in layout.index:
                layout.transition(key, start, finish)


def _forget(layout: Any, task: MirroredTask) -> None:
    """As ``GraphLayout`` forgets a task: its node and edges hidden, its place freed."""
    index = layout.index.pop(task.key, None)
    if index is None:
        return
    layout.visible_updates.append((index, "False"))
    edges = [(task.key, dependent.key) for dependent in task.dependents]
    edges += [(dependency.key, task.key) for dependency in task.dependencies]
    for edge in edges:
        edge_index = layout.index_edge.pop(edge, None)
        if edge_index is not None:
            layout.visible_edge_updates.append((edge_index, "False"))
    x, y = layout.x.pop(task.key, None), layout.y.pop(task.key, None)
    layout.collision.pop((x, y), None)
