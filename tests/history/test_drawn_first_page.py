"""A plot whose part of the scheduler's state is read only while a page of it is open (Task Groups,
the Graph, Memory by key, ...) opens with that part: its first page makes the recorder read the
state at once, not at its next tick. Here the recorder ticks once a minute, so only that read can
bring the page its groups within the test's wait."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from pathlib import Path

import pytest
from _bokeh import receive, send_pull_doc_request, session_token
from _drawn import in_process_cluster
from distributed import Client, wait
from test_history_recorder import Lines, _end, _run, _start
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from dashdock.kernel import plot_state
from dashdock.live.plots import RUN_ARGUMENT, SECRET_HEADER

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster

RUN_ID = "0123456789ab"
PATH = "/individual-groups"


def held_in_memory(x: int) -> int:  # its task group's name is what the page must show
    return x + 1


async def test_a_watched_plots_first_page_gets_its_part_before_the_recorders_next_tick(
    tmp_path: Path,
) -> None:
    with in_process_cluster(threads_per_worker=1) as cluster:
        plot_state.offer(cluster.scheduler)
        async with Client(cluster.scheduler_address, asynchronous=True) as client:
            held = client.map(held_in_memory, range(10))
            await wait(held)
            store = str(tmp_path / "history.sqlite")
            recorder = Lines(_start(["-m", "dashdock.watcher", store, "--tick", "60", "--plots"]))
            try:
                recorder.send({"op": "record", "run": _run(cluster.scheduler_address, RUN_ID)})
                plots = await asyncio.to_thread(recorder.next, 120, event="plots")
                # The first tick read the state (the groups were not asked for: no page was open).
                await asyncio.to_thread(recorder.next, 120, event="state", offered=True)
                assert "held_in_memory" in json.dumps(await _groups_shown(plots, seconds=30))
            finally:
                _end(recorder.proc)


async def _groups_shown(plots: dict[str, object], seconds: float) -> list[object]:
    """Opens the page as the proxy does (with the recorder's secret) and reads what it is sent, its
    document then its changes, until a group of held_in_memory is in it or ``seconds`` pass;
    returns what it was sent."""
    root = f"127.0.0.1:{plots['port']}{PATH}?{RUN_ARGUMENT}={RUN_ID}"
    headers = {SECRET_HEADER: str(plots["secret"])}

    def fetch() -> str:
        request = urllib.request.Request(f"http://{root}", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read().decode()

    page = await asyncio.to_thread(fetch)
    request = HTTPRequest(f"ws://{root.replace(PATH, PATH + '/ws', 1)}", headers=headers)
    connection = await websocket_connect(request, subprotocols=["bokeh", session_token(page)])
    sent: list[object] = []
    try:
        assert (await receive(connection)).msgtype == "ACK"
        await send_pull_doc_request(connection)

        async def until_shown() -> None:
            while "held_in_memory" not in json.dumps(sent):
                sent.append((await receive(connection)).content)

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(until_shown(), seconds)
    finally:
        connection.close()
    return sent
