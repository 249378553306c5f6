"""With ``install_on_url_schedulers``, a plain scheduler a dashboard URL names gets its key plots
drawn by dashdock: the recorder adds its plot-state plugin through its own connection (as a
notebook's client adds its ledger), so a pane of it is no Bokeh session on the scheduler. Without
it (the default) that scheduler is left as it was: its plots are its own pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _support import Jupyter
from distributed import Client
from test_drawn_state_plots import _drawn_plots, _source_drawing
from test_history_api import eventually, run_of
from test_history_url_sources import UrlCluster

from dashdock.live.plots import DRAWN_FROM_STATE

pytestmark = pytest.mark.slow  # a cluster of its own, in a process of its own

DRAWN = ["/individual-progress", "/individual-workers-memory", "/individual-task-stream"]


def offers(dask_scheduler: Any) -> list[str]:
    return sorted(key for key in dask_scheduler.handlers if key.startswith("dashdock_"))


@pytest.fixture
def dashdock_config() -> dict[str, Any]:
    return {"install_on_url_schedulers": True}


@pytest.fixture
def plain_cluster() -> Iterator[UrlCluster]:
    cluster = UrlCluster()  # started without dashdock's preload: it offers nothing of dashdock's
    cluster.start()
    yield cluster
    cluster.stop()


async def scheduler_offers(address: str) -> list[str]:
    async with Client(address, asynchronous=True) as client:
        return await client.run_on_scheduler(offers)  # type: ignore[no-any-return]


async def test_a_plain_url_scheduler_gets_the_plugin_and_its_plots_are_drawn(
    jupyter: Jupyter, plain_cluster: UrlCluster
) -> None:
    assert await scheduler_offers(plain_cluster.address) == []
    source_id = await _source_drawing(jupyter, plain_cluster.dashboard, DRAWN)
    # The scheduler answers dashdock's plot state and Fine Performance Metrics now.
    assert await scheduler_offers(plain_cluster.address) == ["dashdock_fine_metrics", "dashdock_plot_state"]
    page = await jupyter.proxied(f"dashdock/proxy/{source_id}/individual-progress")
    assert page.code == 200 and b"Bokeh.embed.embed_items" in page.body, page.body[:300]


class TestTurnedOff:
    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"install_on_url_schedulers": False}

    async def test_the_scheduler_is_left_as_it_was_and_its_plots_are_its_own(
        self, jupyter: Jupyter, plain_cluster: UrlCluster
    ) -> None:
        source_id = (await jupyter.add_source(plain_cluster.dashboard))["id"]

        async def recording() -> bool:
            return await run_of(jupyter, source_id) is not None

        assert await eventually(recording, 120)
        async with Client(plain_cluster.address, asynchronous=True) as client:
            await client.gather(client.map(inc, range(20)))

        async def recorded() -> bool:  # read at a later tick than the first, which would have added it
            run = await run_of(jupyter, source_id)
            return run is not None and run["tasks"] >= 20

        assert await eventually(recorded, 60)
        assert await scheduler_offers(plain_cluster.address) == []
        drawn = await _drawn_plots(jupyter, source_id)
        assert not set(DRAWN_FROM_STATE) & set(drawn), drawn


def inc(x: int) -> int:
    return x + 1
