"""What Dask's own plot components read of a scheduler, filled from what the recorder read of it.

Dask draws each live plot with a component class (``distributed.dashboard.components``) that reads
the ``Scheduler`` object it runs in. A ``SchedulerMirror`` offers those components the same
attributes, kept up to date by the recorder's one connection, so dashdock can serve Dask's plots
drawn by Dask's own code (plot_server.py) while the scheduler pays for one reader, whatever the
number of viewers. Only what the drawn plots read is mirrored (``DRAWN`` in plot_server.py).
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.task_stream import TaskStreamPlugin
from distributed.diagnostics.task_stream import colors as ACTION_COLOURS

from dashdock.history.model import TaskRecord

# The task-stream records a mirror keeps: Dask's Task Stream draws the last 1,000.
MAX_TASK_RECORDS = 10_000


class SchedulerMirror:
    """The parts of a scheduler that Dask's drawn plots read, as the recorder last saw them."""

    def __init__(self, max_task_records: int = MAX_TASK_RECORDS) -> None:
        self.plugins: dict[str, Any] = {}
        # Dask's TaskStream reads the records of the scheduler's TaskStreamPlugin: the same class
        # here, never attached to a scheduler, filled with the records the scheduler sent.
        self.add_plugin(TaskStreamPlugin(self, maxlen=max_task_records))

    def add_plugin(self, plugin: Any) -> None:
        """As ``Scheduler.add_plugin``: Dask's components add what they need when it is missing."""
        self.plugins[plugin.name] = plugin

    def add_task(self, key: object, task: TaskRecord) -> None:
        """A finished task as the recorder checked it (``to_task_record``), under ``key`` as the
        scheduler sent it when that is a str or tuple (Dask's plots split and show it), else its text."""
        plugin = self.plugins[TaskStreamPlugin.name]
        plugin.buffer.append(
            {
                "key": key if isinstance(key, (str, tuple)) else task.key,
                "worker": task.worker,
                "thread": task.thread,
                "status": "error" if task.status == "error" else "OK",
                "nbytes": task.nbytes,
                "startstops": [
                    {"action": s.action, "start": s.start, "stop": s.stop, "source": s.source}
                    for s in task.spans
                    if s.action in ACTION_COLOURS  # Dask draws only the actions it knows
                ],
            }
        )
        plugin.index += 1
