"""A drawn plot never becomes a Bokeh session on its scheduler because the scheduler (or the recorder)
is slow to answer; and a run whose recorder died says so.

Issue 40: 400 requests for a drawn page of a source whose scheduler did not answer the recorder
were held 10 s, then each opened Dask's own page, and the scheduler's dashboard stopped answering.
Here the scheduler is a port that accepts connections and never answers (a saturated event loop),
behind a dashboard that answers: the pages must stay dashdock's and say since when they wait.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from _bokeh import models, receive, send_pull_doc_request, session_token
from _support import Jupyter, view_root
from test_history_api import eventually, run_of, runs
from test_history_flapping import FlappingDashboard

pytestmark = pytest.mark.slow  # a recorder process with its plot server

WAIT = 1.0  # seconds a page waits for its source's run to begin


@pytest.fixture
def dashdock_config() -> dict[str, object]:
    return {"draw_key_plots_wait": WAIT}


@pytest.fixture
def silent_scheduler() -> Iterator[int]:
    """A port that accepts connections and never says a word: the recorder's reads time out."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for connection in held:
        connection.close()
    listener.close()


async def _lines(jupyter: Jupyter, source_id: str, path: str) -> Any:
    """The page of ``path`` as a pane opens it; returns its body and a function giving the texts
    of its Divs now."""
    page = await jupyter.proxied(f"dashdock/proxy/{source_id}{path}")
    assert page.code == 200, (path, page.code, page.body[:300])
    connection = await jupyter.websocket(
        view_root(page) + f"{path}/ws",
        headers={"Origin": "null"},
        subprotocols=["bokeh", session_token(page.body.decode())],
        auth=False,
        absolute=True,
    )
    assert (await receive(connection)).msgtype == "ACK"

    async def texts() -> list[str]:
        await send_pull_doc_request(connection)
        for _ in range(1000):
            reply = await receive(connection)
            if reply.msgtype == "PULL-DOC-REPLY":
                return [str(a.get("text", "")) for name, a, _ in models(reply) if name == "Div"]
        raise AssertionError("no PULL-DOC-REPLY")

    return connection, texts


async def test_pages_of_a_scheduler_that_never_answers_stay_dashdocks_and_say_so(
    jupyter: Jupyter, silent_scheduler: int
) -> None:
    dashboard = FlappingDashboard(silent_scheduler)  # answers /health and names the silent scheduler
    try:
        source_id = (await jupyter.add_source(dashboard.url))["id"]

        async def recorded() -> bool:
            return await run_of(jupyter, source_id) is not None

        assert await eventually(recorded, 60), await runs(jupyter)
        for path in ("/individual-task-stream", "/individual-progress"):
            # The dashboard has no such page (404): a 200 with Bokeh's page is the recorder's.
            connection, texts = await _lines(jupyter, source_id, path)
            try:

                async def waiting(texts: Any = texts) -> bool:
                    return any("Waiting for the scheduler's first answer" in text for text in await texts())

                assert await eventually(waiting, 30), await texts()
            finally:
                connection.close()
    finally:
        dashboard.close()


async def test_a_run_whose_recorder_died_says_so(
    jupyter: Jupyter, jp_serverapp: Any, dashboard_url: str
) -> None:
    source_id = (await jupyter.add_source(dashboard_url))["id"]

    async def recorded() -> dict[str, Any] | None:
        return await run_of(jupyter, source_id)

    assert await eventually(recorded, 60), await runs(jupyter)
    first = await run_of(jupyter, source_id)
    assert first is not None and first.get("problem") is None
    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    os.kill(app.history_service._recorder.process.pid, signal.SIGKILL)

    async def said() -> bool:
        # Once a new recorder records the source again, the killed run is not the newest.
        ours = [run for run in await runs(jupyter) if run["source"] == source_id]
        # (A live run goes by its source's id: the killed one is known by its start.)
        killed = next((run for run in ours if run["start"] == first["start"]), {})
        return len(ours) > 1 and "recorder stopped" in (killed.get("problem") or "")

    assert await eventually(said, 90), await runs(jupyter)
