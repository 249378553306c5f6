"""A scheduler's answer to ``dashdock_plot_state`` (kernel/plot_state.py), checked, as the objects
Dask's plot components read: workers with a ``MemoryState``, task prefixes with state counts.

The scheduler may be anyone's (a dashboard added by URL): every field is checked and clipped, a
field of the wrong type reads as zero, and there are at most as many workers and prefixes as the
recorder samples. Nothing here is ever sent back anywhere; it is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from distributed.core import Status
from distributed.scheduler import ALL_TASK_STATES, MemoryState

MAX_WORKERS = 1024  # as Limits.max_workers
MAX_PREFIXES = 1000  # as Limits.max_groups
MAX_NAME = 256  # a worker's address or name
# A task's key or a group's or prefix's name is kept whole, however long (a function's whole repr,
# a path in a key): every plot must split and colour it as Dask's page does, the same in each. What
# is read again with each answer is bounded by the answer's size; what the mirror keeps across
# answers, by a budget of characters (mirror.py).
MAX_METRICS = 64  # entries of a worker's metrics, and of each nested one (kernel/plot_state.py)
MAX_PAIRS = 1024  # worker pairs of the bandwidth between workers
MAX_ERRED = 1000  # erred tasks kept for Dask's Exceptions (the scheduler's own default: 100)
# Of an erred task's texts (and its key), as the scheduler's side clips them: more than Dask shows
# but for a traceback of hundreds of frames (kernel/plot_state.py).
MAX_EXCEPTION_TEXT = 20_000
MAX_TRACEBACK_TEXT = 50_000
MAX_KEY_PARTS = 8  # of a tuple key kept as a tuple (Dask's have a name and an index or a few)
MAX_ERRED_ON = 16  # workers an erred task is listed on
# Tasks in memory counted for Memory by key, over all workers: the plot walks one object per task,
# so a scheduler cannot make it walk more than this (Dask's own page walks every task).
MAX_HELD = 1_000_000
_MAX_COUNT = 2**53  # counts and bytes above this are not numbers a scheduler sends
# The metrics of a worker Dask's drawn plots index rather than ``get``.
_INDEXED_METRICS: dict[str, float | dict[str, float]] = {
    "cpu": 0.0,
    "memory": 0.0,
    "time": 0.0,
    "event_loop_interval": 0.0,
    "host_net_io": {"read_bps": 0.0, "write_bps": 0.0},
    "transfer": {"incoming_bytes": 0.0, "outgoing_bytes": 0.0},
}


@dataclass(frozen=True)
class _Held:
    key: str
    nbytes: int


class HeldTasks:
    """A worker's tasks in memory by name (``name -> (count, bytes)``), iterated as Dask's Memory by
    key iterates ``has_what``: one object per task, the first of a name carrying their bytes."""

    def __init__(self, by_name: dict[str, tuple[int, int]]) -> None:
        self.by_name = by_name

    def __iter__(self) -> Iterator[_Held]:
        for name, (count, nbytes) in self.by_name.items():
            if count:
                yield _Held(name, nbytes)
                rest = _Held(name, 0)
                for _ in range(count - 1):
                    yield rest

    def __len__(self) -> int:
        return sum(count for count, _ in self.by_name.values())


@dataclass(eq=False)  # hashed by identity, as Dask's WorkerState is in its sets
class MirroredWorker:
    """What Dask's worker plots (memory, load, occupancy, the Workers table, bandwidth) read of a
    worker."""

    address: str
    name: str | int
    nthreads: int
    memory_limit: int
    status: Status
    memory: MemoryState
    occupancy: float
    processing: range  # Dask's plots take its length and truth; a range holds no tasks
    metrics: dict[str, Any] = field(default_factory=dict)  # numbers, or dicts of them (host_net_io)
    has_what: HeldTasks = field(default_factory=lambda: HeldTasks({}))  # only while Memory by key is watched
    extra: dict[str, dict[str, int]] = field(default_factory=dict)  # {"gpu": {"memory-total"}}: RMM Memory


@dataclass(eq=False)
class MirroredPrefix:
    """What Dask's Progress and time-per-key plots read of a task prefix: its name, its tasks'
    count per state and the seconds they spent per action."""

    name: str
    states: dict[str, int]
    all_durations: dict[str, int | float]


@dataclass(frozen=True)
class MirroredErred:
    """What Dask's Exceptions reads of an erred task the scheduler keeps."""

    key: str | tuple[object, ...]
    timestamp: float
    erred_on: tuple[str, ...]
    exception_text: str
    traceback_text: str


@dataclass
class MirroredState:
    workers: dict[str, MirroredWorker]
    idle: set[MirroredWorker]
    saturated: set[MirroredWorker]
    task_prefixes: dict[str, MirroredPrefix]
    total_nthreads: int
    bandwidth: float
    bandwidth_types: dict[str, int | float]
    bandwidth_workers: dict[tuple[str, str], float]
    erred: list[MirroredErred]  # newest first, as the scheduler keeps them
    erred_kept: int  # how many the scheduler keeps
    tick_interval: float  # how late the scheduler's event loop ticks (Dask's Contention)


def read_state(raw: object) -> MirroredState | None:
    """The checked state; None when the answer is not a state at all."""
    if not isinstance(raw, Mapping):
        return None
    workers: dict[str, MirroredWorker] = {}
    idle: set[MirroredWorker] = set()
    saturated: set[MirroredWorker] = set()
    listed = raw.get("workers")
    held_budget = MAX_HELD
    for item in listed[:MAX_WORKERS] if isinstance(listed, (list, tuple)) else ():
        if not isinstance(item, Mapping):
            continue
        worker = _worker(item)
        if worker is None or worker.address in workers:
            continue
        worker.has_what, held_budget = _held(item.get("held"), held_budget)
        workers[worker.address] = worker
        if item.get("idle") is True:
            idle.add(worker)
        if item.get("saturated") is True:
            saturated.add(worker)
    prefixes: dict[str, MirroredPrefix] = {}
    given = raw.get("prefixes")
    for name, counts in list(given.items())[:MAX_PREFIXES] if isinstance(given, Mapping) else ():
        if isinstance(name, str) and isinstance(counts, Mapping):
            given_states = counts.get("states")
            known = given_states if isinstance(given_states, Mapping) else {}
            states = {str(state): checked_count(known.get(state)) for state in ALL_TASK_STATES}
            durations = _metrics(counts.get("durations"))
            prefixes[name] = MirroredPrefix(name, states, durations)
    types = raw.get("bandwidth_types")
    pairs: dict[tuple[str, str], float] = {}
    listed = raw.get("bandwidth_workers")
    for pair in listed[:MAX_PAIRS] if isinstance(listed, (list, tuple)) else ():
        if isinstance(pair, (list, tuple)) and len(pair) == 3 and all(isinstance(a, str) for a in pair[:2]):
            pairs[(pair[0][:MAX_NAME], pair[1][:MAX_NAME])] = checked_seconds(pair[2])
    return MirroredState(
        workers,
        idle,
        saturated,
        prefixes,
        # As the scheduler counts them, and never fewer than its workers' (Occupancy divides by it).
        max(checked_count(raw.get("total_nthreads")), sum(w.nthreads for w in workers.values())),
        checked_seconds(raw.get("bandwidth")),
        _metrics(types),
        pairs,
        _erred(raw.get("exceptions")),
        min(checked_count(raw.get("exceptions_kept")), MAX_ERRED),
        checked_seconds(raw.get("tick_interval")),
    )


def _held(given: object, budget: int) -> tuple[HeldTasks, int]:
    """A worker's checked ``held`` counts, and what is left of the budget of tasks counted."""
    by_name: dict[str, tuple[int, int]] = {}
    for name, counted in list(given.items())[:MAX_PREFIXES] if isinstance(given, Mapping) else ():
        if isinstance(name, str) and isinstance(counted, (list, tuple)) and len(counted) == 2:
            count = min(checked_count(counted[0]), budget)
            budget -= count
            by_name[name] = (count, checked_count(counted[1]))
    return HeldTasks(by_name), budget


def _erred(listed: object) -> list[MirroredErred]:
    erred = []
    for item in listed[:MAX_ERRED] if isinstance(listed, (list, tuple)) else ():
        if not isinstance(item, (list, tuple)) or len(item) != 5:
            continue
        key, when, on, exception, traceback = item
        workers = tuple(str(w)[:MAX_NAME] for w in on[:MAX_ERRED_ON]) if isinstance(on, (list, tuple)) else ()
        erred.append(
            MirroredErred(
                tuple_key(key) or str(key),
                checked_seconds(when),
                workers,
                str(exception)[:MAX_EXCEPTION_TEXT],
                str(traceback)[:MAX_TRACEBACK_TEXT],
            )
        )
    return erred


def _worker(item: Mapping[str, Any]) -> MirroredWorker | None:
    address = item.get("address")
    if not isinstance(address, str) or not address:
        return None
    process = checked_count(item.get("process"))
    memory = MemoryState(
        process=process,
        unmanaged_old=checked_count(item.get("unmanaged_old")),
        managed=checked_count(item.get("managed")),
        spilled=checked_count(item.get("spilled")),
    )
    name = item.get("name")
    given = item.get("status")
    status = Status[given] if isinstance(given, str) and given in Status.__members__ else Status.undefined
    return MirroredWorker(
        address=address[:MAX_NAME],
        name=name if isinstance(name, int) and not isinstance(name, bool) else str(name or "")[:MAX_NAME],
        # A worker has a thread at least (Dask's Workers divides its CPU by them).
        nthreads=max(checked_count(item.get("nthreads")), 1),
        memory_limit=checked_count(item.get("memory_limit")),
        status=status,
        memory=memory,
        occupancy=checked_seconds(item.get("occupancy")),
        processing=range(min(checked_count(item.get("processing")), _MAX_COUNT)),
        metrics=_worker_metrics(item.get("metrics")),
        extra=_gpu_extra(item.get("gpu_memory_total")),
    )


def _worker_metrics(given: object) -> dict[str, Any]:
    """A worker's checked metrics, with every one Dask's plots index (``metrics["cpu"]``,
    ``metrics["host_net_io"]["read_bps"]``, ...): a scheduler that left one out, or sent one of
    the wrong type, has zeros there."""
    metrics = _metrics(given, nested=True)
    for name, default in _INDEXED_METRICS.items():
        if isinstance(default, dict):
            nested = metrics.get(name)
            metrics[name] = {**default, **(nested if isinstance(nested, dict) else {})}
        elif not isinstance(metrics.get(name), (int, float)):
            metrics[name] = default
    return metrics


def _gpu_extra(total: object) -> dict[str, dict[str, int]]:
    """A GPU worker's ``extra`` as RMM Memory reads it; a worker without a GPU has none (Dask's
    plot then draws it empty)."""
    if isinstance(total, bool) or not isinstance(total, int):
        return {}
    return {"gpu": {"memory-total": checked_count(total)}}


def _metrics(given: object, nested: bool = False) -> dict[str, Any]:
    """Named numbers (as floats: Dask's plots only draw them), or ``nested`` dicts of them."""
    kept: dict[str, Any] = {}
    for name, value in list(given.items())[:MAX_METRICS] if isinstance(given, Mapping) else ():
        if not isinstance(name, str):
            continue
        if isinstance(value, Mapping) and nested:
            kept[name[:MAX_NAME]] = _metrics(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            kept[name[:MAX_NAME]] = (
                checked_seconds(value) if isinstance(value, float) else checked_count(value)
            )
    return kept


def name_chars(key: object) -> int:
    """The characters of a key as the mirror keeps it: a text, or a tuple key's texts."""
    if isinstance(key, str):
        return len(key)
    return sum(len(part) for part in key if isinstance(part, str)) if isinstance(key, tuple) else 0


def checked_count(value: object) -> int:
    """A count or a number of bytes: 0 for anything else, never negative, at most 2**53."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return int(min(max(value, 0), _MAX_COUNT))


def checked_seconds(value: object) -> float:
    """A number of seconds (or a rate): 0.0 for anything else, never negative, at most 2**53."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return float(min(max(value, 0.0), _MAX_COUNT))


def tuple_key(key: object) -> tuple[object, ...] | None:
    """A tuple key (``("name-token", 0, 1)``) of a few texts and numbers, as Dask's plots split
    and show it; None for anything else."""
    if not isinstance(key, tuple) or not 0 < len(key) <= MAX_KEY_PARTS:
        return None
    parts: list[object] = []
    for part in key:
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, (int, float)) and not isinstance(part, bool):
            parts.append(part)
        else:
            return None
    return tuple(parts)
