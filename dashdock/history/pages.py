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

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from dashdock.errors import NotFound
from dashdock.history.model import (
    MAX_GROUP,
    MAX_KEY,
    MAX_WORKER,
    Alert,
    MetricSample,
    Run,
    WorkerSample,
    is_clipped,
)
from dashdock.history.store import HistoryStore

PAGES = ("overview", "task-stream", "progress", "memory")
# Dask's task stream colours the spans that are not computation so (progress_stream.py).
_ACTION_COLOURS = {"transfer": "red", "disk-read": "orange", "disk-write": "orange", "deserialize": "gray"}
_MEMORY_KINDS = ("managed", "unmanaged", "spilled")
# Dask's worker memory plot: managed in blue, unmanaged lighter, spilled grey.
_MEMORY_COLOURS = ("#0071c5", "#6aa8d8", "#b0b0b0")
_WINDOW_MESSAGE = "dashdock:history-window"
# Alerts marked on the overview, by kind: trouble red or orange, good news green.
_ALERT_COLOURS = {
    "worker-lost": "#d62728",
    "task-erred": "#d62728",
    "scheduler-lost": "#d62728",
    "worker-paused": "#ff7f0e",
    "spilling": "#ff7f0e",
    "scheduler-back": "#2ca02c",
    "computation-done": "#2ca02c",
}
_TEMPLATE = """
{% block preamble %}<script src="{{ page_script | e }}"></script>{% endblock %}
"""


@dataclass(frozen=True)
class PageLimits:
    """How much a page reads and draws; beyond it the page says what it left out."""

    rects: int = 20_000  # spans drawn in the task stream
    # Characters of keys, groups and workers' names the task stream carries (each span has its
    # own copy): with every text clipped where it is stored (model.py), this bounds a page's bytes.
    text: int = 2_000_000
    rate_bars: int = 600  # bars of the overview's task rate
    memory_points: int = 600  # points of a memory series
    samples: int = 200_000  # worker samples read for one page
    gaps: int = 200  # gaps drawn in the overview
    alerts: int = 200  # alerts marked on the overview (the most recently updated)
    groups: int = 60  # groups drawn by the progress page
    workers: int = 64  # workers drawn one by one on the memory page
    metric_lines: int = 20  # custom metric lines drawn on the memory page
    stale: float = 30.0  # s: a worker with no sample for this long no longer counts in the total
    debounce_ms: int = 300  # the brush posts its window this long after it stopped moving


@dataclass(frozen=True)
class PageAssets:
    """Where a page loads its scripts from (URLs on this server)."""

    bokeh_root: str  # BokehJS is at ``{bokeh_root}static/js/...``
    bokeh_version: str  # names the files' version in their URL, so they may be cached for good
    page_script: str  # dashdock's page script


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
    whole = _Span(run.start, max(run.end or now(), run.start + 1e-3))
    first = whole.first if start is None else start
    window = _Span(first, max(whole.last if end is None else end, first + 1e-3))  # never empty
    root, on_ready = build(store, run, whole, window, limits)
    return _render(root, on_ready, f"{run.name}: {name.replace('-', ' ')}", assets)


@dataclass(frozen=True)
class _Span:
    first: float  # Unix seconds
    last: float

    @property
    def ms(self) -> tuple[float, float]:
        """As Bokeh's datetime axis counts: milliseconds."""
        return self.first * 1000, self.last * 1000


# -- overview ------------------------------------------------------------------------------------


def _overview(store: HistoryStore, run: Run, whole: _Span, window: _Span, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import BoxAnnotation, ColumnDataSource, CustomJS, HoverTool, Label, Range1d, RangeTool

    bucket = _nice_step((whole.last - whole.first) / limits.rate_bars)
    counts = store.task_rate(run.id, bucket)
    rate = ColumnDataSource(
        {
            "left": [t * 1000 for t, _ in counts],
            "right": [(t + bucket) * 1000 for t, _ in counts],
            "rate": [n / bucket for _, n in counts],
            "tasks": [n for _, n in counts],
        }
    )
    x_range = Range1d(*whole.ms)
    # The brush's window, drawn over both plots. A window of the whole run is not drawn: the brush
    # would cover the plots, and a drag over it would only try to move it.
    whole_run = window == whole
    selected = Range1d(*(window.ms if not whole_run else (whole.ms[1], whole.ms[1])))
    rate_plot = _figure("Tasks finished per second", x_range, height=180)
    rate_plot.quad(left="left", right="right", top="rate", bottom=0, source=rate, color="#1f77b4")
    rate_plot.add_tools(HoverTool(tooltips=[("tasks", "@tasks"), ("per second", "@rate{0,0.0}")]))
    memory_plot = _figure("Memory (all workers)", x_range, height=160)
    memory = _total_memory(_overview_samples(store, run.id, whole, limits), whole, limits)
    memory_plot.varea_stack(
        list(_MEMORY_KINDS),
        x="time",
        color=list(_MEMORY_COLOURS),
        legend_label=list(_MEMORY_KINDS),
        source=ColumnDataSource(memory),
    )
    memory_plot.legend.location = "top_left"
    memory_plot.yaxis.formatter = _bytes_formatter()
    gaps = store.gaps(run.id, limit=limits.gaps)
    for plot in (rate_plot, memory_plot):
        brush = RangeTool(x_range=selected, start_gesture="pan")
        brush.overlay.fill_alpha = 0.15
        plot.add_tools(brush)
        for gap in gaps:
            plot.add_layout(
                BoxAnnotation(left=gap.start * 1000, right=gap.stop * 1000, fill_color="red", fill_alpha=0.2)
            )
    alerts = store.alerts(run_id=run.id, limit=limits.alerts)
    _mark_alerts(rate_plot, alerts)
    for gap in gaps:
        rate_plot.add_layout(
            Label(
                x=gap.start * 1000,
                y=4,
                y_units="screen",
                text=f"missed {gap.missed:,} tasks",
                text_font_size="11px",
                text_color="#b00000",
            )
        )
    # The Lab shows the window's panes: it learns the window when the brush stops (debounced, as a
    # drag moves it many times a second) and once when the page is ready.
    post = (
        f"const message = {{type: {json.dumps(_WINDOW_MESSAGE)}, "
        "start: selected.start / 1000, end: selected.end / 1000};"
        "window.parent.postMessage(message, '*');"
    )
    debounced = CustomJS(
        args={"selected": selected},
        code=(
            "clearTimeout(window.__dashdockWindowTimer);"
            f"window.__dashdockWindowTimer = setTimeout(() => {{ {post} }}, {int(limits.debounce_ms)});"
        ),
    )
    selected.js_on_change("start", debounced)
    selected.js_on_change("end", debounced)
    notes = [f"{run.tasks:,} tasks recorded."]
    if run.gaps:
        notes.append(f"{run.gaps:,} tasks finished unrecorded (red: the scheduler's task stream overflowed).")
    if len(gaps) >= limits.gaps:
        notes.append(f"The first {limits.gaps} gaps are shaded.")
    if len(alerts) >= limits.alerts:
        notes.append(f"The {limits.alerts} alerts updated last are marked.")
    cut = sum(is_clipped(alert.title) for alert in alerts)
    if cut:
        notes.append(f"{cut:,} alert titles were too long and are cut (\u2026[+N chars] marks the cut).")
    notes.append("Drag over a plot to choose the window the other panes show.")
    layout = column(_note(" ".join(notes)), rate_plot, memory_plot, sizing_mode="stretch_both")
    initial = Range1d(*window.ms)  # what the Lab shows at first
    return layout, CustomJS(args={"selected": initial}, code=post)


def _mark_alerts(plot: Any, alerts: list[Alert]) -> None:
    """When workers were lost and tasks erred: a line at each alert's first time, its title on hover."""
    from bokeh.models import ColumnDataSource, HoverTool, Span

    if not alerts:
        return
    colours = [_ALERT_COLOURS.get(a.kind, "#7f7f7f") for a in alerts]
    for alert, colour in zip(alerts, colours, strict=True):
        plot.add_layout(
            Span(location=alert.time * 1000, dimension="height", line_color=colour, line_dash="dashed")
        )
    marks = ColumnDataSource(
        {
            "time": [a.time * 1000 for a in alerts],
            "title": [a.title for a in alerts],
            "colour": colours,
        }
    )
    # Markers on the time axis carry the hover: a Span has none.
    renderer = plot.scatter(x="time", y=0, marker="inverted_triangle", size=12, color="colour", source=marks)
    plot.add_tools(HoverTool(renderers=[renderer], tooltips=[("alert", "@title")]))


def _overview_samples(
    store: HistoryStore, run_id: str, whole: _Span, limits: PageLimits
) -> list[WorkerSample]:
    """The run's samples; for a run with more than the page reads, an even share of every bucket
    (the first samples of each: every worker's, while a share exceeds the number of workers)."""
    samples = store.worker_samples(run_id, whole.first, whole.last, limit=limits.samples)
    if len(samples) < limits.samples:
        return samples
    share = max(limits.samples // limits.memory_points, 1)
    step = (whole.last - whole.first) / limits.memory_points
    spread: list[WorkerSample] = []
    for i in range(limits.memory_points):
        first = whole.first + i * step
        spread.extend(
            s for s in store.worker_samples(run_id, first, first + step, limit=share) if s.time < first + step
        )
    return spread


def _total_memory(samples: Iterable[WorkerSample], span: _Span, limits: PageLimits) -> dict[str, list[float]]:
    """Memory summed over workers per bucket: each worker counts with its latest sample, until stale."""
    step = max((span.last - span.first) / limits.memory_points, 1e-3)
    stale = max(limits.stale, 2 * step)
    latest: dict[str, WorkerSample] = {}
    data: dict[str, list[float]] = {"time": [], **{kind: [] for kind in _MEMORY_KINDS}}

    def emit(bucket: int) -> None:
        at = min(span.first + (bucket + 1) * step, span.last)
        live = [s for s in latest.values() if at - s.time <= stale]
        data["time"].append(at * 1000)
        for kind in _MEMORY_KINDS:
            data[kind].append(sum(getattr(s, kind) for s in live))

    current: int | None = None
    for sample in samples:  # in time order
        bucket = int((sample.time - span.first) // step)
        if current is not None and bucket != current:
            emit(current)
        current = bucket
        latest[sample.worker] = sample
    if current is not None:
        emit(current)
    return data


# -- task stream ---------------------------------------------------------------------------------


def _task_stream(store: HistoryStore, run: Run, whole: _Span, window: _Span, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, HoverTool, Range1d
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
            rects["color"].append(_ACTION_COLOURS.get(span.action) or color_of(task.group))
            rects["key"].append(task.key)
            rects["group"].append(task.group)
            rects["worker"].append(task.worker)
            rects["action"].append(span.action)
            rects["duration"].append(span.stop - span.start)
        drawn_until = task.stop
    # One row per worker thread, in order of worker and thread, as Dask lays its stream out.
    lanes = {lane: i for i, lane in enumerate(sorted(set(rects["lane"])))}
    rects["y"] = [lanes[lane] for lane in rects.pop("lane")]
    plot = _figure("Task stream", Range1d(*window.ms), tools="xpan,xwheel_zoom,box_zoom,reset")
    plot.hbar(
        y="y",
        left="left",
        right="right",
        height=0.9,
        color="color",
        alpha=0.8,
        source=ColumnDataSource(rects),
    )
    plot.add_tools(
        HoverTool(
            tooltips=[
                ("key", "@key"),  # Bokeh escapes field values (only the {safe} format would not)
                ("group", "@group"),
                ("worker", "@worker"),
                ("action", "@action"),
                ("duration", "@duration{0.000} s"),
            ]
        )
    )
    plot.yaxis.ticker = list(range(len(lanes)))
    plot.yaxis.major_label_overrides = _lane_labels(list(lanes))
    if left_out and drawn_until is not None:
        note = (
            f"The first {len(rects['key']):,} spans are drawn (until {_clock(drawn_until)}); "
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
    return column(_note(note), plot, sizing_mode="stretch_both"), None


# -- progress ------------------------------------------------------------------------------------


def _progress(store: HistoryStore, run: Run, whole: _Span, window: _Span, limits: PageLimits) -> Any:
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
    data = {
        "group": [group for group, _ in shown],
        "memory": [ok for _, (ok, _) in shown],
        "erred": [erred for _, (_, erred) in shown],
        "total": [ok + erred for _, (ok, erred) in shown],
        "color": [color_of(group) for group, _ in shown],
    }
    plot = _figure(
        "Tasks finished, by group",
        None,
        y_range=FactorRange(*data["group"]) if shown else FactorRange("(none)"),
        x_axis_type="linear",
        tools="",
    )
    source = ColumnDataSource(data)
    plot.hbar(y="group", left=0, right="memory", height=0.8, color="color", source=source)
    plot.hbar(y="group", left="memory", right="total", height=0.8, color="black", source=source)
    plot.add_tools(HoverTool(tooltips=[("group", "@group"), ("finished", "@memory"), ("erred", "@erred")]))
    plot.x_range.start = 0
    notes = [f"{sum(data['total']):,} tasks finished in this window, {sum(data['erred']):,} erred (black)."]
    if len(ranked) > len(shown):
        rest = sum(ok + erred for _, (ok, erred) in ranked[limits.groups :])
        notes.append(f"{len(ranked) - len(shown):,} smaller groups ({rest:,} tasks) are not drawn.")
    clipped = Clipped()
    for group in data["group"]:
        clipped.task("", group, "")
    notes.extend(clipped.notes())
    return column(_note(" ".join(notes)), plot, sizing_mode="stretch_both"), None


# -- memory --------------------------------------------------------------------------------------


def _memory(store: HistoryStore, run: Run, whole: _Span, window: _Span, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, HoverTool, Range1d
    from bokeh.palettes import Category10_10

    samples = store.worker_samples(run.id, window.first, window.last, limit=limits.samples)
    x_range = Range1d(*window.ms)
    total_plot = _figure("Memory (all workers)", x_range, height=200, tools="xpan,xwheel_zoom,reset")
    total_plot.varea_stack(
        list(_MEMORY_KINDS),
        x="time",
        color=list(_MEMORY_COLOURS),
        legend_label=list(_MEMORY_KINDS),
        source=ColumnDataSource(_total_memory(samples, window, limits)),
    )
    total_plot.legend.location = "top_left"
    total_plot.yaxis.formatter = _bytes_formatter()
    by_worker: dict[str, list[WorkerSample]] = {}
    others = set()
    for sample in samples:
        if sample.worker in by_worker or len(by_worker) < limits.workers:
            by_worker.setdefault(sample.worker, []).append(sample)
        else:
            others.add(sample.worker)
    worker_plot = _figure("Process memory by worker", x_range, tools="xpan,xwheel_zoom,reset")
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
    worker_plot.yaxis.formatter = _bytes_formatter()
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
    plots = [_note(" ".join(notes)), total_plot, worker_plot]
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
    plot = _figure("Custom metrics", x_range, tools="xpan,xwheel_zoom,reset")
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


@dataclass
class Clipped:
    """Counts the keys, groups and workers' names a page shows cut (clipped where they were stored),
    so the page can say so."""

    keys: int = 0
    groups: set[str] = field(default_factory=set)
    workers: set[str] = field(default_factory=set)

    def task(self, key: str, group: str, worker: str) -> None:
        if is_clipped(key):
            self.keys += 1
        if is_clipped(group):
            self.groups.add(group)
        if is_clipped(worker):
            self.workers.add(worker)

    def notes(self) -> list[str]:
        """Sentences of numbers only (a note is HTML)."""
        cut = [
            (self.keys, "task keys", MAX_KEY),
            (len(self.groups), "group names", MAX_GROUP),
            (len(self.workers), "worker names", MAX_WORKER),
        ]
        return [
            f"{n:,} {what} were longer than {limit} characters and are cut (\u2026[+N chars] marks the cut)."
            for n, what, limit in cut
            if n
        ]


_BUILDERS: dict[str, Callable[..., tuple[Any, Any]]] = {
    "overview": _overview,
    "task-stream": _task_stream,
    "progress": _progress,
    "memory": _memory,
}


def _lane_labels(lanes: list[tuple[str, int]]) -> dict[int, str]:
    """Rows as people read them: a worker's threads numbered from 1 (Dask's thread ids are long and
    mean nothing to a reader); one thread of a worker is just the worker."""
    threads: dict[str, int] = {}
    for worker, _ in lanes:
        threads[worker] = threads.get(worker, 0) + 1
    labels, seen = {}, dict.fromkeys(threads, 0)
    for i, (worker, thread) in enumerate(lanes):  # sorted by worker, then thread id
        seen[worker] += 1
        if threads[worker] == 1:
            labels[i] = worker
        else:
            labels[i] = f"{worker} thread {seen[worker]}" if thread >= 0 else f"{worker} thread ?"
    return labels


def _figure(title: str, x_range: Any, *, height: int | None = None, tools: str = "", **options: Any) -> Any:
    from bokeh.plotting import figure

    options.setdefault("x_axis_type", "datetime")
    if x_range is not None:
        options["x_range"] = x_range
    plot = figure(title=title, tools=tools, sizing_mode="stretch_both", min_height=height or 200, **options)
    plot.toolbar.logo = None
    return plot


def _note(text: str) -> Any:
    """A line of dashdock's own text (numbers and times only: a Div shows HTML)."""
    from bokeh.models import Div

    return Div(text=text, sizing_mode="stretch_width", styles={"font-size": "12px", "padding": "2px 8px"})


def _bytes_formatter() -> Any:
    from bokeh.models import NumeralTickFormatter

    return NumeralTickFormatter(format="0.0 b")


def _nice_step(least: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that is at least ``least`` (and at least 10 ms)."""
    step = 0.01
    while step < least:
        for factor in (2, 2.5, 2):
            step *= factor
            if step >= least:
                break
    return step


def _clock(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(seconds)) + f".{int(seconds % 1 * 1000):03d}"


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
        path_versioner=lambda path: f"{path}?v={assets.bokeh_version}",
    )
    return file_html(
        document,
        resources=resources,
        title=title,
        template=_TEMPLATE,
        template_variables={"page_script": assets.page_script},
    )
