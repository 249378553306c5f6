"""A Dask scheduler as the recorder reads it: the calls it makes, their replies as model.py's records.

The calls go over ``SchedulerComm`` (comm.py: Dask's comm protocol spoken by hand, within limits,
nothing ever unpickled); what comes back is anyone's data, checked here field by field before it
becomes a record.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from dask.utils import key_split

from dashdock.history.model import GroupProgress, MetricSample, Span, TaskRecord, WorkerSample
from dashdock.kernel.state_plugin import NAME
from dashdock.watcher.comm import (
    MAX_TEXT,
    SMALL_REPLY_LIMITS,
    TASK_STREAM_LIMITS,
    SchedulerBusy,
    SchedulerComm,
    SchedulerError,
    parse_address,
)

# MAX_TEXT, SchedulerBusy, SchedulerComm, SchedulerError and parse_address are comm.py's, offered
# here too: the recorder's other modules know one module for talking to a scheduler.
__all__ = [
    "MAX_TEXT",
    "Scheduler",
    "SchedulerBusy",
    "SchedulerComm",
    "SchedulerError",
    "fingerprint",
    "parse_address",
    "to_group_progress",
    "to_metric_samples",
    "to_task_record",
    "to_worker_samples",
]


def fingerprint(record: Mapping[str, Any]) -> tuple[object, ...]:
    """What tells one task-stream record from another (its key, worker, thread and times)."""
    startstops = record.get("startstops") or ()
    first = startstops[0] if startstops else {}
    last = startstops[-1] if startstops else {}
    return (
        repr(record.get("key")),
        record.get("worker"),
        record.get("thread"),
        first.get("start") if isinstance(first, Mapping) else None,
        last.get("stop") if isinstance(last, Mapping) else None,
    )


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def to_task_record(record: Mapping[str, Any]) -> TaskRecord | None:
    """One task-stream record (TaskStreamPlugin's kwargs) -> a TaskRecord; None when malformed."""
    # Runs for every task the scheduler finishes: plain checks, no generic helpers.
    spans: list[Span] = []
    for item in record.get("startstops") or ():
        try:
            start, stop = float(item["start"]), float(item["stop"])
        except (TypeError, KeyError, ValueError, IndexError):
            continue
        source = item.get("source")
        spans.append(
            Span(str(item.get("action", "compute")), start, stop, source if type(source) is str else None)
        )
    key = record.get("key")
    if not spans or key is None:
        return None
    status = "error" if record.get("status") == "error" else "OK"
    exception = None
    if status == "error":
        text = record.get("exception_text")
        exception = (str(text) if text is not None else "unknown error")[:MAX_TEXT]
    thread = record.get("thread")
    nbytes = record.get("nbytes")
    one = len(spans) == 1
    return TaskRecord(
        key=str(key),  # Dask's str(key); tuple keys arrive as tuples (use_list=False)
        group=key_split(key),
        worker=str(record.get("worker", "")),
        thread=thread if type(thread) is int else None,
        start=spans[0].start if one else min(s.start for s in spans),
        stop=spans[0].stop if one else max(s.stop for s in spans),
        status=status,
        spans=tuple(spans),
        nbytes=nbytes if type(nbytes) is int else None,
        exception=exception,
    )


def _int(value: object) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def to_metric_samples(reply: object, cursor: dict[str, int]) -> list[MetricSample]:
    """The metric board's answer -> samples; ``cursor`` ({name: sequence}) moves past them."""
    metrics = reply.get("metrics") if isinstance(reply, Mapping) else None
    samples: list[MetricSample] = []
    for metric in metrics if isinstance(metrics, (list, tuple)) else ():
        if not isinstance(metric, Mapping) or not isinstance(metric.get("name"), str):
            continue
        name, sequence, points = metric["name"], metric.get("sequence"), metric.get("points")
        if isinstance(sequence, int) and not isinstance(sequence, bool):
            cursor[name] = sequence
        for point in points if isinstance(points, (list, tuple)) else ():
            if not (isinstance(point, (list, tuple)) and len(point) == 3 and isinstance(point[0], str)):
                continue
            ms, value = _float(point[1]), _float(point[2])
            if ms is not None and value is not None and math.isfinite(value):
                samples.append(MetricSample(ms / 1000, name, point[0], value))
    return samples


def to_worker_samples(identity: object, now: float, max_workers: int) -> list[WorkerSample]:
    """The scheduler's ``identity`` -> one sample per worker (memory from its last heartbeat)."""
    workers = identity.get("workers") if isinstance(identity, Mapping) else None
    if not isinstance(workers, Mapping):
        return []
    samples = []
    for address, info in list(workers.items())[:max_workers]:
        metrics = info.get("metrics") if isinstance(info, Mapping) else None
        if not isinstance(metrics, Mapping):
            continue
        managed = _int(metrics.get("managed_bytes"))
        spilled = metrics.get("spilled_bytes")
        samples.append(
            WorkerSample(
                time=now,
                worker=str(address),
                managed=managed,
                # Dask's "unmanaged" is the process memory that is not data it holds.
                unmanaged=max(0, _int(metrics.get("memory")) - managed),
                spilled=_int(spilled.get("disk")) if isinstance(spilled, Mapping) else 0,
                cpu=float(_float(metrics.get("cpu")) or 0.0),
            )
        )
    return samples


def to_group_progress(states: object, now: float, max_groups: int) -> list[GroupProgress]:
    """``get_task_prefix_states`` -> counts by state per task group (prefix)."""
    if not isinstance(states, Mapping):
        return []
    rows = []
    for group, counts in list(states.items())[:max_groups]:
        if isinstance(counts, Mapping):
            rows.append(GroupProgress(now, str(group), {str(k): _int(v) for k, v in counts.items()}))
    return rows


class Scheduler:
    """The calls the recorder makes, each with the comm's timeout."""

    def __init__(self, address: str, *, timeout: float = 5.0) -> None:
        self.comm = SchedulerComm(address, timeout=timeout)

    async def task_stream_index(self) -> int:
        index = await self.comm.call("get_task_stream_index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise SchedulerError("The scheduler's task-stream index is not a number.")
        return index

    async def task_stream(self, start_index: int) -> list[Mapping[str, Any]]:
        """Task-stream records from ``start_index`` to the newest (the scheduler clamps to its buffer)."""
        records = await self.comm.call("get_task_stream", TASK_STREAM_LIMITS, start_index=max(0, start_index))
        if not isinstance(records, Sequence) or isinstance(records, (str, bytes)):
            raise SchedulerError("The scheduler's task stream is not a list.")
        return [r for r in records if isinstance(r, Mapping)]

    async def identity(self, max_workers: int) -> object:
        return await self.comm.call("identity", n_workers=max_workers)

    async def task_prefix_states(self) -> object:
        return await self.comm.call("get_task_prefix_states")

    async def has_metric_board(self) -> bool:
        """Whether a notebook added custom metrics here (kernel/metric_board.py says so in the
        scheduler's metadata)."""
        return await self.comm.call("get_metadata", keys=["dashdock-metric-board"], default=None) is not None

    async def fine_metrics(self) -> dict[str, float] | None:
        """Dask's Fine Performance Metrics totals (``path -> value``), when the scheduler offers
        them (kernel/fine_metrics.py, from a managed cluster or a notebook's client); else None."""
        if await self.comm.call("get_metadata", keys=["dashdock-fine-metrics"], default=None) is None:
            return None
        reply = await self.comm.call("dashdock_fine_metrics")
        if not isinstance(reply, Mapping):
            return None
        return {str(k)[:MAX_TEXT]: float(v) for k, v in reply.items() if _float(v) is not None}

    async def install_plot_state(self) -> None:
        """Adds dashdock's plugin that offers the plot state (kernel/state_plugin.py) through this
        connection, as a notebook's client adds its ledger. Raises HandlerFailed when the scheduler
        refuses it (``distributed.scheduler.pickle: False``, or no cloudpickle there)."""
        await self.comm.call("register_scheduler_plugin", plugin=_state_plugin(), name=NAME, idempotent=True)

    async def offers_plot_state(self) -> bool:
        """Whether the scheduler answers ``dashdock_plot_state`` (kernel/plot_state.py offers it)."""
        return await self.comm.call("get_metadata", keys=["dashdock-plot-state"], default=None) is not None

    async def plot_state(
        self,
        exceptions_since: float,
        monitor_since: int,
        parts: list[str],
        timing_since: int,
        graph_items: int,
        tag_sets: list[list[str]],
    ) -> object:
        """The workers and task prefixes Dask's worker and progress plots read, the erred tasks
        since ``exceptions_since``, the scheduler's monitor rows since ``monitor_since``, and the
        costlier ``parts`` asked for (mirror_state.py and mirror_monitor.py check them); of those,
        ``group_timing`` from its ``timing_since``-th bin (mirror_timing.py) and ``graph`` of at
        most ``graph_items`` tasks (mirror_graph.py), ``fine_metrics`` with the spans merged by each
        of ``tag_sets`` (mirror_fine_metrics.py)."""
        asked: dict[str, object] = {}
        # Each only with its part: a scheduler holding an older handler still answers the rest.
        if "group_timing" in parts:
            asked["group_timing_since"] = timing_since
        if "graph" in parts:
            asked["graph_items"] = graph_items
        if "fine_metrics" in parts:
            asked["fine_metrics_tags"] = tag_sets
        return await self.comm.call(
            "dashdock_plot_state",
            SMALL_REPLY_LIMITS,
            exceptions_since=exceptions_since,
            monitor_since=monitor_since,
            parts=[part for part in parts if part not in ("graph", "fine_metrics")],
            **asked,
        )

    async def metric_samples(self, since: dict[str, int]) -> object:
        """The custom metrics' points since ``since`` ({name: sequence}), from dashdock's metric
        board when a notebook added one (kernel/metric_board.py); an error when none did."""
        return await self.comm.call("dashdock_metric_samples", since=since)

    async def events(self, topic: str) -> object:
        """The scheduler's log of one event topic: ``((time, message), ...)``, oldest first."""
        return await self.comm.call("events", topic=topic)

    async def close(self) -> None:
        await self.comm.close()


@functools.cache
def _state_plugin() -> bytes:
    """The plugin pickled by value, with the modules it calls: the scheduler needs no dashdock."""
    import cloudpickle

    from dashdock.kernel import fine_metrics, plot_state, state_plugin

    for module in (fine_metrics, plot_state, state_plugin):
        cloudpickle.register_pickle_by_value(module)
    return cloudpickle.dumps(state_plugin.OfferPlotState())
