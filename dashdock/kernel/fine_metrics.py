"""Dask's Fine Performance Metrics totals, offered by a scheduler to dashdock's history recorder.

Dask keeps them inside the scheduler (``cumulative_worker_metrics``, what its Fine Performance
Metrics plot draws) and has no message that reads them. ``offer`` adds one, and says so in the
scheduler's metadata, so that the recorder (which speaks plain msgpack and never sends code) asks
only a scheduler that has it. It runs on the scheduler: in a managed cluster's host process, and
from a notebook's cell ledger (pickled by value with it, so the scheduler needs no dashdock).
"""

from __future__ import annotations

from typing import Any

OP = "dashdock_fine_metrics"
METADATA_KEY = "dashdock-fine-metrics"
# The largest totals kept, by value: a run of many task groups has thousands of (context, group,
# activity, unit) entries, most of them near zero.
MAX_ENTRIES = 1000


def totals(scheduler: Any) -> dict[str, float]:
    """``context / group / activity / unit`` -> the total so far, the largest first."""
    entries = []
    for key, value in list(getattr(scheduler, "cumulative_worker_metrics", {}).items()):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts = key if isinstance(key, tuple) else (key,)
            entries.append((" / ".join(str(part) for part in parts), float(value)))
    entries.sort(key=lambda entry: -abs(entry[1]))
    return dict(entries[:MAX_ENTRIES])


def offer(scheduler: Any) -> None:
    """Answer ``OP`` on this scheduler from now on."""
    scheduler.handlers[OP] = lambda comm=None: totals(scheduler)
    scheduler.set_metadata(keys=[METADATA_KEY], value=OP)
