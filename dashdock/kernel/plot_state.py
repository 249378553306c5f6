"""What Dask's worker and progress plots read of a scheduler, offered to dashdock's recorder.

Dask's Progress, worker (memory, load, occupancy, the Workers table) and bandwidth plots read a
scheduler's objects: its workers' memory split (managed, unmanaged old and recent, spilled),
occupancy, tasks processing and heartbeat metrics, its task prefixes' counts by state (queued
and no-worker included) and its bandwidth estimates. No message of Dask's gives them all, so
``offer`` adds one, and says so in the scheduler's metadata; the recorder (which speaks plain
msgpack and never sends code) asks only a scheduler that has it, once a tick, and draws those
plots for every viewer from that one answer
(live/plot_server.py). It runs on the scheduler, where fine_metrics.py's ``offer``
runs: a managed cluster's host process, a notebook's cell ledger (pickled by value with it, so
the scheduler needs no dashdock), the demo's cluster, and any scheduler started with
``--preload dashdock.kernel.plot_state``.

The answer is plain data, bounded: it costs the scheduler a pass over its workers and prefixes.
"""

from __future__ import annotations

from typing import Any

OP = "dashdock_plot_state"
METADATA_KEY = "dashdock-plot-state"
MAX_WORKERS = 1024  # as the recorder's sampling bound (Limits.max_workers)
MAX_PREFIXES = 1000  # as the recorder's progress bound (Limits.max_groups)
MAX_METRICS = 64  # entries of a worker's metrics, and of each of its nested ones
MAX_PAIRS = 1024  # worker pairs of the bandwidth between workers
# Of an erred task's texts: Dask cuts an exception's message at 10,000 characters (its
# ``distributed.admin.max-error-length``; the text adds the type) and keeps a traceback whole, so
# these hold what Dask shows but for a traceback of hundreds of frames. A UTF-8 text of either
# stays within the recorder's 256 KiB a string.
MAX_EXCEPTION_TEXT = 20_000
MAX_TRACEBACK_TEXT = 50_000
# Of all erred tasks' texts in one answer (within the recorder's 8 MiB): those past it are sent
# with the next answer, oldest first.
ERRED_TEXT_BUDGET = 2_000_000
MAX_BINS = 200  # of the group timing's one-second bins (Dask's Task Group Progress shows 180)
GROUP_TIMING_BUDGET = 4000  # bins of all groups sent again an answer (about 36 kB)
MAX_GRAPH_TASKS = 10_000  # of a task graph's tasks sent (Dask's Graph draws up to 5,000 by default)
MAX_NAME = 256  # of a span tag or a part of a fine performance metric's key
# The graph's keys and prefixes are sent whole while together they hold at most this many
# characters (256 each at MAX_GRAPH_TASKS tasks), so the answer stays within the recorder's 8 MiB;
# past it each is cut to an even share.
GRAPH_NAMES_BUDGET = 2 * MAX_NAME * MAX_GRAPH_TASKS
MAX_FINE_METRICS = 5000  # entries of each mapping of fine performance metrics sent
MAX_KEY_PARTS = 8  # of a tuple key: a fine performance metric's (three or four parts), a task's
MAX_TAGS = 1000  # span tags listed
MAX_TAG_SETS = 4  # tag sets merged a tick: the selections of the pages open


def snapshot(
    scheduler: Any,
    exceptions_since: float = 0.0,
    parts: Any = (),
    monitor_since: int = 0,
    group_timing_since: int = 0,
    graph_items: int = 0,
    fine_metrics_tags: Any = None,
) -> dict[str, Any]:
    """The workers (in the scheduler's order) and task prefixes the plots read, as plain data; the
    erred tasks the scheduler keeps (Dask's Exceptions) that erred after ``exceptions_since`` and
    its own system monitor's rows after the ``monitor_since``-th: each sent once, not every tick.
    ``parts`` asks for what costs more, only while its plot is watched: ``memory_by_key`` (a pass
    over every task in memory), ``task_groups`` (the groups and their dependencies),
    ``group_timing`` (compute per group over time, from the ``group_timing_since``-th bin: the
    scheduler runs Dask's GroupTiming plugin from the first time it is asked, as Dask's own Task
    Group Progress page makes it do). ``graph_items`` (given only while the Graph is watched: an
    older handler refuses it, and those plots are Dask's pages again) asks for the task graph when
    it has at most that many tasks, the most Dask's Graph draws. ``fine_metrics_tags`` (given only
    while Fine Performance Metrics is watched, for the same reason) asks for the cumulative worker
    metrics, and the spans merged by each set of tags the pages select."""
    held = "memory_by_key" in parts
    idle = scheduler.idle
    saturated = scheduler.saturated
    workers = []
    for ws in list(scheduler.workers.values())[:MAX_WORKERS]:
        memory = ws.memory
        workers.append(
            {
                "address": ws.address,
                "name": ws.name if isinstance(ws.name, (str, int)) else str(ws.name),
                "nthreads": ws.nthreads,
                "memory_limit": ws.memory_limit or 0,
                "status": ws.status.name,
                "metrics": _numbers(ws.metrics, nested=True),
                "process": memory.process,
                "managed": memory.managed,
                "unmanaged_old": memory.unmanaged_old,
                "spilled": memory.spilled,
                "occupancy": float(ws.occupancy),
                "processing": len(ws.processing),
                # As Dask's plots test them: ``idle`` is keyed by address, ``saturated`` holds states.
                # What RMM Memory reads of ``extra`` (GPU workers only).
                "gpu_memory_total": _gpu_memory_total(ws.extra),
                "idle": ws in idle,
                "saturated": ws in saturated,
                **({"held": _held(ws)} if held else {}),
            }
        )
    prefixes = {
        str(name): {
            "states": {str(state): int(count) for state, count in tp.states.items()},
            "durations": _numbers(tp.all_durations),  # seconds per action (compute, transfer, ...)
        }
        for name, tp in list(scheduler.task_prefixes.items())[:MAX_PREFIXES]
    }
    pairs = list(scheduler.bandwidth_workers.items())[:MAX_PAIRS]
    monitor = scheduler.monitor
    return {
        "workers": workers,
        "prefixes": prefixes,
        "total_nthreads": scheduler.total_nthreads,
        "bandwidth": scheduler.bandwidth,
        "bandwidth_types": _numbers(scheduler.bandwidth_types),
        "bandwidth_workers": [[a, b, value] for (a, b), value in pairs],
        "exceptions": _exceptions(scheduler, exceptions_since),
        "exceptions_kept": scheduler.erred_tasks.maxlen,
        "monitor": {
            "count": monitor.count,
            "kept": monitor.maxlen,
            "gil": monitor.monitor_gil_contention,
            "rows": monitor.range_query(start=monitor_since),
        },
        "tick_interval": scheduler._tick_interval_observed,  # Contention's event-loop health
        "transition_counter": scheduler.transition_counter,
        **({"task_groups": _task_groups(scheduler)} if "task_groups" in parts else {}),
        **({"group_timing": _group_timing(scheduler, group_timing_since)} if "group_timing" in parts else {}),
        **({"graph": _graph(scheduler, graph_items)} if graph_items > 0 else {}),
        **(
            {"fine_metrics": _fine_metrics(scheduler, fine_metrics_tags)}
            if fine_metrics_tags is not None
            else {}
        ),
    }


def _fine_metrics(scheduler: Any, tag_sets: Any) -> dict[str, Any]:
    """What Dask's Fine Performance Metrics reads: the scheduler's cumulative worker metrics and,
    with Dask's spans extension, its tags, whether it has spans, and its spans' metrics merged
    (all of them, and by each of ``tag_sets`` whose tags it knows): as ``[key parts, value]``."""
    found: dict[str, Any] = {"cumulative": _metric_items(scheduler.cumulative_worker_metrics)}
    spans = scheduler.extensions.get("spans")
    if spans is None:
        return found
    known = spans.spans_search_by_tag
    # Tags are sent clipped, and a page asks by what it was sent.
    sent = {tag[:MAX_NAME]: tag for tag in list(known)[:MAX_TAGS] if isinstance(tag, str)}
    found["tags"] = list(sent)
    found["spans"] = len(spans.spans)
    if spans.spans:
        found["all"] = _metric_items(spans.merge_all().cumulative_worker_metrics)
    merged = []
    for tags in list(tag_sets)[:MAX_TAG_SETS] if isinstance(tag_sets, (list, tuple)) else ():
        listed = isinstance(tags, (list, tuple)) and len(tags) > 0
        if listed and all(isinstance(tag, str) and known.get(sent.get(tag, "")) for tag in tags):
            # As the page asks, tags in its order: Dask merges the spans that have any of them.
            span = spans.merge_by_tags(*(sent[tag] for tag in tags))
            merged.append([list(tags), _metric_items(span.cumulative_worker_metrics)])
    found["by_tags"] = merged
    return found


def _metric_items(metrics: Any) -> list[list[Any]]:
    """The tuple-keyed entries of a metrics mapping (the ones Dask's page reads), parts as text."""
    items: list[list[Any]] = []
    for key, value in metrics.items():
        if len(items) >= MAX_FINE_METRICS:
            break
        if isinstance(key, tuple) and 2 <= len(key) <= MAX_KEY_PARTS and isinstance(value, (int, float)):
            items.append([[str(part)[:MAX_NAME] for part in key], value])
    return items


def _graph(scheduler: Any, items: int) -> dict[str, Any]:
    """What Dask's Graph lays out of each task: its key, state, prefix, priority and the places of
    its dependencies in this list. Only the count when there are more than ``items`` tasks: the
    Graph then draws none, and this costs the scheduler nothing more."""
    tasks = scheduler.tasks
    count = len(tasks)
    if count > min(items, MAX_GRAPH_TASKS):
        return {"count": count}
    listed = list(tasks.values())
    place = {ts.key: i for i, ts in enumerate(listed)}
    longest = _longest_name(listed)
    return {
        "count": count,
        # Keys and priorities as they are (the recorder writes a key out as Dask's page does):
        # a tick's pass costs the scheduler a few microseconds a task.
        "tasks": [
            [
                _clipped(ts.key, longest),
                ts.state,
                ts.prefix.name[:longest],
                ts.priority,
                [place[dts.key] for dts in ts.dependencies if dts.key in place],
            ]
            for ts in listed
        ],
    }


def _group_timing(scheduler: Any, since: int) -> dict[str, Any]:
    """GroupTiming's bins from before the ``since``-th on (those known may have grown: a long task
    adds to them when it ends), at most ``MAX_BINS``; all of them when the plugin has fewer (it
    restarted)."""
    from distributed.diagnostics.progress import GroupTiming

    if GroupTiming.name not in scheduler.plugins:
        scheduler.add_plugin(plugin=GroupTiming(scheduler))
    plugin = scheduler.plugins[GroupTiming.name]
    length = len(plugin.time)
    # A task's compute lands in every bin it ran through when it finishes: bins already sent are
    # sent again, as many as the budget holds for all groups (the whole window for a few groups).
    again = max(1, min(MAX_BINS, GROUP_TIMING_BUDGET // (len(plugin.compute) or 1)))
    start = max(since - again if 0 < since <= length else 0, length - MAX_BINS, 0)
    return {
        "dt": plugin.dt,
        "length": length,
        "start": start,
        "time": plugin.time[start:],
        "nthreads": plugin.nthreads[start:],
        "compute": {
            str(name): values[start:] for name, values in list(plugin.compute.items())[:MAX_PREFIXES]
        },
    }


def _task_groups(scheduler: Any) -> dict[str, Any]:
    """What Dask's Task Groups graph reads of each group (the first ``MAX_PREFIXES``)."""
    return {
        str(name): {
            "prefix": str(tg.prefix.name),
            "dependencies": [str(dep.name) for dep in list(tg.dependencies)[:MAX_PREFIXES]],
            "states": {str(state): int(count) for state, count in tg.states.items()},
            "nbytes_total": tg.nbytes_total,
            "duration": tg.duration,
            "types": [str(kind) for kind in list(tg.types)[:MAX_METRICS]],
        }
        for name, tg in list(scheduler.task_groups.items())[:MAX_PREFIXES]
    }


def _gpu_memory_total(extra: Any) -> int | None:
    gpu = extra.get("gpu") if isinstance(extra, dict) else None
    total = gpu.get("memory-total") if isinstance(gpu, dict) else None
    return total if isinstance(total, int) and not isinstance(total, bool) else None


def _held(ws: Any) -> dict[str, list[int]]:
    """A worker's tasks in memory by name, as Dask's Memory by key groups them: [count, bytes].

    Dask's page splits every key's text (``key_split``) at every redraw; a task's prefix is named
    by that same split, done once when the task was made, so counting by prefix costs a third."""
    by_prefix: dict[Any, list[int]] = {}
    for ts in ws.has_what:
        counted = by_prefix.get(ts.prefix)
        if counted is None:
            if len(by_prefix) >= MAX_PREFIXES:
                continue
            counted = by_prefix[ts.prefix] = [0, 0]
        counted[0] += 1
        counted[1] += ts.nbytes
    return {str(prefix.name): counted for prefix, counted in by_prefix.items()}


def _numbers(values: Any, nested: bool = False) -> dict[str, Any]:
    """The entries of ``values`` with a name and a number (or, ``nested``, a dict of such)."""
    kept: dict[str, Any] = {}
    for name, value in list(values.items())[:MAX_METRICS]:
        if not isinstance(name, str) or isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            kept[name] = value
        elif nested and isinstance(value, dict):
            kept[name] = _numbers(value)
    return kept


def offer(scheduler: Any) -> None:
    """Answer ``OP`` on this scheduler from now on."""
    scheduler.handlers[OP] = lambda comm=None, **asked: snapshot(scheduler, **asked)
    scheduler.set_metadata(keys=[METADATA_KEY], value=OP)


def dask_setup(scheduler: Any) -> None:
    """As a scheduler preload (``dask scheduler --preload dashdock.kernel.plot_state``)."""
    offer(scheduler)


def _longest_name(listed: list[Any]) -> int | None:
    """How long a graph's key or prefix may be: any length while all of them fit the budget."""
    held = 0
    for ts in listed:
        key = ts.key
        held += len(ts.prefix.name) + (len(key) if isinstance(key, str) else _tuple_texts(key))
        if held > GRAPH_NAMES_BUDGET:
            return GRAPH_NAMES_BUDGET // (2 * len(listed))
    return None


def _tuple_texts(key: Any) -> int:
    """The characters of a tuple key's texts, counted as the recorder's mirror counts them
    (``live/mirror_state.py name_chars``): this module runs in the scheduler, without dashdock."""
    return sum(len(part) for part in key if isinstance(part, str)) if isinstance(key, tuple) else 0


def _clipped(key: Any, longest: int | None) -> Any:
    """A key with its texts cut at ``longest`` (None: whole)."""
    if isinstance(key, str):
        return key[:longest]
    if isinstance(key, tuple) and longest is not None:
        return tuple(part[:longest] if isinstance(part, str) else part for part in key)
    return key


def _exceptions(scheduler: Any, since: float) -> list[list[Any]]:
    """The erred tasks the scheduler keeps that erred after ``since``, newest first as it keeps
    them: from the oldest, as many as ``ERRED_TEXT_BUDGET`` holds (at least one)."""
    sent: list[list[Any]] = []
    budget = ERRED_TEXT_BUDGET
    for erred in reversed(scheduler.erred_tasks):  # oldest first
        if erred.timestamp <= since:
            continue
        key = _key(erred.key)
        exception = str(erred.exception_text)[:MAX_EXCEPTION_TEXT]
        traceback = str(erred.traceback_text)[:MAX_TRACEBACK_TEXT]
        budget -= len(exception) + len(traceback) + len(str(key))
        if budget < 0 and sent:
            break
        sent.append([key, erred.timestamp, list(erred.erred_on), exception, traceback])
    return sent[::-1]


def _key(key: Any) -> Any:
    """A key as Dask's Exceptions shows it: a text, or a tuple of a few texts and numbers, whole
    but within an answer's budget of texts."""
    if isinstance(key, tuple) and 0 < len(key) <= MAX_KEY_PARTS:
        if all(isinstance(part, (str, int, float)) and not isinstance(part, bool) for part in key):
            return tuple(part[:ERRED_TEXT_BUDGET] if isinstance(part, str) else part for part in key)
    return str(key)[:ERRED_TEXT_BUDGET]
