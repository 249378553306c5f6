"""The History view's overview page: the whole run, tasks per second and total memory, and the brush.

The brush tells the Lab which window the other panes show (a message to the parent page).
"""

from __future__ import annotations

import json
from typing import Any

from dashdock.history.figures import (
    PageLimits,
    Window,
    bytes_formatter,
    caption,
    draw_total_memory,
    figure,
    nice_step,
    total_memory,
)
from dashdock.history.model import Alert, Run, WorkerSample, is_clipped
from dashdock.history.store import HistoryStore

_WINDOW_MESSAGE = "dashdock:history-window"
_ALERT_COLOURS = {
    "worker-lost": "#d62728",
    "task-erred": "#d62728",
    "scheduler-lost": "#d62728",
    "worker-paused": "#ff7f0e",
    "spilling": "#ff7f0e",
    "scheduler-back": "#2ca02c",
    "computation-done": "#2ca02c",
}


def overview(store: HistoryStore, run: Run, whole: Window, window: Window, limits: PageLimits) -> Any:
    from bokeh.layouts import column
    from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Range1d, RangeTool
    from bokeh.models.annotations import BoxAnnotation, Label

    bucket = nice_step((whole.last - whole.first) / limits.rate_bars)
    counts = store.task_rate(run.id, bucket)
    rate = ColumnDataSource(
        {
            "left": [t * 1000 for t, _ in counts],
            "right": [(t + bucket) * 1000 for t, _ in counts],
            "rate": [n / bucket for _, n in counts],
            "tasks": [n for _, n in counts],
        }
    )
    x_range = Range1d(start=whole.ms[0], end=whole.ms[1])
    # The brush's window, drawn over both plots. A window of the whole run is not drawn: the brush
    # would cover the plots, and a drag over it would only try to move it.
    whole_run = window == whole
    start, end = window.ms if not whole_run else (whole.ms[1], whole.ms[1])
    selected = Range1d(start=start, end=end)
    rate_plot = figure("Tasks finished per second", x_range, height=180)
    rate_plot.quad(left="left", right="right", top="rate", bottom=0, source=rate, color="#1f77b4")
    rate_plot.add_tools(HoverTool(tooltips=[("tasks", "@tasks"), ("per second", "@rate{0,0.0}")]))
    memory_plot = figure("Memory (all workers)", x_range, height=160)
    samples = _overview_samples(store, run.id, whole, limits)
    draw_total_memory(
        memory_plot, total_memory(samples, whole.first, whole.last, limits.memory_points, limits.stale)
    )
    memory_plot.yaxis.formatter = bytes_formatter()
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
    # A live run's count moves on after the page is drawn; the window's findings, asked later, count
    # more tasks, so the note says which moment its figure is of.
    notes = [
        f"{run.tasks:,} tasks recorded when this page was drawn (still recording)."
        if run.live
        else f"{run.tasks:,} tasks recorded."
    ]
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
    layout = column(caption(" ".join(notes)), rate_plot, memory_plot, sizing_mode="stretch_both")
    initial = Range1d(start=window.ms[0], end=window.ms[1])  # what the Lab shows at first
    return layout, CustomJS(args={"selected": initial}, code=post)


def _mark_alerts(plot: Any, alerts: list[Alert]) -> None:
    """When workers were lost and tasks erred: a line at each alert's first time, its title on hover."""
    from bokeh.models import ColumnDataSource, HoverTool
    from bokeh.models.annotations import Span

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
    store: HistoryStore, run_id: str, whole: Window, limits: PageLimits
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
