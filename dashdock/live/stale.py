"""A drawn page says how old its data is, and leaves when its scheduler turns out not to offer it.

A page asked for while its run's scheduler has not answered yet (a recorder starting, a scheduler
too busy), or that stops answering, stays dashdock's (history/drawn.py): Dask's own page would be
one more Bokeh session on a scheduler that cannot keep up. Such a page shows what its mirror last
held, and a line above the plot says since when; the line goes once the scheduler answers again.
A page of a plot drawn from the scheduler's state, opened before the recorder knew whether the
scheduler offers it, is closed when it turns out not to: the pane loads again, and gets Dask's page.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from bokeh.document import Document
from bokeh.models.widgets import Div

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.plots import DRAWN_FROM_STATE

# The recorder reads every second, and a busy scheduler may take a few to answer a read.
STALE_AFTER_S = 4.0
CHECK_EVERY_MS = 1000


def staleness(mirror: SchedulerMirror, now: float) -> str:
    """The line a page shows about its data's age; empty while it is fresh."""
    if mirror.answered_at is None:
        waited = now - mirror.created_at
        if waited < STALE_AFTER_S:
            return ""
        return f"Waiting for the scheduler's first answer ({waited:.0f} s): this plot is empty until then."
    age = now - mirror.answered_at
    if age < STALE_AFTER_S:
        return ""
    return f"The scheduler has not answered for {age:.0f} s: this plot shows what it said then."


def watch_freshness(
    doc: Document, mirror: SchedulerMirror, path: str, close: Callable[[Document], None]
) -> None:
    """Put the age line on ``doc`` (before the plot, which Dask's page function adds after) and
    check it every second; ``close`` ends the page's sessions when its plot is not drawn after all.
    Called before plot_server's ``_paced``: this check runs whether or not the mirror changed."""
    line = Div(text="", visible=False, sizing_mode="stretch_width", styles={"font-weight": "bold"})
    doc.add_root(line)
    from_state = any(path == plot or path.startswith(plot + "/") for plot in DRAWN_FROM_STATE)

    def check() -> None:
        if from_state and mirror.offers_state is False:
            close(doc)
            return
        text = staleness(mirror, time.time())
        if text != line.text:
            line.text = text
            line.visible = bool(text)

    check()
    doc.add_periodic_callback(check, CHECK_EVERY_MS)  # called before the page's redraws are paced
