"""What the recorder adds to a scheduler that offers neither its plot state nor its Fine
Performance Metrics totals (a plain scheduler a dashboard URL names): a scheduler plugin that
offers both once added, as a notebook's cell ledger does. It travels pickled by value with
plot_state.py and fine_metrics.py (watcher/scheduler.py), so the scheduler needs no
dashdock; ``DashdockApp.install_on_url_schedulers`` turns it off.
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import SchedulerPlugin

from .fine_metrics import offer as offer_fine_metrics
from .plot_state import offer as offer_plot_state

NAME = "dashdock-plot-state"


class OfferPlotState(SchedulerPlugin):
    name = NAME

    async def start(self, scheduler: Any) -> None:
        offer_plot_state(scheduler)
        offer_fine_metrics(scheduler)
