"""The output a computing cell gets: dashdock's strip for the Lab, and a summary for everyone else.

The summary (plain text and HTML) is what a saved notebook, nbconvert and GitHub show. Task keys
and exception texts come from user code, so the HTML escapes everything it prints.
"""

from __future__ import annotations

import html
from typing import Any

from .protocol import CELL_MIME_TYPE

# Where a cell's time went, in order, as the summary names it. Dask's "disk-write" is any store
# of a result that took over 5 ms (a spill, or a worker busy elsewhere): not called spilling.
_SECONDS_NAMES = {
    "compute": "compute",
    "transfer": "transfer",
    "disk": "read from disk",
    "spill": "storing results",
}


def bundle(meta: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """The MIME bundle of a cell's strip: ``meta`` says whose cell, ``report`` what it computed."""
    text = summary_lines(meta, report)
    return {
        CELL_MIME_TYPE: {"version": 1, **meta, "report": report},
        "text/plain": "\n".join(text),
        "text/html": (
            '<div class="dashdock-cell-summary" style="font-size: 12px; line-height: 1.5">'
            + "".join(f"<div>{html.escape(line)}</div>" for line in text)
            + "</div>"
        ),
    }


def summary_lines(meta: dict[str, Any], report: dict[str, Any]) -> list[str]:
    tasks, done = report["tasks"], report["done"]
    erred, cancelled = report["erred"], report["cancelled"]
    wall = report["wall"]
    head = f"Dask, cell {meta.get('label', '')}: "
    if report["settled"]:
        rate = f", {done / wall:,.0f} tasks/s" if wall > 0 and done / wall >= 1 else ""
        head += f"{_tasks(tasks)} in {_duration(wall)}{rate}"
    else:
        head += f"{done + erred:,} of {_tasks(tasks)} done, {_duration(wall)} so far"
    lines = [head]
    groups = ", ".join(
        f"{name} {group_done:,}/{group_tasks:,}" for name, group_tasks, group_done, _ in report["groups"]
    )
    if groups:
        lines.append(f"Groups: {groups}")
    seconds = report["seconds"]
    spent = [
        f"{name} {_duration(seconds[where])}"
        for where, name in _SECONDS_NAMES.items()
        if seconds.get(where, 0) >= 0.0005
    ]
    if spent:
        lines.append(f"{_thread_time(report.get('threads'))}: " + ", ".join(spent))
    lines.append(
        f"Bytes: {_bytes(report['produced_bytes'])} produced, {_bytes(report['moved_bytes'])} moved; "
        f"cluster memory peak {_bytes(report['memory_peak'])}"
    )
    if cancelled:
        lines.append(f"Cancelled: {_tasks(cancelled)}")
    error = report.get("error")
    if erred:
        first = f": {error['exception']} in {error['key']}" if error else ""
        lines.append(f"Errors: {_tasks(erred)} erred{first}")
    return lines


def _tasks(count: int) -> str:
    return f"{count:,} task" if count == 1 else f"{count:,} tasks"


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def _bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def _thread_time(threads: Any) -> str:
    """The label of the time sums: each is the threads' time added up, which can exceed the wall time."""
    if isinstance(threads, int) and threads > 1:
        return f"Thread time, summed over {threads:,} threads"
    return "Thread time"
