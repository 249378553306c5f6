"""A pane left on Dask's page of a plot that dashdock draws only later (its scheduler began to
offer its state after the pane opened: a notebook's client offers it) moves: its relay ends, the
source's panes are told to load again (``lost``, while the source stays up), and the page they
load is the recorder's. Until then the pane was a Bokeh session on the scheduler whose status
said "dashdock"."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from _bokeh import receive, send_pull_doc_request, session_token
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter, view_root
from distributed import LocalCluster
from test_drawn_state_plots import _connect, _drawn_plots, _pull
from test_history_api import eventually

from dashdock.kernel import plot_state

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster

PANE = "moving-pane"
PATH = "/individual-progress"


@pytest.fixture
def dashdock_config() -> dict[str, Any]:
    # The scheduler begins to offer its state only when the test says so: the recorder adds nothing.
    return {"install_on_url_schedulers": False}


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with in_process_cluster(threads_per_worker=1) as local:
        yield local


async def _source(jupyter: Jupyter, source_id: str) -> dict[str, object]:
    code, listing = await jupyter.api("GET", "sources")
    assert code == 200
    found: dict[str, object] = next(s for s in listing["sources"] if s["id"] == source_id)
    return found


async def test_a_pane_on_dasks_page_moves_once_dashdock_draws_its_plot(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    source_id = (await jupyter.add_source(dashboard_root(cluster)))["id"]
    # The scheduler offers no state yet: the pane's Progress page is Dask's, a session there.
    response = await jupyter.proxied(f"dashdock/proxy/{source_id}{PATH}?dashdock-pane={PANE}")
    assert response.code == 200, response.body[:300]
    pane = await jupyter.websocket(
        view_root(response) + f"{PATH}/ws?dashdock-pane={PANE}",
        headers={"Origin": "null"},
        subprotocols=["bokeh", session_token(response.body.decode())],
        auth=False,
        absolute=True,
    )
    assert (await receive(pane)).msgtype == "ACK"
    await send_pull_doc_request(pane)
    assert scheduler_sessions(cluster) == 1
    lost_before = (await _source(jupyter, source_id))["lost"]

    plot_state.offer(cluster.scheduler)  # as a notebook's client does; the recorder asks again

    async def progress_drawn() -> bool:
        return PATH in await _drawn_plots(jupyter, source_id)

    assert await eventually(progress_drawn, 120)
    # The pane's websocket is ended (whatever it was sent before), and its source says to load again.

    async def ended() -> None:
        while await pane.read_message() is not None:
            pass

    await asyncio.wait_for(ended(), 60)  # Dask's page never ends it by itself
    after = await _source(jupyter, source_id)
    assert after["lost"] == lost_before + 1
    assert after["health"]["status"] != "down"  # type: ignore[index]  # moved, not lost
    # Loaded again, the page is the recorder's: no new session on the scheduler.
    sessions = scheduler_sessions(cluster)
    assert (await _pull(await _connect(jupyter, source_id, PATH))).content.get("doc")
    assert scheduler_sessions(cluster) <= sessions
