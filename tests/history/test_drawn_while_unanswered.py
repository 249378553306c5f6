"""A scheduler too busy to answer keeps its drawn plots: a pane opened then adds no Bokeh session.

Under load a scheduler may miss the recorder's tick (a 5 s timeout); before, its drawn plots went
back to Dask's pages until it answered again, so a pane opened at that moment became a Bokeh session
on the scheduler exactly when it could least afford one. The scheduler here is stopped (SIGSTOP):
it holds its connections and answers nothing, as a saturated event loop does.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from _support import Jupyter
from test_drawn_state_plots import _drawn_plots, _source_drawing
from test_history_api import eventually, run_of
from test_history_url_sources import UrlCluster

pytestmark = pytest.mark.slow  # a cluster of its own, in a process of its own


@pytest.fixture
def offering_cluster() -> Iterator[UrlCluster]:
    cluster = UrlCluster(("--offer-plot-state",))
    cluster.start()
    yield cluster
    cluster.stop()


async def test_a_scheduler_that_stops_answering_keeps_its_drawn_plots_until_its_run_ends(
    jupyter: Jupyter, offering_cluster: UrlCluster
) -> None:
    source_id = await _source_drawing(jupyter, offering_cluster.dashboard, ["/individual-progress"])
    assert offering_cluster.process is not None
    offering_cluster.process.send_signal(signal.SIGSTOP)
    try:

        async def retrying() -> bool:
            run = await run_of(jupyter, source_id)
            return run is not None and "Retrying" in run.get("problem", "")

        assert await eventually(retrying, 60), await run_of(jupyter, source_id)
        # The sidebar still says the plot is drawn, and a pane opened now gets the recorder's page
        # of the last state read: the stopped scheduler would not have answered it at all.
        assert "/individual-progress" in await _drawn_plots(jupyter, source_id)
        page = await jupyter.proxied(f"dashdock/proxy/{source_id}/individual-progress")
        assert page.code == 200, page.body[:300]
        assert b"Bokeh.embed.embed_items" in page.body
    finally:
        offering_cluster.process.send_signal(signal.SIGCONT)
