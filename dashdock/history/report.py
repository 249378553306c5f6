"""A window of a run as one self-contained HTML page: what Dask's ``performance_report`` shows, and more.

The task stream (a bar per span, per worker thread, coloured by group with Dask's own palette),
worker memory over time (managed, unmanaged, spilled), task groups (count, time), exceptions,
gaps in the recording and the Fine Performance Metrics totals. Bokeh draws the plots (through
figures.py, as the History view's pages do) with its scripts inlined (``file_html`` with
``INLINE``), so the file opens offline. Task keys and exception texts are anyone's code's:
everything dashdock writes into the page is HTML-escaped, and Bokeh escapes its own data. Every
part is bounded; the page says what it left out.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dashdock.errors import NotFound
from dashdock.history.figures import (
    ACTION_COLOURS,
    MEMORY_POINTS,
    STALE,
    Clipped,
    draw_task_stream,
    report_custom_metrics,
    report_memory,
)
from dashdock.history.model import (
    MAX_EXCEPTION,
    Event,
    Run,
    TaskRecord,
    WorkerSample,
    is_clipped,
)
from dashdock.history.report_metrics import metrics_chart, metrics_of_window, metrics_section
from dashdock.history.store import HistoryStore


@dataclass(frozen=True)
class ReportLimits:
    rects: int = 50_000  # spans drawn in the task stream
    # Characters of keys and groups the task stream carries (each span its own copy); with every
    # text clipped where it is stored (model.py), this bounds the report's bytes.
    text: int = 4_000_000
    groups: int = 200  # task groups listed
    exceptions: int = 100  # exceptions listed
    memory_points: int = MEMORY_POINTS  # points of the memory plot (as the view's)
    stale: float = STALE  # s: a worker with no sample for this long no longer counts in the total
    samples: int = 200_000  # worker samples read
    metrics_rows: int = 40  # Fine Performance Metrics: task groups (or contexts) listed and drawn
    metric_samples: int = 100_000  # custom metric samples read (dashdock.metric)
    metric_lines: int = 20  # custom metric lines drawn


# Bokeh puts "{% extends base %}" (its own page) before a template given as text.
_TEMPLATE = """
{% block postamble %}<style>
body { font: 14px system-ui, sans-serif; margin: 1em 2em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
td, th { border-bottom: 1px solid #ddd; padding: 2px 10px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
pre { white-space: pre-wrap; margin: 0; max-width: 80em; }
.note { color: #a05000; }
</style>{% endblock %}
{% block contents %}
{{ header }}
{% for doc in docs %}{% for root in doc.roots %}{{ embed(root) }}{% endfor %}{% endfor %}
{{ sections }}
{% endblock %}
"""


@dataclass
class _Window:
    """What one pass over the window's tasks gathers, within the limits."""

    limits: ReportLimits
    colour: Callable[[str], str]  # a group's colour
    tasks: int = 0
    erred: int = 0
    lanes: dict[tuple[str, int | None], int] = field(default_factory=dict)
    rects: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("y", "left", "right", "color", "key", "group", "action")}
    )
    drawn_until: float | None = None
    left_out: int = 0  # tasks counted but not drawn
    text: int = 0
    clipped: Clipped = field(default_factory=Clipped)
    groups: dict[str, list[float]] = field(default_factory=dict)  # group -> [count, seconds, erred]
    other_groups: int = 0
    exceptions: list[tuple[float, str, str, str]] = field(default_factory=list)  # time, key, worker, text

    def add(self, task: TaskRecord) -> None:
        self.tasks += 1
        counts = self.groups.get(task.group)
        if counts is None and len(self.groups) < self.limits.groups:
            counts = self.groups[task.group] = [0, 0.0, 0]
        if counts is None:
            self.other_groups += 1
        else:
            counts[0] += 1
            counts[1] += task.stop - task.start
        if task.status != "OK":
            self.erred += 1
            if counts is not None:
                counts[2] += 1
            if len(self.exceptions) < self.limits.exceptions:
                self.exceptions.append((task.stop, task.key, task.worker, task.exception or task.status))
        cost = (len(task.key) + len(task.group)) * len(task.spans)
        if self.left_out or len(self.rects["y"]) + len(task.spans) > self.limits.rects:
            self.left_out += 1
            return
        if self.text + cost > self.limits.text:
            self.left_out += 1
            return
        self.text += cost
        self.clipped.task(task.key, task.group, task.worker)
        lane = self.lanes.setdefault((task.worker, task.thread), len(self.lanes))
        for span in task.spans:
            self.rects["y"].append(lane)
            self.rects["left"].append(span.start * 1000)  # Bokeh's datetime axis counts milliseconds
            self.rects["right"].append(span.stop * 1000)
            self.rects["color"].append(ACTION_COLOURS.get(span.action) or self.colour(task.group))
            self.rects["key"].append(task.key)
            self.rects["group"].append(task.group)
            self.rects["action"].append(span.action)
        self.drawn_until = task.stop


def html_report(
    store: HistoryStore,
    run_id: str,
    start: float | None = None,
    end: float | None = None,
    limits: ReportLimits | None = None,
    preface: str = "",
) -> str:
    """The report of the tasks overlapping [start, end] (the whole run when left out); ``preface``
    is HTML (escaped by its maker) put first under the header: the window's diagnosis."""
    from bokeh.document import Document
    from bokeh.embed import file_html
    from bokeh.layouts import column
    from bokeh.resources import INLINE

    limits = limits or ReportLimits()
    run = store.run(run_id)
    if run is None:
        raise NotFound(f"No recorded run {run_id}.")
    # Dask's own colours: a group looks the same here as on its dashboard.
    from distributed.diagnostics.progress_stream import color_of

    window = _Window(limits, color_of)
    for task in store.tasks(run_id, start, end):
        window.add(task)
    samples = store.worker_samples(run_id, start, end, limit=limits.samples)
    first = start if start is not None else run.start
    last = end if end is not None else (run.end or time.time())
    plots = [_task_stream(window, first, last)]
    if samples:
        plots.append(report_memory(samples, first, last, limits.memory_points, limits.stale))
        plots[1].x_range = plots[0].x_range  # zooming one zooms both
    custom = store.metric_samples(run_id, start, end, limit=limits.metric_samples)
    if custom:
        plots.append(report_custom_metrics(custom, limits.metric_lines))
        plots[-1].x_range = plots[0].x_range
    metrics = metrics_of_window(store, run_id, start, end)
    chart = metrics_chart(metrics, limits.metrics_rows) if metrics is not None else None
    if chart is not None:
        plots.append(chart)
    exceptions = store.events(run_id, start, end, limit=limits.exceptions, kind="exception")
    sections = "\n".join(
        [
            _groups_section(window),
            _exceptions_section(window, exceptions),
            _gaps_section(store, run_id, start, end),
            metrics_section(metrics, limits.metrics_rows),
        ]
    )
    # A Document of its own: given bare models, Bokeh would make one from curdoc(), global state
    # that two reports rendered at once in the server's threads race on.
    document = Document()
    document.add_root(column(*plots, sizing_mode="stretch_width"))
    return file_html(
        document,
        resources=INLINE,
        title=f"dashdock: {run.name}",
        template=_TEMPLATE,
        template_variables={
            "header": _header(run, window, first, last, samples) + preface,
            "sections": sections,
        },
    )


def _task_stream(window: _Window, first: float, last: float) -> Any:
    from bokeh.models import Range1d
    from bokeh.plotting import figure

    lanes = max(len(window.lanes), 1)
    plot = figure(
        title="Task stream",
        x_axis_type="datetime",
        x_range=Range1d(start=first * 1000, end=last * 1000),
        height=min(120 + 18 * lanes, 900),
        sizing_mode="stretch_width",
        tools="xpan,xwheel_zoom,box_zoom,reset,save",
    )
    labels = {
        lane: f"{worker} / {'?' if thread is None else thread}"
        for (worker, thread), lane in window.lanes.items()
    }
    tooltips = [("key", "@key"), ("group", "@group"), ("action", "@action")]
    draw_task_stream(plot, window.rects, labels, tooltips)
    return plot


def _header(run: Run, window: _Window, first: float, last: float, samples: list[WorkerSample]) -> str:
    when = f"{_clock(first)} to {_clock(last)} ({last - first:.1f} s)"
    lines = [
        f"<h1>dashdock report: {_e(run.name)}</h1>",
        f"<p>Scheduler {_e(run.scheduler)}, {when}. {window.tasks:,} tasks, {window.erred:,} erred; "
        f"{len(samples):,} worker samples.</p>",
    ]
    drawn = len(window.rects["y"])
    if window.left_out:
        until = f" (until {_clock(window.drawn_until)})" if window.drawn_until is not None else ""
        lines.append(
            f"<p class='note'>The task stream draws the first {drawn:,} spans{until}; "
            f"{window.left_out:,} later tasks are counted in the tables below but not drawn. "
            "Choose a shorter window to see them.</p>"
        )
    lines.extend(f"<p class='note'>{_e(note)}</p>" for note in window.clipped.notes())
    return "\n".join(lines)


def _groups_section(window: _Window) -> str:
    rows = sorted(window.groups.items(), key=lambda item: -item[1][1])
    body = "".join(
        f"<tr><td>{_e(group)}</td><td class='n'>{int(count):,}</td><td class='n'>{seconds:.2f}</td>"
        f"<td class='n'>{int(erred):,}</td></tr>"
        for group, (count, seconds, erred) in rows
    )
    note = (
        f"<p class='note'>{window.other_groups:,} tasks of further groups are not listed "
        f"(at most {window.limits.groups} groups).</p>"
        if window.other_groups
        else ""
    )
    return (
        "<h2>Task groups</h2><table><tr><th>group</th><th>tasks</th><th>total time (s)</th>"
        f"<th>erred</th></tr>{body}</table>{note}"
    )


def _exceptions_section(window: _Window, events: list[Event]) -> str:
    rows = [(t, key, worker, text) for t, key, worker, text in window.exceptions]
    seen = {key for _, key, _, _ in rows}
    for event in events:
        key = str(event.detail.get("key", ""))
        if key not in seen and len(rows) < window.limits.exceptions:
            rows.append(
                (event.time, key, event.worker or "", str(event.detail.get("exception", event.detail)))
            )
    if not rows:
        return "<h2>Exceptions</h2><p>None.</p>"
    body = "".join(
        f"<tr><td>{_clock(t)}</td><td>{_e(key)}</td><td>{_e(worker)}</td><td><pre>{_e(text)}</pre></td></tr>"
        for t, key, worker, text in sorted(rows)
    )
    note = (
        f"<p class='note'>{window.erred:,} tasks erred; the first {window.limits.exceptions} are listed.</p>"
        if window.erred > window.limits.exceptions
        else ""
    )
    cut = sum(is_clipped(text) for _, _, _, text in rows)
    if cut:
        note += (
            f"<p class='note'>{cut:,} exception texts were longer than {MAX_EXCEPTION:,} characters and are "
            "cut (\u2026[+N chars] marks the cut).</p>"
        )
    return (
        "<h2>Exceptions</h2><table><tr><th>time</th><th>key</th><th>worker</th><th>exception</th></tr>"
        f"{body}</table>{note}"
    )


def _gaps_section(store: HistoryStore, run_id: str, start: float | None, end: float | None) -> str:
    gaps = store.gaps(run_id, start, end, limit=1000)
    if not gaps:
        return "<h2>Gaps in the recording</h2><p>None: every task that finished was recorded.</p>"
    body = "".join(
        f"<tr><td>{_clock(g.start)}</td><td>{_clock(g.stop)}</td><td class='n'>{g.missed:,}</td></tr>"
        for g in gaps
    )
    return (
        "<h2>Gaps in the recording</h2><p>The scheduler's task stream overflowed between two reads: "
        "these tasks finished but are not in this report.</p>"
        f"<table><tr><th>from</th><th>to</th><th>tasks missed</th></tr>{body}</table>"
    )


def _clock(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds)) + f".{int(seconds % 1 * 1000):03d}"


def _e(text: str) -> str:
    return html.escape(text, quote=True)
