"""The Bokeh document of one custom metric: a line per series over time, and the function's error.

Built on the scheduler for each browser session (metric_board.py); pickled by value with it. A
session starts with every kept sample and then streams what is new, so a pane opened late shows
the history and a live one costs a few numbers per update.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from bokeh.layouts import column
from bokeh.models import ColumnDataSource
from bokeh.models.annotations import Legend, LegendItem
from bokeh.models.widgets import PreText
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

if TYPE_CHECKING:
    from bokeh.models.renderers import GlyphRenderer

    from .metric_board import MetricBoard

MAX_UPDATE_MS = 1000  # a slow metric still shows its error (or its removal) within a second
MIN_UPDATE_MS = 100


def build(board: MetricBoard, slug: str, doc: Any) -> None:
    metric = board.metrics.get(slug)
    title = metric.name if metric is not None else slug
    plot = figure(
        title=title,
        x_axis_type="datetime",
        sizing_mode="stretch_both",
        tools="pan,wheel_zoom,box_zoom,reset,save",
        toolbar_location="above",
    )
    legend = Legend(items=[], location="top_left", click_policy="hide")
    plot.add_layout(legend)
    # PreText shows its text as text: an exception's message is never read as HTML.
    error = PreText(text="", visible=False, name="dashdock-metric-error", sizing_mode="stretch_width")
    error.styles = {"color": "#c62828", "white-space": "pre-wrap"}
    doc.title = title
    doc.add_root(column(error, plot, sizing_mode="stretch_both"))

    sources: dict[str, ColumnDataSource] = {}
    seen: dict[str, int] = {}

    def update() -> None:
        current = board.metrics.get(slug)
        if current is None:
            _show_error(error, "This metric was removed.")
            return
        for line in list(current.lines):
            times, values = current.since(line, seen.get(line, 0))
            seen[line] = current.sequence
            source = sources.get(line)
            if source is None:
                source = sources[line] = ColumnDataSource({"time": times, "value": values}, name=line)
                colour = Category10_10[(len(sources) - 1) % len(Category10_10)]
                renderer: GlyphRenderer[Any] = plot.line(
                    "time", "value", source=source, line_width=2, color=colour
                )
                # Only LegendItems are put in this legend (built with none above).
                cast(list[LegendItem], legend.items).append(LegendItem(label=line, renderers=[renderer]))
            elif times:
                source.stream({"time": times, "value": values}, rollover=current.max_points)
        legend.visible = len(sources) > 1
        note = current.error
        if current.dropped_lines:
            note += f"\nOnly the first {current.max_lines} lines are drawn."
        _show_error(error, note.strip())

    update()
    every = board.metrics[slug].every * 1000 if slug in board.metrics else MAX_UPDATE_MS
    doc.add_periodic_callback(update, max(MIN_UPDATE_MS, min(MAX_UPDATE_MS, every)))


def _show_error(error: PreText, text: str) -> None:
    if error.text != text:
        error.text = text
    error.visible = bool(text)
