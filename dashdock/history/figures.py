"""What the History view's pages and the report both draw: one memory total, one set of colours.

``total_memory`` is the one way a window's worker samples become "memory (all workers)": the view's
overview and memory pages and the report (report.py) all draw it, so they agree for any window.
Also the parts of a figure the pages share (their figure, caption, byte axis, lane labels),
``draw_task_stream``, the one drawing of spans the view's task-stream page and the report share,
the report's own plots (``report_memory``, ``report_custom_metrics``: the report is a file of its
own, sized to the page's width, with a save tool) and ``Clipped``, which counts the texts a page
shows cut.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dashdock.history.model import MAX_GROUP, MAX_KEY, MAX_WORKER, MetricSample, WorkerSample, is_clipped

# Dask's task stream colours the spans that are not computation so (progress_stream.py).
ACTION_COLOURS = {"transfer": "red", "disk-read": "orange", "disk-write": "orange", "deserialize": "gray"}
MEMORY_KINDS = ("managed", "unmanaged", "spilled")
# Dask's worker memory plot: managed in blue, unmanaged lighter, spilled grey.
MEMORY_COLOURS = ("#0071c5", "#6aa8d8", "#b0b0b0")
MEMORY_POINTS = 600  # points of a memory series
STALE = 30.0  # s: a worker with no sample for this long no longer counts in the total


@dataclass(frozen=True)
class PageLimits:
    """How much a page reads and draws; beyond it the page says what it left out."""

    rects: int = 20_000  # spans drawn in the task stream
    # Characters of keys, groups and workers' names the task stream carries (each span has its
    # own copy): with every text clipped where it is stored (model.py), this bounds a page's bytes.
    text: int = 2_000_000
    rate_bars: int = 600  # bars of the overview's task rate
    memory_points: int = MEMORY_POINTS  # points of a memory series
    samples: int = 200_000  # worker samples read for one page
    gaps: int = 200  # gaps drawn in the overview
    alerts: int = 200  # alerts marked on the overview (the most recently updated)
    groups: int = 60  # groups drawn by the progress page
    workers: int = 64  # workers drawn one by one on the memory page
    metric_lines: int = 20  # custom metric lines drawn on the memory page
    stale: float = STALE  # s: a worker with no sample for this long no longer counts in the total
    debounce_ms: int = 300  # the brush posts its window this long after it stopped moving


@dataclass(frozen=True)
class Window:
    first: float  # Unix seconds
    last: float

    @property
    def ms(self) -> tuple[float, float]:
        """As Bokeh's datetime axis counts: milliseconds."""
        return self.first * 1000, self.last * 1000


def total_memory(
    samples: Iterable[WorkerSample],
    first: float,
    last: float,
    points: int = MEMORY_POINTS,
    stale: float = STALE,
) -> dict[str, list[float]]:
    """Memory summed over workers per bucket: each worker counts with its latest sample, until stale."""
    step = max((last - first) / points, 1e-3)
    stale = max(stale, 2 * step)
    latest: dict[str, WorkerSample] = {}
    data: dict[str, list[float]] = {"time": [], **{kind: [] for kind in MEMORY_KINDS}}

    def emit(bucket: int) -> None:
        at = min(first + (bucket + 1) * step, last)
        live = [s for s in latest.values() if at - s.time <= stale]
        data["time"].append(at * 1000)
        for kind in MEMORY_KINDS:
            data[kind].append(sum(getattr(s, kind) for s in live))

    current: int | None = None
    for sample in samples:  # in time order
        bucket = int((sample.time - first) // step)
        if current is not None and bucket != current:
            emit(current)
        current = bucket
        latest[sample.worker] = sample
    if current is not None:
        emit(current)
    return data


def draw_total_memory(plot: Any, data: dict[str, list[float]]) -> None:
    """``total_memory``'s data as Dask's stacked memory plot."""
    from bokeh.models import ColumnDataSource

    plot.varea_stack(
        list(MEMORY_KINDS),
        x="time",
        color=list(MEMORY_COLOURS),
        legend_label=list(MEMORY_KINDS),
        source=ColumnDataSource(data),
    )
    plot.legend.location = "top_left"


def draw_task_stream(
    plot: Any, rects: dict[str, list[Any]], labels: dict[int, str], tooltips: Sequence[tuple[str, str]]
) -> None:
    """Spans as Dask's task stream draws them: a bar each on its worker thread's row (``y``, from
    ``left`` to ``right`` in ms, its ``color``); ``labels`` names the rows, ``tooltips`` the hover."""
    from bokeh.models import ColumnDataSource, HoverTool

    plot.hbar(
        y="y",
        left="left",
        right="right",
        height=0.9,
        color="color",
        alpha=0.8,
        source=ColumnDataSource(rects),
    )
    # Bokeh escapes field values in tooltips (only the {safe} format would not).
    plot.add_tools(HoverTool(tooltips=list(tooltips)))
    plot.yaxis.ticker = list(range(len(labels)))
    plot.yaxis.major_label_overrides = labels


def report_memory(samples: list[WorkerSample], first: float, last: float, points: int, stale: float) -> Any:
    """The report's "Worker memory (all workers)": ``total_memory`` as the view draws it."""
    from bokeh.plotting import figure

    plot = figure(
        title="Worker memory (all workers)",
        x_axis_type="datetime",
        height=250,
        sizing_mode="stretch_width",
        tools="xpan,xwheel_zoom,reset,save",
    )
    # The view's algorithm: each worker counts with its latest sample, until stale.
    draw_total_memory(plot, total_memory(samples, first, last, points, stale))
    plot.yaxis.axis_label = "memory"
    plot.yaxis.formatter = bytes_formatter()  # "1.2 GB", not "1.200e+9"
    return plot


def report_custom_metrics(samples: list[MetricSample], max_lines: int) -> Any:
    """The custom metrics a notebook added (``dashdock.metric``), in the report: a line each, over time."""
    from bokeh.models import ColumnDataSource
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    lines: dict[tuple[str, str], dict[str, list[float]]] = {}
    for sample in samples:
        series = lines.get((sample.metric, sample.line))
        if series is None:
            if len(lines) >= max_lines:
                continue
            series = lines[(sample.metric, sample.line)] = {"time": [], "value": []}
        series["time"].append(sample.time * 1000)
        series["value"].append(sample.value)
    plot = figure(
        title="Custom metrics",
        x_axis_type="datetime",
        height=250,
        sizing_mode="stretch_width",
        tools="xpan,xwheel_zoom,reset,save",
    )
    for index, ((metric, line), series) in enumerate(lines.items()):
        label = metric if line == metric else f"{metric}: {line}"
        plot.line(
            "time",
            "value",
            source=ColumnDataSource(series),
            legend_label=label,
            color=Category10_10[index % 10],
            line_width=2,
        )
    plot.legend.location = "top_left"
    return plot


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


def figure(title: str, x_range: Any, *, height: int | None = None, tools: str = "", **options: Any) -> Any:
    from bokeh.plotting import figure

    options.setdefault("x_axis_type", "datetime")
    if x_range is not None:
        options["x_range"] = x_range
    plot = figure(title=title, tools=tools, sizing_mode="stretch_both", min_height=height or 200, **options)
    plot.toolbar.logo = None
    return plot


def caption(text: str) -> Any:
    """A line of dashdock's own text (numbers and times only: a Div shows HTML)."""
    from bokeh.models.widgets import Div

    return Div(text=text, sizing_mode="stretch_width", styles={"font-size": "12px", "padding": "2px 8px"})


def bytes_formatter() -> Any:
    from bokeh.models import NumeralTickFormatter

    return NumeralTickFormatter(format="0.0 b")


def nice_step(least: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that is at least ``least`` (and at least 10 ms)."""
    step = 0.01
    while step < least:
        for factor in (2, 2.5, 2):
            step *= factor
            if step >= least:
                break
    return step


def clock(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(seconds)) + f".{int(seconds % 1 * 1000):03d}"


def lane_labels(lanes: list[tuple[str, int]]) -> dict[int, str]:
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
