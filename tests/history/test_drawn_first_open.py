"""A pane opened as its source is added (a quick click, a Lab restoring its panes as the server
starts) is drawn by the recorder once the source's recording has begun: it waits for that rather
than open Dask's page, a Bokeh session on the scheduler for as long as the pane stays open. A
plot the recorder cannot draw (the scheduler does not offer its state) is Dask's page, answered
as soon as that is known, not held for the wait."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dask
import pytest
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter
from distributed import Client, LocalCluster, wait
from test_drawn_state_plots import _connect, _pull

from dashdock.kernel import plot_state

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster per test

# Longer than the test client's 30 s request timeout: a page held for the whole wait fails the test.
WAIT = 300.0


@pytest.fixture
def dashdock_config() -> dict[str, object]:
    return {"draw_key_plots_wait": WAIT}


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with in_process_cluster(threads_per_worker=1) as local:
        yield local


def slow_increment(x: int) -> int:
    return x + 1


async def test_plots_opened_as_their_source_is_added_are_drawn_by_the_recorder(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    plot_state.offer(cluster.scheduler)
    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        # The demo's work: with this Dask, the scheduler's own Task Groups page fails on it (500).
        total = dask.delayed(sum)([dask.delayed(slow_increment)(i) for i in range(4)])
        held = client.compute(total)
        await wait(held)
        source_id = (await jupyter.add_source(dashboard_root(cluster)))["id"]
        for path in ("/individual-groups", "/individual-task-stream", "/individual-progress"):
            reply = await _pull(await _connect(jupyter, source_id, path))  # a 200 page, and its document
            assert reply.content.get("doc"), path
        assert scheduler_sessions(cluster) == 0  # each was the recorder's page


class TestWithoutDashdocksPlugin:
    """``install_on_url_schedulers = False``: a plain scheduler keeps offering nothing."""

    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"install_on_url_schedulers": False}

    async def test_a_plot_the_recorder_cannot_draw_is_the_dashboards_page_without_the_wait(
        self, jupyter: Jupyter, cluster: LocalCluster
    ) -> None:
        # This scheduler does not offer its state: Progress stays Dask's page.
        source_id = (await jupyter.add_source(dashboard_root(cluster)))["id"]
        reply = await _pull(await _connect(jupyter, source_id, "/individual-progress"))
        assert reply.content.get("doc")
        assert scheduler_sessions(cluster) == 1
