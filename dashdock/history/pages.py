"""The History view's pages: a recorded run drawn with Bokeh, as the Lab's panes show it.

Four pages, each one Bokeh document rendered with ``file_html``: ``overview`` (the whole run: tasks
finished per second and total memory on one time axis, gaps shaded, a brush that tells the Lab
which window to show), and for a window ``task-stream``, ``progress`` and ``memory``, drawn as
Dask's dashboard draws its live plots. BokehJS is loaded from this server (``PageAssets``), and
dashdock's page script comes first so the pages follow the Lab's theme.

Every function here blocks on the store: the server calls ``history_page`` in a worker thread.
Task keys and group names are anyone's code's text; they reach the page only as Bokeh data,
which Bokeh escapes; dashdock's own text in a page holds numbers and times only.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dashdock.errors import NotFound
from dashdock.history.figures import (
    ACTION_COLOURS,
    Clipped,
    PageLimits,
    Window,
    bytes_formatter,
    caption,
    clock,
    draw_task_stream,
    draw_total_memory,
    figure,
    lane_labels,
    total_memory,
)
from dashdock.history.model import (
    MetricSample,
    Run,
    WorkerSample,
)
from dashdock.history.pages_overview import overview
from dashdock.history.source_runs import PageReads, RunsRead, runs_in_window
from dashdock.history.store import HistoryStore

__all__ = ["PAGES", "Clipped", "PageAssets", "PageLimits", "history_page"]

PAGES = ("overview", "task-stream", "progress", "memory")
_TEMPLATE = """
{% block preamble %}<script src="{{ page_script | e }}"></script>{% endblock %}
"""


@dataclass(frozen=True)
class PageAssets:
    """Where a page loads its scripts from (URLs on this server)."""

    bokeh_root: str  # BokehJS is at ``{bokeh_root}static/js/...``
    bokeh_version: str  # names the files' version in their URL, so they may be cached for good
    page_script: str  # dashdock's page script
    # ``js/<file>`` -> the file's sha512, which names it instead, as Bokeh's own pages do: the Lab
    # can then give a framed page its BokehJS (proxy/page/deferral.py).
    file_versions: Mapping[str, str] = field(default_factory=dict)


def history_page(
    store: HistoryStore,
    run_id: str,
    name: str,
    start: float | None,
    end: float | None,
    assets: PageAssets,
    limits: PageLimits | None = None,
    now: Callable[[], float] = time.time,
) -> str:
    """The HTML of page ``name`` for [start, end] of the run (the whole run when left out)."""
    build = _BUILDERS.get(name)
    if build is None:
        raise NotFound(f"No history page '{name}'; there are {', '.join(PAGES)}.")
    run = store.run(run_id)
    if run is None:
        raise NotFound(f"No recorded run {run_id}.")
    limits = limits or PageLimits()
    whole = Window(run.start, max(run.end or now(), run.start + 1e-3))
    first = whole.first if start is None else start
    window = Window(first, max(whole.last if end is None else end, first + 1e-3))  # never empty
    reads: PageReads | HistoryStore = store
    runs = [run]
    if name != "overview" and window.first < run.start:  # a rewound pane: back across a restart
        runs = runs_in_window(store, run, window.first, window.last)
        reads = RunsRead(store, runs) if len(runs) > 1 else store
    root, on_ready = build(reads, run, whole, window, limits)
    if len(runs) > 1:
        from bokeh.layouts import column

        began = ", ".join(clock(later.start) for later in runs[1:])
        note = f"This window spans {len(runs)} runs of this source: its scheduler was replaced at {began}."
        root = column(caption(note), root, sizing_mode="stretch_both")
    return _render(root, on_ready, f"{run.name}: {name.replace('-', ' ')}", assets)


# -- overview ------------------------------------------------------------------------------------


# -- task stream ---------------------------------------------------------------------------------


def _task_stream(store: PageReads, run: Run, whole: Window, window: Window, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import Range1d
    from distributed.diagnostics.progress_stream import color_of

    columns = ("lane", "left", "right", "color", "key", "group", "worker", "action", "duration")
    rects: dict[str, list[Any]] = {name: [] for name in columns}
    drawn_until: float | None = None
    left_out = False
    text = 0
    clipped = Clipped()
    for task in store.tasks(run.id, window.first, window.last, limit=limits.rects + 1):
        text += (len(task.key) + len(task.group) + len(task.worker)) * len(task.spans)
        if len(rects["key"]) + len(task.spans) > limits.rects or text > limits.text:
            left_out = True
            break
        clipped.task(task.key, task.group, task.worker)
        lane = (task.worker, -1 if task.thread is None else task.thread)
        for span in task.spans:
            rects["lane"].append(lane)
            rects["left"].append(span.start * 1000)
            rects["right"].append(span.stop * 1000)
            rects["color"].append(ACTION_COLOURS.get(span.action) or color_of(task.group))
            rects["key"].append(task.key)
            rects["group"].append(task.group)
            rects["worker"].append(task.worker)
            rects["action"].append(span.action)
            rects["duration"].append(span.stop - span.start)
        drawn_until = task.stop
    # One row per worker thread, in order of worker and thread, as Dask lays its stream out.
    lanes = {lane: i for i, lane in enumerate(sorted(set(rects["lane"])))}
    rects["y"] = [lanes[lane] for lane in rects.pop("lane")]
    x_range = Range1d(start=window.ms[0], end=window.ms[1])
    plot = figure("Task stream", x_range, tools="xpan,xwheel_zoom,box_zoom,reset")
    tooltips = [
        ("key", "@key"),
        ("group", "@group"),
        ("worker", "@worker"),
        ("action", "@action"),
        ("duration", "@duration{0.000} s"),
    ]
    draw_task_stream(plot, rects, lane_labels(list(lanes)), tooltips)
    if left_out and drawn_until is not None:
        note = (
            f"The first {len(rects['key']):,} spans are drawn (until {clock(drawn_until)}); "
            "this window holds more tasks. Choose a shorter window to see them all."
        )
    elif left_out:
        note = "This window's first task alone is more than a page draws. Choose a shorter window."
    elif not rects["key"]:
        note = "No task ran in this window."
    else:
        note = (
            f"{len(rects['key']):,} spans of {len(set(rects['key'])):,} tasks on {len(lanes)} worker threads."
        )
    note = " ".join([note, *clipped.notes()])
    return column(caption(note), plot, sizing_mode="stretch_both"), None


# -- progress ------------------------------------------------------------------------------------


def _progress(store: PageReads, run: Run, whole: Window, window: Window, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, FactorRange, HoverTool
    from distributed.diagnostics.progress_stream import color_of

    # Counted by SQLite, whatever the window's size; a task still running at its end is not done.
    done = {
        group: (ok, erred) for group, ok, erred in store.finished_by_group(run.id, window.first, window.last)
    }
    ranked = sorted(done.items(), key=lambda item: -(item[1][0] + item[1][1]))
    shown = ranked[: limits.groups]
    shown.reverse()  # the largest group on top
    groups = [group for group, _ in shown]
    erred_counts = [erred for _, (_, erred) in shown]
    totals = [ok + erred for _, (ok, erred) in shown]
    data = {
        "group": groups,
        "memory": [ok for _, (ok, _) in shown],
        "erred": erred_counts,
        "total": totals,
        "color": [color_of(group) for group, _ in shown],
    }
    plot = figure(
        "Tasks finished, by group",
        None,
        y_range=FactorRange(factors=list(groups)) if shown else FactorRange(factors=["(none)"]),
        x_axis_type="linear",
        tools="",
    )
    source = ColumnDataSource(data)
    plot.hbar(y="group", left=0, right="memory", height=0.8, color="color", source=source)
    plot.hbar(y="group", left="memory", right="total", height=0.8, color="black", source=source)
    plot.add_tools(HoverTool(tooltips=[("group", "@group"), ("finished", "@memory"), ("erred", "@erred")]))
    plot.x_range.start = 0
    notes = [f"{sum(totals):,} tasks finished in this window, {sum(erred_counts):,} erred (black)."]
    if len(ranked) > len(shown):
        rest = sum(ok + erred for _, (ok, erred) in ranked[limits.groups :])
        notes.append(f"{len(ranked) - len(shown):,} smaller groups ({rest:,} tasks) are not drawn.")
    clipped = Clipped()
    for group in groups:
        clipped.task("", group, "")
    notes.extend(clipped.notes())
    return column(caption(" ".join(notes)), plot, sizing_mode="stretch_both"), None


# -- memory --------------------------------------------------------------------------------------


def _memory(store: PageReads, run: Run, whole: Window, window: Window, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, HoverTool, Range1d
    from bokeh.palettes import Category10_10

    samples = store.worker_samples(run.id, window.first, window.last, limit=limits.samples)
    x_range = Range1d(start=window.ms[0], end=window.ms[1])
    total_plot = figure("Memory (all workers)", x_range, height=200, tools="xpan,xwheel_zoom,reset")
    draw_total_memory(
        total_plot, total_memory(samples, window.first, window.last, limits.memory_points, limits.stale)
    )
    total_plot.yaxis.formatter = bytes_formatter()
    by_worker: dict[str, list[WorkerSample]] = {}
    others = set()
    for sample in samples:
        if sample.worker in by_worker or len(by_worker) < limits.workers:
            by_worker.setdefault(sample.worker, []).append(sample)
        else:
            others.add(sample.worker)
    worker_plot = figure("Process memory by worker", x_range, tools="xpan,xwheel_zoom,reset")
    # From zero, as the total above: fitted to a worker whose memory barely moved, the axis spans
    # a few kilobytes and every tick reads the same "80.5 MiB".
    worker_plot.y_range.start = 0
    step = max((window.last - window.first) / limits.memory_points, 1e-3)
    for i, (worker, own) in enumerate(sorted(by_worker.items())):
        # Each worker's last sample per bucket: at most memory_points points, whatever the window.
        points = list({int((s.time - window.first) // step): s for s in own}.values())
        source = ColumnDataSource(
            {
                "time": [s.time * 1000 for s in points],
                "memory": [s.managed + s.unmanaged for s in points],
                "managed": [s.managed for s in points],
                "unmanaged": [s.unmanaged for s in points],
                "spilled": [s.spilled for s in points],
                "worker": [worker] * len(points),
            }
        )
        worker_plot.line(x="time", y="memory", source=source, color=Category10_10[i % 10], line_width=2)
    worker_plot.add_tools(
        HoverTool(
            tooltips=[
                ("worker", "@worker"),
                ("managed", "@managed{0.0 b}"),
                ("unmanaged", "@unmanaged{0.0 b}"),
                ("spilled", "@spilled{0.0 b}"),
            ]
        )
    )
    worker_plot.yaxis.formatter = bytes_formatter()
    workers = len(by_worker) + len(others)
    notes = [f"{len(samples):,} samples of {workers:,} worker{'' if workers == 1 else 's'}."]
    if len(samples) >= limits.samples:
        notes.append(f"Read the first {len(samples):,} samples only: choose a shorter window.")
    if others:
        notes.append(f"{len(others):,} more workers count in the total but are not drawn one by one.")
    clipped = Clipped()
    for worker in by_worker:
        clipped.task("", "", worker)
    notes.extend(clipped.notes())
    if not samples:
        notes = ["No worker memory was recorded in this window."]
    plots = [caption(" ".join(notes)), total_plot, worker_plot]
    custom = store.metric_samples(run.id, window.first, window.last, limit=limits.samples)
    if custom:  # what a notebook measured beside (dashdock.metric), on the same time axis
        plots.append(_custom_metrics(custom, x_range, limits))
    return column(*plots, sizing_mode="stretch_both"), None


def _custom_metrics(samples: list[MetricSample], x_range: Any, limits: PageLimits) -> Any:
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.palettes import Category10_10

    lines: dict[tuple[str, str], dict[str, list[Any]]] = {}
    for sample in samples:
        series = lines.get((sample.metric, sample.line))
        if series is None:
            if len(lines) >= limits.metric_lines:
                continue
            series = lines[(sample.metric, sample.line)] = {"time": [], "value": [], "label": []}
        series["time"].append(sample.time * 1000)
        series["value"].append(sample.value)
        series["label"].append(
            sample.metric if sample.line == sample.metric else f"{sample.metric}: {sample.line}"
        )
    plot = figure("Custom metrics", x_range, tools="xpan,xwheel_zoom,reset")
    for i, series in enumerate(lines.values()):
        plot.line(
            x="time",
            y="value",
            source=ColumnDataSource(series),
            color=Category10_10[i % 10],
            line_width=2,
            legend_label=series["label"][0],
        )
    plot.add_tools(HoverTool(tooltips=[("metric", "@label"), ("value", "@value")]))
    plot.legend.location = "top_left"
    return plot


# -- shared --------------------------------------------------------------------------------------


_BUILDERS: dict[str, Callable[..., tuple[Any, Any]]] = {
    "overview": overview,
    "task-stream": _task_stream,
    "progress": _progress,
    "memory": _memory,
}


def _render(root: Any, on_ready: Any, title: str, assets: PageAssets) -> str:
    from bokeh.document import Document
    from bokeh.embed import file_html
    from bokeh.events import DocumentReady
    from bokeh.resources import Resources

    document = Document()
    document.add_root(root)
    if on_ready is not None:
        document.js_on_event(DocumentReady, on_ready)
    resources = Resources(
        mode="server",
        root_url=assets.bokeh_root,
        path_versioner=lambda path: f"{path}?v={assets.file_versions.get(path, assets.bokeh_version)}",
    )
    return file_html(
        document,
        resources=resources,
        title=title,
        template=_TEMPLATE,
        template_variables={"page_script": assets.page_script},
    )


def import_bokeh_plotting() -> None:
    """Bokeh's plotting modules imported ahead of the first History page (the service does it in a
    thread as the server starts), and the heap they leave frozen."""
    import bokeh.layouts
    import bokeh.models
    import bokeh.plotting  # noqa: F401

    # The server's heap is now what it keeps for its life (Jupyter, tornado, Dask, Bokeh: some
    # 350,000 objects). A full collection walks all of it, holding the GIL, and so the event loop,
    # for 150-400 ms; building a History page triggers one now and then. Frozen, they are left out
    # of every collection: a full one then walks only what was made since (bench/history_hostile_pages.py).
    gc.collect()
    gc.freeze()
