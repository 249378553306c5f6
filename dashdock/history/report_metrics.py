"""The report's Fine Performance Metrics: what a window cost, in seconds by task group and
activity, with bytes apart.

Dask keeps these as running totals (``context / group / activity / unit``). The recorder stores
snapshots of them (every 30 s of work, and a few seconds after each computation ends, once the
workers' heartbeats have brought its last figures), so a window's figures are the difference
between the snapshot that closes it and the last one before it began: exact for a computation's
own window, and said to be approximate otherwise (the page names both snapshots).
"""

from __future__ import annotations

import html
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from dashdock.history.model import Event
from dashdock.history.store import HistoryStore

# What Dask's activity names mean, in the words of its dashboard guide; others keep their name.
ACTIVITY_NAMES = {
    "thread-cpu": "compute (CPU)",
    "thread-noncpu": "compute off the CPU (GIL, I/O, waiting)",
    "executor": "executor overhead",
    "other": "other overhead",
    "disk-read": "disk read",
    "disk-write": "disk write",
    "serialize": "serialize",
    "deserialize": "deserialize",
    "compress": "compress",
    "decompress": "decompress",
    "network": "network transfer",
    "memory-read": "memory read",
}
# A snapshot this long after the window's end may close it: the one taken as its computation settled.
SETTLE_SECONDS = 10.0


@dataclass(frozen=True)
class WindowMetrics:
    since: float | None  # the baseline snapshot's time; None: the scheduler's start (all zeros)
    until: float  # the closing snapshot's time
    seconds: dict[tuple[str, str], float]  # (group or context, activity) -> seconds in the window
    bytes: dict[tuple[str, str], float]  # (group or context, activity) -> bytes in the window


def metrics_of_window(
    store: HistoryStore, run_id: str, start: float | None, end: float | None
) -> WindowMetrics | None:
    """Dask's totals over [start, end] of a run: the snapshot closing it less the last one before it."""

    def newest(until: float | None) -> Event | None:
        found = store.events(run_id, None, until, limit=1, kind="metrics", newest_first=True)
        return found[0] if found else None

    after_end = store.events(run_id, end, None, limit=1, kind="metrics") if end is not None else []
    closing = closing_snapshot(after_end[0] if after_end else None, newest(end), end)
    return window_metrics(newest(start) if start is not None else None, closing)


def closing_snapshot(after_end: Event | None, before_end: Event | None, end: float | None) -> Event | None:
    """The snapshot that closes a window: the one taken as its work settled, else the last inside."""
    if after_end is not None and end is not None and after_end.time - end <= SETTLE_SECONDS:
        return after_end
    return before_end


def window_metrics(baseline: Event | None, closing: Event | None) -> WindowMetrics | None:
    """The difference of two snapshots of Dask's totals, by group and activity, per unit."""
    if closing is None:
        return None
    before = _entries(baseline.detail) if baseline is not None else {}
    seconds: dict[tuple[str, str], float] = defaultdict(float)
    moved: dict[tuple[str, str], float] = defaultdict(float)
    for name, value in _entries(closing.detail).items():
        delta = value - before.get(name, 0.0)
        parts = name.split(" / ")
        if delta <= 0 or len(parts) < 3:
            continue
        unit, activity = parts[-1], parts[-2]
        # An execution is named by its task group; a transfer or a spill by its context.
        owner = " / ".join(parts[1:-2]) if parts[0] == "execute" and len(parts) > 3 else parts[0]
        if unit == "seconds":
            seconds[(owner, activity)] += delta
        elif unit == "bytes":
            moved[(owner, activity)] += delta
    since = baseline.time if baseline is not None else None
    return WindowMetrics(since, closing.time, dict(seconds), dict(moved))


def _entries(detail: object) -> dict[str, float]:
    """A snapshot's ``name -> total``; anything else a damaged row holds is left out."""
    if not isinstance(detail, dict):
        return {}
    return {
        str(name): float(value)
        for name, value in detail.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def activity_name(activity: str) -> str:
    return ACTIVITY_NAMES.get(activity, activity)


def seconds_text(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    if value < 0.00005:
        return "< 0.1 ms"
    return f"{value * 1000:.1f} ms"


def bytes_text(value: float) -> str:
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:,.0f} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TiB"


def owners_by_time(metrics: WindowMetrics, max_rows: int) -> tuple[list[str], list[str], int]:
    """The groups (or contexts) shown, costliest first; the activities in order of their total;
    and how many owners were left out."""
    per_owner: dict[str, float] = defaultdict(float)
    per_activity: dict[str, float] = defaultdict(float)
    for (owner, activity), value in metrics.seconds.items():
        per_owner[owner] += value
        per_activity[activity] += value
    owners = sorted(per_owner, key=lambda owner: -per_owner[owner])
    activities = sorted(per_activity, key=lambda activity: -per_activity[activity])
    return owners[:max_rows], activities, max(len(owners) - max_rows, 0)


def metrics_chart(metrics: WindowMetrics, max_rows: int) -> Any:
    """Seconds by group, stacked by activity: one bar per group, in seconds."""
    from bokeh.models import ColumnDataSource, DataRange1d, FactorRange
    from bokeh.models.annotations import Legend, LegendItem
    from bokeh.palettes import Category10_10
    from bokeh.plotting import figure

    owners, activities, _ = owners_by_time(metrics, max_rows)
    if not owners:
        return None
    shown = list(reversed(owners))  # the costliest at the top
    data: dict[str, list[object]] = {"owner": list(shown)}
    for activity in activities:
        data[activity] = [metrics.seconds.get((owner, activity), 0.0) for owner in shown]
    plot = figure(
        title="Where task time went (Fine Performance Metrics)",
        y_range=FactorRange(factors=shown),
        x_range=DataRange1d(start=0),
        height=min(90 + 24 * len(shown), 900),
        sizing_mode="stretch_width",
        tools="save",
        toolbar_location="right",
    )
    colours = [Category10_10[i % 10] for i in range(len(activities))]
    renderers: list[Any] = plot.hbar_stack(  # Bokeh's stubs type the legend's renderers invariantly
        activities, y="owner", height=0.7, color=colours, source=ColumnDataSource(data)
    )
    legend = Legend(
        items=[
            LegendItem(label=activity_name(a), renderers=[r])
            for a, r in zip(activities, renderers, strict=True)
        ]
    )
    plot.add_layout(legend, "right")
    plot.xaxis.axis_label = "seconds (thread time, summed over threads)"
    return plot


def metrics_section(metrics: WindowMetrics | None, max_rows: int) -> str:
    """The tables under the chart: seconds by group and activity, bytes apart, and what they rest on."""
    title = "<h2>Fine Performance Metrics</h2>"
    if metrics is None:
        return title + (
            "<p>Not recorded in this window. dashdock reads Dask's totals from the schedulers of "
            "clusters it manages and of notebooks' clients (Dask has no message for them, so those "
            "schedulers are given one); a cluster added only by its URL keeps them on its live Fine "
            "Performance Metrics plot.</p>"
        )
    since = _clock(metrics.since) if metrics.since is not None else "the scheduler's start"
    basis = (
        f"<p>What the window cost: the difference between Dask's totals at {since} and at "
        f"{_clock(metrics.until)} (dashdock reads them every 30 s of work and as each computation "
        "settles, so a computation's own window is exact).</p>"
    )
    owners, activities, left_out = owners_by_time(metrics, max_rows)
    if not owners:
        return title + basis + "<p>No task time was spent in this window.</p>"
    head = "".join(f"<th>{_e(activity_name(a))}</th>" for a in activities)
    rows = []
    for owner in owners:
        cells = [metrics.seconds.get((owner, a), 0.0) for a in activities]
        rows.append(
            f"<tr><td>{_e(owner)}</td><td class='n'>{seconds_text(sum(cells))}</td>"
            + "".join(f"<td class='n'>{seconds_text(c) if c else ''}</td>" for c in cells)
            + "</tr>"
        )
    note = f"<p class='note'>{left_out:,} more groups not shown.</p>" if left_out else ""
    seconds_table = (
        f"<table><tr><th>task group or context</th><th>total</th>{head}</tr>{''.join(rows)}</table>{note}"
    )
    return title + basis + seconds_table + _bytes_table(metrics, max_rows)


def _bytes_table(metrics: WindowMetrics, max_rows: int) -> str:
    if not metrics.bytes:
        return ""
    ordered = sorted(metrics.bytes.items(), key=lambda item: -item[1])[:max_rows]
    rows = "".join(
        f"<tr><td>{_e(owner)}</td><td>{_e(activity_name(activity))}</td>"
        f"<td class='n'>{bytes_text(value)}</td></tr>"
        for (owner, activity), value in ordered
    )
    return (
        "<h3>Bytes</h3><table><tr><th>task group or context</th><th>activity</th><th>bytes</th></tr>"
        f"{rows}</table>"
    )


def _clock(seconds: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(seconds))


def _e(text: str) -> str:
    return html.escape(text, quote=True)
