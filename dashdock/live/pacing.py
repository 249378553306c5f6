"""When a drawn page redraws: as soon as what it reads has changed, never more often than Dask's.

Dask's page function adds its redraw with ``doc.add_periodic_callback(update, period)``, and
Dask's own page runs it every period (100-1,000 ms), changed or not. Here ``pace`` takes that call
over: the page looks for a change more often than Dask's period, and redraws only when what it
reads of the mirror has moved, a browser is there to see it, and Dask's page would have redrawn
by now too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from bokeh.document import Document
from bokeh.models.widgets import Div

from dashdock.live.mirror import SchedulerMirror, seen
from dashdock.live.plots import below

log = logging.getLogger("dashdock.recorder")  # its stderr is the Jupyter server's

# What a page reads here changes once a recorder tick (1 s), and about ten times a second while
# pages are open (Limits.live_tick). A page looks a fifth more often than Dask's page of it
# redraws, and at least every 160 ms, so a change reaches the browser within a look of the read;
# it redraws only when what it read moved, and no sooner than Dask's period after its last redraw
# (less half a look, so it redraws on the look nearest that period). Before that cap, Dask's 500
# and 1,000 ms pages redrew with every state read (160 ms): three to six times as often as Dask's
# own, and their drawing was most of what 24 open panes cost the recorder and the browser.
MIN_REDRAW_MS = 80
MAX_LOOK_MS = 160
# The pages drawn from the task stream plugin's buffer: they redraw when tasks arrive; every other
# page redraws when the scheduler's state was read again.
FROM_TASKS = (
    "/individual-task-stream",
    "/individual-compute-time-per-key",
    "/individual-aggregate-time-per-action",
)
# Dask's time series append a point every redraw (500 ms), changed or not, and keep the last 1,000:
# they are samples over time, so their pages redraw as Dask's do, and show the same ~8 minutes.
TIME_SERIES = (
    "/individual-workers-network-timeseries",
    "/individual-workers-cpu-timeseries",
    "/individual-workers-memory-timeseries",
    "/individual-workers-disk-timeseries",
)
FAILED_PAGE = "dashdock could not draw this plot from the recording (see the server log); reload the pane."


def look_period(dask_period_ms: int) -> int:
    """How often a drawn page looks for a change, for a page Dask redraws every ``dask_period_ms``."""
    return max(MIN_REDRAW_MS, int(min(dask_period_ms * 0.8, MAX_LOOK_MS)))


def least_between(dask_period_ms: int) -> float:
    """The least seconds between two redraws of a page Dask redraws every ``dask_period_ms``."""
    return (dask_period_ms - look_period(dask_period_ms) / 2) / 1000


def pace(
    doc: Document,
    mirror: SchedulerMirror,
    is_seen: Callable[[Document], bool] = seen,
    path: str = "",
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Takes over ``doc.add_periodic_callback`` for Dask's page function: its redraw runs every
    ``look_period(period)`` when what the page reads of the mirror has changed since it last ran,
    at least ``least_between(period)`` after that, and a browser is connected to see it. A time
    series (``TIME_SERIES``) redraws at Dask's period, whenever a browser sees it. A redraw that
    raises ends the page's redraws: the pane says so and the log has it once, not a traceback
    every period."""
    add = doc.add_periodic_callback
    from_tasks = below(path, FROM_TASKS)
    sampled = below(path, TIME_SERIES)

    def moved() -> int:
        return mirror.task_changes if from_tasks else mirror.state_changes

    def paced(callback: Callable[[], object], period_milliseconds: int) -> Any:
        if sampled:
            return add(lambda: _redraw(doc, path, callback) if is_seen(doc) else None, period_milliseconds)
        least = least_between(period_milliseconds)
        drawn_at = -1  # not every page function draws before its first period: that one always runs
        drawn_when = -least

        def when_changed() -> None:
            nonlocal drawn_at, drawn_when
            if moved() == drawn_at or not is_seen(doc):
                return
            now = clock()
            if now - drawn_when < least:
                return  # Dask's page would not have redrawn yet either
            drawn_at, drawn_when = moved(), now
            _redraw(doc, path, callback)

        return add(when_changed, look_period(period_milliseconds))

    doc.add_periodic_callback = paced  # type: ignore[method-assign]


def _redraw(doc: Document, path: str, callback: Callable[[], object]) -> None:
    try:
        callback()
    except Exception:  # Dask's redraw, on a state it may not expect
        failed(doc, path)


def failed(doc: Document, path: str) -> None:
    """Dask's page function raised: the pane says so instead of a bare "500" (Bokeh's answer when
    a page function raises), and the server log has the traceback."""
    log.exception("dashdock: the recorder could not draw %s", path)
    for callback in list(doc.session_callbacks):
        doc.callbacks.remove_session_callback(callback)
    doc.clear()
    doc.add_root(Div(text=FAILED_PAGE))
