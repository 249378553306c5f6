"""A drawn page survives any value its mirror holds (issue 40, item 4): a NaN, a None, a missing
field or a worker of 0 threads in a scheduler's ``dashdock_plot_state`` answer is checked where it
enters the mirror (mirror_state.py, mirror_monitor.py), and a page whose redraw raises all the
same says so once, in the pane and in the log, not a traceback every 500 ms."""

from __future__ import annotations

import asyncio
import gc
import logging
import math
from typing import Any

import bokeh.document.document as bokeh_document
import pytest
from _bokeh import plot_contents, receive, send_pull_doc_request, session_token
from bokeh.document import Document
from bokeh.models.widgets import Div
from distributed.dashboard.scheduler import applications
from tornado.httpclient import AsyncHTTPClient
from tornado.websocket import websocket_connect

from dashdock.live.mirror import SchedulerMirror
from dashdock.live.mirror_monitor import REQUIRED
from dashdock.live.plot_server import FAILED_PAGE, PlotServer, _paced
from dashdock.live.plots import SECRET_HEADER

NAN, INF = float("nan"), float("inf")
PATHS = ("/individual-scheduler-system", "/individual-contention", "/individual-workers")


def _hostile_state(count: int = 3) -> dict[str, Any]:
    """A state whose every number the plots read is NaN, None, infinite or missing."""
    worker = {
        "address": "tcp://10.0.0.1:1",
        "name": None,
        "nthreads": 0,
        "memory_limit": NAN,
        "status": "running",
        "process": INF,
        "occupancy": NAN,
        "processing": None,
        "metrics": {"cpu": NAN, "memory": None, "host_net_io": {"read_bps": INF}, "transfer": 3},
    }
    bare = {"address": "tcp://10.0.0.2:1"}  # every other field missing
    return {
        "workers": [worker, bare],
        "total_nthreads": 0,
        "tick_interval": NAN,
        "monitor": {
            "count": count,
            "kept": 100,
            "gil": True,
            "rows": {
                "time": [None, 1.0e9 + count, NAN, 1.0e9 + count + 0.5],
                "cpu": [None, NAN, INF],  # one short
                "memory": [None, None, None, None],
                "gil_contention": [NAN] * 4,
            },
        },
    }


def _mirror(state: dict[str, Any]) -> SchedulerMirror:
    mirror = SchedulerMirror()
    assert mirror.update_state(state)
    return mirror


@pytest.mark.parametrize("state", [_hostile_state(), {}, {"workers": [{"address": "a"}]}, {"monitor": {}}])
def test_the_mirror_holds_only_finite_numbers_where_the_plots_read_them(state: dict[str, Any]) -> None:
    mirror = _mirror(state)
    assert mirror.total_nthreads >= sum(w.nthreads for w in mirror.workers.values())
    for worker in mirror.workers.values():
        assert worker.nthreads >= 1
        metrics = worker.metrics
        for name in ("cpu", "memory", "time", "event_loop_interval"):
            assert math.isfinite(metrics[name])
        for name, part in (("host_net_io", "read_bps"), ("host_net_io", "write_bps")):
            assert math.isfinite(metrics[name][part])
        for part in ("incoming_bytes", "outgoing_bytes"):
            assert math.isfinite(metrics["transfer"][part])
    rows = mirror.monitor.range_query(start=0)
    assert set(REQUIRED) <= set(rows)
    lengths = {len(values) for values in rows.values()}
    assert len(lengths) == 1 and lengths != {0}, rows  # a row at least, every quantity as long
    for values in rows.values():
        assert all(isinstance(v, float) and math.isfinite(v) for v in values), values
    assert all(t > 0 for t in rows["time"])


def test_monitor_rows_without_a_time_are_left_out_and_the_rest_aligned() -> None:
    monitor = _mirror(_hostile_state()).monitor
    assert list(monitor.quantities["time"]) == [1.0e9 + 3, 1.0e9 + 3.5]
    assert list(monitor.quantities["cpu"]) == [0.0, 0.0]  # NaN, and missing
    assert list(monitor.quantities["num_fds"]) == [0.0, 0.0]  # never sent


@pytest.mark.parametrize("path", PATHS)
def test_a_page_draws_and_redraws_a_hostile_state(path: str, caplog: pytest.LogCaptureFixture) -> None:
    mirror, doc = _mirror(_hostile_state()), Document()
    _paced(doc, mirror, is_seen=lambda _: True, path=path)
    with caplog.at_level(logging.WARNING):
        applications[path](mirror, {"prefix": "/"}, doc)
        for count in range(4, 8):
            assert mirror.update_state(_hostile_state(count))
            for callback in list(doc.session_callbacks):
                callback.callback()
    assert FAILED_PAGE not in [root.text for root in doc.roots if isinstance(root, Div)]
    assert doc.session_callbacks  # still redrawing
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_a_redraw_that_raises_says_so_once(caplog: pytest.LogCaptureFixture) -> None:
    mirror, doc = SchedulerMirror(), Document()
    _paced(doc, mirror, is_seen=lambda _: True, path="/individual-workers")

    def redraw() -> None:
        raise ZeroDivisionError("float division by zero")

    doc.add_root(Div(text="drawn"))
    doc.add_periodic_callback(redraw, 500)
    with caplog.at_level(logging.ERROR, logger="dashdock.recorder"):
        for _ in range(5):
            mirror.update_state({})
            for callback in list(doc.session_callbacks):
                callback.callback()
    assert [root.text for root in doc.roots if isinstance(root, Div)] == [FAILED_PAGE]
    assert not doc.session_callbacks  # no redraw left to fail again
    assert [r.getMessage() for r in caplog.records] == [
        "dashdock: the recorder could not draw /individual-workers"
    ]
    assert caplog.records[0].exc_info is not None  # its traceback, once


async def _pull_page(port: int, secret: str, path: str) -> list[tuple[str, Any]]:
    """The page of ``path`` as the proxy asks for it, its document pulled after a few redraws."""
    headers = {SECRET_HEADER: secret}
    page = await AsyncHTTPClient().fetch(f"http://127.0.0.1:{port}{path}?run=r", headers=headers)
    connection = await websocket_connect(
        _request(f"ws://127.0.0.1:{port}{path}/ws", headers),
        subprotocols=["bokeh", session_token(page.body.decode())],
    )
    try:
        assert (await receive(connection)).msgtype == "ACK"
        await asyncio.sleep(1.3)  # redraws of a page whose mirror moves meanwhile
        await send_pull_doc_request(connection)
        for _ in range(100):
            reply = await receive(connection)
            if reply.msgtype != "PATCH-DOC":
                assert reply.msgtype == "PULL-DOC-REPLY", reply.content.get("text")
                return plot_contents(reply)
        raise AssertionError("no PULL-DOC-REPLY in 100 messages")
    finally:
        connection.close()


def _request(url: str, headers: dict[str, str]) -> Any:
    from tornado.httpclient import HTTPRequest

    return HTTPRequest(url, headers=headers)


def test_drawn_pages_of_a_hostile_state_load_and_log_no_traceback(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bokeh_document, "gc", gc)  # PlotServer.start replaces it: put it back after
    mirror = _mirror(_hostile_state())

    async def ticks() -> None:
        for count in range(4, 100):
            await asyncio.sleep(0.25)
            mirror.update_state(_hostile_state(count))

    async def main() -> dict[str, list[tuple[str, Any]]]:
        server = PlotServer(lambda run_id: mirror)
        server.start()
        ticking = asyncio.ensure_future(ticks())
        try:
            return {path: await _pull_page(server.port, server.secret, path) for path in PATHS}
        finally:
            ticking.cancel()
            server.stop()

    with caplog.at_level(logging.WARNING):
        contents = asyncio.run(main())
    for path, content in contents.items():
        assert content, path
        assert FAILED_PAGE not in str(content), path
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.exc_info], caplog.text
