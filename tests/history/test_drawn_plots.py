"""Dask's Task Stream of a recorded source, served by the recorder from its one connection
(``draw_key_plots``): the same tasks and colours as Dask's own page of the same cluster, through the
same proxy URL, and the plot server's secret never reaches a page or anyone without it."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from _bokeh import receive, send_pull_doc_request, session_token
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter, view_root
from distributed import Client, LocalCluster
from test_history_api import eventually, run_of
from tornado.websocket import websocket_connect

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster per test

KEYS = [f"drawn-{i}" for i in range(200)]


@pytest.fixture
def dashdock_config() -> dict[str, object]:
    return {"draw_key_plots": True}


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with in_process_cluster(threads_per_worker=1) as local:
        yield local


def _rectangles(doc: Any) -> dict[str, str]:
    """Task key -> colour of every bar in a Task Stream document (its ColumnDataSource's data)."""
    found: dict[str, str] = {}

    def columns(data: Any) -> dict[str, Any]:
        if isinstance(data, dict) and data.get("type") == "map":
            return {k: v for k, v in data.get("entries", [])}
        return data if isinstance(data, dict) else {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            data = columns(node.get("data"))
            if isinstance(data.get("key"), list) and isinstance(data.get("color"), list):
                found.update(zip(map(str, data["key"]), map(str, data["color"]), strict=False))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    return found


async def _pulled(page_url: str, ws_url: str, fetch: Any, connect: Any) -> dict[str, str]:
    page = await fetch(page_url)
    token = session_token(page)
    connection = await connect(ws_url, token)
    try:
        assert (await receive(connection)).msgtype == "ACK"
        await send_pull_doc_request(connection)
        reply = await receive(connection)
        while reply.msgtype == "PATCH-DOC":  # the page's redraws may be sent before the reply
            reply = await receive(connection)
        assert reply.msgtype == "PULL-DOC-REPLY"
        return _rectangles(reply.content["doc"])
    finally:
        connection.close()


async def _dashdock_stream(jupyter: Jupyter, source_id: str) -> tuple[str, dict[str, str]]:
    response = await jupyter.proxied(f"dashdock/proxy/{source_id}/individual-task-stream")
    assert response.code == 200, response.body[:300]
    body = response.body.decode()

    async def page(_: str) -> str:
        return body

    async def connect(url: str, token: str) -> Any:
        return await jupyter.websocket(
            url, headers={"Origin": "null"}, subprotocols=["bokeh", token], auth=False, absolute=True
        )

    rects = await _pulled("", view_root(response) + "/individual-task-stream/ws", page, connect)
    return body, rects


async def _dask_stream(cluster: LocalCluster) -> dict[str, str]:
    root = dashboard_root(cluster)

    async def page(url: str) -> str:
        return await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=30).read().decode())

    async def connect(url: str, token: str) -> Any:
        return await websocket_connect(url, subprotocols=["bokeh", token])

    ws = root.replace("http://", "ws://") + "/individual-task-stream/ws"
    return await _pulled(root + "/individual-task-stream", ws, page, connect)


async def test_the_task_stream_is_drawn_by_dashdock_with_dasks_tasks_and_colours(
    jupyter: Jupyter, cluster: LocalCluster, jp_serverapp: Any
) -> None:
    source = await jupyter.add_source(dashboard_root(cluster))
    source_id = source["id"]

    async def recording() -> bool:
        return await run_of(jupyter, source_id) is not None

    assert await eventually(recording, 120)
    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        await client.gather(client.map(lambda x: x + 1, range(len(KEYS)), key=KEYS))

    drawn: dict[str, str] = {}

    async def all_drawn() -> bool:
        nonlocal drawn
        _, drawn = await _dashdock_stream(jupyter, source_id)
        return all(key in drawn for key in KEYS)

    assert await eventually(all_drawn, 60), sorted(drawn)[:20]
    # Every page came from the recorder's plot server: the scheduler has no Bokeh session yet.
    assert scheduler_sessions(cluster) == 0
    dasks = await _dask_stream(cluster)
    assert scheduler_sessions(cluster) == 1
    ours = {key: colour for key, colour in drawn.items() if key in KEYS}
    theirs = {key: colour for key, colour in dasks.items() if key in KEYS}
    assert ours == theirs  # the same 200 tasks, each in the same colour

    (app,) = jp_serverapp.extension_manager.extension_apps["dashdock"]
    where = app.history_service.drawn(source_id, "/individual-task-stream")
    assert where is not None
    port, (_, secret) = where.port, where.header
    body, _ = await _dashdock_stream(jupyter, source_id)
    assert secret not in body

    # Without the secret, the plot server serves nothing.
    def direct() -> int:
        url = f"http://127.0.0.1:{port}/individual-task-stream?run=x"
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return int(answer.status)
        except urllib.error.HTTPError as error:
            return int(error.code)

    assert await asyncio.to_thread(direct) == 403

    # Nor a websocket, even with the real session token of a page it served (the proxy's pages
    # hold stand-ins): asked for with the secret here, then used without it.
    def served_page() -> str:
        asked = urllib.request.Request(
            f"http://127.0.0.1:{port}/individual-task-stream?{where.query}", headers=dict([where.header])
        )
        with urllib.request.urlopen(asked, timeout=30) as answer:
            return str(answer.read().decode())

    page_token = session_token(await asyncio.to_thread(served_page))
    try:
        stranger = await websocket_connect(
            f"ws://127.0.0.1:{port}/individual-task-stream/ws", subprotocols=["bokeh", page_token]
        )
    except Exception:  # refused at the handshake
        pass
    else:
        assert await asyncio.wait_for(stranger.read_message(), 30) is None  # closed, no ACK

    # When its run ends (recording switched off here; a restarted scheduler alike), an open page's
    # websocket is closed: the proxy counts the source's dashboard as lost, so its panes load again.
    response = await jupyter.proxied(f"dashdock/proxy/{source_id}/individual-task-stream")
    connection = await jupyter.websocket(
        view_root(response) + "/individual-task-stream/ws",
        headers={"Origin": "null"},
        subprotocols=["bokeh", session_token(response.body.decode())],
        auth=False,
        absolute=True,
    )
    assert (await receive(connection)).msgtype == "ACK"
    lost_before = (await jupyter.api("GET", f"sources/{source_id}"))[1]["lost"]
    code, _ = await jupyter.api("PUT", f"history/{source_id}/recording", {"enabled": False})
    assert code == 200

    async def closed() -> bool:
        while (message := await connection.read_message()) is not None:
            del message  # Bokeh's updates until the close
        return True

    assert await asyncio.wait_for(closed(), 30)
    code, listed = await jupyter.api("GET", f"sources/{source_id}")
    assert listed["lost"] == lost_before + 1 and listed["drawnPlots"] == []


def test_what_a_hostile_scheduler_sends_reaches_the_drawn_plot_checked_and_clipped() -> None:
    from dashdock.history.model import Span, TaskRecord
    from dashdock.live.mirror import MAX_TASK_RECORDS, TASK_KEYS_BUDGET, SchedulerMirror

    def task(key: str, *actions: str) -> TaskRecord:
        spans = tuple(Span(action, 1.0, 2.0) for action in actions)
        return TaskRecord(key, "x", "tcp://w:1", 1, 1.0, 2.0, "OK", spans)

    mirror = SchedulerMirror()
    mirror.add_task(("x-" + "a" * 2**20, 0), task("clipped text"))
    mirror.add_task(("x", {"not": "a key part"}), task("its text instead"))
    mirror.add_task("a str key", task("a str key", "compute", "<img src=x onerror=alert(1)>"))
    mirror.add_task("y-" + "b" * 2**20, task("clipped text"))
    buffer = mirror.plugins["task-stream"].buffer
    long_key, odd_key, str_key, long_str_key = list(buffer)
    # Whole, as Dask's page has them, so each plot splits and colours them alike.
    assert long_key["key"] == ("x-" + "a" * 2**20, 0)
    assert long_str_key["key"] == "y-" + "b" * 2**20
    assert odd_key["key"] == "its text instead"
    assert [s["action"] for s in str_key["startstops"]] == ["compute"]  # only actions Dask colours
    for i in range(MAX_TASK_RECORDS + 10):
        mirror.add_task(f"k-{i}", task(f"k-{i}", "compute"))
    assert len(buffer) == MAX_TASK_RECORDS and mirror.plugins["task-stream"].index == MAX_TASK_RECORDS + 14
    # Keys of any length, within a budget for all of them: past it the oldest records go first,
    # and the newest stays whole.
    for i in range(40):
        mirror.add_task(f"long-{i}-" + "c" * 2**20, task("clipped text"))
    held = sum(len(record["key"]) for record in buffer)
    assert mirror.task_key_chars == held <= TASK_KEYS_BUDGET < held + 2**20 + 8
    assert buffer[-1]["key"] == "long-39-" + "c" * 2**20 and len(buffer) < 16


async def test_pages_let_go_of_together_cost_the_plot_server_one_collection(monkeypatch: Any) -> None:
    """Bokeh collects garbage in full for every page it lets go of (24 closed panes: 2.4 s of the
    recorder's CPU, on the workers' cores); the plot server's pages are let go of with one."""
    import gc

    import bokeh.document.document as bokeh_document
    from bokeh.document import Document

    from dashdock.live.plot_server import PlotServer

    monkeypatch.setattr(bokeh_document, "gc", bokeh_document.gc)  # put back after the test
    collections: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda generation=2: collections.append(generation) or 0)
    server = PlotServer(lambda run_id: None)
    server.start()
    try:
        collections.clear()  # the one start() runs before it freezes what is imported
        for _ in range(24):
            doc, session = Document(), object()
            doc.on_change_dispatch_to(session)
            doc.destroy(session)  # as Bokeh does when it discards an unused session
        assert collections == []

        async def collected() -> bool:
            return collections == [2]

        assert await eventually(collected, 10), collections
    finally:
        server.stop()
        gc.unfreeze()


async def test_a_page_no_browser_uses_is_let_go_of_soon_and_a_late_websocket_still_opens() -> None:
    """Bokeh keeps a page 15-32 s after its browser left, each holding its document: 240 panes
    opened and closed within a minute left the watcher 70 MB larger for good. The plot server lets
    a page go once no browser has used it for ``UNUSED_SESSION_MS``; a browser whose websocket
    comes after that (a slow page load) still gets the page, made again."""
    import gc

    from tornado.httpclient import AsyncHTTPClient, HTTPRequest

    from dashdock.live.mirror import SchedulerMirror
    from dashdock.live.plot_server import UNUSED_SESSION_MS, PlotServer
    from dashdock.live.plots import SECRET_HEADER

    server = PlotServer(lambda run_id: SchedulerMirror())
    server.start()
    try:
        assert server._server is not None
        bokeh = server._server
        assert bokeh._tornado._unused_session_lifetime_milliseconds == UNUSED_SESSION_MS < 15_000
        headers = {SECRET_HEADER: server.secret}
        path = f"http://127.0.0.1:{server.port}/individual-task-stream"
        page = await AsyncHTTPClient().fetch(HTTPRequest(f"{path}?run=r", headers=headers))
        assert len(bokeh.get_sessions()) == 1

        async def let_go() -> bool:
            return not bokeh.get_sessions()

        assert await eventually(let_go, 60)
        request = HTTPRequest(path.replace("http", "ws", 1) + "/ws?run=r", headers=headers)
        token = session_token(page.body.decode())
        connection = await websocket_connect(request, subprotocols=["bokeh", token])
        assert (await receive(connection)).msgtype == "ACK"
        await send_pull_doc_request(connection)
        while (reply := await receive(connection)).msgtype == "PATCH-DOC":
            pass
        assert reply.msgtype == "PULL-DOC-REPLY"
        assert len(bokeh.get_sessions()) == 1
        connection.close()
        assert await eventually(let_go, 60)
    finally:
        server.stop()
        gc.unfreeze()
