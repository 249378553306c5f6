"""Dask's Progress and worker plots of a recorded source whose scheduler offers its state
(kernel/plot_state.py), drawn by the recorder from its one connection: the same bars, numbers,
colours and titles as Dask's own page of each, on the same cluster, with no Bokeh session on the
scheduler; a scheduler that does not offer it keeps Dask's pages."""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import AsyncIterator, Collection, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from _bokeh import BokehMessage, plot_contents, receive, send_pull_doc_request, session_token
from _drawn import dashboard_root, in_process_cluster, scheduler_sessions
from _support import Jupyter, view_root
from distributed import Client, LocalCluster, wait
from test_history_api import eventually, run_of
from tornado.websocket import websocket_connect

from dashdock.kernel import plot_state
from dashdock.live.plots import DRAWN, DRAWN_FROM_STATE

pytestmark = pytest.mark.slow  # a recorder process with a Bokeh server, a cluster per test


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    with in_process_cluster(threads_per_worker=2) as local:
        yield local


async def _pull(connection: Any) -> BokehMessage:
    try:
        assert (await receive(connection)).msgtype == "ACK"
        await send_pull_doc_request(connection)
        for _ in range(100):  # the document's changes may be sent before the reply
            reply = await receive(connection)
            if reply.msgtype != "PATCH-DOC":  # an ERROR is the page failing to load
                assert reply.msgtype == "PULL-DOC-REPLY", reply.content.get("text")
                return reply
        raise AssertionError("no PULL-DOC-REPLY in 100 messages")
    finally:
        connection.close()


def _now(contents: list[tuple[str, Any]], path: str) -> list[tuple[str, Any]]:
    """What a plot shows now: a time series (one point streamed per update since its page opened,
    so two pages hold different numbers of points) by its newest point."""
    if not path.endswith("-timeseries"):
        return contents
    return [
        (kind, {k: v[-1:] for k, v in data.items()} if kind == "data" else data) for kind, data in contents
    ]


async def _connect(jupyter: Jupyter, source_id: str, path: str) -> Any:
    """Our page of ``path`` opened through the proxy, as a pane opens it: its Bokeh websocket."""
    response = await jupyter.proxied(f"dashdock/proxy/{source_id}{path}")
    assert response.code == 200, response.body[:300]
    return await jupyter.websocket(
        view_root(response) + f"{path}/ws",
        headers={"Origin": "null"},
        subprotocols=["bokeh", session_token(response.body.decode())],
        auth=False,
        absolute=True,
    )


async def _ours(jupyter: Jupyter, source_id: str, path: str) -> list[tuple[str, Any]]:
    return _now(plot_contents(await _pull(await _connect(jupyter, source_id, path))), path)


async def _dasks(cluster: LocalCluster, path: str) -> list[tuple[str, Any]]:
    root = dashboard_root(cluster)
    page = await asyncio.to_thread(lambda: urllib.request.urlopen(root + path, timeout=30).read().decode())
    connection = await websocket_connect(
        root.replace("http://", "ws://") + f"{path}/ws", subprotocols=["bokeh", session_token(page)]
    )
    return _now(plot_contents(await _pull(connection)), path)


async def _equal(jupyter: Jupyter, source_id: str, path: str, theirs: list[tuple[str, Any]]) -> bool:
    return await _ours(jupyter, source_id, path) == theirs


def _stop_measuring(dask_scheduler: Any) -> None:
    for name in ("monitor", "tick", "ticks"):
        dask_scheduler.periodic_callbacks[name].stop()


def _fail(x: int) -> int:
    raise ValueError(x)


async def _drawn_plots(jupyter: Jupyter, source_id: str) -> list[str]:
    code, listing = await jupyter.api("GET", "sources")
    assert code == 200
    source = next(s for s in listing["sources"] if s["id"] == source_id)
    return list(source.get("drawnPlots") or [])


async def _source_drawing(jupyter: Jupyter, dashboard: str, paths: Collection[str]) -> str:
    """Adds the dashboard as a source and waits until the recorder draws ``paths`` (its scheduler
    offers its state already); returns the source's id."""
    source_id: str = (await jupyter.add_source(dashboard))["id"]

    async def drawn() -> bool:
        return set(paths) <= set(await _drawn_plots(jupyter, source_id))

    assert await eventually(drawn, 120), await _drawn_plots(jupyter, source_id)
    return source_id


async def test_progress_and_worker_plots_are_drawn_with_dasks_numbers_and_colours(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    plot_state.offer(cluster.scheduler)  # as a preload or dashdock's ledger does
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), DRAWN_FROM_STATE)

    # Memory by key, Task Groups, the Graph and Fine Performance Metrics are read only while seen:
    # kept open, as panes.
    watched = (
        "/individual-memory-by-key",
        "/individual-groups",
        "/individual-graph",
        "/individual-fine-performance-metrics",
    )
    async with (
        watching(jupyter, source_id, *watched),
        Client(cluster.scheduler_address, asynchronous=True) as client,
    ):
        # Something in memory on both workers, some tasks erred, some released: every state the
        # plots colour, and a worker memory split with managed bytes.
        kept = client.map(
            lambda i: bytes(100_000 * (i % 7 + 1)), range(40), key=[f"kept-{i}" for i in range(40)]
        )
        erred = client.map(_fail, range(5), key=[f"failing-{i}" for i in range(5)])
        await wait([*kept, *erred])
        # Our pages cost the scheduler no Bokeh session; Dask's are opened below only to compare.
        for path in DRAWN_FROM_STATE:
            await _ours(jupyter, source_id, path)
        assert scheduler_sessions(cluster) == 0
        # Nor a layout of the task graph (Dask's Graph page adds one, called at every transition).
        assert not [name for name in cluster.scheduler.plugins if name.startswith("graph-layout")]

        # Task Groups first: Dask's own page fails on the graph below (a KeyError in its layout of
        # a group that depends on a group of 40 keys), and dashdock draws it with Dask's code.
        async def groups_same() -> bool:
            path = "/individual-groups"
            return await _ours(jupyter, source_id, path) == await _dasks(cluster, path)

        assert await eventually(groups_same, 60)
        groups = await _ours(jupyter, source_id, "/individual-groups")
        assert any("kept" in data.get("name", ()) for kind, data in groups if kind == "data"), groups

        # One task that reads from both workers: bytes move between them (the bandwidth plots).
        together = client.submit(lambda parts: sum(map(len, parts)), kept, key="together")
        await wait(together)
        # Frozen: no more heartbeats (the workers' memory and CPU readings), nothing running, and
        # the scheduler no longer measures its own process or event loop.
        for worker in cluster.workers.values():
            worker.periodic_callbacks["heartbeat"].stop()
        await client.run_on_scheduler(_stop_measuring)
        # Task Group Progress counts time from when its page opened: test_drawn_group_progress.py.
        compared = [
            p for p in DRAWN_FROM_STATE if p not in ("/individual-groups", "/individual-group-progress")
        ]

        differs: list[tuple[str, Any, Any]] = []

        async def same() -> bool:  # once a recorder tick has read the frozen state
            for path in compared:
                # Dask's page first: opening Scheduler System makes the scheduler measure once.
                theirs = await _dasks(cluster, path)
                if path == "/individual-scheduler-system":  # ours, once a recorder tick has that row
                    if not await eventually(lambda p=path, t=theirs: _equal(jupyter, source_id, p, t), 10):
                        differs[:] = [(path, await _ours(jupyter, source_id, path), theirs)]
                        return False
                    continue
                ours = await _ours(jupyter, source_id, path)
                if ours != theirs:
                    differs[:] = [(path, ours, theirs)]
                    return False
            return True

        assert await eventually(same, 60), differs
        progress = await _ours(jupyter, source_id, "/individual-progress")
        titles = [text for kind, text in progress if kind == "title"]
        assert any("in-memory: 41" in t and "erred: 5" in t for t in titles), titles
        memory = next(
            data
            for kind, data in await _ours(jupyter, source_id, "/individual-workers-memory")
            if kind == "data" and "managed" in data
        )
        assert sum(memory["managed"]) > 0  # not an empty plot that matches an empty plot
        (by_key,) = [
            d for k, d in await _ours(jupyter, source_id, "/individual-memory-by-key") if k == "data"
        ]
        assert dict(zip(by_key["name"], by_key["count"], strict=True))["kept"] == 40
        bandwidth = next(
            d for k, d in await _ours(jupyter, source_id, "/individual-bandwidth-workers") if k == "data"
        )
        assert bandwidth["bandwidth"], bandwidth  # bytes moved, and the plot says between whom
        del kept, erred, together


class TestWithoutDashdocksPlugin:
    """``install_on_url_schedulers = False``: the recorder leaves a plain scheduler as it is."""

    @pytest.fixture
    def dashdock_config(self) -> dict[str, Any]:
        return {"install_on_url_schedulers": False}

    async def test_a_scheduler_that_does_not_offer_its_state_keeps_dasks_pages(
        self, jupyter: Jupyter, cluster: LocalCluster
    ) -> None:
        source_id = (await jupyter.add_source(dashboard_root(cluster)))["id"]

        async def task_stream_drawn() -> bool:
            return "/individual-task-stream" in await _drawn_plots(jupyter, source_id)

        assert await eventually(task_stream_drawn, 120)
        assert not set(DRAWN_FROM_STATE) & set(await _drawn_plots(jupyter, source_id))
        await _ours(jupyter, source_id, "/individual-progress")
        assert scheduler_sessions(cluster) == 1  # Dask's own page, through the proxy


async def test_a_managed_clusters_progress_and_worker_plots_are_drawn(jupyter: Jupyter) -> None:
    code, cluster = await jupyter.api("POST", "clusters", {"workers": 1})
    assert code == 201, cluster

    async def drawn() -> bool:
        return set(DRAWN_FROM_STATE) <= set(await _drawn_plots(jupyter, cluster["source"]))

    try:
        assert await eventually(drawn, 120), await _drawn_plots(jupyter, cluster["source"])
        contents = await _ours(jupyter, cluster["source"], "/individual-workers-memory")
        (memory,) = [data for kind, data in contents if kind == "data" and "managed" in data]
        assert len(set(memory["worker"])) == 1  # the cluster's one worker, from the recorder's mirror
    finally:
        await jupyter.api("DELETE", f"clusters/{cluster['id']}")


async def test_every_drawn_page_loads_before_any_task_has_computed(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    # Dask's own Compute Time Per Key and Aggregate Time Per Action fail to load on such a cluster:
    # their placeholder rows hold a Python function, which Bokeh cannot send.
    plot_state.offer(cluster.scheduler)
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), DRAWN)
    for path in DRAWN:
        assert await _ours(jupyter, source_id, path), path  # its document (an error fails in _pull)
    assert scheduler_sessions(cluster) == 0


async def test_a_handler_that_fails_gives_dasks_pages_back_and_the_recording_goes_on(
    jupyter: Jupyter, cluster: LocalCluster
) -> None:
    plot_state.offer(cluster.scheduler)
    source_id = await _source_drawing(jupyter, dashboard_root(cluster), ["/individual-progress"])

    def broken(comm: object = None, **_: object) -> None:  # as another dashdock's handler might
        raise TypeError("unexpected keyword argument 'monitor_since'")

    cluster.scheduler.handlers[plot_state.OP] = broken

    async def given_back() -> bool:
        plots = await _drawn_plots(jupyter, source_id)
        return "/individual-task-stream" in plots and not set(DRAWN_FROM_STATE) & set(plots)

    assert await eventually(given_back, 60), await _drawn_plots(jupyter, source_id)
    async with Client(cluster.scheduler_address, asynchronous=True) as client:
        await client.gather(client.map(lambda x: x + 1, range(30), key=[f"after-{i}" for i in range(30)]))

    async def recorded() -> bool:
        run = await run_of(jupyter, source_id)
        return run is not None and run["live"] and run["tasks"] >= 30 and "problem" not in run

    assert await eventually(recorded, 60), await run_of(jupyter, source_id)


def test_a_drawn_page_redraws_no_faster_than_its_mirror_changes() -> None:
    from bokeh.document import Document
    from distributed.dashboard.scheduler import applications

    from dashdock.live.mirror import SchedulerMirror
    from dashdock.live.plot_server import MIN_REDRAW_MS, _paced

    def periods(paced: bool) -> list[int]:
        doc = Document()
        if paced:
            _paced(doc, SchedulerMirror())
        applications["/individual-task-stream"](SchedulerMirror(), {"prefix": "/"}, doc)
        return [callback.period for callback in doc.session_callbacks]

    assert periods(paced=False) == [100]  # Dask's page: ten times a second
    assert periods(paced=True) == [MIN_REDRAW_MS]


def test_a_drawn_page_sends_the_browser_nothing_until_its_mirror_changes() -> None:
    """Scheduler System sends its axes at every redraw on Dask's page; here, only when there is
    something new, and someone to see it. A time series is sampled as on Dask's page instead: a
    point every period, so its 1,000 points span the same minutes."""
    from bokeh.document import Document
    from distributed.dashboard.scheduler import applications

    from dashdock.live.mirror import SchedulerMirror
    from dashdock.live.plot_server import _paced

    def messages_per_redraw(path: str, paced: bool, connected: bool = True) -> tuple[list[int], list[int]]:
        mirror, doc = SchedulerMirror(), Document()
        if paced:  # a Document outside a server has no session: whether it is seen is given
            _paced(doc, mirror, is_seen=lambda _: connected, path=path)
        applications[path](mirror, {"prefix": "/"}, doc)
        sent: list[object] = []
        doc.on_change(sent.append)
        counts = []
        for changed in (False, False, True, False):
            if changed:
                assert mirror.update_state({})  # a tick's answer: the scheduler's state, read again
            before = len(sent)
            for callback in doc.session_callbacks:
                callback.callback()
            counts.append(len(sent) - before)
        return counts, [callback.period for callback in doc.session_callbacks]

    system = "/individual-scheduler-system"
    assert messages_per_redraw(system, paced=False)[0] == [3, 3, 3, 3]  # Dask's page: every period
    assert messages_per_redraw(system, paced=True)[0] == [3, 0, 3, 0]  # the first period, then on change
    # A page whose browser is gone (its session kept a while by Bokeh): nothing is redrawn.
    assert messages_per_redraw(system, paced=True, connected=False)[0] == [0, 0, 0, 0]

    series = "/individual-workers-cpu-timeseries"
    assert messages_per_redraw(series, paced=False) == ([1, 1, 1, 1], [500])
    assert messages_per_redraw(series, paced=True) == ([1, 1, 1, 1], [500])  # a point a period, as Dask's
    assert messages_per_redraw(series, paced=True, connected=False)[0] == [0, 0, 0, 0]


@asynccontextmanager
async def watching(jupyter: Jupyter, source_id: str, *paths: str) -> AsyncIterator[None]:
    """Pages of ``paths`` kept open, a browser connected to each, as open panes keep their plots
    watched: what costs the scheduler more is read only while a page is seen (mirror.seen)."""
    connections = []
    try:
        for path in paths:
            connection = await _connect(jupyter, source_id, path)
            connections.append(connection)
            assert (await receive(connection)).msgtype == "ACK"
        yield
    finally:
        for connection in connections:
            connection.close()
