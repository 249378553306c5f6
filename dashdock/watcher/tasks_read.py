"""A tick's task records turned into the run's tasks and exception events.

Every record is checked (``to_task_record``) and clipped at once: a client chooses its keys, and
the alerts name groups, so a 1 MiB key never travels further than this. A record that cannot be
read is a task missed, and said so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dashdock.history.model import Event, TaskRecord, clip_task
from dashdock.watcher.scheduler import MAX_TEXT, to_task_record

if TYPE_CHECKING:  # imports Dask's distributed, which only a watcher serving plots needs
    from dashdock.live.mirror import SchedulerMirror


@dataclass
class TasksRead:
    tasks: list[TaskRecord] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    missed: int = 0

    def then(self, later: TasksRead, max_exceptions: int, max_tasks: int) -> TasksRead:
        """This read followed by ``later`` (reads between two ticks are written as one), within
        the same bounds as one read."""
        tasks, missed = self.tasks + later.tasks, self.missed + later.missed
        if len(tasks) > max_tasks:
            missed += len(tasks) - max_tasks
            tasks = tasks[-max_tasks:]
        return TasksRead(tasks, (self.events + later.events)[:max_exceptions], missed)


def read_tasks(
    records: Sequence[Mapping[str, Any]],
    kept_before: Callable[[TaskRecord], bool],
    mirror: SchedulerMirror | None,
    max_exceptions: int,
    max_tasks: int,
) -> TasksRead:
    """The tasks of ``records`` that an earlier run did not keep, newest ``max_tasks`` of them;
    the mirror gets every one (its plots show the newest tasks, recorded before or not)."""
    read = TasksRead()
    for raw in records:
        task = to_task_record(raw)
        if task is None:
            read.missed += 1
            continue
        task = clip_task(task)
        if mirror is not None:
            mirror.add_task(raw.get("key"), task)
        if kept_before(task):
            continue
        read.tasks.append(task)
        if task.status == "error" and len(read.events) < max_exceptions:
            # The event keeps what the task row does not: the worker's traceback text.
            detail: dict[str, object] = {"key": task.key, "group": task.group, "exception": task.exception}
            detail["traceback"] = str(raw.get("traceback_text") or "")[:MAX_TEXT]
            read.events.append(Event(task.stop, "exception", task.worker, detail))
    if len(read.tasks) > max_tasks:
        read.missed += len(read.tasks) - max_tasks
        read.tasks = read.tasks[-max_tasks:]
    return read
